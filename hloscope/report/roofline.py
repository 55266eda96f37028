"""`hloscope roofline` as text, from the same records as its JSON output."""

from __future__ import annotations

from hloscope.source import bracketed
from hloscope.units import human_bytes, human_seconds


def _t(seconds: float) -> str:
    return human_seconds(seconds, 3)


def roofline_text(records: list[dict], top: int) -> str:
    """records: roofline JSON modules ({"name", "chip", "totals", "instructions", "step"}),
    or Report.to_dict(top)'s, which hold only the rows shown."""
    out = []
    for r in records:
        t, chip = r["totals"], r["chip"]
        out.append(f"HloModule {r['name']} on {chip['name']} (ridge {chip['ridge']:.0f} FLOPs/byte)")
        if chip.get("note"):
            out.append(f"  note: {chip['note']}")
        out.append(f"  total: {t['flops']:.4g} FLOPs, {human_bytes(t['bytes'], 2)} accessed "
                   f"({human_bytes(t['hbm_bytes'], 2)} in HBM), {t['transcendentals']:.4g} transcendentals")
        out.append(f"  time: compute {_t(t['t_compute'])}, memory "
                   f"{_t(t['t_memory'])}, roofline {_t(t['t_roofline'])}")
        if r.get("step"):
            out.extend(_step_lines(r["step"], top)[:1] if r.get("breakdown") else _step_lines(r["step"], top))
        if t["unknown_trip_counts"]:
            out.append(f"  note: loops with unknown trip count (counted once): "
                       f"{', '.join(t['unknown_trip_counts'])}")
        if t["unknown_cost"]:
            shown = "; ".join(f"%{u['instruction']}: {u['reason']}" for u in t["unknown_cost"][:5])
            more = f" (+{len(t['unknown_cost']) - 5} more)" if len(t["unknown_cost"]) > 5 else ""
            out.append(f"  note: {len(t['unknown_cost'])} op(s) of unknown cost, counted as 0 in "
                       f"the totals: {shown}{more}")
        if r.get("breakdown"):
            out.extend(breakdown_lines(r["breakdown"], top, "roofline"))
            continue
        rows = sorted(r["instructions"], key=lambda x: -max(x["t_compute"], x["t_memory"]) * x["times"])
        shown_rows = rows if top <= 0 else rows[:top]
        out.append(f"  {'instruction':32} {'opcode':16} {'FLOPs':>10} {'bytes':>11} "
                   f"{'AI':>7} {'t_roofline':>11} bound    xla_est")
        for row in shown_rows:
            est = _t(row["estimated_seconds"]) if row["estimated_seconds"] else "-"
            times = f" x{row['times']}" if row["times"] > 1 else ""
            flops = "unknown" if row["unknown_cost"] else f"{row['flops']:.3g}"
            if row.get("cost_source") == "kernel body":
                flops += "*"
            out.append(f"  {row['instruction'][:32]:32} {row['opcode'][:16]:16} {flops:>10} "
                       f"{human_bytes(row['bytes'], 2):>11} {row['intensity']:7.1f} "
                       f"{_t(max(row['t_compute'], row['t_memory'])):>11} {row['bound']:8} {est}{times}"
                       + bracketed(row))
        if r.get("derived_rows", any(row.get("cost_source") == "kernel body" for row in rows)):
            out.append("  * derived from the kernel's body (grid x per-step ops; bytes from its "
                       "BlockSpecs): it states no cost_estimate")
        total = r.get("rows", len(rows))  # (a record of the top rows says how many there are)
        if total > len(shown_rows):
            out.append(f"  ... {total - len(shown_rows)} more (--top 0 shows all)")
    return "\n".join(out)


