"""Graphviz fusion graphs a person can read.

Nodes are instructions (name, opcode, shape with its layout abbreviated), coloured by
category; fusions are single nodes with a summary of what they fuse (collapsed) or
clusters of their fused computation (expanded); while/conditional/call bodies are
clusters reached by dashed edges. Edges carry operand index and bytes; collective
edges are drawn apart. Overlays: lint findings (red border, codes in the label,
message in the tooltip), measured time from a trace (fill heat by share of step
time), kernel summaries of custom calls (tooltip). Large modules: a neighbourhood
view (--around NAME --depth N), a per-computation view, and a node cap with an
elision node saying what was left out.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

import graphviz

from hloscope.cost.category import category
from hloscope.ir import Computation, Instruction, Module
from hloscope.source import source_of
from hloscope.units import human_bytes

COLOURS = {
    "matmul": "#9ecae1", "matmul fusion": "#9ecae1", "convolution": "#9ecae1",
    "convolution fusion": "#9ecae1", "elementwise": "#e5e5e5", "elementwise fusion": "#e5e5e5",
    "collective": "#fdae6b", "data formatting": "#fbe28f", "custom kernel": "#c9b3e6",
    "control flow": "#c7e9c0", "other": "#ffffff", "input": "#ffffff",
}
_QUIET = frozenset({"get-tuple-element", "tuple", "bitcast", "constant", "parameter"})


@dataclass
class GraphOptions:
    computation: str | None = None
    around: str | None = None
    depth: int = 2
    expand_fusions: bool = False
    max_nodes: int = 200
    findings: list = field(default_factory=list)  # hloscope.rules.base.Finding
    trace: object = None  # hloscope.trace.TraceIndex
    kernels: dict = field(default_factory=dict)  # instruction name -> tooltip text
    costs: dict = field(default_factory=dict)  # instruction name -> seconds (static or measured)
    cost_source: str = "static"  # what `costs` are: "static" (roofline) or "measured"


def short_shape(instr: Instruction) -> str:
    """bf16[128,1024]{T(8,128)(2,1)} S(1): the layout's tiles and memory space only."""
    shape = instr.shape
    if shape.is_tuple:
        inner = ", ".join(str(e) for e in shape.elements[:3])
        more = ", ..." if len(shape.elements) > 3 else ""
        return f"({inner}{more})"
    text = str(shape)
    layout = shape.layout
    if layout is not None and layout.tiles:
        text += "{T" + "".join("(" + ",".join("*" if d < 0 else str(d) for d in t) + ")"
                               for t in layout.tiles) + "}"
    if layout is not None and layout.memory_space:
        text += f" S({layout.memory_space})"
    return text


# Graphviz refuses a quoted string of 16384 characters or more (a tuple of hundreds of
# arrays prints that long): tooltips are cut well below it.
TOOLTIP_CHARS = 2000


def _esc(s: str) -> str:
    if len(s) > TOOLTIP_CHARS:
        s = s[:TOOLTIP_CHARS] + f"... ({len(s) - TOOLTIP_CHARS} more characters)"
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _heat(share: float) -> str:
    """White to red by share of step time."""
    level = max(0.0, min(1.0, share * 4))  # 25% of the step is full red
    g = int(255 - 200 * level)
    return f"#ff{g:02x}{g:02x}"


