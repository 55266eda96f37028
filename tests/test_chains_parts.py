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
                 "d_start", "e_start", "de_done")) + """ENTRY e {
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
  de = (f32[256]{0}, f32[1024]{0}) fusion(e0s, d0s, e0s), kind=kCustom, calls=de_done
  ROOT out = ((f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0}), (f32[256]{0}, f32[1024]{0})) tuple(a2, b1, c0, c1, d0, de)
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
    # de reads e0's state twice and d0's once: it is e0's done; d0 stands alone
    assert cs["e0"].done == "de" and "d0" in cs and cs["d0"].done is None
    assert len(cs) == 7  # a, b0, b1, c0, c1, d0, e
