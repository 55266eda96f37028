"""The step estimate of a loop, worked out by hand (tests/data/step_loop.hlo, HAND-WRITTEN):
inside a 3-trip while body an async all-gather and an async copy are both hidden by a
64x64 dot; every figure is counted once per trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from hloscope.cost.chips import get_chip
from hloscope.cost.roofline import roofline
from hloscope.parser import load
from hloscope.sharding.step import estimate

MODULE = Path(__file__).with_name("data") / "step_loop.hlo"
TRIPS = 3
FLOOR = 1.2e-6  # v5p's per-op floor (chips.toml)
LINKS = 2 * 9e10  # v5p: two one-way ICI links of 90 GB/s on the gather's axis


@pytest.fixture(scope="module")
def step():
    (m,) = load(MODULE)
    chip = get_chip("v5p")
    report = roofline(m, chip)
    return estimate(m, chip, report), {r.instruction: r for r in report.rows}


def test_the_gather_is_hidden_on_every_trip(step):
    s, _ = step
    (c,) = s.collectives
    moved = 3 / 4 * 256 * 64 * 4  # each of 4 devices receives 3/4 of the f32[256,64] result
    assert (c.instruction, c.times, c.moved_bytes) == ("ags", TRIPS, moved)
    assert c.seconds == pytest.approx(moved / LINKS)
    assert c.overlapped_by == ["busy"] and c.overlap_seconds == pytest.approx(FLOOR)
    assert c.hidden_seconds == pytest.approx(c.seconds) and c.exposed_seconds == 0.0
    assert s.collective_seconds == pytest.approx(TRIPS * moved / LINKS)
    assert s.hidden_seconds == pytest.approx(TRIPS * moved / LINKS)
    assert s.exposed_seconds == 0.0 and s.links == "ICI"


def test_the_copy_is_counted_per_trip_and_hidden(step):
    s, rows = step
    assert rows["cs"].times == TRIPS
    # (the block read from HBM once per trip; its destination is VMEM, S(1))
    assert s.copies_seconds == pytest.approx(TRIPS * 64 * 64 * 4 / get_chip("v5p").hbm_bandwidth, rel=1e-3)
    assert s.copies_exposed_seconds == 0.0


def test_the_ops_are_the_rest_at_the_floor(step):
    """busy, j, y and the condition's compare: each under v5p's 1.2 us floor, each run 3
    times; the gather's and the copy's halves are timed apart."""
    s, rows = step
    mine = ["busy", "j", "y", "c"]
    assert all(rows[n].t_bound < FLOOR for n in mine)
    assert s.ops_seconds == pytest.approx(len(mine) * TRIPS * FLOOR)
    assert s.floor_seconds == pytest.approx(sum((FLOOR - rows[n].t_bound) * TRIPS for n in mine))
    assert s.op_floor_seconds == FLOOR
    assert s.step_seconds == pytest.approx(s.ops_seconds)
    assert s.peak_flops == 459e12  # v5p's bf16 peak
    assert s.mfu == pytest.approx(s.flops / (s.step_seconds * 459e12))
