"""H010 f32-matmul: TPU matmuls at precision HIGH/HIGHEST, which run as several bf16 MXU passes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.cost.precision import matmul_kind, peak_for
from hloscope.cost.roofline import matmul_spec
from hloscope.ir import Instruction, Shape
from hloscope.rules.base import MATMUL, Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.registry import register


@register
class F32Matmul(InstructionRule):
    """TPU matmuls at precision HIGH/HIGHEST: three or six bf16 MXU passes.

    An f32 matmul at DEFAULT precision runs as one bf16 pass (XLA's estimated cycles equal
    bf16's), so it is not flagged: there is nothing to gain."""

    code = "H010"
    name = "f32-matmul"
    severity = Severity.WARNING
    summary = "dot/convolution at precision HIGH/HIGHEST on a TPU (several bf16 MXU passes)"
    targets = MATMUL
    include_fused = True

    @dataclass(frozen=True)
    class Options:
        min_flops: float = 1e8

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.is_tpu:
            return
        types, precision, algorithm = matmul_spec(ctx.model, instr)  # (as the roofline reads it)
        kind, passes = matmul_kind(types, precision, algorithm, "tpu")
        if passes <= 1:
            return
        flops = ctx.model.compute(instr).flops
        if flops < self.options.min_flops:
            return
        shapes: list[Shape] = ctx.model.operand_shapes(instr)[:2]
        what = " x ".join(str(s) for s in shapes)
        why = f"algorithm={algorithm}" if algorithm else f"precision={precision.upper()}"
        cost: dict[str, float] = {}
        if ctx.chip is not None:
            cost["est_seconds"] = flops / peak_for(ctx.chip, kind, passes) - flops / peak_for(ctx.chip, kind)
        yield self.finding(
            ctx, instr,
            f"%{instr.name} multiplies {what} at {why}: {passes} bf16 MXU passes where "
            f"DEFAULT precision takes one; {flops:.3g} FLOPs",
            evidence={"operands": [str(s) for s in shapes], "precision": precision,
                      "algorithm": algorithm, "passes": passes},
            cost=cost,
            help="Use the default precision (drop precision=HIGHEST/HIGH, or set "
                 "jax_default_matmul_precision back to 'default'): f32 inputs then run as one bf16 "
                 "pass with f32 accumulation, as fast as bf16 inputs. Keep HIGH (3 passes) only "
                 "where a measured accuracy need calls for it.",
        )
