"""`hloscope sharding` as text: per-collective groups, axes, bytes and time."""

from __future__ import annotations

from hloscope.units import human_bytes, human_seconds


def sharding_text(results: list[tuple], per_axis: list[dict], groups: bool, top: int) -> str:
    """results: (module, mesh, collectives) per module; per_axis: bytes moved per axis; top:
    list only the `top` costliest collectives of a module (0: all, in program order)."""
    out = []
    for (m, mesh, cs), axis_bytes in zip(results, per_axis):
        axes = ", ".join(f"{a.name}={a.size} (stride {a.stride})" for a in mesh.axes) or "none"
        out.append(f"HloModule {m.name}: {mesh.devices} devices; mesh ({mesh.source}): {axes}")
        if axis_bytes:
            out.append("  bytes moved per device by axis: " + ", ".join(
                f"{k} {human_bytes(v, 2)}" for k, v in axis_bytes.items()))
        if not cs:
            out.append("  no collectives")
        shown = cs
        if 0 < top < len(cs):
            costliest = sorted(cs, key=lambda c: -(c.est_seconds or c.moved_bytes))[:top]
            keep = {id(c) for c in costliest}
            shown = [c for c in cs if id(c) in keep]
            out.append(f"  {len(cs)} collectives; the {top} costliest, in program order:")
        for c in shown:
            mode = (f"async, {c.overlap_instructions} ops overlap" if c.is_async else "sync")
            est = human_seconds(c.est_seconds, 3) if c.est_seconds else "-"
            fused = f" (all-reduce + %{c.scattered_by}, fused by XLA)" if c.scattered_by else ""
            out.append(f"  {c.instruction}: {c.opcode}{fused} over {c.axis}, {c.num_groups} group(s) of "
                       f"{c.group_size}, {human_bytes(c.bytes, 2)}/device -> "
                       f"{human_bytes(c.moved_bytes, 2)} moved, ~{est}"
                       + (f" on {c.links}" if c.links and c.est_seconds else "") + f", {mode}")
            out.append(f"      global shape {c.global_shape}; first group {c.groups[0] if c.groups else []}")
            for src in c.sources:
                if src["local_shape"] != src["global_shape"]:
                    out.append(f"      from %{src['parameter']}: {src['local_shape']} of {src['global_shape']}")
            if groups:
                out.append(f"      groups {c.groups}")
        if len(shown) < len(cs):
            out.append(f"  and {len(cs) - len(shown)} more (--top 0 lists all)")
    return "\n".join(out)
