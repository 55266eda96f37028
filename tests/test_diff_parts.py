"""The parts of `hloscope diff`, each against a hand-derived answer (the mutation run of
bench/mutation.py found these uncovered: gates at their boundaries, per-category sums,
ops and collectives deltas, module pairing, finding counts, the donation verdict)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest
from conftest import FIXTURES

from hloscope.cost.resolve import chip_for
from hloscope.diff import Gate, Pair, Side, _counter_delta, apply_gates, ops_delta, pair_modules, side, verdicts
from hloscope.parser import load
from hloscope.units import human_bytes

H007 = FIXTURES / "rules" / "H007"


def _side(name="m", **totals) -> Side:
    base = {"step_time": 1e-3, "flops": 1e9, "bytes": 1e6, "exposed": 0.0, "mfu": 0.5,
            "hbm_peak": 100.0, "findings": 0.0, "donated": 0.0}
    return Side(name, {**base, **totals}, {}, Counter(), Counter(), {})


# ------------------------------------------------------------------ gates
@pytest.mark.parametrize(("text", "a", "b", "hit"), [
    ("step_time>+3%", 100.0, 103.0, False),  # exactly 3% more: not over the threshold
    ("step_time>+3%", 100.0, 103.01, True),
    ("bytes>+1%", 200.0, 202.0, False),  # 1% of 200 is 2: the boundary again
    ("bytes>+1%", 200.0, 202.5, True),
    ("bytes>+1%", -200.0, -197.0, True),  # a negative base: 1% of |a|
    ("findings>+0", 0.0, 0.0, False),  # relative to nothing: any rise trips, none does not
    ("findings>+0%", 0.0, 0.0, False),
    ("findings>+0%", 0.0, 0.5, True),
    ("findings>+0", 2.0, 2.0, False),
    ("findings>+0", 2.0, 3.0, True),
    ("exposed>+0.5", 1.0, 1.5, False),
    ("exposed>+0.5", 1.0, 1.6, True),
])
def test_a_gate_trips_only_above_its_threshold(text, a, b, hit):
    assert Gate.parse(text).tripped(a, b) is hit


def test_a_gate_prints_as_it_was_written():
    assert str(Gate.parse("step_time>+3%")) == "step_time>+3%"
    assert str(Gate.parse("findings > +0")) == "findings>+0"
    assert str(Gate.parse("hbm_peak>2.5%")) == "hbm_peak>+2.5%"
    with pytest.raises(ValueError) as e:
        Gate.parse("speed>+1%")
    assert "step_time, flops, bytes, hbm_peak, exposed, mfu, findings" in str(e.value)


def test_apply_gates_records_each_gate_and_names_the_tripped():
    pair = Pair(_side("a", step_time=1.0), _side("b", step_time=1.5))
    tripped = apply_gates([pair], [Gate.parse("step_time>+10%"), Gate.parse("flops>+0")])
    assert tripped == ["b: step_time>+10% (1 -> 1.5)"]
    assert pair.gates == [{"gate": "step_time>+10%", "a": 1.0, "b": 1.5, "tripped": True},
                          {"gate": "flops>+0", "a": 1e9, "b": 1e9, "tripped": False}]


# ------------------------------------------------------------------ pairing
def test_modules_pair_by_name_unless_each_side_has_one():
    m = lambda name: SimpleNamespace(name=name)  # noqa: E731
    x, y = m("jit_f"), m("jit_g")
    assert pair_modules([x], [y]) == ([(x, y)], [])  # one each: paired whatever the names
    a = [m("jit_f"), m("jit_g"), m("jit_h")]
    b = [m("jit_g"), m("jit_f"), m("jit_k")]
    pairs, notes = pair_modules(a, b)
    assert [(p.name, q.name) for p, q in pairs] == [("jit_f", "jit_f"), ("jit_g", "jit_g")]
    assert all(p is not q for p, q in pairs) and pairs[0][1] is b[1]
    assert notes == ["only in A: jit_h", "only in B: jit_k"]
    pairs, notes = pair_modules([m("jit_f")], [m("jit_f"), m("jit_k")])
    assert [p.name for p, _ in pairs] == ["jit_f"] and notes == ["only in B: jit_k"]


# ------------------------------------------------------------------ ops and collectives
def test_ops_delta_by_kind_and_form():
    a = Counter({("fusion", "jit(f)/dot_general", "bf16[8,8] kLoop"): 2,
                 ("copy", "jit(f)/transpose", "f32[4,4]"): 1,
                 ("add", "jit(f)/add", "f32[4]"): 3,
                 ("fusion", "jit(f)/mul", "f32[4] kLoop"): 1})
    b = Counter({("fusion", "jit(f)/dot_general", "bf16[8,8] kLoop"): 1,
                 ("fusion", "jit(f)/dot_general", "f32[8,8] kLoop"): 2,
                 ("add", "jit(f)/add", "f32[4]"): 3,
                 ("all-gather", "jit(f)/all_gather", "f32[16]"): 1,
                 ("fusion", "jit(f)/mul", "f32[4] kLoop"): 1})
    d = ops_delta(a, b)
    assert d["ops_added"] == [{"opcode": "all-gather", "op": "jit(f)/all_gather", "forms": {"f32[16]": 1}}]
    assert d["ops_removed"] == [{"opcode": "copy", "op": "jit(f)/transpose", "forms": {"f32[4,4]": 1}}]
    assert d["ops_changed"] == [{"opcode": "fusion", "op": "jit(f)/dot_general",
                                 "a": {"bf16[8,8] kLoop": 1}, "b": {"f32[8,8] kLoop": 2}}]
    # (the unchanged add and the unchanged mul fusion, after the changed one, are not listed)


def test_ops_delta_adds_the_counts_of_one_form():
    """Two rows of one (opcode, op, form) key cannot occur in a Counter, but two forms of one
    kind can: their counts add per form, on either side."""
    a = Counter({("fusion", "f", "x kLoop"): 1, ("fusion", "f", "y kLoop"): 2})
    b = Counter({("fusion", "f", "x kLoop"): 3, ("fusion", "f", "y kLoop"): 2})
    (changed,) = ops_delta(a, b)["ops_changed"]
    assert changed["a"] == {} and changed["b"] == {"x kLoop": 2}
    assert ops_delta(b, a)["ops_changed"][0]["a"] == {"x kLoop": 2}


def test_a_pairs_collectives_name_their_fields():
    (a,) = load(H007 / "sharded_weight_v5p.hlo.txt")
    (b,) = load(H007 / "gather_whole_weight_v5p.hlo.txt")
    chip, _ = chip_for(b, "v5p")
    (row,) = Pair(side(a, chip, []), side(b, chip, [])).to_dict()["collectives"]
    assert set(row) == {"opcode", "moved_bytes", "async", "a", "b"}
    assert row["opcode"] == "all-gather" and row["moved_bytes"] > 0 and (row["a"], row["b"]) == (0, 1)


def test_collectives_delta_names_its_fields_in_a_stable_order():
    a = Counter({("all-gather", 1024, True): 2, ("all-reduce", 64, False): 1})
    b = Counter({("all-gather", 1024, True): 3, ("all-reduce", 64, False): 1, (("x"), 8, False): 1})
    rows = _counter_delta(a, b, ("opcode", "moved_bytes", "async"))
    assert rows == [{"opcode": "all-gather", "moved_bytes": 1024, "async": True, "a": 2, "b": 3},
                    {"opcode": "x", "moved_bytes": 8, "async": False, "a": 0, "b": 1}]
    # keys of mixed types sort (by their text) rather than fail
    mixed = Counter({(1, 2, 3): 1, ("a", 2, 3): 1})
    assert len(_counter_delta(mixed, Counter(), ("p", "q", "r"))) == 2


# ------------------------------------------------------------------ one side, on real compiles
def test_a_sides_categories_sum_to_its_totals():
    """The H007 pair (v5p): per-category FLOPs, bytes and time add up to the module's."""
    from hloscope.cost.roofline import roofline

    (m,) = load(H007 / "gather_whole_weight_v5p.hlo.txt")
    chip, _ = chip_for(m, "v5p")
    s = side(m, chip, [])
    report = roofline(m, chip)
    # (integer-valued floats: the sums are exact)
    assert sum(c["flops"] for c in s.categories.values()) == s.totals["flops"]
    assert sum(c["bytes"] for c in s.categories.values()) == s.totals["bytes"]
    assert sum(c["seconds"] for c in s.categories.values()) == pytest.approx(
        sum(r.t_bound * r.times for r in report.rows), rel=1e-12)
    assert s.totals["flops"] == report.totals.flops > 0
    from hloscope.sharding.step import estimate

    assert s.totals["mfu"] == estimate(m, chip, report).mfu > 0
    assert all(v >= 0 for c in s.categories.values() for v in c.values())
    # every op that runs is counted once, under its (opcode, op, form)
    from hloscope.trace.join import executed_ops

    ran = [i for instrs in executed_ops(m).values() for i in instrs]
    assert sum(s.ops.values()) == len(ran) and all(n >= 1 for n in s.ops.values())
    assert Counter(op for op, _, _ in s.ops.elements()) == Counter(i.opcode for i in ran)


