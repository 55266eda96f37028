"""hloscope's per-op time beside XLA's own estimate, over every TPU compile in fixtures/.

Every fusion and op of an optimized TPU module carries the compiler's estimate in its
backend_config (`estimated_cycles`, with the cost model that made it: COST_MODEL_TYPE_CLASSIC,
or INVALID where none applied). At the chip's clock (chips.toml, `clock_hz`, with its source)
that is seconds, set beside hloscope's roofline time of the same op (max of compute and
memory time). A roofline is a lower bound, so ratios under 1 are expected; how far under is
what this measures.

    python3 bench/xla_estimates.py            # the table (markdown), per program and overall
    python3 bench/xla_estimates.py --worst 10 # the ops furthest from XLA's figure, and why
    python3 bench/xla_estimates.py --measured # ours and XLA's beside a real v5p's measured times

`--measured`: fixtures/measured/ rebuilds ops of the corpus's real TPU training capture (a v5p;
XProf's golden hlo_stats) from their text; each row sets the capture's measured self time
beside hloscope's estimate and XLA's estimated_cycles of the same op compiled for v5p.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hloscope.cost.chips import get_chip  # noqa: E402
from hloscope.cost.roofline import roofline  # noqa: E402
from hloscope.mlir.cost import body_costs  # noqa: E402
from hloscope.parser import load  # noqa: E402

_KIND = re.compile(r'"cost_model_type":"COST_MODEL_TYPE_(\w+)"')


def rows(max_bytes: int = 3_000_000) -> list[dict]:
    """One record per op with an XLA estimate, over the manifest's optimized TPU compiles."""
    manifest = json.loads((ROOT / "fixtures" / "manifest.json").read_text())
    out = []
    for name, entry in sorted(manifest.items()):
        if entry["platform"] != "tpu" or entry.get("stage") != "compiled" or entry.get("bytes", 0) > max_bytes:
            continue
        chip = get_chip(entry["topology"].split(":")[0])
        for m in load(ROOT / "fixtures" / entry["file"]):
            report = roofline(m, chip, kernel_costs=body_costs(m))
            by_name = {i.name: i for i in m.instructions()}
            for r in report.rows:
                if not r.estimated_seconds or r.t_bound <= 0:
                    continue
                kind = _KIND.search(by_name[r.instruction].raw_attr("backend_config") or "")
                out.append({"program": name, "chip": chip.key, "op": r.instruction, "opcode": r.opcode,
                            "ours": r.t_estimate, "xla": r.estimated_seconds, "bound": r.bound,
                            "roofline": r.t_bound, "floored": r.t_estimate > r.t_bound,
                            "model": kind.group(1) if kind else "?",
                            "ratio": r.t_estimate / r.estimated_seconds,
                            "roofline_ratio": r.t_bound / r.estimated_seconds})
    return out


def _within(ratios: list[float], factor: float) -> float:
    return sum(1 for x in ratios if 1 / factor <= x <= factor) / len(ratios) if ratios else 0.0


def table(data: list[dict]) -> str:
    lines = ["| program | ops | median ours/XLA | top-20 by XLA time within 3x |",
             "| --- | --- | --- | --- |"]
    programs: dict[str, list[dict]] = {}
    for d in data:
        programs.setdefault(d["program"], []).append(d)
    top_ok = []
    for name, ops in programs.items():
        top = sorted(ops, key=lambda d: -d["xla"])[:20]
        share = _within([d["ratio"] for d in top], 3)
        top_ok.append(share)
        lines.append(f"| {name} | {len(ops)} | {statistics.median(d['ratio'] for d in ops):.2f} | {share:.0%} |")
    lines.append("")
    lines.append("| ops | n | median ours/XLA | within 1.5x | within 3x |")
    lines.append("| --- | --- | --- | --- | --- |")
    for label, keep in (("all", lambda d: True),
                        ("XLA's classic cost model", lambda d: d["model"] == "CLASSIC"),
                        ("no XLA cost model (INVALID)", lambda d: d["model"] == "INVALID"),
                        ("compute-bound by our roofline", lambda d: d["bound"] == "compute"),
                        ("memory-bound by our roofline", lambda d: d["bound"] == "memory"),
                        ("at the per-op floor", lambda d: d["floored"]),
                        ("above the floor (the roofline)", lambda d: not d["floored"])):
        rs = [d["ratio"] for d in data if keep(d)]
        if rs:
            lines.append(f"| {label} | {len(rs)} | {statistics.median(rs):.2f} | {_within(rs, 1.5):.0%} | "
                         f"{_within(rs, 3):.0%} |")
    rs = [d["roofline_ratio"] for d in data]
    lines.append(f"| all, the roofline alone (no floor) | {len(rs)} | {statistics.median(rs):.2f} | "
                 f"{_within(rs, 1.5):.0%} | {_within(rs, 3):.0%} |")
    lines.append("")
    lines.append(f"programs whose top-20 ops are all within 3x: {sum(1 for s in top_ok if s >= 0.999)} of "
                 f"{len(top_ok)}; share of top-20 ops within 3x over all programs: "
                 f"{statistics.mean(top_ok):.0%}")
    return "\n".join(lines)


