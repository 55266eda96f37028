"""Measured GPU kernel times beside hloscope's roofline (fixtures/h100* and h200*, real
captures made by fixtures/h100_capture.py): per op, the mean measured time per run, the
roofline bound on the peaks of the chip the capture ran on (read from it, as `hloscope profile`
does; --chip to judge against another), and the bound's share of the measured time. A share
above 100% is an op faster than physics (the chip's numbers, the cost model or the join is wrong).

    python bench/gpu_roofline.py [--folder h200_no_command_buffers] [--chip h100]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hloscope.cost.chips import get_chip  # noqa: E402
from hloscope.cost.roofline import roofline  # noqa: E402
from hloscope.parser import load  # noqa: E402
from hloscope.trace import join, load_profile  # noqa: E402


def rows(folder: Path, chip_name: str | None = None) -> tuple[str, list[dict]]:
    """(the chip judged against, the rows)."""
    modules = [m for p in sorted((folder / "dump").glob("*after_optimizations.txt")) for m in load(p)]
    profile = load_profile(folder / "capture.xplane.pb")
    index = join(profile, modules)
    chip_name = chip_name or profile.device_kind
    chip = get_chip(chip_name)
    out = []
    for m in modules:
        for r in roofline(m, chip).rows:
            i = next(i for i in m.instructions() if i.name == r.instruction)
            s = index.get(i, m)
            if s is None or not r.t_bound:
                continue
            out.append({"op": f"{index.label(m)}/{r.instruction}", "opcode": r.opcode, "bound": r.bound,
                        "measured_us": s.mean_ns / 1e3, "roofline_us": r.t_bound * 1e6,
                        "share": r.t_bound / (s.mean_ns * 1e-9), "flops": r.flops})
    return chip_name, sorted(out, key=lambda row: -row["measured_us"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default="h100", help="fixtures/FOLDER (h100, h100_no_command_buffers, h200, ...)")
    ap.add_argument("--chip", default=None, help="judge against this chip (default: the capture's)")
    args = ap.parse_args()
    chip, table = rows(ROOT / "fixtures" / args.folder, args.chip)
    print(f"fixtures/{args.folder} on {chip}\n")
    print("| op | bound | measured (us) | roofline (us) | roofline / measured | achieved TFLOP/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in table:
        achieved = r["flops"] / (r["measured_us"] * 1e-6) / 1e12
        print(f"| {r['op']} | {r['bound']} | {r['measured_us']:,.1f} | {r['roofline_us']:,.1f} | "
              f"{r['share']:.0%} | {achieved:,.1f} |")
    worst = max(table, key=lambda r: r["share"])
    print(f"\n{len(table)} ops; highest roofline/measured: {worst['share']:.0%} ({worst['op']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
