"""The HLO op profile: time per instruction and category, against the roofline."""

from __future__ import annotations

from collections import defaultdict

from hloscope.cost.chips import Chip, get_chip
from hloscope.cost.ops import CostModel
from hloscope.cost.roofline import op_times
from hloscope.ir import Module
from hloscope.sharding.bounds import link_bandwidth, measured, module_collectives, per_axis
from hloscope.trace.join import TraceIndex
from hloscope.trace.load import Profile


def detect_chip(device_kind: str | None) -> Chip | None:
    if not device_kind:
        return None
    try:
        return get_chip(device_kind)
    except KeyError:
        return None


def raw_ops(profile: Profile) -> list[dict]:
    """Per (module, hlo_op) totals straight from the events, joined or not, self (exclusive)
    time first as XProf ranks them: an op's own time, less the ops nested in it (a while's
    body ops); a module name that several programs share is told apart by program id
    (`jit_dot(21)`). XProf tables add their category and framework op."""
    table: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    programs: dict[str, set] = defaultdict(set)
    for ev in profile.events:
        programs[ev.module].add(ev.program_id)
    for ev, own in zip(profile.events, self_times(profile.events)):
        module = f"{ev.module}({ev.program_id})" if len(programs[ev.module]) > 1 else ev.module
        row = table[(module, ev.hlo_op)]
        row[0] += 1
        row[1] += ev.duration_ns
        row[2] += own
    for key, (count, total) in profile.aggregated.items():
        row = table[key]
        row[0] += count
        row[1] += total
        row[2] += profile.details.get(key, {}).get("self_ns", total)
    out = []
    for (m, op), (c, t, own) in sorted(table.items(), key=lambda kv: (-kv[1][2], -kv[1][1])):
        detail = profile.details.get((m, op), {})
        out.append({"module": m, "hlo_op": op, "count": int(c), "total_seconds": t * 1e-9,
                    "self_seconds": own * 1e-9, "category": detail.get("category", ""),
                    "op_name": detail.get("op_name", "")})
    return out


def self_times(events) -> list[float]:
    """Each event's self time: its duration less the events nested in it on its line (a
    while op's span holds its body's ops; async ops overlap, they do not nest; nor does a
    GPU kernel that starts before the one before it ends, as Hopper's programmatic
    dependent launch lets it: XProf counts each such kernel's whole time as its own)."""
    own = [ev.duration_ns for ev in events]
    lines: dict[str, list[int]] = defaultdict(list)
    for k, ev in enumerate(events):
        if not ev.is_async:
            lines[ev.device].append(k)
    for ks in lines.values():
        ks.sort(key=lambda k: (events[k].start_ns, -events[k].duration_ns))
        stack: list[int] = []
        for k in ks:
            start = events[k].start_ns
            while stack and events[stack[-1]].start_ns + events[stack[-1]].duration_ns <= start:
                stack.pop()
            top = events[stack[-1]] if stack else None
            if top is not None and start + events[k].duration_ns <= top.start_ns + top.duration_ns:
                own[stack[-1]] -= events[k].duration_ns  # (inside the innermost open event)
            stack.append(k)
    return [max(t, 0.0) for t in own]


