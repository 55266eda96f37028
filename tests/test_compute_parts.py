"""FLOPs and transcendentals of one instruction (CostModel.compute), op by op, against XLA's
own HloCostAnalysis of the same module: the analysis whose figures `cost_analysis()` reports,
run by jaxlib on the text (tests/oracle.py). Each module is HAND-WRITTEN, minimal, one op of
interest as the entry's root; XLA parses each (the oracle would fail on a malformed one).

Where hloscope goes further than XLA it says so: a while's FLOPs times its trip count (XLA
costs one iteration, as hloscope does with trip_counts=False)."""

from __future__ import annotations

import pytest
from conftest import counted_loop
from oracle import xla_cost_analysis

from hloscope.cost.ops import CostModel
from hloscope.parser import parse

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""
CMP = """cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
"""
G = """g {
  x = f32[16] parameter(0)
  ROOT e = f32[16] exponential(x)
}
"""
ARGMAX = """argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
"""
EXPM = """ex {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  e = f32[] exponential(b)
  ROOT s = f32[] add(a, e)
}
"""
CASES = {
 "reduce": ADD + """ENTRY main {
  p = f32[64,32] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(p, z), dimensions={1}, to_apply=add
}""",
 "reduce_exp": EXPM + """ENTRY main {
  p = f32[64,32] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(p, z), dimensions={1}, to_apply=ex
}""",
 "argmax": ARGMAX + """ENTRY main {
  p = f32[64,32] parameter(0)
  q = s32[64,32] iota(), iota_dimension=1
  z = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[64], s32[64]) reduce(p, q, z, zi), dimensions={1}, to_apply=argmax
}""",
 "reduce_window": ADD + """ENTRY main {
  p = f32[16,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[14,8] reduce-window(p, z), window={size=3x2 stride=1x2}, to_apply=add
}""",
 "reduce_window_exp": EXPM + """ENTRY main {
  p = f32[16,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[14,8] reduce-window(p, z), window={size=3x2 stride=1x2}, to_apply=ex
}""",
 "scatter": ADD + """ENTRY main {
  p = f32[64,8] parameter(0)
  i = s32[10,1] parameter(1)
  u = f32[10,8] parameter(2)
  ROOT s = f32[64,8] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}""",
 "sort_kv": """cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  p = f32[8,256] parameter(0)
  q = s32[8,256] parameter(1)
  ROOT s = (f32[8,256], s32[8,256]) sort(p, q), dimensions={1}, to_apply=cmp
}""",
 "rng": """ENTRY main {
  a = f32[] constant(0)
  b = f32[] constant(1)
  ROOT r = f32[32,4] rng(a, b), distribution=rng_uniform
}""",
 "conditional": """t {
  x = f32[16] parameter(0)
  ROOT e = f32[16] exponential(x)
}
f {
  x = f32[16] parameter(0)
  a = f32[16] add(x, x)
  ROOT m = f32[16] multiply(a, x)
}
ENTRY main {
  c = pred[] parameter(0)
  x = f32[16] parameter(1)
  ROOT r = f32[16] conditional(c, x, x), true_computation=t, false_computation=f
}""",
 "call": G + """ENTRY main {
  x = f32[16] parameter(0)
  ROOT r = f32[16] call(x), to_apply=g
}""",
 "all_reduce": ADD + """ENTRY main {
  p = f32[128] parameter(0)
  ROOT r = f32[128] all-reduce(p), replica_groups={}, to_apply=add
}""",
}
CASES.update({
 "scatter2": ADD + """add2 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  s = f32[] add(a, c)
  t = f32[] multiply(b, d)
  ROOT r = (f32[], f32[]) tuple(s, t)
}
ENTRY main {
  p = f32[64,8] parameter(0)
  q = f32[64,8] parameter(3)
  i = s32[10,1] parameter(1)
  u = f32[10,8] parameter(2)
  v = f32[10,8] parameter(4)
  ROOT s = (f32[64,8], f32[64,8]) scatter(p, q, i, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
}""",
 "rw1": ADD + """ENTRY main {
  p = f32[16,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16,16] reduce-window(p, z), window={size=1x1}, to_apply=add
}""",
 "rs": ADD + """ENTRY main {
  p = f32[128] parameter(0)
  ROOT r = f32[32] reduce-scatter(p), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add
}""",
 "ars": ADD + """ENTRY main {
  p = f32[128] parameter(0)
  s = f32[128] all-reduce-start(p), replica_groups={}, to_apply=add
  ROOT d = f32[128] all-reduce-done(s)
}""",
 "async_call": G + """ENTRY main {
  x = f32[16] parameter(0)
  s = ((f32[16]), f32[16], s32[]) call-start(x), to_apply=g
  ROOT d = f32[16] call-done(s)
}""",
 "async_start": G + """ENTRY main {
  x = f32[16] parameter(0)
  s = ((f32[16]), f32[16], s32[]) async-start(x), calls=g
  ROOT d = f32[16] async-done(s)
}""",
})
CASES.update({f"sort_of_{n}": CMP + f"""ENTRY main {{
  p = f32[{n}] parameter(0)
  ROOT s = f32[{n}] sort(p), dimensions={{0}}, to_apply=cmp
}}""" for n in (1, 2, 3, 1000)})  # (n log2 n comparisons; none for one element)
CASES["all_reduce_combined"] = ADD + """ENTRY main {
  p = f32[128] parameter(0)
  q = f32[64,2] parameter(1)
  ROOT r = (f32[128], f32[64,2]) all-reduce(p, q), replica_groups={}, to_apply=add
}"""
CASES["reduce_scatter_async"] = ADD + """ENTRY main {
  p = f32[128] parameter(0)
  q = f32[128] parameter(1)
  s = ((f32[128], f32[128]), (f32[32], f32[32])) reduce-scatter-start(p, q), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add
  ROOT d = (f32[32], f32[32]) reduce-scatter-done(s)
}"""
CASES["convolution_without_window"] = """ENTRY main {
  a = f32[8,16] parameter(0)
  w = f32[16,32] parameter(1)
  ROOT c = f32[8,32] convolution(a, w), dim_labels=bf_io->bf
}"""
# 6,145 outputs x a 2,048 window: 12.6 M (position, tap) pairs, past what is enumerated
CASES["convolution_of_a_long_window"] = """ENTRY main {
  a = f32[1,8192,1] parameter(0)
  w = f32[2048,1,1] parameter(1)
  ROOT c = f32[1,6145,1] convolution(a, w), window={size=2048}, dim_labels=b0f_0io->b0f
}"""
CASES["dot_without_contracting_dims"] = """ENTRY main {
  a = f32[8] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[8,4] dot(a, b)
}"""
CASES["fusion"] = """fused {
  x = f32[16,8] parameter(0)
  e = f32[16,8] exponential(x)
  ROOT m = f32[16,8] multiply(e, x)
}
ENTRY main {
  x = f32[16,8] parameter(0)
  ROOT f = f32[16,8] fusion(x), kind=kLoop, calls=fused
}"""


