"""What a fusion moves: of each operand only the slices its fused computation takes, of
each output only the update an in-place dynamic-update-slice writes (hloscope.cost.ops)."""

from __future__ import annotations

from hloscope.cost.flops import SLICING
from hloscope.ir import Computation, Instruction, Module, Shape


def param_reads(module: Module, comp: Computation, param: str, depth: int = 0) -> list[Shape] | None:
    """What a fused computation reads of one parameter: the slices taken of it,
    [] when it is only updated in place, None when it reads all of it."""
    uses = [(u, k) for u in comp.instructions for k, o in enumerate(u.operands) if o == param]
    if not uses or depth > 8:
        return None
    out: list[Shape] = []
    for u, k in uses:
        if u.opcode in SLICING and k == 0:
            out.append(u.shape)
        elif u.opcode == "dynamic-update-slice" and k == 0:
            continue
        elif u.opcode == "fusion" and u.called_computations:
            inner = module.by_name.get(u.called_computations[0])
            inner_param = next((p for p in inner.parameters if p.parameter_number == k),
                               None) if inner else None
            sub = param_reads(module, inner, inner_param.name, depth + 1) if inner_param else None
            if sub is None:
                return None
            out.extend(sub)
        else:
            return None
    return out


def fusion_traffic(module: Module, instr: Instruction, shapes: list[Shape]) -> tuple[list[Shape], list[Shape]]:
    """(shapes read, shapes written) by a fusion given its operand shapes: of each operand
    only what its fused slices take, of each output only the update an in-place
    dynamic-update-slice writes."""
    (name,) = instr.called_computations[:1] or [None]
    if name is None or name not in module.by_name:
        return shapes, [instr.shape]
    fused = module[name]
    reads: list[Shape] = []
    params = {p.parameter_number: p for p in fused.parameters}
    for index, shape in enumerate(shapes):
        p = params.get(index)
        part = param_reads(module, fused, p.name) if p is not None else None
        reads.extend([shape] if part is None else part)
    root = fused.root
    written = [instr.shape]
    if root is not None and root.opcode == "dynamic-update-slice" and len(root.operands) > 1:
        written = [fused[root.operands[1]].shape]
    elif root is not None and root.opcode == "tuple" and instr.shape.is_tuple:
        # a multi-output fusion: each output updated in place writes only its update
        written = []
        for k, name in enumerate(root.operands):
            out = fused.by_name.get(name)
            if out is not None and out.opcode == "dynamic-update-slice" and len(out.operands) > 1:
                written.append(fused[out.operands[1]].shape)
            elif k < len(instr.shape.elements):
                written.append(instr.shape.elements[k])
    return reads, written