class _Builder:
    def __init__(self, module: Module, opts: GraphOptions) -> None:
        self.module = module
        self.opts = opts
        self.findings: dict[tuple[str, str], list] = {}
        for f in opts.findings:
            self.findings.setdefault((f.computation, f.instruction), []).append(f)
        self.fused = module.fusion_computations()
        self.g = graphviz.Digraph(name=module.name, graph_attr={
            "rankdir": "TB", "fontname": "Helvetica", "fontsize": "10", "compound": "true",
            "tooltip": module.name},
            node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                       "fontsize": "9"},
            edge_attr={"fontname": "Helvetica", "fontsize": "8", "color": "#555555"})
        self.drawn: set[tuple[str, str]] = set()
        self.elided = 0

    def node_id(self, comp: str, name: str) -> str:
        return f"{comp}/{name}"

    def label(self, instr: Instruction) -> str:
        parts = [f"%{instr.name}", instr.opcode, short_shape(instr)]
        if instr.opcode == "fusion" and not self.opts.expand_fusions:
            root = self._fused_root(instr)
            if root is not None and root.opcode not in _QUIET:
                parts.append(f"root: {root.opcode}")
            ops = Counter(i.opcode for i in self._fused_ops(instr) if i.opcode not in _QUIET)
            if ops:
                parts.append("fuses: " + ", ".join(f"{op}" + (f" x{n}" if n > 1 else "")
                                                   for op, n in ops.most_common(4)))
        change = layout_change(instr, self.module)
        if change:
            parts.append(f"layout {change}")
        waste = padding_waste(instr)
        if waste >= 0.05:
            parts.append(f"padding {waste:.0%}")
        cost = self.opts.costs.get(instr.name)
        if cost and self._stats(instr) is None:
            parts.append(f"{cost * 1e6:.1f} us {self.opts.cost_source}")
        if instr.opcode == "custom-call":
            parts.append(str(instr.attr("custom_call_target", "")))
        codes = self.findings.get((instr.computation, instr.name), [])
        if codes:
            parts.append(" ".join(sorted({f.code for f in codes})))
        stats = self._stats(instr)
        if stats is not None:
            parts.append(f"{stats.mean_ns / 1e3:.1f} us x{stats.count}")
        return "\n".join(parts)

    def _fused_ops(self, instr: Instruction, depth: int = 0) -> list[Instruction]:
        """What a fusion computes, nested fusions flattened."""
        out: list[Instruction] = []
        for c in instr.called_computations:
            for inner in (self.module[c].instructions if c in self.module.by_name else []):
                if inner.opcode == "fusion" and depth < 4:
                    out.extend(self._fused_ops(inner, depth + 1))
                else:
                    out.append(inner)
        return out

    def _fused_root(self, instr: Instruction) -> Instruction | None:
        """The op a fusion computes last (through nested fusions): what it is."""
        for _ in range(8):
            callee = self.module.by_name.get(instr.called_computations[0]) \
                if instr.called_computations else None
            if callee is None or callee.root is None:
                return None
            instr = callee.root
            if instr.opcode != "fusion":
                return instr
        return None

    def _stats(self, instr: Instruction):
        t = self.opts.trace
        return t.get(instr, self.module) if t is not None else None

    def add_node(self, g, instr: Instruction) -> None:
        cat = category(instr, self.module) if instr.opcode not in ("parameter", "constant") else "input"
        src = source_of(instr, self.module)
        where = "".join(f"\n{x}" for x in (src.op_name, src.location) if x)
        attrs = {"fillcolor": COLOURS.get(cat, "#ffffff"), "tooltip": _esc(f"{instr.opcode} {instr.shape.text()}{where}")}
        if instr.opcode in ("parameter", "constant"):
            attrs["shape"] = "ellipse"
        stats = self._stats(instr)
        if stats is not None and self.opts.trace.step_ns:
            attrs["fillcolor"] = _heat(self.opts.trace.share(stats))
        found = self.findings.get((instr.computation, instr.name), [])
        if found:
            attrs.update(color="#d62728", penwidth="3",
                         tooltip=_esc("\n".join(f"{f.code} {f.name}: {f.message}" for f in found) + where))
        if instr.name in self.opts.kernels:
            attrs["tooltip"] = _esc(self.opts.kernels[instr.name])
        attrs["class"] = "finding" if found else cat.replace(" ", "-")
        g.node(self.node_id(instr.computation, instr.name), self.label(instr), **attrs)
        self.drawn.add((instr.computation, instr.name))

    def add_edges(self, g, comp: Computation, names: set[str]) -> None:
        for instr in comp.instructions:
            if instr.name not in names:
                continue
            for index, operand in enumerate(instr.operands):
                if operand not in names or operand not in comp:
                    continue
                src = comp[operand]
                nbytes = src.shape.logical_bytes
                label = human_bytes(nbytes)
                if src.shape.is_tuple and instr.opcode == "get-tuple-element":
                    element = instr.attr("index", None)
                    if isinstance(element, int) and element < len(src.shape.elements):
                        label = f"[{element}] {human_bytes(src.shape.elements[element].logical_bytes)}"
                attrs = {"label": f"{index}: {label}" if len(instr.operands) > 1 else label}
                if category(instr, self.module) == "collective" or category(src, self.module) == "collective":
                    attrs.update(color="#e6550d", penwidth="2", style="bold")
                g.edge(self.node_id(comp.name, operand), self.node_id(comp.name, instr.name), **attrs)

    def add_computation(self, g, comp: Computation, names: set[str] | None = None, depth: int = 0) -> None:
        names = names if names is not None else {i.name for i in comp.instructions}
        for instr in comp.instructions:
            if instr.name not in names:
                continue
            if len(self.drawn) >= self.opts.max_nodes:
                self.elided += 1
                continue
            self.add_node(g, instr)
            if depth < 3:
                self._add_called(g, instr, depth)
        self.add_edges(g, comp, {n for n in names if (comp.name, n) in self.drawn})

    def _add_called(self, g, instr: Instruction, depth: int) -> None:
        expand = instr.opcode == "fusion" and self.opts.expand_fusions
        control = instr.opcode in ("while", "conditional", "call", "async-start")
        if not (expand or control):
            return
        for name in instr.called_computations:
            callee = self.module.by_name.get(name)
            if callee is None:
                continue
            with g.subgraph(name=f"cluster_{name}") as sub:
                sub.attr(label=f"{name} ({instr.opcode} %{instr.name})", style="rounded,dashed",
                         color="#888888", fontsize="9")
                self.add_computation(sub, callee, depth=depth + 1)
            if callee.root is not None and (callee.name, callee.root.name) in self.drawn:
                g.edge(self.node_id(instr.computation, instr.name),
                       self.node_id(callee.name, callee.root.name),
                       style="dashed", color="#2ca02c", lhead=f"cluster_{name}", label="calls")

    def finish(self) -> graphviz.Digraph:
        if self.elided:
            self.g.node("elided", f"... {self.elided} more instruction(s) not drawn\n"
                        f"(--max-nodes {self.opts.max_nodes}; try --around NAME or --computation)",
                        shape="note", fillcolor="#ffffff", style="filled")
        return self.g


