"""Issue #22's targets, every one measured in one run against XLA's parser on the same
files, in one table with PASS/FAIL.

    python3 bench/targets.py [--quick]     # --quick: best of 1 instead of 3

Per file (the largest TPU fixture and the corpus's Mixtral 8x7B, Llama-3.1-8B and Gemma-3
1B): `lint` with the cache off and with the default cache cold, `stats`, `memory`,
`roofline`, `graph --around` (the entry's costliest fusion), each minus start-up and
divided by XLA's parse time of the file (the three measured in rounds, one after another,
best of each: a shared host's speed drifts by 2-3x within minutes); peak resident memory of `lint` over the file
size; the slowest rule's share of lint time. Once: strict mode, a directory of 8 modules
with -j 2 against -j 1 (and no worker left behind), a cached re-lint, start-up and
`import hloscope`.

    python3 bench/targets.py --issue 37    # #37's tighter targets, with the 30 MB and 100 MB
                                           # dumps of `fixtures/generate.py --big` where present

#37's table adds, per file, the compiled scanner alone (text in memory to module table,
in-process, MB/s) and peak RSS above `hloscope --version`'s peak; and once, the 100 MB case
(the four modules of fixtures/big/ linted as one folder): its peak RSS above start-up over
the folder's size, and its lint time per MB beside Mixtral's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import BIG, ROOT, best, measure, run, strict_parse, xla_parse  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
FILES = [BIG, CORPUS / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo",
         CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo",
         CORPUS / "xla-cpu-benchmark-hlo" / "gemma3_1b_flax_call.hlo"]
LIMITS = {"lint": 1.0, "lint (cache cold)": 1.0, "stats": 0.6, "memory": 1.2, "roofline": 1.2,
          "graph --around": 1.2, "peak RSS of lint / file": 5.0, "slowest rule / lint": 0.10,
          "strict": 10.0}
# issue #37's (a compiled core): RSS is counted above `hloscope --version`'s own peak
LIMITS_37 = {"lint": 0.7, "lint (cache cold)": 0.7, "stats": 0.3, "memory": 0.8, "roofline": 0.8,
             "graph --around": 0.8, "peak RSS of lint / file": 2.0, "slowest rule / lint": 0.10,
             "strict": 2.0, "scanner MB/s": 300.0, "100 MB case RSS / size": 3.0,
             "100 MB case time per MB / Mixtral's": 1.3}
BIG_DIR = ROOT / "fixtures" / "big"  # fixtures/generate.py --big (not committed)
BIG_30 = BIG_DIR / "train_170_layers_v5p.hlo.txt"


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


def _scanner_mb_s(path: Path) -> float | None:
    """The compiled scanner alone, in-process: text in memory to the module table Python
    reads (hloscope.parser.fast.table.SpanTable: one array per column), best of 3."""
    try:
        import hloscope_native
    except ImportError:
        return None
    from native_scan import best as best_call  # (in-process, best of 3)

    from hloscope.parser.fast.table import SpanTable

    text = path.read_text(encoding="utf-8")
    return len(text.encode()) / 1e6 / best_call(lambda: SpanTable(hloscope_native, text))


def main() -> int:
    n = 1 if "--quick" in sys.argv else 3
    issue37 = "--issue" in sys.argv and sys.argv[sys.argv.index("--issue") + 1] == "37"
    limits = LIMITS_37 if issue37 else LIMITS
    files = FILES + ([BIG_30] if issue37 else [])
    import compileall

    # (forced, as bench/run.py's: a .pyc compileall keeps may be one the import rejects)
    compileall.compile_dir(str(ROOT / "hloscope"), quiet=1, force=True)
    rows: list[tuple[str, str, str, bool]] = []

    def row(name: str, value: float, limit: float, fmt: str = "{:.2f}x") -> None:
        rows.append((name, fmt.format(value), fmt.format(limit), value <= limit))

    run(["--version"])
    startup = best(["--version"], 5)
    version_rss = min(run(["--version"])[1] for _ in range(3))
    # what a lint process holds before any file's data: the interpreter and the imports
    # (a 7 KB module), set beside each file's whole-process peak below the table
    baseline = min(run(["lint", "--no-cache", "--exit-zero", str(ROOT / "fixtures/tpu/mlp_v5e.hlo.txt")])[1]
                   for _ in range(3))
    above: list[str] = []
    per_mb: dict[str, float] = {}
    for path in files:
        if not path.exists():
            print(f"{path}: not at hand, skipped")
            continue
        xla = xla_parse(path)
        size = path.stat().st_size
        label = path.name.split(".")[0][:28]
        print(f"{path.name}: {size / 1e6:.2f} MB, XLA parse {xla:.3f} s", flush=True)

        def timed(args: list[str], prefix: str = "hloscope-bench-") -> tuple[float, float]:
            """(the command's seconds above start-up, XLA's parse of the file), each the
            best of `n` rounds of the three run one after another: on a machine whose
            speed drifts (a shared host), a ratio of figures measured minutes apart is
            off by the drift. A fresh cache folder per run (cold where the cache is on)."""
            runs, starts, parses = [], [], []
            for _ in range(n):
                parses.append(xla_parse(path, 1))
                starts.append(run(["--version"])[0])
                runs.append(run(args, {"HLOSCOPE_CACHE_DIR": tempfile.mkdtemp(prefix=prefix)})[0])
            return min(runs) - min(starts), min(parses)

        def ratio(args: list[str], prefix: str = "hloscope-bench-") -> float:
            seconds, parse = timed(args, prefix)
            return seconds / parse

        lint, xla_then = timed(["lint", "--no-cache", "--exit-zero", str(path)])
        per_mb[path.name] = lint / (size / 1e6)
        row(f"{label}: lint --no-cache", lint / xla_then, limits["lint"])
        row(f"{label}: lint (cache cold)", ratio(["lint", "--exit-zero", str(path)], "hloscope-cold-"),
            limits["lint (cache cold)"])
        row(f"{label}: stats", ratio(["stats", "--no-cache", str(path)]), limits["stats"])
        row(f"{label}: memory", ratio(["memory", "--no-cache", str(path)]), limits["memory"])
        row(f"{label}: roofline", ratio(["roofline", "--no-cache", str(path)]), limits["roofline"])
        with tempfile.TemporaryDirectory() as tmp:
            graph = ratio(["graph", "--no-cache", str(path), "--around", _costliest_fusion(path),
                           "--depth", "2", "-o", f"{tmp}/g.svg"])
        row(f"{label}: graph --around", graph, limits["graph --around"])
        _, rss = run(["lint", "--no-cache", "--exit-zero", str(path)])
        held = (rss - version_rss) if issue37 else rss  # (#37: above start-up's own peak)
        row(f"{label}: peak RSS of lint / file", held * 1024 / size, limits["peak RSS of lint / file"])
        above.append(f"{label}: peak RSS {rss / 1024:.0f} MiB = {baseline / 1024:.0f} MiB before any "
                     f"file + {(rss - baseline) * 1024 / size:.1f}x the file")
        code, share = _slowest_rule(path, lint)  # (the lint measured beside XLA's parse)
        row(f"{label}: slowest rule ({code}) / lint", share, limits["slowest rule / lint"], "{:.1%}")
        if issue37:
            mb_s = _scanner_mb_s(path)
            if mb_s is not None:
                floor = limits["scanner MB/s"]
                rows.append((f"{label}: scanner alone (MB/s)", f"{mb_s:,.0f}", f">= {floor:.0f}", mb_s >= floor))
    if issue37:
        _hundred(row, per_mb, version_rss, startup)
    xla_big = xla_parse(BIG)
    row("strict mode / XLA parse", strict_parse(BIG) / xla_big, limits["strict"])
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
    # (what no code of hloscope's takes away: the interpreter and its site's .pth files,
    # which a host may add to; printed below the table beside the start-up)
    bare = min(measure([sys.executable, "-c", "pass"])[0] for _ in range(5))
    above.append(f"start-up: the interpreter alone (python3 -c pass) {bare:.3f} s of "
                 f"hloscope --version's {startup:.3f} s")
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


def _hundred(row, per_mb: dict[str, float], version_rss: int, startup: float) -> None:
    """The 100 MB case: the four modules of fixtures/big/ linted as one folder (one process,
    -j 1): peak RSS above start-up over their size, and time per MB beside Mixtral's."""
    mods = sorted(BIG_DIR.glob("*.hlo.txt")) if BIG_DIR.is_dir() else []
    size = sum(p.stat().st_size for p in mods)
    if size < 100e6:
        print(f"{BIG_DIR}: {size / 1e6:.0f} MB, not the 100 MB case (python3 fixtures/generate.py --big)")
        return
    wall, rss = run(["lint", "--no-cache", "--exit-zero", "-j", "1", str(BIG_DIR)])
    row(f"100 MB case ({len(mods)} modules, {size / 1e6:.0f} MB): peak RSS above start-up / size",
        (rss - version_rss) * 1024 / size, LIMITS_37["100 MB case RSS / size"])
    mixtral = per_mb.get(FILES[1].name)
    if mixtral:
        row("100 MB case: lint time per MB / Mixtral's", (wall - startup) / (size / 1e6) / mixtral,
            LIMITS_37["100 MB case time per MB / Mixtral's"])


if __name__ == "__main__":
    sys.exit(main())
