"""The roofline report part by part (cost/roofline.py): rows of a loop's ops counted once per
trip, the totals against the cost model's own module total (it walks the program its own
way), the TPU compiler's estimate read within its range, where a custom call's cost came
from, and the rate of an op with no matmul. The module is HAND-WRITTEN (labelled as such):
an elementwise op in the entry and one in a 5-trip loop, on v5e's table (197 TFLOP/s bf16,
32.8 f32, 819 GB/s HBM, a 1.2 us per-op floor)."""

from __future__ import annotations

import pytest
from conftest import counted_loop, entry_module

from hloscope.cost.chips import get_chip
from hloscope.cost.ops import Cost, CostModel
from hloscope.cost.roofline import (
    _cost_source,
    compute_peak,
    estimated_cycles,
    has_row,
    op_times,
    roofline,
)
from hloscope.parser import parse

V5E = get_chip("v5e")

_LOOP = ("HloModule m, is_scheduled=true\n\n"
         + counted_loop("f32[1024]{0}", "%y = f32[1024]{0} multiply(%x, %x)", 5) + """
ENTRY %e (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %a = f32[1024]{0} add(%p, %p)
  %z = s32[] constant(0)
  %t = (s32[], f32[1024]{0}) tuple(%z, %a)
  %w = (s32[], f32[1024]{0}) while(%t), condition=%cond, body=%body
  ROOT %r = f32[1024]{0} get-tuple-element(%w), index=1
}
""")


@pytest.fixture(scope="module")
def loop():
    (m,) = parse(_LOOP)
    return m


def test_a_loops_rows_run_once_per_trip(loop):
    report = roofline(loop, V5E)
    times = {r.instruction: r.times for r in report.rows}
    assert times == {"a": 1, "j": 5, "y": 5, "lt": 5}  # (no row for the loop, constants, tuples)
    y = next(r for r in report.rows if r.instruction == "y")
    assert (y.flops, y.hbm_bytes) == (1024, 3 * 4096)  # one multiply per element; 2 reads, 1 write
    assert y.t_compute == pytest.approx(1024 / 32.8e12) and y.t_memory == pytest.approx(3 * 4096 / 819e9)
    assert y.bound == "memory" and y.t_floor == 1.2e-6
    assert y.to_dict()["t_estimate"] == y.t_estimate == 1.2e-6  # (the floor: more than its bound)


def test_the_totals_are_the_cost_models_over_the_rows_times(loop):
    report = roofline(loop, V5E)
    totals = report.totals_json()
    model = CostModel(loop).module_cost()  # (the model's own walk of the program)
    assert totals["flops"] == model.flops == 1024 + 5 * (1024 + 1 + 1)
    # bytes by hand: a reads 2 x 4 KiB and writes 4 KiB; each trip the counter's add reads 8 B
    # and writes 4, y reads 8 KiB and writes 4 KiB, the compare reads 8 B and writes 1
    assert (model.bytes_read, model.bytes_written) == (8192 + 5 * (8 + 8192 + 8), 4096 + 5 * (4 + 4096 + 1))
    assert model.hbm_bytes == model.bytes_read + model.bytes_written  # (untiled, all in HBM)
    assert totals["hbm_bytes"] == model.hbm_bytes
    assert totals["logical_bytes"] == model.bytes and totals["bytes"] == model.padded_bytes
    assert totals["t_memory"] == pytest.approx(model.hbm_bytes / 819e9)
    # a's and y's FLOPs at f32's rate; the counter's add and the compare, one FLOP each per
    # trip, at the rates of their own result types (s32, pred)
    assert totals["t_compute"] == pytest.approx(
        6 * 1024 / 32.8e12 + 5 / V5E.peak_flops("s32") + 5 / V5E.peak_flops("pred"))
    assert totals["t_roofline"] == pytest.approx(totals["t_memory"])  # every op memory-bound
    assert totals["t_estimate"] == pytest.approx(1.2e-6 * (1 + 5 + 5 + 5))  # each run at the floor


@pytest.mark.parametrize(("opcode", "row"), [
    ("add", True), ("fusion", True), ("custom-call", True), ("all-gather-start", True),
    ("while", False), ("call", False), ("conditional", False),  # their callees' ops are the rows
    ("parameter", False), ("tuple", False), ("get-tuple-element", False), ("bitcast", False),
])
def test_which_ops_are_rows(opcode, row):
    assert has_row(opcode) is row