def _step_lines(step: dict, top: int) -> list[str]:
    """The step estimate and its collectives (hloscope.sharding.step)."""
    copies = (f" + exposed async copies {_t(step['copies_exposed_seconds'])}"
              if step.get("copies_exposed_seconds") else "")
    out = [f"  step (estimate): {_t(step['step_seconds'])} = ops {_t(step['ops_seconds'])} + exposed "
           f"communication {_t(step['exposed_seconds'])}{copies}"
           + (f"; MFU {step['mfu']:.1%} of {step['peak_flops'] / 1e12:.3g} TFLOP/s" if step["mfu"] else "")]
    if step.get("floor_seconds"):
        out.append(f"  ops include {_t(step['floor_seconds'])} of per-op floor: ops whose roofline is "
                   f"under the {_t(step['op_floor_seconds'])} an op of this chip measures however small")
    if step.get("caveat"):
        out.append(f"  caveat: {step['caveat']}")
    cs = step["collectives"]
    if not cs:
        return out
    overlapped = sum(1 for c in cs if c["hidden_seconds"] > 0)
    kinds = {}
    for c in cs:
        kinds[c["opcode"]] = kinds.get(c["opcode"], 0) + 1
    out.append(f"  collectives: {len(cs)} logical ({', '.join(f'{n} {k}' for k, n in kinds.items())}), "
               f"{_t(step['collective_seconds'])} on {step.get('links') or 'the links'}, {overlapped} overlapped hiding "
               f"{_t(step['hidden_seconds'])}")
    ranked = sorted(cs, key=lambda c: -c["exposed_seconds"] * c["times"])
    shown = ranked if top <= 0 else ranked[:top]
    for c in shown:
        how = (f"hidden {_t(c['hidden_seconds'])} by {len(c['overlapped_by'])} op(s)" if c["is_async"]
               else "sync")
        times = f" x{c['times']}" if c["times"] > 1 else ""
        out.append(f"    {c['instruction'][:32]:32} {c['opcode']:16} {c['axis'] or '-'} x{c['group_size']}  "
                   f"{human_bytes(c['moved_bytes'], 2)} moved  {_t(c['seconds'])}, {how}, "
                   f"exposed {_t(c['exposed_seconds'])}{times}")
    if len(shown) < len(ranked):
        out.append(f"    and {len(ranked) - len(shown)} more, less exposed (--top 0 lists all)")
    return out


def breakdown_lines(b: dict, top: int, what: str) -> list[str]:
    """A `--by` table (hloscope.cost.aggregate.group): time, share, forward/backward per group."""
    total = b["total"]
    out = [f"  by {b['by']}: {_t(total['seconds'])} of {what} time over {total['ops']} op(s)"]
    if b.get("note"):
        out.append(f"  note: {b['note']}")
    groups = b["groups"]
    if top <= 0:
        shown = groups
    elif b["by"] == "layer":  # (every layer; --top limits what is not a layer)
        layers = [g for g in groups if g["key"].startswith("layer ")]
        shown = layers + [g for g in groups if not g["key"].startswith("layer ")][:max(top - len(layers), 1)]
    else:
        shown = groups[:top]
    split = b["by"] != "pass" and any(g["backward_seconds"] for g in groups)
    head = f"  {b['by']:40} {'time':>11} {'share':>6}"
    out.append(head + (f" {'forward':>11} {'backward':>11}" if split else "")
               + f" {'FLOPs':>10} {'bytes':>11} {'ops':>6}")
    for g in shown:
        line = f"  {clip(g['key']):40} {_t(g['seconds']):>11} {g['share'] * 100:5.1f}%"
        if split:
            line += f" {_t(g['forward_seconds']):>11} {_t(g['backward_seconds']):>11}"
        out.append(line + f" {g['flops']:10.3g} {human_bytes(g['bytes'], 2):>11} {g['ops']:6}")
    if len(groups) > len(shown):
        rest = groups[len(shown):]
        out.append(f"  and {len(rest)} more ({sum(g['share'] for g in rest) * 100:.1f}%; --top 0 lists all)")
    if split:
        fwd = sum(g["forward_seconds"] for g in groups)
        bwd = sum(g["backward_seconds"] for g in groups)
        other = total["seconds"] - fwd - bwd
        out.append(f"  forward {_t(fwd)} ({fwd / total['seconds'] * 100:.1f}%), backward {_t(bwd)} "
                   f"({bwd / total['seconds'] * 100:.1f}%), other {_t(other)} (loss, optimizer, "
                   "no scope)" if total["seconds"] else "  (no time)")
    return out


def clip(key: str, width: int = 40) -> str:
    """A group key in `width` characters: a long path keeps its end, from a `/`."""
    if len(key) <= width:
        return key
    tail = key[-(width - 2):]
    cut = tail.find("/")
    return ".." + (tail[cut:] if 0 <= cut < width // 2 else tail)