CAPTURE = ROOT.parent / "shared/corpus/xprof/integration_golden/data_tpu-training_hlo_stats_tpu_training.json.gz"


def measured_table() -> str:
    """hloscope's and XLA's per-op estimates beside the real v5p capture's measured self time."""
    import gzip

    from hloscope.trace.xprof import load_hlo_stats

    prof = load_hlo_stats(CAPTURE, json.loads(gzip.decompress(CAPTURE.read_bytes())))
    self_us = {op: prof.details[(prog, op)]["self_ns"] / count / 1e3
               for (prog, op), (count, _total) in prof.aggregated.items()}
    manifest = json.loads((ROOT / "fixtures" / "manifest.json").read_text())
    chip = get_chip("v5p")
    lines = ["| rebuilt op (capture's names) | bound | measured | hloscope | XLA's estimate | "
             "hloscope / measured | XLA / measured |", "| --- | --- | --- | --- | --- | --- | --- |"]
    from hloscope.sharding import analyze

    collectives = ["", "| rebuilt collective (capture's names) | measured | hloscope (ICI) | hloscope / measured |",
                   "| --- | --- | --- | --- |"]
    for name, entry in sorted(manifest.items()):
        if not name.startswith("measured_"):
            continue
        module = load(ROOT / "fixtures" / entry["file"])[0]
        ops = entry["facts"]["capture_ops"]
        measured = statistics.median(self_us[op] for op in ops)
        label = f"{name.removeprefix('measured_').removesuffix('_v5p')} ({', '.join(ops)})"
        if entry["mesh"] != {"x": 1}:  # (a collective over the capture's chips)
            (c,) = analyze(module, chip)[1]
            collectives.append(f"| {label} | {measured:.1f} us | {c.est_seconds * 1e6:.1f} us | "
                               f"{c.est_seconds * 1e6 / measured:.2f} |")
            continue
        r = max(roofline(module, chip).rows, key=lambda r: r.t_bound)
        ours, xla = r.t_estimate * 1e6, r.estimated_seconds * 1e6
        lines.append(f"| {label} | {r.bound} | {measured:.1f} us | {ours:.1f} us | {xla:.1f} us | "
                     f"{ours / measured:.2f} | {xla / measured:.2f} |")
    return "\n".join(lines + collectives)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worst", type=int, default=0, help="also list the N ops furthest from XLA's figure")
    ap.add_argument("--measured", action="store_true",
                    help="only the ops a real v5p measured: ours and XLA's beside its times")
    ns = ap.parse_args(argv)
    if ns.measured:
        print(measured_table())
        return 0
    data = rows()
    print(table(data))
    if ns.worst:
        print()
        for d in sorted(data, key=lambda d: abs(__import__("math").log(d["ratio"])), reverse=True)[:ns.worst]:
            print(f"{d['program']:36} {d['op'][:28]:28} {d['opcode']:12} ours {d['ours'] * 1e6:9.2f} us  "
                  f"XLA {d['xla'] * 1e6:9.2f} us  ({d['model']}, {d['bound']}-bound)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
