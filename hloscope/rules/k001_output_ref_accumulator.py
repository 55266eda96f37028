"""K001 output-ref-accumulator: an output block narrower than the accumulator (bf16, ...) is read
inside the kernel: it is used as an accumulator, so partial sums are rounded every step."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.helpers import KernelRule
from hloscope.rules.registry import register


ACCUMULATOR_TYPES = frozenset({"f32", "i32", "f64", "i64"})


@register
class OutputRefAccumulator(KernelRule):
    """An output block narrower than f32 is read inside the kernel: it is used as an accumulator.

    An f32 (or s32) output accumulating its own block is the standard pattern: the block is
    the accumulator's type, so a scratch accumulator would only add VMEM; not flagged."""

    code = "K001"
    name = "output-ref-accumulator"
    severity = Severity.WARNING
    summary = "kernel reads its output ref (o_ref used as an accumulator across grid steps)"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            outputs = [b for b in s.operands if b.role == "output"]
            for index in s.output_reads:
                out = outputs[index] if index < len(outputs) else None
                if out is not None and out.dtype in ACCUMULATOR_TYPES:
                    continue  # (the accumulator's own type: nothing to gain)
                desc = f" ({out.dtype}{out.block})" if out else ""
                yield self.finding(
                    ctx, k.instruction,
                    f"kernel {s.name} (%{k.instruction.name}) reads output {index}{desc} back, "
                    f"accumulating in the output block across grid steps: partial sums are "
                    f"rounded to {out.dtype if out else 'its type'} every step",
                    evidence={"kernel": s.name, "output": index,
                              "semantics": s.dimension_semantics},
                    help="Accumulate in an f32 VMEM scratch buffer (scratch_shapes=[pltpu.VMEM(..., "
                         "jnp.float32)]) zeroed on the first step, and write o_ref once, cast, on "
                         "the last step: partial sums are no longer rounded to the output's type "
                         "every step and the output block needs no read-back.",
                )
