"""H006 duplicate-computation, one rule each (the mutation run found these paths untested):
what is never a duplicate (buffers of their own, side effects, values written in place),
attributes compared but for metadata and backend_config, a repeated function reported once
at its first op with the rest as followers, the size limit, the evidence and the help.
Modules are HAND-WRITTEN minimal ones; the answers are worked by hand."""

from __future__ import annotations

from hloscope.parser import parse
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules

RULE = load_rules()["H006"]

BASIC = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  p = f32[64,32]{1,0} parameter(0)
  a = f32[64,32]{1,0} exponential(p)
  b = f32[64,32]{1,0} exponential(p)
  ROOT t = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(a, b)
}
"""

ALLOC = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  a = f32[64,32]{1,0} custom-call(), custom_call_target="AllocateBuffer"
  b = f32[64,32]{1,0} custom-call(), custom_call_target="AllocateBuffer"
  e1 = f32[64,32]{1,0} custom-call(), custom_call_target="Tick", custom_call_has_side_effect=true
  e2 = f32[64,32]{1,0} custom-call(), custom_call_target="Tick", custom_call_has_side_effect=true
  c = f32[64,32]{1,0} custom-call(), custom_call_target="Fill"
  d = f32[64,32]{1,0} custom-call(), custom_call_target="Fill"
  ROOT t = (f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(a, b, e1, e2, c, d)
}
"""

ATTRS = """// HAND-WRITTEN minimal module
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[2048,2048]{1,0} parameter(0)
  z = f32[] constant(0)
  r0 = f32[2048]{0} reduce(p, z), dimensions={0}, to_apply=add
  r1 = f32[2048]{0} reduce(p, z), dimensions={1}, to_apply=add, backend_config={"k":1}
  r2 = f32[2048]{0} reduce(p, z), dimensions={1}, to_apply=add, backend_config={"k":2}
  c1 = f32[2048,2048]{1,0} cosine(p)
  c2 = f32[2048,2048]{1,0} cosine(p)
  ROOT t = (f32[2048]{0}, f32[2048]{0}, f32[2048]{0}, f32[2048,2048]{1,0}, f32[2048,2048]{1,0}) tuple(r0, r1, r2, c1, c2)
}
"""

CHAIN = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  p = f32[64,32]{1,0} parameter(0)
  a1 = f32[64,32]{1,0} exponential(p)
  b1 = f32[64,32]{1,0} negate(a1)
  a2 = f32[64,32]{1,0} exponential(p)
  b2 = f32[64,32]{1,0} negate(a2)
  ROOT t = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(b1, b2)
}
"""

SMALL_FIRST = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  s = f32[16]{0} parameter(0)
  p = f32[64,32]{1,0} parameter(1)
  x1 = f32[16]{0} exponential(s)
  x2 = f32[16]{0} exponential(s)
  a = f32[64,32]{1,0} sine(p)
  b = f32[64,32]{1,0} sine(p)
  ROOT t = (f32[16]{0}, f32[16]{0}, f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(x1, x2, a, b)
}
"""

IN_PLACE = """// HAND-WRITTEN minimal module
HloModule m
cond {
  q = (s32[], f32[64,32]{1,0}) parameter(0)
  i = s32[] get-tuple-element(q), index=0
  n = s32[] constant(2)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  q = (s32[], f32[64,32]{1,0}) parameter(0)
  i = s32[] get-tuple-element(q), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[64,32]{1,0} get-tuple-element(q), index=1
  w = f32[64,32]{1,0} negate(v)
  ROOT t = (s32[], f32[64,32]{1,0}) tuple(j, w)
}
ENTRY e {
  z = f32[] constant(0)
  k = s32[] constant(0)
  b1 = f32[64,32]{1,0} broadcast(z), dimensions={}
  b2 = f32[64,32]{1,0} broadcast(z), dimensions={}
  u = f32[8,32]{1,0} parameter(0)
  d = f32[64,32]{1,0} dynamic-update-slice(b2, u, k, k)
  t = (s32[], f32[64,32]{1,0}) tuple(k, b1)
  l = (s32[], f32[64,32]{1,0}) while(t), condition=cond, body=body
  g = f32[64,32]{1,0} get-tuple-element(l), index=1
  ROOT r = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(g, d)
}
"""

