"""Syntax corners of HLO text, one hand-written minimal module each.

HAND-WRITTEN test inputs (not compiler output), labelled as such: each is the
smallest module that shows one corner of the syntax. Every one is also fed to
XLA's own parser, which must accept it and agree with us on names, opcodes,
shapes and operands; then we assert the specific values of that corner.
"""

from __future__ import annotations

from functools import cache

import pytest
from irdump import dump_module
from oracle import compare, our_view, xla_views

from hloscope.ir.shape import COMBINE_DIM, UNBOUNDED
from hloscope.parser import parse

CORNERS: dict[str, str] = {}


def corner(name: str, text: str) -> str:
    CORNERS[name] = text
    return name


corner("module_header", """
HloModule m, is_scheduled=true, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}, num_partitions=2, frontend_attributes={fa="x"}, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }

ENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  ROOT %add = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b)
}
""")

corner("debug_sections", """
HloModule m

FileNames
1 "/tmp/model.py"
2 "lib/with \\"quote\\".py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=2 line=12 end_line=12 column=4 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

ENTRY main {
  a = f32[] parameter(0), metadata={op_name="jit(f)/neg" stack_frame_id=1}
  ROOT n = f32[] negate(a)
}
""")

corner("names_without_percent_and_no_root", """
HloModule m
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
}
""")

corner("element_types", """
HloModule m
ENTRY e {
  a = pred[2] parameter(0)
  b = s4[2] parameter(1)
  c = u4[2] parameter(2)
  d = s8[2] parameter(3)
  e1 = u8[2] parameter(4)
  f = s16[2] parameter(5)
  g = u16[2] parameter(6)
  h = s64[2] parameter(7)
  i = u64[2] parameter(8)
  j = f16[2] parameter(9)
  k = bf16[2] parameter(10)
  l = f64[2] parameter(11)
  m1 = c64[2] parameter(12)
  n = c128[2] parameter(13)
  o = f8e5m2[2] parameter(14)
  p = f8e4m3fn[2] parameter(15)
  q = f8e4m3b11fnuz[2] parameter(16)
  r = f8e5m2fnuz[2] parameter(17)
  s = f8e4m3fnuz[2] parameter(18)
  t = f8e4m3[2] parameter(19)
  u = f8e3m4[2] parameter(20)
  v = f8e8m0fnu[2] parameter(21)
  w = f4e2m1fn[2] parameter(22)
  x = s2[2] parameter(23)
  y = u2[2] parameter(24)
  ROOT tok = token[] after-all()
}
""")

corner("tuples_tokens_dynamic", """
HloModule m
ENTRY e {
  a = f32[<=10,5]{1,0} parameter(0)
  b = (f32[2], (u32[], token[])) parameter(1)
  g = (u32[], token[]) get-tuple-element(b), index=1
  ROOT t = (f32[<=10,5], (u32[], token[])) tuple(a, g)
}
""")

corner("tpu_layouts", """
HloModule m
ENTRY e {
  a = bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)} parameter(0)
  b = f32[16384,8]{1,0:T(8,128)} parameter(1)
  c = bf16[]{:T(256)} parameter(2)
  d = u4[1024,512]{1,0:T(8,128)(4,1)E(4)} parameter(3)
  f = f32[1024]{0:T(1024)} parameter(4)
  ROOT cp = bf16[32,32,8192]{2,1,0:T(8,128)(2,1)} copy(a)
}
""")

corner("operands_with_inline_shapes", """
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  ROOT d = f32[2,4]{1,0} dot(f32[2,3]{1,0} %a, f32[3,4]{1,0} %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""")

corner("dot_conv_slice_window", """
HloModule m
ENTRY e {
  x = f32[1,8,8,3]{3,2,1,0} parameter(0)
  k = f32[3,3,3,16]{3,2,1,0} parameter(1)
  c = f32[1,4,4,16]{3,2,1,0} convolution(x, k), window={size=3x3 stride=2x2 pad=1_0x1_0}, dim_labels=b01f_01io->b01f
  s = f32[1,2,4,8]{3,2,1,0} slice(c), slice={[0:1], [0:4:2], [0:4], [0:16:2]}
  p = f32[] constant(0)
  ROOT pd = f32[1,4,6,8]{3,2,1,0} pad(s, p), padding=0_0x1_1x1_1x0_0
}
""")

