"""K001 output-ref-accumulator: an output block is read inside the kernel: it is used as an accumulator."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.helpers import KernelRule
from hloscope.rules.registry import register


@register
class OutputRefAccumulator(KernelRule):
    """An output block is read inside the kernel: it is used as an accumulator."""

    code = "K001"
    name = "output-ref-accumulator"
    severity = Severity.WARNING
    summary = "kernel reads its output ref (o_ref used as an accumulator across grid steps)"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            outputs = [b for b in s.operands if b.role == "output"]
            for index in s.output_reads:
                out = outputs[index] if index < len(outputs) else None
                desc = f" ({out.dtype}{out.block})" if out else ""
                yield self.finding(
                    ctx, k.instruction,
                    f"kernel {s.name} (%{k.instruction.name}) reads output {index}{desc} back, "
                    f"accumulating in the output block across grid steps",
                    evidence={"kernel": s.name, "output": index,
                              "semantics": s.dimension_semantics},
                    help="Accumulate in a VMEM scratch buffer (scratch_shapes=[pltpu.VMEM(...)]) "
                         "zeroed on the first step, and write o_ref once on the last step: the "
                         "output block then needs no read-back and XLA no defensive copy.",
                )
