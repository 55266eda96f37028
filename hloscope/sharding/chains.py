"""Async collective chains found by data flow: XLA's TPU async collective fusion clones one
collective into a start fusion, continuation fusions and a done fusion; each reads the async
state the one before returns (through get-tuple-element). Channel ids are not used: clones of
different collectives may share one."""

from __future__ import annotations

from hloscope.ir import Computation, Instruction, Module


def fused_chains(module: Module, fused: list[tuple[Computation, Instruction, str]]
                  ) -> list[tuple[Computation, list[Instruction], list[Instruction], str]]:
    """Collectives found inside fusion computations, as chains of the fusions that call them:
    (caller computation, the fusions in program order, the cloned collectives, opcode).

    A chain is found by data flow: a continuation or done fusion reads the async state its
    start (or the continuation before it) returns, through get-tuple-element; each fusion
    holding a clone continues the clone-holding fusion whose tuple it reads most. Channel ids
    are not used: XLA may give the clones of different collectives one channel id."""
    if not fused:  # (the walk below reads every instruction of the module)
        return []
    callers: dict[str, list[tuple[Computation, Instruction]]] = {}
    for comp in module.computations:
        for instr in comp.instructions:
            if instr.opcode == "fusion":
                for name in instr.called_computations:
                    callers.setdefault(name, []).append((comp, instr))
    # (caller, fusion name) -> (caller, fusion, its clones, opcode)
    holders: dict[tuple[str, str], tuple[Computation, Instruction, list[Instruction], str]] = {}
    for comp, instr, op in fused:
        for caller_comp, fusion in callers.get(comp.name, []):
            holder = holders.setdefault((caller_comp.name, fusion.name), (caller_comp, fusion, [], op))
            holder[2].append(instr)
    parent: dict[tuple[str, str], tuple[str, str]] = {}
    for key, (caller_comp, fusion, _, op) in holders.items():
        reads: dict[str, int] = {}
        for name in fusion.operands:
            source = _tuple_source(caller_comp, name)
            if source is not None and (caller_comp.name, source) in holders \
                    and holders[(caller_comp.name, source)][3] == op and source != fusion.name:
                reads[source] = reads.get(source, 0) + 1
        if reads:
            parent[key] = (caller_comp.name, max(reads, key=reads.__getitem__))
    chains: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for key in holders:
        root, seen = key, {key}
        while root in parent and parent[root] not in seen:
            root = parent[root]
            seen.add(root)
        chains.setdefault(root, []).append(key)
    out = []
    for members in chains.values():
        caller_comp, _, _, op = holders[members[0]]
        order = {i.name: k for k, i in enumerate(caller_comp.instructions)}
        fusions = sorted((holders[k][1] for k in members), key=lambda f: order.get(f.name, 0))
        clones = [c for f in fusions for c in holders[(caller_comp.name, f.name)][2]]
        out.append((caller_comp, fusions, clones, op))
    return out


def _tuple_source(comp: Computation, name: str) -> str | None:
    """The instruction whose tuple an operand is an element of (through get-tuple-element,
    and bitcasts of it), or None when the operand is not read out of a tuple."""
    instr = comp.by_name.get(name)
    through_tuple = False
    for _ in range(8):
        if instr is None or instr.opcode not in ("get-tuple-element", "bitcast") or not instr.operands:
            break
        through_tuple |= instr.opcode == "get-tuple-element"
        instr = comp.by_name.get(instr.operands[0])
    return instr.name if through_tuple and instr is not None else None