corner("replica_groups_three_forms", """
HloModule m, num_partitions=8
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[128] parameter(0)
  r1 = f32[128] all-reduce(a), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, to_apply=add
  r2 = f32[128] all-reduce(r1), channel_id=2, replica_groups=[4,2]<=[2,2,2]T(2,1,0), use_global_device_ids=true, to_apply=add
  ROOT r3 = f32[128] all-reduce(r2), channel_id=3, replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1'}, use_global_device_ids=true, to_apply=add
}
""")

corner("collective_permute_and_async", """
HloModule m, num_partitions=4
ENTRY e {
  a = f32[16] parameter(0)
  cp = f32[16] collective-permute(a), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ags = (f32[16], f32[64]) all-gather-start(cp), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  agd = f32[64] all-gather-done(ags)
  cs = (f32[64], f32[64], u32[]) copy-start(agd)
  ROOT cd = f32[64] copy-done(cs)
}
""")

corner("shardings", """
HloModule m, num_partitions=8
ENTRY e {
  a = f32[8,4] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  b = f32[8,4] parameter(1), sharding={devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual}}
  c = f32[8,4] parameter(2), sharding={devices=[2,1]0,1}
  d = f32[8,4] parameter(3), sharding={replicated}
  f = f32[8,4] parameter(4), sharding={maximal device=3}
  ROOT t = (f32[8,4], f32[8,4]) tuple(a, b), sharding={{manual}, {devices=[4,2]<=[8]}}
}
""")

corner("metadata_frontend_backend_config", """
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] exponential(a), metadata={op_type="exp" op_name="jit(f)/exp" source_file="/x/y.py" source_line=7}, frontend_attributes={_xla_stream_annotation="1",other="a,b"}
  c = f32[4] custom-call(b), custom_call_target="my_target", backend_config={"k":[1,2],"s":"x}y"}, api_version=API_VERSION_TYPED_FFI
  ROOT d = f32[4] custom-call(c), custom_call_target="t2", backend_config="opaque \\"string\\"", operand_layout_constraints={f32[4]{0}}, custom_call_has_side_effect=true
}
""")

corner("fusion_while_conditional_calls", """
HloModule m
fused {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(i, lim), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4] fusion(v), kind=kLoop, calls=fused
  ROOT t = (s32[], f32[4]) tuple(i2, v2)
}
br0 {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
br1 {
  x = f32[4] parameter(0)
  ROOT y = f32[4] abs(x)
}
ENTRY e {
  a = f32[4] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[4]) tuple(z, a)
  w = (s32[], f32[4]) while(t0), condition=cond, body=body, backend_config={"known_trip_count":{"n":"3"}}
  r = f32[4] get-tuple-element(w), index=1
  k = s32[] parameter(1)
  c = f32[4] conditional(k, r, r), branch_computations={br0, br1}
  ROOT cl = f32[4] call(c), to_apply=br1
}
""")

corner("constants_literals_and_elision", """
HloModule m
ENTRY e {
  a = f32[2,2] constant({ { 1, 2 }, { 3, 4.5 } })
  b = pred[] constant(true)
  c = f32[] constant(-inf)
  d = f32[] constant(nan)
  f = c64[] constant((1, -2))
  g = s32[3] constant({...})
  h = bf16[] constant(1e-05)
  ROOT t = (f32[2,2], pred[], f32[], f32[]) tuple(a, b, c, d)
}
""")

corner("comments_and_index_markers", """
// A line comment before the module.
HloModule m // trailing comment

ENTRY e {
  a = f32[2] parameter(0) // the input
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  d = f32[2] parameter(3)
  f = f32[2] parameter(4)
  g = f32[2] parameter(5)
  ROOT t = (f32[2], f32[2], f32[2], f32[2], f32[2], /*index=5*/f32[2]) tuple(a, b, c, d, f, /*index=5*/g)
}
""")

corner("control_predecessors_and_unknown_attrs", """
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] negate(a)
  ROOT c = f32[2] abs(a), control-predecessors={b}, frontend_attributes={my_key="v"}
}
""")

corner("output_to_operand_aliasing_and_schedule", """
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = (f32[2], s32[]) custom-call(a), custom_call_target="foo", output_to_operand_aliasing={{0}: (0, {})}, schedule=SCHEDULE_LATEST
}
""")

