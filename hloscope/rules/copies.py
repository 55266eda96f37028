"""Copies that buy nothing (H001) and copies/transposes that physically relayout (H002)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.cost.layout import padded_bytes
from hloscope.ir import Instruction, Shape
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.registry import register
from hloscope.rules.util import (
    human_bytes,
    human_seconds,
    layout_key,
    memory_space,
    physical_dims_order,
)


def _io(instr: Instruction, ctx: RuleContext) -> tuple[Shape, Shape] | None:
    """(source, destination) array shapes of a copy or copy-start."""
    src = ctx.operand(instr, 0)
    if src is None or not src.shape.is_array:
        return None
    dst = instr.shape
    if instr.opcode == "copy-start":
        if not dst.is_tuple or not dst.elements:
            return None
        dst = dst.elements[0]
    return (src.shape, dst) if dst.is_array else None


def _loop_trips(instr: Instruction, ctx: RuleContext) -> int | None:
    """Trip count when the instruction sits in a while body that states one."""
    for caller in ctx.module.instructions():
        if caller.opcode == "while" and caller.attr("body") == instr.computation:
            return ctx.model.trip_count(caller) or 0
    return None


def _cost(ctx: RuleContext, moved: int, trips: int | None) -> dict[str, float]:
    times = trips or 1
    cost: dict[str, float] = {"bytes_wasted": float(moved * times)}
    if ctx.chip is not None:
        cost["est_seconds"] = moved * times / ctx.chip.hbm_bandwidth
    return cost


@register
class DefensiveCopy(InstructionRule):
    """A full-buffer copy whose result has its operand's layout, tiling and memory space."""

    code = "H001"
    name = "defensive-copy"
    severity = Severity.WARNING
    summary = "copy with unchanged layout and memory space: a read+write that buys nothing"
    targets = frozenset({"copy", "copy-start"})

    @dataclass(frozen=True)
    class Options:
        min_bytes: int = 1024  # smaller copies (loop counters) are not worth a finding

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        io = _io(instr, ctx)
        if io is None:
            return
        src, dst = io
        if layout_key(src) != layout_key(dst) or memory_space(src) != memory_space(dst):
            return
        nbytes = padded_bytes(dst)
        if nbytes < self.options.min_bytes:
            return
        trips = _loop_trips(instr, ctx)
        cost = _cost(ctx, 2 * nbytes, trips)
        where = f" in a loop body ({trips} trips)" if trips else (" in a loop body" if trips == 0 else "")
        est = f", ~{human_seconds(cost['est_seconds'])}" if "est_seconds" in cost else ""
        yield self.finding(
            ctx, instr,
            f"%{instr.name} copies {human_bytes(nbytes)} ({dst.text()}) with an unchanged layout "
            f"and memory space{where}{est}",
            evidence={"operand": instr.operands[0], "shape": dst.text(), "bytes": nbytes,
                      "trips": trips},
            cost=cost,
            help="Find why XLA needs a second buffer: a value both returned and updated, a loop "
                 "carry that is also read after the loop, or a non-donated input that is "
                 "updated in place. Donate the input (donate_argnums) or restructure so one "
                 "buffer suffices.",
        )


@register
class RetilingCopy(InstructionRule):
    """A copy or transpose that physically rearranges data (layout or tiling changes)."""

    code = "H002"
    name = "retiling-copy"
    severity = Severity.WARNING
    summary = "copy/transpose whose result layout or tiling differs from its operand's"
    targets = frozenset({"copy", "copy-start", "transpose"})

    @dataclass(frozen=True)
    class Options:
        min_bytes: int = 1024

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if instr.opcode == "transpose":
            src_instr = ctx.operand(instr, 0)
            if src_instr is None or not src_instr.shape.is_array:
                return
            src, dst = src_instr.shape, instr.shape
            perm = instr.attr("dimensions", ())
            # a transpose whose result layout keeps memory order is a bitcast
            src_order = physical_dims_order(src)
            dst_order = physical_dims_order(dst)
            dst_order = tuple(perm[d] for d in dst_order) if perm else dst_order
            if src_order == dst_order and _tiles(src) == _tiles(dst):
                return
        else:
            io = _io(instr, ctx)
            if io is None:
                return
            src, dst = io
            if layout_key(src) == layout_key(dst):
                return
        moved = padded_bytes(src) + padded_bytes(dst)
        if moved < self.options.min_bytes:
            return
        trips = _loop_trips(instr, ctx)
        cost = _cost(ctx, moved, trips)
        yield self.finding(
            ctx, instr,
            f"%{instr.name} relayouts {src.text()} -> {dst.text()}: {human_bytes(moved)} moved",
            evidence={"from": src.text(), "to": dst.text(), "bytes": moved, "trips": trips},
            cost=cost,
            help="Make producer and consumer agree on one layout: transpose weights once outside "
                 "the step, pick einsum/dot dimension orders that keep the contracting dim "
                 "minor, or keep the minor dim a multiple of 128.",
        )


def _tiles(shape: Shape) -> tuple:
    return shape.layout.tiles if shape.layout is not None else ()
