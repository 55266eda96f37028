"""Build the instruction graph of a module.

A MultiDiGraph (an instruction may use one operand twice). Nodes are
`(computation, instruction)` pairs carrying `instr`, `opcode`,
`shape` and `computation`. Edges carry `kind`:
  operand  producer -> user within a computation (`index`: operand position)
  calls    caller -> root of each called computation (`computation`: its name)
  param    caller's operand i -> parameter(i) of a called fusion/call body
  control  control predecessor -> instruction
"""

from __future__ import annotations

import networkx as nx

from hloscope.ir import Instruction, Module

# Opcodes whose called computation receives the caller's operands as parameters.
_PASSES_OPERANDS = frozenset({"fusion", "call", "async-start", "custom-call", "map"})


def node_id(instr: Instruction) -> tuple[str, str]:
    return (instr.computation, instr.name)


def build_graph(module: Module) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph(module=module.name, entry=module.entry.name if module.entry else None)
    for comp in module.computations:
        for instr in comp.instructions:
            g.add_node(node_id(instr), instr=instr, opcode=instr.opcode,
                       shape=str(instr.shape), computation=comp.name)
    for comp in module.computations:
        for instr in comp.instructions:
            me = node_id(instr)
            for index, operand in enumerate(instr.operands):
                if operand in comp:
                    g.add_edge((comp.name, operand), me, kind="operand", index=index)
            for pred in instr.control_predecessors:
                if pred in comp:
                    g.add_edge((comp.name, pred), me, kind="control")
            for called in instr.called_computations:
                callee = module.by_name.get(called)
                if callee is None or callee.root is None:
                    continue
                g.add_edge(me, node_id(callee.root), kind="calls", computation=called)
                for index, param_no in _bindings(instr, called):
                    params = {p.parameter_number: p for p in callee.parameters}
                    operand = instr.operands[index]
                    if param_no in params and operand in comp:
                        g.add_edge((comp.name, operand), node_id(params[param_no]),
                                   kind="param", index=index)
    return g


def _bindings(instr: Instruction, called: str) -> list[tuple[int, int]]:
    """(operand index, parameter number) pairs passed from instr into `called`."""
    if instr.opcode in _PASSES_OPERANDS:
        return [(i, i) for i in range(len(instr.operands))]
    if instr.opcode == "while" and instr.operands:
        return [(0, 0)]
    if instr.opcode == "conditional":
        branches = instr.called_computations
        # branch i receives operand i + 1 as its only parameter
        return [(branches.index(called) + 1, 0)] if len(instr.operands) > len(branches) else []
    return []
