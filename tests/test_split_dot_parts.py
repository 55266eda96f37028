"""H004 split-dot, one rule each (the mutation run found these paths untested): which
matmuls share an operand in one role, which are left out (gates, weight gradients), the
operand named, the opcode budget, the help. Modules are HAND-WRITTEN minimal ones; the
expected groups are worked by hand from each matmul's contracting dimensions and labels."""

from __future__ import annotations

import pytest
from conftest import make_rule

from hloscope.parser import parse
from hloscope.rules.engine import run

# the pair most cases start from: a = x @ w1 and b = x @ w2, by same-shaped weights
_PAIR = """  x = f32[64,32]{1,0} parameter(0)
  w1 = f32[32,16]{1,0} parameter(1)
  w2 = f32[32,16]{1,0} parameter(2)
  a = f32[64,16]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,16]{1,0} dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
"""

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

# the same, but c2 reads x with its batch and features swapped
CONV_DIFF = CONV.replace("convolution(x, w2), window={size=1x1}, dim_labels=b01f_01io->b01f",
                         "convolution(x, w2), window={size=1x1}, dim_labels=f01b_01io->b01f")

GATE_FUSION = f"""// HAND-WRITTEN minimal module
HloModule m
silu {{
  p = f32[64,16]{{1,0}} parameter(0)
  ROOT s = f32[64,16]{{1,0}} logistic(p)
}}
ENTRY e {{
{_PAIR}  sa = f32[64,16]{{1,0}} fusion(a), kind=kLoop, calls=silu
  ROOT g = f32[64,16]{{1,0}} multiply(sa, b)
}}
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

SCORES_INSIDE = f"""// HAND-WRITTEN minimal module
HloModule m
scores {{
  p0 = f32[64,16]{{1,0}} parameter(0)
  p1 = f32[64,16]{{1,0}} parameter(1)
  n = f32[64,16]{{1,0}} negate(p0)
  ROOT d = f32[64,64]{{1,0}} dot(n, p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
}}
ENTRY e {{
{_PAIR}  ROOT s = f32[64,64]{{1,0}} fusion(a, b), kind=kOutput, calls=scores
}}
"""

VECTOR_FIRST = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  v = f32[4096]{0} parameter(0)
  m1 = f32[4096,8]{1,0} parameter(1)
  m2 = f32[4096,8]{1,0} parameter(2)
  x = f32[64,32]{1,0} parameter(3)
  w1 = f32[32,16]{1,0} parameter(4)
  w2 = f32[32,16]{1,0} parameter(5)
  e1 = f32[8]{0} dot(v, m1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  e2 = f32[8]{0} dot(v, m2), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  a = f32[64,16]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,16]{1,0} dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8]{0}, f32[8]{0}, f32[64,16]{1,0}, f32[64,16]{1,0}) tuple(e1, e2, a, b)
}
"""

ROLES = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  z = f32[32,4]{1,0} parameter(1)
  w1 = f32[32,16]{1,0} parameter(2)
  w2 = f32[32,16]{1,0} parameter(3)
  y1 = f32[32,8]{1,0} parameter(4)
  y2 = f32[32,8]{1,0} parameter(5)
  lone = f32[64,4]{1,0} dot(x, z), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[64,16]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,16]{1,0} dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[64,16]{1,0} multiply(a, b)
  c = f32[64,8]{1,0} dot(x, y1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d = f32[64,8]{1,0} dot(x, y2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,4]{1,0}, f32[64,16]{1,0}, f32[64,8]{1,0}, f32[64,8]{1,0}) tuple(lone, g, c, d)
}
"""

TRACED = """// HAND-WRITTEN minimal module
HloModule m
wide {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  b = f32[32,16]{1,0} broadcast(p1), dimensions={1}
  ROOT d = f32[64,16]{1,0} dot(p0, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
narrow {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  b = f32[32,8]{1,0} broadcast(p1), dimensions={1}
  ROOT d = f32[64,8]{1,0} dot(p0, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  r1 = f32[16]{0} parameter(1)
  r2 = f32[8]{0} parameter(2)
  f1 = f32[64,16]{1,0} fusion(x, r1), kind=kOutput, calls=wide
  f2 = f32[64,8]{1,0} fusion(x, r2), kind=kOutput, calls=narrow
  ROOT t = (f32[64,16]{1,0}, f32[64,8]{1,0}) tuple(f1, f2)
}
"""

LARGEST2 = (LARGEST.replace("fusion(x, s, w", "fusion(s, x, w")
            .replace("p0 = f32[64,32]{1,0} parameter(0)\n  p1 = bf16[64,32]{1,0} parameter(1)",
                     "p0 = bf16[64,32]{1,0} parameter(0)\n  p1 = f32[64,32]{1,0} parameter(1)")
            .replace("convert(p1)", "convert(p0)").replace("multiply(p0, c)", "multiply(c, p1)"))



def _two_dots(x: str, w: str, out: str, dims: str, second: str | None = None, x_left: bool = True) -> str:
    """HAND-WRITTEN minimal module: x multiplied by two same-shaped weights, d1 and d2 (with
    `dims` as their contracting dims, d2 with `second` where given)."""
    def dot(k: int, d: str) -> str:
        ops = f"x, w{k}" if x_left else f"w{k}, x"
        lhs, rhs = d.split(" ")
        return f"  d{k} = {out} dot({ops}), lhs_contracting_dims={lhs}, rhs_contracting_dims={rhs}\n"
    return (f"HloModule m\nENTRY e {{\n  x = {x} parameter(0)\n  w1 = {w} parameter(1)\n"
            f"  w2 = {w} parameter(2)\n{dot(1, dims)}{dot(2, second or dims)}"
            f"  ROOT t = ({out}, {out}) tuple(d1, d2)\n}}\n")


# x the right operand of both, contracted over dimension 0 in one and 1 in the other
RHS = _two_dots("f32[64,64]{1,0}", "f32[8,64]{1,0}", "f32[8,64]{1,0}", "{1} {0}", "{1} {1}", x_left=False)
# x^T g with g contracted over its last dimension
ROWS_ONE_SIDE = _two_dots("f32[64,32]{1,0}", "f32[16,64]{1,0}", "f32[32,16]{1,0}", "{0} {1}")
# x . g over both dimensions
FULL_CONTRACTION = _two_dots("f32[64,32]{1,0}", "f32[64,32]{1,0}", "f32[]", "{0,1} {0,1}")


def _found(text: str, **options) -> list:
    return run(parse(text, "m"), [make_rule("H004", **options)]).findings


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
    # the same with s read first: x is still the one named (by size, not operand order)
    assert _groups(LARGEST2) == [("x", ["f1", "f2"])]


def test_results_that_meet_in_a_matmul_inside_a_fusion_are_no_gate():
    """a and b meet inside one fusion as a dot's two inputs (scores = -a b^T, as attention's
    q and k do), a passing a negate first: no gate, the pair is reported."""
    assert _groups(SCORES_INSIDE) == [("x", ["a", "b"])]


def test_a_full_contraction_is_no_weight_gradient():
    """x . g over both dimensions contracts x's last dimension too: not x^T g's form."""
    assert _groups(FULL_CONTRACTION) == [("x", ["d1", "d2"])]


def test_a_vector_shared_operand_is_passed_over_and_the_rest_judged():
    """v (f32[4096], the largest shared operand) is a vector: no projection to stack. The
    pair sharing x after it is still reported."""
    assert _groups(VECTOR_FIRST) == [("x", ["a", "b"])]


def test_each_role_of_one_operand_is_judged_on_its_own():
    """x enters a lone projection (by [32, 4]), a gated pair (by [32, 16]) and a plain pair
    (by [32, 8]), in that order: only the plain pair is reported."""
    assert _groups(ROLES) == [("x", ["c", "d"])]


def test_a_fused_weight_is_judged_by_its_own_shape():
    """Two fusions multiply x by a weight broadcast inside them, [32, 16] in one and
    [32, 8] in the other: different weights, not one matmul."""
    assert _groups(TRACED) == []


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
    assert f.help == (
        "Store the weights stacked on a new axis (one W_qkv of shape [d, 3, d], initialised and "
        "kept so; shard its last axis as the separate weights were) and index the result: the "
        "shared operand is read once, not once per matmul. Do not concatenate them along a "
        "sharded output dimension ([W_q | W_k | W_v] split after a model-sharded matmul moves "
        "data between chips), nor inside the jitted step (a copy of the weights every step). It "
        "saves memory traffic; the time on the MXU barely moves (see the rule's doc for XLA's "
        "own figures).")  # (a module that shows no platform is costed on the assumed TPU)
    assert f.message.endswith("the stacked weights would read %x once")


def _gate_nested(levels: int, inner: str) -> str:
    """HAND-WRITTEN minimal module: a = x @ w1 and b = x @ w2 read by one fusion, nested
    `levels` deep, whose innermost computation combines them with `inner`."""
    comps = [f"n0 {{\n  p0 = f32[64,16]{{1,0}} parameter(0)\n  p1 = f32[64,16]{{1,0}} parameter(1)\n"
             f"  ROOT r = f32[64,16]{{1,0}} {inner}\n}}\n"]
    for k in range(1, levels):
        comps.append(f"n{k} {{\n  p0 = f32[64,16]{{1,0}} parameter(0)\n  p1 = f32[64,16]{{1,0}} parameter(1)\n"
                     f"  ROOT r = f32[64,16]{{1,0}} fusion(p0, p1), kind=kLoop, calls=n{k - 1}\n}}\n")
    return ("HloModule m\n" + "".join(comps) + "ENTRY e {\n" + _PAIR
            + f"  ROOT g = f32[64,16]{{1,0}} fusion(a, b), kind=kLoop, calls=n{levels - 1}\n}}\n")


@pytest.mark.parametrize("levels", [1, 3, 6])
def test_a_gate_is_found_however_deep_the_fusions_nest(levels):
    """a * b computed in the innermost of `levels` nested fusions is a gate at any depth; a
    dot of a and b^T there (attention's scores) is none, and the pair is reported."""
    assert _groups(_gate_nested(levels, "multiply(p0, p1)")) == []
    scores = "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}"
    assert _groups(_gate_nested(levels, scores).replace(
        "ROOT r = f32[64,16]{1,0} dot", "ROOT r = f32[64,64]{1,0} dot")
        .replace("f32[64,16]{1,0} fusion(p0, p1)", "f32[64,64]{1,0} fusion(p0, p1)")
        .replace("ROOT g = f32[64,16]{1,0}", "ROOT g = f32[64,64]{1,0}")) == [("x", ["a", "b"])]


def _silu_through(nested: str) -> str:
    """HAND-WRITTEN minimal module: silu(a) * b, silu computed by a fusion whose body holds
    the fusion `nested` calls."""
    return GATE_FUSION.replace(
        "silu {\n  p = f32[64,16]{1,0} parameter(0)\n  ROOT s = f32[64,16]{1,0} logistic(p)\n}\n",
        "inner {\n  q = f32[64,16]{1,0} parameter(0)\n  v = f32[16,16]{1,0} parameter(1)\n"
        f"  ROOT s = f32[64,16]{{1,0}} {nested}\n}}\n"
        "silu {\n  p = f32[64,16]{1,0} parameter(0)\n  c = f32[16,16]{1,0} constant({...})\n"
        "  ROOT s = f32[64,16]{1,0} fusion(p, c), kind=kLoop, calls=inner\n}\n")


def test_a_fusion_carries_unless_a_matmul_is_inside_it_at_any_depth():
    """silu(a) * b where silu's fusion nests another fusion: a gate when the nested one only
    applies the logistic; (a @ v) * b is none when the nested one multiplies a by a matrix."""
    assert _groups(_silu_through("logistic(q)")) == []
    dot = "dot(q, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    assert _groups(_silu_through(dot)) == [("x", ["a", "b"])]


# x [32,32] shared three ways: a = x @ w1 and b = x @ (w2 + a) (b reads a's result: the
# next layer's, dropped, which leaves a alone), then c = x @ y1 and d = x @ y2 by [32,8]
FED_THEN_PAIR = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  x = f32[32,32]{1,0} parameter(0)
  w1 = f32[32,32]{1,0} parameter(1)
  w2 = f32[32,32]{1,0} parameter(2)
  y1 = f32[32,8]{1,0} parameter(3)
  y2 = f32[32,8]{1,0} parameter(4)
  a = f32[32,32]{1,0} dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  w2a = f32[32,32]{1,0} add(w2, a)
  b = f32[32,32]{1,0} dot(x, w2a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[32,8]{1,0} dot(x, y1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d = f32[32,8]{1,0} dot(x, y2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[32,32]{1,0}, f32[32,8]{1,0}, f32[32,8]{1,0}) tuple(b, c, d)
}
"""


def test_a_role_left_with_one_independent_matmul_does_not_end_the_operand():
    """x's first role holds a and b, but b reads a's result (the next layer): one matmul
    left, nothing to merge. Its second role, c and d by [32, 8] weights, is still judged."""
    assert _groups(FED_THEN_PAIR) == [("x", ["c", "d"])]


# f1 and f2 read x (f32, 8 KiB), s and t (bf16, 4 KiB each) and multiply them into their dots'
# input; s is also the input of g1 and g2, direct dots by [32, 8] weights
THREE_SHARED = """// HAND-WRITTEN minimal module
HloModule m
scaled {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = bf16[64,32]{1,0} parameter(1)
  p2 = bf16[64,32]{1,0} parameter(2)
  p3 = f32[32,16]{1,0} parameter(3)
  c1 = f32[64,32]{1,0} convert(p1)
  c2 = f32[64,32]{1,0} convert(p2)
  m1 = f32[64,32]{1,0} multiply(p0, c1)
  m2 = f32[64,32]{1,0} multiply(m1, c2)
  ROOT d = f32[64,16]{1,0} dot(m2, p3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  s = bf16[64,32]{1,0} parameter(1)
  t = bf16[64,32]{1,0} parameter(2)
  w1 = f32[32,16]{1,0} parameter(3)
  w2 = f32[32,16]{1,0} parameter(4)
  y1 = bf16[32,8]{1,0} parameter(5)
  y2 = bf16[32,8]{1,0} parameter(6)
  f1 = f32[64,16]{1,0} fusion(x, s, t, w1), kind=kOutput, calls=scaled
  f2 = f32[64,16]{1,0} fusion(x, s, t, w2), kind=kOutput, calls=scaled
  g1 = bf16[64,8]{1,0} dot(s, y1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g2 = bf16[64,8]{1,0} dot(s, y2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[64,16]{1,0}, f32[64,16]{1,0}, bf16[64,8]{1,0}, bf16[64,8]{1,0}) tuple(f1, f2, g1, g2)
}
"""


def test_each_pair_is_reported_once_whichever_operand_reaches_it():
    """f1 and f2 share x, s and t; g1 and g2 share s. Largest first: (f1, f2) through x, then
    (g1, g2) through s after s's other role, the same f1 and f2, is passed over; t reaches
    f1 and f2 again and adds nothing. The fused pair's contracting dims are its dot's lhs
    ones ({1}), the direct pair's weights its own bf16 [32, 8]."""
    found = _found(THREE_SHARED)
    assert [(f.evidence["shared_operand"], f.evidence["matmuls"]) for f in found] == [
        ("x", ["f1", "f2"]), ("s", ["g1", "g2"])]
    assert [f.evidence["contracting"] for f in found] == ["{1}", "{1}"]
    assert [f.evidence["weights"] for f in found] == ["f32[32,16]", "bf16[32,8]"]


def test_a_convolution_without_labels_groups_with_none_named():
    """dim_labels may be left out (XLA's parser takes the default layout then): two such
    convolutions of x by same-shaped filters are grouped, with no labels to name."""
    bare = CONV.replace(", dim_labels=b01f_01io->b01f", "")
    found = _found(bare)
    assert [(f.evidence["shared_operand"], f.evidence["matmuls"]) for f in found] == [("x", ["c1", "c2"])]
    assert found[0].evidence["contracting"] == ""


# two fusions multiply x by a weight built inside them: a bf16 vector broadcast to [32, 16]
# (along dimension 1 in one, 0 in the other) and converted to f32
BROADCAST_WEIGHTS = """// HAND-WRITTEN minimal module
HloModule m
rows {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = bf16[16]{0} parameter(1)
  b = bf16[32,16]{1,0} broadcast(p1), dimensions={1}
  c = f32[32,16]{1,0} convert(b)
  ROOT d = f32[64,16]{1,0} dot(p0, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
cols {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = bf16[32]{0} parameter(1)
  b = bf16[32,16]{1,0} broadcast(p1), dimensions={0}
  c = f32[32,16]{1,0} convert(b)
  ROOT d = f32[64,16]{1,0} dot(p0, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  r1 = bf16[16]{0} parameter(1)
  r2 = bf16[32]{0} parameter(2)
  f1 = f32[64,16]{1,0} fusion(x, r1), kind=kOutput, calls=rows
  f2 = f32[64,16]{1,0} fusion(x, r2), kind=kOutput, calls=cols
  ROOT t = (f32[64,16]{1,0}, f32[64,16]{1,0}) tuple(f1, f2)
}
"""


def test_a_weight_built_by_a_broadcast_is_judged_as_the_dot_reads_it():
    """A broadcast does not carry a stored weight (it makes a new one): the weight is what
    the dot reads, f32[32, 16] in both fusions, not the bf16 vectors behind it."""
    found = _found(BROADCAST_WEIGHTS)
    assert [(f.evidence["shared_operand"], f.evidence["weights"]) for f in found] == [
        ("x", "f32[32,16]")]


def test_a_fused_weight_is_named_as_stored_through_a_cast():
    """Two fusions multiply x by their bf16 weight cast to f32 inside: the weights are named
    as stored, bf16[32, 16], not as the cast the dot reads."""
    cast = LARGEST.replace("p2 = f32[32,16]{1,0} parameter(2)",
                           "p2 = bf16[32,16]{1,0} parameter(2)\n  w = f32[32,16]{1,0} convert(p2)") \
        .replace("dot(m, p2)", "dot(m, w)").replace("w1 = f32[32,16]", "w1 = bf16[32,16]") \
        .replace("w2 = f32[32,16]", "w2 = bf16[32,16]")
    found = _found(cast)
    assert [(f.evidence["shared_operand"], f.evidence["weights"]) for f in found] == [("x", "bf16[32,16]")]
