"""GPU captures read as XProf reads them: the corpus's two real MI300X JAX captures against
XProf's own hlo_stats of them (fixtures/gpu/*.hlo_stats.json, made by
fixtures/gpu_captures.py with the xprof package: an independent oracle)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, needs_corpus, xprof_hlo_stats

pytestmark = needs_corpus
CAPTURES = CORPUS / "gpu" / "tracelens-captures"
NAMES = ("tracelens_jax08_gemm_mi300x", "tracelens_conv3d_mi300x")


def xprof_rows(name: str) -> dict[tuple[int, str], tuple[int, float]]:
    """(program id, hlo op) -> (occurrences, total us) from XProf's hlo_stats."""
    rows = xprof_hlo_stats(ROOT / "fixtures" / "gpu" / f"{name}.hlo_stats.json")
    return {key: (int(v["occurrences"]), float(v["total_time"])) for key, v in rows.items()}


def modules_of(name: str) -> list[Path]:
    return sorted((CAPTURES / name).glob("*.hlo.txt"))


@pytest.fixture(scope="module")
def profiles():
    from hloscope.trace import load_profile

    return {name: load_profile(CAPTURES / f"{name}.xplane.pb") for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_kernel_events_equal_xprof_per_program_and_op(profiles, name):
    """Device kernels only (host launch calls apart), kept per program id: XProf's
    occurrences and total time for every (program, op), and nothing else."""
    ours: dict[tuple[int, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for ev in profiles[name].events:
        row = ours[(ev.program_id, ev.hlo_op)]
        row[0] += 1
        row[1] += ev.duration_ns / 1e3
    oracle = xprof_rows(name)
    assert set(ours) == set(oracle)
    for key, (count, total_us) in oracle.items():
        assert ours[key][0] == count, key
        assert ours[key][1] == pytest.approx(total_us, abs=0.01), key


@pytest.mark.parametrize("name", NAMES)
def test_joined_totals_equal_xprof_with_programs_apart(profiles, name):
    """With the capture's modules loaded (six named jit_dot), each program's ops are
    joined to its own module, and the per-op totals are XProf's."""
    from hloscope.dumpdir import program_id
    from hloscope.parser import load
    from hloscope.trace import join

    modules = [m for p in modules_of(name) for m in load(p)]
    index = join(profiles[name], modules)
    assert not index.unmatched
    oracle = xprof_rows(name)
    seen = {}
    for m in modules:
        for (label, op), s in index.stats.items():
            if label == index.label(m):
                seen[(program_id(m.path, m.name), op)] = (s.count, s.total_ns / 1e3)
    assert set(seen) == set(oracle)
    for key, (count, total_us) in oracle.items():
        assert seen[key][0] == count
        assert seen[key][1] == pytest.approx(total_us, abs=0.01)


def test_steps_are_executions_and_shares_are_per_device(profiles):
    """conv3d: 5 executions on each of 8 GPUs (the host's `XLA GPU module` events) are 5
    steps; the GEMM kernel program jit_dot(49) ran 3 times. An op's share is of one device's
    step: the shares sum to at most 100%."""
    from hloscope.parser import load
    from hloscope.trace import join

    conv = [m for p in modules_of(NAMES[1]) if "forward_3d_conv" in p.name for m in load(p)]
    index = join(profiles[NAMES[1]], conv)
    assert index.steps == 5
    assert index.devices == 8
    assert 0.5 < sum(index.share(s) for s in index.stats.values()) <= 1.0
    # cuDNN-style conv: two kernels (im2col + GEMM) per run, 79 kernels in 40 runs
    conv_op = index.stats[(conv[0].name, "cudnn-conv.1")]
    assert (conv_op.count, conv_op.executions) == (79, 40)
    dot49 = load(CAPTURES / NAMES[0] / "jit_dot.49.hlo.txt")
    assert join(profiles[NAMES[0]], dot49).steps == 3


def test_device_read_from_the_gpu_plane(profiles):
    from hloscope.trace.report import detect_chip

    for prof in profiles.values():
        assert "AMD" in prof.device and "304 CUs" in prof.device
        assert detect_chip(prof.device_kind).key == "mi300x"
        # launches on the host are counted apart: one per kernel or copy the device ran
        assert sum(c for c, _ in prof.launches.values()) >= len(prof.events)


def test_profile_command_on_a_gpu_capture():
    """The raw table tells programs that share a name apart, as XProf's program column does."""
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    result = CliRunner().invoke(app, ["profile", str(CAPTURES / f"{NAMES[0]}.xplane.pb")])
    assert result.exit_code == 0, result.output
    assert "jit_dot(49)" in result.output and "jit_dot(21)" in result.output
    assert "AMD Instinct MI300X" in result.output and "host:" in result.output


def test_the_op_table_is_per_step_not_summed_over_steps(profiles):
    """conv3d: XProf's total for input_transpose_fusion (14.344 ms over 5 executions on 8
    GPUs) is 358.6 us per step on one device."""
    from hloscope.parser import load
    from hloscope.trace import join
    from hloscope.trace.report import profile_report

    conv = [m for p in modules_of(NAMES[1]) if "forward_3d_conv" in p.name for m in load(p)]
    index = join(profiles[NAMES[1]], conv)
    report = profile_report(profiles[NAMES[1]], index, conv, None)
    row = next(r for r in report["instructions"] if r["instruction"] == "input_transpose_fusion")
    _, total_us = xprof_rows(NAMES[1])[(15, "input_transpose_fusion")]
    assert row["per_step_seconds"] == pytest.approx(total_us * 1e-6 / 5 / 8, rel=1e-9)
