"""Matmul rates by operand type and precision, against XLA's own estimated_cycles.

fixtures/precision/ holds one real 2048^3 dot per operand type and precision, compiled
deviceless for v5e and v5p (fixtures/generate.py, PRECISION_CASES). XLA's TPU compiler writes
its estimate of the dot's fusion into backend_config (estimated_cycles): its ratio to the bf16
case is the oracle for the ratio of hloscope's per-op times.
"""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES

from hloscope.cost.chips import get_chip
from hloscope.cost.precision import matmul_kind
from hloscope.cost.roofline import roofline
from hloscope.lint import LintOptions, lint_files
from hloscope.parser import load

PRECISION = FIXTURES / "precision"
CASES = ("bf16_f32acc", "f32_default", "f32_high", "f32_highest", "int8", "fp8")


def _dot_row(path):
    """The roofline row of the fusion that holds the dot, and XLA's estimated cycles of it."""
    report = roofline(load(path)[0], get_chip(path.name.rsplit("_", 1)[1].split(".")[0]))
    (row,) = [r for r in report.rows if r.estimated_cycles and r.flops >= 2 * 2048**3]
    return row


@pytest.mark.parametrize("chip", ["v5e", "v5p"])
@pytest.mark.parametrize("case", CASES)
def test_time_ratio_to_bf16_follows_xla_estimated_cycles(chip, case):
    base = _dot_row(PRECISION / f"bf16_{chip}.hlo.txt")
    row = _dot_row(PRECISION / f"{case}_{chip}.hlo.txt")
    xla = row.estimated_cycles / base.estimated_cycles
    ours = row.t_compute / base.t_compute
    assert ours / xla == pytest.approx(1.0, rel=0.5) or 1 / 1.5 <= ours / xla <= 1.5, (case, ours, xla)
    # bytes stay those of the real operand types: f32 moves twice bf16's
    if case.startswith("f32"):
        assert row.hbm_bytes > base.hbm_bytes


def test_the_fixtures_print_precision_as_the_rate_assumes():
    """What the rule and the rate read: DEFAULT prints nothing, HIGH/HIGHEST print
    operand_precision (if XLA ever printed DEFAULT's, the tests above would still hold, but
    H010's silence on it is what users see)."""
    for chip in ("v5e", "v5p"):
        assert "operand_precision" not in (PRECISION / f"f32_default_{chip}.hlo.txt").read_text()
        for level in ("high", "highest"):
            text = (PRECISION / f"f32_{level}_{chip}.hlo.txt").read_text()
            assert re.search(rf"operand_precision={{{level},{level}}}", text)


@pytest.mark.parametrize(("types", "precision", "algorithm", "platform", "expected"), [
    (("f32", "f32"), "default", None, "tpu", ("bf16", 1)),
    (("f32", "f32"), "high", None, "tpu", ("bf16", 3)),
    (("f32", "f32"), "highest", None, "tpu", ("bf16", 6)),
    (("bf16", "bf16"), "highest", None, "tpu", ("bf16", 1)),  # bf16 inputs: one pass anyway
    (("s8", "s8"), "default", None, "tpu", ("int8", 1)),
    (("f32", "f32"), "default", "dot_bf16_bf16_f32_x3", "tpu", ("bf16", 3)),
    (("f32", "f32"), "default", None, "gpu", ("tf32", 1)),
    (("f32", "f32"), "highest", None, "gpu", ("f32", 1)),
    (("f32", "f32"), "default", "dot_tf32_tf32_f32", "gpu", ("tf32", 1)),
])
def test_matmul_kind_hand_derived(types, precision, algorithm, platform, expected):
    assert matmul_kind(types, precision, algorithm, platform) == expected


def test_h010_silent_on_default_fires_on_high_and_highest():
    def codes(path):
        return [f.code for f in lint_files([path], LintOptions(select=["H010"])).findings]

    for chip in ("v5e", "v5p"):
        assert codes(PRECISION / f"f32_default_{chip}.hlo.txt") == []
        assert codes(PRECISION / f"bf16_f32acc_{chip}.hlo.txt") == []
        assert codes(PRECISION / f"f32_high_{chip}.hlo.txt") == ["H010"]
        (found,) = lint_files([PRECISION / f"f32_highest_{chip}.hlo.txt"],
                              LintOptions(select=["H010"], chip=chip)).findings
        assert found.evidence["passes"] == 6
        # the saving: 5 of 6 passes of 2 x 2048^3 FLOPs at the chip's bf16 peak
        peak = get_chip(chip).peak_bf16_flops
        assert found.cost["est_seconds"] == pytest.approx(2 * 2048**3 * 5 / peak)


def test_pallas_bf16_inputs_f32_output_priced_at_the_bf16_rate():
    """A 4096^3 Pallas matmul with bf16 inputs and f32 accumulation/output: its body's
    tpu.matmul takes bf16 vectors, so its 2 x 4096^3 FLOPs run at v5e's bf16 peak
    (0.698 ms), not at the six-pass f32 rate (4.19 ms)."""
    report = roofline(load(FIXTURES / "tpu" / "pallas_matmul_f32acc_v5e.hlo.txt")[0], get_chip("v5e"),
                      kernel_costs=_body_costs(FIXTURES / "tpu" / "pallas_matmul_f32acc_v5e.hlo.txt"))
    (row,) = [r for r in report.rows if r.opcode == "custom-call"]
    # (the body's FLOPs also count its accumulator adds: 4096^2 per k step, 8 steps, 0.1%)
    assert row.flops == 2 * 4096**3 + 4096**2 * 8
    assert row.t_compute == pytest.approx(row.flops / 197e12)
    assert row.t_compute < 0.75e-3


def _body_costs(path):
    from hloscope.mlir.cost import body_costs

    return body_costs(load(path)[0])
