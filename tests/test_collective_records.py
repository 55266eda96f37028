"""Every field of the logical collectives `sharding.analyze` finds, worked out by hand on a
HAND-WRITTEN minimal SPMD module (the mutation run found the fields no test read: the
module, position, global shape, permute pairs, overlap of an async pair, GPU `is_sync`)."""

from __future__ import annotations

import pytest

from hloscope.cost.chips import get_chip
from hloscope.parser import parse
from hloscope.sharding.collectives import analyze

TEXT = """// HAND-WRITTEN minimal module: one collective of each kind
HloModule spmd, num_partitions=4

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}

ENTRY e {
  p = f32[8,16]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ar = f32[8,16]{1,0} all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=sum
  ags = (f32[8,16]{1,0}, f32[32,16]{1,0}) all-gather-start(ar), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  busy = f32[8,16]{1,0} multiply(ar, ar)
  agd = f32[32,16]{1,0} all-gather-done(ags)
  cp = f32[8,16]{1,0} collective-permute(busy), channel_id=3, source_target_pairs={{0,1},{1,0},{2,3},{3,2}}
  ROOT t = (f32[32,16]{1,0}, f32[8,16]{1,0}) tuple(agd, cp)
}
"""
BYTES = 8 * 16 * 4  # one device's f32[8,16]
V5P_ICI = 2 * 9e10  # one axis of v5p: two one-way links of 90 GB/s (chips.toml, the scaling book)


def _where(name: str) -> tuple[int, int]:
    lines = TEXT.split("\n")
    k = next(k for k, line in enumerate(lines) if line.lstrip().startswith(f"{name} = "))
    return k + 1, len(lines[k]) - len(lines[k].lstrip()) + 1


@pytest.fixture(scope="module")
def found():
    (m,) = parse(TEXT, "spmd.hlo")
    mesh, collectives = analyze(m, get_chip("v5p"))
    return mesh, {c.instruction: c for c in collectives}


def test_three_logical_collectives_each_where_it_is_written(found):
    _, c = found
    assert sorted(c) == ["ags", "ar", "cp"]
    for name, x in c.items():
        assert (x.module, x.computation) == ("spmd", "e")
        assert (x.line, x.column) == _where(name)
        assert x.clones == [] and x.continuations == [] and x.scattered_by == ""
        assert x.links == "ICI" and x.crosses_domains is False


def test_the_all_reduce_over_pairs(found):
    """Groups {0,1},{2,3}: two groups of 2, stride 1; a ring all-reduce moves 2(n-1)/n of
    the operand; its operand is the parameter, sharded 4 ways on rows: global f32[32,16]."""
    _, c = found
    ar = c["ar"]
    assert (ar.opcode, ar.is_async, ar.done) == ("all-reduce", False, None)
    assert (ar.group_size, ar.num_groups, ar.groups) == (2, 2, [[0, 1], [2, 3]])
    assert ar.strides == [[1, 2]]
    assert (ar.bytes, ar.result_bytes, ar.moved_bytes) == (BYTES, BYTES, 2 * (2 - 1) / 2 * BYTES)
    assert ar.global_shape == "f32[32,16]"
    assert ar.est_seconds == pytest.approx(ar.moved_bytes / V5P_ICI)
    assert (ar.overlap_instructions, ar.overlap_flops) == (0, 0.0)
    assert [s["parameter"] for s in ar.sources] == ["p"]


def test_the_async_all_gather_and_the_multiply_it_hides_behind(found):
    """4 devices gather rows: each receives 3/4 of the 32x16 result; the one op scheduled
    between start and done is the 8x16 multiply (128 FLOPs)."""
    _, c = found
    ag = c["ags"]
    assert (ag.opcode, ag.is_async, ag.done) == ("all-gather", True, "agd")
    assert (ag.group_size, ag.num_groups) == (4, 1)
    assert (ag.bytes, ag.result_bytes) == (BYTES, 4 * BYTES)
    assert ag.moved_bytes == pytest.approx(3 / 4 * 4 * BYTES)
    assert ag.global_shape == "f32[32,16]"
    assert (ag.overlap_instructions, ag.overlap_flops) == (1, 8 * 16)
    assert ag.est_seconds == pytest.approx(ag.moved_bytes / V5P_ICI)


def test_the_permute_counts_its_pairs(found):
    """A collective-permute's "groups" are its source-target pairs, one group of them; its
    operand is no parameter, so its global shape is its own."""
    _, c = found
    cp = c["cp"]
    assert (cp.opcode, cp.axis, cp.strides) == ("collective-permute", "permute", [])
    assert (cp.group_size, cp.num_groups) == (4, 1)
    assert cp.groups == [[0, 1], [1, 0], [2, 3], [3, 2]]
    assert (cp.bytes, cp.moved_bytes) == (BYTES, BYTES)
    assert cp.global_shape == "f32[8,16]"


def test_the_mesh_is_inferred_from_the_groups(found):
    """Pairs of stride 1 and a group of all four: two axes of 2 (strides 2 and 1)."""
    mesh, c = found
    assert mesh.devices == 4 and mesh.source == "inferred"
    assert sorted((a.size, a.stride) for a in mesh.axes) == [(2, 1), (2, 2)]
    assert c["ar"].axis == next(a.name for a in mesh.axes if a.stride == 1)


