"""Per-node numbers for Model Explorer's node data overlays (model_explorer.node_data_builder):
finding severity, static (roofline) time, measured time from a profile, padding waste of
the node's result, and bytes the node holds live at the static memory peak. Keys are node
ids, which are instruction names (hloscope.explorer.graphs), per graph id (computation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hloscope.ir import Module

SEVERITY = {"info": 1, "warning": 2, "error": 3}
# Colour stops, light to dark, as Model Explorer's gradients take them.
_RED = [{"stop": 0, "bgColor": "#fff5f0"}, {"stop": 1, "bgColor": "#cb181d"}]
_BLUE = [{"stop": 0, "bgColor": "#f7fbff"}, {"stop": 1, "bgColor": "#08519c"}]


@dataclass
class Overlay:
    name: str  # file stem and the name Model Explorer shows
    description: str
    values: dict[str, dict[str, float]] = field(default_factory=dict)  # graph id -> node -> value
    gradient: list = field(default_factory=lambda: list(_BLUE))

    def node_data(self):
        """A model_explorer.node_data_builder.ModelNodeData for every graph."""
        from model_explorer import node_data_builder as ndb

        graphs = {}
        for graph_id, values in self.values.items():
            graphs[graph_id] = ndb.GraphNodeData(
                results={node: ndb.NodeDataResult(value=v) for node, v in values.items()},
                gradient=[ndb.GradientItem(stop=g["stop"], bgColor=g["bgColor"]) for g in self.gradient])
        return ndb.ModelNodeData(graphsData=graphs)


def overlays(module: Module, chip_name: str | None = None, findings: list | None = None,
             trace=None, where: dict[str, tuple[str, str]] | None = None) -> list[Overlay]:
    """Every overlay of the module; `findings` its lint findings, `trace` a joined
    TraceIndex (measured time is left out without one); `where` the graphs' node of each
    instruction (hloscope.explorer.graphs.built) when the caller has built them."""
    from hloscope.cost.resolve import chip_for
    from hloscope.cost.layout import padding_share
    from hloscope.cost.liveness import memory
    from hloscope.cost.roofline import roofline
    from hloscope.mlir.cost import body_costs

    if where is None:
        from hloscope.explorer.graphs import built

        where = built(module)[1]  # instruction -> (graph, node showing it)
    spec, _ = chip_for(module, chip_name)

    def put(o: Overlay, name: str, value: float, worst: bool = False) -> None:
        graph, node = where.get(name, (None, None))
        if graph is None or not value:
            return
        values = o.values.setdefault(graph, {})
        values[node] = max(value, values.get(node, 0)) if worst else value

    severity = Overlay("severity", "worst lint finding: 1 info, 2 warning, 3 error", gradient=list(_RED))
    for f in findings or []:
        if f.module == module.name:
            put(severity, f.instruction, SEVERITY.get(str(f.severity), 0), worst=True)
    static = Overlay("static_time_us", f"roofline time on {spec.name} over the step (us)")
    for r in roofline(module, spec, kernel_costs=body_costs(module)).rows:
        put(static, r.instruction, round(r.t_bound * r.times * 1e6, 3))
    padding = Overlay("padding_waste_pct", "share of the result's padded bytes that is padding (%)",
                      gradient=list(_RED))
    for comp in module.computations:
        for instr in comp.instructions:
            put(padding, instr.name, round(100.0 * padding_share(instr.shape), 1))
    live = Overlay("bytes_live_at_peak", "bytes of the node's result live at the static HBM peak")
    report = memory(module)
    for b in report.peak_live:
        if not b["shape"].startswith("("):
            put(live, b["instruction"], b["bytes"])
    out = [severity, static, padding, live]
    if trace is not None:
        measured = Overlay("measured_time_us", "measured time over the profile (us)")
        for (mod, name), s in trace.stats.items():
            if mod == module.name:
                put(measured, name, round(s.total_ns / 1e3, 3))
        out.append(measured)
    return out
