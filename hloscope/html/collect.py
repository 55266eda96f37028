"""What the HTML report shows, gathered per module as plain data (numbers, strings, and
the SVG text drawn by hloscope.render): the header figures, finding groups, roofline
points, top ops, the memory timeline with the peak's live buffers, collectives, kernels,
and the Graphviz neighbourhoods of the worst finding groups."""

from __future__ import annotations

from dataclasses import dataclass, field

from hloscope.ir import Module
from hloscope.source import Source

ROOFLINE_POINTS = 1500  # the costliest ops drawn in the scatter (the rest are counted)
TOP_OPS = 40
OCCURRENCES = 200  # occurrences listed per finding group (the rest are counted)
GRAPHS = 3  # finding groups whose neighbourhood is drawn
GRAPH_NODES = 40


@dataclass
class ModulePage:
    file: str
    name: str
    stage: dict
    chip: dict
    header: dict
    groups: list[dict] = field(default_factory=list)
    roofline_svg: str = ""
    roofline_note: str = ""
    top_ops: list[dict] = field(default_factory=list)
    top_ops_measured: bool = False
    memory: dict = field(default_factory=dict)
    timeline_svg: str = ""
    collectives: list[dict] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    graphs: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    measured_seconds: float | None = None  # linked op time per step and device, when profiled
    measured_steps: tuple[int, int] = (0, 0)  # (steps, devices) the profile held
    measured_mfu: float | None = None  # the module's FLOPs over the measured step
    compare: dict | None = None  # report --against: hloscope.diff's record for this module


def _groups(findings: list) -> list[dict]:
    """Findings of one pattern (equal fingerprints) as one group, costliest first."""
    groups: dict[str, list] = {}
    for f in findings:
        groups.setdefault(f.fingerprint or f"{f.code}:{f.instruction}", []).append(f)
    out = []
    for key, members in groups.items():
        first = members[0]
        src = first.source or {}
        where = Source(src.get("op_name", ""), src.get("file", ""), src.get("line", 0),
                       src.get("function", "")).location
        out.append({
            "id": key[:16], "code": first.code, "name": first.name,
            "severity": str(first.severity), "severity_rank": int(first.severity),
            "message": first.message, "count": len(members), "help": first.help,
            "cost": sum(m.sort_cost for m in members), "source": where,
            "op_name": src.get("op_name", ""),
            "occurrences": [{"instruction": m.instruction, "computation": m.computation,
                             "line": m.line, "column": m.column} for m in members[:OCCURRENCES]],
            "more": max(0, len(members) - OCCURRENCES),
        })
    out.sort(key=lambda g: (-g["severity_rank"], -g["cost"], -g["count"], g["code"]))
    return out


def _measured(trace, module: Module) -> dict[str, object]:
    if trace is None:
        return {}
    label = trace.label(module)
    return {name: s for (mod, name), s in trace.stats.items() if mod == label}



def _category(module: Module, row) -> str:
    from hloscope.cost.category import category

    comp = module.by_name.get(row.computation)
    instr = comp.by_name.get(row.instruction) if comp is not None else None
    return category(instr, module) if instr is not None else "other"


def _roofline(page: ModulePage, module: Module, report, spec, measured: dict, per_step: float = 1.0) -> None:
    from hloscope.render.plots import Point, point_label, roofline_svg

    module_rows = [r for r in report.rows if r.t_bound > 0 or r.instruction in measured]

    def seconds(r) -> float:  # (per step: a profile's time over its steps and devices)
        s = measured.get(r.instruction)
        return s.total_ns * 1e-9 / per_step if s is not None else r.t_bound * r.times

    rows = sorted(module_rows, key=seconds, reverse=True)
    points = []
    for r in rows[:ROOFLINE_POINTS]:
        t = seconds(r)
        per_run = t / max(r.times, 1) if r.instruction not in measured else \
            measured[r.instruction].mean_ns * 1e-9
        if r.flops <= 0 or r.hbm_bytes <= 0 or per_run <= 0:
            continue  # (intensity against HBM traffic: the roof the plot draws)
        points.append(Point(r.flops / r.hbm_bytes, r.flops / per_run, t,
                            point_label(r.instruction, r.opcode, r.flops, r.bytes, t),
                            category=_category(module, r)))
    no_flops = sum(1 for r in rows if r.flops <= 0)
    on_chip = sum(1 for r in rows if r.flops > 0 and r.hbm_bytes <= 0)
    page.roofline_note = (f"{len(points)} ops drawn (of {len(rows)} with a time); "
                          f"{no_flops} move data without FLOPs and {on_chip} touch no HBM, "
                          f"so they sit off the log axes")
    if len(rows) > ROOFLINE_POINTS:
        page.roofline_note += f"; only the {ROOFLINE_POINTS} costliest are drawn"
    page.roofline_svg = roofline_svg(points, spec.peak_flops("bf16"), spec.hbm_bandwidth,
                                     spec.name, measured=bool(measured))
    page.top_ops_measured = bool(measured)
    for r in rows[:TOP_OPS]:
        s = measured.get(r.instruction)
        page.top_ops.append({
            "instruction": r.instruction, "computation": r.computation, "opcode": r.opcode,
            "seconds": seconds(r), "bound_seconds": r.t_bound * r.times, "bound": r.bound,
            "times": s.count / per_step if s is not None else r.times, "flops": r.flops * r.times,
            "bytes": r.bytes * r.times, "intensity": r.intensity,
            "source": r.source, "op_name": r.op_name,
        })


