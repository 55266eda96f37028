"""The compiled scanner (native/, issue #37's first step) beside XLA's parser and hloscope's
parse (whose fast route reads instruction lines with the compiled line reader where it is
built), on the largest real modules here: MB/s and the ratio to XLA's parse of the same text
in the same run, best of 3.

    pip install ./native                  # (./setup.sh does it where cargo is)
    python3 bench/native_scan.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"


def best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def files() -> list[Path]:
    out = [ROOT / "fixtures" / "tpu" / "llm_v5p_big.hlo.txt"]
    if CORPUS.is_dir():
        found = sorted(CORPUS.rglob("*.hlo*"), key=lambda p: -p.stat().st_size)
        out += [p for p in found if p.stat().st_size > 2_000_000][:4]
    return out


def main() -> int:
    import hloscope_native
    from jaxlib import _hlo

    from hloscope.parser import parse
    from hloscope.parser.fast.table import SpanTable

    print("| file | MB | XLA parse | native scan | native table | hloscope parse | scan / XLA | table / XLA | hloscope / XLA |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in files():
        text = path.read_text(encoding="utf-8")
        mb = len(text.encode()) / 1e6
        xla = best(lambda: _hlo.hlo_module_from_text(text))
        scan = best(lambda: hloscope_native.count(text))
        table = best(lambda: SpanTable(hloscope_native, text))
        ours = best(lambda: parse(text, path.name))
        print(f"| {path.name[:48]} | {mb:.1f} | {xla * 1e3:,.0f} ms ({mb / xla:,.0f} MB/s) | "
              f"{scan * 1e3:,.1f} ms ({mb / scan:,.0f} MB/s) | {table * 1e3:,.1f} ms ({mb / table:,.0f} MB/s) | "
              f"{ours * 1e3:,.0f} ms | {scan / xla:.3f}x | {table / xla:.3f}x | {ours / xla:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
