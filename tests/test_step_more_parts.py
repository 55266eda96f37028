"""More of the step estimate's parts, each on a HAND-WRITTEN minimal module with its figure
worked by hand (the mutation run of the sharding package found these unread): exposed async
copies summed over copies and trips, hidden time summed over collectives, the link words of
a step joined, a step with no op but its collective, a collective's time from its own rows
where the chip has no link numbers, and a GPU start XLA runs in place (is_sync) never
overlapped by what is scheduled before its done."""

from __future__ import annotations

import dataclasses

import pytest

from hloscope.cost.chips import get_chip
from hloscope.cost.roofline import roofline
from hloscope.parser import parse
from hloscope.sharding.links import NETWORK
from hloscope.sharding.step import estimate

SUM = """sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

"""


def _step(text: str, chip):
    (m,) = parse("// HAND-WRITTEN minimal module\n" + text, "m")
    report = roofline(m, chip)
    return estimate(m, chip, report), {r.instruction: r for r in report.rows}


def test_exposed_copies_add_up_over_copies_and_trips():
    text = """HloModule copies

body {
  s = (s32[], f32[64,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64,64]{1,0} get-tuple-element(s), index=1
  c1 = (f32[64,64]{1,0:S(1)}, f32[64,64]{1,0}, u32[]) copy-start(x)
  d1 = f32[64,64]{1,0:S(1)} copy-done(c1)
  c2 = (f32[64,64]{1,0:S(1)}, f32[64,64]{1,0}, u32[]) copy-start(x)
  d2 = f32[64,64]{1,0:S(1)} copy-done(c2)
  y = f32[64,64]{1,0} add(d1, d2)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[64,64]{1,0}) tuple(j, y)
}

cond {
  s = (s32[], f32[64,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  p = f32[64,64]{1,0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[64,64]{1,0}) tuple(z, p)
  w = (s32[], f32[64,64]{1,0}) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT r = f32[64,64]{1,0} get-tuple-element(w), index=1
}
"""
    s, rows = _step(text, get_chip("v5p"))
    assert rows["c1"].times == rows["c2"].times == 3
    one = rows["c1"].t_bound  # nothing runs between a start and its done: all of it exposed
    assert one == pytest.approx(64 * 64 * 4 / get_chip("v5p").hbm_bandwidth, rel=1e-3)
    assert s.copies_seconds == pytest.approx(2 * 3 * one)
    assert s.copies_exposed_seconds == pytest.approx(2 * 3 * one)


def test_hidden_time_adds_up_over_collectives():
    text = "HloModule hidden, num_partitions=4\n\n" + SUM + """ENTRY e {
  p = f32[64]{0} parameter(0)
  w = f32[256,256]{1,0} parameter(1)
  s1 = f32[64]{0} all-reduce-start(p), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum
  m1 = f32[256,256]{1,0} dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[64]{0} all-reduce-done(s1)
  s2 = f32[64]{0} all-reduce-start(d1), channel_id=2, replica_groups={{0,1,2,3}}, to_apply=sum
  m2 = f32[256,256]{1,0} dot(m1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64]{0} all-reduce-done(s2)
  ROOT t = (f32[64]{0}, f32[256,256]{1,0}) tuple(d2, m2)
}
"""
    s, _ = _step(text, get_chip("v5p"))
    x1, x2 = s.collectives
    assert x1.overlapped_by == ["m1"] and x2.overlapped_by == ["m2"]
    assert x1.hidden_seconds == x1.seconds > 0 and x2.hidden_seconds == x2.seconds > 0  # (1 KiB each)
    assert s.hidden_seconds == pytest.approx(x1.seconds + x2.seconds) and s.exposed_seconds == 0.0


def test_a_step_over_nvlink_and_the_network_names_both():
    text = "HloModule links, num_partitions=16\n\n" + SUM + """ENTRY e {
  p = f32[1024]{0} parameter(0)
  near = f32[1024]{0} all-reduce(p), channel_id=1, replica_groups=[2,8]<=[16], use_global_device_ids=true, to_apply=sum
  far = f32[1024]{0} all-reduce(near), channel_id=2, replica_groups=[8,2]<=[2,8]T(1,0), use_global_device_ids=true, to_apply=sum
  ROOT t = (f32[1024]{0}, f32[1024]{0}) tuple(near, far)
}
"""
    s, _ = _step(text, get_chip("h100"))
    assert [x.links for x in s.collectives] == ["NVLink", NETWORK]
    assert s.links == f"NVLink and {NETWORK}"


