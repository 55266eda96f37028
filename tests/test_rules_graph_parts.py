"""The graph rules (H001-H013, F001, G001) part by part, on real compiled modules: each branch
the rule fixtures leave alone (a chip with no TF32 advantage, an f32 algorithm instead of a
precision, no chip at all, shapes whose dims tell the message's figures apart), against values
worked out here from the shapes and the chip table.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import FIXTURES, make_rule

from hloscope.cost.chips import get_chip
from hloscope.parser import load, parse, parse_shape
from hloscope.rules.base import RuleContext

H100 = get_chip("h100")
F32_H100 = FIXTURES / "rules" / "H010" / "f32_matmul_h100.hlo.txt"  # f32 1024^3 dot at HIGHEST
F32_V5E = FIXTURES / "rules" / "H010" / "f32_matmul_v5e.hlo.txt"  # f32 1024^3 at HIGHEST


def _h010(module, chip, assumed=None):
    rule = make_rule("H010")
    ctx = RuleContext(module, chip, assumed_chip=assumed)
    return [f for c in module.computations for i in c.instructions if i.opcode in ("dot", "convolution")
            for f in rule.check(i, ctx)]


# ----------------------------------------------------------------- H010 on GPUs

def test_h010_gpu_cost_is_the_f32_time_less_the_tf32_time():
    (m,) = load(F32_H100)
    (f,) = _h010(m, H100)
    flops = 2 * 1024 ** 3
    assert f.cost == {"est_seconds": pytest.approx(flops / 67e12 - flops / 494.5e12)}
    assert "at precision=HIGHEST" in f.message and "67 TFLOP/s" in f.message and "at 494;" in f.message
    assert f.evidence["peak_f32"] == 67e12 and f.evidence["peak_tf32"] == 494.5e12
    # the assumed chip serves where none is known (a GPU module: the figures rest on it)
    (g,) = _h010(m, None, assumed=H100)
    assert g.cost == f.cost


def test_h010_names_the_two_operands_and_reports_from_its_flops_limit_on():
    """The real 1024^3 f32 dots: the evidence names both operands (the gemm fusion's
    parameters print no layout); 2 x 1024^3 FLOPs is reported at exactly that limit."""
    flops = 2 * 1024 ** 3
    for path, chip in ((F32_H100, H100), (F32_V5E, get_chip("v5e"))):
        (m,) = load(path)
        (f,) = _h010(m, chip)
        assert [str(parse_shape(s)) for s in f.evidence["operands"]] == ["f32[1024,1024]"] * 2, path.name
        rule = make_rule("H010", min_flops=flops)
        ctx = RuleContext(m, chip)
        dots = [i for c in m.computations for i in c.instructions if i.opcode in ("dot", "convolution")]
        assert len([g for i in dots for g in rule.check(i, ctx)]) == 1
        rule = make_rule("H010", min_flops=flops + 1)
        assert [g for i in dots for g in rule.check(i, ctx)] == []


def test_h010_gpu_an_f32_algorithm_is_reported_by_its_name():
    # the same real module with the dot's precision given as XLA's algorithm instead
    text = F32_H100.read_text().replace("operand_precision={highest,highest}", "algorithm=dot_f32_f32_f32")
    (m,) = parse(text)
    (f,) = _h010(m, H100)
    assert "at algorithm=dot_f32_f32_f32" in f.message and f.evidence["algorithm"] == "dot_f32_f32_f32"


def test_h010_gpu_silent_where_tf32_gains_nothing_or_no_chip_is_known():
    (m,) = load(F32_H100)
    assert _h010(m, replace(H100, peak_tf32_flops=H100.peak_f32_flops)) == []
    assert _h010(m, replace(H100, peak_tf32_flops=H100.peak_f32_flops / 2)) == []
    assert _h010(m, replace(H100, peak_tf32_flops=None)) == []
    assert len(_h010(m, replace(H100, peak_tf32_flops=H100.peak_f32_flops * 1.01))) == 1
    assert _h010(m, None) == []


# ----------------------------------------------------------------- H011 what it reports

@pytest.fixture(scope="module")
def scores():  # H011's positive on v5e: fusion.3 writes f32[8,8192,8192] attention scores
    (m,) = load(FIXTURES / "rules" / "H011" / "naive_attention_v5e.hlo.txt")
    return m


def _users(module, name: str) -> int:
    comp = next(c for c in module.computations if name in c.by_name)
    return sum(1 for i in comp.instructions if name in i.operands)


def test_h011_figures_of_a_cross_attention_block_without_a_chip(scores):
    rule = make_rule("H011")
    instr = scores.entry.by_name["fusion.3"]
    shape = parse_shape("f32[2,8,1024,8192]")  # queries 1024, keys 8192: the dims apart
    nbytes = 2 * 8 * 1024 * 8192 * 4
    f = rule._report(RuleContext(scores, None), instr, shape, "attention", nbytes, 0, 16 << 30, None, 0, [])
    traffic = nbytes * (1 + max(_users(scores, "fusion.3"), 1))
    assert "attention scores [.., 1024, 8192] f32[2,8,1024,8192]:" in f.message
    assert "(3.1% of 16.0 GiB, 536870912x the largest input)" in f.message  # (no parameter: over 1 byte)
    assert f.cost == {"bytes_wasted": float(traffic)} and "of HBM time" not in f.message
    assert f.evidence["traffic_bytes"] == traffic and f.evidence["output_index"] is None
    assert f.message.endswith(" of HBM traffic to write and read it")  # (no chip: no time)


def test_h011_names_the_last_two_dims_of_any_rank(scores):
    """Grouped-query scores [B, H, G, S, S] and [B, S, V] logits: the message names the
    trailing dims, S and S, and V, whatever the rank."""
    rule = make_rule("H011")
    instr = scores.entry.by_name["fusion.3"]
    gqa = parse_shape("f32[2,4,2,1024,1024]")
    assert rule._kind(gqa) == "attention"
    f = rule._report(RuleContext(scores, None), instr, gqa, "attention", 1 << 30, 0, 16 << 30, None, 0, [])
    assert "attention scores [.., 1024, 1024] f32[2,4,2,1024,1024]:" in f.message
    logits = parse_shape("bf16[8,128,50000]")
    assert rule._kind(logits) == "logits"
    g = rule._report(RuleContext(scores, None), instr, logits, "logits", 1 << 30, 0, 16 << 30, None, 0, [])
    assert "vocabulary logits [.., 50000] bf16[8,128,50000]:" in g.message


def test_h011_names_the_output_and_the_others_of_a_multi_output_fusion(scores):
    rule = make_rule("H011")
    instr = scores.entry.by_name["fusion.3"]
    shape = parse_shape("f32[4096,32768]")
    v5e = get_chip("v5e")
    one = rule._report(RuleContext(scores, v5e), instr, shape, "logits", 512 << 20, 64 << 20, 16 << 30,
                       index=1, outputs=3, others=[2])
    assert "vocabulary logits [.., 32768] f32[4096,32768] (output 1 of its 3; output 2 too):" in one.message
    assert "(3.1% of 16.0 GiB, 8x the largest input)" in one.message
    assert one.cost["est_seconds"] == pytest.approx(one.cost["bytes_wasted"] / v5e.hbm_bandwidth)
    two = rule._report(RuleContext(scores, v5e), instr, shape, "logits", 512 << 20, 64 << 20, 16 << 30,
                       index=0, outputs=3, others=[1, 2])
    assert "(output 0 of its 3; outputs 1, 2 too):" in two.message


# ----------------------------------------------------------------- H001's help: where the copy reads

# HAND-WRITTEN: copies of a parameter through a bitcast, of a tuple parameter's element, of a
# value made in the program, and of a called computation's parameter; parameter 1 donated
COPIES = """HloModule m, input_output_alias={ {}: (1, {}, may-alias) }

callee {
  a = f32[256,256] parameter(0)
  ROOT c4 = f32[256,256] copy(a)
}