def test_a_loop_bodys_categories_count_every_trip():
    """scan_cpu: a 6-step scan; its body's FLOPs count six times in the categories, as in the
    totals (which hold XLA's trip-counted figure)."""
    from hloscope.cost.resolve import resolve_chip

    (m,) = load(FIXTURES / "cpu" / "scan_cpu.hlo.txt")
    from hloscope.cost.roofline import roofline

    chip = resolve_chip(m, None).chip
    s = side(m, chip, [])
    report = roofline(m, chip)
    assert any(r.times == 6 for r in report.rows)
    assert sum(c["flops"] for c in s.categories.values()) == s.totals["flops"]
    assert sum(c["bytes"] for c in s.categories.values()) == s.totals["bytes"]
    assert sum(c["seconds"] for c in s.categories.values()) == pytest.approx(
        sum(r.t_bound * r.times for r in report.rows), rel=1e-12)


def test_many_ops_of_one_kind_each_count_and_categories_add_up():
    """The 16-layer train step: the same (opcode, op, form) runs once per layer, so counts
    above one; every category sums many ops."""
    from hloscope.trace.join import executed_ops

    (m,) = load(FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt")
    chip, _ = chip_for(m, "v5e")
    s = side(m, chip, [])
    assert max(s.ops.values()) >= 16
    assert sum(s.ops.values()) == sum(len(v) for v in executed_ops(m).values())
    assert sum(c["flops"] for c in s.categories.values()) == s.totals["flops"]
    assert sum(c["bytes"] for c in s.categories.values()) == s.totals["bytes"]


def test_a_kernels_flops_come_from_its_body():
    """A Pallas matmul with no cost_estimate: its FLOPs come from its body (at least the
    2 * 1024^3 of its matmul; the accumulation adds a little); without the body, none."""
    from hloscope.cost.roofline import roofline

    (m,) = load(FIXTURES / "rules" / "K006" / "parallel_axes_v5p.hlo.txt")
    chip, _ = chip_for(m, "v5p")
    flops = side(m, chip, []).totals["flops"]
    assert 2 * 1024**3 <= flops < 1.01 * 2 * 1024**3
    assert roofline(m, chip).totals.flops < 2 * 1024**3


def test_findings_count_per_fingerprint_and_fall_back_to_code_and_instruction():
    (m,) = load(H007 / "sharded_weight_v5p.hlo.txt")
    chip, _ = chip_for(m, "v5p")
    f = lambda fp, inst, module=m.name: SimpleNamespace(  # noqa: E731
        module=module, fingerprint=fp, code="H001", instruction=inst, message=f"copy {inst}")
    s = side(m, chip, [f("abc", "copy.1"), f("abc", "copy.2"), f(None, "copy.3"),
                       f("zzz", "copy.4", module="other")])
    assert s.findings == {"abc": {"code": "H001", "message": "copy copy.1", "count": 2},
                          "H001:copy.3": {"code": "H001", "message": "copy copy.3", "count": 1}}
    assert s.totals["findings"] == 3  # (the other module's is not this one's)


def test_an_unscheduled_module_has_no_peak_and_no_mfu_is_zero():
    from hloscope.parser import parse

    text = ("// HAND-WRITTEN minimal module: not scheduled, so no static peak\n"
            "HloModule m\nENTRY e {\n  p = f32[1024]{0} parameter(0)\n"
            "  ROOT c = f32[1024]{0} copy(p)\n}\n")
    (m,) = parse(text, "m")
    chip, _ = chip_for(m, "v5e")
    s = side(m, chip, [])
    assert s.totals["hbm_peak"] == 0.0
    assert s.totals["mfu"] == 0.0  # no FLOPs: MFU None, reported as 0
    assert s.name == "m"


def test_a_fusions_form_carries_its_kind_and_numbers_leave_op_names():
    from hloscope.diff import _op_form, _op_key

    (m,) = load(H007 / "gather_whole_weight_v5p.hlo.txt")
    fusions = [i for i in m.entry.instructions if i.opcode == "fusion"]
    assert fusions
    for i in fusions:
        assert _op_form(i) == f"{i.shape.text()} {i.attr('kind')}"
    other = next(i for i in m.entry.instructions if i.opcode not in ("fusion",) and i.opcode != "parameter")
    assert _op_form(other) == other.shape.text()
    from hloscope.source import source_of

    (layers,) = load(FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt")
    named = [i for i in layers.entry.instructions if source_of(i, layers).op_name]
    assert any(any(ch.isdigit() for ch in source_of(i, layers).op_name) for i in named)
    for i in named:  # layer numbers (and every other number) leave the op name
        op = source_of(i, layers).op_name
        opcode, what = _op_key(i, layers)
        assert opcode == i.opcode and not any(ch.isdigit() for ch in what)
        assert len(what) == len(op) - sum(ch.isdigit() for ch in op) - op.count(".") + sum(
            1 for k, ch in enumerate(op) if ch == "." and not (k + 1 < len(op) and op[k + 1].isdigit()))
    from hloscope.parser import parse

    (bare,) = parse("// HAND-WRITTEN minimal module: no metadata\nHloModule m\nENTRY e {\n"
                    "  p.12 = f32[4]{0} parameter(0)\n  ROOT add.3 = f32[4]{0} add(p.12, p.12)\n}\n", "m")
    assert _op_key(bare.entry.by_name["add.3"], bare) == ("add", "add")


# ------------------------------------------------------------------ the pair
def test_pair_totals_ratio_and_category_deltas():
    a, b = _side("a", bytes=4.0, flops=0.0), _side("b", bytes=6.0, flops=2.0)
    a.categories = {"matmul": {"flops": 1.0, "bytes": 2.0, "seconds": 3.0}}
    b.categories = {"matmul": {"flops": 1.5, "bytes": 2.0, "seconds": 1.0},
                    "collective": {"flops": 0.0, "bytes": 8.0, "seconds": 4.0}}
    a.findings = {"x": {"code": "H001", "message": "m", "count": 1}}
    b.findings = {"y": {"code": "H002", "message": "n", "count": 2}}
    d = Pair(a, b).to_dict()
    assert d["totals"]["bytes"] == {"a": 4.0, "b": 6.0, "delta": 2.0, "ratio": 1.5}
    assert d["totals"]["flops"]["ratio"] is None  # nothing to divide by
    assert d["categories"]["matmul"]["seconds"] == {"a": 3.0, "b": 1.0, "delta": -2.0}
    assert d["categories"]["collective"]["bytes"] == {"a": 0.0, "b": 8.0, "delta": 8.0}
    a.categories["host"] = {"flops": 0.0, "bytes": 5.0, "seconds": 0.5}
    d = Pair(a, b).to_dict()
    assert d["categories"]["host"]["bytes"] == {"a": 5.0, "b": 0.0, "delta": -5.0}
    assert d["findings_new"] == [{"code": "H002", "message": "n", "count": 2, "fingerprint": "y"}]
    assert d["findings_fixed"] == [{"code": "H001", "message": "m", "count": 1, "fingerprint": "x"}]


MiB = 2**20


@pytest.mark.parametrize(("da", "db", "pa", "pb", "expect"), [
    (0, 16 * MiB, 40 * MiB, 24 * MiB,
     f"improvement: B donates {human_bytes(16 * MiB)} more of its inputs (input_output_alias) and "
     f"its static HBM peak falls {human_bytes(16 * MiB)} (-40.0%)"),
    (4 * MiB, 20 * MiB, 40 * MiB, 30 * MiB,
     f"improvement: B donates {human_bytes(16 * MiB)} more of its inputs (input_output_alias) and "
     f"its static HBM peak falls {human_bytes(10 * MiB)} (-25.0%)"),
    (20 * MiB, 4 * MiB, 30 * MiB, 40 * MiB,
     f"regression: B donates {human_bytes(16 * MiB)} less of its inputs and its static HBM peak "
     f"rises {human_bytes(10 * MiB)} (+33.3%)"),
    (0, 16 * MiB, 40 * MiB, 40 * MiB, None),  # more donated, the peak did not move
    (16 * MiB, 16 * MiB, 40 * MiB, 24 * MiB, None),  # the same donation
    (16 * MiB, 16 * MiB, 24 * MiB, 40 * MiB, None),  # the same donation, the peak rose
    (16 * MiB, 0, 40 * MiB, 40 * MiB, None),  # less donated, the peak did not move
    (0, 16 * MiB, 0.0, 24 * MiB, None),  # A unscheduled: no peak to compare
    (0, 16 * MiB, 40 * MiB, 0.0, None),
    (16 * MiB, 0, 0.0, 24 * MiB, None),
    (16 * MiB, 0, 24 * MiB, 0.0, None),
])
def test_the_donation_verdict(da, db, pa, pb, expect):
    got = verdicts(_side("a", donated=da, hbm_peak=pa), _side("b", donated=db, hbm_peak=pb))
    assert got == ([expect] if expect else [])
