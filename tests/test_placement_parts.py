"""Where temporaries go in the outputs' buffers (hloscope.cost.placement), one rule each, on
hand-built buffers with answers worked by hand from the rule XLA's buffer assignment
follows: a value shares an output's buffer when it fits there, ends before the output is
written, and overlaps nothing already placed there, largest values first. The modules at the
end are HAND-WRITTEN minimal ones."""

from __future__ import annotations

from hloscope.cost.liveness import Buffer, _Walk
from hloscope.cost.placement import _assign, _held
from hloscope.parser import parse

MIB = 1 << 20


def _buf(name: str, mib: int, defined: int, last: int, kind: str = "temp") -> Buffer:
    return Buffer("c", name, "f32[]", mib * MIB, 0, defined, last, kind)


def _temps(*bufs: Buffer) -> list[tuple[Buffer, Buffer]]:
    out = [(b, b) for b in bufs]
    out.sort(key=lambda t: t[0].defined)
    out.sort(key=lambda t: t[0].bytes, reverse=True)
    return out


def _placed(outputs, temps, order=None, held=None) -> list[str]:
    placed, _ = _assign(outputs, temps, list(order if order is not None else range(len(outputs))),
                        held if held is not None else [[] for _ in outputs])
    return sorted(t.instruction for t in placed)


def test_a_temporary_fits_an_output_written_after_it_ends():
    out = _buf("out", 4, 10, 11, "output")
    # a: steps 2-5, fits; b: 4-8 overlaps a (placed first, same size, earlier); c: 6-9,
    # smaller, after a ends; d: 3-10 ends where the output is written: not before it
    temps = _temps(_buf("a", 4, 2, 5), _buf("b", 4, 4, 8), _buf("c", 2, 6, 9), _buf("d", 1, 3, 10))
    assert _placed([out], temps) == ["a", "c"]


def test_a_value_written_over_another_may_take_its_step_in_the_output():
    """XLA's MayInterfere: a value whose definition is the other's last use does not
    interfere with it when it may be written over it (GPU: through a get-tuple-element too).
    a (steps 2-6) goes in first; b (6-8) may be written over a: it follows a in the output;
    c (6-8, the same, but with no such pair) does not; d (4-9) ends where the output is
    defined, and the output's defining op may be written over d: it fits."""
    out = _buf("out", 4, 9, 11, "output")
    a, b, c = _buf("a", 4, 2, 6), _buf("b", 4, 6, 8), _buf("c", 4, 6, 8)
    buffers = [out, a, b, c]
    number = {id(x): k for k, x in enumerate(buffers)}
    placed, _ = _assign([out], _temps(a, b, c), [0], [[]], [0], number, {(1, 2)})
    assert sorted(t.instruction for t in placed) == ["a", "b"]
    placed, _ = _assign([out], _temps(a, b, c), [0], [[]], [0], number, set())
    assert sorted(t.instruction for t in placed) == ["a"]
    d = _buf("d", 4, 4, 9)
    number[id(d)] = 4
    placed, _ = _assign([out], _temps(d), [0], [[]], [0], number, {(4, 0)})
    assert [t.instruction for t in placed] == ["d"]
    assert not _assign([out], _temps(d), [0], [[]], [0], number, set())[0]


def test_a_temporary_larger_than_the_output_stays_out():
    out = _buf("out", 4, 10, 11, "output")
    assert _placed([out], _temps(_buf("big", 5, 1, 2), _buf("equal", 4, 3, 4))) == ["equal"]


def test_the_order_picks_the_output_first_tried():
    early, late = _buf("early", 4, 10, 12, "output"), _buf("late", 4, 20, 21, "output")
    temps = _temps(_buf("a", 4, 2, 5))
    assert _assign([early, late], temps, [0, 1], [[], []])[0][0].instruction == "a"
    # a value that ends after the first output is written goes to the second
    temps = _temps(_buf("b", 4, 2, 15))
    placed, _ = _assign([early, late], temps, [0, 1], [[], []])
    assert [t.instruction for t in placed] == ["b"]


def test_held_ranges_keep_values_out_and_leave_their_gaps():
    out = _buf("out", 4, 10, 11, "output")
    # the output's buffer is taken at steps 2-4 and 6-9 (a chain written in place into it,
    # step 5 the loop that carries it): only a value within step 5, or before step 2, fits
    temps = _temps(_buf("before", 4, 0, 1), _buf("across", 4, 1, 3), _buf("loop", 4, 5, 5),
                   _buf("after", 4, 6, 8))
    assert _placed([out], temps, held=[[(2, 4), (6, 9)]]) == ["before", "loop"]


def test_callee_temporaries_are_counted_once_per_step_moved():
    out = _buf("out", 4, 10, 11, "output")
    inner = _buf("inner", 4, 30, 40)  # (a loop body's temporary, seen at its caller's step 5)
    seen = Buffer("c", "inner", "f32[]", 4 * MIB, 0, 5, 5, "temp")
    placed, moved = _assign([out], [(seen, inner)], [0], [[]])
    assert placed == [inner] and moved == {5}


LOOP_CHAIN = """// HAND-WRITTEN minimal module: a buffer made, carried by a loop, then updated in
// place into the output (the chain share() follows)
HloModule m, is_scheduled=true

cond {
  p = (s32[], f32[1024,256]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[1024,256]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[1024,256]{1,0} get-tuple-element(p), index=1
  w = f32[1024,256]{1,0} exponential(v)
  ROOT t = (s32[], f32[1024,256]{1,0}) tuple(j, w)
}

ENTRY e {
  x = f32[1024,256]{1,0} parameter(0)
  z = s32[] constant(0)
  a = f32[1024,256]{1,0} negate(x)
  t = (s32[], f32[1024,256]{1,0}) tuple(z, a)
  l = (s32[], f32[1024,256]{1,0}) while(t), condition=cond, body=body
  g = f32[1024,256]{1,0} get-tuple-element(l), index=1
  ROOT r = f32[1024,256]{1,0} negate(g)
}
"""


def test_a_chain_into_the_output_holds_it_but_for_the_loop_that_carries_it():
    """a (step 2) is carried by the loop (step 4) and updated in place by r, the output
    (step 6): the output's buffer is taken at steps 2-3 and 5, the loop's step left free."""
    (m,) = parse(LOOP_CHAIN, "m")
    walk = _Walk(m, m.entry, platform="tpu")
    walk.run()
    steps = {i.name: k for k, i in enumerate(m.entry.instructions)}
    out = walk.values["r"][0]
    assert walk.buffers[out].kind == "output"
    assert walk.held_from[out] == (steps["a"], walk.values["a"][0])
    assert _held(walk, out) == [(steps["a"], steps["l"] - 1),
                                                   (steps["l"] + 1, steps["r"] - 1)]
    # a lives in the output's buffer (the TPU compiler writes the chain in place)
    assert walk.buffers[walk.values["a"][0]].kind == "in output"


def test_the_callees_peak_is_the_most_any_one_holds_per_space():
    """Hand-made walks (stand-ins with peak_per_space): the largest of each space, not the
    last walk's, and a space none of them uses at all stays at 0."""
    from types import SimpleNamespace as NS

    from hloscope.cost.placement import callee_peak

    walks = [NS(peak_per_space=lambda: {0: 300, 1: 0}), NS(peak_per_space=lambda: {0: 100, 1: 0})]
    assert callee_peak(walks) == {0: 300, 1: 0}
    assert callee_peak([]) == {}