def _module(text: str):
    (m,) = parse(text)
    return m


@pytest.mark.parametrize("name", sorted(CASES))
def test_flops_equal_xla_cost_analysis(name):
    text = "HloModule m\n\n" + CASES[name] + "\n"
    xla = xla_cost_analysis(text)
    model = CostModel(_module(text))
    total = model.module_cost()
    assert (total.flops, total.transcendentals) == (xla.get("flops", 0.0), xla.get("transcendentals", 0.0))
    assert total.unknown == []
    # the op of interest holds them all (the rest of each module is parameters and constants)
    ops = [i for i in model.module.entry.instructions if i.opcode not in ("parameter", "constant")]
    root = ops[0] if ops[-1].opcode.endswith("-done") else ops[-1]
    c = model.compute(root)
    assert (c.flops, c.transcendentals) == (xla.get("flops", 0.0), xla.get("transcendentals", 0.0))
    if name not in _BYTES_APART:
        assert total.bytes_read + total.bytes_written == xla["bytes accessed"]


# Where the bytes are not XLA's, and why: an async wrapper's own bookkeeping (XLA counts the
# start's operand and result tuples besides the work it wraps; the model counts the work)
_BYTES_APART = {"async_call", "async_start", "reduce_scatter_async"}


def test_the_ops_chosen_are_worth_a_count():
    """(so that the equalities above are not 0 == 0 throughout)"""
    nonzero = [n for n in CASES if xla_cost_analysis("HloModule m\n\n" + CASES[n] + "\n").get("flops")]
    assert len(nonzero) >= 14


def _loop(trips: int) -> str:
    return "HloModule m\n\n" + counted_loop("f32[64]{0}", "%y = f32[64]{0} exponential(%x)", trips) + """
ENTRY %e (p: f32[64]) -> (s32[], f32[64]) {
  %p = f32[64]{0} parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[64]{0}) tuple(%z, %p)
  ROOT %w = (s32[], f32[64]{0}) while(%t), condition=%cond, body=%body
}
"""


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_a_while_costs_its_trip_count_times_what_xla_counts_for_one_iteration(trips):
    """XLA counts one iteration (the body's counter add and exp, the condition's compare):
    the model, told not to use trip counts, counts the same; with them, trips times that."""
    text = _loop(trips)
    xla = xla_cost_analysis(text)
    assert (xla["flops"], xla["transcendentals"]) == (2.0, 64.0)
    m = _module(text)
    once = CostModel(m, trip_counts=False)
    for c in (once.compute(m.entry.root), once.module_cost()):
        assert (c.flops, c.transcendentals) == (2.0, 64.0)
    model = CostModel(m)
    for c in (model.compute(m.entry.root), model.module_cost()):
        assert (c.flops, c.transcendentals) == (2.0 * trips, 64.0 * trips)
        assert c.unknown_trip_counts == []


