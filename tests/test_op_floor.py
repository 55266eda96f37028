"""The per-op floor (chips.toml `op_floor_s`): what an op of a scheduled program takes however
small. Oracles: the measured self times of XProf's real TPU training capture (the corpus's
golden hlo_stats) and XLA's own `estimated_cycles` of the tiny ops in real v5e/v5p compiles."""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest

from hloscope.cost.chips import get_chip
from hloscope.cost.roofline import roofline
from hloscope.parser import load
from hloscope.sharding.step import estimate

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT.parent / "shared/corpus/xprof/integration_golden/data_tpu-training_hlo_stats_tpu_training.json.gz"
TINY = 0.05e-6  # a roofline bound this small: the op's bytes and FLOPs take a few dozen cycles


def test_tpu_floor_is_the_measured_time_of_small_ops_on_a_real_tpu():
    if not CAPTURE.exists():
        pytest.skip("shared/corpus not beside the repository")
    table = json.loads(gzip.decompress(CAPTURE.read_bytes()))
    cols = [c["id"] for c in table["cols"]]
    small = []
    for row in table["rows"]:
        r = dict(zip(cols, [cell.get("v") if cell else None for cell in row["c"]]))
        category = r["category"]
        if category in ("while", "custom-call") or "start" in category or "done" in category:
            continue
        moved = (r["measured_memory_bw"] or 0) * 2**30 * r["avg_self_time"] * 1e-6
        if moved < 64 * 1024:
            small.append(r["avg_self_time"] * 1e-6)
    measured = statistics.median(small)
    assert len(small) >= 30
    for key in ("v4", "v5e", "v5p", "v6e", "v7x"):
        assert get_chip(key).op_floor_s == pytest.approx(measured, rel=0.1), key


def test_small_ops_land_on_xlas_own_estimate_over_every_tpu_compile():
    """Ops that move under 64 KiB with a bound of a few dozen cycles (the capture's small
    ops), in every optimized TPU compile of fixtures/: XLA estimates them at its own floor."""
    manifest = json.loads((ROOT / "fixtures/manifest.json").read_text())
    with_floor, bound_only = [], []
    for entry in manifest.values():
        if entry["platform"] != "tpu" or entry.get("stage") != "compiled" or entry.get("bytes", 0) > 3e6:
            continue
        chip = get_chip(entry["topology"].split(":")[0])
        for module in load(ROOT / "fixtures" / entry["file"]):
            for r in roofline(module, chip).rows:
                if r.estimated_seconds and r.bytes < 64 * 1024 and r.t_bound < TINY:
                    with_floor.append(r.t_estimate / r.estimated_seconds)
                    bound_only.append(r.t_bound / r.estimated_seconds)
    assert len(with_floor) >= 300
    assert statistics.median(bound_only) < 0.05  # the roofline alone: far under XLA's figure
    assert 0.8 <= statistics.median(with_floor) <= 1.25
    assert sum(1 / 1.5 <= x <= 1.5 for x in with_floor) >= 0.9 * len(with_floor)


def test_floor_applies_to_ops_that_run_alone_and_feeds_the_step():
    module = load(ROOT / "fixtures/tpu/train_16_layers_v5e.hlo.txt")[0]
    chip = get_chip("v5e")
    report = roofline(module, chip)
    for r in report.rows:
        alone = not r.opcode.endswith(("-start", "-done", "-update")) and r.opcode not in (
            "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
        assert r.t_floor == (chip.op_floor_s if alone else 0.0), r.instruction
        assert r.t_estimate == max(r.t_compute, r.t_memory, r.t_floor)
    step = estimate(module, chip, report)
    floored = [r for r in report.rows if r.t_bound < r.t_floor]
    assert floored
    # the hand sum: every op with no collective or copy of its own, at max(bound, floor)
    assert step.floor_seconds == pytest.approx(sum((r.t_floor - r.t_bound) * r.times for r in floored))
    assert step.op_floor_seconds == chip.op_floor_s
    assert report.totals_json()["t_estimate"] > report.totals_json()["t_roofline"]


def test_no_floor_before_optimization_nor_where_no_capture_measured_one():
    before = ROOT / "fixtures/conformance/cond_branch.before_optimizations.hlo.txt"
    report = roofline(load(before)[0], get_chip("v5e"))
    assert report.rows and all(r.t_floor == 0.0 for r in report.rows)
    assert get_chip("h100").op_floor_s is None
    cpu = roofline(load(ROOT / "fixtures/conformance/cond_branch.cpu.hlo.txt")[0], get_chip("cpu"))
    assert all(r.t_estimate == r.t_bound for r in cpu.rows)


def test_gpu_floors_are_the_smallest_kernels_their_captures_measured():
    """MI300X: the smallest op of the corpus's TraceLens capture (XProf's hlo_stats of it in
    fixtures/gpu); V100: the smallest kernels on the compute streams of the corpus's TF2
    multi-worker capture. NVIDIA chips no capture here measures have none."""
    mi300x = json.loads((ROOT / "fixtures/gpu/tracelens_jax08_gemm_mi300x.hlo_stats.json").read_text())
    cols = [c["id"] for c in mi300x["cols"]]
    smallest = min(dict(zip(cols, [c.get("v") if c else None for c in r["c"]]))["avg_self_time"]
                   for r in mi300x["rows"]) * 1e-6
    assert get_chip("mi300x").op_floor_s == pytest.approx(smallest, rel=0.05)
    capture = ROOT.parent / "shared/corpus/xprof/demo_GPU-multi-worker/34.83.195.179_6003.xplane.pb"
    if not capture.exists():
        pytest.skip("shared/corpus not beside the repository")
    from hloscope.trace.xspace_pb import read_xspace

    kernels = [e.duration_ns * 1e-9 for plane in read_xspace(capture.read_bytes()) for line in plane.lines
               if "Compute" in line.name for e in line.events if e.name.startswith("void ")]
    assert len(kernels) > 100
    assert get_chip("v100").op_floor_s == pytest.approx(min(kernels), rel=0.05)
    assert get_chip("a100").op_floor_s is None

