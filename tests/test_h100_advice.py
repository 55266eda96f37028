"""Advice tested on the device (fixtures/h100_advice, `h100_capture.py --set advice` on an
NVIDIA H100 80GB HBM3, jax 0.11.2): each pair is a program a finding flags and the program
its advice asks for, compiled, run and captured together. The oracles are XLA's own
memory_analysis() of both executables and the kernels measured in the capture."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

import hloscope
from hloscope.parser import load
from hloscope.trace import join, load_profile

FOLDER = FIXTURES / "h100_advice"
MANIFEST = json.loads((FOLDER / "manifest.json").read_text())["programs"]
MiB = 2**20


def _dump(program_id: int):
    (path,) = (FOLDER / "dump").glob(f"module_{program_id:04d}.*after_optimizations.txt")
    return path


@pytest.fixture(scope="module")
def measured():
    """label -> op -> mean seconds per run, and the device time of one run of each program."""
    modules = [m for p in sorted((FOLDER / "dump").glob("*after_optimizations.txt")) for m in load(p)]
    index = join(load_profile(FOLDER / "capture.xplane.pb"), modules)
    ops, per_run = {}, {}
    for m in modules:
        pid = int(m.path.split("module_")[1].split(".")[0])
        rows = {i.name: index.get(i, m) for i in m.instructions()}
        ops[pid] = {name: s.total_ns / 5 * 1e-9 for name, s in rows.items() if s is not None}
        per_run[pid] = sum(ops[pid].values())
    return ops, per_run


def _codes(path, trace=None) -> set[str]:
    program = hloscope.load(path)
    found = program.lint(trace=hloscope.load_profile(trace) if trace else None).findings
    return {f.code for f in found}


def test_h001_donating_the_scan_carry_removes_the_copy(measured):
    """H001 flags the 32 MiB copy of the undonated carry and is silent once it is donated;
    XLA's peak falls by those 32 MiB and the copy's 22 us per call leave the capture."""
    ops, _ = measured
    assert "H001" in _codes(_dump(0)) and "H001" not in _codes(_dump(18523))
    before, after = MANIFEST["scan_layers_bf16"], MANIFEST["scan_layers_donated_bf16"]
    assert after["donated"] == [1] and after["memory_analysis"]["alias_size_in_bytes"] == 32 * MiB
    drop = before["memory_analysis"]["peak_memory_in_bytes"] - after["memory_analysis"]["peak_memory_in_bytes"]
    assert drop == 32 * MiB
    assert ops[0]["copy.9"] > 20e-6 and ops[18523]["copy.9"] < 2e-6


def test_t004_the_fp8_weight_given_as_n_by_k_needs_no_transpose(measured):
    """cuBLAS runs fp8 as TN: a [K,N] weight is transposed first (T001 and T004 flag the
    transpose: 473 us, 11.8x its bound). Given as [N,K], there is no transpose and no
    finding; XLA's temporaries fall by the 64 MiB copy and a call's device time by 40%."""
    ops, per_run = measured
    capture = FOLDER / "capture.xplane.pb"
    assert {"T001", "T004"} <= _codes(_dump(19186), capture)
    assert not {"T001", "T004"} & _codes(_dump(33071), capture)
    assert ops[19186]["wrapped_transpose"] > 400e-6 and "wrapped_transpose" not in ops[33071]
    before, after = MANIFEST["gemm_fp8_w_kn"], MANIFEST["gemm_fp8_w_nk"]
    assert (before["memory_analysis"]["temp_size_in_bytes"] - after["memory_analysis"]["temp_size_in_bytes"]
            == 64 * MiB)  # (the transposed weight)
    assert per_run[33071] < 0.65 * per_run[19186]


UNROLL = FIXTURES / "h100_unroll"  # the scan and the same scan unrolled, run together


def test_t004_a_loops_slice_copies_go_when_the_scan_is_unrolled():
    """XLA GPU copies each layer's weight slice out of the stacked array (a 32 MiB memcpy per
    iteration, 9% of the step): T004 says so and advises unrolling. Unrolled, the slices are
    read in place: no T004, XLA's temporaries down by 64 MiB, and the device time of a call
    (its ops' measured time added up) lower."""
    modules = {int(p.name.split(".")[0][len("module_"):]): p
               for p in (UNROLL / "dump").glob("*after_optimizations.txt")}
    capture = hloscope.load_profile(UNROLL / "capture.xplane.pb")
    (finding,) = [f for f in hloscope.load(modules[0]).lint(trace=capture).findings if f.code == "T004"]
    assert finding.instruction == "loop_dynamic_slice_fusion.1" and finding.evidence["loop_slice"] is True
    assert "unroll=True" in finding.help
    assert not [f for f in hloscope.load(modules[18523]).lint(trace=capture).findings if f.code == "T004"]
    manifest = json.loads((UNROLL / "manifest.json").read_text())["programs"]
    temp = {k: v["memory_analysis"]["temp_size_in_bytes"] for k, v in manifest.items()}
    # (two layers' slices; the loop's own tuple tables and counter are the last kilobyte)
    assert 64 * MiB <= temp["scan_layers_bf16"] - temp["scan_layers_unrolled_bf16"] < 64 * MiB + 2048
    loaded = [m for p in modules.values() for m in load(p)]
    index = join(load_profile(UNROLL / "capture.xplane.pb"), loaded)
    device = {m.name: sum(s.total_ns for (label, _), s in index.stats.items() if label == index.label(m)) / 5
              for m in loaded}
    assert device["jit_scan_unrolled"] < 0.95 * device["jit_scan_layers"]
