"""Where temporaries go in the outputs' buffers (hloscope.cost.placement), one rule each, on
hand-built buffers with answers worked by hand from the rule XLA's buffer assignment
follows: a value shares an output's buffer when it fits there, ends before the output is
written, and overlaps nothing already placed there, largest values first. The modules at the
end are HAND-WRITTEN minimal ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# The compiled core's placement (native/src/place.rs) against the plain route.
def _core_place():
    from hloscope._speed import native

    core = native()
    if core is None or not hasattr(core, "place"):
        pytest.skip("the compiled core (hloscope_native with place) is not built here")
    return core


_RANGE = st.tuples(st.integers(0, 30), st.integers(0, 8)).map(lambda p: (p[0], p[0] + p[1]))


@settings(max_examples=400, deadline=None)
@given(outs=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 40),
                               st.lists(_RANGE, max_size=3)), min_size=1, max_size=6),
       temps=st.lists(st.tuples(st.integers(1, 6), _RANGE, st.booleans()), max_size=14),
       pairs=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), max_size=10),
       reverse=st.booleans())
def test_the_compiled_placement_places_what_the_plain_one_does(outs, temps, pairs, reverse):
    """Random outputs (sizes, definition steps, held ranges made disjoint and before the
    output's definition), temporaries (some a callee's, seen at one step) and touching pairs:
    the compiled core and assign_plain place the same temporaries and move the same steps."""
    from hloscope.cost import placement

    _core_place()
    outputs, held, buffers = [], [], []
    for mib, defined, ranges in outs:
        kept, end = [], -1
        for a, b in sorted(ranges):
            if a > end and b < defined:
                kept.append((a, b))
                end = b
        outputs.append(_buf(f"o{len(outputs)}", mib, defined, defined + 1, "output"))
        held.append(kept)
    buffers += outputs
    pairs_in = []
    for mib, (a, b), callee in temps:
        t = _buf(f"t{len(pairs_in)}", mib, a, b)
        buffers.append(t)
        pairs_in.append((Buffer("c", t.instruction, "f32[]", t.bytes, 0, a, a, "temp"), t)
                        if callee else (t, t))
    pairs_in.sort(key=lambda p: p[0].defined)
    pairs_in.sort(key=lambda p: p[0].bytes, reverse=True)
    number = {id(b): k for k, b in enumerate(buffers)}
    ids = list(range(len(outputs)))
    order = sorted(ids, key=lambda k: -outputs[k].defined) if reverse else ids
    touch = set(pairs)
    try:
        want = placement.assign_plain(outputs, pairs_in, order, held, ids, number, touch)
    except IndexError:  # (a range the plain route indexes past: the core says the same)
        with pytest.raises(IndexError):
            placement._assign(outputs, pairs_in, order, held, ids, number, touch)
        return
    got = placement._assign(outputs, pairs_in, order, held, ids, number, touch)
    assert [id(t) for t in got[0]] == [id(t) for t in want[0]] and got[1] == want[1]


def test_the_compiled_placement_gives_the_plain_peaks_on_real_compiles(monkeypatch):
    """memory() of every memory fixture and the largest TPU fixture, with placement in the
    compiled core and in Python: the same figures, buffer by buffer."""
    from conftest import FIXTURES

    from hloscope.cost import placement
    from hloscope.cost.liveness import memory
    from hloscope.parser import load

    _core_place()
    files = sorted((FIXTURES / "memory").glob("*.hlo.txt")) + [FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"]
    placed = []
    assign = placement._assign

    def counted(*args):
        got = assign(*args)
        placed.append(len(got[0]))
        return got

    monkeypatch.setattr(placement, "_assign", counted)
    for path in files:
        (m,) = load(path)
        core = memory(m).to_dict()
        with monkeypatch.context() as patch:
            patch.setattr(placement, "native", lambda: None)
            plain = memory(m).to_dict()
        assert core == plain, path.name
    assert len(files) >= 12 and sum(placed) > 1000  # (both routes, both orders: 779 each)
