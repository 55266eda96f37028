"""Shapes: arrays (element type, dims, optional layout), tuples, tokens; and layouts
(a layout may name a physical shape, so the two live together)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from math import prod
from typing import TypeVar

from hloscope.ir.records import Frozen
from hloscope.ir.records import set_field as _set

COMBINE_DIM = -1  # a '*' tile dimension (Tile::kCombineDimension)


class Layout(Frozen):
    """`{1,0:T(8,128)(2,1)E(4)S(1)}` as data.

    tiles: one tuple per tile level, outermost first; COMBINE_DIM marks '*'.
    memory_space: 0 is device memory (HBM); TPU uses 1 for VMEM.
    """

    __slots__ = ("minor_to_major", "dim_level_types", "tiles", "tail_padding_alignment",
                 "index_type", "pointer_type", "element_size_bits", "memory_space",
                 "split_configs", "physical_shape", "dynamic_prefix_bytes")
    minor_to_major: tuple[int, ...]
    dim_level_types: tuple[str, ...]
    tiles: tuple[tuple[int, ...], ...]
    tail_padding_alignment: int
    index_type: str | None
    pointer_type: str | None
    element_size_bits: int
    memory_space: int
    split_configs: tuple[tuple[int, tuple[int, ...]], ...]
    physical_shape: Shape | None
    dynamic_prefix_bytes: int

    def __init__(self, minor_to_major: tuple[int, ...] = (), dim_level_types: tuple[str, ...] = (),
                 tiles: tuple[tuple[int, ...], ...] = (), tail_padding_alignment: int = 1,
                 index_type: str | None = None, pointer_type: str | None = None,
                 element_size_bits: int = 0, memory_space: int = 0,
                 split_configs: tuple[tuple[int, tuple[int, ...]], ...] = (),
                 physical_shape: Shape | None = None, dynamic_prefix_bytes: int = 0) -> None:
        _set(self, "minor_to_major", minor_to_major)
        _set(self, "dim_level_types", dim_level_types)
        _set(self, "tiles", tiles)
        _set(self, "tail_padding_alignment", tail_padding_alignment)
        _set(self, "index_type", index_type)
        _set(self, "pointer_type", pointer_type)
        _set(self, "element_size_bits", element_size_bits)
        _set(self, "memory_space", memory_space)
        _set(self, "split_configs", split_configs)
        _set(self, "physical_shape", physical_shape)
        _set(self, "dynamic_prefix_bytes", dynamic_prefix_bytes)

    def __str__(self) -> str:
        head = ",".join(str(d) for d in self.minor_to_major)
        parts: list[str] = []
        if self.dim_level_types:
            parts.append("D(" + ",".join(self.dim_level_types) + ")")
        if self.tiles:
            parts.append(
                "T"
                + "".join(
                    "(" + ",".join("*" if d == COMBINE_DIM else str(d) for d in t) + ")"
                    for t in self.tiles
                )
            )
        if self.tail_padding_alignment != 1:
            parts.append(f"L({self.tail_padding_alignment})")
        if self.index_type:
            parts.append(f"#({self.index_type})")
        if self.pointer_type:
            parts.append(f"*({self.pointer_type})")
        if self.element_size_bits:
            parts.append(f"E({self.element_size_bits})")
        if self.memory_space:
            parts.append(f"S({self.memory_space})")
        if self.split_configs:
            parts.append(
                "SC"
                + "".join(f"({d}:" + ",".join(map(str, idx)) + ")" for d, idx in self.split_configs)
            )
        if self.physical_shape is not None:
            parts.append(f"P({self.physical_shape.text()})")
        if self.dynamic_prefix_bytes:
            parts.append(f"M({self.dynamic_prefix_bytes})")
        if parts:
            return "{" + head + ":" + "".join(parts) + "}"
        return "{" + head + "}"

    @property
    def has_physical_info(self) -> bool:
        """True when the layout says more than a minor-to-major order."""
        return bool(self.tiles or self.memory_space or self.element_size_bits)


UNBOUNDED = -1  # a '?' dimension

# Bits per element of every XLA primitive type that has a storage size.
ELEMENT_BITS: dict[str, int] = {
    "pred": 8, "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8, "f8e3m4": 8, "f8e8m0fnu": 8, "f4e2m1fn": 4,
    "f6e2m3fn": 6, "f6e3m2fn": 6,
    "token": 0, "opaque": 0,
}


class Shape(Frozen):
    """An HLO shape. `element_type` is 'tuple' for tuples, 'buffer' for b(...)."""

    __slots__ = ("element_type", "dims", "dynamic", "layout", "elements")
    element_type: str
    dims: tuple[int, ...]
    dynamic: tuple[bool, ...]
    layout: Layout | None
    elements: tuple[Shape, ...]

    def __init__(self, element_type: str, dims: tuple[int, ...] = (), dynamic: tuple[bool, ...] = (),
                 layout: Layout | None = None, elements: tuple[Shape, ...] = ()) -> None:
        _set(self, "element_type", element_type)
        _set(self, "dims", dims)
        _set(self, "dynamic", dynamic)
        _set(self, "layout", layout)
        _set(self, "elements", elements)

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def is_array(self) -> bool:
        return self.element_type not in ("tuple", "token", "opaque", "buffer")

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def num_elements(self) -> int:
        return prod(self.dims) if self.is_array else 0

    @property
    def element_bits(self) -> int:
        if self.layout is not None and self.layout.element_size_bits:
            return self.layout.element_size_bits
        return ELEMENT_BITS.get(self.element_type, 0)

    @property
    def logical_bytes(self) -> int:
        """Bytes of the data without padding (tuples: sum of their elements)."""
        if self.element_type in ("tuple", "buffer"):
            return sum(e.logical_bytes for e in self.elements)
        if not self.is_array or UNBOUNDED in self.dims:
            return 0
        return (self.num_elements * self.element_bits + 7) // 8

    def leaves(self) -> list[Shape]:
        """Array/token leaves, depth first."""
        if self.element_type in ("tuple", "buffer"):
            return [leaf for e in self.elements for leaf in e.leaves()]
        return [self]

    def text(self, layout: bool = True) -> str:
        """The shape as XLA prints it; `layout=False` drops layouts."""
        if self.element_type == "tuple":
            return "(" + ", ".join(e.text(layout) for e in self.elements) + ")"
        if self.element_type == "buffer":
            return "b(" + self.elements[0].text(layout) + ")"
        dims = ",".join(
            ("?" if d == UNBOUNDED else ("<=" if dyn else "") + str(d))
            for d, dyn in zip(self.dims, self.dynamic)
        )
        out = f"{self.element_type}[{dims}]"
        if layout and self.layout is not None:
            out += str(self.layout)
        return out

    def __str__(self) -> str:
        return _plain_text(self)

    def __repr__(self) -> str:
        return f"Shape({self.text()!r})"


_T = TypeVar("_T")


def per_shape(fn: Callable[[Shape], _T]) -> Callable[[Shape], _T]:
    """Memoize fn(shape) by the shape object's identity: parsed shapes are shared objects,
    and hashing a nested Shape costs more than the lookup saves. Each entry keeps its
    shape alive, so an id is never reused while it is cached."""
    memo: dict[int, tuple[Shape, _T]] = {}

    @wraps(fn)
    def wrapper(shape: Shape) -> _T:
        hit = memo.get(id(shape))
        if hit is not None and hit[0] is shape:
            return hit[1]
        value = fn(shape)
        if len(memo) < 65536:
            memo[id(shape)] = (shape, value)
        return value

    return wrapper


@per_shape
def _plain_text(shape: Shape) -> str:
    """str(shape), once per shape object (findings and reports print the same few)."""
    return shape.text(layout=False)
