"""H007 large-all-gather: an all-gather that materialises a large buffer (often a whole weight) on every device."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import collective_instruction, human_bytes, ici_time
from hloscope.rules.registry import register


@register
class LargeAllGather(ModuleRule):
    """An all-gather that materialises a large buffer (often a whole weight) on every device."""

    code = "H007"
    name = "large-all-gather"
    severity = Severity.WARNING
    summary = "all-gather whose result exceeds a size (e.g. a whole weight on every chip)"

    class Options(RuleOptions):
        max_bytes: int = 32 << 20
        per_layer: int = 3  # this many same-shaped gathers: per-layer (FSDP) gathering

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        gathers = [c for c in ctx.collectives if c.opcode == "all-gather"]
        shapes = Counter(c.global_shape for c in gathers)
        for c in gathers:
            if c.result_bytes < self.options.max_bytes:
                continue
            if shapes[c.global_shape] >= self.options.per_layer:
                yield self._per_layer(ctx, c, shapes[c.global_shape])
                continue
            whole = [s for s in c.sources if s["global_shape"] == c.global_shape.split("{")[0]]
            what = (f"the whole of %{whole[0]['parameter']} {whole[0]['global_shape']}"
                    if whole else c.global_shape)
            cost = {"bytes_wasted": float(c.result_bytes - c.bytes)}
            if c.est_seconds:
                cost["est_seconds"] = c.est_seconds
            yield self.finding(
                ctx, collective_instruction(ctx, c),
                f"%{c.instruction} gathers {human_bytes(c.result_bytes)} ({what}) onto every one "
                f"of {c.group_size} devices over axis {c.axis}{ici_time(c)}",
                evidence={"result_bytes": c.result_bytes, "shard_bytes": c.bytes,
                          "group_size": c.group_size, "axis": c.axis, "sources": c.sources},
                cost=cost,
                help="Keep the weight sharded and move the activations instead (shard the "
                     "output on the weight's axis, or all-gather per layer inside the loop, "
                     "FSDP-style, so only one layer's weight is whole at a time).",
            )

    def _per_layer(self, ctx: RuleContext, c, count: int) -> Finding:
        """One of many same-shaped gathers: per-layer (FSDP) gathering, the pattern the
        advice above leads to; what is left to check is overlap and residency."""
        return self.finding(
            ctx, collective_instruction(ctx, c),
            f"%{c.instruction} gathers {human_bytes(c.result_bytes)} ({c.global_shape}), one of "
            f"{count} same-shaped gathers over axis {c.axis}: per-layer (FSDP) gathering"
            f"{ici_time(c)}" + ("" if c.is_async else "; synchronous"),
            evidence={"result_bytes": c.result_bytes, "shard_bytes": c.bytes, "per_layer": count,
                      "group_size": c.group_size, "axis": c.axis, "async": c.is_async},
            cost={"bytes_wasted": 0.0},
            help="Per-layer gathering is the intended FSDP pattern: keep it. Check that each "
                 "gather overlaps the previous layer's compute (async collectives and XLA's "
                 "latency-hiding scheduler; H008 lists the exposed ones) and that each gathered "
                 "weight is freed after its layer (`hloscope memory` lists what is live at the peak).",
            severity=Severity.INFO)