corner("headerless_module", """
e {
  a = u4[1024,512]{1,0:E(4)} parameter(0)
  ROOT b = u4[1024,4096]{1,0:E(4)} all-gather(a), dimensions={1}
}
""")

corner("shapes_left_to_infer", """
HloModule m
ENTRY e {
  t = (f32[2], s32[]) parameter(0)
  a = get-tuple-element(t), index=0
  b = negate(a)
  c = compare(a, b), direction=LT
  ROOT r = tuple(b, c)
}
""")


@cache
def _xla(name: str) -> dict:
    names = list(CORNERS)
    views = dict(zip(names, xla_views([CORNERS[n] for n in names])))
    return views[name]


def _parse(name: str):
    text = CORNERS[name]
    fast = parse(text, f"<{name}>")
    strict = parse(text, f"<{name}>", strict=True)
    assert [dump_module(m) for m in fast] == [dump_module(m) for m in strict]
    xla = _xla(name)
    assert "error" not in xla, f"XLA rejects the {name} corner: {xla.get('error')}"
    assert not compare(our_view(fast[0]), xla)
    return fast[0]


@pytest.mark.parametrize("name", list(CORNERS))
def test_corner_agrees_with_xla(name):
    _parse(name)


def instr(module, name):
    return next(i for i in module.instructions() if i.name == name)


def test_module_header():
    m = _parse("module_header")
    assert m.name == "m"
    assert set(m.attrs) == {"is_scheduled", "entry_computation_layout", "num_partitions",
                            "frontend_attributes", "input_output_alias", "buffer_donor"}
    from hloscope.parser import parse_attr
    params, result = parse_attr("entry_computation_layout", m.attrs["entry_computation_layout"])
    assert [str(p) for p in params] == ["f32[4]", "f32[4]"] and str(result) == "f32[4]"
    assert parse_attr("num_partitions", m.attrs["num_partitions"]) == 2
    assert parse_attr("frontend_attributes", m.attrs["frontend_attributes"]) == {"fa": "x"}
    assert m.attrs["input_output_alias"] == "{ {}: (0, {}, may-alias) }"
    assert instr(m, "add").operand_shapes == ("f32[4]{0}", "f32[4]{0}")


def test_debug_sections():
    m = _parse("debug_sections")
    assert m.file_names == {1: "/tmp/model.py", 2: 'lib/with "quote".py'}
    assert m.function_names == {1: "<module>", 2: "f"}
    assert m.file_locations[1]["line"] == 12 and m.file_locations[1]["function_name_id"] == 2
    assert m.stack_frames == {1: {"file_location_id": 1, "parent_frame_id": 0}}
    assert instr(m, "a").attr("metadata") == {"op_name": "jit(f)/neg", "stack_frame_id": 1}


def test_names_without_percent_and_default_root():
    m = _parse("names_without_percent_and_no_root")
    assert m.entry.name == "e" and m.entry.root.name == "r"
    assert instr(m, "r").called_computations == ["add_f32"]
    assert instr(m, "r").attr("dimensions") == (0,)


def test_element_types_and_bits():
    m = _parse("element_types")
    bits = {i.name: i.shape.element_bits for i in m.instructions() if i.opcode == "parameter"}
    assert bits["b"] == 4 and bits["c"] == 4 and bits["w"] == 4 and bits["x"] == 2
    assert bits["o"] == bits["v"] == 8 and bits["n"] == 128
    assert instr(m, "tok").shape.element_type == "token"


def test_tuples_tokens_dynamic_dims():
    m = _parse("tuples_tokens_dynamic")
    a = instr(m, "a").shape
    assert a.dims == (10, 5) and a.dynamic == (True, False) and str(a) == "f32[<=10,5]"
    t = instr(m, "t").shape
    assert t.is_tuple and str(t) == "(f32[<=10,5], (u32[], token[]))"
    assert instr(m, "g").attr("index") == 1


def test_unbounded_dimension_shape():
    from hloscope.parser import parse_shape
    s = parse_shape("f32[?,5]")
    assert s.dims == (UNBOUNDED, 5) and str(s) == "f32[?,5]"


def test_tpu_layouts():
    m = _parse("tpu_layouts")
    a = instr(m, "a").shape.layout
    assert a.minor_to_major == (2, 1, 0) and a.tiles == ((8, 128), (2, 1)) and a.memory_space == 1
    assert str(a) == "{2,1,0:T(8,128)(2,1)S(1)}"
    assert instr(m, "c").shape.layout.tiles == ((256,),)
    d = instr(m, "d").shape
    assert d.layout.element_size_bits == 4 and d.element_bits == 4
    assert instr(m, "f").shape.text() == "f32[1024]{0:T(1024)}"


