"""Device meshes: named (Shardy or mesh-form replica groups) or inferred from strides.

Logical device ids are positions in the mesh's row-major order, so an axis of
size s has stride = product of the sizes of the axes after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from math import prod
from typing import NamedTuple

from hloscope.ir import Module

_SDY_MESH = re.compile(r"(\w+)\s*=\s*#sdy\.mesh<\[([^\]]*)\]")
_SDY_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')


@dataclass(frozen=True)
class MeshAxis:
    name: str
    size: int
    stride: int


@dataclass
class Mesh:
    devices: int
    axes: list[MeshAxis] = field(default_factory=list)
    source: str = "inferred"  # "sdy" | "replica_groups" | "inferred"

    def to_dict(self) -> dict:
        return {"devices": self.devices, "source": self.source,
                "axes": [{"name": a.name, "size": a.size, "stride": a.stride} for a in self.axes]}

    def axis_for(self, stride: int, size: int) -> MeshAxis | None:
        for a in self.axes:
            if a.stride == stride and a.size == size:
                return a
        return None


def named_axes(sizes: list[tuple[str, int]]) -> list[MeshAxis]:
    out = []
    for i, (name, size) in enumerate(sizes):
        out.append(MeshAxis(name, size, prod(s for _, s in sizes[i + 1 :])))
    return out


def factor_group(group: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """(stride, size) factors, outermost first, whose sums give the group's
    offsets from its first device; None when the group is not such a product."""
    found = _factors(tuple(group))
    return None if found is None else list(found)


@lru_cache(maxsize=4096)
def _factors(group: tuple[int, ...]) -> tuple[tuple[int, int], ...] | None:
    """factor_group, once per distinct group (a module's collectives share a few)."""
    if not group:
        return ()
    base = min(group)
    offsets = {d - base for d in group}
    covered = {0}
    factors: list[tuple[int, int]] = []
    while len(covered) < len(offsets):
        stride = min(o for o in offsets if o not in covered)
        size = 1
        while all(c + size * stride in offsets for c in covered):
            size += 1
        if size == 1:  # the next device does not extend every point: not a product
            return None
        covered = {c + k * stride for c in covered for k in range(size)}
        factors.append((stride, size))
    if covered != offsets:
        return None
    return tuple(sorted(factors, key=lambda f: -f[0]))


def device_count(module: Module, groups: Iterable[tuple[int, ...]]) -> int:
    def attr_int(key: str) -> int:
        try:
            return int(module.attrs.get(key, "1"))
        except ValueError:
            return 1

    from hloscope.ir.values import MAX_DEVICES

    n = attr_int("num_partitions") * attr_int("replica_count")
    seen = max((d for g in groups for d in g), default=-1) + 1
    return min(max(n, seen, sharded_devices(module), 1), MAX_DEVICES)


_TILED = re.compile(r"devices=\[([\d,]+)\]")


def sharded_devices(module: Module) -> int:
    """The devices the entry computation's shardings tile over: the product of a
    `devices=[4,1,1]...` tile assignment's dims (a trailing replication dim included)."""
    most = 0
    if module.entry is None:
        return 0
    seen: set[str] = set()  # (a layer's instructions repeat a few sharding texts)
    told: set[str] = set()  # whole attribute texts already read (often repeated too)
    # (most instructions of a pre-optimization dump carry a sharding, few a tiled one)
    for instr in module.entry.may_contain("devices=["):
        whole = instr.attr_text
        if whole:
            if whole in told:
                continue
            told.add(whole)
        text = instr.raw_attr("sharding")
        if not text or text in seen:
            continue
        seen.add(text)
        for m in _TILED.finditer(text):
            n = 1
            for d in m.group(1).split(","):
                n *= int(d)
            most = max(most, n)
    return most


def sdy_mesh(module: Module) -> list[MeshAxis] | None:
    """Axes from a module's `xla.sdy.meshes` frontend attribute, if it names any."""
    return _sdy_axes(module.attrs.get("frontend_attributes", ""))


def _sdy_axes(text: str) -> list[MeshAxis] | None:
    """The axes of the first `#sdy.mesh<[...]>` in `text` that names any."""
    for m in _SDY_MESH.finditer(text):
        axes = [(name, int(size)) for name, size in _SDY_AXIS.findall(m.group(2))]
        if axes:
            return named_axes(axes)
    return None


def mesh_beside(module: Module) -> tuple[list[MeshAxis], str] | None:
    """Named axes from beside the module, where its own text names none (XLA drops the
    Shardy mesh from the optimized module): the mesh `hloscope compile` recorded in the dump
    folder (hloscope.json), else the `xla.sdy.meshes` of the module's before-optimizations
    dump in the same folder. (axes, source) or None."""
    from pathlib import Path

    from hloscope.cost.resolve import compile_record

    path = Path(str(getattr(module, "path", "") or ""))
    if not path.name or not path.parent.is_dir():
        return None
    mesh = compile_record(path).get("mesh")
    if isinstance(mesh, dict) and mesh:
        try:
            return named_axes([(str(k), int(v)) for k, v in mesh.items()]), "recorded by hloscope compile"
        except (TypeError, ValueError):
            pass
    m = re.match(r"(module_\d+\.)", path.name)
    if not m:
        return None
    for before in sorted(path.parent.glob(f"{m.group(1)}*before_optimizations.txt")):
        try:
            with open(before, encoding="utf-8", errors="replace") as f:
                head = f.read(1 << 16)
        except OSError:
            continue
        axes = _sdy_axes(head.split("\n", 1)[0])
        if axes:
            return axes, "the before-optimizations dump's Shardy mesh"
    return None


def infer_mesh(devices: int, factors: list[tuple[int, int]]) -> list[MeshAxis]:
    """A row-major mesh consistent with the (stride, size) factors seen in collectives."""
    axes: dict[int, int] = {}
    for stride, size in factors:
        axes.setdefault(stride, size)
    out: list[MeshAxis] = []
    expect = devices
    for stride in sorted(axes, reverse=True):
        size = axes[stride]
        if stride * size > expect or expect % (stride * size):
            continue  # does not tile: leave it out of the mesh summary
        if expect // (stride * size) > 1:
            out.append(MeshAxis(f"stride{stride * size}", expect // (stride * size), stride * size))
        out.append(MeshAxis(f"stride{stride}", size, stride))
        expect = stride
    if expect > 1:
        out.append(MeshAxis("stride1", expect, 1))
    return out


class Sharding(NamedTuple):
    """A module's mesh and its logical collectives (unpacks as `mesh, collectives`)."""

    mesh: Mesh
    collectives: list  # of sharding.collectives.Collective

    def __repr__(self) -> str:
        axes = ", ".join(f"{a.name}={a.size}" for a in self.mesh.axes) or "none"
        moved = sum(c.moved_bytes for c in self.collectives)
        return (f"<Sharding: {self.mesh.devices} devices, mesh ({self.mesh.source}) {axes}; "
                f"{len(self.collectives)} collective(s), {moved / 2**20:.2f} MiB moved per device>")

    def _repr_html_(self) -> str:
        from hloscope.units import html_table, human_bytes, human_seconds

        rows = [[c.instruction, c.opcode, c.axis, f"{c.num_groups} x {c.group_size}",
                 human_bytes(c.moved_bytes, 2), human_seconds(c.est_seconds, 3) if c.est_seconds else "-",
                 c.links, "async" if c.is_async else "sync"] for c in self.collectives[:50]]
        return html_table(repr(self)[1:-1], ["instruction", "collective", "axis", "groups", "moved",
                                             "time", "links", "mode"], rows,
                          max(len(self.collectives) - 50, 0))
