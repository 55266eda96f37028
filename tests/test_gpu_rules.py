"""GPU rules on real GPU modules (XLA's own GPU tests and a real MI300X compile), with
figures worked by hand."""

from __future__ import annotations

from conftest import FIXTURES

from hloscope.lint import LintOptions, lint_files

G001 = FIXTURES / "rules" / "G001"


def _g001(path, **kw):
    return lint_files([path], LintOptions(select=["G001"], **kw)).findings


def test_g001_overhang_of_xla_triton_test():
    # 64x64 tiles on 32x57: one tile of 4096 for 1824 outputs: 1 - 1824/4096 = 55.5%
    (f,) = _g001(G001 / "tile_overhang_gpu.hlo.txt")
    assert f.evidence["grid"] == 1 and round(f.evidence["waste"], 3) == 0.555
    assert f.severity.name == "INFO"  # a 12 kFLOP GEMM: a note


def test_g001_wave_quantization_needs_a_known_gpu(tmp_path):
    """The real MI300X module: a 256x256 output in 16x16 tiles is a grid of 256 blocks. On the
    MI300X's 304 CUs that is one wave (silent); on a 200-SM GPU two waves, the last 56 of
    200: 256 / 400 = 64% of the SM-time (fires); on an assumed chip nothing is judged."""
    path = G001 / "mi300x_gemm_fusion_gpu.hlo.txt"
    assert _g001(path) == [] and _g001(path, chip="mi300x") == []
    chip = tmp_path / "gpu200.toml"
    chip.write_text('[gpu200]\nname = "a 200-SM GPU"\npeak_bf16_flops = 1e15\npeak_f32_flops = 6e13\n'
                    'hbm_bandwidth = 3e12\nhbm_bytes = 80000000000\nsm_count = 200\nplatform_name = "gpu"\n')
    (f,) = _g001(path, chip=str(chip))
    assert (f.evidence["grid"], f.evidence["sm_count"]) == (256, 200)
    assert f.evidence["wave_efficiency"] == 0.64
    assert "the last 56 of 200" in f.message
