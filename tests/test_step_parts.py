"""The step estimate's sums over loops and its identity fields (the mutation run of the
sharding package found them untested): every op counts once per trip, collectives inside a
scanned body count per trip, and the record names its module, chip and stage caveat."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from hloscope.cost.resolve import resolve_chip
from hloscope.cost.roofline import roofline
from hloscope.parser import load
from hloscope.sharding.step import estimate


def _step(path, chip=None):
    (m,) = load(path)
    c = resolve_chip(m, chip).chip
    r = roofline(m, c)
    return m, c, r, estimate(m, c, r)


def test_a_loop_bodys_ops_count_every_trip():
    """scan_cpu: no collective, so the ops' time is the roofline's trip-counted total."""
    m, c, r, s = _step(FIXTURES / "cpu" / "scan_cpu.hlo.txt")
    assert any(row.times == 6 for row in r.rows)
    assert s.ops_seconds == pytest.approx(sum(row.t_bound * row.times for row in r.rows), rel=1e-12)
    assert s.ops_seconds > sum(row.t_bound for row in r.rows)  # (once each would be less)
    assert s.step_seconds == pytest.approx(s.ops_seconds)
    assert (s.module, s.chip, s.platform) == (m.name, c.key, c.platform)
    assert s.peak_flops == c.peak_flops("bf16") and s.caveat is None


def test_collectives_in_a_scanned_body_count_every_trip():
    """The sharded scan train step on 8 v5p chips: its gradient all-reduces run inside the
    4-layer scan, 4 times a step."""
    m, c, r, s = _step(FIXTURES / "zoo" / "transformer_sharded_scan_train_v5p8.hlo.txt", "v5p")
    looped = [x for x in s.collectives if x.times == 4]
    assert looped and all(x.axis and x.group_size > 1 and x.links == "ICI" for x in s.collectives)
    assert s.collective_seconds == pytest.approx(sum(x.seconds * x.times for x in s.collectives), rel=1e-12)
    assert s.hidden_seconds == pytest.approx(sum(x.hidden_seconds * x.times for x in s.collectives), rel=1e-12)
    assert s.exposed_seconds == pytest.approx(sum(x.exposed_seconds * x.times for x in s.collectives), rel=1e-12)
    assert s.collective_seconds > sum(x.seconds for x in s.collectives)
    own = {x.instruction for x in s.collectives}
    ops = sum(row.t_estimate * row.times for row in r.rows if row.instruction not in own)
    assert s.ops_seconds <= ops + 1e-12  # (the collectives' dones and async copies are apart)
    assert s.ops_seconds > sum(row.t_bound for row in r.rows if row.instruction not in own) / 4
    assert s.links == "ICI"


def test_a_collectives_own_time_is_its_link_model_and_the_overlap_hides_it():
    m, c, r, s = _step(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt", "v5p")
    for x in s.collectives:
        assert x.hidden_seconds == pytest.approx(min(x.seconds, x.overlap_seconds))
        assert x.exposed_seconds == pytest.approx(x.seconds - x.hidden_seconds)
        assert bool(x.overlapped_by) == (x.overlap_seconds > 0)
    sync = [x for x in s.collectives if not x.is_async]
    assert sync and all(x.hidden_seconds == 0 and not x.overlapped_by for x in sync)


def test_a_module_before_optimization_carries_the_caveat():
    m, c, r, s = _step(FIXTURES / "tpu" / "shard_map_v5p.before_optimizations.hlo.txt", "v5p")
    assert s.caveat and s.caveat.startswith("a before_optimizations module (file name)")
    assert s.to_dict()["caveat"] == s.caveat and s.to_dict()["step_seconds"] == s.step_seconds


def test_the_caveat_says_what_to_cost_instead():
    *_, s = _step(FIXTURES / "tpu" / "shard_map_v5p.before_optimizations.hlo.txt", "v5p")
    assert s.caveat.endswith("costed as if one chip ran it all; its step time and MFU are "
                             "indicative only (cost the after_optimizations dump)")


def test_the_step_record_is_json_with_each_collectives_overlap_by_name():
    import json

    *_, s = _step(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt", "v5p")
    out = json.loads(json.dumps(s.to_dict()))
    assert len(out["collectives"]) == len(s.collectives) and out["step_seconds"] == s.step_seconds
    for row, x in zip(out["collectives"], s.collectives):
        assert row["overlapped_by"] == list(x.overlapped_by)
        assert all(isinstance(name, str) for name in row["overlapped_by"])
    assert any(row["overlapped_by"] for row in out["collectives"])


def test_a_collectives_time_record_is_its_fields_with_its_own_list_of_names():
    from dataclasses import fields

    from hloscope.sharding.step import CollectiveTime

    *_, s = _step(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt", "v5p")
    x = next(x for x in s.collectives if x.overlapped_by)
    row = x.to_dict()
    assert set(row) == {f.name for f in fields(CollectiveTime)}
    row["overlapped_by"].append("not-an-op")  # (the record's list is a copy)
    assert "not-an-op" not in x.overlapped_by


@pytest.mark.parametrize("name", ["fsdp_async_fusion_v5p", "llm_v5p_big", "fsdp_default_v5p"])
def test_what_an_async_copy_spans_is_the_sum_of_the_rows_between(name):
    """The estimate of the ops an async copy spans, read from one list per computation, is
    the very float the rows between its start and done add up to (real TPU compiles, whose
    copies span other ops), and a copy whose ends are not in the computation spans nothing."""
    from hloscope.sharding.collectives import analyze
    from hloscope.sharding.step import _async_copies, _estimate_between, _rows_between

    m, c, r, _ = _step(FIXTURES / "tpu" / f"{name}.hlo.txt")
    rows = {(row.computation, row.instruction): row for row in r.rows}
    own = {(x.computation, x.instruction) for x in analyze(m, c)[1]}
    copies = _async_copies(m, rows)
    assert copies
    for start, done in copies:
        own.update((start, done))
    spans: dict = {}
    spanned = 0
    for start, done in copies:
        want = sum(x.t_estimate for x in _rows_between(m, start[0], start[1], done[1], rows, own))
        assert _estimate_between(m, start[0], start[1], done[1], rows, own, spans) == want
        spanned += want > 0
    assert spanned
    assert _estimate_between(m, start[0], "no-such-op", done[1], rows, own, spans) == 0