def test_a_while_whose_trips_are_unknown_counts_once_and_says_so():
    """(HAND-WRITTEN: the condition compares with a parameter, so no count can be read)"""
    text = _loop(5).replace("%n = s32[] constant(5)", "%n = s32[] get-tuple-element(%s), index=0")
    m = _module(text)
    model = CostModel(m)
    c = model.compute(m.entry.root)
    assert (c.flops, c.transcendentals) == (2.0, 64.0) and c.unknown_trip_counts == ["w"]
    total = model.module_cost()
    assert total.unknown_trip_counts == ["w"] and (total.flops, total.transcendentals) == (2.0, 64.0)


def test_a_conditional_in_a_loop_costs_its_costliest_branch_each_trip():
    """HAND-WRITTEN: a 3-trip loop whose body runs a conditional of an exp branch (64
    transcendentals) and an add branch (64 FLOPs): each trip counts the most of each, and
    the counter's add and compare."""
    branches = """%t (x: f32[64]) -> f32[64] {
  %x = f32[64]{0} parameter(0)
  ROOT %e = f32[64]{0} exponential(%x)
}

%f (x: f32[64]) -> f32[64] {
  %x = f32[64]{0} parameter(0)
  ROOT %a = f32[64]{0} add(%x, %x)
}

"""
    step = "%c = pred[] compare(%i, %one), direction=LT\n  %y = f32[64]{0} conditional(%c, %x, %x), " \
           "true_computation=%t, false_computation=%f"
    text = _loop(3).replace("HloModule m\n\n", "HloModule m\n\n" + branches).replace(
        "%y = f32[64]{0} exponential(%x)", step)
    m = _module(text)
    total = CostModel(m).module_cost()
    # per trip: the branches' most (64 FLOPs, 64 transcendentals), the counter's add, the
    # body's compare and the condition's
    assert (total.flops, total.transcendentals) == (3 * (64 + 3), 3 * 64)
    xla = xla_cost_analysis(text)  # (one trip, as XLA counts a while)
    assert (xla["flops"], xla["transcendentals"]) == (64 + 3, 64)


def test_an_async_kernel_start_costs_its_kernels_estimate_and_its_done_nothing():
    """HAND-WRITTEN: a Pallas kernel run async (custom-call-start/-done) costs what its
    cost_estimate states, once, at its start: as the same kernel run in place does."""
    cfg = 'backend_config={"custom_call_config":{"cost_estimate":{"flops":"100","transcendentals":"7",' \
          '"bytes_accessed":"9"}}}'
    text = f"""HloModule m

ENTRY %e (a: f32[8,128]) -> f32[8,128] {{
  %a = f32[8,128]{{1,0}} parameter(0)
  %k = f32[8,128]{{1,0}} custom-call(%a), custom_call_target="tpu_custom_call", {cfg}
  %s = ((f32[8,128]{{1,0}}), f32[8,128]{{1,0}}, s32[]) custom-call-start(%k), custom_call_target="tpu_custom_call", {cfg}
  ROOT %d = f32[8,128]{{1,0}} custom-call-done(%s)
}}
"""
    m = _module(text)
    model = CostModel(m)
    by_name = m.entry.by_name
    for name, expected in (("k", (100.0, 7.0)), ("s", (100.0, 7.0)), ("d", (0.0, 0.0))):
        c = model.compute(by_name[name])
        assert (c.flops, c.transcendentals, c.unknown) == (*expected, [])
    assert (model.module_cost().flops, model.module_cost().transcendentals) == (200.0, 14.0)


def test_a_convolution_without_dim_labels_says_so():
    """HAND-WRITTEN syntax corner (XLA always prints dim_labels): no FLOPs, and the reason."""
    m = _module("HloModule m\n\nENTRY e {\n  a = f32[8,16] parameter(0)\n  w = f32[16,32] parameter(1)\n"
                "  ROOT c = f32[8,32] convolution(a, w)\n}\n")
    c = CostModel(m).compute(m.entry.root)
    assert (c.flops, c.unknown) == (0, [("c", "convolution without dim_labels")])
