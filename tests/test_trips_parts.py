"""A while loop's trip count, part by part (cost/trips.py and CostModel.trip_count), on
HAND-WRITTEN minimal loops (labelled as such: each varies one thing XLA prints, the
condition's direction and operand order, the body's update, where the counter sits in the
state). The oracle is the loop itself, run here in Python: a count hloscope gives must be the
number of times the loop runs, and where the pattern is one XLA's own analysis reads
(a constant step towards a constant bound), hloscope must give it; anything else, None.
"""

from __future__ import annotations

import itertools
import operator

import pytest

from hloscope.cost.ops import CostModel
from hloscope.cost.trips import trip_count_from_condition
from hloscope.parser import parse

_CMP = {"LT": operator.lt, "LE": operator.le, "GT": operator.gt, "GE": operator.ge,
        "NE": operator.ne, "EQ": operator.eq}


def _loop(init: int, bound: int, step: int, direction: str, *, bound_left=False, update="add",
          step_left=False, k=0, ty="s32", config="", state_tuple=True, init_constant=True,
          cond_root="compare", operands: str | None = None) -> str:
    """HAND-WRITTEN minimal module: `while (i <direction> bound) i = i <update> step`, the
    counter at element k of a two-element state."""
    other = 1 - k
    elems = ["", ""]
    elems[k], elems[other] = f"{ty}[]", "f32[4]"
    state = f"({elems[0]}, {elems[1]})"
    upd = operands or (f"%c, %i" if step_left else f"%i, %c")
    new = ["", ""]
    new[k], new[other] = "%n", "%x"
    cmp = f"%b, %i" if bound_left else f"%i, %b"
    if cond_root == "compare":
        root = f"ROOT %p = pred[] compare({cmp}), direction={direction}"
    else:  # a condition of two compares joined: not the pattern
        root = (f"%p = pred[] compare({cmp}), direction={direction}\n"
                f"  ROOT %q = pred[] and(%p, %p)")
    init_line = (f"%z = {ty}[] constant({init})" if init_constant
                 else f"%z = {ty}[] parameter(1)")
    entry_params = f"x: f32[4]" + ("" if init_constant else f", z: {ty}[]")
    ops = ["", ""]
    ops[k], ops[other] = "%z", "%x"
    if state_tuple:
        st = f"%t = {state} tuple({ops[0]}, {ops[1]})"
        loop_operand = "%t"
    else:
        st = f"%t = {state} parameter({2 if not init_constant else 1})"
        entry_params += f", t: {state}"
        loop_operand = "%t"
    return f"""HloModule m

%body (s: {state}) -> {state} {{
  %s = {state} parameter(0)
  %i = {ty}[] get-tuple-element(%s), index={k}
  %x = f32[4] get-tuple-element(%s), index={other}
  %c = {ty}[] constant({step})
  %n = {ty}[] {update}({upd})
  ROOT %r = {state} tuple({new[0]}, {new[1]})
}}

%cond (s: {state}) -> pred[] {{
  %s = {state} parameter(0)
  %i = {ty}[] get-tuple-element(%s), index={k}
  %b = {ty}[] constant({bound})
  {root}
}}

ENTRY %e ({entry_params}) -> {state} {{
  %x = f32[4] parameter(0)
  {init_line}
  {st}
  ROOT %w = {state} while({loop_operand}), condition=%cond, body=%body{config}
}}
"""


def _count(text: str) -> int | None:
    (m,) = parse(text)
    return CostModel(m).trip_count(m.entry.by_name["w"])


def _runs(init: int, bound: int, step: int, direction: str, bound_left: bool, update: str,
          step_left: bool, limit: int = 10_000) -> int | None:
    """The loop run in Python: how many times its body runs (None: not within `limit`)."""
    test = _CMP[direction]
    i, n = init, 0
    while (test(bound, i) if bound_left else test(i, bound)):
        if update == "add":
            i = i + step
        elif update == "subtract":
            i = (step - i) if step_left else (i - step)
        else:
            i = i * step
        n += 1
        if n > limit:
            return None
    return n


def _read_by_xla(direction: str, bound_left: bool, update: str, step_left: bool, step: int,
                 init: int, bound: int) -> bool:
    """Whether the loop is the pattern XLA's trip-count analysis reads: the counter on one
    side of the compare, moved by a constant step towards the bound (`c - i` is not a step)."""
    if update == "multiply" or (update == "subtract" and step_left):
        return False
    d = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}.get(direction, direction) if bound_left else direction
    s = -step if update == "subtract" else step
    if d in ("LT", "LE"):
        return s > 0
    if d in ("GT", "GE"):
        return s < 0
    if d == "NE":
        return s != 0 and (bound - init) % s == 0 and (bound - init) // s >= 0
    return False


