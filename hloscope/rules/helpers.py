"""What several rules share: layout keys, copy and matmul facts, the kernel and trace
rule bases, byte and time formatting."""

from __future__ import annotations

from collections.abc import Iterator
from math import prod

from hloscope.cost.layout import sublanes
from hloscope.ir import Instruction, Shape
from hloscope.ir.shape import COMBINE_DIM, per_shape
from hloscope.rules.base import MATMUL, ModuleRule, RuleContext
from hloscope.stage import AFTER
from hloscope.units import human_bytes, human_seconds

DEFAULT_SCOPED_VMEM = 16 << 20  # Mosaic's default scoped VMEM on v4/v5e/v5p


@per_shape
def layout_key(shape: Shape) -> tuple:
    """What decides the physical arrangement of an array: order of non-trivial
    dims, tiles, element size (size-1 dims can move freely)."""
    layout = shape.layout
    order = physical_dims_order(shape)
    if layout is None:
        return (order, (), 0)
    return (order, layout.tiles, layout.element_size_bits)


def physical_dims_order(shape: Shape) -> tuple[int, ...]:
    """Logical dim indices in major-to-minor order, size-1 dims dropped."""
    if shape.layout is None or not shape.layout.minor_to_major:
        order = tuple(range(shape.rank))
    else:
        order = tuple(reversed(shape.layout.minor_to_major))
    return tuple(d for d in order if shape.dims[d] != 1)


def memory_space(shape: Shape) -> int:
    return shape.layout.memory_space if shape.layout is not None else 0


def tiles(shape: Shape) -> tuple:
    return shape.layout.tiles if shape.layout is not None else ()


def sharding_annotation(instr: Instruction) -> bool:
    """A copy that is jax.lax.with_sharding_constraint (SPMD partitioning prints it as a copy
    named sharding_constraint.N), not a copy XLA keeps."""
    if instr.name.startswith("sharding_constraint"):
        return True
    meta = instr.raw_attr("metadata") if instr.may_have("metadata") else None
    return meta is not None and "sharding_constraint" in meta


def copy_io(instr: Instruction, ctx: RuleContext) -> tuple[Shape, Shape] | None:
    """(source, destination) array shapes of a copy or copy-start."""
    src = ctx.operand(instr, 0).shape  # (one operand: the parser holds both ops to that)
    dst = instr.shape
    if instr.opcode == "copy-start" and dst.elements:  # (destination, source, context)
        dst = dst.elements[0]
    return (src, dst) if src.is_array and dst.is_array else None


def loop_trips(instr: Instruction, ctx: RuleContext) -> int | None:
    """Trip count when the instruction sits in a while body (0: the loop states none);
    None outside loops."""
    return ctx.loop_trips.get(instr.computation)


def moved_cost(ctx: RuleContext, moved: int, trips: int | None,
               instr: Instruction | None = None) -> dict[str, float]:
    """Bytes moved (per loop trip) as a finding's cost: bytes, and seconds on the chip: the
    TPU compiler's own estimate for the op (its estimated_cycles at the chip's clock) where
    it printed one, else the bytes over HBM bandwidth."""
    from hloscope.cost.roofline import estimated_cycles

    times = trips or 1
    cost: dict[str, float] = {"bytes_wasted": float(moved * times)}
    if ctx.chip is not None:
        cost["est_seconds"] = moved * times / ctx.chip.hbm_bandwidth
        cycles = estimated_cycles(instr) if instr is not None and ctx.chip.clock_hz else None
        if cycles:
            cost["xla_est_seconds"] = cycles * times / ctx.chip.clock_hz
            cost["est_seconds"] = cost["xla_est_seconds"]
    return cost


_DOT_DIMS = ("lhs_contracting_dims", "lhs_batch_dims", "rhs_contracting_dims", "rhs_batch_dims")


def matmul_dims(instr: Instruction, ctx: RuleContext) -> dict[str, int] | None:
    """M, K, N (and batch) of a dot or a 1x1-window convolution."""
    shapes = ctx.model.operand_shapes(instr)
    if len(shapes) < 2:
        return None
    lhs, rhs = shapes[0], shapes[1]
    if instr.opcode == "dot":
        lc, lb, rc, rb = instr.attrs_of(_DOT_DIMS, ())
        m = prod(d for i, d in enumerate(lhs.dims) if i not in lc and i not in lb)
        n = prod(d for i, d in enumerate(rhs.dims) if i not in rc and i not in rb)
        k = prod(lhs.dims[i] for i in lc)
        return {"M": m, "K": k, "N": n, "batch": prod(lhs.dims[i] for i in lb)}
    labels = instr.attr("dim_labels")
    if not labels:
        return None
    lhs_l, rest = labels.split("_")
    rhs_l, out_l = rest.split("->")
    k = rhs.dims[rhs_l.index("i")]
    n = rhs.dims[rhs_l.index("o")]
    m = prod(d for i, d in enumerate(instr.shape.dims) if out_l[i] != "f")
    return {"M": m, "K": k, "N": n, "batch": 1}


