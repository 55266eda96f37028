"""The rate a matmul runs at: its operand types and precision pick the matrix unit's passes.

What XLA prints and does (measured on deviceless TPU compiles, jax 0.10.2 / libtpu 0.0.42,
XLA's own `estimated_cycles` of a 2048^3 dot; tests/test_precision.py):

- f32 operands at precision DEFAULT run as one bf16 MXU pass: the same cycles as bf16 inputs.
  XLA prints no `operand_precision` then.
- `operand_precision={high,high}` (also `DotAlgorithmPreset.BF16_BF16_F32_X3`): three passes,
  2.85x bf16 on v5e and v5p. `{highest,highest}` (`..._X6`): six passes, 5.7x.
- int8 x int8 runs at the chip's int8 rate (2x bf16 on v5e, v5p, v6e; v4 has none: bf16's).
- fp8 runs at the fp8 rate where the chip has one (v7x), else as bf16.

On GPUs an f32 matmul at DEFAULT or HIGH precision runs on tensor cores as TF32 (XLA's
default), at HIGHEST on the f32 units; `algorithm=dot_tf32_tf32_f32` and the bf16 presets
say so explicitly. Bytes are never affected: they stay those of the real operand types.
"""

from __future__ import annotations

from hloscope.cost.chips import Chip

WIDE_FLOAT = frozenset(("f32", "f64", "c64", "c128"))
INT8 = frozenset(("s8", "u8", "s4", "u4", "s2", "u2"))
FP8 = frozenset(("f8e4m3fn", "f8e5m2", "f8e4m3", "f8e4m3b11fnuz", "f8e4m3fnuz", "f8e5m2fnuz",
                 "f8e3m4", "f4e2m1fn", "f8e8m0fnu"))
# MXU passes of an f32 matmul on a TPU, by the precision XLA prints (none printed: DEFAULT)
TPU_PASSES = {"default": 1, "high": 3, "highest": 6}
# algorithm= (DotAlgorithmPreset) -> (kind, passes): kind picks the peak, passes divide it
ALGORITHMS = {
    "dot_bf16_bf16_f32": ("bf16", 1), "dot_bf16_bf16_bf16": ("bf16", 1),
    "dot_bf16_bf16_f32_x3": ("bf16", 3), "dot_bf16_bf16_f32_x6": ("bf16", 6),
    "dot_bf16_bf16_f32_x9": ("bf16", 9),
    "dot_tf32_tf32_f32": ("tf32", 1), "dot_tf32_tf32_f32_x3": ("tf32", 3),
    "dot_f32_f32_f32": ("f32", 1), "dot_f64_f64_f64": ("f64", 1),
    "dot_f16_f16_f16": ("bf16", 1), "dot_f16_f16_f32": ("bf16", 1),
    "dot_any_f8_any_f8_f32": ("fp8", 1), "dot_any_f8_any_f8_f32_fast_accum": ("fp8", 1),
}


def precision_of(text: str | None) -> str:
    """The strictest precision in an `operand_precision={a,b}` text (default when absent)."""
    if not text:
        return "default"
    found = [p.strip().lower() for p in str(text).strip("{}").split(",") if p.strip()]
    order = ("default", "high", "highest")
    return max(found, key=lambda p: order.index(p) if p in order else 0, default="default")


def matmul_kind(types: tuple[str, ...], precision: str = "default",
                algorithm: str | None = None, platform: str = "tpu") -> tuple[str, int]:
    """(peak kind, passes) of a matmul with these operand element types: the kind names the
    chip's peak (bf16, int8, fp8, tf32, f32, f64) and the passes divide it."""
    if algorithm:
        found = ALGORITHMS.get(algorithm.strip().lower())
        if found is not None:
            kind, passes = found
            if platform == "tpu" and kind in ("f32", "tf32"):
                return "bf16", 6 if kind == "f32" else 3  # (TPUs emulate them with bf16 passes)
            return found
    types = tuple(t.lower() for t in types if t)
    if types and all(t in INT8 for t in types):
        return "int8", 1
    if types and all(t in FP8 for t in types):
        return "fp8", 1
    wide = [t for t in types if t in WIDE_FLOAT]
    if not wide:
        return "bf16", 1
    if platform == "tpu":
        return "bf16", TPU_PASSES.get(precision, 1)
    if platform == "gpu":
        if any(t in ("f64", "c128") for t in wide):
            return "f64", 1
        return ("f32", 1) if precision == "highest" else ("tf32", 1)
    return "f32", 1


def peak_for(chip: Chip, kind: str, passes: int = 1) -> float:
    """FLOP/s of a matmul of this kind on a chip."""
    peak = {
        "bf16": chip.peak_bf16_flops,
        "int8": chip.peak_int8_flops or chip.peak_bf16_flops,
        "fp8": chip.peak_fp8_flops or chip.peak_bf16_flops,
        "tf32": chip.peak_tf32_flops or chip.peak_f32_flops,
        "f32": chip.peak_f32_flops,
        "f64": chip.peak_f64_flops or chip.peak_f32_flops,
    }.get(kind, chip.peak_bf16_flops)
    return peak / max(passes, 1)


def matmul_peak(chip: Chip, types: tuple[str, ...], precision: str = "default",
                algorithm: str | None = None) -> float:
    """FLOP/s of a matmul with these operand types and precision on `chip`."""
    kind, passes = matmul_kind(types, precision, algorithm, chip.platform)
    return peak_for(chip, kind, passes)
