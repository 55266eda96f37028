"""Parse speed against XLA's own C++ parser, measured in the same run.

    python bench/parse_bench.py [FILE] [--repeat N] [--strict]

Default FILE: the largest fixture. Prints the best-of-N wall time of
hloscope's fast path (and strict mode with --strict) and of
jaxlib._hlo.hlo_module_from_text on the same text, and their ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = max((ROOT / "fixtures").glob("*/*.hlo.txt"), key=lambda p: p.stat().st_size)
    ap.add_argument("file", nargs="?", type=Path, default=default)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--strict", action="store_true", help="also time strict mode (slow)")
    ns = ap.parse_args()

    from jaxlib import _hlo

    from hloscope.parser import attrs, parse

    text = ns.file.read_text(encoding="utf-8")

    def ours() -> None:
        attrs.parse_shape.cache_clear()
        attrs.parse_attr.cache_clear()
        parse(text, str(ns.file))

    xla = best_of(lambda: _hlo.hlo_module_from_text(text), ns.repeat)
    fast = best_of(ours, ns.repeat)
    n = sum(len(m.instructions()) for m in parse(text))
    mb = len(text.encode()) / 1e6
    print(f"file: {ns.file.relative_to(ROOT) if ns.file.is_relative_to(ROOT) else ns.file}"
          f" ({mb:.2f} MB, {n:,} instructions)")
    print(f"XLA parser (jaxlib)   {xla:8.3f} s  {mb / xla:6.1f} MB/s")
    print(f"hloscope fast path    {fast:8.3f} s  {mb / fast:6.1f} MB/s   ratio {fast / xla:5.2f}x XLA")
    if ns.strict:
        strict = best_of(lambda: parse(text, str(ns.file), strict=True), 1)
        print(f"hloscope strict mode  {strict:8.3f} s  {mb / strict:6.1f} MB/s   ratio {strict / xla:5.2f}x XLA"
              " (one process; the CLI parses a large module's halves in two)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
