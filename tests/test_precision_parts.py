"""hloscope.cost.precision's table, case by case, worked out by hand from the rules its
docstring states (measured on TPU estimated cycles, tests/test_precision.py, and on an H100,
fixtures/h100*), and a cuBLAS call's precision read from its config."""

from __future__ import annotations

import pytest

from hloscope.cost.chips import get_chip
from hloscope.cost.precision import matmul_kind, matmul_peak, peak_for, precision_of


@pytest.mark.parametrize(("types", "precision", "algorithm", "platform", "kind"), [
    (("f32", "f32"), "default", None, "tpu", ("bf16", 1)),
    (("f32", "f32"), "high", None, "tpu", ("bf16", 3)),
    (("f32", "f32"), "highest", None, "tpu", ("bf16", 6)),
    (("f32", "f32"), "bogus", None, "tpu", ("bf16", 1)),
    (("f32", "f32"), "default", "dot_f32_f32_f32", "tpu", ("bf16", 6)),    # (f32 as 6 bf16 passes)
    (("f32", "f32"), "default", "dot_tf32_tf32_f32", "tpu", ("bf16", 3)),  # (tf32 as 3)
    (("f32", "f32"), "default", "DOT_BF16_BF16_F32_X3", "tpu", ("bf16", 3)),
    (("f32", "f32"), "default", "dot_f32_f32_f32", "gpu", ("f32", 1)),
    (("f32", "f32"), "default", "dot_tf32_tf32_f32", "gpu", ("tf32", 1)),
    (("f32", "f32"), "default", "not_a_preset", "gpu", ("tf32", 1)),       # (unknown: by the types)
    (("f32", "f32"), "default", None, "gpu", ("tf32", 1)),
    (("f32", "f32"), "high", None, "gpu", ("tf32", 1)),
    (("f32", "f32"), "highest", None, "gpu", ("f32", 1)),
    (("f64", "f64"), "highest", None, "gpu", ("f64", 1)),
    (("c128", "c128"), "default", None, "gpu", ("f64", 1)),
    (("bf16", "bf16"), "highest", None, "gpu", ("bf16", 1)),
    (("s8", "s8"), "default", None, "tpu", ("int8", 1)),
    (("s8", "bf16"), "default", None, "tpu", ("bf16", 1)),                  # (mixed: not all int8)
    (("f8e4m3fn", "f8e5m2"), "default", None, "gpu", ("fp8", 1)),
    (("F32", "BF16"), "highest", None, "gpu", ("f32", 1)),                  # (types in any case)
    (("f32", "f32"), "highest", None, "cpu", ("f32", 1)),
    ((), "default", None, "tpu", ("bf16", 1)),
])
def test_matmul_kind(types, precision, algorithm, platform, kind):
    assert matmul_kind(types, precision, algorithm, platform) == kind


def test_the_default_platform_is_a_tpu():
    assert matmul_kind(("f32", "f32"), "highest") == ("bf16", 6)


@pytest.mark.parametrize(("text", "level"), [
    (None, "default"), ("", "default"), ("{default,default}", "default"),
    ("{high,default}", "high"), ("{HIGHEST,high}", "highest"), ("{ highest , default }", "highest"),
    ("{fancy}", "fancy"), ("{default,fancy}", "default"),  # (an unknown word ranks as default)
    ("{default,high}", "high"), ("{default,highest}", "highest"),  # (the strictest, wherever it is)
    ("{}", "default"), ("{ , }", "default"),  # (braces with nothing named)
])
def test_precision_of(text, level):
    assert precision_of(text) == level


def test_peaks_per_kind_on_an_h100():
    h100 = get_chip("h100")
    assert peak_for(h100, "bf16") == 989e12 and peak_for(h100, "bf16", 3) == 989e12 / 3
    assert peak_for(h100, "tf32") == 494.5e12 and peak_for(h100, "f32") == 67e12
    assert peak_for(h100, "fp8") == peak_for(h100, "int8") == 1979e12
    assert peak_for(h100, "f64") == 67e12
    assert peak_for(h100, "bf16", 0) == 989e12  # (no pass count: one)
    assert peak_for(h100, "what") == 989e12
    assert matmul_peak(h100, ("f32", "f32"), "highest") == 67e12


def test_peaks_fall_back_where_a_chip_has_no_such_unit():
    v4 = get_chip("v4")  # (no int8 or fp8 rate of its own: bf16's)
    assert peak_for(v4, "int8") == v4.peak_bf16_flops
    assert peak_for(v4, "fp8") == v4.peak_bf16_flops


def test_a_chips_own_f64_rate_is_its_f64_peak():
    """(the H100's f64 and f32 peaks are both 67 TFLOP/s: a chip whose f64 rate differs tells
    them apart) A chip file's f64 rate is used for f64 matmuls; without one, its f32 rate."""
    from dataclasses import replace

    h100 = get_chip("h100")
    slow = replace(h100, peak_f64_flops=34e12)
    assert peak_for(slow, "f64") == 34e12 and matmul_peak(slow, ("f64", "f64")) == 34e12
    assert peak_for(replace(h100, peak_f64_flops=None), "f64") == h100.peak_f32_flops


def test_an_algorithm_sets_the_peak_whatever_the_types():
    """XLA's algorithm presets (DotAlgorithmPreset): on a TPU, BF16_BF16_F32_X3 is three bf16
    passes; on an H100, TF32_TF32_F32 runs at the TF32 rate, though the operands are f32 and
    the precision DEFAULT would say the same."""
    v5e, h100 = get_chip("v5e"), get_chip("h100")
    assert matmul_peak(v5e, ("f32", "f32"), "default", "dot_bf16_bf16_f32_x3") == v5e.peak_bf16_flops / 3
    assert matmul_peak(v5e, ("f32", "f32"), "default") == v5e.peak_bf16_flops
    assert matmul_peak(h100, ("f32", "f32"), "highest", "dot_tf32_tf32_f32") == 494.5e12
    assert matmul_peak(h100, ("f32", "f32"), "highest") == 67e12
