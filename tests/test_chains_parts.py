"""Async collective chains by data flow (hloscope.sharding.chains), on a HAND-WRITTEN minimal
module shaped like XLA's TPU async collective fusion (a start fusion holding a clone of the
all-gather, a continuation and a done fusion each reading the state the one before returns
through get-tuple-element). The mutation run found these paths unread: a state read
through a bitcast of the tuple element, a fusion that reads another's array result directly
(a second collective, not a continuation), two fusions reading one tuple that no collective
returns, and a fusion reading two chains' states (it continues the one it reads most)."""

from __future__ import annotations

from hloscope.cost.chips import get_chip
from hloscope.parser import parse
from hloscope.sharding import analyze

_GATHER = ("  p = f32[256]{0} parameter(0)\n"
           "  ag = f32[1024]{0} all-gather(p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}\n")

MODULE = "// HAND-WRITTEN minimal module (async collective fusion's shape)\nHloModule m, num_partitions=4\n\n" + "".join(
    f"{name} {{\n{_GATHER}  ROOT t = (f32[256]{{0}}, f32[1024]{{0}}) tuple(p, ag)\n}}\n\n"
    for name in ("a_start", "a_cont", "a_done", "b_first", "b_second", "c_one", "c_two",
                 "d_start", "e_start", "de_done", "f_start", "f_done", "g_start", "g_done")) + """cont_dot {
  p = f32[256]{0} parameter(0)
  w = f32[64,64]{1,0} parameter(1)
  ag = f32[1024]{0} all-gather(p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}
  d = f32[64,64]{1,0} dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[256]{0}, f32[1024]{0}, f32[64,64]{1,0}) tuple(p, ag, d)
}

ENTRY e {
  x = f32[256]{0} parameter(0)
  pair = (f32[256]{0}, f32[1024]{0}) parameter(1)
  a0 = (f32[256]{0}, f32[1024]{0}) fusion(x), kind=kCustom, calls=a_start
  a0s = f32[256]{0} get-tuple-element(a0), index=0
  a0b = f32[16,16]{1,0} bitcast(a0s)
  a0c = f32[256]{0} bitcast(a0b)
  a1 = (f32[256]{0}, f32[1024]{0}) fusion(a0c), kind=kCustom, calls=a_cont
  a1s = f32[256]{0} get-tuple-element(a1), index=0
  a2 = (f32[256]{0}, f32[1024]{0}) fusion(a1s), kind=kCustom, calls=a_done
  b0 = (f32[256]{0}, f32[1024]{0}) fusion(x), kind=kCustom, calls=b_first
  b1 = (f32[256]{0}, f32[1024]{0}) fusion(b0), kind=kCustom, calls=b_second
  ps = f32[256]{0} get-tuple-element(pair), index=0
  c0 = (f32[256]{0}, f32[1024]{0}) fusion(ps), kind=kCustom, calls=c_one
  c1 = (f32[256]{0}, f32[1024]{0}) fusion(ps), kind=kCustom, calls=c_two
  d0 = (f32[256]{0}, f32[1024]{0}) fusion(x), kind=kCustom, calls=d_start
  e0 = (f32[256]{0}, f32[1024]{0}) fusion(x), kind=kCustom, calls=e_start
  d0s = f32[256]{0} get-tuple-element(d0), index=0
  e0s = f32[256]{0} get-tuple-element(e0), index=0
  de = (f32[256]{0}, f32[1024]{0}) fusion(e0s, d0s, d0s), kind=kCustom, calls=de_done
  w = f32[64,64]{1,0} parameter(2)
  f0 = (f32[256]{0}, f32[1024]{0}) fusion(x), kind=kCustom, calls=f_start
  busy = f32[64,64]{1,0} dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f0s = f32[256]{0} get-tuple-element(f0), index=0
  f1 = (f32[256]{0}, f32[1024]{0}, f32[64,64]{1,0}) fusion(f0s, w), kind=kCustom, calls=cont_dot
  f1s = f32[256]{0} get-tuple-element(f1), index=0
  f2 = (f32[256]{0}, f32[1024]{0}) fusion(f1s), kind=kCustom, calls=f_done
  g0 = (f32[256]{0}, f32[1024]{0}) fusion(x), kind=kCustom, calls=g_start
  busy2 = f32[64,64]{1,0} dot(busy, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g0s = f32[256]{0} get-tuple-element(g0), index=0
  g1 = (f32[256]{0}, f32[1024]{0}) fusion(g0s), kind=kCustom, calls=g_done
  ROOT out = ((f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), f32[64,64]{1,0}) tuple(a2, b1, c0, c1, d0, de, f2, g1, busy2)
}
"""


def _by_start():
    (m,) = parse(MODULE, "m")
    return {c.instruction: c for c in analyze(m, get_chip("tpu-v5p"))[1]}


def test_a_state_read_through_bitcasts_of_the_tuple_element_continues_the_chain():
    a = _by_start()["a0"]
    assert a.is_async and a.continuations == ["a1"] and a.done == "a2" and len(a.clones) == 3


def test_a_fusion_reading_anothers_whole_result_is_a_second_collective():
    cs = _by_start()
    assert {"b0", "b1"} <= set(cs) and not cs["b0"].is_async and cs["b0"].done is None


def test_fusions_reading_one_tuple_no_collective_returns_stay_apart():
    cs = _by_start()
    assert {"c0", "c1"} <= set(cs) and not cs["c0"].continuations and not cs["c1"].continuations


def test_a_fusion_reading_two_states_continues_the_one_it_reads_most():
    cs = _by_start()
    # de reads e0's state once, then d0's twice: it is d0's done; e0 stands alone
    assert cs["d0"].done == "de" and "e0" in cs and cs["e0"].done is None
    assert len(cs) == 9  # a, b0, b1, c0, c1, d, e0, f, g


def test_a_chains_overlap_is_what_runs_between_its_ends_and_its_continuations_own_work():
    f = _by_start()["f0"]
    assert f.continuations == ["f1"] and f.done == "f2" and f.is_async
    # between f0 and f2: the 64^3 matmul `busy` and the continuation f1, whose own matmul
    # is as large (get-tuple-element moves nothing)
    assert f.overlap_instructions == 2 and f.overlap_flops == 2 * (2 * 64 ** 3)


def test_a_start_and_done_with_no_continuation_overlap_what_runs_between():
    g = _by_start()["g0"]
    assert g.continuations == [] and g.done == "g1" and g.is_async
    assert (g.overlap_instructions, g.overlap_flops) == (1, 2 * 64 ** 3)  # busy2


def test_a_chain_of_one_fusion_overlaps_nothing():
    b = _by_start()["b0"]
    assert (b.overlap_instructions, b.overlap_flops) == (0, 0.0)
