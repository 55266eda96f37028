"""Numbers the compiler's own output can check (#19): loop trip counts, the participants of
a collective whose groups are implicit, the devices a sharding tiles over."""

from __future__ import annotations

import re
from math import prod

import pytest
from conftest import CORPUS, FIXTURES, needs_corpus

from hloscope.cost.chips import get_chip
from hloscope.cost.ops import CostModel
from hloscope.parser import load, parse
from hloscope.sharding import analyze


def _whiles(module):
    return [i for i in module.instructions() if i.opcode == "while"]


@pytest.mark.parametrize("program", ["while_loop", "scan_rnn", "rng_uniform"])
def test_trip_count_from_the_condition_equals_xla_known_trip_count(program):
    """The pre-optimization dump has no known_trip_count; XLA's optimized compile of the
    same program states it: the condition's count must equal it."""
    (before,) = load(FIXTURES / "conformance" / f"{program}.before_optimizations.hlo.txt")
    after_text = (FIXTURES / "conformance" / f"{program}.cpu.hlo.txt").read_text()
    assert "known_trip_count" not in (FIXTURES / "conformance" / f"{program}.before_optimizations.hlo.txt").read_text()
    xla = sorted(int(n) for n in re.findall(r'"known_trip_count":\{"n":"(\d+)"', after_text))
    model = CostModel(before)
    ours = sorted(model.trip_count(w) for w in _whiles(before))
    assert xla and ours == xla


def test_trip_count_of_an_optimized_tpu_loop_without_the_annotation():
    """A real v4 compile whose scan over 6 layers keeps no known_trip_count (its body was
    sunk): 6 from `lt(i, 6)`, i starting at a copy of 0 and stepping by 1."""
    (m,) = load(FIXTURES / "tpu" / "scan_v4.hlo.txt")
    (loop,) = _whiles(m)
    assert "known_trip_count" not in (loop.raw_attr("backend_config") or "")
    w = next(p for p in m.entry.parameters if p.name == "param.3")
    assert CostModel(m).trip_count(loop) == w.shape.dims[0] == 6


@pytest.mark.parametrize(("direction", "init", "bound", "step", "expected"), [
    ("LT", 0, 10, 3, 4), ("LE", 0, 10, 3, 4), ("LE", 0, 9, 3, 4), ("GT", 10, 0, -2, 5),
    ("GE", 10, 0, -2, 6), ("LT", 5, 0, 1, 0), ("NE", 0, 12, 4, 3), ("NE", 0, 10, 4, None),
    ("LT", 0, 10, -1, None),
])
def test_trip_count_arithmetic_against_python_ranges(direction, init, bound, step, expected):
    """Hand-written (syntax corner): a counted loop in each direction, checked against
    Python's own loop; a loop that never ends or never lands on its bound stays unknown."""
    text = f"""HloModule loop

cond {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({bound})
  ROOT c = pred[] compare(i, n), direction={direction}
}}

body {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = s32[] constant({abs(step)})
  j = s32[] {"add" if step > 0 else "subtract"}(i, s)
  ROOT t = (s32[]) tuple(j)
}}

ENTRY e {{
  z = s32[] constant({init})
  t = (s32[]) tuple(z)
  ROOT w = (s32[]) while(t), condition=cond, body=body
}}
"""
    (m,) = parse(text, "loop.hlo")
    if expected is not None:
        python = 0
        i = init
        test = {"LT": lambda: i < bound, "LE": lambda: i <= bound, "GT": lambda: i > bound,
                "GE": lambda: i >= bound, "NE": lambda: i != bound}[direction]
        while test():
            i += step
            python += 1
        assert python == expected
    assert CostModel(m).trip_count(_whiles(m)[0]) == expected


@needs_corpus
def test_all_gather_without_replica_groups_counts_its_participants_from_its_shapes():
    """XLA's benchmark u4_all_gather_1x8.hlo: u4[1024,512] gathered to u4[1024,4096] along
    dim 1 is 8 participants, each receiving 7/8 of the 2 MiB result."""
    (m,) = load(CORPUS / "xla-benchmark-hlo" / "u4_all_gather_1x8.hlo")
    mesh, (c,) = analyze(m, get_chip("v5e"))
    assert mesh.devices == 8 and c.group_size == 8
    assert c.result_bytes == 1024 * 4096 // 2 and c.moved_bytes == pytest.approx(c.result_bytes * 7 / 8)


def test_sharding_tile_assignment_gives_the_device_count():
    """Hand-written (syntax corner): no num_partitions, no collective; the shardings alone
    say 4 devices, a trailing replication dim counted."""
    text = """HloModule m

ENTRY e {
  p = f32[16,8,8] parameter(0), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  ROOT n = f32[16,8,8] negate(p), sharding={devices=[4,1,1]<=[4]}
}
"""
    (m,) = parse(text, "m.hlo")
    mesh, collectives = analyze(m)
    assert mesh.devices == 4 and not collectives


@needs_corpus
def test_real_sharded_dump_counts_devices_from_its_shardings():
    """XLA's Llama 3 8B context-parallel benchmark dump (1x4): its shardings tile over 4."""
    path = CORPUS / "xla-benchmark-hlo" / "hlo_llama3_8b_cp_bf16_1x4.hlo"
    text = path.read_text()
    tiles = {prod(int(x) for x in d.split(",")) for d in re.findall(r"sharding=\{devices=\[([\d,]+)\]", text)}
    (m,) = load(path)
    mesh, _ = analyze(m)
    assert mesh.devices == max(tiles) == 4


def test_pallas_matmul_without_cost_estimate_is_costed_from_its_body():
    """A real 4096^3 bf16 Pallas matmul (blocks x 256x512, y 512x256, out 256x256, grid
    (16, 16, 8) with k innermost) that states no cost_estimate. Hand-derived from its
    BlockSpecs: x's block index (i, k) and y's (k, j) change on every step, so each is
    fetched 2048 times; the output's (i, j) changes 256 times."""
    from hloscope.cost.roofline import roofline
    from hloscope.mlir.cost import body_costs

    (m,) = load(FIXTURES / "tpu" / "pallas_matmul_4096_v5e.hlo.txt")
    (call,) = [i for i in m.instructions() if i.opcode == "custom-call"]
    assert "cost_estimate" not in (call.raw_attr("backend_config") or "")
    M = N = K = 4096
    bm, bn, bk = 256, 256, 512
    steps = (M // bm) * (N // bn) * (K // bk)
    costs = body_costs(m)
    body = costs[call.name]
    assert body.matmul_flops == 2 * M * N * K
    # plus the accumulator's add of a (bm, bn) block on every step
    assert body.flops == 2 * M * N * K + steps * bm * bn
    traffic = steps * bm * bk * 2 + steps * bk * bn * 2 + (M // bm) * (N // bn) * bm * bn * 2
    assert body.bytes == pytest.approx(traffic, rel=0.10)
    (row,) = [r for r in roofline(m, get_chip("v5e"), kernel_costs=costs).rows if r.instruction == call.name]
    assert row.cost_source == "kernel body" and row.flops == body.flops and row.bytes == body.bytes
    # without the body, the model says it cannot cost the call (never 0 silently)
    (plain,) = [r for r in roofline(m, get_chip("v5e")).rows if r.instruction == call.name]
    assert plain.unknown_cost and plain.flops == 0