def test_combine_tile_dimension():
    from hloscope.parser import parse_shape
    s = parse_shape("f32[4,256]{1,0:T(2,*)(1,128)}")
    assert s.layout.tiles == ((2, COMBINE_DIM), (1, 128))
    assert s.text() == "f32[4,256]{1,0:T(2,*)(1,128)}"


def test_dot_conv_slice_window():
    m = _parse("dot_conv_slice_window")
    w = instr(m, "c").attr("window")
    assert w.size == (3, 3) and w.stride == (2, 2) and w.pad == ((1, 0), (1, 0))
    assert instr(m, "c").attr("dim_labels") == "b01f_01io->b01f"
    sl = instr(m, "s").attr("slice")
    assert [(r.start, r.limit, r.stride) for r in sl] == [(0, 1, 1), (0, 4, 2), (0, 4, 1), (0, 16, 2)]
    assert instr(m, "pd").attr("padding") == ((0, 0), (1, 1), (1, 1), (0, 0))


def test_replica_groups_three_forms():
    m = _parse("replica_groups_three_forms")
    r1, r2, r3 = (instr(m, n).attr("replica_groups") for n in ("r1", "r2", "r3"))
    assert r1.form == "list" and r1.groups == ((0, 1), (2, 3), (4, 5), (6, 7))
    # [4,2]<=[2,2,2]T(2,1,0): iota(8).reshape(2,2,2).transpose(2,1,0).reshape(4,2)
    assert r2.form == "iota" and r2.groups == ((0, 4), (2, 6), (1, 5), (3, 7))
    assert r3.form == "mesh" and r3.groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert r3.mesh_axes == (("axis_0", 2), ("axis_1", 4)) and r3.mesh_refs == ("axis_1",)


def test_collective_permute_and_async_forms():
    m = _parse("collective_permute_and_async")
    assert instr(m, "cp").attr("source_target_pairs") == ((0, 1), (1, 2), (2, 3), (3, 0))
    assert [i.opcode for i in m.entry.instructions][2:] == [
        "all-gather-start", "all-gather-done", "copy-start", "copy-done"]


def test_shardings():
    m = _parse("shardings")
    a = instr(m, "a").attr("sharding")
    assert a.kind == "tiled" and a.tile_shape == (2, 1, 4) and a.last_tile_dim_replicate
    assert a.devices == tuple(range(8))
    b = instr(m, "b").attr("sharding")
    assert b.iota_perm == (1, 0, 2) and b.devices == (0, 1, 4, 5, 2, 3, 6, 7)
    assert b.last_tile_dims == ("manual",)
    assert instr(m, "c").attr("sharding").devices == (0, 1)
    assert instr(m, "d").attr("sharding").kind == "replicated"
    f = instr(m, "f").attr("sharding")
    assert f.kind == "maximal" and f.device == 3
    t = instr(m, "t").attr("sharding")
    assert t.kind == "tuple" and [e.kind for e in t.elements] == ["manual", "tiled"]


def test_metadata_frontend_backend_config():
    m = _parse("metadata_frontend_backend_config")
    b = instr(m, "b")
    assert b.attr("metadata") == {"op_type": "exp", "op_name": "jit(f)/exp",
                                  "source_file": "/x/y.py", "source_line": 7}
    assert b.attr("frontend_attributes") == {"_xla_stream_annotation": "1", "other": "a,b"}
    c = instr(m, "c")
    assert c.attr("custom_call_target") == "my_target"
    assert c.attr("backend_config") == {"k": [1, 2], "s": "x}y"}
    assert c.attr("api_version") == "API_VERSION_TYPED_FFI"
    d = instr(m, "d")
    assert d.attr("backend_config") == 'opaque "string"'
    assert [s.text() for s in d.attr("operand_layout_constraints")] == ["f32[4]{0}"]
    assert d.attr("custom_call_has_side_effect") == "true"


