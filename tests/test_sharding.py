"""Collectives decoded from real compiles, checked against the mesh they were compiled on."""

from __future__ import annotations

import json
from itertools import product
from math import prod

import pytest
from conftest import CORPUS, FIXTURES, manifest, needs_corpus
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.cost.chips import get_chip
from hloscope.parser import load, parse
from hloscope.sharding import analyze
from hloscope.sharding.mesh import factor_group


def mesh_groups(shape: tuple[int, ...], names: tuple[str, ...], axis: str) -> set[frozenset[int]]:
    """The truth: device groups along `axis` of a row-major mesh (ids = flat positions)."""
    k = names.index(axis)
    strides = [prod(shape[i + 1 :]) for i in range(len(shape))]
    others = [range(s) if i != k else range(1) for i, s in enumerate(shape)]
    groups = set()
    for coord in product(*others):
        base = sum(c * st for c, st in zip(coord, strides))
        groups.add(frozenset(base + j * strides[k] for j in range(shape[k])))
    return groups


def _fixture(name):
    entry = manifest()[name]
    (m,) = load(FIXTURES / entry["file"])
    mesh = tuple(entry["mesh"].values()), tuple(entry["mesh"].keys())
    return m, mesh


def test_two_axis_mesh_groups_equal_the_compiled_mesh():
    m, (shape, names) = _fixture("mesh_2axis_v5p")
    mesh, cs = analyze(m, get_chip("v5p"))
    assert mesh.devices == 8
    got = {frozenset(map(frozenset, c.groups)) for c in cs if c.opcode == "all-reduce"}
    assert got == {frozenset(mesh_groups(shape, names, "model")),
                   frozenset(mesh_groups(shape, names, "data"))}
    by_size = {c.group_size: c for c in cs}
    assert by_size[4].strides == [[1, 4]] and by_size[2].strides == [[4, 2]]


def test_scaling_book_example_on_a_real_compile():
    """groups of 8 with stride 16 over 128 devices -> 8-way model parallelism; the true
    shapes are [8,8192] x [32768,8192]."""
    m, (shape, names) = _fixture("scaling_book_v5p")
    mesh, cs = analyze(m, get_chip("v5p"))
    (ar,) = cs
    assert mesh.devices == 128 and ar.opcode == "all-reduce"
    assert (ar.group_size, ar.num_groups, ar.strides) == (8, 16, [[16, 8]])
    assert ar.groups[0] == [0, 16, 32, 48, 64, 80, 96, 112]
    assert set(map(frozenset, ar.groups)) == mesh_groups(shape, names, "model")
    globals_ = sorted(s["global_shape"] for s in ar.sources)
    assert globals_ == ["bf16[32768,8192]", "bf16[8,8192]"]
    assert manifest()["scaling_book_v5p"]["facts"]["global_shapes"] == [[8, 8192], [32768, 8192]]


def test_mesh_form_replica_groups_name_the_axis():
    (m,) = load(FIXTURES / "tpu" / "transformer_v6e.hlo.txt")
    mesh, cs = analyze(m)
    assert mesh.source == "replica_groups"
    assert {c.axis for c in cs} == {"axis_2"} and all(c.groups == [[0, 1, 2, 3]] for c in cs)


def test_ring_costs_and_ici_time():
    m, _ = _fixture("scaling_book_v5p")
    chip = get_chip("v5p")
    (ar,) = analyze(m, chip)[1]
    assert ar.bytes == 8 * 32768 * 2
    assert ar.moved_bytes == pytest.approx(2 * ar.bytes * 7 / 8)
    assert ar.est_seconds == pytest.approx(ar.moved_bytes / (2 * chip.ici_bandwidth))
    (m,) = load(FIXTURES / "rules" / "H007" / "gather_whole_weight_v5p.hlo.txt")
    (ag,) = analyze(m, chip)[1]
    assert ag.result_bytes == 8192 * 4096 * 2 and ag.moved_bytes == pytest.approx(ag.result_bytes * 7 / 8)


