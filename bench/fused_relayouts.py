"""Are relayouts inside fusions worth an H002 finding? XLA's own estimates say (#34 point 6).

H002 reports copies and transposes that rearrange data between ops. A relayout can also sit
inside a fusion (a `copy` whose layout differs from its operand's, fused with a convert, say),
where it costs no HBM round trip of its own. For every optimized TPU compile in fixtures/,
this sets each fusion's XLA `estimated_cycles` (at the chip's clock) beside hloscope's
roofline bound of the same fusion, for fusions with such a relayout and for all others. A
relayout that made its fusion slow would show as a higher estimate/bound ratio than the rest.

    python3 bench/fused_relayouts.py          # the table (markdown)
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hloscope.cost.chips import get_chip  # noqa: E402
from hloscope.cost.roofline import roofline  # noqa: E402
from hloscope.parser import load  # noqa: E402
from hloscope.rules.helpers import layout_key  # noqa: E402

MIN_ELEMENTS = 4096


def _relayouts(module, fusion) -> list[str]:
    """The copies inside a fusion whose layout differs from their operand's."""
    callee = module.by_name.get(fusion.called_computations[0]) if fusion.called_computations else None
    out = []
    for i in callee.instructions if callee is not None else ():
        src = callee.by_name.get(i.operands[0]) if i.opcode == "copy" and i.operands else None
        if src is not None and src.shape.is_array and i.shape.num_elements >= MIN_ELEMENTS \
                and layout_key(src.shape) != layout_key(i.shape):
            out.append(i.name)
    return out


def rows() -> list[dict]:
    manifest = json.loads((ROOT / "fixtures" / "manifest.json").read_text())
    out = []
    for name, entry in sorted(manifest.items()):
        if entry.get("platform") != "tpu" or entry.get("stage") != "compiled" or not entry.get("topology"):
            continue
        (m,) = load(ROOT / "fixtures" / entry["file"])
        report = roofline(m, get_chip("tpu-" + entry["topology"].split(":")[0]))
        for r in report.rows:
            if r.opcode != "fusion" or not r.estimated_seconds or not r.t_bound:
                continue
            inside = _relayouts(m, m[r.computation].by_name[r.instruction])
            out.append({"program": name, "fusion": r.instruction, "relayouts": inside,
                        "bound_us": r.t_bound * 1e6, "xla_us": r.estimated_seconds * 1e6,
                        "ratio": r.estimated_seconds / r.t_bound})
    return out


def table(data: list[dict]) -> str:
    lines = ["| fusions | count | XLA estimate / roofline bound: median | 90th percentile |",
             "| --- | --- | --- | --- |"]
    for label, pick in (("with a relayout inside", True), ("all others", False)):
        ratios = sorted(d["ratio"] for d in data if bool(d["relayouts"]) == pick)
        if ratios:
            lines.append(f"| {label} | {len(ratios)} | {statistics.median(ratios):.2f}x | "
                         f"{ratios[int(0.9 * (len(ratios) - 1))]:.2f}x |")
    lines += ["", "| program | fusion | relayouts | roofline bound | XLA's estimate |", "| --- | --- | --- | --- | --- |"]
    for d in sorted((d for d in data if d["relayouts"]), key=lambda d: -d["ratio"]):
        lines.append(f"| {d['program']} | {d['fusion']} | {', '.join(d['relayouts'])} | "
                     f"{d['bound_us']:.1f} us | {d['xla_us']:.1f} us ({d['ratio']:.2f}x) |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(rows()))
