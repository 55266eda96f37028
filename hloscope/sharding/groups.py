"""Which devices each collective's groups hold: read from replica_groups or
source_target_pairs (or, with neither, every device, or the participants its shapes imply),
their (stride, size) factors and the mesh axes those run over (hloscope.sharding.collectives
reads each group text once)."""

from __future__ import annotations

from hloscope.cost.ops import CostModel
from hloscope.ir import Instruction, Module
from hloscope.ir.opcodes import COLLECTIVES
from hloscope.ir.values import ReplicaGroups
from hloscope.sharding.mesh import Mesh, factor_group
from hloscope.sharding.sizes import result_shape


def wrapped_collective(module: Module, instr: Instruction) -> Instruction:
    """The collective an async-start wraps (its root), else the instruction itself."""
    if instr.opcode == "async-start":
        for name in instr.called_computations:
            root = module.by_name[name].root if name in module.by_name else None
            if root is not None and root.opcode in COLLECTIVES:
                return root
    return instr


def has_pairs(instr: Instruction) -> bool:
    """Whether the instruction names its peers by source_target_pairs (read without
    splitting its attributes)."""
    return instr.may_have("source_target_pairs") and instr.raw_attr("source_target_pairs") is not None


def groups_of(instr: Instruction, devices_hint: int) -> tuple[list[tuple[int, ...]], ReplicaGroups | None]:
    if has_pairs(instr):
        pairs = instr.attr("source_target_pairs") or ()
        return [tuple(p) for p in pairs], None
    rg = instr.attr("replica_groups")
    if rg is None or not rg.groups:
        return [tuple(range(devices_hint))], rg
    return [tuple(g) for g in rg.groups], rg


def implicit_size(instr: Instruction, said: Instruction, op: str, model: CostModel,
                   rg: ReplicaGroups | None) -> int:
    """The participants an all-gather or reduce-scatter with no replica_groups has, from its
    shapes: the gathered (scattered) dimension grows (shrinks) by that factor. `said`: the
    collective whose attributes an async start wraps (the instruction itself otherwise)."""
    if op not in ("all-gather", "reduce-scatter") or has_pairs(said):
        return 0
    if rg is not None and rg.groups:
        return 0
    dims = said.attr("dimensions") or ()
    operands = model.operand_shapes(instr)
    result = result_shape(instr)
    if result.is_tuple and result.elements:  # (several operands: the first's result)
        result = result.elements[0]
    if len(dims) != 1 or not operands or not operands[0].is_array or not result.is_array:
        return 0
    d = dims[0]
    small, big = (operands[0], result) if op == "all-gather" else (result, operands[0])
    if d >= min(small.rank, big.rank) or not small.dims[d] or big.dims[d] % small.dims[d]:
        return 0
    return big.dims[d] // small.dims[d]


def group_facts(module: Module, instr: Instruction, read: tuple, implicit: int, devices: int,
             permute: bool) -> tuple:
    """(groups, their ReplicaGroups, (stride, size) factors of the first, group size) of a
    collective whose groups read as `read` (groups_of) and whose shapes imply `implicit`."""
    groups, rg = read
    if rg is None or not rg.groups:  # (the default: every device; pairs are kept)
        groups, rg = groups_of(wrapped_collective(module, instr), devices)
    if implicit > 1 and implicit != devices and devices % implicit == 0:
        groups = [tuple(range(k, k + implicit)) for k in range(0, devices, implicit)]
    if permute:
        return groups, rg, None, 2
    factors = factor_group(groups[0]) if groups else []
    return groups, rg, factors, len(groups[0]) if groups else 2


def axis_name(mesh: Mesh, factors: list[tuple[int, int]]) -> str:
    """The mesh axes a group's (stride, size) factors run over, "+"-joined ("none": one
    device)."""
    names = []
    for stride, size in factors:
        ax = mesh.axis_for(stride, size)
        names.append(ax.name if ax else f"stride{stride}x{size}")
    return "+".join(names) if names else "none"
