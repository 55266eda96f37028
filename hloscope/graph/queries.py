"""Questions asked of the instruction graph."""

from __future__ import annotations

import networkx as nx

from hloscope.ir import Instruction, Module


def users(g: nx.MultiDiGraph, node: tuple[str, str]) -> list[tuple[str, str]]:
    """Instructions that take `node` as an operand."""
    return [v for _, v, k in g.out_edges(node, data="kind") if k == "operand"]


def called_instructions(module: Module, instr: Instruction) -> list[Instruction]:
    """Every instruction inside the computations `instr` calls, transitively."""
    seen: set[str] = set()
    out: list[Instruction] = []
    stack = list(instr.called_computations)
    while stack:
        name = stack.pop()
        if name in seen or name not in module.by_name:
            continue
        seen.add(name)
        for inner in module.by_name[name].instructions:
            out.append(inner)
            stack.extend(inner.called_computations)
    return out


def neighbourhood(g: nx.MultiDiGraph, node: tuple[str, str], depth: int) -> set[tuple[str, str]]:
    """Nodes within `depth` operand/user steps of `node` (XProf's 'View in Graph')."""
    seen = {node}
    frontier = {node}
    for _ in range(depth):
        nxt: set[tuple[str, str]] = set()
        for n in frontier:
            nxt.update(g.predecessors(n))
            nxt.update(g.successors(n))
        frontier = nxt - seen
        seen |= frontier
    return seen
