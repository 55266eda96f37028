"""Layouts: minor-to-major order plus the TPU/GPU physical annotations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hloscope.ir.shape import Shape

COMBINE_DIM = -1  # a '*' tile dimension (Tile::kCombineDimension)


@dataclass(frozen=True, slots=True)
class Layout:
    """`{1,0:T(8,128)(2,1)E(4)S(1)}` as data.

    tiles: one tuple per tile level, outermost first; COMBINE_DIM marks '*'.
    memory_space: 0 is device memory (HBM); TPU uses 1 for VMEM.
    """

    minor_to_major: tuple[int, ...] = ()
    dim_level_types: tuple[str, ...] = ()
    tiles: tuple[tuple[int, ...], ...] = ()
    tail_padding_alignment: int = 1
    index_type: str | None = None
    pointer_type: str | None = None
    element_size_bits: int = 0
    memory_space: int = 0
    split_configs: tuple[tuple[int, tuple[int, ...]], ...] = ()
    physical_shape: Shape | None = None
    dynamic_prefix_bytes: int = 0

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
