"""K006 no-parallel-axis: no grid axis marked parallel, on a chip with two TensorCores (v4, v5p)."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.helpers import KernelRule
from hloscope.rules.registry import register


@register
class NoParallelAxis(KernelRule):
    """No grid axis marked parallel, on a chip with two TensorCores (v4, v5p)."""

    code = "K006"
    name = "no-parallel-axis"
    severity = Severity.WARNING
    summary = "no grid axis marked parallel on a megacore chip (v4, v5p): one core idles"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.chip is None or ctx.chip.tensorcores < 2:
            return  # needs --chip: only megacore chips split parallel axes across cores
        for k, s in self.each(ctx):
            if "parallel" in s.dimension_semantics or s.grid_steps < 2:
                continue
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} marks no grid axis parallel ({s.dimension_semantics or 'none'}); "
                f"on {ctx.chip.name} only one of its {ctx.chip.tensorcores} TensorCores runs it",
                evidence={"semantics": s.dimension_semantics, "grid": s.grid},
                help="Mark independent grid axes (typically the output's row/column block axes) "
                     "'parallel' in dimension_semantics; keep reduction axes 'arbitrary'.",
            )
