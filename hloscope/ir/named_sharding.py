"""Named shardings, `{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}` (the form Shardy
exports), as the tiled sharding XLA turns them into: each dimension tiled by the product of
its mesh axes, the mesh's other axes as trailing subgroups (manual, unreduced, replicated).

A reference `'a':(p)s` is the sub-axis of size s whose more-major parts multiply to p."""

from __future__ import annotations

from math import prod

from hloscope.ir.values import MAX_DEVICES, Sharding, iota_devices

Ref = tuple[str, int, int]  # (axis name or index, pre-size, size; 0 for the whole axis)


def named_sharding(axes: tuple[tuple[str, int], ...], devices: tuple[int, ...],
                   dims: tuple[tuple[Ref, ...], ...], groups: dict[str, tuple[Ref, ...]]) -> Sharding:
    """The tiled Sharding of a named one; `devices`: the mesh's device ids in order (empty:
    0..n-1), `groups`: the refs of `manual=`, `unreduced=` and `replicated=`."""
    sizes = [s for _, s in axes]
    total = prod(sizes)
    if total > MAX_DEVICES or any(s < 1 for s in sizes):
        raise ValueError(f"mesh axes {[list(a) for a in axes]} do not make a mesh of 1..{MAX_DEVICES} devices")
    if devices and len(devices) != total:
        raise ValueError(f"device_ids name {len(devices)} devices; the mesh has {total}")
    if len({a for a, _ in axes}) != len(axes):
        raise ValueError(f"the mesh has duplicate axis names: {[a for a, _ in axes]}")
    for dim in dims:  # XLA wants `'b':(1)2, 'b':(2)2` written as 'b'
        for (a, p, s), (b, q, _) in zip(dim, dim[1:]):
            if a == b and s and q == p * s:
                raise ValueError(f"adjacent sub-axes of '{a}' in one dimension can be merged")
    refs = [(_axis(axes, r[0]), r[1], r[2]) for refs in (*dims, *groups.values()) for r in refs]
    pieces = _pieces(sizes, refs)  # [(axis, pre, size)] in mesh order, major to minor
    index = {(a, p): k for k, (a, p, _) in enumerate(pieces)}
    used: list[int] = []

    def covered(refs_: tuple[Ref, ...]) -> list[int]:
        out = []
        for name, pre, size in refs_:
            axis = _axis(axes, name)
            lo, hi = (pre, pre * size) if size else (1, sizes[axis])
            out += [index[(a, p)] for a, p, _ in pieces if a == axis and lo <= p < hi]
        if set(out) & set(used) or len(set(out)) != len(out):
            raise ValueError("mesh axes overlap in the sharding")
        used.extend(out)
        return out

    def extent(part: list[int]) -> int:
        return prod(pieces[k][2] for k in part)

    order = [covered(d) for d in dims]
    tile = [extent(d) for d in order]
    kinds, trailing = [], []
    for kind in ("manual", "unreduced"):
        part = covered(groups.get(kind, ()))
        if extent(part) > 1:
            kinds.append(kind)
            trailing.append(part)
    rest = [k for k in range(len(pieces)) if k not in used]
    if extent(rest) > 1:
        kinds.append("replicated")
        trailing.append(rest)
    if all(t == 1 for t in tile) and len(kinds) <= 1:  # wholly replicated, manual or unreduced
        kind = kinds[0] if kinds else next((k for k in ("manual", "unreduced") if groups.get(k)), "replicated")
        return Sharding(kind, flags=(kind,))
    # the mesh's positions, its axes cut into pieces, transposed into the tiles' order
    perm = tuple(k for part in (*order, *trailing) for k in part)
    ids = iota_devices(tuple(p[2] for p in pieces), perm)
    ids = [devices[i] for i in ids] if devices else ids
    if kinds and kinds[-1] == "replicated":  # XLA lists a replicated group's devices in order
        size = extent(rest)
        ids = [d for g in range(0, len(ids), size) for d in sorted(ids[g:g + size])]
    tile += [extent(part) for part in trailing]
    return Sharding("tiled", tile_shape=tuple(tile), devices=tuple(ids),
                    last_tile_dim_replicate=kinds == ["replicated"],
                    last_tile_dims=tuple(kinds) if kinds != ["replicated"] else ())


def _axis(axes: tuple[tuple[str, int], ...], name: str) -> int:
    names = [a for a, _ in axes]
    if name in names:
        return names.index(name)
    if name.isdigit() and int(name) < len(names):
        return int(name)
    raise ValueError(f"axis '{name}' is not a valid axis name or index in mesh {names}")


def _pieces(sizes: list[int], refs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Each axis cut where a sub-axis reference begins or ends: (axis, pre-size, size)."""
    out = []
    for axis, size in enumerate(sizes):
        cuts = {1, size}
        for a, pre, sub in refs:
            if a == axis and sub:
                if pre < 1 or sub < 1 or size % (pre * sub):
                    raise ValueError(f"sub-axis ({pre}){sub} does not divide an axis of size {size}")
                cuts |= {pre, pre * sub}
        bounds = sorted(cuts)
        for lo, hi in zip(bounds, bounds[1:]):
            if hi % lo:
                raise ValueError(f"sub-axes of an axis of size {size} do not nest")
            out.append((axis, lo, hi // lo))
        if size == 1:
            out.append((axis, 1, 1))
    return out
