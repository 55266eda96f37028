"""K003 vmem-over-budget: double-buffered blocks plus scratch exceed the scoped VMEM limit or the chip's VMEM."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.helpers import DEFAULT_SCOPED_VMEM, KernelRule, human_bytes
from hloscope.rules.registry import register


@register
class VmemOverBudget(KernelRule):
    """Double-buffered blocks plus scratch exceed the scoped VMEM limit or the chip's VMEM."""

    code = "K003"
    name = "vmem-over-budget"
    severity = Severity.WARNING
    summary = "estimated VMEM footprint above the scoped limit or the chip's VMEM"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        scoped_default = (ctx.chip.scoped_vmem_bytes if ctx.chip and ctx.chip.scoped_vmem_bytes
                          else DEFAULT_SCOPED_VMEM)
        physical = ctx.chip.vmem_bytes if ctx.chip else None
        for k, s in self.each(ctx):
            granted = k.scoped_vmem_bytes
            if s.vmem_bytes <= scoped_default and (physical is None or s.vmem_bytes <= physical):
                continue
            where = (f"the chip's {human_bytes(physical)} of VMEM" if physical and s.vmem_bytes > physical
                     else f"the default scoped limit of {human_bytes(scoped_default)}")
            raised = f"; this call was granted {human_bytes(granted)}" if granted else ""
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} needs ~{human_bytes(s.vmem_bytes)} of VMEM (double-buffered "
                f"blocks + scratch), above {where}{raised}",
                evidence={"vmem_bytes": s.vmem_bytes, "scoped_default": scoped_default,
                          "granted": granted, "physical": physical},
                help="Use smaller blocks (the pipeline keeps two of each in VMEM), or single-"
                     "buffer large inputs; raise vmem_limit_bytes only with room to spare.",
            )