def test_a_step_with_no_op_but_its_collective_has_no_op_floor():
    text = "HloModule alone, num_partitions=4\n\n" + SUM + """ENTRY e {
  p = f32[1024]{0} parameter(0)
  ROOT ar = f32[1024]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum
}
"""
    s, _ = _step(text, get_chip("v5p"))
    assert s.op_floor_seconds == 0.0 and s.ops_seconds == 0.0 and len(s.collectives) == 1


def test_without_link_numbers_a_collective_takes_its_own_rows_time():
    text = "HloModule nolinks, num_partitions=4\n\n" + SUM + """ENTRY e {
  p = f32[1048576]{0} parameter(0)
  s = f32[1048576]{0} all-reduce-start(p), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum
  d = f32[1048576]{0} all-reduce-done(s)
  ar = f32[1048576]{0} all-reduce(d), channel_id=2, replica_groups={{0,1,2,3}}, to_apply=sum
  ROOT t = (f32[1048576]{0}, f32[1048576]{0}) tuple(d, ar)
}
"""
    chip = dataclasses.replace(get_chip("v5p"), ici_bandwidth=0)
    s, rows = _step(text, chip)
    a, b = s.collectives
    assert a.seconds == pytest.approx(rows["s"].t_bound + rows["d"].t_bound) and a.seconds > 0
    assert b.seconds == pytest.approx(rows["ar"].t_bound) and b.seconds > 0
    assert s.collective_seconds == pytest.approx(a.seconds + b.seconds)


def test_a_gpu_start_run_in_place_is_not_overlapped():
    text = "HloModule sync, num_partitions=2\n\n" + SUM + """ENTRY e {
  p = f32[1048576]{0} parameter(0)
  w = f32[512,512]{1,0} parameter(1)
  s1 = f32[1048576]{0} all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, to_apply=sum, backend_config={"collective_backend_config":{"is_sync":true}}
  m = f32[512,512]{1,0} dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[1048576]{0} all-reduce-done(s1)
  ROOT t = (f32[1048576]{0}, f32[512,512]{1,0}) tuple(d1, m)
}
"""
    s, _ = _step(text, get_chip("h100"))
    (x,) = s.collectives
    assert not x.is_async and x.overlapped_by == [] and x.hidden_seconds == 0.0
    assert x.exposed_seconds == x.seconds > 0


def test_an_op_before_a_copy_start_hides_none_of_the_copy():
    """The dot runs before the copy starts and nothing runs between start and done: the
    copy is exposed whole (its start row's roofline time)."""
    text = """HloModule before

ENTRY e {
  p = f32[256,256]{1,0} parameter(0)
  w = f32[256,256]{1,0} dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = (f32[256,256]{1,0:S(1)}, f32[256,256]{1,0}, u32[]) copy-start(w)
  d = f32[256,256]{1,0:S(1)} copy-done(c)
  ROOT r = (f32[256,256]{1,0}, f32[256,256]{1,0:S(1)}) tuple(w, d)
}
"""
    step, rows = _step(text, get_chip("v5e"))
    assert step.copies_seconds == pytest.approx(rows["c"].t_bound)
    assert step.copies_exposed_seconds == pytest.approx(rows["c"].t_bound)


def test_a_copy_start_whose_done_is_elsewhere_is_no_async_copy():
    """(a start with no copy-done reading it in its computation: not paired, not counted as
    a copy, and the estimate still made)"""
    text = """HloModule alone

ENTRY e {
  p = f32[256,256]{1,0} parameter(0)
  ROOT c = (f32[256,256]{1,0:S(1)}, f32[256,256]{1,0}, u32[]) copy-start(p)
}
"""
    step, _ = _step(text, get_chip("v5e"))
    assert step.copies_seconds == 0.0 and step.copies_exposed_seconds == 0.0