def layout_change(instr: Instruction, module: Module) -> str:
    """`{1,0}->{0,1}` when the op's result lies in memory in another dimension order than
    its first operand (same dims; for a transpose, its dims mapped back to the operand's):
    a copy, transpose or fusion that moves data to relayout it."""
    if instr.opcode in _QUIET or instr.shape.is_tuple or not instr.operands:
        return ""
    out = instr.shape.layout
    comp = module.by_name.get(instr.computation)
    src = comp.by_name.get(instr.operands[0]) if comp is not None else None
    if out is None or src is None or src.shape.is_tuple or src.shape.layout is None:
        return ""
    a, b = src.shape.layout.minor_to_major, out.minor_to_major
    if instr.opcode == "transpose":  # in the operand's dimension numbers: what moves in memory
        perm = instr.attr("dimensions", None)
        if not isinstance(perm, (list, tuple)) or len(perm) != len(b):
            return ""
        b = tuple(perm[d] for d in b)
    elif src.shape.dims != instr.shape.dims:
        return ""
    if a == b or len(a) != len(b) or len(a) < 2:
        return ""
    fmt = lambda m: "{" + ",".join(str(d) for d in m) + "}"  # noqa: E731
    return f"{fmt(a)}\u2192{fmt(b)}"


def padding_waste(instr: Instruction) -> float:
    """Share of the result's padded bytes that is padding (0 without tiled layouts)."""
    from hloscope.cost.layout import padding_share

    return 0.0 if instr.opcode in _QUIET else padding_share(instr.shape)


