"""Small parts of hloscope.cost the first cost_model mutation run found untested: which
opcodes have a FLOP model, the category of each kind of op (on hand-written minimal modules,
labelled as such), and a shape's facts. Each expectation is worked out by hand from the rule
the function states."""

from __future__ import annotations

import pytest

from conftest import counted_loop, entry_module

from hloscope.cost.category import category
from hloscope.cost.flops import has_flop_model
from hloscope.cost.layout import shape_facts
from hloscope.parser import parse, parse_shape


@pytest.mark.parametrize(("opcode", "known"), [
    ("add", True),                # elementwise
    ("exponential", True),        # transcendental
    ("copy", True),               # no FLOPs, known
    ("while", True),              # control flow
    ("dot", True),                # a formula
    ("custom-call", True),        # a formula (its estimate, or a library call's config)
    ("bitcast-convert", True),    # one per element, as XLA counts it
    ("all-gather-start", True),   # the start of an op with no FLOPs
    ("all-reduce-done", True),    # a done: nothing of its own
    ("all-reduce-update", True),
    ("fusion-start", True),       # the start of an op that calls a computation
    ("call-start", True),
    ("reduce-start", False),      # the start of an op with a formula but no caller of its own
    ("dot-start", False),
    ("frobnicate", False),        # no such opcode
])
def test_has_flop_model(opcode, known):
    assert has_flop_model(opcode) is known


# HAND-WRITTEN minimal module: one of each kind of op the categories tell apart.
_MODULE = """HloModule m, is_scheduled=true

%dotf (a: f32[4,4], b: f32[4,4]) -> f32[4,4] {
  %a = f32[4,4]{1,0} parameter(0)
  %b = f32[4,4]{1,0} parameter(1)
  ROOT %d = f32[4,4]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%moves (p: f32[4,4]) -> (f32[4,4], f32[16]) {
  %p = f32[4,4]{1,0} parameter(0)
  %t = f32[4,4]{0,1} transpose(%p), dimensions={1,0}
  %c = f32[] constant(0)
  %r = f32[16]{0} reshape(%t)
  ROOT %tu = (f32[4,4]{0,1}, f32[16]{0}) tuple(%t, %r)
}

%adds (p: f32[4,4]) -> f32[4,4] {
  %p = f32[4,4]{1,0} parameter(0)
  ROOT %n = f32[4,4]{1,0} negate(%p)
}

%adds2 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%only (p: f32[4,4]) -> f32[4,4] {
  ROOT %p = f32[4,4]{1,0} parameter(0)
}

ENTRY %main (x: f32[4,4]) -> f32[4,4] {
  %x = f32[4,4]{1,0} parameter(0)
  %k = f32[] constant(1)
  %f1 = f32[4,4]{1,0} fusion(%x, %x), kind=kOutput, calls=%dotf
  %f2 = (f32[4,4]{0,1}, f32[16]{0}) fusion(%x), kind=kLoop, calls=%moves
  %f3 = f32[4,4]{1,0} fusion(%x), kind=kLoop, calls=%adds
  %f4 = f32[4,4]{1,0} fusion(%x), kind=kLoop, calls=%only
  %tr = f32[4,4]{0,1} transpose(%x), dimensions={1,0}
  %ab = f32[4,4]{1,0} abs(%x)
  %cc = f32[4,4]{1,0} custom-call(%x), custom_call_target="foo"
  %ar = f32[4,4]{1,0} all-reduce(%x), replica_groups={}, to_apply=%adds2
  %cv = f32[4,4]{1,0} convolution(%x, %x), window={size=1x1}, dim_labels=bf_io->bf
  ROOT %dd = f32[4,4]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_categories():
    (m,) = parse(_MODULE)
    got = {i.name: category(i, m) for i in m.entry.instructions}
    assert got == {
        "x": "other", "k": "other", "f1": "matmul fusion",
        "f2": "data formatting",        # transpose, reshape, a constant, a tuple: data moves only
        "f3": "elementwise fusion", "f4": "data formatting",  # (nothing but its parameter)
        "tr": "data formatting", "ab": "elementwise", "cc": "custom kernel",
        "ar": "collective", "cv": "convolution", "dd": "matmul"}


# HAND-WRITTEN minimal module: the categories of async calls, a conditional, and a fusion that
# only takes a tuple apart and moves data
_MORE = """HloModule m, is_scheduled=true

