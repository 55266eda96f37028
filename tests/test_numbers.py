"""Numbers the compiler's own output can check (#19): loop trip counts, the participants of
a collective whose groups are implicit, the devices a sharding tiles over."""

from __future__ import annotations

import json
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


# ------------------------------------------------ numbers a seeded bug would change (#19)
def _layout_cases():
    data = json.loads((FIXTURES / "layout_sizes.json").read_text())
    return [(c["topology"], c["shape"], c["bytes"]) for c in data["cases"]]


@pytest.mark.parametrize(("topology", "shape", "xla_bytes"), _layout_cases())
def test_padded_size_equals_libtpu_argument_size(topology, shape, xla_bytes):
    """libtpu's layout for an argument of each shape, and the bytes it allocates for it
    (memory_analysis of a real compile): vectors with three tile levels, narrow types."""
    from hloscope.cost.layout import array_memory
    from hloscope.parser.attrs import parse_shape

    assert array_memory(parse_shape(shape)).padded_bytes == xla_bytes


def test_layout_key_tells_tilings_apart():
    """Hand-derived: the same dims in the same order under another tiling (or element
    size) are another physical arrangement; size-1 dims do not count."""
    from hloscope.parser.attrs import parse_shape
    from hloscope.rules.helpers import layout_key

    key = lambda text: layout_key(parse_shape(text))  # noqa: E731
    assert key("f32[8,256]{1,0:T(8,128)}") != key("f32[8,256]{1,0:T(2,128)}")
    assert key("bf16[16,256]{1,0:T(8,128)(2,1)}") != key("bf16[16,256]{1,0:T(16,128)(2,1)}")
    assert key("f32[8,256]{1,0:T(8,128)}") != key("f32[8,256]{0,1:T(8,128)}")
    assert key("f32[8,1,256]{2,1,0:T(8,128)}") == key("f32[8,1,256]{2,0,1:T(8,128)}")


@pytest.mark.parametrize(("dims", "perm"), [((2, 3, 4), (1, 2, 0)), ((2, 3, 4), (2, 0, 1)),
                                            ((4, 2), (1, 0)), ((2, 2, 2, 3), (3, 1, 0, 2))])
def test_iota_devices_against_numpy(dims, perm):
    """`<=[dims]T(perm)` is numpy's arange(n).reshape(dims).transpose(perm), flattened;
    perms that are not their own inverse tell a transposition from its inverse."""
    import numpy as np

    from hloscope.ir.values import iota_devices

    assert iota_devices(dims, perm) == np.arange(prod(dims)).reshape(dims).transpose(perm).ravel().tolist()
    n = prod(dims)
    groups = 2 if n % 2 == 0 else 1
    iota = f"[{groups},{n // groups}]<=[{','.join(map(str, dims))}]T({','.join(map(str, perm))})"
    (m,) = parse(f"""HloModule iota_groups

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY main {{
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), replica_groups={iota}, to_apply=add
}}
""")
    groups_read = [list(g) for g in m.entry.root.attr("replica_groups").groups]
    want = np.arange(n).reshape(dims).transpose(perm).reshape(groups, n // groups).tolist()
    assert groups_read == want


_CONVOLUTIONS = {  # name -> (function, lhs shape, rhs shape); NHWC x HWIO
    "asymmetric_low_padding": (dict(window_strides=(1, 1), padding=((2, 0), (0, 3))), (2, 9, 9, 8), (3, 3, 8, 16), 1),
    "strided_low_padding": (dict(window_strides=(2, 2), padding=((3, 0), (2, 1))), (1, 11, 10, 4), (4, 3, 4, 8), 1),
    "grouped_4": (dict(window_strides=(1, 1), padding="SAME"), (2, 8, 8, 16), (3, 3, 4, 32), 4),
    "depthwise": (dict(window_strides=(1, 1), padding=((1, 1), (0, 2))), (1, 7, 7, 8), (3, 3, 1, 8), 8),
    # dilated windows (atrous) and dilated inputs (a transposed convolution's form): window
    # positions falling on padding or on the holes between input elements are not work
    "rhs_dilated": (dict(window_strides=(1, 1), padding=((1, 1), (2, 0)), rhs_dilation=(2, 3)),
                    (1, 9, 10, 4), (3, 3, 4, 8), 1),
    "lhs_dilated": (dict(window_strides=(1, 1), padding=((1, 1), (2, 1)), lhs_dilation=(2, 3)),
                    (1, 5, 4, 4), (3, 3, 4, 8), 1),
    # a stride that does not meet the padding's mirror: rows at -1, 1, 3 of 5 (2 real) where
    # the low and high padding swapped would give 0, 2, 4 (3 real)
    "strided_off_the_mirror": (dict(window_strides=(2, 1), padding=((1, 0), (0, 1))), (1, 5, 3, 4), (1, 2, 4, 8), 1),
}


@pytest.mark.parametrize("name", sorted(_CONVOLUTIONS))
def test_convolution_flops_equal_xla_cost_analysis(name):
    """Padded (low padding matters) and grouped convolutions compiled on the CPU here:
    the cost model's FLOPs of the compiled text equal XLA's cost_analysis()."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    kwargs, lhs, rhs, groups = _CONVOLUTIONS[name]

    def conv(a, k):
        return lax.conv_general_dilated(a, k, dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=groups, **kwargs)

    compiled = jax.jit(conv).lower(jnp.ones(lhs), jnp.ones(rhs)).compile()
    xla = compiled.cost_analysis()
    xla = xla[0] if isinstance(xla, list) else xla
    (m,) = parse(compiled.as_text())
    assert any(i.opcode == "convolution" for i in m.instructions())
    assert CostModel(m).module_cost().flops == xla["flops"]


@pytest.mark.parametrize(("shape", "nbytes"), [
    # each 1x128 tile is padded to 2x128 by the (2,1) level: 3 tiles x 256 x 2 B
    ("bf16[3,5]{1,0:T(1,128)(2,1)}", 1536),
    # [3,5] -> 2x1 tiles of (2,128); (4,1) pads each to (4,128): 2 x 512 x 1 B
    ("s8[3,5]{1,0:T(2,128)(4,1)}", 1024),
    # a level that divides what it tiles adds nothing: 8x128 per tile, 2 B
    ("bf16[3,5]{1,0:T(8,128)(2,1)}", 2048),
])
def test_inner_tile_levels_pad_what_they_tile(shape, nbytes):
    """Hand-derived from XLA's tiled-layout document (each tile level applies to the minor
    dims of the shape the previous levels made). libtpu never picks the first two layouts (it
    rejects them as arguments), so they are checked here rather than against a compile."""
    from hloscope.cost.layout import array_memory
    from hloscope.parser.attrs import parse_shape

    assert array_memory(parse_shape(shape)).padded_bytes == nbytes


def test_every_seeded_bug_of_bench_mutants_still_applies():
    """bench/mutants.py seeds each bug by replacing a piece of source text; if the code
    moves, the mutant must move with it (else the script would report it 'not applied')."""
    import importlib.util
    import sys

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("bench_mutants", ROOT / "bench" / "mutants.py")
    mutants = importlib.util.module_from_spec(spec)
    sys.modules["bench_mutants"] = mutants  # (dataclasses look their module up there)
    spec.loader.exec_module(mutants)
    assert len(mutants.MUTANTS) >= 13
    for m in mutants.MUTANTS:
        assert (ROOT / m.file).read_text().count(m.original) == 1, m.name
        assert all((ROOT / t.split("::")[0]).is_file() for t in m.tests), m.name