def _one(line: str):
    m = entry_module(f"  %p = f32[8,128]{{1,0}} parameter(0)\n{line}", "p: f32[8,128]")
    return m, m.entry.root


@pytest.mark.parametrize(("config", "cycles"), [
    ('{"estimated_cycles":"1234"}', 1234),
    ('{"window_config":{"estimated_cycles":"77"}}', 77),  # (a convolution's, one level down)
    ('{"estimated_cycles":"0"}', 0),
    ('{"estimated_cycles":"4611686018427387903"}', (1 << 62) - 1),
    ('{"estimated_cycles":"4611686018427387904"}', None),  # the compiler's "no estimate" range
    ('{"estimated_cycles":"-1"}', None),
    ('{"estimated_cycles":"many"}', None),
    ('{"other":"1"}', None),
])
def test_estimated_cycles_within_its_range(config, cycles):
    _, instr = _one(f"  ROOT %n = f32[8,128]{{1,0}} negate(%p), backend_config={config}")
    assert estimated_cycles(instr) == cycles


def test_an_op_without_a_matmul_runs_at_its_own_types_rate_a_tuple_at_bf16s():
    m, neg = _one("  ROOT %n = f32[8,128]{1,0} negate(%p)")
    model = CostModel(m)
    assert compute_peak(model, V5E, neg) == V5E.peak_flops("f32") == 32.8e12
    (m2,) = parse("HloModule m\n\n%lt (a: f32[], b: f32[], c: f32[], d: f32[]) -> pred[] {\n"
                  "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  %c = f32[] parameter(2)\n"
                  "  %d = f32[] parameter(3)\n  ROOT %r = pred[] compare(%a, %b), direction=LT\n}\n\n"
                  "ENTRY %e (p: f32[8,128]) -> (f32[8,128], f32[8,128]) {\n"
                  "  %p = f32[8,128]{1,0} parameter(0)\n  %n = f32[8,128]{1,0} negate(%p)\n"
                  "  ROOT %t = (f32[8,128]{1,0}, f32[8,128]{1,0}) sort(%n, %p), dimensions={1}, "
                  "to_apply=%lt\n}\n")
    assert compute_peak(CostModel(m2), V5E, m2.entry.root) == V5E.peak_flops("bf16") == 197e12


def test_op_times_of_a_given_cost():
    m, neg = _one("  ROOT %n = f32[8,128]{1,0} negate(%p)")
    given = Cost(flops=32.8e6, hbm_bytes=819_000)
    assert op_times(CostModel(m), V5E, neg, given) == (pytest.approx(1e-6), pytest.approx(1e-6))
    own = CostModel(m).cost(neg)
    assert op_times(CostModel(m), V5E, neg) == (pytest.approx(own.flops / 32.8e12),
                                               pytest.approx(own.hbm_bytes / 819e9))


def test_where_a_custom_calls_cost_came_from():
    estimate = ('{"custom_call_config":{"cost_estimate":{"flops":"10","bytes_accessed":"20",'
                '"transcendentals":"0"}}}')
    m, kernel = _one(f'  ROOT %k = f32[8,128]{{1,0}} custom-call(%p), custom_call_target="tpu_custom_call", '
                     f"backend_config={estimate}")
    assert _cost_source(CostModel(m), kernel) == "cost_estimate"
    m, gemm = _one('  ROOT %g = f32[8,128]{1,0} custom-call(%p), custom_call_target="__cublas$gemm"')
    assert _cost_source(CostModel(m), gemm) == "library call"
    m, body = _one('  ROOT %k = f32[8,128]{1,0} custom-call(%p), custom_call_target="tpu_custom_call"')
    assert _cost_source(CostModel(m), body) == ""
    assert _cost_source(CostModel(m, kernel_costs={"k": object()}), body) == "kernel body"
    m, neg = _one("  ROOT %n = f32[8,128]{1,0} negate(%p)")
    assert _cost_source(CostModel(m, kernel_costs={"n": object()}), neg) == ""  # not a custom call