def categories_of(ops: list[dict]) -> dict[str, float]:
    """Self time per XProf category (the profile's own, as XProf's hlo_stats chart sums
    it); {} when the profile states none."""
    out: dict[str, float] = defaultdict(float)
    for r in ops:
        if r.get("category"):
            out[r["category"]] += r["self_seconds"]
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def profile_report(profile: Profile, index: TraceIndex, modules: list[Module],
                   chip: Chip | None) -> dict:
    from hloscope.mlir.cost import body_costs

    # kernels without a cost_estimate are costed from their bodies (XProf reports 0 FLOPs)
    models = {index.label(m): CostModel(m, kernel_costs=body_costs(m)) for m in modules}
    links = {index.label(m): module_collectives(m, chip) for m in modules}
    instructions = {index.label(m): {i.name: i for i in m.instructions()} for m in modules}
    rows = []
    categories: dict[str, float] = defaultdict(float)
    for (mod, name), s in sorted(index.stats.items(), key=lambda kv: -kv[1].total_ns):
        instr = instructions[mod][name]
        cost = models[mod].cost(instr)
        mean = s.mean_ns * 1e-9
        row = {
            "module": mod, "instruction": name, "computation": s.computation, "opcode": s.opcode,
            "category": s.category, "count": s.count, "executions": s.executions or s.count,
            "total_seconds": s.total_ns * 1e-9,
            # one step on one device: the profile's steps and devices divided out
            "per_step_seconds": s.total_ns * 1e-9 / index.per_step,
            "mean_seconds": mean, "min_seconds": s.min_ns * 1e-9, "max_seconds": s.max_ns * 1e-9,
            "share": index.share(s), "flops": cost.flops, "bytes": cost.padded_bytes,
            "achieved_flops_per_s": cost.flops / mean if mean else 0.0,
            "achieved_bytes_per_s": cost.padded_bytes / mean if mean else 0.0,
            "devices": {d: {"count": n, "total_seconds": s.device_ns.get(d, 0.0) * 1e-9}
                        for d, n in sorted(s.devices.items())},
            "async_count": s.async_count,
        }
        collective = links[mod].get(name)
        if collective is not None:  # its bound is its link time, not its HBM bytes
            row["collective"] = measured(collective, mean, chip)
        if chip is not None:
            bound = max(op_times(models[mod], chip, instr, cost))
            if collective is not None and collective.est_seconds:
                bound = collective.est_seconds
                row["bound"] = row["collective"]["links"]
            row["roofline_seconds"] = bound
            row["gap_seconds"] = mean - bound
        rows.append(row)
        categories[s.category] += s.total_ns * 1e-9
    return {
        "version": 1,
        "trace": profile.path,
        "device_kind": profile.device_kind,
        "device": profile.device,
        "launches": [{"module": m, "program_id": p, "count": c, "host_seconds": t * 1e-9}
                     for (m, p), (c, t) in sorted(profile.launches.items(), key=lambda kv: -kv[1][1])],
        "chip": chip.key if chip else None,
        "steps": index.steps,
        "devices": index.devices,
        "step_seconds": index.step_ns * 1e-9,
        "idle_fraction": index.idle_fraction,
        "instructions": rows,
        "categories": dict(sorted(categories.items(), key=lambda kv: -kv[1])),
        "collectives_by_axis": _axes_with_share(per_axis(rows), chip),
        "ops": (ops := raw_ops(profile)),
        "op_categories": categories_of(ops),
        "unmatched_events": index.unmatched,
        "unseen_instructions": len(index.unseen),
        "kernels": [v.to_dict() for v in index.kernels.values()],
        "programs": {str(k): v for k, v in sorted(profile.programs.items())},
        "warnings": index.warnings + _beats_bound(rows, chip),
    }


def _axes_with_share(axes: dict[str, dict], chip: Chip | None) -> dict[str, dict]:
    peak = link_bandwidth(chip) if chip is not None else None
    for axis in axes.values():
        if peak:
            axis["share_of_peak"] = axis["bytes_per_s"] / peak
    return axes


# A measured op faster than its bound by more than this means the bound (the chip's numbers,
# the cost model) or the join (event to instruction) is wrong.
BEATS_BOUND = 0.10


def _beats_bound(rows: list[dict], chip: Chip | None) -> list[str]:
    fast = [r for r in rows if r.get("roofline_seconds") and r["mean_seconds"] < (1 - BEATS_BOUND) * r["roofline_seconds"]]
    if not fast:
        return []
    worst = min(fast, key=lambda r: r["mean_seconds"] / r["roofline_seconds"])
    return [f"{len(fast)} op(s) ran more than {BEATS_BOUND:.0%} faster than their static bound on "
            f"{chip.name} (e.g. %{worst['instruction']}: {worst['mean_seconds'] * 1e6:.1f} us measured, "
            f"bound {worst['roofline_seconds'] * 1e6:.1f} us): the chip's numbers, the cost model or "
            f"the join is wrong; --chip names the machine the trace was taken on"]


def measured_breakdown(report: dict, modules: list[Module], index: TraceIndex, by: str) -> dict:
    """The measured ops of a profile report grouped `by` scope, layer, source or pass
    (hloscope.cost.aggregate), per step and per device."""
    from hloscope.cost.aggregate import group, loop_bodies
    from hloscope.source import source_of

    by_label = {index.label(m): m for m in modules}
    loops: dict[str, tuple[str, int]] = {}
    for m in modules:
        loops.update(loop_bodies(m))
    rows = []
    per = index.per_step
    for r in report["instructions"]:
        m = by_label.get(r["module"])
        if m is None:
            continue
        instr = m[r["computation"]][r["instruction"]]
        src = source_of(instr, m)
        rows.append({"op_name": src.op_name, "source": src.location, "computation": r["computation"],
                     "instruction": r["instruction"], "seconds": r["total_seconds"] / per,
                     "flops": r["flops"] * r["count"] / per, "bytes": float(r["bytes"]) * r["count"] / per})
    return group(rows, by, loops)
