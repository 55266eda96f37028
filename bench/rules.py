"""Time of each lint rule on large real modules, and its share of the whole lint.

    python3 bench/rules.py            # one table per module, then the targets: PASS/FAIL

Each rule runs alone over the parsed module (best of 3), less the time of a run with
no rule (the walk over the instructions and the finding bookkeeping), so a rule's time
includes the analyses it alone asks for (loop trip counts, collectives, ...). Lint time
is `hloscope lint --no-cache` of the file, start-up taken out. Targets (issue #18):
no rule takes more than 25% of lint time; on Mixtral, lint with every rule takes at most
1.3x lint with H001 (the copy rule, once quadratic) off, both with --stage
after_optimizations so that H001 runs on that pre-optimization dump.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import ROOT, best  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "xla-benchmark-hlo"
MODULES = [
    CORPUS / "hlo_mixtral_8x7b_bf16_1x8.hlo",
    CORPUS / "hlo_llama31_8b_bf16_1x8.hlo",
    ROOT / "fixtures" / "tpu" / "llm_v5p_big.hlo.txt",  # a 48-layer transformer for TPU v5p
]
SHARE_LIMIT = 0.25
H001_LIMIT = 1.3


def _best(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def rule_times(path: Path) -> tuple[float, dict[str, float]]:
    """(time of a run with no rule, {code: time of the rule alone beyond that})."""
    from hloscope._speed.nogc import one_shot
    from hloscope._speed.process import tune_gc
    from hloscope.cost.chips import get_chip
    from hloscope.lint import LintOptions, build_rules
    from hloscope.parser import load
    from hloscope.rules.engine import run

    # the collector as the CLI's lint runs it (else its pauses land on whichever rule): tuned,
    # and what a scan made left out of its walks (nogc.keep_out_of_gc) as in the CLI's process
    tune_gc()
    one_shot()
    chip = get_chip("v5e")
    modules = load(path)
    empty = _best(lambda: run(modules, [], chip=chip))
    out = {}
    for rule in build_rules(LintOptions()):
        # a fresh module each time: the rule context's analyses are not shared between runs
        modules = load(path)
        out[rule.code] = max(0.0, _best(lambda r=rule, m=modules: run(m, [r], chip=chip)) - empty)
    return empty, out


def main() -> int:
    startup = best(["--version"], 5)
    targets: list[tuple[str, str, bool]] = []
    for path in MODULES:
        if not path.exists():
            print(f"{path}: not at hand, skipped")
            continue
        lint = best(["lint", "--no-cache", "--chip", "v5e", str(path)], 3) - startup
        empty, times = rule_times(path)
        print(f"\n{path.name}: lint {lint:.3f} s; walk with no rule {empty:.3f} s")
        for code, t in sorted(times.items(), key=lambda kv: -kv[1]):
            print(f"  {code}  {t * 1000:8.1f} ms  {t / lint:6.1%} of lint")
        code, worst = max(times.items(), key=lambda kv: kv[1])
        targets.append((f"{path.name}: slowest rule ({code}) / lint", f"{worst / lint:.1%}",
                        worst / lint <= SHARE_LIMIT))
        if "mixtral" in path.name:
            # (a pre-optimization dump: H001 skips it unless told the stage, so it is told)
            forced = ["lint", "--no-cache", "--chip", "v5e", "--stage", "after_optimizations"]
            with_h001 = best([*forced, str(path)], 3) - startup
            without = best([*forced, "--ignore", "H001", str(path)], 3) - startup
            ratio = with_h001 / without
            targets.append((f"{path.name}: lint / lint --ignore H001", f"{ratio:.2f}x",
                            ratio <= H001_LIMIT))
    width = max((len(t[0]) for t in targets), default=10)
    print(f"\n{'target':{width}}  {'measured':>9}  limit")
    for name, shown, ok in targets:
        limit = f"<= {H001_LIMIT}x" if "H001" in name else f"<= {SHARE_LIMIT:.0%}"
        print(f"{name:{width}}  {shown:>9}  {limit:8} {'PASS' if ok else 'FAIL'}")
    return 0 if all(ok for _, _, ok in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
