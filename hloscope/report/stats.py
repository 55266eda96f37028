"""`hloscope stats` as text, from the same records as its JSON output."""

from __future__ import annotations

from hloscope.source import bracketed
from hloscope.units import human_bytes


def _counts(s: dict, indent: str) -> list[str]:
    out = [indent + "opcodes: " + ", ".join(f"{k} {v}" for k, v in s["opcodes"].items())]
    if s["fusion_kinds"]:
        out.append(indent + "fusion kinds: " + ", ".join(f"{k} {v}" for k, v in s["fusion_kinds"].items()))
    if s["custom_call_targets"]:
        out.append(indent + "custom-call targets: "
                   + ", ".join(f"{k} {v}" for k, v in s["custom_call_targets"].items()))
    return out


def stats_text(records: list[dict], per_computation: bool) -> str:
    out = []
    for s in records:
        out.append(f"HloModule {s['name']}: {s['instructions']} instructions in "
                   f"{s['computations']} computations ({s['fusion_computations']} fused)")
        out += _counts(s, "  ")
        if s["unknown_cost"]:
            out.append("  ops the cost model cannot cost (roofline shows them as unknown): "
                       + ", ".join(f"{k} {v}" for k, v in s["unknown_cost"].items()))
        mem = s["memory"]
        out.append("  all buffers added up (not memory in use: `hloscope memory` gives the peak): "
                   + ", ".join(f"{k} {human_bytes(v, 2)}" for k, v in mem["bytes_per_memory_space"].items())
                   + f"; padding waste {human_bytes(mem['padding_waste_bytes'], 2)}")
        out.append("  largest buffers:")
        for b in mem["largest_buffers"]:
            out.append(f"    {human_bytes(b['padded_bytes'], 2):>11}  {b['instruction']} "
                       f"{b['shape']}" + (f" (padded {b['ratio']:.2f}x)" if b["ratio"] > 1 else "")
                       + bracketed(b))
        if per_computation:
            for c in s["per_computation"]:
                tag = " [entry]" if c["is_entry"] else (" [fusion]" if c["is_fusion"] else "")
                out.append(f"  {c['name']}{tag}: {c['instructions']} instructions")
                out += _counts(c, "    ")
    return "\n".join(out)
