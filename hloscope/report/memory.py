"""`hloscope memory` as text, from the same records as its JSON output."""

from __future__ import annotations

from pathlib import Path

from hloscope.cost.layout import memory_space_name
from hloscope.source import bracketed
from hloscope.units import human_bytes

_BARS = " ▁▂▃▄▅▆▇█"


def _timeline(points: list[list], width: int = 60) -> str:
    """The HBM temporaries live over the schedule, one character per slice (its maximum)."""
    if not points:
        return ""
    values = [p[2] for p in points]
    top = max(values) or 1
    per = max(1, -(-len(values) // width))
    cells = [max(values[k:k + per]) for k in range(0, len(values), per)]
    return "".join(_BARS[round(8 * v / top)] for v in cells)


def memory_text(records: list[dict]) -> str:
    out = []
    for r in records:
        chip = r["chip"]
        order = "its schedule" if r["scheduled"] else "the text's order (not a scheduled module: the peak is indicative)"
        out.append(f"HloModule {r['module']}: static liveness over {order}")
        if chip.get("note"):
            out.append(f"  note: {chip['note']}")
        out.append(f"  HBM: arguments {human_bytes(r['argument_bytes'], 2)} + outputs "
                   f"{human_bytes(r['output_bytes'], 2)} - aliased {human_bytes(r['alias_bytes'], 2)} "
                   f"+ peak temporaries {human_bytes(r['temp_peak_bytes'], 2)} = "
                   f"{human_bytes(r['hbm_bytes'], 2)}")
        if chip.get("key") == "cpu":
            pass  # the host's RAM is not a chip's HBM: no fit verdict
        elif chip.get("hbm_bytes") and not r["scheduled"]:
            out.append(f"  {chip['name']} HBM {human_bytes(chip['hbm_bytes'], 2)}: no verdict before "
                       "scheduling (unfused values all look live); run memory on the after_optimizations dump")
        elif chip.get("hbm_bytes") and chip.get("assumed"):
            out.append(f"  {r['hbm_bytes'] / chip['hbm_bytes']:.1%} of the {human_bytes(chip['hbm_bytes'], 2)} "
                       f"of an assumed {chip['name']}: no verdict (--chip names the chip)")
        elif chip.get("hbm_bytes"):
            free = chip["hbm_bytes"] - r["hbm_bytes"]
            out.append(f"  {chip['name']} HBM {human_bytes(chip['hbm_bytes'], 2)}: "
                       + (f"headroom {human_bytes(free, 2)} ({free / chip['hbm_bytes']:.1%})" if free >= 0
                          else f"over by {human_bytes(-free, 2)}: it does not fit"))
        if r["other_spaces"]:
            out.append("  other memory spaces (peak, not HBM): " + ", ".join(
                f"{k} {human_bytes(v, 2)}" for k, v in r["other_spaces"].items()))
        if r["constant_bytes"]:
            out.append(f"  constants: {human_bytes(r['constant_bytes'], 2)} (XLA's own allocations, not counted above)")
        if r["peak_step"] >= 0 and r["temp_peak_bytes"]:
            out.append(f"  peak at step {r['peak_step']} (%{r['peak_instruction']}); live there:")
            for b in r["peak_live"]:
                out.append(f"    {human_bytes(b['bytes'], 2):>11}  %{b['instruction']} {b['shape']}"
                           f"  steps {b['defined']}-{b['last_use']}" + bracketed(b))
            out.append(f"  temporaries over the schedule: |{_timeline(r['timeline'])}|")
        if r.get("xla"):
            out.extend(_beside_xla(r, r["xla"]))
        if r.get("xla_memory_analysis"):
            out.extend(_beside_analysis(r, r["xla_memory_analysis"]))
    return "\n".join(out)


def _beside_analysis(r: dict, xla: dict) -> list[str]:
    """Our numbers next to XLA's memory_analysis() of the same compile (hloscope compile)."""
    fmt = lambda n: "-" if n is None else human_bytes(n, 2)  # noqa: E731
    keys = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes")
    total = sum(xla.get(k, 0) for k in keys[:2]) - xla.get(keys[2], 0) + xla.get(keys[3], 0)
    rows = [("arguments", r["argument_bytes"], xla.get(keys[0]), ""),
            ("outputs", r["output_bytes"], xla.get(keys[1]), ""),
            ("aliased (donated)", r["alias_bytes"], xla.get(keys[2]), ""),
            ("temporaries", r["temp_peak_bytes"], xla.get(keys[3]), "XLA: its heap, as laid out"),
            ("total", r["hbm_bytes"], total, "arguments + outputs - aliased + temporaries"),
            ("peak live", r["hbm_bytes"], xla.get("peak_memory_in_bytes"),
             "XLA's peak_memory_in_bytes (with the VMEM it preallocates, where it uses any)")]
    return ["  beside XLA's memory_analysis() of this compile (memory_analysis.json):",
            f"    {'':<24} {'hloscope':>12} {'XLA':>12}"] + [
        f"    {label:<24} {fmt(ours):>12} {fmt(theirs):>12}" + (f"  {note}" if note else "")
        for label, ours, theirs, note in rows]


def _beside_xla(r: dict, xla: dict) -> list[str]:
    """Our numbers next to those of XLA's buffer assignment, memory-usage report and live range."""

    def row(label: str, ours: int | None, theirs: int | None, note: str = "") -> str:
        fmt = lambda n: "-" if n is None else human_bytes(n, 2)  # noqa: E731
        return f"    {label:<24} {fmt(ours):>12} {fmt(theirs):>12}" + (f"  {note}" if note else "")

    from hloscope.cost.xla_memory import kind_of

    out = ["  beside XLA's own reports (" + ", ".join((kind_of(f) or Path(f).name).replace("_", " ")
                                                      for f in xla["files"]) + "):",
           f"    {'':<24} {'hloscope':>12} {'XLA':>12}"]
    for s in xla["spaces"]:
        if s["color"] == 0:
            out.append(row("HBM arguments", r["argument_bytes"], s["arguments"]))
            out.append(row("HBM outputs", r["output_bytes"], s["outputs"]))
            out.append(row("HBM aliased (donated)", r["alias_bytes"], s["aliased"]))
            out.append(row("HBM temporaries", r["temp_peak_bytes"], s["temporaries"],
                           "XLA: the temporaries' heap after buffer reuse"))
            out.append(row("HBM total", r["hbm_bytes"], s["hbm_figure"],
                           "arguments + outputs - aliased + temporaries"))
            if s["report_total"] is not None:
                out.append(row("  memory-usage report", None, s["report_total"],
                               "all allocations of the space (constants, thread-local too)"))
        else:
            name = s["name"] or memory_space_name(s["color"])
            ours = r["other_spaces"].get(memory_space_name(s["color"]))
            theirs = s["report_total"] if s["report_total"] is not None else s["temporaries"]
            out.append(row(f"{name} (color {s['color']})", ours, theirs,
                           "ours: peak live; XLA: the space's preallocation"))
    if xla.get("live_range_peak_bytes") is not None:
        out.append(row("live-range peak", None, xla["live_range_peak_bytes"],
                       f"at step {xla['live_range_peak_step']} of XLA's schedule (all spaces)"))
    return out