ENTRY e {
  t = (f32[256,256], f32[256,256]) parameter(0)
  d = f32[256,256] parameter(1)
  p = f32[256,256] parameter(2)
  b = f32[65536] bitcast(p)
  c1 = f32[65536] copy(b)
  g = f32[256,256] get-tuple-element(t), index=1
  c2 = f32[256,256] copy(g)
  s = f32[256,256] add(p, p)
  c3 = f32[256,256] copy(s)
  c5 = f32[256,256] copy(d)
  k = f32[256,256] call(p), to_apply=callee
  ROOT r = f32[256,256] add(k, c5)
}
"""


def test_h001_help_follows_the_copied_value_to_its_parameter():
    from hloscope.rules.h001_defensive_copy import _help

    (m,) = parse(COPIES)
    ctx = RuleContext(m, None)

    def help_of(name: str) -> str:
        comp = next(c for c in m.computations if name in c.by_name)
        return _help(ctx, comp.by_name[name])

    assert help_of("c1").startswith("Parameter 2 is not donated: XLA copies it before updating it in "
                                     "place. Donate it (donate_argnums) if the caller does not need it "
                                     "afterwards, or find why XLA needs a second buffer")
    assert help_of("c2").startswith("Parameter 0 is not donated")  # through the tuple's element
    assert help_of("c5").startswith("Parameter 1 already aliases an output (input_output_alias)")
    assert "donate" not in help_of("c5").lower().replace("already aliases", "")
    for made in ("c3", "c4"):  # a value made in the program; a called computation's parameter
        assert help_of(made).endswith("Restructure so one buffer suffices (return the updated value only).")


# ----------------------------------------------------------------- H003: where padding counts

# HAND-WRITTEN: an [N, 8] f32 array in TPU (8, 128) tiles (16x its data) as an entry parameter,
# a fusion's parameter and result inside it, a loop body's parameter, and an entry op's result
NARROW = """HloModule m, is_scheduled=true

fused {
  a = f32[65536,8]{1,0:T(8,128)} parameter(0)
  ROOT n = f32[65536,8]{1,0:T(8,128)} negate(a)
}

cond {
  s = f32[65536,8]{1,0:T(8,128)} parameter(0)
  ROOT f = pred[] constant(false)
}

body {
  s = f32[65536,8]{1,0:T(8,128)} parameter(0)
  ROOT e = f32[65536,8]{1,0:T(8,128)} exponential(s)
}

ENTRY e {
  p = f32[65536,8]{1,0:T(8,128)} parameter(0)
  f = f32[65536,8]{1,0:T(8,128)} fusion(p), kind=kLoop, calls=fused
  ROOT w = f32[65536,8]{1,0:T(8,128)} while(f), condition=cond, body=body
}
"""


def test_h003_judges_each_array_of_a_tuple():
    """An entry parameter holding a well-tiled [1024, 1024] and a [65536, 8] padded to 128
    lanes: the first passes, the second is reported (HAND-WRITTEN)."""
    text = """HloModule m, is_scheduled=true

