"""H013 loop-overhead: a loop of many trips whose body's ops are each under the chip's per-op
floor, so the program spends its time on the ops' fixed cost, not on their work."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from hloscope.cost.roofline import has_row, op_floor, op_times, runs_alone
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.registry import register
from hloscope.stage import AFTER
from hloscope.units import human_seconds


@register
class LoopOverhead(ModuleRule):
    """A while loop whose trips each run a few tiny ops: every op costs the chip's measured
    per-op floor (chips.toml `op_floor_s`: 1.2 us on TPUs) however little it does, so a
    thousand trips of three ops take milliseconds for microseconds of work. XLA's own
    estimate agrees (the body's estimated cycles, once per trip)."""

    code = "H013"
    name = "loop-overhead"
    severity = Severity.WARNING
    summary = "a loop of many trips of tiny ops: the per-op floor, not the work, sets its time"
    stages = frozenset({AFTER})  # (ops are fused, and so counted as they run, after optimization)

    class Options(RuleOptions):
        min_trips: int = 64
        min_seconds: float = 100e-6  # the loop's per-op overhead in a step
        min_share: float = 0.5  # of the loop's time that is overhead

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        chip = ctx.chip or ctx.assumed_chip
        if chip is None or "while" not in ctx.module.opcodes() or not op_floor(ctx.module, chip):
            return
        floor = chip.op_floor_s
        for comp in ctx.module.computations:
            for loop in comp.instructions:
                if loop.opcode != "while":
                    continue
                trips = ctx.model.trip_count(loop)
                if trips is None or trips < self.options.min_trips:  # (unknown: not judged)
                    continue
                ops, work, spent = self._per_trip(ctx, chip, loop, floor)
                overhead = (spent - work) * trips
                if not ops or overhead < self.options.min_seconds or spent - work < self.options.min_share * spent:
                    continue
                found = self.finding(
                    ctx, loop,
                    f"%{loop.name} runs {trips} trips of {ops} op(s), each under the ~"
                    f"{human_seconds(floor)} an op of {chip.name} takes however small: "
                    f"{human_seconds(spent * trips)} a step, of which {human_seconds(work * trips)} "
                    f"is the ops' work",
                    evidence={"trips": trips, "ops_per_trip": ops, "op_floor_seconds": floor,
                              "seconds_per_trip": spent, "roofline_seconds_per_trip": work},
                    cost={"est_seconds": overhead},
                    help="Give each op more to do: vectorize the loop (one array op over every "
                         "trip: a closed form, cumsum or lax.associative_scan, vmap over what the "
                         "trips share), or unroll it (lax.fori_loop(..., unroll=k) / "
                         "lax.scan(..., unroll=k) run k trips per body: k times fewer ops).",
                )
                yield found if ctx.chip is not None else replace(found, severity=Severity.INFO)

    @staticmethod
    def _per_trip(ctx: RuleContext, chip, loop, floor: float) -> tuple[int, float, float]:
        """(ops, roofline seconds, estimated seconds) of one trip: the body's and the
        condition's ops that run alone (nested loops are judged on their own)."""
        ops, work, spent = 0, 0.0, 0.0
        for name in (loop.attr("body"), loop.attr("condition")):
            comp = ctx.module.by_name.get(name)  # (the parser reads the name without its %)
            for instr in comp.instructions if comp is not None else ():
                if not has_row(instr.opcode) or not runs_alone(instr.opcode):
                    continue
                bound = max(op_times(ctx.model, chip, instr))
                ops += 1
                work += bound
                spent += max(bound, floor)
        return ops, work, spent
