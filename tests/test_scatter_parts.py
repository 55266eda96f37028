"""How sharding.analyze recognises a reduce-scatter written as an all-reduce and a dynamic
slice, and the participants of a gather with no replica_groups: HAND-WRITTEN minimal
modules, the answers worked out by hand (the mutation run found these paths untested)."""

from __future__ import annotations

import pytest

from hloscope.cost.chips import get_chip
from hloscope.parser import parse
from hloscope.sharding.collectives import analyze

SUM = """sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
"""


def _collectives(entry: str, extra: str = "", partitions: int = 4):
    text = (f"// HAND-WRITTEN minimal module\nHloModule m, num_partitions={partitions}\n\n"
            f"{SUM}{extra}\nENTRY e {{\n{entry}\n}}\n")
    (m,) = parse(text, "m.hlo")
    return {c.instruction: c for c in analyze(m, get_chip("v5p"))[1]}


def _ar_then(user: str, groups: str = "{{0,1,2,3}}", rows: int = 16) -> str:
    return (f"  p = f32[{rows},8]{{1,0}} parameter(0)\n  i = s32[] parameter(1)\n  z = s32[] constant(0)\n"
            f"  ar = f32[{rows},8]{{1,0}} all-reduce(p), channel_id=1, replica_groups={groups}, "
            f"use_global_device_ids=true, to_apply=sum\n{user}")


@pytest.mark.parametrize("groups,n", [("{{0,1,2,3}}", 4), ("{{0,1},{2,3}}", 2)])
def test_an_all_reduce_whose_one_user_keeps_1_over_n_is_a_reduce_scatter(groups, n):
    rows = 16
    user = f"  ROOT ds = f32[{rows // n},8]{{1,0}} dynamic-slice(ar, i, z), dynamic_slice_sizes={{{rows // n},8}}"
    c = _collectives(_ar_then(user, groups, rows))["ar"]
    assert (c.opcode, c.scattered_by, c.group_size) == ("reduce-scatter", "ds", n)
    # a reduce-scatter moves (n-1)/n of its operand, not the all-reduce's 2(n-1)/n
    assert c.moved_bytes == pytest.approx((n - 1) / n * rows * 8 * 4)


def test_a_fusion_rooted_in_a_bitcast_of_the_slice_counts_too():
    fused = """fused {
  a = f32[16,8]{1,0} parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  ds = f32[4,8]{1,0} dynamic-slice(a, i, z), dynamic_slice_sizes={4,8}
  ROOT b = f32[32]{0} bitcast(ds)
}
"""
    user = "  ROOT f = f32[32]{0} fusion(ar, i), kind=kLoop, calls=fused"
    c = _collectives(_ar_then(user), extra=fused)["ar"]
    assert (c.opcode, c.scattered_by) == ("reduce-scatter", "f")


@pytest.mark.parametrize("user", [
    # keeps half, not a quarter
    "  ROOT ds = f32[8,8]{1,0} dynamic-slice(ar, i, z), dynamic_slice_sizes={8,8}",
    # two users
    "  ds = f32[4,8]{1,0} dynamic-slice(ar, i, z), dynamic_slice_sizes={4,8}\n"
    "  ROOT t = (f32[4,8]{1,0}, f32[16,8]{1,0}) tuple(ds, ar)",
    # a quarter, but by a slice that is no dynamic-slice
    "  ROOT s = f32[4,8]{1,0} slice(ar), slice={[0:4], [0:8]}",
])
def test_other_users_leave_it_an_all_reduce(user):
    c = _collectives(_ar_then(user))["ar"]
    assert (c.opcode, c.scattered_by) == ("all-reduce", "")


@pytest.mark.parametrize("shapes,gathered,n", [
    ("f32[4,8]{1,0}", "f32[16,8]{1,0}", 4),  # rows grow 4-fold: 4 participants
    ("f32[4,8]{1,0}", "f32[8,8]{1,0}", 2),
])
def test_a_gather_with_no_groups_takes_its_participants_from_its_shapes(shapes, gathered, n):
    entry = (f"  p = {shapes} parameter(0)\n"
             f"  ROOT ag = {gathered} all-gather(p), replica_groups={{}}, dimensions={{0}}")
    c = _collectives(entry)["ag"]
    assert c.group_size == n
    assert c.moved_bytes == pytest.approx((n - 1) / n * int(gathered[4:gathered.index(",")]) * 8 * 4)


def test_an_async_gather_with_no_groups_reads_its_result_from_the_tuple_end():
    entry = ("  p = f32[4,8]{1,0} parameter(0)\n"
             "  ags = (f32[4,8]{1,0}, f32[16,8]{1,0}) all-gather-start(p), replica_groups={}, dimensions={0}\n"
             "  ROOT agd = f32[16,8]{1,0} all-gather-done(ags)")
    c = _collectives(entry)["ags"]
    assert (c.group_size, c.done, c.is_async) == (4, "agd", True)
    assert c.result_bytes == 16 * 8 * 4


def test_a_gather_whose_shapes_do_not_divide_falls_back_to_every_device():
    entry = ("  p = f32[3,8]{1,0} parameter(0)\n"
             "  ROOT ag = f32[8,8]{1,0} all-gather(p), replica_groups={}, dimensions={0}")
    c = _collectives(entry, partitions=4)["ag"]
    assert c.group_size == 4  # (no factor from the shapes: the default group, every device)
