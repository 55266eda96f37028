"""Modules the default parser takes though XLA's verifier would not (a fusion with no
`calls=`, a dot with no contracting dimensions, a custom call with no target, collectives
with no groups, a loop condition with an extra parameter): every rule and every analysis runs
on them without an internal error. Each rule guards such input (the parser's default mode is
lenient on purpose: a dump from a newer XLA still lints), and these tests hold the guards.

HAND-WRITTEN: the modules below are minimal cases of syntax corners, not compiler output.
"""

from __future__ import annotations

import pytest

from hloscope.cost.chips import get_chip
from hloscope.cost.liveness import memory
from hloscope.cost.roofline import roofline
from hloscope.parser import parse
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules
from hloscope.sharding import analyze

CASES = {
"fusion_without_calls": '''HloModule m

ENTRY e {
  p = f32[128,128] parameter(0)
  w = f32[128,128] parameter(1)
  v = f32[128,128] parameter(2)
  a = f32[128,128] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[128,128] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f = f32[128,128] fusion(a, b), kind=kLoop
  c = f32[128,128] copy(f)
  ROOT r = f32[128,128] add(c, a)
}
''',
"dot_without_dims": '''HloModule m

ENTRY e {
  p = f32[128,128] parameter(0)
  w = f32[128,128] parameter(1)
  v = f32[128,128] parameter(2)
  a = f32[128,128,128,128] dot(p, w)
  b = f32[128,128,128,128] dot(p, v)
  ROOT t = (f32[128,128,128,128], f32[128,128,128,128]) tuple(a, b)
}
''',
"copies_odd": '''HloModule m

ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  t = (f32[1024,1024]{1,0}) parameter(1)
  c = f32[1024,1024]{0,1} copy(t)
  s = () copy-start(p)
  a = f32[1024,1024]{0,1} copy-start(p)
  ROOT r = (f32[1024,1024]{0,1}, (), f32[1024,1024]{0,1}) tuple(c, s, a)
}
''',
"custom_call_without_target": '''HloModule m

ENTRY e {
  p = f32[1024,1024] parameter(0)
  c = f32[1024,1024] custom-call(p)
  ROOT d = f32[1024,1024] copy(c)
}
''',
"collectives_without_groups": '''HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[1024,1024] parameter(0)
  ar = f32[1024,1024] all-reduce(p), to_apply=add
  ag = f32[2048,1024] all-gather(ar), dimensions={0}
  ags = (f32[1024,1024], f32[2048,1024]) all-gather-start(ar), dimensions={0}
  agd = f32[2048,1024] all-gather-done(ags)
  cp = f32[1024,1024] collective-permute(p), source_target_pairs={}
  ROOT t = (f32[2048,1024], f32[2048,1024], f32[1024,1024]) tuple(ag, agd, cp)
}
''',
"fusion_arity_off": '''HloModule m

three {
  q0 = f32[128,128] parameter(0)
  q1 = f32[128,128] parameter(1)
  q2 = f32[128,128] parameter(2)
  ROOT m = f32[128,128] multiply(q0, q1)
}

upd {
  q0 = f32[128,128] parameter(0)
  q1 = f32[128,128] parameter(1)
  k = s32[] constant(0)
  ROOT d = f32[128,128] dynamic-update-slice(q1, q0, k, k)
}

one {
  q0 = f32[128,128] parameter(0)
  w = f32[128,128] constant({...})
  ROOT d = f32[128,128] dot(q0, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY e {
  p = f32[128,128] parameter(0)
  w = f32[128,128] parameter(1)
  v = f32[128,128] parameter(2)
  a = f32[128,128] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[128,128] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[128,128] fusion(a, b), kind=kLoop, calls=three
  f1 = f32[128,128] fusion(w, p), kind=kOutput, calls=one
  f2 = f32[128,128] fusion(v, p), kind=kOutput, calls=one
  z = f32[] constant(0)
  b1 = f32[128,128] broadcast(z), dimensions={}
  b2 = f32[128,128] broadcast(z), dimensions={}
  u = f32[128,128] fusion(b2), kind=kLoop, calls=upd
  ROOT t = (f32[128,128], f32[128,128], f32[128,128], f32[128,128], f32[128,128]) tuple(g, f1, f2, b1, u)
}
''',
"while_odd": '''HloModule m

cond {
  s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] parameter(1)
  ROOT lt = pred[] compare(i, i), direction=LT
}

body {
  s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64,64] get-tuple-element(s), index=1
  c = f32[64,64] copy(x)
  ROOT t = (s32[], f32[64,64]) tuple(i, c)
}

ENTRY e {
  p = f32[64,64] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[64,64]) tuple(z, p)
  ROOT w = (s32[], f32[64,64]) while(t), condition=cond, body=body
}
''',
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("chip", ["v5p", "v5e", "h100", None])
def test_every_rule_and_analysis_runs_on_a_lenient_module(name, chip):
    modules = parse(CASES[name], name)
    chip = get_chip(chip) if chip else None
    result = run(modules, [r() for r in load_rules().values()], chip=chip)
    crashed = [f.message for f in result.findings if f.code == "X000"]
    assert not crashed, crashed
    for m in modules:
        memory(m)
        roofline(m, chip or get_chip("v5p"))
        analyze(m, chip or get_chip("v5p"))


def _codes(name: str, text: str | None = None) -> set[str]:
    return {f.code for f in run(parse(text or CASES[name], name), [r() for r in load_rules().values()],
                                chip=get_chip("v5p")).findings}


def test_a_fusion_with_no_called_computation_is_not_a_matmul_nor_a_gate():
    # a and b multiply p by same-shaped weights and meet only in a fusion whose body is not
    # printed: nothing says it is a gate, so the pair is reported (H004); the copy of the
    # fusion's result is a copy with nothing to say why (H001)
    assert {"H004", "H001"} <= _codes("fusion_without_calls")
    # nor a fusion with no body that reads a alone, then meets b: it is not taken to carry a
    one = CASES["fusion_without_calls"].replace("fusion(a, b), kind=kLoop", "fusion(a), kind=kLoop") \
        .replace("add(c, a)", "multiply(c, b)")
    assert "H004" in _codes("fusion_without_calls", one)


def test_a_fusion_with_more_parameters_or_operands_than_the_other_is_judged_by_what_it_has():
    # (and u's update writes into a parameter no operand binds: b2 is updated in place by
    # nothing, so it repeats b1, H006)
    assert "H006" in _codes("fusion_arity_off")
    # g's body has a third parameter with no operand to bind it to; a and b still meet there
    # (a gate: not reported). f1 and f2 read p as an operand that no parameter takes: p
    # reaches no matmul through them, so they are no pair either
    assert "H004" not in _codes("fusion_arity_off")
    # (where they do not meet there, the pair is reported)
    no_gate = CASES["fusion_arity_off"].replace("multiply(q0, q1)", "negate(q0)")
    assert "H004" in _codes("fusion_arity_off", no_gate)


def test_copies_of_odd_shapes_are_judged_by_what_they_copy():
    # a copy of a tuple printed as an array, a copy-start printed as () are no relayouts;
    # a copy-start printed as the array it makes is judged as a copy: a relayout (H002)
    found = run(parse(CASES["copies_odd"], "m"), [load_rules()["H002"]()], stage="after_optimizations").findings
    assert [f.instruction for f in found] == ["a"]


def test_collective_starts_without_groups_are_still_collectives():
    # the all-gather-start's done follows it at once: nothing overlaps it (H008)
    assert "H008" in _codes("collectives_without_groups")
