"""What any CPython program pays to look at each instruction of a file once, set beside
issue #22's limits: the floor under every design of hloscope that stays in Python.

    python3 bench/floor.py

For each of bench/targets.py's files, a fresh `python3` process (site on, as a console
script needs it to find its packages) reads the file and runs one regular expression over
the text that finds every instruction's name and opcode (C code: the regex engine), keeps
one (name, opcode) tuple per instruction and counts the opcodes. It validates nothing,
types no value, runs no rule: it is less than `hloscope stats` must do. Its opcode counts
are checked equal to XLA's parse of the same text, so the floor sees every instruction.

Printed first: the peak resident memory of an interpreter that runs nothing (with and
without its site step), of one that imports typer, and of `hloscope --version`. Then per
file: XLA's parse time (best of 3 in this process, as targets.py); the floor's time from
before the read to the counts (best of 3 processes) and its ratio to XLA's; the floor's
peak resident memory (VmHWM: interpreter, text, tuples) over the file size, also with the
site step off (-S, which no console script can do); and issue #22's memory limit, 5x the
file. A floor above a target's limit means no CPython program meets that target on that
file, whatever its design.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from oracle import xla_views  # noqa: E402
from run import measure, xla_parse  # noqa: E402
from targets import FILES, LIMITS  # noqa: E402

_FLOOR = r'''
import json, re, sys, time
from collections import Counter
t = time.perf_counter()
with open(sys.argv[1], encoding="utf-8") as f:
    text = f.read()
read = time.perf_counter() - t
# an instruction line: [ROOT] [%]name = shape opcode( ; a tuple shape is parenthesised
found = re.compile(r"^[ \t]*(?:ROOT[ \t]+)?%?([^\s=]+)[ \t]*=[ \t]*(?:\([^\n]*?\)|\S+)"
                   r"[ \t]+([a-z][a-z0-9\-]*)\(", re.M)
rows = [m.groups() for m in found.finditer(text)]
counts = Counter(op for _, op in rows)
total = time.perf_counter() - t
# the peak of this process's own memory map (VmHWM): getrusage's ru_maxrss would also hold
# the parent's pages this process was forked with, before it ran python
with open("/proc/self/status") as f:
    rss = int(next(l for l in f if l.startswith("VmHWM:")).split()[1])
print(json.dumps({"read": read, "total": total, "rss_kib": rss, "counts": counts}))
'''


def xla_counts(path: Path) -> Counter:
    """Opcode counts of XLA's own parse of the file (every computation), by the tests'
    oracle."""
    (view,) = xla_views([path.read_text()])
    return Counter(i[1] for c in view["computations"] for i in c["instructions"])


def floor(path: Path, *flags: str) -> dict:
    """The best of 3 floor processes (`flags` to the interpreter, e.g. -S)."""
    runs = [json.loads(subprocess.run([sys.executable, *flags, "-c", _FLOOR, str(path)],
                                      check=True, capture_output=True, text=True).stdout)
            for _ in range(3)]
    return min(runs, key=lambda r: r["total"])


def empty_rss(*flags: str) -> int:
    """Peak resident memory (KiB) of an interpreter that runs nothing."""
    code = ("print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))"
            ".split()[1])")
    return min(int(subprocess.run([sys.executable, *flags, "-c", code], capture_output=True,
                                  text=True, check=True).stdout) for _ in range(3))


def command_rss(*argv: str) -> int:
    """Peak resident memory (KiB) of a command (best of 3)."""
    return min(measure(list(argv))[1] for _ in range(3))


def main() -> int:
    py = [sys.executable]
    for what, kib in (("python3 -c pass", empty_rss()),
                      ("python3 -S -c pass (no site: no console script runs so)", empty_rss("-S")),
                      ("python3 -c 'import typer' (the brief's CLI library)",
                       command_rss(*py, "-c", "import typer")),
                      ("hloscope --version", command_rss(*py, "-m", "hloscope", "--version"))):
        print(f"{what:<58} peak RSS {kib / 1024:5.1f} MiB")
    print()
    print(f"{'file':<28}{'MB':>6}{'instr':>8}{'XLA s':>8}{'read s':>8}{'floor s':>9}"
          f"{'floor/XLA':>10}{'RSS MiB':>9}{'RSS/file':>9}{'-S: RSS/file':>13}"
          f"{'5x file MiB':>12}")
    out = 0
    for path in (p for p in FILES if p.exists()):
        got, bare = floor(path), floor(path, "-S")
        xla = xla_parse(path)
        want = xla_counts(path)
        if Counter(got["counts"]) != want:
            print(f"{path.name}: the floor's opcode counts differ from XLA's "
                  f"({sum(got['counts'].values())} vs {sum(want.values())} instructions)")
            out = 1
            continue
        size = path.stat().st_size
        rss = got["rss_kib"] * 1024
        print(f"{path.stem[:27]:<28}{size / 1e6:>6.2f}{sum(want.values()):>8}{xla:>8.3f}"
              f"{got['read']:>8.3f}{got['total']:>9.3f}{got['total'] / xla:>9.2f}x"
              f"{rss / 2**20:>9.1f}{rss / size:>8.2f}x"
              f"{bare['rss_kib'] * 1024 / size:>12.2f}x{5 * size / 2**20:>12.1f}")
    print(f"\nlimits (issue #22): stats {LIMITS['stats']}x, lint {LIMITS['lint']}x, "
          f"memory/roofline/graph {LIMITS['memory']}x XLA's parse; "
          f"peak RSS {LIMITS['peak RSS of lint / file']}x the file")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
