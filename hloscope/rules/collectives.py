"""Collective rules: large all-gathers (H007) and collectives nothing overlaps (H008)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register
from hloscope.rules.util import human_bytes, human_seconds


def _collectives(ctx: RuleContext):
    """The module's collectives, analysed once per context."""
    key = "_collectives"
    if key not in ctx.__dict__:
        from hloscope.sharding import analyze

        ctx.__dict__[key] = analyze(ctx.module, ctx.chip)[1]
    return ctx.__dict__[key]


def _instr(ctx: RuleContext, c):
    return ctx.module[c.computation][c.instruction]


def _time(c) -> str:
    return f", ~{human_seconds(c.est_seconds)} on ICI" if c.est_seconds else ""


@register
class LargeAllGather(ModuleRule):
    """An all-gather that materialises a large buffer (often a whole weight) on every device."""

    code = "H007"
    name = "large-all-gather"
    severity = Severity.WARNING
    summary = "all-gather whose result exceeds a size (e.g. a whole weight on every chip)"

    @dataclass(frozen=True)
    class Options:
        max_bytes: int = 32 << 20

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for c in _collectives(ctx):
            if c.opcode != "all-gather" or c.result_bytes < self.options.max_bytes:
                continue
            whole = [s for s in c.sources if s["global_shape"] == c.global_shape.split("{")[0]]
            what = (f"the whole of %{whole[0]['parameter']} {whole[0]['global_shape']}"
                    if whole else c.global_shape)
            cost = {"bytes_wasted": float(c.result_bytes - c.bytes)}
            if c.est_seconds:
                cost["est_seconds"] = c.est_seconds
            yield self.finding(
                ctx, _instr(ctx, c),
                f"%{c.instruction} gathers {human_bytes(c.result_bytes)} ({what}) onto every one "
                f"of {c.group_size} devices over axis {c.axis}{_time(c)}",
                evidence={"result_bytes": c.result_bytes, "shard_bytes": c.bytes,
                          "group_size": c.group_size, "axis": c.axis, "sources": c.sources},
                cost=cost,
                help="Keep the weight sharded and move the activations instead (shard the "
                     "output on the weight's axis, or all-gather per layer inside the loop, "
                     "FSDP-style, so only one layer's weight is whole at a time).",
            )


@register
class ExposedCollective(ModuleRule):
    """A synchronous collective, or an async pair with no compute between start and done."""

    code = "H008"
    name = "exposed-collective"
    severity = Severity.WARNING
    summary = "collective that no compute overlaps: synchronous, or start/done back to back"

    @dataclass(frozen=True)
    class Options:
        min_bytes: int = 256 << 10  # bytes moved per device

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for c in _collectives(ctx):
            if c.moved_bytes < self.options.min_bytes:
                continue
            if c.is_async and (c.done is None or c.overlap_instructions > 0):
                continue
            how = ("is synchronous: the chip waits for it" if not c.is_async else
                   f"has nothing scheduled between it and %{c.done}")
            cost = {"est_seconds": c.est_seconds} if c.est_seconds else {}
            yield self.finding(
                ctx, _instr(ctx, c),
                f"%{c.instruction} ({c.opcode}, {human_bytes(c.moved_bytes)} moved per device "
                f"over {c.axis}) {how}{_time(c)}",
                evidence={"opcode": c.opcode, "async": c.is_async, "moved_bytes": c.moved_bytes,
                          "axis": c.axis, "overlap_instructions": c.overlap_instructions},
                cost=cost,
                help="Give the scheduler independent work to overlap: split the computation "
                     "into chunks (collective matmul), start the next layer's gather early, "
                     "or return independent results separately so they can run in between.",
            )


__all__ = ["ExposedCollective", "LargeAllGather"]