ENTRY e {
  p = (f32[1024,1024]{1,0:T(8,128)}, f32[65536,8]{1,0:T(8,128)}) parameter(0)
  ROOT g = f32[65536,8]{1,0:T(8,128)} get-tuple-element(p), index=1
}
"""
    (m,) = parse(text)
    found = list(make_rule("H003").check_module(RuleContext(m, get_chip("v5e"))))
    assert [(f.instruction, f.evidence["shape"]) for f in found] == [("p", "f32[65536,8]{1,0:T(8,128)}")]


def test_h003_counts_entry_parameters_and_results_not_fused_values_nor_callee_parameters():
    (m,) = parse(NARROW)
    found = list(make_rule("H003").check_module(RuleContext(m, get_chip("v5e"))))
    assert sorted((f.computation, f.instruction) for f in found) == [
        ("body", "e"), ("e", "f"), ("e", "p")]  # (the while's result is its state's buffer)
    f = next(f for f in found if f.instruction == "p")
    assert (f.evidence["logical_bytes"], f.evidence["padded_bytes"]) == (65536 * 8 * 4, 65536 * 128 * 4)
    assert f.cost == {"bytes_wasted": float(65536 * 120 * 4)} and f.evidence["ratio"] == 16.0


# ----------------------------------------------------------------- H012: the verdict per capacity

NEAR_FULL = FIXTURES / "rules" / "H012" / "near_full_v5e.hlo.txt"
PEAK = 2 * 8192524288  # XLA's memory_analysis: argument + output, no alias, no temporaries


def _h012(module, chip, assumed=None, **options):
    return list(make_rule("H012", **options).check_module(RuleContext(module, chip, assumed_chip=assumed)))


def test_h012_warns_from_the_margin_and_errs_past_the_capacity():
    from hloscope.rules.base import Severity

    (m,) = load(NEAR_FULL)
    v5e = get_chip("v5e")
    at = lambda hbm: _h012(m, replace(v5e, hbm_bytes=hbm))  # noqa: E731
    assert at(int(PEAK / 0.95) + 1024) == []  # more than 5% headroom
    (warn,) = at(int(PEAK / 0.95) - 1024)
    assert warn.severity is Severity.WARNING and warn.message.endswith("; under 5% headroom")
    (fits,) = at(PEAK)  # exactly full: not over
    assert fits.severity is Severity.WARNING
    (err,) = at(PEAK - 1)
    assert err.severity is Severity.ERROR and err.message.endswith("; it does not fit")
    assert err.evidence["hbm_bytes"] == PEAK and err.evidence["capacity"] == PEAK - 1
    assert err.evidence["argument_bytes"] == err.evidence["output_bytes"] == 8192524288
    assert err.instruction == m.entry.root.name  # no temporaries: at the root
    (wide,) = _h012(m, replace(v5e, hbm_bytes=PEAK * 2), margin=0.6)  # half full, within 60%
    assert wide.message.endswith("; under 60% headroom")


def test_h012_counts_the_output_table_in_the_chips_own_unit():
    """A real v5p compile (H004's SwiGLU train step): its output's index table takes 32-byte
    units on a v5p (512 on a v5e), and the outputs H012 adds up are XLA's memory_analysis
    output size. The message
    names the three largest buffers live at the peak."""
    import json

    entry = json.loads((FIXTURES / "manifest.json").read_text())["H004_swiglu_train_v5p"]
    (m,) = load(FIXTURES / entry["file"])
    (f,) = _h012(m, get_chip("v5p"), margin=1.0)
    assert f.evidence["output_bytes"] == entry["memory_analysis"]["output_size_in_bytes"]
    live = f.message[f.message.index("(largest live: ") + 15:f.message.index(")", f.message.index("(largest live: "))]
    assert live.count("%") == 3
    # (on a TPU the help says nothing of GPU allocators)
    assert f.help.endswith("`hloscope memory` lists what is live at the peak.")


def test_h012_against_an_assumed_chip_only_informs():
    from hloscope.rules.base import Severity

    (m,) = load(NEAR_FULL)
    small = replace(get_chip("v5e"), hbm_bytes=PEAK // 2)
    (f,) = _h012(m, None, assumed=small)
    assert f.severity is Severity.INFO
    assert "(200.0% of 7.6 GiB of an assumed TPU v5e)" in f.message
    assert f.message.endswith("; set --chip to judge it: nothing states the chip")


def test_h012_on_a_gpu_counts_what_jaxs_allocator_takes():
    from hloscope.rules.base import Severity

    (m,) = load(NEAR_FULL)
    gpu = replace(get_chip("h100"), hbm_bytes=int(PEAK / 0.8))  # 0.75 of it is under the peak
    (f,) = _h012(m, gpu)
    assert f.severity is Severity.WARNING and f.message.endswith("; over what JAX allocates")
    assert "JAX's allocator takes 75% of it" in f.message
    assert f.help.endswith("XLA_PYTHON_CLIENT_MEM_FRACTION=.95 lets JAX's allocator take more of the memory.")
    assert _h012(m, gpu, gpu_memory_fraction=0.82)[0].message.endswith("; under 5% headroom")  # 1.025x the peak
    assert _h012(m, replace(gpu, hbm_bytes=PEAK * 2)) == []  # 75% of it still holds the peak
    (tpu,) = _h012(m, replace(get_chip("v5e"), hbm_bytes=int(PEAK / 0.97)))
    assert "allocator" not in tpu.message and "XLA_PYTHON_CLIENT_MEM_FRACTION" not in tpu.help


def test_h012_names_the_peaks_instruction_and_whats_live_there():
    (m,) = load(FIXTURES / "memory" / "big_temporary_v5e.hlo.txt")
    total = 8388608 + 32768 + 536870912  # XLA: argument + output + its 512 MiB temporary heap
    (f,) = _h012(m, replace(get_chip("v5e"), hbm_bytes=total))
    assert f.instruction != m.entry.root.name and f.evidence["temp_peak_bytes"] == 512 << 20
    assert "(largest live: %" in f.message and "512.0 MiB" in f.message
    assert f.evidence["peak_step"] is not None


# ----------------------------------------------------------------- H013: each limit at equality

TINY_LOOP = FIXTURES / "rules" / "H013" / "tiny_loop_v5e.hlo.txt"  # 1024 trips of 3 tiny ops


def _h013(module, chip, assumed=None, **options):
    return list(make_rule("H013", **options).check_module(RuleContext(module, chip, assumed_chip=assumed)))


def _loops_before(text: str, *trips: int) -> str:
    """The real tiny loop's module with more loops of the same body before it, one per count
    in `trips` (their conditions copies of its own with that bound): HAND-EDITED."""
    cond = text[text.index("%wide.region_1.3 ("):text.index("ENTRY")]
    whiles = ""
    for k, n in enumerate(trips):
        text = text.replace("ENTRY", cond.replace("%wide.region_1.3 (", f"%cond.{k} (")
                            .replace("constant(1024)", f"constant({n})") + "ENTRY", 1)
        whiles += (f"  %while.{k} = (s32[]{{:T(128)}}, f32[8,128]{{1,0:T(8,128)S(1)}}, s32[]{{:T(128)}}) "
                   f"while(%tuple.13), condition=%cond.{k}, body=%wide.region_0.2.sunk\n")
    return text.replace("  %while = ", whiles + "  %while = ", 1)


def test_h013_each_loop_is_judged_on_its_own():
    """Before the real 1,024-trip loop, one of 8 trips (under min_trips 16) and one of 20
    (over it, but its overhead under 100 us): the first two are passed over, the third is
    still reported."""
    (m,) = parse(_loops_before(TINY_LOOP.read_text(), 8, 20))
    model = RuleContext(m, get_chip("v5e")).model
    assert [model.trip_count(i) for i in m.entry.instructions if i.opcode == "while"] == [8, 20, 1024]
    found = _h013(m, get_chip("v5e"), min_trips=16)
    assert [f.instruction for f in found] == ["while"]


def test_h013_passes_over_a_loop_of_unknown_trips_whatever_min_trips():
    """The real loop with its condition's bound taken away (hand-edited: `i < i`, no constant
    to count to): the trip count is unknown, so the loop is not judged, even at min_trips 0
    or 1 (an unknown count is not one trip)."""
    text = TINY_LOOP.read_text().replace("compare(%get-tuple-element.10, %constant.11)",
                                         "compare(%get-tuple-element.10, %get-tuple-element.10)")
    (m,) = parse(text)
    loop = next(i for i in m.entry.instructions if i.opcode == "while")
    assert RuleContext(m, get_chip("v5e")).model.trip_count(loop) is None
    assert _h013(m, get_chip("v5e"), min_trips=0, min_seconds=0) == []
    assert _h013(m, get_chip("v5e"), min_trips=1, min_seconds=0) == []


def test_h013_figures_are_the_floor_per_op_and_the_overhead_over_the_trips():
    from hloscope.rules.base import Severity

    (m,) = load(TINY_LOOP)
    v5e = get_chip("v5e")
    (f,) = _h013(m, v5e)
    e = f.evidence
    assert (e["trips"], e["ops_per_trip"], e["op_floor_seconds"]) == (1024, 3, 1.2e-6)
    # each of the 3 ops is under the floor: a trip takes 3 floors, the work far less
    assert e["seconds_per_trip"] == pytest.approx(3 * 1.2e-6)
    assert e["roofline_seconds_per_trip"] < 1.2e-6
    # the work per trip is the sum of the ops' own roofline times (body and condition)
    from hloscope.cost.roofline import op_times
    from hloscope.cost.roofline import has_row, runs_alone
    from hloscope.units import human_seconds

    loop = next(i for i in m.entry.instructions if i.opcode == "while")
    model = RuleContext(m, v5e).model
    ops = [i for c in (loop.attr("body"), loop.attr("condition")) for i in m.by_name[c].instructions
           if has_row(i.opcode) and runs_alone(i.opcode)]
    assert len(ops) == 3
    assert e["roofline_seconds_per_trip"] == pytest.approx(sum(max(op_times(model, v5e, i)) for i in ops))
    assert (f"{human_seconds(e['seconds_per_trip'] * 1024)} a step, of which "
            f"{human_seconds(e['roofline_seconds_per_trip'] * 1024)} is the ops' work") in f.message
    assert f.cost["est_seconds"] == pytest.approx((e["seconds_per_trip"] - e["roofline_seconds_per_trip"]) * 1024)
    assert f.severity is Severity.WARNING
    (info,) = _h013(m, None, assumed=v5e)  # an assumed chip: the figures, no verdict
    assert info.severity is Severity.INFO and info.evidence == f.evidence


def test_h013_limits_at_equality():
    (m,) = load(TINY_LOOP)
    v5e = get_chip("v5e")
    (f,) = _h013(m, v5e)
    overhead = f.cost["est_seconds"]
    share = 1 - f.evidence["roofline_seconds_per_trip"] / f.evidence["seconds_per_trip"]
    assert len(_h013(m, v5e, min_trips=1024)) == 1 and _h013(m, v5e, min_trips=1025) == []
    assert len(_h013(m, v5e, min_seconds=overhead * 0.999)) == 1
    assert _h013(m, v5e, min_seconds=overhead * 1.001) == []
    assert len(_h013(m, v5e, min_share=share * 0.999)) == 1
    assert _h013(m, v5e, min_share=share * 1.001) == []


def test_h013_needs_a_chip_with_a_per_op_floor():
    (m,) = load(TINY_LOOP)
    assert _h013(m, get_chip("h100")) == []  # no measured floor in the table
    assert _h013(m, None) == []
    assert _h013(m, replace(get_chip("v5e"), op_floor_s=0.0)) == []


# ----------------------------------------------------------------- H011: which buffers count

def test_h011_kinds_by_shape_at_their_limits():
    rule = make_rule("H011")
    kind = lambda text: rule._kind(parse_shape(text))  # noqa: E731
    assert kind("f32[8,512,512]") == "attention" and kind("f32[8,511,511]") is None
    assert kind("f32[512,512]") is None  # rank 2: a square matrix, not [.., S, S] scores
    assert kind("f32[8,512,1024]") is None  # not square
    assert kind("f32[4096,32768]") == "logits" and kind("f32[4096,32767]") is None
    assert kind("f32[32768]") is None
    assert make_rule("H011", min_seq=1024)._kind(parse_shape("f32[8,512,512]")) is None
    assert make_rule("H011", min_vocab=1000)._kind(parse_shape("f32[16,1000]")) == "logits"


def test_h011_limits_share_of_hbm_and_ratio_to_the_largest_input(scores):
    v5e = get_chip("v5e")
    ctx = lambda chip: RuleContext(scores, chip)  # noqa: E731
    found = list(make_rule("H011").check_module(ctx(v5e)))
    nbytes = 8 * 8192 * 8192 * 4  # f32[8,8192,8192] scores: 2 GiB
    assert {f.evidence["bytes"] for f in found} == {nbytes}
    largest = found[0].evidence["largest_parameter_bytes"]
    # the share of HBM at equality (reported from it), and the ratio to the largest input
    at = lambda **o: list(make_rule("H011", **o).check_module(ctx(v5e)))  # noqa: E731
    assert len(at(hbm_fraction=nbytes / v5e.hbm_bytes)) == len(found)
    assert at(hbm_fraction=nbytes / v5e.hbm_bytes * 1.001) == []
    assert len(at(min_ratio=nbytes / largest)) == len(found)
    assert at(min_ratio=nbytes / largest * 1.001) == []
    # without a chip, 1% of 16 GiB
    assert len(list(make_rule("H011").check_module(ctx(None)))) == len(found)


# HAND-WRITTEN: a multi-output fusion writing two logits-sized outputs and a small one, a
# fusion's body holding such a value (on chip, not counted), and a bitcast of the big one
MULTI = """HloModule m, is_scheduled=true

