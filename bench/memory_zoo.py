"""The static HBM peak beside XLA's own memory_analysis() over every TPU and GPU compile in
fixtures/ (the memory zoo, fixtures/zoo.py, and the rest): argument + output - alias + temp, per program,
with the error, worst first. tests/test_memory.py holds each within 5%. Beside it, XLA's other
figure, peak_memory_in_bytes (its own peak of what is live at once; on TPUs with the VMEM the
program preallocates, where it uses any), marked where hloscope's figure equals it.

    python3 bench/memory_zoo.py          # the table (markdown)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hloscope.cost.liveness import memory  # noqa: E402
from hloscope.parser import load  # noqa: E402


def rows() -> list[dict]:
    manifest = json.loads((ROOT / "fixtures" / "manifest.json").read_text())
    out = []
    for name, e in sorted(manifest.items()):
        xla = e.get("memory_analysis")
        if not xla or e["platform"] not in ("tpu", "gpu"):
            continue
        (m,) = load(ROOT / "fixtures" / e["file"])
        r = memory(m)
        want = (xla["argument_size_in_bytes"] + xla["output_size_in_bytes"] - xla["alias_size_in_bytes"]
                + xla["temp_size_in_bytes"])
        out.append({"program": name, "xla": want, "ours": r.hbm_bytes, "xla_temp": xla["temp_size_in_bytes"],
                    "xla_peak": xla.get("peak_memory_in_bytes"),
                    "ours_temp": r.temp_peak_bytes, "error": (r.hbm_bytes - want) / want if want else 0.0})
    return out


def main() -> int:
    data = sorted(rows(), key=lambda d: -abs(d["error"]))
    mib = 1 << 20
    print("| program | XLA: arg + out - alias + temp (temp) | hloscope (temp) | error | "
          "XLA's peak_memory_in_bytes |")
    print("| --- | --- | --- | --- | --- |")
    for d in data:
        peak = d["xla_peak"]
        same = " (= hloscope)" if peak is not None and abs(peak - d["ours"]) <= 64 << 10 else ""
        print(f"| {d['program']} | {d['xla'] / mib:,.2f} MiB ({d['xla_temp'] / mib:,.2f}) | "
              f"{d['ours'] / mib:,.2f} MiB ({d['ours_temp'] / mib:,.2f}) | {d['error']:+.2%} | "
              f"{'-' if peak is None else f'{peak / mib:,.2f} MiB{same}'} |")
    zoo = [d for d in data if d["program"].startswith("zoo_")]
    within = sum(1 for d in zoo if abs(d["error"]) <= 0.05)
    print(f"\nzoo: {within} of {len(zoo)} within 5%; all TPU and GPU compiles: "
          f"{sum(1 for d in data if abs(d['error']) <= 0.05)} of {len(data)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