def _memory(page: ModulePage, module: Module, capacity: int | None) -> None:
    from hloscope.cost.liveness import memory
    from hloscope.render.plots import timeline_svg

    m = memory(module)
    page.memory = m.to_dict()
    page.memory.pop("timeline", None)
    page.memory["note"] = ""
    if m.scheduled and m.temp_peak_bytes > 0:
        page.timeline_svg = timeline_svg(m.timeline, capacity, m.peak_step)
    elif m.scheduled:
        page.memory["note"] = ("no HBM temporaries: every buffer the program uses is an argument or "
                               "an output (or lives on chip), so there is no timeline to draw")


def _graphs(page: ModulePage, module: Module, findings: list, groups: list[dict]) -> None:
    """The Graphviz neighbourhood of each of the worst finding groups' first occurrence."""
    import graphviz

    from hloscope.render.graphviz import GraphOptions, render_graph

    drawn: set[str] = set()
    for g in groups:
        if len(page.graphs) >= GRAPHS:
            break
        first = g["occurrences"][0]
        if first["instruction"] in drawn:
            continue  # another group at the same place: one drawing shows both codes
        drawn.add(first["instruction"])
        opts = GraphOptions(around=first["instruction"], depth=1, max_nodes=GRAPH_NODES,
                            findings=findings)
        try:
            svg = render_graph(module, opts).pipe(format="svg").decode("utf-8")
        except graphviz.ExecutableNotFound:
            page.notes.append("Graphviz's dot is not installed: neighbourhood graphs left out")
            return
        except KeyError:
            continue
        page.graphs.append({"code": g["code"], "instruction": first["instruction"],
                            "group": g["id"], "svg": _inline_svg(svg)})


def _inline_svg(svg: str) -> str:
    """Graphviz's SVG without its XML prolog and doctype, to sit inside the page."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def collect(module: Module, file: str, findings: list, chip_name: str | None,
            trace=None, lint_notes: list[str] | None = None) -> ModulePage:
    """Every section of one module's page."""
    from hloscope.cost.chips import platform_of
    from hloscope.cost.resolve import chip_for
    from hloscope.cost.roofline import roofline
    from hloscope.mlir.cost import body_costs
    from hloscope.sharding.step import estimate
    from hloscope.stage import detect_stage

    spec, chip_note = chip_for(module, chip_name)
    stage = detect_stage(module)
    report = roofline(module, spec, kernel_costs=body_costs(module))
    step = estimate(module, spec, report)
    measured = _measured(trace, module)
    mine = [f for f in findings if f.module == module.name]
    page = ModulePage(
        file=file, name=module.name, stage=stage.to_dict(),
        chip={"key": spec.key, "name": spec.name, "note": chip_note,
              "capacity": None if platform_of(module) == "cpu" else spec.hbm_bytes},
        header={"instructions": sum(len(c.instructions) for c in module.computations),
                "computations": len(module.computations), "step": step.to_dict(),
                "flops": report.totals.flops, "findings": len(mine)})
    if chip_note:
        page.notes.append(chip_note)
    if not stage.optimized:
        page.notes.append("a pre-optimization module: nothing is fused or scheduled yet, so the "
                          "step estimate, MFU and memory peak are indicative only; report on the "
                          "after_optimizations dump")
    page.notes.extend(lint_notes or [])
    per_step = trace.per_step if measured else 1.0
    if measured:  # (one step on one device: the profile's op time over its steps and devices)
        page.measured_seconds = sum(s.total_ns for s in measured.values()) * 1e-9 / per_step
        page.measured_steps = (getattr(trace, "steps", 1), getattr(trace, "devices", 1))
        if page.measured_seconds > 0 and spec.peak_flops("bf16"):
            page.measured_mfu = report.totals.flops / (page.measured_seconds * spec.peak_flops("bf16"))
    page.groups = _groups(mine)
    _roofline(page, module, report, spec, measured, per_step)
    _memory(page, module, page.chip["capacity"])
    page.header["hbm_bytes"] = page.memory.get("hbm_bytes")
    page.collectives = [c.to_dict() for c in step.collectives]
    if "custom-call" in module.opcodes():
        from hloscope.mlir.kernels import kernels

        views = getattr(trace, "kernels", {}) if trace is not None else {}
        for k in kernels(module):
            if k.target == "tpu_custom_call" or k.summary is not None:
                view = views.get((module.name, k.instruction.name))
                page.kernels.append(dict(k.to_dict(with_mlir=False),
                                         measured=view.to_dict() if view is not None else None))
    _graphs(page, module, mine, page.groups)
    return page
