"""Small helpers shared by rule families."""

from __future__ import annotations

from hloscope.ir import Shape
from hloscope.units import human_bytes, human_seconds


_KEYS: dict[int, tuple[Shape, tuple]] = {}  # id -> (shape kept alive, key): shapes are shared


def layout_key(shape: Shape) -> tuple:
    """What decides the physical arrangement of an array: order of non-trivial
    dims, tiles, element size (size-1 dims can move freely)."""
    hit = _KEYS.get(id(shape))
    if hit is not None and hit[0] is shape:
        return hit[1]
    layout = shape.layout
    order = physical_dims_order(shape)
    key = (order, (), 0) if layout is None else (order, layout.tiles, layout.element_size_bits)
    if len(_KEYS) < 65536:
        _KEYS[id(shape)] = (shape, key)
    return key


def physical_dims_order(shape: Shape) -> tuple[int, ...]:
    """Logical dim indices in major-to-minor order, size-1 dims dropped."""
    if shape.layout is None or not shape.layout.minor_to_major:
        order = tuple(range(shape.rank))
    else:
        order = tuple(reversed(shape.layout.minor_to_major))
    return tuple(d for d in order if shape.dims[d] != 1)


def memory_space(shape: Shape) -> int:
    return shape.layout.memory_space if shape.layout is not None else 0


__all__ = ["human_bytes", "human_seconds", "layout_key", "memory_space", "physical_dims_order"]