_CASES = [(init, bound, step, d, bl, up, sl)
          for init, bound in ((0, 10), (3, 10), (10, 0), (5, 5), (0, 7))
          for step in (1, 3, -2)
          for d in _CMP
          for bl, up, sl in itertools.product((False, True), ("add", "subtract", "multiply"), (False, True))]


@pytest.mark.parametrize(("init", "bound", "step", "direction", "bound_left", "update", "step_left"), _CASES)
def test_trip_count_is_what_the_loop_runs_or_none(init, bound, step, direction, bound_left, update,
                                                  step_left):
    got = _count(_loop(init, bound, step, direction, bound_left=bound_left, update=update,
                       step_left=step_left))
    runs = _runs(init, bound, step, direction, bound_left, update, step_left)
    assert got is None or type(got) is int  # (a count of trips, never 10.0)
    if _read_by_xla(direction, bound_left, update, step_left, step, init, bound):
        assert got == runs
    else:
        assert got is None or got == runs  # (a count never a guess: where given, exact)
        if update == "multiply" or (update == "subtract" and step_left) or direction == "EQ":
            assert got is None


@pytest.mark.parametrize("k", [0, 1])
def test_the_counter_at_either_element_of_the_state(k):
    assert _count(_loop(2, 11, 3, "LT", k=k)) == 3
    assert _count(_loop(2, 11, 3, "LT", k=k, step_left=True)) == 3


def test_not_the_pattern_unknown():
    assert _count(_loop(0, 10, 1, "LT", cond_root="and")) is None      # the condition's root no compare
    assert _count(_loop(0, 10, 1, "LT", state_tuple=False)) is None   # the state is no tuple
    assert _count(_loop(0, 10, 1, "LT", init_constant=False)) is None  # the start is no constant
    for d in ("LT", "GT", "GE", "NE"):
        assert _count(_loop(0, 10, 0, d)) is None                     # a step of 0 never ends
    # the counter compared with another element of the state, not a constant: no bound
    for step in (1, -1):  # (read either way round: i < i, or i > i with the sides swapped)
        two = _loop(0, 10, step, "LT").replace("compare(%i, %b)", "compare(%i, %i)")
        assert "compare(%i, %i)" in two and _count(two) is None
    for operands in ("%c, %c", "%i, %i"):  # the counter set to a constant, or doubled: no step
        assert _count(_loop(1, 10, 1, "LT", operands=operands)) is None


def test_the_limit_is_two_to_the_forty_trips_inclusive():
    limit = 1 << 40
    assert _count(_loop(0, limit, 1, "LT", ty="s64")) == limit
    assert _count(_loop(0, limit + 1, 1, "LT", ty="s64")) is None


@pytest.mark.parametrize(("config", "expected"), [
    ('{"known_trip_count":{"n":"5"}}', 5),            # XLA's own count wins over the condition
    ('{"known_trip_count":{"n":"0"}}', 0),            # a loop that never runs is a count
    ('{"known_trip_count":{"n":"-1"}}', 10),          # out of range: the condition's
    ('{"known_trip_count":{"n":"1099511627776"}}', 1 << 40),
    ('{"known_trip_count":{"n":"1099511627777"}}', 10),
    ('{"known_trip_count":{"n":"many"}}', 10),        # not a number: the condition's
    ('{"known_trip_count":{}}', 10),                  # no n: the condition's
    ('{"known_trip_count":"5"}', 10),                 # not XLA's form: the condition's
    ('{"other":1}', 10),
])
def test_known_trip_count_first_then_the_condition(config, expected):
    text = _loop(0, 10, 1, "LT", config=f", backend_config={config}")
    assert _count(text) == expected


def test_a_while_whose_computation_the_module_does_not_hold_has_no_count():
    (m,) = parse(_loop(0, 10, 1, "LT"))
    w = m.entry.by_name["w"]
    assert trip_count_from_condition(m, m.entry, w) == 10
    w.computation = "elsewhere"  # (as a while of a module read in part)
    assert CostModel(m).trip_count(w) is None


def test_the_roofline_counts_a_loop_of_unknown_trips_once_and_a_known_one_per_trip():
    from hloscope.cost.chips import get_chip
    from hloscope.cost.roofline import roofline

    def body_times(text):
        (m,) = parse(text)
        return {r.times for r in roofline(m, get_chip("v5e")).rows if r.computation == "body"}

    assert body_times(_loop(0, 10, 1, "LT", init_constant=False)) == {1}  # (unknown: counted once)
    assert body_times(_loop(0, 10, 1, "LT")) == {10}


def test_a_cost_model_counts_loops_by_their_trips_unless_told_not_to():
    (m,) = parse(_loop(0, 10, 1, "LT"))
    once = CostModel(m, trip_counts=False).module_cost().flops
    assert once > 0 and CostModel(m).module_cost().flops == 10 * once  # (body and condition, per trip)