def test_fusion_while_conditional_calls():
    m = _parse("fusion_while_conditional_calls")
    assert instr(m, "w").called_computations == ["cond", "body"]
    assert instr(m, "w").attr("backend_config") == {"known_trip_count": {"n": "3"}}
    assert instr(m, "c").called_computations == ["br0", "br1"]
    assert instr(m, "v2").called_computations == ["fused"] and instr(m, "v2").attrs["kind"] == "kLoop"
    assert m.fusion_computations() == {"fused"}


def test_constants_literals_and_elision():
    m = _parse("constants_literals_and_elision")
    lits = {i.name: i.literal for i in m.instructions() if i.opcode == "constant"}
    assert lits == {"a": "{ { 1, 2 }, { 3, 4.5 } }", "b": "true", "c": "-inf", "d": "nan",
                    "f": "(1, -2)", "g": "{...}", "h": "1e-05"}
    assert all(not i.operands for i in m.instructions() if i.opcode == "constant")


def test_comments_and_index_markers():
    m = _parse("comments_and_index_markers")
    t = instr(m, "t")
    assert t.operands == ("a", "b", "c", "d", "f", "g")
    assert t.shape_text == "(f32[2], f32[2], f32[2], f32[2], f32[2], f32[2])"


def test_control_predecessors_and_unknown_attrs_kept():
    m = _parse("control_predecessors_and_unknown_attrs")
    c = instr(m, "c")
    assert c.control_predecessors == ["b"]
    assert c.attrs["frontend_attributes"] == '{my_key="v"}'


def test_output_to_operand_aliasing_kept_verbatim():
    m = _parse("output_to_operand_aliasing_and_schedule")
    c = instr(m, "c")
    assert c.attrs["output_to_operand_aliasing"] == "{{0}: (0, {})}"
    assert c.attr("schedule") == "SCHEDULE_LATEST"


def test_headerless_module_named_like_xla():
    m = _parse("headerless_module")
    assert m.name == "module_e"


def test_shapes_left_to_infer():
    m = _parse("shapes_left_to_infer")
    assert [str(i.shape) for i in m.entry.instructions] == [
        "(f32[2], s32[])", "f32[2]", "f32[2]", "pred[2]", "(f32[2], pred[2])"]


def test_uninferable_shape_is_a_located_error():
    from hloscope.parser import ParseError

    text = "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT t = reshape(a)\n}\n"
    with pytest.raises(ParseError) as err:
        parse(text, "x.hlo")
    assert (err.value.line, err.value.column) == (4, 3)
    assert "cannot infer the shape of %t (reshape)" in err.value.message
    assert "error" in xla_views([text])[0]  # XLA: "cannot infer shape for opcode: reshape"


# ---- forms current XLA prints or accepts that wave 1 did not read (issue #17)
corner("async_shorthand", """
HloModule m, num_partitions=2

ENTRY e {
  p = f32[8,4]{1,0} parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  s = ((f32[8,4]{1,0}), f32[4,4]{1,0}, s32[]) slice-start(p), slice={[0:4], [0:4]}
  sd = f32[4,4]{1,0} slice-done(s)
  ds = ((f32[8,4]{1,0}, s32[], s32[]), f32[2,4]{1,0}, u32[]) dynamic-slice-start(p, i, z), dynamic_slice_sizes={2,4}
  du = ((f32[8,4]{1,0}, s32[], s32[]), f32[2,4]{1,0}, u32[]) dynamic-slice-update(ds)
  dd = f32[2,4]{1,0} dynamic-slice-done(du)
  a = ((f32[4,4]{1,0}), f32[4,4]{1,0}) all-to-all-start(sd), replica_groups={{0,1}}, dimensions={0}
  ad = f32[4,4]{1,0} all-to-all-done(a)
  c = ((f32[2,4]{1,0}), f32[2,4]{1,0}, u32[]) copy-start(dd)
  ROOT t = (f32[4,4]{1,0}, ((f32[2,4]{1,0}), f32[2,4]{1,0}, u32[])) tuple(ad, c)
}
""")

corner("mesh_device_ids_iota", """
HloModule m, num_partitions=8

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  p = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=4], device_ids=([4,2]T(1,0)) {'axis_1'}, use_global_device_ids=true, to_apply=add
}
""")

corner("mesh_device_ids_list", CORNERS["mesh_device_ids_iota"].replace(
    "device_ids=([4,2]T(1,0))", "device_ids=(0,2,4,6,1,3,5,7)"))

