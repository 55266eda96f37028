"""Logical collectives where the replica groups do not say everything (the mutation run
found these paths untested): an all-gather or reduce-scatter with empty replica_groups whose
shapes imply the group size, a collective-permute's pairs, the default of every device, and
an all-reduce over a parameter whose global shape is the parameter's. Modules are
HAND-WRITTEN minimal ones (num_partitions=8); the expected groups and bytes are worked by
hand from XLA's semantics."""

from __future__ import annotations

from hloscope.cost.chips import get_chip
from hloscope.parser import parse
from hloscope.sharding import analyze

# the reduction every hand-written module below calls (written in each as {SUM})
SUM = """sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""

MODULE = """// HAND-WRITTEN minimal module: collectives whose groups the shapes or pairs imply
HloModule m, num_partitions=8

{SUM}

ENTRY e {
  p = f32[256]{0} parameter(0)
  gathered = f32[1024]{0} all-gather(p), channel_id=1, replica_groups={}, dimensions={0}, use_global_device_ids=true
  scattered = f32[128]{0} reduce-scatter(p), channel_id=2, replica_groups={}, dimensions={0}, to_apply=sum
  everyone = f32[256]{0} all-reduce(p), channel_id=3, replica_groups={}, to_apply=sum
  moved = f32[256]{0} collective-permute(p), channel_id=4, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT t = (f32[1024]{0}, f32[128]{0}, f32[256]{0}, f32[256]{0}) tuple(gathered, scattered, everyone, moved)
}
""".replace("{SUM}", SUM)


def _collectives():
    (m,) = parse(MODULE, "m")
    mesh, cs = analyze(m, get_chip("tpu-v5p"))
    return mesh, {c.instruction: c for c in cs}


def test_an_all_gather_without_groups_takes_its_size_from_its_shapes():
    mesh, cs = _collectives()
    assert mesh.devices == 8
    g = cs["gathered"]
    # 256 -> 1024 elements: 4 participants, so two groups of 4 consecutive devices
    assert (g.group_size, g.num_groups) == (4, 2)
    assert g.groups == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # each device receives the 3 quarters it lacks: 3/4 of 1024 f32
    assert g.moved_bytes == 3 / 4 * 1024 * 4


def test_a_reduce_scatter_without_groups_takes_its_size_from_its_shapes():
    _, cs = _collectives()
    r = cs["scattered"]
    assert (r.opcode, r.group_size, r.num_groups) == ("reduce-scatter", 2, 4)
    assert r.groups == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert r.moved_bytes == 1 / 2 * 256 * 4  # (n-1)/n of the operand


def test_an_all_reduce_without_groups_spans_every_device():
    _, cs = _collectives()
    a = cs["everyone"]
    assert (a.group_size, a.num_groups) == (8, 1) and a.groups == [list(range(8))]
    assert a.moved_bytes == 2 * 7 / 8 * 256 * 4  # twice (n-1)/n, as a ring all-reduce does
    assert a.global_shape.startswith("f32[256]")  # (its only source is the parameter)


def test_a_permute_is_its_pairs():
    _, cs = _collectives()
    c = cs["moved"]
    assert (c.opcode, c.axis, c.group_size, c.num_groups) == ("collective-permute", "permute", 4, 1)
    assert sorted(map(tuple, c.groups)) == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert c.moved_bytes == 256 * 4
    assert not c.is_async and c.done is None


SHARDED = """// HAND-WRITTEN minimal module: collectives over sharded parameters (num_partitions=8)
HloModule m, num_partitions=8

{SUM}