body {
  p = bf16[2048,1024] parameter(0)
  w = bf16[1024,65536] parameter(1)
  a = f32[2048,65536] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[2048,32768] slice(a), slice={[0:2048], [0:32768]}
  s = f32[2048] constant({...})
  ROOT t = (f32[2048], f32[2048,65536], f32[2048,32768]) tuple(s, a, b)
}

ENTRY e {
  p = bf16[2048,1024] parameter(0)
  w = bf16[1024,65536] parameter(1)
  f = (f32[2048], f32[2048,65536], f32[2048,32768]) fusion(p, w), kind=kOutput, calls=body
  g = f32[2048,65536] get-tuple-element(f), index=1
  ROOT c = f32[2048,65536] bitcast(g)
}
"""


def test_h011_one_finding_per_multi_output_op_at_its_largest_output():
    (m,) = parse(MULTI)
    (f,) = list(make_rule("H011").check_module(RuleContext(m, get_chip("v5e"))))
    assert (f.computation, f.instruction) == ("e", "f")  # not the fused body's, nor the bitcast
    assert f.evidence["output_index"] == 1 and f.evidence["bytes"] == 2048 * 65536 * 4
    assert "(output 1 of its 3):" in f.message  # output 2 is 2x the largest input, under 4x
    (g,) = list(make_rule("H011", min_ratio=2).check_module(RuleContext(m, get_chip("v5e"))))
    assert g.evidence["output_index"] == 1 and "(output 1 of its 3; output 2 too)" in g.message


# ----------------------------------------------------------------- G001: both tilings, the waves

def _g001_module(config: str, out="f32[32,57]", body_dot=True) -> str:
    """HAND-WRITTEN: one Triton fusion with the backend config given (XLA's two forms: a
    __triton_gemm's triton_gemm_config, a nested GEMM's block-level output_tiles)."""
    inner = (f"  ROOT d = {out} dot(a, b), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}"
             if body_dot else f"  c = f32[] constant(0)\n  ROOT d = {out} broadcast(c), dimensions={{}}")
    m, n = out[4:-1].split(",")
    return f"""HloModule m

gemm {{
  a = f32[64,{m}] parameter(0)
  b = f32[64,{n}] parameter(1)
{inner}
}}

ENTRY e {{
  a = f32[64,{m}] parameter(0)
  b = f32[64,{n}] parameter(1)
  ROOT r = {out} fusion(a, b), kind=kCustom, calls=gemm, backend_config={config}
}}
"""


NESTED = '{"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion","block_level_fusion_config":{"output_tiles":[{"sizes":[%s]}]}}}'
GEMM = '{"fusion_backend_config":{"kind":"__triton_gemm","triton_gemm_config":{%s}}}'


def _g001(text: str, chip=H100, **options):
    (m,) = parse(text)
    rule = make_rule("G001", **options)
    ctx = RuleContext(m, chip)
    return [f for i in m.entry.instructions for f in rule.check(i, ctx)]


def test_g001_reads_both_tiling_forms():
    from hloscope.rules.g001_triton_tile_waste import triton_tiling

    def tiling(config):
        (m,) = parse(_g001_module(config))
        return triton_tiling(m.entry.root)

    assert tiling(GEMM % '"block_m":"64","block_n":"32","block_k":"16","split_k":"2","num_stages":"3"') == {
        "block_m": 64, "block_n": 32, "block_k": 16, "split_k": 2, "num_stages": 3}
    assert tiling(GEMM % '"block_m":"64","block_k":"16"') is None  # no block_n: no tiling to judge
    assert tiling(GEMM % '"block_n":"64"') is None
    assert tiling(NESTED % '"64","16"') == {"tile": [64, 16]}
    assert tiling(NESTED % "") is None
    assert tiling('{"fusion_backend_config":{"kind":"__cudnn$fusion"}}') is None


def test_g001_nested_gemm_tiles_overhanging_the_output():
    (f,) = _g001(_g001_module(NESTED % '"64","64"'))
    # one 64x64 tile over 32x57: 1 - 32*57 / 64^2 of its work is overhang
    assert f"64x64 tiles on a 32x57 output: {(1 - 32 * 57 / 4096) * 100:.0f}% of the tiles' work" in f.message
    assert f.evidence["grid"] == 1 and f.evidence["tile"] == [64, 64]
    assert _g001(_g001_module(NESTED % '"32","57"')) == []  # tiles that fit
    assert _g001(_g001_module(NESTED % '"64"')) == []  # one size for two dims: not read
    assert _g001(_g001_module(NESTED % '"0","64"')) == []
    # 1-row tiles: 32 x ceil(57/64) = 32 tiles of 64 columns, 1 - 57/64 of each is overhang
    (g,) = _g001(_g001_module(NESTED % '"1","64"'), max_waste=0.1)
    assert g.evidence["grid"] == 32 and f"{(1 - 57 / 64) * 100:.0f}% of the tiles' work" in g.message


def test_g001_a_gemm_fusion_without_a_dot_is_not_judged():
    assert _g001(_g001_module(GEMM % '"block_m":"64","block_n":"64"', body_dot=False)) == []


def test_g001_a_last_wave_that_leaves_most_sms_idle():
    from hloscope.rules.base import Severity

    # 448 x 1216 in 64 x 64 blocks: 7 x 19 = 133 thread blocks on 132 SMs: two waves, the
    # second one block; 133 / 264 of the SM-time used
    text = _g001_module(GEMM % '"block_m":"64","block_n":"64"', out="f32[448,1216]")
    (f,) = _g001(text)
    assert f.message == ("%r: 133 thread blocks make 2 waves on NVIDIA H100 SXM's 132 SMs, the last 1 "
                         f"of 132: {133 / 264 * 100:.0f}% of the SM-time used"
                         + f.message[f.message.index(", ~"):])
    assert (f.evidence["grid"], f.evidence["sm_count"], f.evidence["waste"]) == (133, 132, 0.0)
    assert f.evidence["wave_efficiency"] == round(133 / 264, 4)
    flops = 2 * 448 * 1216 * 64
    lost = 1 - 133 / 264
    assert f.evidence["flops"] == flops
    # (an f32 dot at DEFAULT precision runs on the TF32 tensor cores: the H100's 494.5 TFLOP/s)
    assert f.cost["est_seconds"] == pytest.approx(flops / (1 - lost) * lost / 494.5e12)
    assert f.severity is Severity.INFO  # 70 MFLOPs: under min_flops
    assert _g001(text, min_flops=flops)[0].severity is Severity.WARNING
    assert _g001(text, min_wave_efficiency=133 / 264) == []  # at the limit: fine
    assert _g001(text, chip=get_chip("v5e")) == []  # no SMs to idle on a TPU
    assert _g001(text, chip=None) == []


def test_g001_whole_waves_and_split_k_and_batch():
    full = _g001_module(GEMM % '"block_m":"64","block_n":"64"', out="f32[768,704]")  # 12 x 11 = 132
    assert _g001(full) == []
    # split-K 2 doubles the grid: 264 blocks, two full waves
    assert _g001(_g001_module(GEMM % '"block_m":"64","block_n":"64","split_k":"2"', out="f32[768,704]")) == []
    # 133 blocks times split-K 2: 266, a third wave of 2 blocks
    (f,) = _g001(_g001_module(GEMM % '"block_m":"64","block_n":"64","split_k":"2"', out="f32[448,1216]"))
    assert f.evidence["grid"] == 266 and "make 3 waves" in f.message and "the last 2 of 132" in f.message


def test_g001_a_batched_gemm_in_one_wave():
    """[2, 80, 64] x [2, 64, 1216] in 64 x 64 tiles: 2 x 2 x 19 = 76 blocks, one wave on the
    H100's 132 SMs, every SM-wave used; 1 - 80/128 of the rows overhang. The cost is that
    share of the time at the TF32 peak an f32 dot at DEFAULT runs at (HAND-WRITTEN)."""
    text = _g001_module(GEMM % '"block_m":"64","block_n":"64"', out="f32[80,1216]") \
        .replace("a = f32[64,80]", "a = f32[2,64,80]").replace("b = f32[64,1216]", "b = f32[2,64,1216]") \
        .replace("f32[80,1216] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                 "f32[2,80,1216] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                 "lhs_contracting_dims={1}, rhs_contracting_dims={1}") \
        .replace("ROOT r = f32[80,1216] fusion", "ROOT r = f32[2,80,1216] fusion")
    (f,) = _g001(text)
    waste = 1 - 80 / 128
    assert f.message.startswith(f"%r: 64x64 tiles on a 80x1216 output (x2 batch): {waste * 100:.0f}% of "
                                "the tiles' work is overhang, ~")
    assert (f.evidence["grid"], f.evidence["wave_efficiency"]) == (76, 1.0)
    flops = 2 * 2 * 80 * 1216 * 64
    assert f.cost["est_seconds"] == pytest.approx(flops / (1 - waste) * waste / 494.5e12)


def test_g001_overhang_and_idle_sms_together():
    # 80 x 1216 in 64 x 64: 2 x 19 = 38 blocks, one wave; 1 - 80/128 of the rows are overhang
    (f,) = _g001(_g001_module(GEMM % '"block_m":"64","block_n":"64"', out="f32[80,1216]"))
    assert f.message.startswith(f"%r: 64x64 tiles on a 80x1216 output: {(1 - 80 / 128) * 100:.0f}% of "
                                "the tiles' work is overhang, ~")
    # 80 x 4288: 2 x 67 = 134 blocks, two waves, the last 2 of 132: both problems, in that order
    (g,) = _g001(_g001_module(GEMM % '"block_m":"64","block_n":"64"', out="f32[80,4288]"))
    assert g.message.startswith(f"%r: 64x64 tiles on a 80x4288 output: {(1 - 80 / 128) * 100:.0f}% of "
                                "the tiles' work is overhang; 134 thread blocks make 2 waves")
    lost = 1 - (80 / 128) * (134 / 264)
    assert g.cost["est_seconds"] == pytest.approx(g.evidence["flops"] / (1 - lost) * lost / 494.5e12)
    # the same gemm in bf16 runs at the bf16 tensor-core peak, 989 TFLOP/s
    (h,) = _g001(_g001_module(GEMM % '"block_m":"64","block_n":"64"', out="f32[80,4288]").replace("f32[64,", "bf16[64,"))
    assert h.cost["est_seconds"] == pytest.approx(h.evidence["flops"] / (1 - lost) * lost / 989e12)


# ----------------------------------------------------------------- H005: MXU padding, by hand

def _dot_module(m: int, k: int, n: int, dtype="bf16") -> str:
    """HAND-WRITTEN: one [m, k] x [k, n] dot."""
    return f"""HloModule m

