"""H010 f32-matmul: f32 (or precision=HIGHEST) matmuls on TPU, where bf16 inputs run several times faster."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.ir import Instruction, Shape
from hloscope.rules.base import MATMUL, Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.registry import register


def _precision(instr: Instruction) -> list[str]:
    text = instr.attrs.get("operand_precision")
    if not text:
        return []
    return [p.strip() for p in text.strip("{}").split(",") if p.strip()]


@register
class F32Matmul(InstructionRule):
    """f32 (or precision=HIGHEST) matmuls on TPU, where bf16 inputs run several times faster."""

    code = "H010"
    name = "f32-matmul"
    severity = Severity.WARNING
    summary = "dot/convolution with f32 operands or HIGHEST precision on a TPU"
    targets = MATMUL
    include_fused = True

    @dataclass(frozen=True)
    class Options:
        min_flops: float = 1e8

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.is_tpu:
            return
        shapes: list[Shape] = ctx.model.operand_shapes(instr)[:2]
        f32 = [s for s in shapes if s.element_type == "f32"]
        precision = [str(p).lower() for p in _precision(instr)]
        highest = "highest" in precision
        if not f32 and not highest:
            return
        flops = ctx.model.compute(instr).flops
        if flops < self.options.min_flops:
            return
        what = " x ".join(str(s) for s in shapes)
        why = "f32 operands" if f32 else "precision=HIGHEST"
        cost: dict[str, float] = {}
        if ctx.chip is not None:
            cost["est_seconds"] = flops / ctx.chip.peak_f32_flops - flops / ctx.chip.peak_bf16_flops
        yield self.finding(
            ctx, instr,
            f"%{instr.name} multiplies with {why} ({what}): the MXU runs f32 as several bf16 "
            f"passes; {flops:.3g} FLOPs",
            evidence={"operands": [str(s) for s in shapes], "precision": precision},
            cost=cost,
            help="Cast inputs to bf16 and keep f32 accumulation "
                 "(preferred_element_type=jnp.float32), or use precision=DEFAULT.",
        )
