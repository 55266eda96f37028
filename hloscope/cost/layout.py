"""Memory facts of a shape: padded dims and bytes under tiling, memory space.

XLA tiles apply to the minor-most dimensions of the physical (major-to-minor)
shape. The first tile pads those dimensions up to multiples of the tile; each
further tile level (e.g. (2,1) inside (8,128) for bf16) tiles the previous
tile and pads it in turn. A tile with more dimensions than the array treats the
missing leading dimensions as 1 (scalars with T(256) take 256 elements).
"""

from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import TYPE_CHECKING

from hloscope.ir.records import Frozen, set_field
from hloscope.ir.shape import COMBINE_DIM, ELEMENT_BITS, UNBOUNDED, Shape, per_shape

if TYPE_CHECKING:
    from hloscope.ir import Module

MEMORY_SPACES = {0: "device (HBM)", 1: "VMEM (on-chip)", 5: "host"}


def memory_space_name(space: int) -> str:
    return MEMORY_SPACES.get(space, f"memory space {space}")


# MLIR's names for the integer types HLO calls s8, s16, s32 (Mosaic kernels print these).
_MLIR_INTS = {"i1": 8, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


def sublanes(dtype: str) -> int:
    """Rows of a TPU vreg tile for this element type (HLO or MLIR name): 8 for 32-bit
    types, 16 for 16-bit, 32 for 8-bit and narrower (a (sublanes, 128) tile is 4 KiB)."""
    bits = ELEMENT_BITS.get(dtype) or _MLIR_INTS.get(dtype) or 32
    return 8 * 32 // min(max(bits, 8), 32)


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m if m > 0 else n


class ArrayMemory(Frozen):
    """Logical vs padded storage of one array."""

    __slots__ = ("shape", "logical_dims", "padded_dims", "logical_bytes", "padded_bytes",
                 "memory_space", "tile_levels")
    shape: str
    logical_dims: tuple[int, ...]  # physical (major-to-minor) order
    padded_dims: tuple[int, ...]
    logical_bytes: int
    padded_bytes: int
    memory_space: int
    tile_levels: tuple[tuple[int, ...], ...]

    def __init__(self, shape: str, logical_dims: tuple[int, ...], padded_dims: tuple[int, ...],
                 logical_bytes: int, padded_bytes: int, memory_space: int,
                 tile_levels: tuple[tuple[int, ...], ...]) -> None:
        set_field(self, "shape", shape)
        set_field(self, "logical_dims", logical_dims)
        set_field(self, "padded_dims", padded_dims)
        set_field(self, "logical_bytes", logical_bytes)
        set_field(self, "padded_bytes", padded_bytes)
        set_field(self, "memory_space", memory_space)
        set_field(self, "tile_levels", tile_levels)

    @property
    def ratio(self) -> float:
        return self.padded_bytes / self.logical_bytes if self.logical_bytes else 1.0

    @property
    def waste_bytes(self) -> int:
        return self.padded_bytes - self.logical_bytes


def physical_dims(shape: Shape) -> tuple[int, ...]:
    """Dimensions in major-to-minor order (the order memory is laid out in)."""
    if shape.layout is None or not shape.layout.minor_to_major:
        return shape.dims
    return tuple(shape.dims[d] for d in reversed(shape.layout.minor_to_major))


def _tile(dims: list[int], tile: tuple[int, ...]) -> list[int]:
    """Pad the minor dims of `dims` to multiples of `tile` (dims grow to tile rank)."""
    dims = [1] * max(0, len(tile) - len(dims)) + list(dims)
    offset = len(dims) - len(tile)
    for k, t in enumerate(tile):
        if t != COMBINE_DIM:
            dims[offset + k] = _round_up(dims[offset + k], t)
    return dims


def _tiled_shape(dims: list[int], tiles: tuple[tuple[int, ...], ...]) -> list[int]:
    """The shape XLA lays out after each tile level in turn: a tile t over the minor dims
    of the current shape s (s grown to t's rank with leading 1s) makes it
    s[:-r] + ceil(s[-r:] / t) + t. Each level tiles the whole previous result, tile-count
    dims included: bf16[5]{0:T(256)(128)(2,1)} is [256] -> [1,256] -> [1,2,128] -> (2,1)
    over [2,128], no padding: 512 bytes, as libtpu allocates it (fixtures/layout_sizes.json).
    A '*' (combine) tile dim keeps its dim whole."""
    shape = list(dims)
    for tile in tiles:
        shape = [1] * max(0, len(tile) - len(shape)) + shape
        minor = shape[len(shape) - len(tile):]
        counts = [1 if t == COMBINE_DIM else -(-d // t) for d, t in zip(minor, tile)]
        sizes = [d if t == COMBINE_DIM else t for d, t in zip(minor, tile)]
        shape = shape[: len(shape) - len(tile)] + counts + sizes
    return shape


@lru_cache(maxsize=16384)
def array_memory(shape: Shape) -> ArrayMemory:
    """Padded dims and bytes of an array shape (tuples: use `memory_leaves`)."""
    if not shape.is_array:
        raise ValueError(f"{shape} is not an array")
    dims = [0 if d == UNBOUNDED else d for d in physical_dims(shape)]
    tiles = shape.layout.tiles if shape.layout is not None else ()
    bits = shape.element_bits
    logical_bytes = (prod(dims) * bits + 7) // 8
    padded = _tile(list(dims), tiles[0]) if tiles else list(dims)
    padded_elems = prod(_tiled_shape(dims, tiles))
    space = shape.layout.memory_space if shape.layout is not None else 0
    return ArrayMemory(
        shape=shape.text(),
        logical_dims=tuple(dims),
        padded_dims=tuple(padded),
        logical_bytes=logical_bytes,
        padded_bytes=(padded_elems * bits + 7) // 8,
        memory_space=space,
        tile_levels=tuple(tiles),
    )


@per_shape
def memory_leaves(shape: Shape) -> list[ArrayMemory]:
    """Memory facts of each array leaf (memoized by shape identity: treat as read-only)."""
    return [array_memory(s) for s in shape.leaves() if s.is_array]


def has_tiled_layouts(module: Module) -> bool:
    """Whether any instruction's layout carries tiles (TPU compiler output); found once per
    module (`Module.fact`)."""
    return module.fact("tiled", _tiled)


def _tiled(module: Module) -> bool:
    for comp in module.computations:
        for instr in comp.instructions:
            if "T(" not in instr.shape_text:  # (no tile printed: its shape need not be built)
                continue
            layout = instr.shape.layout if instr.shape.is_array else None
            if layout is not None and layout.tiles:
                return True
    return False


def padded_bytes(shape: Shape) -> int:
    return byte_totals(shape)[1]


def logical_bytes(shape: Shape) -> int:
    return byte_totals(shape)[0]


@per_shape
def byte_totals(shape: Shape) -> tuple[int, int, int]:
    """(logical, padded, padded in device memory (space 0)) bytes of a shape's leaves, once
    per shape object (a loop's state tuple of 200 arrays is read by every op of the loop)."""
    leaves = memory_leaves(shape)
    return (sum(m.logical_bytes for m in leaves), sum(m.padded_bytes for m in leaves),
            sum(m.padded_bytes for m in leaves if m.memory_space == 0))


def padding_share(shape: Shape) -> float:
    """Share of the shape's padded bytes that is padding (0 without tiled layouts)."""
    logical, padded, _ = byte_totals(shape)
    return (padded - logical) / padded if padded else 0.0


def shape_facts(shape: Shape) -> dict | None:
    """`hloscope shape`'s record: logical vs padded size under the layout's tiles (None
    for a shape with no array data)."""
    leaves = memory_leaves(shape)
    if not leaves:
        return None
    logical = sum(m.logical_bytes for m in leaves)
    padded = sum(m.padded_bytes for m in leaves)
    first = leaves[0]
    one = len(leaves) == 1
    return {
        "shape": shape.text(),
        "logical_bytes": logical,
        "padded_bytes": padded,
        "padded_dims": list(first.padded_dims) if one else [list(m.padded_dims) for m in leaves],
        "logical_dims": list(first.logical_dims) if one else [list(m.logical_dims) for m in leaves],
        "ratio": padded / logical if logical else 1.0,
        "memory_space": first.memory_space,
        "memory_space_name": memory_space_name(first.memory_space),
        "tile_levels": [list(t) for t in first.tile_levels],
    }


def split_share(shape: Shape) -> float:
    """The share of an array a split layout (`SC(d:k)`: memory space assignment split the
    buffer at index k of dimension d) keeps in its first piece; 1 without a split. A prefetch
    of such a buffer into another memory space moves that piece: XLA's TPU cost analysis
    counts the copy-start's destination and the copy-done's read and write at that share
    (fitted exactly, to the byte, on scanned weight stacks of 2-8 layers split at 1-4)."""
    layout = shape.layout if shape.is_array else None
    if layout is None or not layout.split_configs:
        return 1.0
    dim, at = layout.split_configs[0]
    return at[0] / shape.dims[dim] if at and dim < len(shape.dims) and shape.dims[dim] else 1.0


def add_first_piece(c, shape: Shape, written: bool):
    """A Cost `c` plus reading (or writing) the first piece of a split `shape` (split_share)."""
    share = split_share(shape)
    logical, padded, hbm = (round(t * share) for t in byte_totals(shape))
    if written:
        c.bytes_written += logical
        c.padded_written += padded
    else:
        c.bytes_read += logical
        c.padded_read += padded
    c.hbm_bytes += hbm
    return c