def contains_matmul(instr: Instruction, ctx: RuleContext) -> bool:
    """A dot or convolution, or a fusion whose computation holds one."""
    if instr.opcode in MATMUL:
        return True
    if instr.opcode == "fusion":  # (its calls as kept: asked of every instruction by H004)
        return not ctx.matmul_computations.isdisjoint(instr.calls())
    return False


def hbm_capacity(ctx: RuleContext) -> int:
    """The chip's HBM bytes (the assumed chip's when none is known; a v5e's 16 GiB)."""
    chip = ctx.chip or ctx.assumed_chip
    return chip.hbm_bytes if chip is not None and chip.hbm_bytes else 16 << 30


def mxu_size(ctx: RuleContext) -> int:
    if ctx.chip is not None and ctx.chip.mxu:
        return ctx.chip.mxu[0]
    return 128


def collective_instruction(ctx: RuleContext, c) -> Instruction:
    return ctx.module[c.computation][c.instruction]


def ici_time(c) -> str:
    """", ~5.83 us on ICI" (NVLink, Infinity Fabric or the network on a GPU module)."""
    word = getattr(c, "links", "") or "the links"
    return f", ~{human_seconds(c.est_seconds)} on {word}" if c.est_seconds else ""


def matmul_unit(ctx: RuleContext) -> str:
    """What runs matmuls on the module's platform, in words."""
    return {"tpu": "the MXU", "gpu": "the tensor cores"}.get(ctx.platform, "the matrix units")


class KernelRule(ModuleRule):
    """A rule over the module's decoded Pallas/Mosaic kernels."""

    def each(self, ctx: RuleContext) -> Iterator[tuple]:
        for k in ctx.kernels:
            yield k, k.summary


class TraceRule(ModuleRule):
    """A rule over measured time: needs `lint --trace`, skipped with a note without one."""

    requires = frozenset({"trace"})
    stages = frozenset({AFTER})  # a profile times the compiled program

    def measured(self, ctx: RuleContext) -> Iterator[tuple]:
        """(instruction, stats) for this module's instructions seen in the trace."""
        for instr in ctx.module.instructions():
            s = ctx.trace.get(instr, ctx.module)
            if s is not None:
                yield instr, s

    def kernel_views(self, ctx: RuleContext) -> Iterator[tuple]:
        """(instruction, KernelView) for this module's measured TPU kernels (custom calls)."""
        views = getattr(ctx.trace, "kernels", {})
        for instr in ctx.module.instructions():
            view = views.get((ctx.module.name, instr.name))
            if view is not None and view.runs:
                yield instr, view


def tiled_dims(shape: Shape) -> list[tuple[int, int]]:
    """(logical dim, tile extent) of each dimension the first tile level covers, minor last."""
    layout = shape.layout
    if layout is None or not layout.tiles or not layout.minor_to_major:
        return []
    tile = layout.tiles[0]
    covered = list(reversed(layout.minor_to_major[:len(tile)]))  # major to minor
    return [(d, t) for d, t in zip(covered, tile[len(tile) - len(covered):]) if t != COMBINE_DIM]


def partial_dims(target: Shape, update: Shape) -> list[tuple[int, int, int]]:
    """(dim, update extent, tile extent) where the update covers part of every tile it meets:
    fewer elements than the dimension holds, and not a whole number of tiles."""
    if target.rank != update.rank:
        return []
    return [(d, update.dims[d], t) for d, t in tiled_dims(target)
            if t > 1 and update.dims[d] < target.dims[d] and update.dims[d] % t]


def touched_tile_bytes(target: Shape, update: Shape) -> int:
    """Bytes of the whole tiles an update of this shape meets: each is read and written whole."""
    tiled = dict(tiled_dims(target))
    extents = [-(-u // tiled[d]) * tiled[d] if d in tiled else u for d, u in enumerate(update.dims)]
    return prod(extents) * target.element_bits // 8


__all__ = ["DEFAULT_SCOPED_VMEM", "sharding_annotation", "KernelRule", "TraceRule", "collective_instruction",
           "contains_matmul", "copy_io", "human_bytes", "human_seconds", "ici_time", "matmul_unit",
           "layout_key", "loop_trips", "matmul_dims", "memory_space", "moved_cost",
           "mxu_size", "partial_dims", "physical_dims_order", "sublanes", "tiled_dims", "tiles",
           "touched_tile_bytes"]