corner("module_name_colon", """
HloModule jit_f:, is_scheduled=true

ENTRY e {
  ROOT p = f32[4]{0} parameter(0)
}
""")

corner("nested_operands", """
HloModule m

ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  ROOT r = f32[4]{0} add(f32[4]{0} a, f32[4]{0} multiply(a, negate(b)))
}
""")

corner("inline_computation", """
HloModule m

ENTRY e {
  p = f32[8]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT s = f32[] add(x, y)
  }
}
""")

corner("single_instruction", """
r = f32[4]{0} add(f32[4]{0} a, f32[4]{0} b)
""")

corner("single_instruction_unnamed", """
f32[4]{0} multiply(f32[4]{0} x, f32[4]{0} y)
""")

corner("custom_call_literal_and_nested_slice_sizes", """
HloModule m, num_partitions=2

ENTRY e {
  p = f32[4]{0} parameter(0)
  o = f32[4]{0} parameter(1)
  i = (s32[]) parameter(2)
  j = (s32[]) parameter(3)
  c = f32[4]{0} custom-call(p), custom_call_target="foo", literal=s32[2]{0} {1, 2}
  ROOT cp = f32[4]{0} collective-permute(c, o, i, j), source_target_pairs={{0,1},{1,0}}, slice_sizes={{2}}
}
""")

corner("more_shapes_left_to_infer", """
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = add(x, y)
}

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  t = transpose(a), dimensions={1,0}
  d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = concatenate(a, a), dimensions={0}
  z = f32[] constant(0)
  r = reduce(a, z), dimensions={1}, to_apply=add
  ROOT tt = tuple(t, d, c, r)
}
""")


def test_async_shorthand_for_any_op():
    m = _parse("async_shorthand")
    ops = [i.opcode for i in m.entry.instructions]
    assert ops[3:12] == ["slice-start", "slice-done", "dynamic-slice-start", "dynamic-slice-update",
                         "dynamic-slice-done", "all-to-all-start", "all-to-all-done", "copy-start", "tuple"]
    assert instr(m, "du").operands == ("ds",) and instr(m, "dd").operands == ("du",)


def test_mesh_with_device_ids_decodes_like_the_iota_form():
    from hloscope.parser import parse_attr

    iota = parse_attr("replica_groups", "[2,4]<=[4,2]T(1,0)").groups
    assert iota == ((0, 2, 4, 6), (1, 3, 5, 7))  # hand-derived: devices [[0,2,4,6],[1,3,5,7]]
    for name in ("mesh_device_ids_iota", "mesh_device_ids_list"):
        groups = _parse(name).entry.root.attr("replica_groups")
        assert groups.form == "mesh" and groups.groups == iota


def test_module_name_ending_in_a_colon():
    assert _parse("module_name_colon").name == "jit_f"


def test_nested_operands_become_instructions_named_like_xla():
    m = _parse("nested_operands")
    assert [(i.name, i.opcode, i.operands) for i in m.entry.instructions][2:] == [
        ("negate.anon", "negate", ("b",)), ("multiply.anon", "multiply", ("a", "negate.anon")),
        ("r", "add", ("a", "multiply.anon"))]


def test_computation_written_inside_an_attribute():
    m = _parse("inline_computation")
    assert [c.name for c in m.computations] == ["_", "e"]
    assert m.entry.root.attr("to_apply") == "_" and len(m["_"].instructions) == 3


def test_a_single_instruction_is_a_module_of_its_own():
    m = _parse("single_instruction")
    assert (m.name, m.entry.name) == ("_", "_")
    assert [(i.name, i.opcode) for i in m.entry.instructions] == [
        ("a", "parameter"), ("b", "parameter"), ("r", "add")]
    unnamed = _parse("single_instruction_unnamed")
    assert [i.name for i in unnamed.entry.instructions] == ["x", "y", "_"]


def test_custom_call_literal_and_nested_slice_sizes_in_strict_mode():
    m = _parse("custom_call_literal_and_nested_slice_sizes")
    assert instr(m, "cp").attr("slice_sizes") == ((2,),)


def test_more_shapes_left_to_infer():
    m = _parse("more_shapes_left_to_infer")
    assert [str(i.shape) for i in m.entry.instructions][2:] == [
        "f32[3,2]", "f32[2,4]", "f32[4,3]", "f32[]", "f32[2]", "(f32[3,2], f32[2,4], f32[4,3], f32[2])"]