def costliest_region(comp: Computation, costs: dict[str, float], max_nodes: int) -> list[str]:
    """The costliest ops of a computation and their operands and users, costliest first,
    until max_nodes are taken: the region worth looking at in a module too big to draw."""
    ranked = sorted((n for n in costs if n in comp), key=lambda n: -costs[n])
    taken: dict[str, None] = {}
    for name in ranked:
        if len(taken) >= max_nodes:
            break
        for n in neighbourhood(comp, name, 1):
            if len(taken) < max_nodes:
                taken.setdefault(n)
    return list(taken)


def neighbourhood(comp: Computation, center: str, depth: int) -> list[str]:
    """Instructions within `depth` operand/user steps of `center`, nearest first."""
    users = comp.users()
    order: list[str] = []
    seen = {center: 0}
    queue = deque([center])
    while queue:
        name = queue.popleft()
        order.append(name)
        if seen[name] >= depth:
            continue
        instr = comp.by_name.get(name)
        near = list(instr.operands) if instr else []
        near += [u.name for u in users.get(name, ())]
        for n in near:
            if n not in seen and n in comp:
                seen[n] = seen[name] + 1
                queue.append(n)
    return order


def _around(module: Module, opts: GraphOptions) -> tuple[Computation, str, list[str]]:
    """(the computation holding `opts.around`, its name, its neighbourhood nearest first);
    KeyError when no computation holds it."""
    name = opts.around.lstrip("%")
    holders = [c for c in module.computations if name in c]
    if not holders:
        raise KeyError(f"no instruction named %{name}")
    return holders[0], name, neighbourhood(holders[0], name, opts.depth)


def drawn_around(module: Module, opts: GraphOptions) -> set[tuple[str, str]] | None:
    """The (computation, instruction) pairs a drawing around `opts.around` may show: the
    neighbourhood render_graph keeps and everything in what they call (fusions drawn open);
    None when no computation holds it (render_graph says so)."""
    try:
        comp, _, names = _around(module, opts)
    except KeyError:
        return None
    keep = names[: opts.max_nodes]
    out = {(comp.name, n) for n in keep}
    stack = [c for n in keep for c in comp[n].called_computations]
    seen: set[str] = set()
    while stack:
        callee = module.by_name.get(stack.pop())
        if callee is None or callee.name in seen:
            continue
        seen.add(callee.name)
        for instr in callee.instructions:
            out.add((callee.name, instr.name))
            stack.extend(instr.called_computations)
    return out


def render_graph(module: Module, opts: GraphOptions | None = None) -> graphviz.Digraph:
    """The graph of one computation (default: the entry), or of the neighbourhood of
    `opts.around`; returns the graphviz.Digraph (notebooks display it directly)."""
    opts = opts or GraphOptions()
    b = _Builder(module, opts)
    if opts.around:
        comp, name, names = _around(module, opts)
        keep = names[: opts.max_nodes]
        b.elided = len(names) - len(keep)
        b.g.attr(label=f"{module.name}: %{name} and {opts.depth} step(s) around it ({comp.name})",
                 labelloc="t")
        b.add_computation(b.g, comp, set(keep), depth=3 if not opts.expand_fusions else 0)
        b.g.node(b.node_id(comp.name, name), penwidth="3" if (comp.name, name) not in
                 {(f.computation, f.instruction) for f in opts.findings} else "4")
        return b.finish()
    comp_name = opts.computation or (module.entry.name if module.entry else None)
    if comp_name not in module.by_name:
        raise KeyError(f"no computation named {comp_name}")
    comp = module[comp_name]
    if len(comp.instructions) > opts.max_nodes and opts.costs:
        keep = costliest_region(comp, opts.costs, opts.max_nodes)
        b.g.attr(label=f"{module.name}: {comp_name}, its costliest region ({len(keep)} of "
                 f"{len(comp.instructions)} instructions: the ops with the most "
                 f"{opts.cost_source} time and their neighbours)", labelloc="t")
        b.elided = len(comp.instructions) - len(keep)
        b.g.attr(pack="true", packmode="array_u6")  # separate pieces in rows, not one wide line
        b.add_computation(b.g, comp, set(keep), depth=3)
        return b.finish()
    b.g.attr(label=f"{module.name}: {comp_name}", labelloc="t")
    b.add_computation(b.g, comp)
    return b.finish()