def test_async_overlap_is_measured_from_the_schedule():
    exposed = analyze(load(FIXTURES / "rules" / "H008" / "exposed_permute_v5p.hlo.txt")[0])[1]
    overlapped = analyze(load(FIXTURES / "rules" / "H008" / "overlapped_permute_v5p.hlo.txt")[0])[1]
    (e,), (o,) = exposed, overlapped
    assert e.is_async and o.is_async and e.done == "collective-permute-done"
    assert e.overlap_instructions == 0
    assert o.overlap_instructions >= 1 and o.overlap_flops >= 2 * 512 * 1024 * 1024
    assert e.groups == [[i, (i + 1) % 8] for i in range(8)]


def test_iota_and_list_groups_factor_into_mesh_axes():
    assert factor_group((0, 16, 32, 48, 64, 80, 96, 112)) == [(16, 8)]
    assert factor_group((0, 1, 4, 5)) == [(4, 2), (1, 2)]
    assert factor_group((0, 3, 4)) is None  # not a product of strides
    text = ("HloModule m, num_partitions=8\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[64] parameter(0)\n"
            "  ROOT r = f32[64] all-reduce(p), channel_id=1, replica_groups=[2,4]<=[2,4]T(1,0), "
            "use_global_device_ids=true, to_apply=add\n}\n")  # HAND-WRITTEN minimal module
    mesh, (c,) = analyze(parse(text)[0])
    # iota(8).reshape(2,4).transpose(1,0) = [[0,4],[1,5],[2,6],[3,7]], regrouped by 4
    assert c.groups == [[0, 4, 1, 5], [2, 6, 3, 7]] and c.strides == [[4, 2], [1, 2]]
    assert [(a.size, a.stride) for a in mesh.axes] == [(2, 4), (2, 2), (2, 1)]
    assert c.axis == "stride4+stride1"


@needs_corpus
def test_shardy_mesh_names_from_a_real_dump():
    (m,) = load(CORPUS / "xla-benchmark-hlo" / "nv_maxtext_deepseek_1n4g_jit_train_step_before_optimization.hlo")
    mesh, _ = analyze(m)
    assert mesh.source == "sdy"
    axes = {a.name: (a.size, a.stride) for a in mesh.axes}
    assert axes["expert"] == (4, 1) and axes["data"] == (1, 4) and len(axes) == 12


@needs_corpus
def test_corpus_collectives_decode_regularly():
    (m,) = load(CORPUS / "xla-benchmark-hlo" / "hlo_llama31_405b_bf16_16x8.hlo")
    mesh, cs = analyze(m)
    assert mesh.devices == 128 and cs
    for c in cs:
        assert c.group_size * c.num_groups in (128, 2) or c.opcode == "collective-permute"
        assert sorted(d for g in c.groups for d in g) == list(range(128))


def test_sharding_json_contract():
    res = CliRunner().invoke(app, ["sharding", str(FIXTURES / "tpu" / "mesh_2axis_v5p.hlo.txt"),
                                   "--format", "json", "--chip", "v5p"])
    assert res.exit_code == 0, res.output
    (mod,) = json.loads(res.stdout)["modules"]
    assert mod["devices"] == 8 and {"axes", "devices", "source"} <= set(mod["mesh"])
    assert mod["mesh"]["axes"] and all(set(a) == {"name", "size", "stride"} for a in mod["mesh"]["axes"])
    assert prod(a["size"] for a in mod["mesh"]["axes"]) == 8  # (the axes tile the 8 devices)
    keys = {"instruction", "opcode", "group_size", "num_groups", "groups", "axis", "bytes",
            "global_shape", "async", "est_seconds"}
    assert len(mod["collectives"]) == 2 and all(keys <= set(c) for c in mod["collectives"])
    assert set(mod["bytes_per_axis"]) == {"axis_0", "axis_2"}


