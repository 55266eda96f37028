"""Small helpers shared by rule families."""

from __future__ import annotations

from hloscope.ir import Shape
from hloscope.ir.shape import per_shape
from hloscope.units import human_bytes, human_seconds


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


__all__ = ["human_bytes", "human_seconds", "layout_key", "memory_space", "physical_dims_order"]