DUS_THEN = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  z = f32[] constant(0)
  k = s32[] constant(0)
  b1 = f32[64,32]{1,0} broadcast(z), dimensions={}
  b2 = f32[64,32]{1,0} broadcast(z), dimensions={}
  u = f32[8,32]{1,0} parameter(0)
  n = f32[64,32]{1,0} negate(b1)
  d = f32[64,32]{1,0} dynamic-update-slice(b2, u, k, k)
  p = f32[64,32]{1,0} parameter(1)
  q1 = f32[64,32]{1,0} sine(p)
  q2 = f32[64,32]{1,0} sine(p)
  ROOT r = (f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(n, d, q1, q2)
}
"""

CONFIG_ONLY = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  p = f32[64,32]{1,0} parameter(0)
  c1 = f32[64,32]{1,0} cosine(p), backend_config={"k":1}
  c2 = f32[64,32]{1,0} cosine(p), backend_config={"k":2}
  ROOT t = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(c1, c2)
}
"""

CHAIN2 = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  p = f32[64,32]{1,0} parameter(0)
  a1 = f32[64,32]{1,0} exponential(p)
  b1 = f32[64,32]{1,0} add(a1, p)
  a2 = f32[64,32]{1,0} exponential(p)
  b2 = f32[64,32]{1,0} add(a2, p)
  ROOT t = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(b1, b2)
}
"""


def _found(text: str) -> list:
    return run(parse(text, "m"), [RULE()]).findings


def _pairs(text: str) -> list[tuple[str, str]]:
    return [(f.instruction, f.evidence["first"]) for f in _found(text)]


def test_a_value_computed_twice_its_evidence_and_help():
    """exp(p) twice over f32[64,32]: the second is reported; the bytes are its own read and
    write, 2 x 8 KiB."""
    (f,) = _found(BASIC)
    assert f.instruction == "b"
    assert f.evidence == {"first": "a", "opcode": "exponential", "flops": 0.0, "bytes": 16384}
    assert f.cost == {"bytes_wasted": 16384.0}
    assert f.message == "%b recomputes %a (exponential f32[64,32] of the same operands)"
    assert f.help == ("Compute the value once and reuse it (in JAX: bind it to a variable "
                      "instead of calling the function twice).")


def test_buffers_of_their_own_and_side_effects_are_never_duplicates():
    """Two AllocateBuffer calls are two buffers, two side-effecting calls two effects; two
    plain custom calls of one target on the same (no) operands are a duplicate."""
    assert _pairs(ALLOC) == [("d", "c")]


def test_attributes_compared_but_for_backend_config():
    """r0 reduces over dimension 0, r1 and r2 over 1 (their backend_config differs): r2
    repeats r1, not r0. c2 repeats c1 after them: the scan goes on past a duplicate."""
    assert sorted(_pairs(ATTRS)) == [("c2", "c1"), ("r2", "r1")]


def test_a_repeated_function_is_one_finding_at_its_first_op():
    """exp then negate, twice: one finding at the second exp, the negate that reads it
    listed as its follower, and the bytes of both counted."""
    (f,) = _found(CHAIN)
    assert (f.instruction, f.evidence["first"], f.evidence["followers"]) == ("a2", "a1", ["b2"])
    assert f.cost == {"bytes_wasted": 2 * 16384.0}
    assert f.message.endswith("; 1 op(s) computed from it repeat theirs too")


def test_small_duplicates_are_passed_over_and_the_rest_judged():
    """exp of an f32[16] twice is under the 1,024-element limit; sin of f32[64,32] twice
    after it is reported."""
    assert _pairs(SMALL_FIRST) == [("b", "a")]


def test_values_written_in_place_are_kept_apart_on_purpose():
    """Two zero broadcasts: one becomes a loop's state (through a tuple), the other is
    updated in place by a dynamic-update-slice. XLA keeps such clones apart on purpose."""
    assert _found(IN_PLACE) == []


def test_an_in_place_update_alone_keeps_the_clones_apart_and_the_rest_is_judged():
    """b1 is only negated; b2, equal to it, is updated in place by a dynamic-update-slice:
    kept apart. The sines after them are reported."""
    assert _pairs(DUS_THEN) == [("q2", "q1")]


def test_equal_but_for_backend_config_the_first_time_they_meet():
    assert _pairs(CONFIG_ONLY) == [("c2", "c1")]


def test_a_follower_with_another_operand_is_still_a_follower():
    """exp(p) + p, twice: the add reads the repeated exp and p itself; it follows."""
    (f,) = _found(CHAIN2)
    assert (f.instruction, f.evidence["followers"]) == ("a2", ["b2"])


# (HAND-WRITTEN) metadata printed before the attributes, as some producers do: the text
# before `metadata` is not all there is to compare
UNTOLD = ATTRS.replace("dimensions={0}, to_apply=add\n", "metadata={op_name=\"r\"}, dimensions={0}, to_apply=add\n") \
    .replace("dimensions={1}, to_apply=add, backend_config={\"k\":1}",
             "metadata={op_name=\"r\"}, dimensions={1}, to_apply=add")


def test_attributes_after_metadata_are_still_compared():
    """r0 and r1 print their metadata first: r0 (over dimension 0) and r1 (over 1) differ,
    r2 (over 1, metadata last) repeats r1."""
    assert "metadata={op_name=\"r\"}, dimensions={0}" in UNTOLD
    assert sorted(_pairs(UNTOLD)) == [("c2", "c1"), ("r2", "r1")]


def _loop_state_in_tuples(levels: int) -> str:
    """HAND-WRITTEN minimal module: two equal zero broadcasts, b1 passed to a loop inside
    `levels` nested tuples, b2 only negated."""
    wraps, inner = [], "b1"
    for k in range(levels):
        shape = "f32[64,32]{1,0}" if k == 0 else f"({prev})"
        prev = shape
        wraps.append(f"  t{k} = ({shape}) tuple({inner})\n")
        inner = f"t{k}"
    state = f"({prev})"
    cond = f"cond {{\n  q = {state} parameter(0)\n  ROOT c = pred[] constant(false)\n}}\n"
    body = f"body {{\n  ROOT q = {state} parameter(0)\n}}\n"
    return ("HloModule m\n" + cond + body + "ENTRY e {\n  z = f32[] constant(0)\n"
            "  b1 = f32[64,32]{1,0} broadcast(z), dimensions={}\n"
            "  b2 = f32[64,32]{1,0} broadcast(z), dimensions={}\n" + "".join(wraps)
            + f"  l = {state} while({inner}), condition=cond, body=body\n"
            "  n = f32[64,32]{1,0} negate(b2)\n"
            f"  ROOT r = ({state}, f32[64,32]{{1,0}}) tuple(l, n)\n}}\n")


def test_a_loop_state_is_kept_apart_however_deep_its_tuples_nest():
    for levels in (1, 2, 3, 4):
        assert _found(_loop_state_in_tuples(levels)) == [], levels


IN_PLACE_FUSION = """// HAND-WRITTEN minimal module
HloModule m
update {
  q0 = f32[64,32]{1,0} parameter(0)
  q1 = f32[8,32]{1,0} parameter(1)
  k = s32[] constant(0)
  ROOT d = f32[64,32]{1,0} dynamic-update-slice(q0, q1, k, k)
}
ENTRY e {
  z = f32[] constant(0)
  u = f32[8,32]{1,0} parameter(0)
  b1 = f32[64,32]{1,0} broadcast(z), dimensions={}
  b2 = f32[64,32]{1,0} broadcast(z), dimensions={}
  n = f32[64,32]{1,0} negate(b1)
  f = f32[64,32]{1,0} fusion(b2, u), kind=kLoop, calls=update
  ROOT r = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(n, f)
}
"""


def test_a_fusion_that_updates_its_operand_in_place_keeps_the_clones_apart():
    """b2 is the buffer a fusion's dynamic-update-slice writes into (its parameter 0): XLA
    keeps it apart from b1 on purpose; swapped, so that b1 is the one updated, the same."""
    assert _found(IN_PLACE_FUSION) == []
    assert _found(IN_PLACE_FUSION.replace("negate(b1)", "negate(b2)").replace("fusion(b2, u)", "fusion(b1, u)")) == []


def test_three_alike_but_for_their_reducer_are_three_values():
    """Three reduces of p over one dimension, by add, multiply and maximum: the same opcode,
    shape and operands, different attributes. None repeats another (HAND-WRITTEN)."""
    text = """HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
mul {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] multiply(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY e {
  p = f32[2048,2048]{1,0} parameter(0)
  z = f32[] constant(0)
  r0 = f32[2048]{0} reduce(p, z), dimensions={1}, to_apply=add
  r1 = f32[2048]{0} reduce(p, z), dimensions={1}, to_apply=mul
  r2 = f32[2048]{0} reduce(p, z), dimensions={1}, to_apply=max
  ROOT t = (f32[2048]{0}, f32[2048]{0}, f32[2048]{0}) tuple(r0, r1, r2)
}
"""
    assert _found(text) == []
