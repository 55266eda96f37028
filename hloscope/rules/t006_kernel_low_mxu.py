"""T006 kernel-low-mxu: a matmul kernel whose measured MXU utilization is low."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule
from hloscope.rules.registry import register


@register
class KernelLowMxu(TraceRule):
    """A kernel whose body multiplies matrices but whose MXU counter stays low."""

    code = "T006"
    name = "kernel-low-mxu"
    severity = Severity.WARNING
    summary = "a measured matmul-shaped Pallas kernel with low MXU utilization"

    class Options(RuleOptions):
        max_mxu_percent: float = 25.0

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        bodies = {k.instruction.name: k for k in ctx.kernels}
        for instr, view in self.kernel_views(ctx):
            mxu = next((v for name, v in view.counters.items() if name.upper() == "MXU"), None)
            kernel = bodies.get(instr.name)
            if mxu is None or kernel is None or mxu >= self.options.max_mxu_percent:
                continue
            matmuls = {op: n for op, n in kernel.summary.ops.items() if "matmul" in op or "contract" in op}
            if not matmuls:
                continue
            yield self.finding(
                ctx, instr,
                f"%{instr.name} multiplies matrices ({', '.join(f'{op} x{n}' for op, n in matmuls.items())} "
                f"per grid step) but its MXU averaged {mxu:.1f}% utilization over its "
                f"{view.runs} measured run(s)",
                evidence={"mxu_percent": mxu, "counters": view.counters, "matmul_ops": matmuls,
                          "dma_wait_share": view.share("dma wait")},
                cost={"measured_seconds": view.seconds * (1 - mxu / 100)},
                help="Feed the MXU: blocks whose matmul dims are multiples of the MXU size "
                     "(128 on v5e, 256 on v6e), bf16 operands, fewer vector ops per matmul "
                     "(casts, masks, reductions hoisted out of the inner loop); if T005 also "
                     "fires the MXU is idle waiting on DMA.",
            )
