"""H014 partial-tile-update: a dynamic-update-slice that writes part of each memory tile it touches."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.ir import Instruction
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import (
    human_bytes,
    layout_key,
    loop_trips,
    moved_cost,
    partial_dims,
    touched_tile_bytes,
)
from hloscope.rules.registry import register
from hloscope.stage import AFTER


@register
class PartialTileUpdate(InstructionRule):
    """A dynamic-update-slice that writes part of each memory tile it touches."""

    code = "H014"
    name = "partial-tile-update"
    severity = Severity.WARNING
    summary = "dynamic-update-slice whose slice covers only part of each (8,128) tile of its buffer"
    stages = frozenset({AFTER})  # tiles are the TPU compiler's, after layout assignment
    targets = frozenset({"dynamic-update-slice"})
    located = True  # (its findings are at the instruction checked)

    class Options(RuleOptions):
        min_bytes: int = 1 << 20  # whole-tile traffic per update below this is left alone

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        # (arrays, an update and an index per dimension: the parser holds the op to that)
        target, update = instr.shape, ctx.model.operand_shapes(instr)[1]
        partial = partial_dims(target, update)
        if not partial:
            return
        touched = touched_tile_bytes(target, update)
        moved = 2 * touched  # every tile met is read and written back whole
        if moved < self.options.min_bytes:
            return
        trips = loop_trips(instr, ctx)
        dim, extent, tile = partial[0]
        per = f" on each of {trips} trips" if trips else ""
        relayout = self._relayout(instr, ctx)
        evidence = {"dimension": dim, "update_extent": extent, "tile_extent": tile,
                    "update_bytes": update.logical_bytes, "tile_bytes": touched, "trips": trips}
        if relayout is not None:
            evidence["relayout"] = relayout.name
        yield self.finding(
            ctx, instr,
            f"%{instr.name} writes {extent} of every {tile} rows of the tiles of "
            f"{target.text()} along dimension {dim}{per}: {human_bytes(touched)} of whole tiles "
            f"read and rewritten for a {human_bytes(update.logical_bytes)} update"
            + (f", after %{relayout.name} relayouts the update to match" if relayout else ""),
            evidence=evidence,
            cost=moved_cost(ctx, moved, trips, instr),
            help="Put the axis written one slice at a time outermost, so each slice is whole "
                 "tiles: stack per-layer arrays on axis 0 and scan over axis 0 (not another axis "
                 "moved to the front inside the step: jnp.moveaxis, nn.scan's in_axes, MaxText's "
                 "param_scan_axis=1); keep a KV cache written a token at a time sequence-first, "
                 "[S, B, H, D] (MaxText's ar_cache_axis_order). XLA then writes each slice in "
                 "place, with no relayout.",
        )

    @staticmethod
    def _relayout(instr: Instruction, ctx: RuleContext) -> Instruction | None:
        """The copy that retiles the update just for this write, if there is one."""
        src = ctx.operand(instr, 1)  # (the update: the parser holds the op to its operands)
        if src.opcode != "copy":
            return None
        before = ctx.operand(src, 0)  # (an array: the update the copy makes is one)
        return src if layout_key(before.shape) != layout_key(src.shape) else None