def test_an_async_pair_xla_gpu_marks_is_sync_is_synchronous():
    """XLA GPU runs an async collective whose backend_config says is_sync in place: no
    overlap, whatever is scheduled between its start and done."""
    text = TEXT.replace(
        "dimensions={0}, use_global_device_ids=true",
        'dimensions={0}, use_global_device_ids=true, backend_config={"collective_backend_config":{"is_sync":true}}')
    (m,) = parse(text, "spmd.hlo")
    _, collectives = analyze(m, get_chip("h100"))
    ag = next(x for x in collectives if x.instruction == "ags")
    assert (ag.is_async, ag.done) == (False, "agd")
    assert (ag.overlap_instructions, ag.overlap_flops) == (0, 0.0)


def test_a_fused_chain_counts_its_continuation_once():
    """The FSDP step compiled with MaxText's async-collective-fusion flags (fixtures/tpu, a
    real v5p compile): each of 3 gathers runs as start -> continuation fusion -> done, and
    the continuation is the layer's matmul, x[1024,4096] @ W[4096,4096] (2 x 1024 x 4096 x
    4096 FLOPs and a small epilogue). Scheduled between start and done, read off the text:
    two copy-dones and the continuation (and, for the last gather, a copy-start too). The
    continuation reads the start's tuple through get-tuple-elements: it was once counted
    twice (68.7 GFLOP, 4 ops)."""
    from pathlib import Path

    from hloscope.parser import load

    path = Path(__file__).resolve().parents[1] / "fixtures/tpu/fsdp_async_fusion_v5p.hlo.txt"
    (m,) = load(path)
    c = {x.instruction: x for x in analyze(m, get_chip("v5p"))[1]}
    matmul = 2 * 1024 * 4096 * 4096
    for start, cont, between in (("async-collective-start", "fusion.9", 3),
                                 ("async-collective-start.1", "fusion.16", 3),
                                 ("async-collective-start.2", "fusion.23", 4)):
        x = c[start]
        assert (x.is_async, x.done, x.continuations) == (True, start.replace("start", "done"), [cont])
        assert x.overlap_instructions == between
        assert x.overlap_flops == pytest.approx(matmul, rel=1e-3)
        assert len(x.clones) == 3  # (a clone of the gather in each fusion of the chain)
    # each chain gathers its layer's weight, the parameter after the first layer's, sharded
    # 8 ways on its rows (the step's 4096 x 4096 bf16 weights over v5p's 8 devices)
    for k, start in enumerate(("async-collective-start", "async-collective-start.1", "async-collective-start.2")):
        assert c[start].sources == [{"parameter": f"param.{k + 2}", "local_shape": "bf16[512,4096]",
                                     "global_shape": "bf16[4096,4096]"}]
    sync = c["all-gather.38"]  # (the first layer's gather: nothing to hide it)
    assert (sync.is_async, sync.done, sync.overlap_instructions, sync.overlap_flops) == (False, None, 0, 0.0)


@pytest.mark.parametrize("name", ["fsdp_train_h100x8", "fsdp_train_donated_h100x8", "matmul_k_h100x8",
                                  "transformer_sharded_train_h100x8"])
def test_gpu_async_collectives_count_once_as_xla_prints_them(name):
    """A real deviceless GPU compile (fixtures/zoo): XLA's GPU pipeline prints async
    collectives as `<op>-start` (reduce-scatter-start is async shorthand: the parser wraps its
    reduce-scatter in a computation of its own). Each start is one logical collective, the
    wrapped op not another; and each that XLA marks `"is_sync":true` is synchronous."""
    import re

    from conftest import FIXTURES

    from hloscope.parser import load

    path = FIXTURES / "zoo" / f"{name}.hlo.txt"
    text = path.read_text()
    starts = re.findall(r"%(\S+) = .*? (all-reduce|all-gather|reduce-scatter|all-to-all|"
                        r"collective-permute)-start\(.*", text)
    (m,) = load(path)
    found = analyze(m).collectives
    assert sorted(c.instruction for c in found) == sorted(s for s, _ in starts)
    sync = {s for s, _ in starts
            if re.search(rf'%{re.escape(s)} = .*"is_sync":true', text)}
    assert {c.instruction for c in found if not c.is_async} == sync


@pytest.mark.parametrize("name", ["fsdp_train_h100x8", "transformer_sharded_train_h100x8"])
def test_h008_on_real_gpu_compiles_flags_what_xla_left_synchronous(name):
    """H008 on deviceless H100 compiles: it flags the collectives XLA's GPU scheduler marked
    `"is_sync":true` (nothing overlaps them) and none of the async ones XLA scheduled other
    ops inside (read off the text: instructions between a start and its done)."""
    import re

    from conftest import FIXTURES

    from hloscope.lint import LintOptions, lint_files

    path = FIXTURES / "zoo" / f"{name}.hlo.txt"
    lines = path.read_text().splitlines()
    sync, busy = set(), set()
    for k, line in enumerate(lines):
        m = re.match(r"\s*%(\S+) = .*? \S+-start\(", line)
        if m is None or "collective_backend_config" not in line:
            continue
        done = next(d for d, text in enumerate(lines[k + 1:], k + 1) if f"-done(%{m.group(1)})" in text)
        if '"is_sync":true' in line:
            sync.add(m.group(1))
        elif any(re.search(r"= \S+ (fusion|custom-call)\(", t) for t in lines[k + 1:done]):
            busy.add(m.group(1))
    flagged = {f.instruction for f in lint_files([path], LintOptions(select=["H008"], chip="h100")).findings}
    assert sync and busy  # (both kinds are in these compiles)
    assert flagged and flagged <= sync and not (flagged & busy)