%mm (a: f32[4,4]) -> f32[4,4] {
  %a = f32[4,4]{1,0} parameter(0)
  ROOT %d = f32[4,4]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%split (t: (f32[4,4], f32[4,4])) -> f32[4,4] {
  %t = (f32[4,4]{1,0}, f32[4,4]{1,0}) parameter(0)
  %g = f32[4,4]{1,0} get-tuple-element(%t), index=0
  ROOT %tr = f32[4,4]{0,1} transpose(%g), dimensions={1,0}
}

%b0 (a: f32[4,4]) -> f32[4,4] {
  ROOT %a = f32[4,4]{1,0} parameter(0)
}

ENTRY %main (x: f32[4,4], p: s32[]) -> f32[4,4] {
  %x = f32[4,4]{1,0} parameter(0)
  %p = s32[] parameter(1)
  %t = (f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(%x, %x)
  %sp = f32[4,4]{0,1} fusion(%t), kind=kLoop, calls=%split
  %c = f32[4,4]{1,0} conditional(%p, %x), branch_computations={%b0}
  %s = ((f32[4,4]{1,0}), f32[4,4]{1,0}, s32[]) async-start(%c), calls=%mm
  ROOT %d = f32[4,4]{1,0} async-done(%s), calls=%mm
}
"""


def test_categories_of_async_calls_a_conditional_and_a_tuple_taking_fusion():
    (m,) = parse(_MORE)
    got = {i.name: category(i, m) for i in m.entry.instructions}
    assert got["s"] == got["d"] == "matmul fusion"  # (an async call is its computation's kind)
    assert got["c"] == "control flow"
    assert got["sp"] == "data formatting"  # a get-tuple-element and a transpose: data moves only


def test_shape_facts_of_an_array_and_a_tuple():
    """f32[3,200] under T(8,128): the last two dims pad to [8,256]: 2,048 of 600 elements."""
    facts = shape_facts(parse_shape("f32[3,200]{1,0:T(8,128)}"))
    assert facts["shape"] == "f32[3,200]{1,0:T(8,128)}"
    assert facts["logical_dims"] == [3, 200] and facts["padded_dims"] == [8, 256]
    assert facts["ratio"] == pytest.approx(2048 / 600)
    assert facts["tile_levels"] == [[8, 128]]
    assert facts["memory_space_name"] == "device (HBM)"
    pair = shape_facts(parse_shape("(f32[3,200]{1,0:T(8,128)}, bf16[5]{0:T(128)(2,1)S(1)})"))
    assert pair["logical_dims"] == [[3, 200], [5]]
    assert pair["padded_dims"] == [[8, 256], [128]]
    empty = shape_facts(parse_shape("f32[0]{0}"))
    assert empty["ratio"] == 1.0


# HAND-WRITTEN minimal module: a fusion, an async all-gather whose start carries its operand
# back, and a slice; stack frames name the gather's source line.
_BUFFERS = """HloModule m, is_scheduled=true

FileNames
1 "model.py"

FunctionNames
1 "step"

FileLocations
1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

%fused (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  ROOT %n = f32[1024]{0} negate(%p)
}

ENTRY %main (x: f32[1024]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  %f = f32[1024]{0} fusion(%x), kind=kLoop, calls=%fused
  %s = (f32[1024]{0}, f32[2048]{0}) all-gather-start(%f), dimensions={0}, replica_groups={{0,1}}, metadata={op_name="ag" stack_frame_id=1}
  %d = f32[2048]{0} all-gather-done(%s)
  ROOT %c = f32[1024]{0} slice(%d), slice={[0:1024]}
}
"""


def test_memory_facts_add_up_each_allocated_buffer():
    """f 4 KiB, the start's new buffer 8 KiB (its first element is f, carried back), c 4 KiB;
    not x (a parameter), d (the start's buffer) nor the fused computation's values: 16 KiB."""
    from hloscope.cost.memory import memory_facts, memory_part, memory_total

    (m,) = parse(_BUFFERS)
    facts = memory_facts(m, top=2)
    assert facts["bytes_per_memory_space"] == {"device (HBM)": 16384}
    assert facts["logical_bytes"] == 16384 and facts["padding_waste_bytes"] == 0
    (first, second) = facts["largest_buffers"]
    assert (first["computation"], first["instruction"], first["shape"], first["padded_bytes"]) == (
        "main", "s", "f32[2048]{0}", 8192)
    assert first["source"] == "model.py:7 (step)" and first["op_name"] == "ag"
    assert second["instruction"] in ("c", "f") and second["padded_bytes"] == 4096
    # two parts of one module: each space's bytes added, the tables taken from the part with them
    comps = [c for c in m.computations if c.name == "main"]
    part = memory_part(comps, m.fusion_computations(), 2)
    assert part["tables"] is None
    twice = memory_total([part, part], 1)
    assert twice["bytes_per_memory_space"] == {"device (HBM)": 32768}
    assert twice["largest_buffers"][0]["source"] == ""  # (no stack-frame tables in either part)


def test_a_multi_output_fusion_allocates_every_output_and_empty_tables_are_none():
    """Only an async start's result carries its operands back: a fusion whose two outputs have
    its operand's shape allocates both (HAND-WRITTEN minimal module)."""
    from hloscope.cost.memory import memory_facts, memory_part

    (m,) = parse("HloModule m, is_scheduled=true\n\n%two (p: f32[8]) -> (f32[8], f32[8]) {\n"
                 "  %p = f32[8]{0} parameter(0)\n  %n = f32[8]{0} negate(%p)\n"
                 "  ROOT %t = (f32[8]{0}, f32[8]{0}) tuple(%n, %p)\n}\n\n"
                 "ENTRY %e (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
                 "  %f = (f32[8]{0}, f32[8]{0}) fusion(%x), kind=kLoop, calls=%two\n"
                 "  ROOT %g = f32[8]{0} get-tuple-element(%f), index=0\n}\n")
    assert memory_facts(m)["bytes_per_memory_space"] == {"device (HBM)": 2 * 32}
    assert memory_part([m.entry], m.fusion_computations(), 2, tables=((), ()))["tables"] is None


# --------------------------------------------------------------- a vreg tile's rows, by type

@pytest.mark.parametrize(("dtype", "rows"), [
    ("f32", 8), ("s32", 8), ("u32", 8),   # 32-bit: a (8, 128) tile is 4 KiB
    ("f64", 8), ("s64", 8),                # wider than 32 bits: still 8 rows (min(bits, 32))
    ("bf16", 16), ("f16", 16), ("s16", 16),
    ("s8", 32), ("f8e4m3fn", 32), ("pred", 32),
    ("s4", 32), ("u4", 32),                # narrower than 8 bits: 32 rows (max(bits, 8))
    ("i32", 8), ("i16", 16), ("i8", 32), ("i4", 32), ("i1", 32),  # MLIR's names (Pallas)
    ("index", 8), ("not-a-type", 8),       # unknown: taken as 32-bit
])
def test_sublanes_of_each_element_type(dtype, rows):
    from hloscope.cost.layout import sublanes

    assert sublanes(dtype) == rows


# HAND-WRITTEN minimal module: the byte rules of CostModel.memory, op by op.
_TRAFFIC = """HloModule m, is_scheduled=true

ENTRY %e (p: f32[64,128], u: f32[2,128], i: s32[]) -> (f32[64,128], f32[4,128], f32[64,128]) {
  %p = f32[64,128]{1,0} parameter(0)
  %u = f32[2,128]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  %a = f32[64,128]{1,0} add(%p, %p)
  %s = f32[4,128]{1,0} slice(%a), slice={[0:4], [0:128]}
  %d = f32[64,128]{1,0} dynamic-update-slice(%a, %u, %i, %z)
  ROOT %t = (f32[64,128]{1,0}, f32[4,128]{1,0}, f32[64,128]{1,0}) tuple(%a, %s, %d)
}
"""


@pytest.mark.parametrize(("name", "read", "written"), [
    ("a", 2 * 64 * 128 * 4, 64 * 128 * 4),  # both operands read, the result written
    ("s", 4 * 128 * 4, 4 * 128 * 4),        # a slice reads only what it produces
    ("d", 2 * 128 * 4 + 4 + 4, 2 * 128 * 4),  # in place: the update and the indices read, the update written
    ("t", 0, 0),                             # a tuple moves nothing
    ("p", 0, 0),
])
def test_cost_model_memory_of_one_instruction(name, read, written):
    from hloscope.cost.ops import CostModel

    (m,) = parse(_TRAFFIC)
    c = CostModel(m).memory(m.entry.by_name[name])
    assert (c.bytes_read, c.bytes_written) == (read, written)
    assert c.flops == 0  # bytes only


# HAND-WRITTEN minimal module: every way a computation runs, for roofline._executed. The entry
# runs a conditional first, then calls %f twice (a computation reached twice is listed once),
# then a 5-trip loop whose body calls %g, and an async call of %h; %fused is a fusion's.
def _unary(name: str, op: str) -> str:
    return f"%{name} (a: f32[8]) -> f32[8] {{\n  %a = f32[8]{{0}} parameter(0)\n  ROOT %n = f32[8]{{0}} {op}\n}}\n"


_RUNS = ("HloModule m, is_scheduled=true\n\n"
         + "\n".join(_unary(n, op) for n, op in (
             ("fused", "negate(%a)"), ("f", "fusion(%a), kind=kLoop, calls=%fused"), ("g", "negate(%a)"),
             ("h", "negate(%a)"), ("b0", "negate(%a)"), ("b1", "abs(%a)")))
         + "\n" + counted_loop("f32[8]{0}", "%y = f32[8]{0} call(%x), to_apply=%g", 5) + """
ENTRY %e (p: f32[8], k: s32[]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %k = s32[] parameter(1)
  %c = f32[8]{0} conditional(%k, %p, %p), branch_computations={%b0, %b1}
  %f1 = f32[8]{0} call(%c), to_apply=%f
  %f2 = f32[8]{0} call(%f1), to_apply=%f
  %z = s32[] constant(0)
  %t = (s32[], f32[8]{0}) tuple(%z, %f2)
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body
  %x = f32[8]{0} get-tuple-element(%w), index=1
  %hs = ((f32[8]{0}), f32[8]{0}, s32[]) async-start(%x), calls=%h
  ROOT %hd = f32[8]{0} async-done(%hs)
}
""")


def test_the_computations_that_run_and_how_often():
    from hloscope.cost.ops import CostModel
    from hloscope.cost.roofline import _executed

    (m,) = parse(_RUNS)
    runs = dict(_executed(CostModel(m), m))
    assert runs == {"e": 1, "b0": 1, "b1": 1, "f": 1, "cond": 5, "body": 5, "g": 5, "h": 1}
    assert "fused" not in runs  # (a fusion's computation is its kernel, not kernels of its own)
    assert len(runs) == len(_executed(CostModel(m), m))  # each once
    # without trip counts, a loop's computations run once
    assert dict(_executed(CostModel(m, trip_counts=False), m))["body"] == 1


# ------------------------------------------- a split layout's first piece (`SC(d:k)`)

def test_split_share_is_the_first_pieces_share_of_the_split_dim():
    from hloscope.cost.layout import split_share

    # (the layout of fixtures/zoo/scan_weights_grad_v5p.hlo.txt's prefetched weight stack)
    assert split_share(parse_shape("f32[5,1024,1024]{2,1,0:T(8,128)S(1)SC(0:3)}")) == 3 / 5
    assert split_share(parse_shape("f32[5,1024,1024]{2,1,0:T(8,128)SC(1:256)}")) == 256 / 1024
    assert split_share(parse_shape("f32[5,1024,1024]{2,1,0:T(8,128)S(1)}")) == 1.0  # no split
    assert split_share(parse_shape("f32[5,1024]{1,0:T(8,128)SC(2:3)}")) == 1.0      # no such dim
    assert split_share(parse_shape("f32[0,1024]{1,0:T(8,128)SC(0:3)}")) == 1.0      # an empty dim
    assert split_share(parse_shape("(f32[5,8]{1,0:SC(0:3)}, s32[])")) == 1.0        # a tuple: no piece


def test_add_first_piece_adds_that_share_of_each_byte_count():
    from hloscope.cost.layout import add_first_piece
    from hloscope.cost.ops import Cost

    whole = 5 * 1024 * 1024 * 4
    piece = whole * 3 // 5
    hbm = parse_shape("f32[5,1024,1024]{2,1,0:T(8,128)SC(0:3)}")       # in HBM (space 0)
    vmem = parse_shape("f32[5,1024,1024]{2,1,0:T(8,128)S(1)SC(0:3)}")  # in space 1
    c = add_first_piece(Cost(bytes_read=7, bytes_written=11, padded_read=13, padded_written=17, hbm_bytes=19),
                        hbm, written=True)
    assert (c.bytes_read, c.bytes_written, c.padded_read, c.padded_written, c.hbm_bytes) == (
        7, 11 + piece, 13, 17 + piece, 19 + piece)
    c = add_first_piece(c, vmem, written=False)
    assert (c.bytes_read, c.bytes_written, c.padded_read, c.padded_written, c.hbm_bytes) == (
        7 + piece, 11 + piece, 13 + piece, 17 + piece, 19 + piece)  # (not HBM's bytes)


# ------------------------------------------------ FLOP formulas at their edges (hand-derived)

def test_dot_flops_contracting_dims_within_the_lhs():
    from hloscope.cost.flops import UnknownCost, dot_flops

    m = entry_module("  %a = f32[8,16]{1,0} parameter(0)\n  %b = f32[16,128]{1,0} parameter(1)\n"
               "  ROOT %d = f32[8,128]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
               "a: f32[8,16], b: f32[16,128]")
    d, lhs = m.entry.root, m.entry.by_name["a"].shape
    assert dot_flops(d, lhs) == 2.0 * 8 * 128 * 16
    assert dot_flops(d, parse_shape("f32[8,16,3]")) == 2.0 * 8 * 128 * 16  # (dim 1 of a rank-3 lhs)
    with pytest.raises(UnknownCost, match=r"lhs_contracting_dims \[1\] do not fit f32\[8\]"):
        dot_flops(d, parse_shape("f32[8]"))  # dim 1 of a rank-1 lhs: no such dim


def test_fft_flops_by_the_floor_of_log2_of_each_length():
    from hloscope.cost.flops import fft_flops

    def fft(lengths: str) -> float:
        m = entry_module(f"  %a = c64[4,8]{{1,0}} parameter(0)\n  ROOT %f = c64[4,8]{{1,0}} fft(%a), fft_type=FFT, "
                   f"fft_length={{{lengths}}}", "a: c64[4,8]", result="c64[4,8]")
        return fft_flops(m.entry.root, m.entry.by_name["a"].shape)

    assert fft("8") == 8.0 * 3 * 32
    assert fft("4,8") == 8.0 * (2 * 3) * 32
    assert fft("5") == 8.0 * 2 * 32  # floor(log2 5) = 2
    assert fft("1") == 0.0           # log2 1 = 0: no butterflies


def test_kernel_flops_from_the_kernels_estimate():
    from hloscope.cost.flops import UnknownCost, custom_call_flop_gap, kernel_flops

    def call(estimate: str | None, target: str = "tpu_custom_call"):
        cfg = (f', backend_config={{"custom_call_config":{{"cost_estimate":{estimate}}}}}'
               if estimate is not None else "")
        m = entry_module(f'  %a = f32[8,128]{{1,0}} parameter(0)\n  ROOT %k = f32[8,128]{{1,0}} custom-call(%a), '
                   f'custom_call_target="{target}"{cfg}', "a: f32[8,128]")
        return m.entry.root

    assert kernel_flops(call('{"flops":"100","transcendentals":"7","bytes_accessed":"9"}')) == (100.0, 7.0)
    assert kernel_flops(call('{"flops":"100","bytes_accessed":"9"}')) == (100.0, 0.0)
    assert kernel_flops(call('{"transcendentals":"7","bytes_accessed":"9"}')) == (0.0, 7.0)
    with pytest.raises(UnknownCost, match="is not numeric"):
        kernel_flops(call('{"flops":"many","bytes_accessed":"9"}'))
    assert custom_call_flop_gap(call(None, "my_kernel")) == "custom-call my_kernel states no cost_estimate"
    with pytest.raises(UnknownCost, match="custom-call my_kernel states no cost_estimate"):
        kernel_flops(call(None, "my_kernel"))


def test_complex_types_run_at_the_f32_rate():
    from hloscope.cost.chips import get_chip

    v5e = get_chip("v5e")
    assert v5e.peak_flops("c64") == v5e.peak_flops("c128") == v5e.peak_flops("f64") == v5e.peak_f32_flops
    assert v5e.peak_flops("s32") == v5e.peak_flops("bf16") == v5e.peak_bf16_flops != v5e.peak_f32_flops


def test_has_tiled_layouts_looks_past_untiled_instructions_and_tuples():
    from hloscope.cost.layout import has_tiled_layouts

    (tiled,) = parse("HloModule m\n\nENTRY %e (p: pred[], t: (f32[8,128], s32[])) -> f32[8,128] {\n"
                     "  %p = pred[] parameter(0)\n"
                     "  %t = (f32[8,128]{1,0:T(8,128)}, s32[]) parameter(1)\n"
                     "  ROOT %g = f32[8,128]{1,0:T(8,128)} get-tuple-element(%t), index=0\n}\n")
    assert has_tiled_layouts(tiled)
    (plain,) = parse("HloModule m\n\nENTRY %e (t: (f32[8,128], s32[])) -> f32[8,128] {\n"
                     "  %t = (f32[8,128]{1,0}, s32[]) parameter(0)\n"
                     "  ROOT %g = f32[8,128]{1,0} get-tuple-element(%t), index=0\n}\n")
    assert not has_tiled_layouts(plain)


def test_adding_a_cost_times_a_trip_count():
    from hloscope.cost.ops import Cost

    total = Cost(flops=1, transcendentals=2, bytes_read=3, bytes_written=4, padded_read=5, padded_written=6,
                 hbm_bytes=7, unknown_trip_counts=["w0"])
    total.add(Cost(flops=10, transcendentals=20, bytes_read=30, bytes_written=40, padded_read=50,
                   padded_written=60, hbm_bytes=70, unknown_trip_counts=["w1"], unknown=[("x", "why")]), 5)
    assert (total.flops, total.transcendentals, total.bytes_read, total.bytes_written, total.padded_read,
            total.padded_written, total.hbm_bytes) == (51, 102, 153, 204, 255, 306, 357)
    assert total.unknown_trip_counts == ["w0", "w1"] and total.unknown == [("x", "why")]


@pytest.mark.parametrize("times", [1, 1.0, 3, 0.5])
@pytest.mark.parametrize("piece", [
    dict(bytes_read=30, bytes_written=40, padded_read=50, padded_written=60, hbm_bytes=70),
    dict(bytes_read=30.7, bytes_written=40, padded_read=50, padded_written=60, hbm_bytes=70),
    dict(bytes_read=30, bytes_written=40, padded_read=50, padded_written=60.2, hbm_bytes=70),
    dict(bytes_read=(1 << 53) + 1, bytes_written=40, padded_read=50, padded_written=60, hbm_bytes=70),
    dict(bytes_read=30, bytes_written=40, padded_read=50, padded_written=60, hbm_bytes=(1 << 60) + 3),
], ids=["ints", "a float read", "a float written", "beyond 2**53 read", "beyond 2**53 in HBM"])
def test_adding_a_cost_once_is_the_trip_counted_sum(piece, times):
    """Cost.add takes an op's cost as it is where it is added once; the totals are those of
    the general sum, int(n * times) per byte count (HAND-WRITTEN figures: fractional byte
    counts, and counts no float holds exactly, keep the general sum's rounding)."""
    from hloscope.cost.ops import Cost

    def summed(total, other, k):
        return (total.flops + other.flops * k, total.transcendentals + other.transcendentals * k,
                *(getattr(total, q) + int(getattr(other, q) * k) for q in
                  ("bytes_read", "bytes_written", "padded_read", "padded_written", "hbm_bytes")))

    total = Cost(flops=1.5, transcendentals=2, bytes_read=3, bytes_written=4, padded_read=5, padded_written=6,
                 hbm_bytes=7)
    other = Cost(flops=10.25, transcendentals=20, unknown=[("x", "why")], **piece)
    want = summed(total, other, times)
    total.add(other, times)
    got = (total.flops, total.transcendentals, total.bytes_read, total.bytes_written, total.padded_read,
           total.padded_written, total.hbm_bytes)
    assert got == want and [type(v) for v in got] == [type(v) for v in want]
    assert total.unknown == [("x", "why")]


def test_the_most_of_a_conditionals_branches():
    from hloscope.cost.ops import Cost

    a = Cost(flops=5, transcendentals=1, bytes_read=10, bytes_written=3, padded_read=12, padded_written=4,
             hbm_bytes=16, unknown=[("x", "why")])
    b = Cost(flops=2, transcendentals=9, bytes_read=20, bytes_written=1, padded_read=24, padded_written=2,
             hbm_bytes=26, unknown_trip_counts=["w"])
    m = Cost.most([a, b])
    assert (m.flops, m.transcendentals, m.bytes_read, m.bytes_written, m.padded_read, m.padded_written,
            m.hbm_bytes) == (5, 9, 20, 3, 24, 4, 26)
    assert m.unknown == [("x", "why")] and m.unknown_trip_counts == ["w"]
    none = Cost.most([])
    assert (none.flops, none.bytes_read, none.hbm_bytes) == (0, 0, 0)


def test_logical_and_padded_bytes_of_a_padded_shape_in_another_space():
    from hloscope.cost.layout import logical_bytes, padded_bytes

    s = parse_shape("f32[3,5]{1,0:T(8,128)S(1)}")  # 15 values in one (8,128) tile, in space 1
    assert logical_bytes(s) == 15 * 4
    assert padded_bytes(s) == 8 * 128 * 4  # (padded wherever it lives, not only in HBM)


def test_a_fusion_that_updates_a_parameter_in_place_and_slices_it_reads_the_slice():
    """HAND-WRITTEN: the fused computation writes a [2,128] update into its parameter (in
    place: not read) and also takes a [4,128] slice of it: what the fusion reads of that
    operand is the slice, 2 KiB, not its 32 KiB."""
    from hloscope.cost.fused import fusion_traffic, param_reads

    (m,) = parse("""HloModule m

%fused (p: f32[64,128], u: f32[2,128]) -> (f32[64,128], f32[4,128]) {
  %p = f32[64,128]{1,0} parameter(0)
  %u = f32[2,128]{1,0} parameter(1)
  %z = s32[] constant(0)
  %d = f32[64,128]{1,0} dynamic-update-slice(%p, %u, %z, %z)
  %s = f32[4,128]{1,0} slice(%p), slice={[0:4], [0:128]}
  ROOT %t = (f32[64,128]{1,0}, f32[4,128]{1,0}) tuple(%d, %s)
}

ENTRY %e (a: f32[64,128], b: f32[2,128]) -> (f32[64,128], f32[4,128]) {
  %a = f32[64,128]{1,0} parameter(0)
  %b = f32[2,128]{1,0} parameter(1)
  ROOT %f = (f32[64,128]{1,0}, f32[4,128]{1,0}) fusion(%a, %b), kind=kLoop, calls=%fused
}
""")
    fused = m.by_name["fused"]
    assert [str(s) for s in param_reads(m, fused, "p")] == ["f32[4,128]"]
    f = m.entry.root
    reads, written = fusion_traffic(m, f, [m.entry.by_name["a"].shape, m.entry.by_name["b"].shape])
    assert [s.logical_bytes for s in reads] == [4 * 128 * 4, 2 * 128 * 4]
    assert [s.logical_bytes for s in written] == [2 * 128 * 4, 4 * 128 * 4]  # the update; the slice


def test_an_async_start_costs_what_its_wrapped_computation_does():
    """HAND-WRITTEN minimal module: an async-start wrapping an exponential of 256 floats
    reads and writes 1 KiB and takes 256 transcendentals, as the op would unwrapped; its done
    adds nothing."""
    from hloscope.cost.ops import CostModel

    (m,) = parse("""HloModule m

wrapped {
  x = f32[256]{0} parameter(0)
  ROOT n = f32[256]{0} exponential(x)
}

ENTRY e {
  p = f32[256]{0} parameter(0)
  s = ((f32[256]{0}), f32[256]{0}, u32[]) async-start(p), calls=wrapped
  ROOT d = f32[256]{0} async-done(s)
}
""", "m")
    c = CostModel(m).module_cost()
    assert (c.flops, c.transcendentals, c.bytes_read, c.bytes_written) == (0.0, 256.0, 1024, 1024)
