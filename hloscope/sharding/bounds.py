"""A collective's bound is the time its bytes take over the links, not over HBM.

`profile` and T001 set each measured op beside a bound; for a collective (synchronous, or any
piece of an async chain: start, continuations, done) that bound is the link time of the
sharding model (moved bytes per device / the bandwidth of a bidirectional ring over the
chip's links; hloscope.sharding.collectives), never its HBM roofline, which for a 1 MiB
collective-permute is ~0.8 us where the links take ~6 us. Measured collectives also get the
bandwidth they achieved on the links and its share of the links' peak.
"""

from __future__ import annotations

from hloscope.cost.chips import Chip
from hloscope.ir import Module


def by_instruction(collectives: list) -> dict[str, object]:
    """Instruction name -> its logical collective, for every instruction that is a piece of
    one (the collective, or an async start, its continuations and its done)."""
    out: dict[str, object] = {}
    for c in collectives:
        for name in (c.instruction, c.done, *c.continuations):
            if name:
                out[name] = c
    return out


def module_collectives(module: Module, chip: Chip | None) -> dict[str, object]:
    """by_instruction of a module's collectives ({} when it has none: nothing is imported)."""
    from hloscope.ir.opcodes import MAY_BE_COLLECTIVE

    if module.opcodes().isdisjoint(MAY_BE_COLLECTIVE):
        return {}
    from hloscope.sharding.collectives import analyze

    return by_instruction(analyze(module, chip)[1])


def link_bandwidth(chip: Chip) -> float | None:
    """Bytes per second a collective moves per device at best: on a TPU a ring over one
    axis, two one-way ICI links; on a GPU the one-way scale-up link (NCCL's bus bandwidth)."""
    if not chip.ici_bandwidth:
        return None
    return chip.ici_bandwidth if chip.platform == "gpu" else 2 * chip.ici_bandwidth


def link_word(chip: Chip | None) -> str:
    """What the scale-up links are called on this chip: ICI, NVLink, Infinity Fabric."""
    from hloscope.sharding.links import scale_up_word

    return scale_up_word(chip)


def measured(collective, mean_seconds: float, chip: Chip | None) -> dict:
    """The link figures of one measured collective: its link time (the bound), axis, the
    bandwidth it achieved and that bandwidth's share of the links' peak."""
    out = {"axis": collective.axis, "moved_bytes": collective.moved_bytes,
           "link_seconds": collective.est_seconds,
           "links": getattr(collective, "links", "") or link_word(chip)}
    if mean_seconds > 0:
        out["link_bytes_per_s"] = collective.moved_bytes / mean_seconds
        peak = link_bandwidth(chip) if chip is not None else None
        if peak and getattr(collective, "crosses_domains", False):
            peak = None  # (across nodes the network bounds it: no single link peak)
        if peak:
            out["link_share"] = out["link_bytes_per_s"] / peak
    return out


def per_axis(rows: list[dict]) -> dict[str, dict]:
    """Measured collectives' bytes and time summed per mesh axis: the bandwidth each axis
    achieved and its share of the links' peak."""
    out: dict[str, dict] = {}
    for r in rows:
        link = r.get("collective")
        if not link:
            continue
        axis = out.setdefault(link["axis"], {"moved_bytes": 0.0, "seconds": 0.0, "ops": 0})
        axis["moved_bytes"] += link["moved_bytes"] * r["count"]
        axis["seconds"] += r["total_seconds"]
        axis["ops"] += 1
    for axis in out.values():
        axis["bytes_per_s"] = axis["moved_bytes"] / axis["seconds"] if axis["seconds"] else 0.0
    return dict(sorted(out.items()))