# HAND-WRITTEN: an f32 [128,256] x [256,128] dot; SUFFIX: attributes to add to it
_DOT = """HloModule d

ENTRY %e (a: f32[128,256], b: f32[256,128]) -> f32[128,128] {
  %a = f32[128,256]{1,0} parameter(0)
  %b = f32[256,128]{1,0} parameter(1)
  ROOT %c = f32[128,128]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}SUFFIX
}
"""


def test_a_rows_fields_are_its_costs_and_where_it_came_from():
    """HAND-WRITTEN: an exponential of a tiled [3,100] f32 (each 8x128 tile pads it to 8
    rows of 128: 4 KiB, not 1,200 B) with its source line, in a 5-trip loop."""
    text = ("HloModule m, is_scheduled=true\n\n"
            + counted_loop("f32[3,100]{1,0:T(8,128)}",
                           '%y = f32[3,100]{1,0:T(8,128)} exponential(%x), '
                           'metadata={op_name="jit(f)/exp" source_file="m.py" source_line=7}', 5) + """
ENTRY %e (p: f32[3,100]) -> f32[3,100] {
  %p = f32[3,100]{1,0:T(8,128)} parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[3,100]{1,0:T(8,128)}) tuple(%z, %p)
  %w = (s32[], f32[3,100]{1,0:T(8,128)}) while(%t), condition=%cond, body=%body
  ROOT %r = f32[3,100]{1,0:T(8,128)} get-tuple-element(%w), index=1
}
""")
    (m,) = parse(text)
    y = next(r for r in roofline(m, V5E).rows if r.instruction == "y")
    assert (y.flops, y.transcendentals, y.times) == (0.0, 300.0, 5)
    assert (y.logical_bytes, y.bytes) == (2 * 1200, 2 * 8 * 128 * 4)  # read once, written once
    assert y.intensity == 0.0 and (y.op_name, y.source) == ("jit(f)/exp", "m.py:7")
    once = roofline(m, V5E, trip_counts=False)
    assert {r.times for r in once.rows} == {1} and once.totals.transcendentals == 300.0
    assert roofline(m, V5E).totals.transcendentals == 5 * 300.0
    # a dot's intensity: its FLOPs over its padded bytes
    (d,) = parse(_DOT.replace("SUFFIX", ""))
    (row,) = roofline(d, V5E).rows
    assert row.flops == 2 * 128 * 256 * 128 and row.bytes == 4 * (2 * 128 * 256 + 128 * 128)
    assert row.intensity == row.flops / row.bytes
    assert row.bound == ("compute" if row.t_compute >= row.t_memory else "memory")


def test_a_dots_algorithm_sets_its_rate():
    """HAND-WRITTEN: the same f32 dot with XLA's BF16_BF16_F32_X3 algorithm (three bf16 MXU
    passes, v5e's 197 TFLOP/s over 3) and without (DEFAULT: one pass); XLA's parser takes both."""
    from oracle import xla_cost_analysis

    for suffix, peak in ((", algorithm=dot_bf16_bf16_f32_x3", V5E.peak_bf16_flops / 3), ("", V5E.peak_bf16_flops)):
        text = _DOT.replace("SUFFIX", suffix)
        xla_cost_analysis(text)  # (parses)
        (m,) = parse(text)
        assert compute_peak(CostModel(m), V5E, m.entry.root) == peak


def test_rows_are_built_in_the_order_of_their_fields():
    """roofline() gives each Row its values by position (28,000 rows by keyword cost 3x as
    much): the order it writes them in is the dataclass's own, and a row's values land in
    their fields on a real module (hand-checked quantities of one op)."""
    from conftest import FIXTURES

    from hloscope.cost.roofline import _ROW_FIELDS, _ROW_ORDER, Row, roofline
    from hloscope.parser import load

    assert _ROW_FIELDS == _ROW_ORDER
    (m,) = load(FIXTURES / "tpu" / "llm_v5p_big.hlo.txt")
    report = roofline(m, get_chip("v5p"))
    for row in report.rows[:200]:
        assert isinstance(row, Row) and row.bound in ("compute", "memory")
        assert row.computation in m.by_name and row.instruction in m[row.computation]
        assert row.opcode == m[row.computation][row.instruction].opcode
        assert row.intensity == (row.flops / row.bytes if row.bytes else 0.0)
        assert row.bytes >= row.hbm_bytes >= 0 and row.times >= 1