ENTRY e {
  p = f32[128,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  q = f32[64,8]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  summed = f32[128,8]{1,0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=sum
  gathered = f32[256,8]{1,0} all-gather(p), channel_id=2, replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={0}, use_global_device_ids=true
  exchanged = f32[64,8]{1,0} all-to-all(q), channel_id=3, replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={0}
  alone = f32[128,8]{1,0} all-reduce(p), channel_id=4, replica_groups={{0},{1},{2},{3},{4},{5},{6},{7}}, use_global_device_ids=true, to_apply=sum
  ROOT t = (f32[128,8]{1,0}, f32[256,8]{1,0}, f32[64,8]{1,0}, f32[128,8]{1,0}) tuple(summed, gathered, exchanged, alone)
}
""".replace("{SUM}", SUM)


def _sharded():
    (m,) = parse(SHARDED, "m")
    return {c.instruction: c for c in analyze(m, get_chip("tpu-v5p"))[1]}


def test_a_collective_of_a_sharded_parameter_names_the_parameters_global_shape():
    cs = _sharded()
    # [8,1] tiles of f32[128,8]: the unsharded array is 8 x 128 rows
    assert cs["summed"].global_shape.startswith("f32[1024,8]")
    # [2,1] tiles (the last dim of 4 replicates): 2 x 64 rows
    assert cs["exchanged"].global_shape.startswith("f32[128,8]")


def test_an_all_gathers_global_shape_is_what_it_gathers_not_its_parameters():
    # the gather over pairs makes f32[256,8], not the parameter's whole f32[1024,8]
    assert _sharded()["gathered"].global_shape.startswith("f32[256,8]")


def test_a_collective_within_one_device_runs_on_no_axis():
    c = _sharded()["alone"]
    assert (c.group_size, c.num_groups, c.axis) == (1, 8, "none")
    assert c.moved_bytes == 0  # (n - 1)/n of nothing to send


def test_a_gpu_all_reduce_xla_runs_in_place_is_not_async():
    """XLA's GPU backend marks a start it runs synchronously with is_sync in its
    collective_backend_config (the JSON's spacing does not matter)."""
    text = """// HAND-WRITTEN minimal module
HloModule m, num_partitions=2

{SUM}

ENTRY e {
  p = f32[1024]{0} parameter(0)
  s1 = f32[1024]{0} all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, to_apply=sum, backend_config={"operation_queue_id":"0","collective_backend_config":{"is_sync":true,"no_parallel_custom_call":false}}
  n1 = f32[1024]{0} negate(p)
  d1 = f32[1024]{0} all-reduce-done(s1)
  s2 = f32[1024]{0} all-reduce-start(p), channel_id=2, replica_groups={{0,1}}, to_apply=sum, backend_config={"collective_backend_config": {"is_sync": true}}
  d2 = f32[1024]{0} all-reduce-done(s2)
  s3 = f32[1024]{0} all-reduce-start(p), channel_id=3, replica_groups={{0,1}}, to_apply=sum, backend_config={"collective_backend_config":{"is_sync":false}}
  n3 = f32[1024]{0} negate(n1)
  d3 = f32[1024]{0} all-reduce-done(s3)
  ROOT t = (f32[1024]{0}, f32[1024]{0}, f32[1024]{0}, f32[1024]{0}) tuple(d1, d2, d3, n3)
}
""".replace("{SUM}", SUM)
    (m,) = parse(text, "m")
    cs = {c.instruction: c for c in analyze(m, get_chip("h100"))[1]}
    assert not cs["s1"].is_async and cs["s1"].overlap_instructions == 0 and cs["s1"].done == "d1"
    assert not cs["s2"].is_async
    assert cs["s3"].is_async and cs["s3"].done == "d3" and cs["s3"].overlap_instructions == 1  # n3


ASYNC = """// HAND-WRITTEN minimal module: async starts, a ragged all-to-all, an all-reduce of a computed value
HloModule m, num_partitions=8

{SUM}

ENTRY e {
  p = f32[256]{0} parameter(0)
  w = f32[64,64]{1,0} parameter(1)
  off = s64[4]{0} parameter(2)
  ags = (f32[256]{0}, f32[1024]{0}) all-gather-start(p), channel_id=1, replica_groups={}, dimensions={0}, use_global_device_ids=true
  agd = f32[1024]{0} all-gather-done(ags)
  cps = (f32[256]{0}, f32[256]{0}, u32[], u32[]) collective-permute-start(p), channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  cpd = f32[256]{0} collective-permute-done(cps)
  buf = f32[512]{0} parameter(3)
  rag = f32[512]{0} ragged-all-to-all(p, buf, off, off, off, off), channel_id=3, replica_groups={{0,1,2,3}}
  neg = f32[256]{0} negate(p)
  computed = f32[256]{0} all-reduce(neg), channel_id=4, replica_groups={{0,1,2,3}}, to_apply=sum
  ars = f32[256]{0} all-reduce-start(p), channel_id=5, replica_groups={{0,1,2,3}}, to_apply=sum
  d1 = f32[64,64]{1,0} dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64,64]{1,0} dot(d1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ard = f32[256]{0} all-reduce-done(ars)
  ROOT t = (f32[1024]{0}, f32[256]{0}, f32[512]{0}, f32[256]{0}, f32[256]{0}, f32[64,64]{1,0}) tuple(agd, cpd, rag, computed, ard, d2)
}
""".replace("{SUM}", SUM)


def _async():
    (m,) = parse(ASYNC, "m")
    mesh, cs = analyze(m, get_chip("tpu-v5p"))
    return m, {c.instruction: c for c in cs}


def test_a_done_or_update_is_no_collective_of_its_own():
    from hloscope.sharding.collectives import base_opcode

    m, cs = _async()
    ops = {i.name: base_opcode(i, m) for i in m.instructions()}
    assert ops["ags"] == "all-gather" and ops["cps"] == "collective-permute" and ops["ars"] == "all-reduce"
    assert ops["agd"] is None and ops["cpd"] is None and ops["ard"] is None and ops["neg"] is None
    assert set(cs) == {"ags", "cps", "rag", "computed", "ars"}


def test_an_async_gather_is_sized_by_the_last_element_of_its_start():
    _, cs = _async()
    g = cs["ags"]
    # 256 -> 1024 elements with empty groups: 4 participants of the 8 devices; the start's
    # last element is the result
    assert (g.group_size, g.num_groups) == (4, 2) and g.result_bytes == 1024 * 4
    assert g.bytes == 256 * 4 and g.moved_bytes == 3 / 4 * 1024 * 4
    assert g.global_shape.startswith("f32[1024]") and g.is_async and g.done == "agd"


def test_an_async_permute_is_sized_by_its_destination_buffer():
    _, cs = _async()
    c = cs["cps"]
    assert c.result_bytes == 256 * 4 and c.moved_bytes == 256 * 4 and c.done == "cpd"


def test_a_ragged_all_to_all_sends_a_share_of_its_input_not_its_output_buffer():
    _, cs = _async()
    r = cs["rag"]
    assert r.bytes == 256 * 4  # the input; the f32[512] output buffer and the offsets are not sent
    assert r.moved_bytes == 3 / 4 * 256 * 4


def test_an_all_reduce_of_a_computed_value_names_that_values_shape():
    _, cs = _async()
    assert cs["computed"].global_shape.startswith("f32[256]")
    assert cs["computed"].moved_bytes == 2 * 3 / 4 * 256 * 4


def test_an_async_all_reduce_is_overlapped_by_every_op_between_start_and_done():
    _, cs = _async()
    a = cs["ars"]
    # d1 and d2: two 64x64x64 matmuls, 2 * 64^3 flops each
    assert a.overlap_instructions == 2 and a.overlap_flops == 2 * (2 * 64 ** 3)


def test_bytes_per_axis_sums_the_collectives_on_each_axis():
    from hloscope.sharding.collectives import bytes_per_axis

    _, cs = _async()
    per = bytes_per_axis(list(cs.values()))
    assert sum(per.values()) == sum(c.moved_bytes for c in cs.values())
    assert per["permute"] == 256 * 4
    others = [c for c in cs.values() if c.axis != "permute"]
    assert len({c.axis for c in others}) == 1  # (every other group is all 4 devices)
    assert per[others[0].axis] == sum(c.moved_bytes for c in others)


def test_the_json_record_of_a_collective():
    import json

    _, cs = _async()
    rec = json.loads(json.dumps(cs["ars"].to_dict()))
    assert rec["async"] is True and "is_async" not in rec
    assert rec["sources"] == [dict(x) for x in cs["ars"].sources] and rec["sources"]
    assert rec["sources"][0]["parameter"] == "p"


def test_a_collectives_sources_are_every_parameter_it_is_computed_from_in_number_order():
    text = """// HAND-WRITTEN minimal module: collectives computed from two parameters
HloModule m, num_partitions=4

{SUM}

ENTRY e {
  q0 = f32[8]{0} parameter(0)
  q1 = f32[8]{0} parameter(1), sharding={devices=[4]<=[4]}
  twice = f32[8]{0} add(q0, q0)
  first = f32[8]{0} add(q1, twice)
  second = f32[8]{0} add(twice, q1)
  ar1 = f32[8]{0} all-reduce(first), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum
  ar2 = f32[8]{0} all-reduce(second), channel_id=2, replica_groups={{0,1,2,3}}, to_apply=sum
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(ar1, ar2)
}
""".replace("{SUM}", SUM)
    (m,) = parse(text, "m")
    cs = {c.instruction: c for c in analyze(m, get_chip("tpu-v5p"))[1]}
    for name in ("ar1", "ar2"):  # (q0 is reached twice on ar1's walk; q1 found first on ar2's)
        assert [s["parameter"] for s in cs[name].sources] == ["q0", "q1"], name
    q1 = cs["ar1"].sources[1]
    assert q1["local_shape"].startswith("f32[8]") and q1["global_shape"].startswith("f32[32]")


def test_a_collectives_result_is_read_from_the_shape_its_start_prints():
    """XLA's start shapes: an all-reduce-start's is its result (a tuple of results when it
    combines several operands); an async wrapper's is ((operands), outputs); a sync
    combined all-reduce's is the tuple of its results."""
    text = """// HAND-WRITTEN minimal module: combined and wrapped collectives
HloModule m, num_partitions=4

{SUM}

scatter {
  q = f32[256]{0} parameter(0)
  ROOT rs = f32[64]{0} reduce-scatter(q), channel_id=9, replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=sum
}

ENTRY e {
  a = f32[64]{0} parameter(0)
  b = f32[128]{0} parameter(1)
  c = f32[256]{0} parameter(2)
  both = (f32[64]{0}, f32[128]{0}) all-reduce-start(a, b), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum
  bothd = (f32[64]{0}, f32[128]{0}) all-reduce-done(both)
  sync = (f32[64]{0}, f32[128]{0}) all-reduce(a, b), channel_id=2, replica_groups={{0,1,2,3}}, to_apply=sum
  rss = ((f32[256]{0}), f32[64]{0}) async-start(c), calls=scatter
  rsd = f32[64]{0} async-done(rss), calls=scatter
  ROOT t = ((f32[64]{0}, f32[128]{0}), (f32[64]{0}, f32[128]{0}), f32[64]{0}) tuple(bothd, sync, rsd)
}
""".replace("{SUM}", SUM)
    (m,) = parse(text, "m")
    cs = {c.instruction: c for c in analyze(m, get_chip("tpu-v5p"))[1]}
    for name in ("both", "sync"):
        c = cs[name]
        assert c.bytes == c.result_bytes == (64 + 128) * 4, name
        assert c.moved_bytes == 2 * 3 / 4 * (64 + 128) * 4
    r = cs["rss"]
    assert (r.opcode, r.bytes, r.result_bytes) == ("reduce-scatter", 256 * 4, 64 * 4)
    assert r.moved_bytes == 3 / 4 * 256 * 4 and r.is_async and r.done == "rsd"


WRAPPED = """// HAND-WRITTEN minimal module: an async all-gather with a context element, and one
// synchronous all-gather of two operands, both with empty replica_groups (num_partitions=8)
HloModule m, num_partitions=8

gather {
  x = f32[256]{0} parameter(0)
  ROOT g = f32[1024]{0} all-gather(x), channel_id=5, replica_groups={}, dimensions={0}, use_global_device_ids=true
}

ENTRY e {
  p = f32[256]{0} parameter(0)
  q = f32[128]{0} parameter(1)
  start = ((f32[256]{0}), f32[1024]{0}, s32[]) async-start(p), calls=gather
  done = f32[1024]{0} async-done(start)
  both = (f32[1024]{0}, f32[512]{0}) all-gather(p, q), channel_id=6, replica_groups={}, dimensions={0}, use_global_device_ids=true
  b0 = f32[1024]{0} get-tuple-element(both), index=0
  ROOT t = (f32[1024]{0}, f32[1024]{0}) tuple(done, b0)
}
"""


def test_implicit_groups_of_an_async_start_and_of_a_tuple_all_gather():
    """256 -> 1024 elements: 4 participants in each. The async start's shape ends in its
    context (s32[]), not its result, and its `dimensions` are the wrapped gather's; the
    two-operand gather's first result is the first operand's (256 -> 1024), not its last
    (128 -> 512 would say 4 too, but 256 -> 512 says 2). Bytes by hand: 3/4 of what each
    receives, 1024 x 4 and (1024 + 512) x 4."""
    (m,) = parse(WRAPPED, "m")
    _, cs = analyze(m, get_chip("tpu-v5p"))
    by = {c.instruction: c for c in cs}
    for name, received in (("start", 1024 * 4), ("both", (1024 + 512) * 4)):
        c = by[name]
        assert (c.group_size, c.num_groups) == (4, 2), name
        assert c.groups == [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert c.moved_bytes == 3 / 4 * received
    assert by["start"].is_async


ASYNC_FIRST = """// HAND-WRITTEN minimal module: an async-start that wraps no collective comes first
HloModule m, num_partitions=8

{SUM}

wrapped {
  x = f32[256]{0} parameter(0)
  ROOT n = f32[256]{0} negate(x)
}

ENTRY e {
  p = f32[256]{0} parameter(0)
  s = ((f32[256]{0}), f32[256]{0}, u32[]) async-start(p), calls=wrapped
  d = f32[256]{0} async-done(s)
  ROOT r = f32[256]{0} all-reduce(d), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=sum
}
""".replace("{SUM}", SUM)


def test_a_collective_after_an_async_start_of_something_else_is_still_found():
    (m,) = parse(ASYNC_FIRST, "m")
    _, cs = analyze(m, get_chip("tpu-v5p"))
    assert [(c.instruction, c.opcode, c.group_size) for c in cs] == [("r", "all-reduce", 8)]


def test_a_start_whose_done_is_not_in_its_computation_has_no_done_and_no_overlap():
    """(#39's class: a start with no matching done where it is: not overlapped by anything)"""
    text = ASYNC_FIRST.replace(
        "ROOT r = f32[256]{0} all-reduce(d)",
        "ROOT r = f32[256]{0} all-reduce-start(d)")
    (m,) = parse(text, "m")
    _, cs = analyze(m, get_chip("tpu-v5p"))
    (c,) = cs
    assert (c.instruction, c.is_async, c.done, c.overlap_instructions) == ("r", True, None, 0)


def _analyzed(body: str, header: str = "HloModule m"):
    """HAND-WRITTEN minimal module around `body` (the entry's lines after its parameter)."""
    text = f"{header}\n\n{SUM}\n\nENTRY e {{\n  p = f32[256]{{0}} parameter(0)\n{body}\n}}\n"
    (m,) = parse(text, "m")
    mesh, cs = analyze(m, get_chip("tpu-v5p"))
    return mesh, {c.instruction: c for c in cs}


def test_without_num_partitions_the_devices_are_what_the_collectives_imply():
    """No num_partitions in the header: an all-gather's shapes imply 4 participants, an
    all-reduce's groups name 4 devices, an all-gather of 2 alone implies 2."""
    mesh, cs = _analyzed("  ROOT g = f32[1024]{0} all-gather(p), channel_id=1, replica_groups={}, dimensions={0}")
    assert (mesh.devices, cs["g"].group_size) == (4, 4)
    mesh, cs = _analyzed("  ROOT r = f32[256]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum")
    assert (mesh.devices, cs["r"].group_size) == (4, 4)
    mesh, cs = _analyzed("  ROOT g = f32[512]{0} all-gather(p), channel_id=1, replica_groups={}, dimensions={0}")
    assert (mesh.devices, cs["g"].group_size) == (2, 2)
    mesh, cs = _analyzed("  ROOT r = f32[256]{0} all-reduce(p), channel_id=1, replica_groups={}, to_apply=sum")
    assert (mesh.devices, cs["r"].group_size, cs["r"].moved_bytes) == (1, 1, 0.0)  # (one device: nothing moves)


def test_an_all_gathers_strided_groups_are_kept_as_written():
    _, cs = _analyzed("  ROOT g = f32[1024]{0} all-gather(p), channel_id=1, replica_groups={{0,2,4,6},{1,3,5,7}}, "
                      "dimensions={0}", "HloModule m, num_partitions=8")
    assert cs["g"].groups == [[0, 2, 4, 6], [1, 3, 5, 7]] and cs["g"].strides == [[2, 4]]


def test_a_gpu_collective_over_more_devices_than_a_node_crosses_the_domains():
    """An H100's NVLink domain is 8 GPUs: an all-reduce over 16 leaves it (over the network),
    one over 8 does not."""
    body = ("  ROOT r = f32[256]{0} all-reduce(p), channel_id=1, replica_groups={GROUPS}, to_apply=sum")
    wide = "{" + ",".join(map(str, range(16))) + "}"
    (m,) = parse(f"HloModule m, num_partitions=16\n\n{SUM}\n\nENTRY e {{\n  p = f32[256]{{0}} parameter(0)\n"
                 f"{body.replace('{GROUPS}', '{' + wide + '}')}\n}}\n", "m")
    (c,) = analyze(m, get_chip("h100"))[1]
    assert (c.group_size, c.crosses_domains) == (16, True)
    (m,) = parse(f"HloModule m, num_partitions=16\n\n{SUM}\n\nENTRY e {{\n  p = f32[256]{{0}} parameter(0)\n"
                 f"{body.replace('{GROUPS}', '{{0,1,2,3,4,5,6,7},{8,9,10,11,12,13,14,15}}')}\n}}\n", "m")
    (c,) = analyze(m, get_chip("h100"))[1]
    assert (c.group_size, c.crosses_domains) == (8, False)


def test_a_reduce_scatter_of_a_computed_value_names_that_values_shape_not_its_share():
    _, cs = _analyzed("  q = f32[256]{0} negate(p)\n  ROOT s = f32[64]{0} reduce-scatter(q), channel_id=1, "
                      "replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=sum", "HloModule m, num_partitions=4")
    assert cs["s"].global_shape == "f32[256]"  # (what is reduced: the operand, four times the result)


def test_a_replicated_parameters_global_shape_is_its_own():
    text = ("HloModule m, num_partitions=4\n\n" + SUM + "\n\nENTRY e {\n"
            "  q = f32[256]{0} parameter(0), sharding={replicated}\n"
            "  ROOT r = f32[256]{0} all-reduce(q), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=sum\n}\n")
    (m,) = parse(text, "m")
    (c,) = analyze(m, get_chip("tpu-v5p"))[1]
    assert c.global_shape == "f32[256]"
