"""H002 retiling-copy: a copy or transpose that physically rearranges data (layout or tiling changes)."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.cost.layout import padded_bytes
from hloscope.ir import Instruction
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import (
    copy_io,
    human_bytes,
    layout_key,
    loop_trips,
    moved_cost,
    partial_dims,
    physical_dims_order,
    tiles,
)
from hloscope.rules.registry import register
from hloscope.stage import AFTER


@register
class RetilingCopy(InstructionRule):
    """A copy or transpose that physically rearranges data (layout or tiling changes)."""

    code = "H002"
    name = "retiling-copy"
    severity = Severity.WARNING
    summary = "copy/transpose whose result layout or tiling differs from its operand's"
    stages = frozenset({AFTER})  # layouts and copies are XLA's after optimization
    targets = frozenset({"copy", "copy-start", "transpose"})
    located = True  # (its findings are at the instruction checked)

    class Options(RuleOptions):
        min_bytes: int = 1024

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if instr.opcode == "transpose":
            # (one array operand, an array result: the parser holds a transpose to that)
            src, dst = ctx.operand(instr, 0).shape, instr.shape
            perm = instr.attr("dimensions")  # (none printed: the lenient parser takes that)
            # a transpose whose result layout keeps memory order is a bitcast
            src_order = physical_dims_order(src)
            dst_order = physical_dims_order(dst)
            dst_order = tuple(perm[d] for d in dst_order) if perm else dst_order
            if src_order == dst_order and tiles(src) == tiles(dst):
                return
        else:
            io = copy_io(instr, ctx)
            if io is None:
                return
            src, dst = io
            if layout_key(src) == layout_key(dst):
                return
        moved = padded_bytes(src) + padded_bytes(dst)
        if moved < self.options.min_bytes:
            return
        trips = loop_trips(instr, ctx)
        cost = moved_cost(ctx, moved, trips, instr)
        evidence = {"from": src.text(), "to": dst.text(), "bytes": moved, "trips": trips}
        update = self._partial_update(instr, ctx)
        if update is not None:
            evidence["partial_tile_update"] = update.name
            help_text = (f"This relayout only feeds %{update.name}, which writes part of every tile "
                         "of its buffer (H014): put the axis written one slice at a time outermost "
                         "(stack layers on axis 0, a KV cache sequence-first) and neither is needed.")
        else:
            help_text = ("Make producer and consumer agree on one layout: transpose weights once "
                         "outside the step, pick einsum/dot dimension orders that keep the "
                         "contracting dim minor, or keep the minor dim a multiple of 128.")
        yield self.finding(
            ctx, instr,
            f"%{instr.name} relayouts {src.text()} -> {dst.text()}: {human_bytes(moved)} moved",
            evidence=evidence, cost=cost, help=help_text,
        )

    @staticmethod
    def _partial_update(instr: Instruction, ctx: RuleContext) -> Instruction | None:
        """The dynamic-update-slice this copy's result is only the update of, when that update
        covers part of every tile it meets (H014's case)."""
        users = ctx.users(instr)
        if len(users) != 1 or users[0].opcode != "dynamic-update-slice":
            return None
        (dus,) = users
        # (only the update can be part of the buffer: the buffer is its whole shape, an index
        # a scalar)
        return dus if partial_dims(dus.shape, instr.shape) else None
