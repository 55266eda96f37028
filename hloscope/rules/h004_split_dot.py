"""H004 split-dot: dots that share one operand and could be one wider matmul; or more dots than expected."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from hloscope.ir import Instruction
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.helpers import contains_matmul, matmul_unit
from hloscope.rules.registry import register


def _independent(users: list[Instruction], instructions: list[Instruction],
                 positions: dict[str, int]) -> list[Instruction]:
    """The matmuls of a group that no other kept one feeds, in order: a matmul that reads
    another's result (the next layer's) cannot be merged with it. XLA prints each
    instruction after its operands, so one walk forward over the computation from the first
    matmul to the last, carrying what the kept ones feed, finds them (a walk back from each
    matmul cost a layer stack's length per layer)."""
    at = {positions[u.name]: u for u in users}
    kept: list[Instruction] = []
    reached: set[str] = set()  # the kept matmuls and everything they feed so far
    for k in range(min(at), max(at) + 1):
        instr = instructions[k]
        if reached and not reached.isdisjoint(instr.operands):
            reached.add(instr.name)
        elif k in at:
            kept.append(instr)
            reached.add(instr.name)
    return kept


def _size(comp, name: str) -> int:
    instr = comp.by_name.get(name)
    return instr.shape.logical_bytes if instr is not None else 0


def _same_other_operands(users: list[Instruction], shared: str, comp) -> bool:
    shapes = set()
    for u in users:
        others = tuple(str(comp[o].shape) for o in u.operands if o != shared and o in comp)
        shapes.add(others)
    return len(shapes) == 1 and all(shapes)


@register
class SplitDot(ModuleRule):
    """Dots that share one operand and could be one wider matmul; or more dots than expected."""

    code = "H004"
    name = "split-dot"
    severity = Severity.INFO
    summary = "several matmuls share an operand (e.g. separate Q/K/V projections), or more than expected"

    @dataclass(frozen=True)
    class Options:
        min_group: int = 2
        expect: dict[str, int] = field(default_factory=dict)  # {"dot": 2}: at most 2 matmuls

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        yield from self._shared_operand(ctx)
        yield from self._over_budget(ctx)

    def _shared_operand(self, ctx: RuleContext) -> Iterator[Finding]:
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue
            groups: dict[str, list[Instruction]] = defaultdict(list)
            for instr in comp.instructions:
                if contains_matmul(instr, ctx):
                    for operand in dict.fromkeys(instr.operands):
                        groups[operand].append(instr)
            if not groups or all(len(u) < self.options.min_group for u in groups.values()):
                continue
            reported: set[str] = set()  # matmuls already in a reported group
            positions = {instr.name: k for k, instr in enumerate(comp.instructions)}
            # the largest shared operand first: that is the activation, not a norm statistic
            for operand, users in sorted(groups.items(), key=lambda kv: -_size(comp, kv[0])):
                src = comp.by_name.get(operand)
                if src is None or not src.shape.is_array or src.shape.rank < 2:
                    continue
                if len(users) < self.options.min_group or not _same_other_operands(users, operand, comp):
                    continue
                users = _independent(users, comp.instructions, positions)  # (feeding: not mergeable)
                if len(users) < self.options.min_group:
                    continue
                members = {u.name for u in users}
                if members <= reported:
                    continue  # the same matmuls, reached through another shared operand
                reported |= members
                first, *rest = users
                names = ", ".join(f"%{u.name}" for u in users)
                yield self.finding(
                    ctx, first,
                    f"{len(users)} matmuls ({names}) all multiply %{operand} {src.shape} by "
                    f"same-shaped weights: one matmul on the concatenated weights would do",
                    evidence={"shared_operand": operand, "matmuls": [u.name for u in users]},
                    help="Concatenate the weights (e.g. W_qkv = [W_q | W_k | W_v]) and split "
                         f"the result: one large matmul keeps {matmul_unit(ctx)} busier than "
                         "several narrow ones and reads the shared operand once.",
                )

    def _over_budget(self, ctx: RuleContext) -> Iterator[Finding]:
        for opcode, limit in self.options.expect.items():
            found = [i for i in ctx.module.instructions() if i.opcode == opcode]
            if len(found) > limit:
                extra = found[limit]
                yield self.finding(
                    ctx, extra,
                    f"module has {len(found)} {opcode} instructions, expected at most {limit}; "
                    f"first extra: %{extra.name}",
                    evidence={"opcode": opcode, "count": len(found), "expected": limit},
                    help="Check whether a projection was split or a matmul duplicated.",
                )