ENTRY e {{
  a = {dtype}[{m},{k}] parameter(0)
  b = {dtype}[{k},{n}] parameter(1)
  ROOT d = {dtype}[{m},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


def _h005(text: str, chip, **options):
    (m,) = parse(text)
    rule = make_rule("H005", **options)
    return list(rule.check(m.entry.root, RuleContext(m, chip)))


def test_h005_padding_share_and_cost_of_k_and_n_off_the_mxu():
    v5e = get_chip("v5e")
    (f,) = _h005(_dot_module(1024, 200, 300), v5e)
    util = (200 / 256) * (300 / 384)  # K and N padded to 128s; M=1024 fills 16-row sublanes
    flops = 2 * 1024 * 200 * 300
    assert f.evidence == {"M": 1024, "K": 200, "N": 300, "batch": 1, "mxu": 128, "utilization": round(util, 4)}
    assert f.message.startswith(f"%d: K=200, N=300 not multiples of the 128x128 MXU; ~{(1 - util) * 100:.0f}% "
                                "of MXU work is padding, ~")
    assert f.cost["est_seconds"] == pytest.approx(flops * (1 / util - 1) / v5e.peak_bf16_flops)
    (g,) = _h005(_dot_module(1024, 200, 300), get_chip("v6e"))  # a 256 x 256 MXU
    assert g.evidence["mxu"] == 256 and g.evidence["utilization"] == round((200 / 256) * (300 / 512), 4)


def test_h005_limits_at_equality_and_the_sublanes_of_m():
    v5e = get_chip("v5e")
    text = _dot_module(1024, 200, 300)
    util, flops = (200 / 256) * (300 / 384), 2 * 1024 * 200 * 300
    assert _h005(text, v5e, min_utilization=util) == []
    assert len(_h005(text, v5e, min_utilization=util + 1e-9)) == 1
    assert len(_h005(text, v5e, min_flops=flops)) == 1
    assert _h005(text, v5e, min_flops=flops + 1) == []
    # M off its sublanes alone: 1000 bf16 rows fill 63 of 16-row tiles (1008)
    (f,) = _h005(_dot_module(1000, 256, 256), v5e, min_utilization=0.995)
    assert f.message.startswith("%d: M=1000 (sublanes 16) not multiples") and f.evidence["utilization"] == round(1000 / 1008, 4)
    (g,) = _h005(_dot_module(1004, 256, 256, "f32"), v5e, min_utilization=0.999)  # f32: 8-row sublanes
    assert g.message.startswith("%d: M=1004 (sublanes 8) not") and g.evidence["utilization"] == round(1004 / 1008, 4)


def test_h005_prices_the_padding_at_the_rate_the_dot_runs():
    """An f32 dot at DEFAULT precision is one bf16 MXU pass (XLA's estimated cycles equal
    bf16's, H010's doc): its padding costs at the bf16 peak; at HIGHEST, six passes, at a
    sixth of it."""
    v5e = get_chip("v5e")
    util, flops = (200 / 256) * (300 / 384), 2 * 1024 * 200 * 300
    (f,) = _h005(_dot_module(1024, 200, 300, "f32"), v5e)
    assert f.cost["est_seconds"] == pytest.approx(flops * (1 / util - 1) / v5e.peak_bf16_flops)
    highest = _dot_module(1024, 200, 300, "f32").replace("rhs_contracting_dims={0}",
                                                         "rhs_contracting_dims={0}, operand_precision={highest,highest}")
    (g,) = _h005(highest, v5e)
    assert g.cost["est_seconds"] == pytest.approx(flops * (1 / util - 1) / (v5e.peak_bf16_flops / 6))


def test_h005_m_is_padded_to_the_sublanes_of_the_left_operand():
    """M is the left operand's rows: a bf16 [1000, 256] times an f32 [256, 256] pads M to
    16-row sublanes (1008), as bf16 rows are packed, not to f32's 8 (1000 fills them)."""
    mixed = _dot_module(1000, 256, 256).replace("b = bf16[256,256]", "b = f32[256,256]")
    (f,) = _h005(mixed, get_chip("v5e"), min_utilization=0.995)
    assert f.message.startswith("%d: M=1000 (sublanes 16) not") and f.evidence["utilization"] == round(1000 / 1008, 4)


def test_h005_an_empty_matmul_wastes_nothing():
    assert _h005(_dot_module(0, 200, 300), get_chip("v5e"), min_flops=0) == []
    assert _h005(_dot_module(1024, 0, 300), get_chip("v5e"), min_flops=0) == []


def test_h005_with_no_chip_known_names_no_time():
    """A TPU program (its layouts tiled) with no chip known: the padding share, no time."""
    tiled = _dot_module(1024, 200, 300).replace("] parameter", "]{1,0:T(8,128)(2,1)} parameter") \
        .replace("bf16[1024,300] dot", "bf16[1024,300]{1,0:T(8,128)(2,1)} dot")
    (f,) = _h005(tiled, None)
    assert f.cost == {}
    assert f.message.endswith("% of MXU work is padding")


def test_h005_only_on_tpu_programs():
    assert _h005(_dot_module(1024, 200, 300), H100) == []
    assert _h005(_dot_module(1024, 200, 300), None) == []  # no chip, no TPU layouts


# ----------------------------------------------------------------- H009: the chain to the matmul

# HAND-WRITTEN: a transpose reaching a dot through a reshape and a copy; one reaching a fusion
# with a dot inside; one reaching a fusion without; one with two users; a small one
CHAINS = """HloModule m

with_dot {
  x = f32[64,32] parameter(0)
  w = f32[32,16] parameter(1)
  ROOT d = f32[64,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

no_dot {
  x = f32[64,32] parameter(0)
  ROOT n = f32[64,32] negate(x)
}

ENTRY e {
  p = f32[32,64] parameter(0)
  w = f32[32,16] parameter(1)
  t1 = f32[64,32] transpose(p), dimensions={1,0}
  r1 = f32[64,32] reshape(t1)
  c1 = f32[64,32] copy(r1)
  d1 = f32[64,16] dot(c1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t2 = f32[64,32] transpose(p), dimensions={1,0}
  f2 = f32[64,16] fusion(t2, w), kind=kOutput, calls=with_dot
  t3 = f32[64,32] transpose(p), dimensions={1,0}
  f3 = f32[64,32] fusion(t3), kind=kLoop, calls=no_dot
  t4 = f32[64,32] transpose(p), dimensions={1,0}
  d4 = f32[64,16] dot(t4, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n4 = f32[64,32] negate(t4)
  s = f32[2,4] slice(p), slice={[0:2], [0:4]}
  t5 = f32[4,2] transpose(s), dimensions={1,0}
  w5 = f32[2,3] slice(w), slice={[0:2], [0:3]}
  d5 = f32[4,3] dot(t5, w5), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[64,16], f32[64,16], f32[64,32], f32[64,16], f32[64,32], f32[4,3]) tuple(d1, f2, f3, d4, n4, d5)
}
"""


def test_h009_follows_one_users_chain_to_a_matmul_or_a_fusion_holding_one():
    (m,) = parse(CHAINS)
    rule = make_rule("H009")
    ctx = RuleContext(m, None)
    found = {f.instruction: f for i in m.entry.instructions if i.opcode == "transpose" for f in rule.check(i, ctx)}
    assert sorted(found) == ["t1", "t2"]
    f = found["t1"]
    assert f.message == ("transpose %t1 -> reshape %r1 -> copy %c1 -> dot %d1: reorders 8.0 KiB only so "
                         "the dot sees another dimension order")
    assert f.evidence == {"chain": ["t1", "r1", "c1"], "consumer": "d1", "permutation": [1, 0]}
    assert f.cost == {"bytes_wasted": 2.0 * 64 * 32 * 4}
    assert found["t2"].evidence["consumer"] == "f2"
    small = [f for f in make_rule("H009", min_bytes=32).check(m.entry.by_name["t5"], ctx)]
    assert len(small) == 1 and list(make_rule("H009", min_bytes=33).check(m.entry.by_name["t5"], ctx)) == []


def test_h009_a_fusion_holding_a_convolution_holds_a_matmul():
    """TPU fusions print their dots as convolutions: the fusion f2 with its dot written as a
    1x1 convolution is still the matmul the transpose feeds."""
    conv = CHAINS.replace(
        "ROOT d = f32[64,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "ROOT d = f32[64,16] convolution(x, w), dim_labels=bf_io->bf")
    (m,) = parse(conv)
    found = list(make_rule("H009").check(m.entry.by_name["t2"], RuleContext(m, None)))
    assert [f.evidence["consumer"] for f in found] == ["f2"]


def test_h009_a_transpose_printed_without_its_permutation_names_none():
    """The lenient parser takes a transpose with no `dimensions=`: the finding names no
    permutation rather than failing (HAND-WRITTEN)."""
    bare = CHAINS.replace("t1 = f32[64,32] transpose(p), dimensions={1,0}", "t1 = f32[64,32] transpose(p)")
    (m,) = parse(bare)
    (f,) = make_rule("H009").check(m.entry.by_name["t1"], RuleContext(m, None))
    assert f.evidence["permutation"] == []


# ----------------------------------------------------------------- H008: sizes, sync, not yet scheduled

EXPOSED = FIXTURES / "rules" / "H008" / "exposed_permute_v5p.hlo.txt"  # a 1 MiB permute, back to back


def _h008(module, chip=get_chip("v5p"), stage=None, **options):
    from hloscope.stage import detect_stage

    ctx = RuleContext(module, chip, stage=detect_stage(module, stage) if stage else None)
    return list(make_rule("H008", **options).check_module(ctx))


def test_h008_size_limit_at_equality_and_its_figures():
    (m,) = load(EXPOSED)
    (f,) = _h008(m)
    assert f.evidence == {"opcode": "collective-permute", "async": True, "moved_bytes": 1 << 20,
                          "axis": "permute", "overlap_instructions": 0}
    assert f.cost["est_seconds"] == pytest.approx(5.83e-6, rel=0.01)  # 1 MiB over 90 GB/s links, both ways
    assert len(_h008(m, min_bytes=1 << 20)) == 1 and _h008(m, min_bytes=(1 << 20) + 1) == []


def test_h008_a_synchronous_collective_is_exposed_by_itself():
    (m,) = parse(CASES_SYNC)
    (f,) = _h008(m)
    # a ring all-reduce moves 2 (n - 1) / n of the 4 MiB per device: 6 MiB over 4 devices
    assert f.message.startswith("%ar (all-reduce, 6.0 MiB moved per device") and "is synchronous: the chip waits for it" in f.message
    assert f.evidence["async"] is False


def test_h008_before_optimization_one_note_for_all():
    from hloscope.rules.base import Severity

    (m,) = load(EXPOSED)
    (f,) = _h008(m, stage="before_optimizations")
    assert f.severity is Severity.INFO and f.evidence == {"collectives": 1, "stage": "before_optimizations"}
    assert f.message.startswith("before_optimizations module: its 1 collective(s) are not scheduled yet")
    assert _h008(m, stage="before_optimizations", min_bytes=(1 << 20) + 1) == []
    assert len(_h008(m, stage="before_optimizations", min_bytes=1 << 20)) == 1  # (at the limit: noted)


def test_h008_before_optimization_the_help_names_the_dump_to_lint():
    """The help's dump folder is the one XLA_FLAGS names, and its pattern matches the name XLA
    gives the optimized module's dump (a real dump's files), not the others."""
    import fnmatch
    import re

    (m,) = load(EXPOSED)
    (f,) = _h008(m, stage="before_optimizations")
    folder = re.search(r"--xla_dump_to=(\S+),", f.help).group(1)
    pattern = re.search(r"then lint (\S+)\.$", f.help).group(1)
    assert pattern.startswith(folder + "/")
    names = [p.name for p in (FIXTURES / "dumps" / "fsdp_default_v5p").iterdir()]
    assert [n for n in names if fnmatch.fnmatchcase(n, pattern.split("/", 1)[1])] == [
        "module_0000.jit_model.cl_933746096.after_optimizations.txt"]


# HAND-WRITTEN: a synchronous all-reduce of 4 MiB over 4 devices
CASES_SYNC = """HloModule m, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[1024,1024] parameter(0)
  ROOT ar = f32[1024,1024] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add
}
"""


# HAND-WRITTEN: a small all-reduce, an all-gather with a negate scheduled over it, then a
# 4 MiB all-reduce that nothing overlaps
MIXED = CASES_SYNC.replace("""  ROOT ar = f32[1024,1024] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add
""", """  q = f32[16] parameter(1)
  small = f32[16] all-reduce(q), replica_groups={{0,1,2,3}}, to_apply=add
  ags = (f32[1024,1024], f32[4096,1024]) all-gather-start(p), replica_groups={{0,1,2,3}}, dimensions={0}
  n = f32[1024,1024] negate(p)
  agd = f32[4096,1024] all-gather-done(ags)
  big = f32[1024,1024] all-reduce(n), replica_groups={{0,1,2,3}}, to_apply=add
  ROOT t = (f32[16], f32[4096,1024], f32[1024,1024]) tuple(small, agd, big)
""")


def test_h008_each_collective_is_judged_on_its_own():
    """The small all-reduce is under the size limit and the gather overlapped: both passed
    over, the big all-reduce after them reported. With no chip there is no time to give."""
    (m,) = parse(MIXED)
    assert [f.instruction for f in _h008(m)] == ["big"]
    (f,) = _h008(m, chip=None)
    assert f.instruction == "big" and f.cost == {}




# ----------------------------------------------------------------- H007: one weight, or per layer

WHOLE = FIXTURES / "rules" / "H007" / "gather_whole_weight_v5p.hlo.txt"  # 64 MiB weight gathered on 8


def _h007(module, **options):
    return list(make_rule("H007", **options).check_module(RuleContext(module, get_chip("v5p"))))


def test_h007_size_limit_at_equality_and_its_figures():
    (m,) = load(WHOLE)
    (f,) = _h007(m)
    weight = 8192 * 4096 * 2
    assert (f.evidence["result_bytes"], f.evidence["shard_bytes"], f.evidence["group_size"]) == (
        weight, weight // 8, 8)
    assert f.cost["bytes_wasted"] == float(weight - weight // 8)
    assert len(_h007(m, max_bytes=weight)) == 1 and _h007(m, max_bytes=weight + 1) == []
    # the gathered value is the whole of the entry's bf16[1024, 4096] shard parameter %param.1,
    # 8 of them: its global shape, as the module's sharding states it
    assert "(the whole of %param.1 bf16[8192,4096]) onto every one of 8 devices" in f.message


def test_h007_same_shaped_gathers_are_per_layer_fsdp_an_info():
    from hloscope.rules.base import Severity

    (m,) = load(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt")  # 4 per-layer gathers
    found = _h007(m, max_bytes=1)
    assert found and all(f.severity is Severity.INFO for f in found)
    per_layer = {f.evidence["per_layer"] for f in found}
    assert all(n >= 3 for n in per_layer)
    assert all("per-layer (FSDP) gathering" in f.message for f in found)
    # MaxText's flags: the first gather exposed, the 3 others async (tests/test_step.py)
    assert [f.message.endswith("; synchronous") for f in found] == [not f.evidence["async"] for f in found]
    assert sorted(f.evidence["async"] for f in found) == [False, True, True, True]
    # counted as layers only from `per_layer` same-shaped gathers on
    top = max(per_layer)
    assert all("per_layer" not in f.evidence for f in _h007(m, max_bytes=1, per_layer=top + 1))


# ----------------------------------------------------------------- F001: each flag's state

GATHERS = FIXTURES / "rules" / "F001" / "exposed_gather_v5p.hlo.txt"  # 4 synchronous all-gathers
ON = ("--xla_tpu_enable_async_collective_fusion=true "
      "--xla_tpu_enable_async_collective_fusion_fuse_all_gather=true --xla_enable_async_all_gather=true")


def _f001(flags, chip=get_chip("v5p")):
    (m,) = parse(GATHERS.read_text())  # (from text: no flag file beside it; only `flags`)
    return list(make_rule("F001").check_module(RuleContext(m, chip, flags=flags)))


def test_f001_all_three_flags_on_or_auto_leave_nothing_to_say():
    assert _f001(ON) == []
    assert _f001(ON.replace("--xla_enable_async_all_gather=true", "--xla_enable_async_all_gather=auto")) == []
    assert _f001(None) == []  # nothing says how it was compiled
    assert _f001(ON.replace("=true", "=false"), chip=H100) == []  # not a TPU program


def test_f001_names_each_flag_that_is_off_or_not_on():
    (f,) = _f001(ON.replace("--xla_enable_async_all_gather=true", "--xla_enable_async_all_gather=false"))
    assert f.message.startswith("4 all-gather(s) run synchronously (112.0 MiB moved per device) and "
                                "xla_enable_async_all_gather is off (want auto or on): XLA was not asked")
    assert f.message.endswith("(flags from --flags)")
    assert f.cost == {"bytes_wasted": 112.0 * 2 ** 20} and len(f.evidence["exposed"]) == 4
    (g,) = _f001("--xla_tpu_enable_async_collective_fusion=true")  # the other two unset
    assert "xla_tpu_enable_async_collective_fusion_fuse_all_gather is unset (want on)" in g.message
    assert "xla_enable_async_all_gather" not in g.message  # unset is auto: fine


def test_f001_fuse_all_gather_without_async_collective_fusion_is_contradictory():
    found = _f001("--xla_tpu_enable_async_collective_fusion=false "
                  "--xla_tpu_enable_async_collective_fusion_fuse_all_gather=true")
    assert [f.message.split(":")[0] for f in found] == ["contradictory flags", "4 all-gather(s) run synchronously (112.0 MiB moved per device) and xla_tpu_enable_async_collective_fusion is off (want on)"]
    assert found[0].evidence["flags"]["xla_tpu_enable_async_collective_fusion"] == "off"


def test_f001_names_the_flag_file_beside_the_module_and_the_first_exposed_gather(tmp_path):
    import shutil

    from hloscope.parser import load

    folder = tmp_path / "dump" / "run.1"  # (a path of several parts: only the file's name is said)
    folder.mkdir(parents=True)
    for f in GATHERS.parent.glob("exposed_gather_v5p.*"):
        shutil.copy(f, folder / f.name)
    (m,) = load(folder / GATHERS.name)
    off = "--xla_tpu_enable_async_collective_fusion=false"
    found = list(make_rule("F001").check_module(RuleContext(m, get_chip("v5p"), flags=off)))
    (f,) = [f for f in found if f.message.startswith("4 all-gather")]
    assert f.message.endswith("(flags from exposed_gather_v5p.tpu_comp_env.txt, --flags)")
    assert f.evidence["sources"] == [str(folder / "exposed_gather_v5p.tpu_comp_env.txt"), "--flags"]
    gathers = [i.name for c in m.computations for i in c.instructions if i.opcode == "all-gather"]
    assert f.instruction == f.evidence["exposed"][0] == gathers[0]
    (c,) = [g for g in found if g.message.startswith("contradictory")] or [None]
    assert c is None  # (fuse_all_gather is not on in that file)


def test_f001_counts_only_the_synchronous_gathers():
    # the overlapped twin: XLA made 3 of its 4 all-gathers async collective fusions; one is left
    (m,) = parse((GATHERS.parent / "overlapped_gather_v5p.hlo.txt").read_text())
    gathers = [c for c in RuleContext(m, get_chip("v5p")).collectives if c.opcode == "all-gather"]
    assert (len(gathers), sum(not c.is_async for c in gathers)) == (4, 1)
    off = ON.replace("=true", "=false")
    (f,) = make_rule("F001").check_module(RuleContext(m, get_chip("v5p"), flags=off))
    assert f.message.startswith("1 all-gather(s) run synchronously")


# ----------------------------------------------------------------- H001: copies in loops

# HAND-WRITTEN: a copy of the loop state in a body of 10 trips (i < 10), one in a body whose
# trip count the condition does not state, and a 1 KiB copy in the entry
LOOPS = """HloModule m, is_scheduled=true

cond {
  s = (s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[256,256] get-tuple-element(s), index=1
  c = f32[256,256] copy(x)
  ROOT t = (s32[], f32[256,256]) tuple(j, c)
}

cond2 {
  s = (s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  p = s32[] parameter(1)
  ROOT lt = pred[] compare(i, i), direction=LT
}

body2 {
  s = (s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[256,256] get-tuple-element(s), index=1
  c2 = f32[256,256] copy(x)
  ROOT t = (s32[], f32[256,256]) tuple(i, c2)
}

ENTRY e {
  p = f32[256,256] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[256,256]) tuple(z, p)
  w = (s32[], f32[256,256]) while(t), condition=cond, body=body
  w2 = (s32[], f32[256,256]) while(t), condition=cond2, body=body2
  q = f32[16,16] parameter(1)
  small = f32[16,16] copy(q)
  ROOT r = ((s32[], f32[256,256]), (s32[], f32[256,256]), f32[16,16]) tuple(w, w2, small)
}
"""


def _h001(chip, **options):
    (m,) = parse(LOOPS)
    rule = make_rule("H001", **options)
    ctx = RuleContext(m, chip)
    return {f.instruction: f for c in m.computations for i in c.instructions if i.opcode == "copy"
            for f in rule.check(i, ctx)}


def test_h001_a_copy_in_a_loop_costs_once_per_trip():
    v5e = get_chip("v5e")
    found = _h001(v5e)
    nbytes = 256 * 256 * 4
    assert found["c"].message.endswith(f"in a loop body (10 trips), ~{2 * nbytes * 10 / 819e9 * 1e6:.2f} us")
    assert found["c"].cost == {"bytes_wasted": 2.0 * nbytes * 10, "est_seconds": pytest.approx(2 * nbytes * 10 / 819e9)}
    assert found["c"].evidence["trips"] == 10
    assert "in a loop body," in found["c2"].message and found["c2"].evidence["trips"] == 0
    assert found["c2"].cost["bytes_wasted"] == 2.0 * nbytes  # an unknown count: once
    assert found["small"].message.endswith("memory space, ~" + found["small"].message.rsplit("~", 1)[1])
    assert found["small"].evidence["trips"] is None and "loop" not in found["small"].message


def test_h001_size_limit_at_equality_and_no_time_without_a_chip():
    found = _h001(None, min_bytes=16 * 16 * 4)
    assert "small" in found and found["small"].cost == {"bytes_wasted": 2.0 * 16 * 16 * 4}
    assert found["small"].message.endswith("with an unchanged layout and memory space")
    assert "small" not in _h001(None, min_bytes=16 * 16 * 4 + 1)


# ----------------------------------------------------------------- H010 on TPUs: algorithms



@pytest.mark.parametrize("algorithm, passes", [("dot_bf16_bf16_f32_x3", 3), ("dot_bf16_bf16_f32_x6", 6),
                                               ("dot_f32_f32_f32", 6), ("dot_tf32_tf32_f32", 3)])
def test_h010_tpu_an_algorithm_sets_the_bf16_passes(algorithm, passes):
    from hloscope.cost.precision import peak_for

    # the same real module with the dot's precision given as an algorithm instead
    (m,) = parse(F32_V5E.read_text().replace("operand_precision={highest,highest}", f"algorithm={algorithm}"))
    v5e = get_chip("v5e")
    (f,) = _h010(m, v5e)
    flops = 2 * 1024 ** 3
    assert f.evidence["passes"] == passes and f.evidence["algorithm"] == algorithm
    assert f"at algorithm={algorithm}: {passes} bf16 MXU passes where DEFAULT precision takes one" in f.message
    assert f.cost["est_seconds"] == pytest.approx(flops / peak_for(v5e, "bf16", passes) - flops / v5e.peak_bf16_flops)
    assert f.cost["est_seconds"] == pytest.approx(flops * (passes - 1) / v5e.peak_bf16_flops)


def test_h010_tpu_one_pass_algorithms_are_silent():
    for algorithm in ("dot_bf16_bf16_f32", "dot_f16_f16_f32"):
        (m,) = parse(F32_V5E.read_text().replace("operand_precision={highest,highest}", f"algorithm={algorithm}"))
        assert _h010(m, get_chip("v5e")) == [], algorithm


# ----------------------------------------------------------------- limits exactly at their value
# (each rule's doc says "or more" / "at least" of its limit: the value itself is flagged)

def test_h003_ratio_and_waste_at_exactly_their_limits():
    (m,) = parse(NARROW)
    f = next(f for f in make_rule("H003").check_module(RuleContext(m, get_chip("v5e"))) if f.instruction == "p")
    ratio, waste = f.evidence["ratio"], f.cost["bytes_wasted"]
    at = lambda **o: [g for g in make_rule("H003", **o).check_module(RuleContext(m, get_chip("v5e")))  # noqa: E731
                      if g.instruction == "p"]
    assert len(at(ratio=ratio)) == 1 and at(ratio=ratio + 0.01) == []
    assert len(at(min_bytes=int(waste))) == 1 and at(min_bytes=int(waste) + 1) == []


def test_h013_overhead_and_share_at_exactly_their_limits():
    (m,) = load(TINY_LOOP)
    v5e = get_chip("v5e")
    (f,) = _h013(m, v5e)
    spent, work = f.evidence["seconds_per_trip"], f.evidence["roofline_seconds_per_trip"]
    assert len(_h013(m, v5e, min_seconds=f.cost["est_seconds"])) == 1
    assert len(_h013(m, v5e, min_share=(spent - work) / spent)) == 1


def test_h012_warns_at_exactly_the_margin():
    (m,) = load(NEAR_FULL)
    v5e = get_chip("v5e")
    # capacity 2 x the peak: exactly half full, with a margin of 0.5 -> at the margin: a warning
    (f,) = _h012(m, replace(v5e, hbm_bytes=PEAK * 2), margin=0.5)
    assert f.message.endswith("; under 50% headroom")
    assert _h012(m, replace(v5e, hbm_bytes=PEAK * 2 + 2), margin=0.5) == []


def test_g001_waste_at_exactly_its_limit():
    text = _g001_module(GEMM % '"block_m":"64","block_n":"64","block_k":"32","split_k":"1","num_warps":"4"')
    waste = 1 - (32 * 57) / (64 * 64)  # one 64x64 tile over a 32x57 output
    (f,) = _g001(text, max_waste=waste)
    assert f.evidence["waste"] == round(waste, 4)
    assert _g001(text, max_waste=waste + 1e-9) == []


def test_h007_per_layer_from_exactly_that_many_same_shaped_gathers():
    (m,) = load(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt")
    found = _h007(m, max_bytes=1)
    top = max(f.evidence["per_layer"] for f in found if "per_layer" in f.evidence)
    assert any("per_layer" in f.evidence for f in _h007(m, max_bytes=1, per_layer=top))


def test_h007_whole_weight_names_its_parameter_and_time_per_layer_wastes_nothing():
    (m,) = load(WHOLE)
    (f,) = _h007(m)
    assert "gathers 64.0 MiB (the whole of %param.1 bf16[8192,4096]) onto every one of 8 devices" in f.message
    assert f.cost["est_seconds"] > 0 and f.message.endswith(f", ~{f.cost['est_seconds'] * 1e6:.2f} us on ICI")
    (m,) = load(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt")
    layers = [g for g in _h007(m, max_bytes=1) if "per_layer" in g.evidence]
    assert layers and all(g.cost == {"bytes_wasted": 0.0} for g in layers)  # (the pattern advised: no waste)
    assert all(g.message.endswith(" us on ICI") for g in layers if g.evidence["async"])


def _h011_text(entry_params: str, lines: str, root_shape: str) -> str:
    """HAND-WRITTEN minimal module for H011's corners (v5e's 16 GiB: 1% is 164 MiB)."""
    return f"HloModule m, is_scheduled=true\n\nENTRY %e ({entry_params}) -> {root_shape} {{\n{lines}\n}}\n"


def test_h011_a_computation_without_parameters_and_a_parameter_never_flagged():
    v5e = get_chip("v5e")
    # logits made from nothing (an iota): no input to compare with, the size alone decides
    (m,) = parse(_h011_text("", "  ROOT %l = f32[1024,65536]{1,0} iota(), iota_dimension=1", "f32[1024,65536]"))
    (f,) = make_rule("H011").check_module(RuleContext(m, v5e))
    assert f.evidence["largest_parameter_bytes"] == 0 and f.evidence["bytes"] == 1024 * 65536 * 4
    # a parameter of that shape is an input, not an intermediate, even with no ratio asked for
    (m,) = parse(_h011_text("p: f32[1024,65536]", "  ROOT %p = f32[1024,65536]{1,0} parameter(0)",
                            "f32[1024,65536]"))
    assert list(make_rule("H011", min_ratio=0.0).check_module(RuleContext(m, v5e))) == []


def test_h011_two_equal_outputs_report_the_first_and_name_the_other():
    v5e = get_chip("v5e")
    lines = ("  %a = f32[1024,65536]{1,0} iota(), iota_dimension=1\n"
             "  %b = f32[1024,65536]{1,0} iota(), iota_dimension=0\n"
             "  ROOT %t = (f32[1024,65536]{1,0}, f32[1024,65536]{1,0}) custom-call(%a, %b), "
             'custom_call_target="my_kernel"')
    (m,) = parse(_h011_text("", lines, "(f32[1024,65536], f32[1024,65536])"))
    found = [f for f in make_rule("H011").check_module(RuleContext(m, v5e)) if f.instruction == "t"]
    (f,) = found
    assert f.evidence["output_index"] == 0 and "(output 0 of its 2; output 1 too)" in f.message
