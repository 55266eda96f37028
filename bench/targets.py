"""Issue #22's targets, every one measured in one run against XLA's parser on the same
files, in one table with PASS/FAIL.

    python3 bench/targets.py [--quick]     # --quick: best of 1 instead of 3

Per file (the largest TPU fixture and the corpus's Mixtral 8x7B, Llama-3.1-8B and Gemma-3
1B): `lint` with the cache off and with the default cache cold, `stats`, `memory`,
`roofline`, `graph --around` (the entry's costliest fusion), each minus start-up and
divided by XLA's parse time of the file; peak resident memory of `lint` over the file
size; the slowest rule's share of lint time. Once: strict mode, a directory of 8 modules
with -j 2 against -j 1 (and no worker left behind), a cached re-lint, start-up and
`import hloscope`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import BIG, ROOT, best, run, strict_parse, xla_parse  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
FILES = [BIG, CORPUS / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo",
         CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo",
         CORPUS / "xla-cpu-benchmark-hlo" / "gemma3_1b_flax_call.hlo"]
LIMITS = {"lint": 1.0, "lint (cache cold)": 1.0, "stats": 0.6, "memory": 1.2, "roofline": 1.2,
          "graph --around": 1.2, "peak RSS of lint / file": 5.0, "slowest rule / lint": 0.10}


def _costliest_fusion(path: Path) -> str:
    sys.path.insert(0, str(ROOT))
    from hloscope.parser import load

    (m,) = load(path)
    fusions = [i for i in m.entry.instructions if i.opcode == "fusion"] or list(m.entry.instructions)
    return max(fusions, key=lambda i: i.shape.logical_bytes).name


def _slowest_rule(path: Path, lint_seconds: float) -> tuple[str, float]:
    from rules import rule_times

    _, times = rule_times(path)
    code, worst = max(times.items(), key=lambda kv: kv[1])
    return code, worst / lint_seconds


def _defunct() -> int:
    done = subprocess.run(["ps", "-eo", "stat,ppid"], capture_output=True, text=True)
    me = str(os.getpid())
    return sum(1 for line in done.stdout.splitlines()[1:] if line.split()[0].startswith("Z")
               and line.split()[1] == me)


def main() -> int:
    n = 1 if "--quick" in sys.argv else 3
    import compileall

    compileall.compile_dir(str(ROOT / "hloscope"), quiet=1)
    rows: list[tuple[str, str, str, bool]] = []

    def row(name: str, value: float, limit: float, fmt: str = "{:.2f}x") -> None:
        rows.append((name, fmt.format(value), fmt.format(limit), value <= limit))

    run(["--version"])
    startup = best(["--version"], 5)
    # what a lint process holds before any file's data: the interpreter and the imports
    # (a 7 KB module), set beside each file's whole-process peak below the table
    baseline = min(run(["lint", "--no-cache", "--exit-zero", str(ROOT / "fixtures/tpu/mlp_v5e.hlo.txt")])[1]
                   for _ in range(3))
    above: list[str] = []
    for path in FILES:
        if not path.exists():
            print(f"{path}: not at hand, skipped")
            continue
        xla = xla_parse(path)
        size = path.stat().st_size
        label = path.name.split(".")[0][:28]
        print(f"{path.name}: {size / 1e6:.2f} MB, XLA parse {xla:.3f} s", flush=True)

        def timed(args: list[str], cache_dir: str | None = None) -> float:
            env = {"HLOSCOPE_CACHE_DIR": cache_dir or tempfile.mkdtemp(prefix="hloscope-bench-")}
            return best(args, n, env) - startup

        lint = timed(["lint", "--no-cache", "--exit-zero", str(path)])
        row(f"{label}: lint --no-cache", lint / xla, LIMITS["lint"])
        cold = min(run(["lint", "--exit-zero", str(path)],
                       {"HLOSCOPE_CACHE_DIR": tempfile.mkdtemp(prefix="hloscope-cold-")})[0]
                   for _ in range(n)) - startup
        row(f"{label}: lint (cache cold)", cold / xla, LIMITS["lint (cache cold)"])
        row(f"{label}: stats", timed(["stats", "--no-cache", str(path)]) / xla, LIMITS["stats"])
        row(f"{label}: memory", timed(["memory", "--no-cache", str(path)]) / xla, LIMITS["memory"])
        row(f"{label}: roofline", timed(["roofline", "--no-cache", str(path)]) / xla, LIMITS["roofline"])
        with tempfile.TemporaryDirectory() as tmp:
            graph = timed(["graph", "--no-cache", str(path), "--around", _costliest_fusion(path),
                           "--depth", "2", "-o", f"{tmp}/g.svg"])
        row(f"{label}: graph --around", graph / xla, LIMITS["graph --around"])
        _, rss = run(["lint", "--no-cache", "--exit-zero", str(path)])
        row(f"{label}: peak RSS of lint / file", rss * 1024 / size, LIMITS["peak RSS of lint / file"])
        above.append(f"{label}: peak RSS {rss / 1024:.0f} MiB = {baseline / 1024:.0f} MiB before any "
                     f"file + {(rss - baseline) * 1024 / size:.1f}x the file")
        code, share = _slowest_rule(path, lint)
        row(f"{label}: slowest rule ({code}) / lint", share, LIMITS["slowest rule / lint"], "{:.1%}")
    xla_big = xla_parse(BIG)
    row("strict mode / XLA parse", strict_parse(BIG) / xla_big, 10.0)
    with tempfile.TemporaryDirectory() as tmp:
        import shutil

        mixtral = FILES[1] if FILES[1].exists() else BIG
        for k in range(8):
            shutil.copy(mixtral, f"{tmp}/m{k}.hlo.txt")
        one = best(["lint", "--no-cache", "--exit-zero", "-j", "1", tmp], 3)
        two = best(["lint", "--no-cache", "--exit-zero", "-j", "2", tmp], 3)
        row("8 modules: -j 1 time / -j 2 time (speed-up)", -(one / two), -1.8, "{:.2f}")
        rows[-1] = (rows[-1][0], f"{one / two:.2f}x", ">= 1.80x", one / two >= 1.8)
    zombies = _defunct()
    rows.append(("defunct processes left", str(zombies), "0", zombies == 0))
    env = {"HLOSCOPE_CACHE_DIR": tempfile.mkdtemp(prefix="hloscope-warm-")}
    run(["lint", "--exit-zero", str(BIG)], env)
    warm = best(["lint", "--exit-zero", str(BIG)], n, env) - startup
    row("cached re-lint / XLA parse", warm / xla_big, 0.2)
    row("start-up: hloscope --version", startup, 0.1, "{:.3f} s")
    imp = min(float(subprocess.run([sys.executable, "-c", "import time; t = time.perf_counter(); "
                                    "import hloscope; print(time.perf_counter() - t)"],
                                   capture_output=True, text=True, cwd=ROOT).stdout) for _ in range(5))
    row("import hloscope", imp, 0.1, "{:.3f} s")
    width = max(len(r[0]) for r in rows)
    print(f"\n{'target':{width}}  {'measured':>10}  {'limit':>10}")
    for name, shown, lim, ok in rows:
        print(f"{name:{width}}  {shown:>10}  {lim:>10}  {'PASS' if ok else 'FAIL'}")
    print(f"\n{sum(r[3] for r in rows)} of {len(rows)} targets met")
    print("\n" + "\n".join(above))
    return 0


if __name__ == "__main__":
    sys.exit(main())
