"""H009 layout-coercion: transpose -> (reshape | bitcast | copy)* -> dot: the dot could contract in place."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.ir import Instruction
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import human_bytes
from hloscope.rules.registry import register

_PASS_THROUGH = frozenset({"reshape", "bitcast", "copy", "transpose"})


_CONSUMERS = frozenset({"dot", "convolution", "fusion"})


@register
class LayoutCoercion(InstructionRule):
    """transpose -> (reshape | bitcast | copy)* -> dot: the dot could contract in place."""

    code = "H009"
    name = "layout-coercion"
    severity = Severity.INFO
    summary = "transpose/reshape/copy chain that only reorders data for a dot or fusion"
    targets = frozenset({"transpose"})
    located = True  # (its findings are at the instruction checked)

    class Options(RuleOptions):
        min_bytes: int = 4096

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        chain = [instr]
        node = instr
        while True:
            users = ctx.users(node)
            if len(users) != 1:
                return
            (nxt,) = users
            if nxt.opcode in _PASS_THROUGH:
                chain.append(nxt)
                node = nxt
                continue
            if nxt.opcode not in _CONSUMERS:
                return
            if nxt.opcode == "fusion" and not any(
                    i.opcode in ("dot", "convolution") for c in nxt.called_computations
                    for i in ctx.module[c].instructions):
                return
            break
        nbytes = instr.shape.logical_bytes
        if nbytes < self.options.min_bytes:
            return
        steps = " -> ".join(f"{i.opcode} %{i.name}" for i in chain)
        yield self.finding(
            ctx, instr,
            f"{steps} -> {nxt.opcode} %{nxt.name}: reorders {human_bytes(nbytes)} only so the "
            f"{nxt.opcode} sees another dimension order",
            evidence={"chain": [i.name for i in chain], "consumer": nxt.name,
                      "permutation": list(instr.attr("dimensions", ()))},
            cost={"bytes_wasted": float(2 * nbytes)},
            help="Let dot_general/einsum contract and batch over the original dimensions "
                 "(choose lhs/rhs contracting dims) instead of transposing first.",
        )
