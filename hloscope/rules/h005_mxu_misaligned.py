"""H005 mxu-misaligned: matmul dims that are not multiples of the MXU tile: the padding is wasted work."""

from __future__ import annotations

from collections.abc import Iterator
from math import prod

from hloscope.cost.roofline import compute_peak
from hloscope.ir import Instruction
from hloscope.rules.base import MATMUL, Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import human_seconds, matmul_dims, mxu_size, sublanes
from hloscope.rules.registry import register


@register
class MxuMisaligned(InstructionRule):
    """Matmul dims that are not multiples of the MXU tile: the padding is wasted work."""

    code = "H005"
    name = "mxu-misaligned"
    severity = Severity.WARNING
    summary = "dot/convolution K or N not a multiple of the MXU (128, or 256 on v6e/v7x)"
    targets = MATMUL
    located = True  # (its findings are at the instruction checked)
    include_fused = True

    class Options(RuleOptions):
        min_utilization: float = 0.9
        min_flops: float = 1e8  # smaller matmuls are not worth a finding

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.is_tpu:
            return
        dims = matmul_dims(instr, ctx)
        if dims is None:
            return
        mxu = mxu_size(ctx)
        dtype = ctx.model.operand_shapes(instr)[0].element_type
        sub = sublanes(dtype)
        padded = {"K": -(-dims["K"] // mxu) * mxu, "N": -(-dims["N"] // mxu) * mxu,
                  "M": -(-dims["M"] // sub) * sub}
        if 0 in padded.values():
            return  # an empty matmul: no work to waste
        util = prod(dims[k] / padded[k] for k in ("K", "N", "M"))
        if util >= self.options.min_utilization:
            return
        flops = ctx.model.compute(instr).flops  # (only for the misaligned: it costs more)
        if flops < self.options.min_flops:
            return
        bad = [f"{k}={dims[k]}" for k in ("K", "N") if dims[k] % mxu] + (
            [f"M={dims['M']} (sublanes {sub})"] if dims["M"] % sub else [])
        cost: dict[str, float] = {}
        if ctx.chip is not None:
            # (at the rate the op runs: f32 at DEFAULT precision is one bf16 MXU pass, HIGHEST six)
            cost["est_seconds"] = flops * (1 / util - 1) / compute_peak(ctx.model, ctx.chip, instr)
        est = f", ~{human_seconds(cost['est_seconds'])} lost" if cost else ""
        yield self.finding(
            ctx, instr,
            f"%{instr.name}: {', '.join(bad)} not multiples of the {mxu}x{mxu} MXU; "
            f"~{(1 - util) * 100:.0f}% of MXU work is padding{est}",
            evidence={**dims, "mxu": mxu, "utilization": round(util, 4)},
            cost=cost,
            help=f"Pad or choose model dims (hidden, head, vocab) as multiples of {mxu}; "
                 "pack small heads together.",
        )
