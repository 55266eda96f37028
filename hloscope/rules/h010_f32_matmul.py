"""H010 f32-matmul: matmuls at a precision that leaves the fast path: on a TPU, HIGH/HIGHEST run as
several bf16 MXU passes; on a GPU, f32 at HIGHEST runs without TF32 tensor cores."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.cost.library import GEMM
from hloscope.cost.precision import matmul_kind, peak_for
from hloscope.cost.roofline import matmul_spec
from hloscope.ir import Instruction, Shape
from hloscope.rules.base import MATMUL, Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.registry import register


@register
class F32Matmul(InstructionRule):
    """TPU matmuls at precision HIGH/HIGHEST: three or six bf16 MXU passes; GPU f32 matmuls at
    HIGHEST: the f32 peak of the CUDA cores instead of TF32 tensor cores, as a dot or as the
    cuBLAS gemm XLA makes of it (its gemm_backend_config states the precision). On an H100
    the f32 4096^3 gemm ran 2,660 us at HIGHEST and 344 us at DEFAULT (fixtures/h100).

    An f32 matmul at DEFAULT precision runs as one bf16 pass on a TPU (XLA's estimated cycles
    equal bf16's) and as TF32 on a GPU's tensor cores, so it is not flagged: there is nothing
    to gain."""

    code = "H010"
    name = "f32-matmul"
    severity = Severity.WARNING
    summary = ("dot/convolution at precision HIGH/HIGHEST on a TPU (several bf16 MXU passes), "
               "f32 at HIGHEST on a GPU (no tensor cores)")
    targets = MATMUL | {"custom-call"}  # (a cuBLAS gemm: what XLA GPU makes of a dot)
    located = True  # (its findings are at the instruction checked)
    include_fused = True

    class Options(RuleOptions):
        min_flops: float = 1e8

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if instr.opcode == "custom-call" and not (
                ctx.platform == "gpu" and str(instr.attr("custom_call_target") or "").startswith(GEMM)):
            return
        if ctx.platform == "gpu":
            yield from self._gpu(instr, ctx)
            return
        if not ctx.is_tpu:
            return
        types, precision, algorithm = matmul_spec(ctx.model, instr)  # (as the roofline reads it)
        kind, passes = matmul_kind(types, precision, algorithm, "tpu")
        if passes <= 1:
            return
        described = self._described(instr, ctx, precision, algorithm)
        if described is None:
            return
        flops, shapes, what, why = described
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

    def _described(self, instr: Instruction, ctx: RuleContext, precision: str,
                   algorithm: str | None) -> tuple[float, list[Shape], str, str] | None:
        """(FLOPs, operand shapes, them in words, the precision in words), or None when the
        matmul is too small to report."""
        flops = ctx.model.compute(instr).flops
        if flops < self.options.min_flops:
            return None
        shapes: list[Shape] = ctx.model.operand_shapes(instr)[:2]
        why = f"algorithm={algorithm}" if algorithm else f"precision={precision.upper()}"
        return flops, shapes, " x ".join(str(s) for s in shapes), why

    def _gpu(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        """f32 operands at HIGHEST (or an f32 algorithm) run at the CUDA cores' f32 peak."""
        types, precision, algorithm = matmul_spec(ctx.model, instr)
        kind, _ = matmul_kind(types, precision, algorithm, "gpu")
        chip = ctx.chip or ctx.assumed_chip
        if kind != "f32" or chip is None or not chip.peak_tf32_flops \
                or chip.peak_tf32_flops <= chip.peak_f32_flops:
            return
        described = self._described(instr, ctx, precision, algorithm)
        if described is None:
            return
        flops, shapes, what, why = described
        f32, tf32 = peak_for(chip, "f32"), peak_for(chip, "tf32")
        yield self.finding(
            ctx, instr,
            f"%{instr.name} multiplies {what} at {why}: no tensor cores, the {chip.name}'s f32 "
            f"peak {f32 / 1e12:.0f} TFLOP/s where DEFAULT precision runs TF32 tensor cores at "
            f"{tf32 / 1e12:.0f}; {flops:.3g} FLOPs",
            evidence={"operands": [str(s) for s in shapes], "precision": precision,
                      "algorithm": algorithm, "peak_f32": f32, "peak_tf32": tf32},
            cost={"est_seconds": flops / f32 - flops / tf32},
            help="Use the default precision (drop precision=HIGHEST, or set "
                 "jax_default_matmul_precision back to 'default'): f32 inputs then run on TF32 "
                 "tensor cores. Where TF32's 10-bit mantissa is not enough, "
                 "precision=jax.lax.DotAlgorithmPreset.BF16_BF16_F32_X3 keeps about f32 accuracy "
                 "on the tensor cores; keep HIGHEST only where a measured accuracy need calls "
                 "for it.",
        )
