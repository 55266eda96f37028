"""Memory facts of a shape: padded dims and bytes under tiling, memory space.

XLA tiles apply to the minor-most dimensions of the physical (major-to-minor)
shape. The first tile pads those dimensions up to multiples of the tile; each
further tile level (e.g. (2,1) inside (8,128) for bf16) tiles the previous
tile and pads it in turn. A tile with more dimensions than the array treats the
missing leading dimensions as 1 (scalars with T(256) take 256 elements).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod

from hloscope.ir.layout import COMBINE_DIM
from hloscope.ir.shape import UNBOUNDED, Shape, per_shape

MEMORY_SPACES = {0: "device (HBM)", 1: "VMEM (on-chip)", 5: "host"}


def memory_space_name(space: int) -> str:
    return MEMORY_SPACES.get(space, f"memory space {space}")


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m if m > 0 else n


@dataclass(frozen=True)
class ArrayMemory:
    """Logical vs padded storage of one array."""

    shape: str
    logical_dims: tuple[int, ...]  # physical (major-to-minor) order
    padded_dims: tuple[int, ...]
    logical_bytes: int
    padded_bytes: int
    memory_space: int
    tile_levels: tuple[tuple[int, ...], ...]

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


@lru_cache(maxsize=16384)
def array_memory(shape: Shape) -> ArrayMemory:
    """Padded dims and bytes of an array shape (tuples: use `memory_leaves`)."""
    if not shape.is_array:
        raise ValueError(f"{shape} is not an array")
    dims = [0 if d == UNBOUNDED else d for d in physical_dims(shape)]
    tiles = shape.layout.tiles if shape.layout is not None else ()
    bits = shape.element_bits
    logical_bytes = (prod(dims) * bits + 7) // 8
    padded = list(dims)
    num, den = 1, 1  # growth of each tile from padding by the inner tile levels (exact)
    if tiles:
        padded = _tile(padded, tiles[0])
        prev = tiles[0]
        for tile in tiles[1:]:
            num *= prod(_tile([d if d != COMBINE_DIM else 1 for d in prev], tile))
            den *= prod(d for d in prev if d != COMBINE_DIM)
            prev = tile
    padded_elems = prod(padded) * num // max(den, 1)
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


def padded_bytes(shape: Shape) -> int:
    return sum(m.padded_bytes for m in memory_leaves(shape))


def logical_bytes(shape: Shape) -> int:
    return sum(m.logical_bytes for m in memory_leaves(shape))
