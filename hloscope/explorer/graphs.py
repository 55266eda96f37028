"""An HLO module as Model Explorer graphs (model_explorer.graph_builder classes).

One graph per computation that runs on its own: the entry first, then each while body and
condition, conditional branch, called or async-wrapped computation, reached from the node
that calls it (`subgraphIds`). Fusions are not separate graphs: their fused instructions
sit inside the graph of the computation that holds the fusion, under the fusion's name as
`namespace`, so Model Explorer draws each fusion as a group that opens and closes (nested
fusions nest). Fused parameter N takes its edge from the fusion's operand N; the fusion's
users take theirs from its fused root. Node ids are instruction names (unique in an XLA
module). Attributes: opcode, shape, layout, fusion kind, custom-call target, op_name,
source line; a node's output metadata carries its shape and bytes.
"""

from __future__ import annotations

from hloscope.cost.category import category
from hloscope.ir import Computation, Instruction, Module
from hloscope.source import source_of
from hloscope.units import human_bytes

# Opcodes whose called computations are drawn as graphs of their own (reached by subgraphIds).
_OWN_GRAPH = frozenset({"while", "conditional", "call", "async-start"})


def _kv(key: str, value) -> object:
    from model_explorer import graph_builder as gb

    return gb.KeyValue(key=key, value=str(value))


def _attrs(instr: Instruction, module: Module) -> list:
    shape = instr.shape
    out = [_kv("opcode", instr.opcode), _kv("shape", shape.text(layout=False))]
    layout = shape.layout if not shape.is_tuple else None
    if layout is not None and shape.text() != shape.text(layout=False):
        out.append(_kv("layout", shape.text()[len(shape.text(layout=False)):]))
    kind = instr.attr("kind", None)
    if kind:
        out.append(_kv("fusion_kind", kind))
    target = instr.attr("custom_call_target", None)
    if target:
        out.append(_kv("custom_call_target", target))
    out.append(_kv("category", category(instr, module)))
    src = source_of(instr, module)
    if src.op_name:
        out.append(_kv("op_name", src.op_name))
    if src.location:
        out.append(_kv("source", src.location))
    return out


class _Builder:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.fused = module.fusion_computations()
        self.graphs: list = []
        self.queued: list[str] = []
        self.seen: set[str] = set()
        self.index: dict[str, tuple[str, str]] = {}  # instruction -> (graph id, node id)
        self.graph = ""  # the graph being built

    def root_of_fusion(self, instr: Instruction) -> str:
        """The node a fusion's users read: its fused root (through nested fusions)."""
        for _ in range(16):
            if instr.opcode != "fusion" or not instr.called_computations:
                return instr.name
            callee = self.module.by_name.get(instr.called_computations[0])
            if callee is None or callee.root is None:
                return instr.name
            instr = callee.root
        return instr.name

    def node(self, instr: Instruction, namespace: str, operands: list[str]):
        from model_explorer import graph_builder as gb

        node = gb.GraphNode(id=instr.name, label=instr.opcode, namespace=namespace,
                            attrs=_attrs(instr, self.module))
        for k, src in enumerate(operands):
            node.incomingEdges.append(gb.IncomingEdge(sourceNodeId=src, targetNodeInputId=str(k)))
        shape = instr.shape
        node.outputsMetadata.append(gb.MetadataItem(id="0", attrs=[
            _kv("tensor_name", instr.name), _kv("shape", shape.text()),
            _kv("bytes", human_bytes(shape.logical_bytes))]))
        if instr.opcode in _OWN_GRAPH:
            for callee in instr.called_computations:
                if callee in self.module.by_name and callee not in self.fused:
                    node.subgraphIds.append(callee)
                    self.queue(callee)
        return node

    def queue(self, name: str) -> None:
        if name not in self.seen:
            self.seen.add(name)
            self.queued.append(name)

    def add_computation(self, comp: Computation, nodes: list, namespace: str,
                        params: dict[int, str] | None = None) -> None:
        """Nodes of `comp` in `namespace`; inside a fusion, `params` maps parameter numbers
        to the outer nodes that feed them."""
        for instr in comp.instructions:
            operands = [self.source_of(comp, o) for o in instr.operands]
            if instr.opcode == "parameter" and params is not None:
                number = _param_number(instr)
                if number in params:
                    operands = [params[number]]
            if instr.opcode == "fusion" and instr.called_computations and \
                    instr.called_computations[0] in self.module.by_name:
                inner = self.module.by_name[instr.called_computations[0]]
                group = f"{namespace}/{instr.name}" if namespace else instr.name
                self.add_computation(inner, nodes, group, dict(enumerate(operands)))
                self.index[instr.name] = (self.graph, self.root_of_fusion(instr))
                continue
            nodes.append(self.node(instr, namespace, operands))
            self.index[instr.name] = (self.graph, instr.name)

    def source_of(self, comp: Computation, operand: str) -> str:
        producer = comp.by_name.get(operand)
        return self.root_of_fusion(producer) if producer is not None else operand

    def build(self) -> list:
        from model_explorer import graph_builder as gb

        entry = self.module.entry or self.module.computations[-1]
        self.queue(entry.name)
        while self.queued:
            name = self.queued.pop(0)
            comp = self.module.by_name[name]
            self.graph = name
            nodes: list = []
            self.add_computation(comp, nodes, "")
            self.graphs.append(gb.Graph(id=name, nodes=nodes))
        return self.graphs


def _param_number(instr: Instruction) -> int | None:
    try:
        return int(instr.literal) if instr.literal is not None else None
    except (TypeError, ValueError):
        return None


def module_graphs(module: Module) -> list:
    """The module's Model Explorer graphs, entry first."""
    return built(module)[0]


def built(module: Module) -> tuple[list, dict[str, tuple[str, str]]]:
    """(the module's graphs, instruction name -> (graph id, node id) of the node that shows
    it: itself, or for a fusion its fused root), from one walk."""
    b = _Builder(module)
    return b.build(), b.index


def explorer_graphs(modules: list[Module]) -> dict:
    """ModelExplorerGraphs for an adapter's convert(): one collection per module when a
    file holds several, else the graphs."""
    from model_explorer import graph_builder as gb

    if len(modules) == 1:
        return {"graphs": module_graphs(modules[0])}
    return {"graphCollections": [gb.GraphCollection(label=m.name, graphs=module_graphs(m))
                                 for m in modules]}