def test_sharding_text_output():
    res = CliRunner().invoke(app, ["sharding", str(FIXTURES / "tpu" / "scaling_book_v5p.hlo.txt")])
    assert "16 group(s) of 8" in res.stdout and "first group [0, 16, 32, 48, 64, 80, 96, 112]" in res.stdout
    assert "from %param.1: bf16[32768,1024] of bf16[32768,8192]" in res.stdout


def test_an_all_reduce_kept_one_nth_is_a_reduce_scatter():
    """psum_scatter over 8 devices, compiled for v5p: XLA prints an all-reduce of the
    bf16[4096,4096] partial product and a dynamic-slice fusion keeping bf16[512,4096] of it.
    It is one reduce-scatter: a ring moves 7/8 of the 32 MiB operand per device (an
    all-reduce would move twice that)."""
    (m,) = load(FIXTURES / "tpu" / "reduce_scatter_v5p.hlo.txt")
    _, (c,) = analyze(m, get_chip("v5p"))
    assert c.opcode == "reduce-scatter" and c.scattered_by
    assert c.moved_bytes == 7 / 8 * 4096 * 4096 * 2
    assert c.est_seconds == pytest.approx(c.moved_bytes / (2 * 90e9))


def test_an_async_all_to_all_is_one_collective_with_the_wrapped_groups():
    """XLA's GPU latency-hiding-scheduler test module: an all-to-all wrapped in an
    async-start/done (replica_groups=[8,16]<=[128] on the wrapped op). One logical collective,
    async, over groups of 16; it was counted twice (the wrapped op as a synchronous one too,
    with a false H008) and the start read as one group of all 128 devices."""
    path = CORPUS / "gpu" / "xla-tests" / "xla_lhs_collectives.hlo"
    if not path.exists():
        pytest.skip("corpus not present")
    (m,) = load(path)
    _, (c,) = analyze(m, get_chip("h100"))
    assert c.opcode == "all-to-all" and c.is_async and c.instruction == "all-to-all-start.4"
    assert (c.group_size, c.num_groups) == (16, 8)
    assert c.moved_bytes == 15 / 16 * (8 * 16 * 16 * 128 * 7168) * 2  # bf16[1,8,16,16,128,7168]


def test_axis_names_come_from_beside_the_optimized_module(tmp_path):
    """XLA drops the Shardy mesh from the optimized module; its before-optimizations dump in
    the same folder keeps it (`fsdp`), and so does the mesh `hloscope compile` records."""
    import json
    import shutil

    from hloscope.parser import load

    folder = FIXTURES / "dumps" / "fsdp_async_fusion_v5p"
    after = next(folder.glob("*.after_optimizations.txt"))
    (m,) = load(after)
    mesh, collectives = analyze(m)
    assert mesh.source.startswith("the before-optimizations dump") and [a.name for a in mesh.axes] == ["fsdp"]
    assert {c.axis for c in collectives} == {"fsdp"}
    alone = tmp_path / "alone" / after.name  # (no sibling: the printed names)
    alone.parent.mkdir()
    shutil.copy(after, alone)
    (m,) = load(alone)
    assert "fsdp" not in {c.axis for c in analyze(m)[1]}
    (alone.parent / "hloscope.json").write_text(json.dumps({"chip": "v5p", "mesh": {"shards": 8}}))
    (m,) = load(alone)
    mesh, collectives = analyze(m)
    assert mesh.source == "recorded by hloscope compile" and {c.axis for c in collectives} == {"shards"}


@needs_corpus
def test_top_limits_the_collective_list():
    mixtral = CORPUS / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo"
    out = CliRunner().invoke(app, ["sharding", str(mixtral), "--top", "5"]).stdout
    listed = [line for line in out.splitlines() if line.startswith("  ") and " over " in line]
    assert len(listed) == 5
    total = len(json.loads(CliRunner().invoke(app, ["sharding", str(mixtral), "--format", "json"]).stdout)
                ["modules"][0]["collectives"])
    assert f"and {total - 5} more (--top 0 lists all)" in out
