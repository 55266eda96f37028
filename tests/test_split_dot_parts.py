"""H004 split-dot, one rule each (the mutation run found these paths untested): which
matmuls share an operand in one role, which are left out (gates, weight gradients), the
operand named, the opcode budget, the help. Modules are HAND-WRITTEN minimal ones; the
expected groups are worked by hand from each matmul's contracting dimensions and labels."""

from __future__ import annotations

import pytest

from hloscope.parser import parse
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules

RULE = load_rules()["H004"]

BUDGET = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  w = f32[32,16]{1,0} parameter(1)
  v = f32[16,32]{1,0} parameter(2)
  d1 = f32[64,16]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64,32]{1,0} dot(d1, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d3 = f32[64,16]{1,0} dot(d2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""

CONV = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[8,16,16,4]{3,2,1,0} parameter(0)
  w1 = f32[1,1,4,4]{3,2,1,0} parameter(1)
  w2 = f32[1,1,4,4]{3,2,1,0} parameter(2)
  c1 = f32[8,16,16,4]{3,2,1,0} convolution(x, w1), window={size=1x1}, dim_labels=b01f_01io->b01f
  c2 = f32[8,16,16,4]{3,2,1,0} convolution(x, w2), window={size=1x1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[8,16,16,4]{3,2,1,0}, f32[8,16,16,4]{3,2,1,0}) tuple(c1, c2)
}
"""

CONV_DIFF = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[8,16,16,4]{3,2,1,0} parameter(0)
  w1 = f32[1,1,4,4]{3,2,1,0} parameter(1)
  w2 = f32[1,1,4,4]{3,2,1,0} parameter(2)
  c1 = f32[8,16,16,4]{3,2,1,0} convolution(x, w1), window={size=1x1}, dim_labels=b01f_01io->b01f
  c2 = f32[8,16,16,4]{3,2,1,0} convolution(x, w2), window={size=1x1}, dim_labels=f01b_01io->b01f
  ROOT t = (f32[8,16,16,4]{3,2,1,0}, f32[8,16,16,4]{3,2,1,0}) tuple(c1, c2)
}
"""

GATE_FUSION = """// HAND-WRITTEN minimal module
HloModule m
silu {
  p = f32[64,16]{1,0} parameter(0)
  ROOT s = f32[64,16]{1,0} logistic(p)
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  w1 = f32[32,16]{1,0} parameter(1)
  w2 = f32[32,16]{1,0} parameter(2)
  a = f32[64,16]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,16]{1,0} dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sa = f32[64,16]{1,0} fusion(a), kind=kLoop, calls=silu
  ROOT g = f32[64,16]{1,0} multiply(sa, b)
}
"""

LARGEST = """// HAND-WRITTEN minimal module
HloModule m
scaled {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = bf16[64,32]{1,0} parameter(1)
  p2 = f32[32,16]{1,0} parameter(2)
  c = f32[64,32]{1,0} convert(p1)
  m = f32[64,32]{1,0} multiply(p0, c)
  ROOT d = f32[64,16]{1,0} dot(m, p2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  s = bf16[64,32]{1,0} parameter(1)
  w1 = f32[32,16]{1,0} parameter(2)
  w2 = f32[32,16]{1,0} parameter(3)
  big = f32[512,32]{1,0} parameter(4)
  f1 = f32[64,16]{1,0} fusion(x, s, w1), kind=kOutput, calls=scaled
  f2 = f32[64,16]{1,0} fusion(x, s, w2), kind=kOutput, calls=scaled
  v = f32[32,16]{1,0} parameter(5)
  d3 = f32[512,16]{1,0} dot(big, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,16]{1,0}, f32[64,16]{1,0}, f32[512,16]{1,0}) tuple(f1, f2, d3)
}
"""

RHS = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  w1 = f32[8,64]{1,0} parameter(1)
  w2 = f32[8,64]{1,0} parameter(2)
  d1 = f32[8,64]{1,0} dot(w1, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[8,64]{1,0} dot(w2, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[8,64]{1,0}, f32[8,64]{1,0}) tuple(d1, d2)
}
"""

ROWS_ONE_SIDE = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  g1 = f32[16,64]{1,0} parameter(1)
  g2 = f32[16,64]{1,0} parameter(2)
  d1 = f32[32,16]{1,0} dot(x, g1), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  d2 = f32[32,16]{1,0} dot(x, g2), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[32,16]{1,0}, f32[32,16]{1,0}) tuple(d1, d2)
}
"""

THROUGH_MATMUL = """// HAND-WRITTEN minimal module
HloModule m
proj {
  p = f32[64,16]{1,0} parameter(0)
  q = f32[16,16]{1,0} parameter(1)
  ROOT d = f32[64,16]{1,0} dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  w1 = f32[32,16]{1,0} parameter(1)
  w2 = f32[32,16]{1,0} parameter(2)
  u = f32[16,16]{1,0} parameter(3)
  a = f32[64,16]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,16]{1,0} dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  pa = f32[64,16]{1,0} fusion(a, u), kind=kOutput, calls=proj
  ROOT g = f32[64,16]{1,0} multiply(pa, b)
}
"""


def _found(text: str, **options) -> list:
    rule = RULE(RULE.make_options(options)) if options else RULE()
    return run(parse(text, "m"), [rule]).findings


def _groups(text: str) -> list[tuple[str, list[str]]]:
    return [(f.evidence["shared_operand"], f.evidence["matmuls"]) for f in _found(text)]


def test_convolutions_group_by_their_input_labels():
    """Two 1x1 convolutions of x by same-shaped filters: grouped when x enters both with the
    labels b01f, not when one reads it as f01b (its batch and features swapped), though both
    write b01f."""
    assert _groups(CONV) == [("x", ["c1", "c2"])]
    assert _found(CONV)[0].evidence["contracting"] == "b01f_01io"
    assert _groups(CONV_DIFF) == []


def test_a_right_hand_operand_groups_by_its_own_contracting_dims():
    """x is both dots' right operand, contracted over dimension 0 in one and 1 in the other:
    not the same input, never one matmul."""
    assert _groups(RHS) == []
    same = RHS.replace("rhs_contracting_dims={1}", "rhs_contracting_dims={0}")
    assert _groups(same) == [("x", ["d1", "d2"])]


def test_a_gate_reached_through_a_fusion_of_its_own_is_a_gate():
    """silu(a) computed in a loop fusion, then silu(a) * b: a gate, not reported. Where a
    passes through a matmul first (a fusion with a dot), (a @ u) * b is no gate of a and b:
    the pair is reported."""
    assert _groups(GATE_FUSION) == []
    assert _groups(THROUGH_MATMUL) == [("x", ["a", "b"])]


def test_a_sum_over_rows_needs_both_inputs_contracted_off_their_last_dimension():
    """x^T g with g contracted over its last dimension is not a weight gradient's form
    (x^T g contracts both inputs' rows): reported."""
    assert _groups(ROWS_ONE_SIDE) == [("x", ["d1", "d2"])]
    both = ROWS_ONE_SIDE.replace("f32[16,64]", "f32[64,16]").replace(
        "rhs_contracting_dims={1}", "rhs_contracting_dims={0}")
    assert _groups(both) == []


def test_the_largest_shared_operand_is_named_once():
    """Two fusions read x (f32[64,32], 8 KiB) and s (bf16[64,32], 4 KiB), multiply them and
    feed the product to their dots: both reach the matmuls the same way. The larger, x, is
    named, and the same pair is not reported again through s; the wider operand read by one
    matmul only is passed over."""
    found = _found(LARGEST)
    assert [(f.evidence["shared_operand"], f.evidence["matmuls"]) for f in found] == [("x", ["f1", "f2"])]


@pytest.mark.parametrize(("limit", "fires"), [(2, True), (3, False)])
def test_the_opcode_budget(limit, fires):
    """Three dots: over a budget of 2 (the first extra is the third), within one of 3."""
    found = _found(BUDGET, expect={"dot": limit})
    assert bool(found) == fires
    if fires:
        (f,) = found
        assert f.instruction == "d3"
        assert f.evidence == {"opcode": "dot", "count": 3, "expected": 2}
        assert f.help == "Check whether a projection was split or a matmul duplicated."


def test_the_help_says_how_to_stack_and_what_not_to_do():
    (f,) = _found(THROUGH_MATMUL)
    assert f.help.startswith("Store the weights stacked on a new axis (one W_qkv of shape [d, 3, d], ")
    for said in ("shard its last axis as the separate weights were", "the shared operand is read once",
                 "Do not concatenate them along a sharded output dimension ([W_q | W_k | W_v]",
                 "a copy of the weights every step", "It saves memory traffic",
                 "see the rule's doc for XLA's own figures)."):
        assert said in f.help, said
    assert f.message.endswith("the stacked weights would read %x once")
