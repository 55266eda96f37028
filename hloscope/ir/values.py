"""Typed attribute values: replica groups, sharding, window, slices."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from math import prod

MAX_DEVICES = 1 << 20  # no real mesh is larger; a bound against absurd iota dims


def iota_devices(dims: tuple[int, ...], perm: tuple[int, ...] | None) -> list[int]:
    """Device ids of `<=[dims]T(perm)`: iota over dims, transposed by perm, flattened."""
    n = prod(dims)
    if n > MAX_DEVICES or any(d < 0 for d in dims):
        raise ValueError(f"iota over {list(dims)} names {n} devices (limit {MAX_DEVICES})")
    if perm and sorted(perm) != list(range(len(dims))):
        raise ValueError(f"T{tuple(perm)} is not a permutation of {len(dims)} dimensions")
    if not perm:
        return list(range(n))
    # Strides of the untransposed row-major array, read in permuted order.
    strides = [prod(dims[i + 1 :]) for i in range(len(dims))]
    pdims = [dims[p] for p in perm]
    pstrides = [strides[p] for p in perm]
    return [sum(c * s for c, s in zip(coord, pstrides)) for coord in product(*map(range, pdims))]


@dataclass(frozen=True, slots=True)
class ReplicaGroups:
    """replica_groups in any of its three printed forms, with explicit groups."""

    form: str  # "list" | "iota" | "mesh"
    groups: tuple[tuple[int, ...], ...]
    iota_shape: tuple[int, ...] = ()  # [G,S] of the iota form
    iota_dims: tuple[int, ...] = ()
    iota_perm: tuple[int, ...] = ()
    mesh_axes: tuple[tuple[str, int], ...] = ()
    mesh_refs: tuple[str, ...] = ()
    mesh_devices: tuple[int, ...] = ()  # device_ids=(...): the mesh's devices in order

    @property
    def group_size(self) -> int:
        return len(self.groups[0]) if self.groups else 0

    @property
    def num_groups(self) -> int:
        return len(self.groups)


def iota_groups(shape: tuple[int, ...], dims: tuple[int, ...], perm: tuple[int, ...]) -> tuple:
    flat = iota_devices(dims, perm)
    if prod(shape) != len(flat):
        raise ValueError(f"[{','.join(map(str, shape))}] groups do not cover the {len(flat)} devices")
    size = shape[-1] if shape else len(flat)
    if size <= 0:
        raise ValueError("empty replica groups")
    return tuple(tuple(flat[i : i + size]) for i in range(0, len(flat), size))


def mesh_groups(axes: tuple[tuple[str, int], ...], refs: tuple[str, ...],
                devices: tuple[int, ...] = ()) -> tuple:
    """Groups of devices that differ only along the referenced mesh axes; `devices`: the
    mesh's device at each position, row-major (default: the position itself)."""
    names = [a for a, _ in axes]
    sizes = [s for _, s in axes]
    if prod(sizes) > MAX_DEVICES or any(s < 0 for s in sizes):
        raise ValueError(f"mesh of {prod(sizes)} devices (limit {MAX_DEVICES})")
    if devices and len(devices) != prod(sizes):
        raise ValueError(f"device_ids name {len(devices)} devices; the mesh "
                         f"{[list(a) for a in axes]} has {prod(sizes)}")
    missing = [r for r in refs if r not in names]
    if missing:
        raise ValueError(f"mesh axes {missing} are not in the mesh {names}")
    strides = [prod(sizes[i + 1 :]) for i in range(len(sizes))]
    ref_idx = [names.index(r) for r in refs]
    other = [i for i in range(len(names)) if i not in ref_idx]
    groups = []
    for outer in product(*(range(sizes[i]) for i in other)):
        base = sum(c * strides[i] for c, i in zip(outer, other))
        groups.append(
            tuple(
                base + sum(c * strides[i] for c, i in zip(inner, ref_idx))
                for inner in product(*(range(sizes[i]) for i in ref_idx))
            )
        )
    if devices:
        return tuple(tuple(devices[p] for p in g) for g in groups)
    return tuple(groups)


@dataclass(frozen=True, slots=True)
class Sharding:
    """An HloSharding. kind: replicated | maximal | manual | unknown | tiled | tuple."""

    kind: str
    tile_shape: tuple[int, ...] = ()
    devices: tuple[int, ...] = ()
    iota_dims: tuple[int, ...] = ()
    iota_perm: tuple[int, ...] = ()
    last_tile_dim_replicate: bool = False
    last_tile_dims: tuple[str, ...] = ()
    device: int | None = None
    elements: tuple[Sharding, ...] = ()
    flags: tuple[str, ...] = ()
    fields: dict[str, object] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class Window:
    size: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    pad: tuple[tuple[int, int], ...] = ()
    lhs_dilate: tuple[int, ...] = ()
    rhs_dilate: tuple[int, ...] = ()
    rhs_reversal: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SliceRange:
    start: int
    limit: int
    stride: int = 1
