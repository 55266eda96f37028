"""What XLA's own tests write and XLA accepts (#38), class by class: HAND-WRITTEN minimal
modules, each held to jaxlib's parser (the oracle): the same verdict, and on acceptance the
same root shape (XLA prints what it inferred)."""

from __future__ import annotations

import re

import pytest

from hloscope.parser import ParseError, parse

_INLINE_WHILE = """init = s32[] constant(0)
  ROOT w = s32[] while(init), condition={
    p = s32[] parameter(0)
    c = s32[] constant(5)
    ROOT lt = pred[] compare(p, c), direction=LT
  }, body={
    p = s32[] parameter(0)
    one = s32[] constant(1)
    ROOT a = add(p, one)
  }"""

CASES = {
    # a scalar literal for an array: XLA sets the first element, zeros the rest
    "scalar_literal_for_array": ("ROOT c = f32[3,3] constant(1)", True),
    "scalar_literal_for_s32_vector": ("ROOT c = s32[5] constant(7)", True),
    "scalar_literal_for_empty_array": ("ROOT c = f32[0] constant(1)", False),
    "too_few_elements": ("ROOT c = s32[2,2] constant({1,2})", False),
    # u64 takes a negative value and wraps; other unsigned types do not
    "u64_minus_one": ("ROOT c = u64[] constant(-1)", True),
    "u64_vector_minus_one": ("ROOT c = u64[2] constant({-1, 2})", True),
    "u8_minus_one": ("ROOT c = u8[2] constant({-1, 255})", False),
    "u32_minus_one": ("ROOT c = u32[] constant(-1)", False),
    # NaN payloads
    "bf16_nan_payload": ("ROOT c = bf16[2] constant({-nan(0x7f), 1})", True),
    "f32_nan_payload": ("ROOT c = f32[2] constant({nan(0x7fff), 1})", True),
    "f16_nan_payload": ("ROOT c = f16[2] constant({-nan(0x1), 1})", True),
    # a pad without its shape: XLA infers lo + hi + d + (d - 1) x interior
    "pad_inferred": ("p = f32[4,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = pad(p, z), padding=1_2x0_0_1", True),
    # a comparison's direction and type are enums: XLA refuses others
    "compare_bad_direction": ("a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=FOO", False),
    "compare_bad_type": ("a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=GT, type=BOGUS", False),
    "compare_total_order": ("a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=GT, type=TOTALORDER", True),
    # the generic async ops' wiring, as XLA's parser checks it
    "async_update_of_a_parameter": ("p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=neg\n"
                                    "  u = ((f32[4]), f32[4], s32[]) async-update(p)\n  ROOT d = f32[4] async-done(s)", False),
    "async_start_flat_shape": ("p = f32[4] parameter(0)\n  s = (f32[4], s32[]) async-start(p), calls=neg\n"
                               "  ROOT d = f32[4] async-done(s)", False),
    "async_chain": ("p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=neg\n"
                    "  u = ((f32[4]), f32[4], s32[]) async-update(s)\n  ROOT d = f32[4] async-done(u)", True),
    "pad_negative": ("p = f32[6] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = pad(p, z), padding=-1_-2", True),
    # computations written inline over several lines, a shape-less op inside (XLA infers it)
    "inline_while_over_lines": (_INLINE_WHILE, True),
    "inline_while_bad_direction": (_INLINE_WHILE.replace("direction=LT", "direction=LQ"), False),
    # a custom call's literal=: an array literal after its shape, or a tuple of such
    "custom_call_literal_scalar": ("p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), "
                                   "custom_call_target=\"foo\", literal=s32[] 7", True),
    "custom_call_literal_tuple": ("p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), "
                                  "custom_call_target=\"foo\", literal=(s32[] 1, (f32[2]{0} {1, 2}))", True),
    # shapes XLA's parser works out from the attributes (each root printed without a shape)
    "broadcast_dimensions_as_sizes": ("p = f32[3] parameter(0)\n  ROOT b = broadcast(p), dimensions={1}", True),
    "broadcast_no_dimensions": ("p = f32[] parameter(0)\n  ROOT b = broadcast(p), dimensions={}", True),
    "abs_of_complex_is_real": ("p = c64[3] parameter(0)\n  ROOT b = abs(p)", True),
    "fft_keeps_its_shape": ("p = c64[8,32] parameter(0)\n  ROOT f = fft(p), fft_type=FFT, fft_length={32}", True),
    "rfft_halves_the_last_dim": ("p = f32[8,32] parameter(0)\n  ROOT f = fft(p), fft_type=RFFT, fft_length={32}", True),
    "irfft_restores_it": ("p = c64[8,17] parameter(0)\n  ROOT f = fft(p), fft_type=IRFFT, fft_length={32}", True),
    "scatter_is_its_operand": ("p = f32[8,4] parameter(0)\n  i = s32[2,1] parameter(1)\n  u = f32[2,4] parameter(2)\n"
                               "  ROOT s = scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", True),
    "gather_batch_and_offsets": ("p = f32[8,4,6] parameter(0)\n  i = s32[2,5,1] parameter(1)\n  ROOT g = gather(p, i), "
                                 "offset_dims={0,3}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
                                 "slice_sizes={1,4,3}", True),
    "convolution_same_padding": ("a = f32[1,8,8,3] parameter(0)\n  k = f32[3,3,3,16] parameter(1)\n  ROOT c = "
                                 "convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", True),
    "convolution_strided_dilated": ("a = f32[2,9,9,3] parameter(0)\n  k = f32[3,3,3,16] parameter(1)\n  ROOT c = "
                                    "convolution(a, k), window={size=3x3 stride=2x2 rhs_dilate=2x2}, "
                                    "dim_labels=b01f_01io->bf01", True),
    "reduce_window_padded_strided": ("p = f32[8,9] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = reduce-window(p, z), "
                                     "window={size=2x3 stride=2x1 pad=0_1x1_1}, to_apply=add", True),
    # operand counts that hang on the op (found by adding and dropping operands in the corpus)
    "dot_with_sparsity_operands": ("a = f32[8,8] parameter(0)\n  ROOT d = f32[8,8] dot(a, a, a), "
                                   "lhs_contracting_dims={1}, rhs_contracting_dims={0}", True),
    "convolution_of_three": ("a = f32[1,8,8,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n  ROOT c = "
                             "f32[1,8,8,1] convolution(a, k, a), window={size=1x1}, dim_labels=b01f_01io->b01f", False),
    "fft_of_two": ("a = c64[8,16] parameter(0)\n  ROOT f = c64[8,16] fft(a, a), fft_type=FFT, fft_length={16}", False),
    "complex_of_three": ("x = f32[4] parameter(0)\n  ROOT c = c64[4] complex(x, x, x)", False),
    "reduce_of_three": ("a = f32[8,16] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[8] reduce(a, z, a), "
                        "dimensions={1}, to_apply=add", False),
    "reduce_window_of_one": ("a = f32[8,16] parameter(0)\n  ROOT r = f32[8,16] reduce-window(a), window={size=1x1}, "
                             "to_apply=add", False),
    "scatter_of_four": ("p = f32[8,4] parameter(0)\n  i = s32[2,1] parameter(1)\n  u = f32[2,4] parameter(2)\n"
                        "  ROOT s = f32[8,4] scatter(p, i, u, i), update_window_dims={1}, inserted_window_dims={0}, "
                        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", False),
    "dynamic_update_slice_one_index_short": ("a = f32[8,16] parameter(0)\n  u = f32[1,16] parameter(1)\n"
                                             "  i = s32[] constant(0)\n  ROOT d = f32[8,16] dynamic-update-slice(a, u, i)",
                                             False),
    "dynamic_update_slice_index_vector": ("a = f32[8,16] parameter(0)\n  u = f32[1,16] parameter(1)\n"
                                          "  i = s32[2] constant({0, 0})\n  ROOT d = f32[8,16] "
                                          "dynamic-update-slice(a, u, i)", True),
    "dynamic_slice_one_index_short": ("a = f32[8,16] parameter(0)\n  i = s32[] constant(0)\n  ROOT d = f32[1,16] "
                                      "dynamic-slice(a, i), dynamic_slice_sizes={1,16}", False),
    "concatenate_without_a_dimension": ("a = f32[2,8] parameter(0)\n  ROOT c = f32[4,8] concatenate(a, a), "
                                        "dimensions={}", False),
    "concatenate_with_two_dimensions": ("a = f32[2,8] parameter(0)\n  ROOT c = f32[4,8] concatenate(a, a), "
                                        "dimensions={0,1}", False),
    "conditional_short_of_a_branch": ("i = s32[] parameter(0)\n  x = f32[4] parameter(1)\n  ROOT c = f32[4] "
                                      "conditional(i, x), branch_computations={neg, neg}", False),
    "send_done_of_nothing": ("ROOT d = token[] send-done(), channel_id=5, is_host_transfer=true", False),
    # a tuple constant's literal is a tuple (a scalar for it was found by swapping shapes)
    "tuple_constant_of_a_scalar": ("ROOT c = (f32[2], s32[]) constant(0)", False),
    "tuple_constant_of_a_tuple": ("ROOT c = (f32[2], s32[]) constant(({1, 2}, 3))", True),
    # names: a keyword is a name once written with %; `tuple` is no type word to XLA's lexer
    "keyword_name_with_percent": ("%true = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%true)", True),
    "tuple_as_a_name": ("tuple = f32[2] parameter(0)\n  ROOT n = f32[2] negate(tuple)", True),
    "keyword_as_an_operand": ("a = f32[2] parameter(0)\n  ROOT n = f32[2] add(a, nan)", False),
}


_CALLED = "neg {\n  q = f32[4] parameter(0)\n  ROOT n = f32[4] negate(q)\n}\n"


_REDUCER = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"


def _module(body: str, header: str = "") -> str:
    called = (_CALLED if re.search(r"\bneg\b", body) else "") + (_REDUCER if "to_apply=add" in body else "")
    return f"HloModule m{header}\n{called}ENTRY e {{\n  {body}\n}}\n"


def _xla(text: str):
    from jaxlib import _hlo

    try:
        return _hlo.hlo_module_from_text(text)
    except Exception:  # noqa: BLE001 - XLA's verdict: rejected
        return None


def _root_shape(printed: str) -> str:
    m = re.search(r"ROOT \S+ = (.+?) [a-z][a-z\-]*\(", printed[printed.index("ENTRY"):])
    return re.sub(r"\{[^}]*\}", "", m.group(1))  # (without the layouts)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("strict", [False, True])
def test_the_verdict_and_shape_are_xlas(name, strict):
    body, accepted = CASES[name]
    text = _module(body)
    xla = _xla(text)
    assert (xla is not None) == accepted, "the case's label disagrees with XLA"
    if not accepted:
        with pytest.raises(ParseError):
            parse(text, name, strict=strict)
        return
    (m,) = parse(text, name, strict=strict)
    assert str(m.entry.root.shape) == _root_shape(xla.to_string())
    printed = xla.to_string()
    entry = printed[printed.index("ENTRY"):]
    assert len(m.entry.instructions) == len(re.findall(r"(?m)^\s+(?:ROOT )?%\S+ = ", entry))
    if "={\n" in body:  # computations written inline: XLA prints them as computations of their own
        assert sum(len(c.instructions) for c in m.computations) == len(
            re.findall(r"(?m)^\s+(?:ROOT )?%\S+ = ", printed))


_ASYNC = ('p = f32[2,3] parameter(0)\n  s = ((f32[2,3]), f32[2,3], u32[]) custom-call-start(p), '
          'custom_call_target="foo"{start}\n  ROOT d = f32[2,3] custom-call-done(s){done}')
_ASYNC_UPDATE = ('p = f32[2,3] parameter(0)\n  s = ((f32[2,3]), f32[2,3], u32[]) custom-call-start(p), '
                 'custom_call_target="foo"\n  u = ((f32[2,3]), f32[2,3], u32[]) custom-call-update(s){update}'
                 '\n  ROOT d = f32[2,3] custom-call-done(u)')
_REDUCE = "p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), replica_groups={{{{0,1}}}}, to_apply=add{attrs}"

# XLA refuses these; hloscope's default mode is lenient about them, strict mode refuses them
STRICT_ONLY = {
    "attribute_an_add_does_not_take": ("p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p), dimensions={0}",
                                       "unexpected attribute"),
    # a tuple literal= whose shape is written once before the values (XLA wants one per element)
    "custom_call_literal_tuple_shape_first": ("p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), "
                                              "custom_call_target=\"foo\", literal=(s32[], s32[]) (1, 2)",
                                              "unexpected '\\('"),
    # attributes XLA allows on other opcodes only (its table: hloscope/parser/xla_attributes.json)
    "channel_id_on_get_tuple_element": ("p = (f32[2]) parameter(0)\n  ROOT g = f32[2] get-tuple-element(p), "
                                        "index=0, channel_id=3", 'unexpected attribute "channel_id"'),
    "dimensions_on_copy": ("p = f32[2] parameter(0)\n  ROOT c = f32[2] copy(p), dimensions={0}",
                           'unexpected attribute "dimensions"'),
    "result_accuracy_on_negate": ("p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p), "
                                  "result_accuracy={mode=highest}", 'unexpected attribute "result_accuracy"'),
    "window_on_dot": ("a = f32[2,2] parameter(0)\n  ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}, window={size=1x1}", 'unexpected attribute "window"'),
    # words XLA's lexer reads as a type or keyword where a name is expected; an instruction
    # named after a type is refused even with its %
    "type_word_as_a_name": ("s1 = f32[2] parameter(0)\n  ROOT n = f32[2] negate(s1)", "expects a name: 's1'"),
    "type_name_with_percent": ("%bf16 = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%bf16)",
                               "illegal instruction name: bf16"),
    # an async shorthand's -update and -done take the thread and the common attributes only
    # (XLA's verifier tests once wrote custom_call_target on them); its -start takes its op's
    "wrapped_attribute_on_async_done": (_ASYNC.format(start="", done=', custom_call_target="foo"'),
                                        'unexpected attribute "custom_call_target"'),
    "wrapped_attribute_on_async_update": (_ASYNC_UPDATE.format(update=', custom_call_target="foo"'),
                                          'unexpected attribute "custom_call_target"'),
    "foreign_attribute_on_async_start": (_ASYNC.format(start=", dimensions={0}", done=""),
                                         'unexpected attribute "dimensions"'),
    # a reducing collective's global device ids need a channel
    "global_ids_without_channel": (_REDUCE.format(attrs=", use_global_device_ids=true"),
                                   "Cannot have use_global_device_ids=true without channel_id"),
}

ACCEPTED_TWINS = {  # ... and what XLA accepts beside each of them
    "thread_on_async_done": _ASYNC.format(start=', async_execution_thread="x"', done=', async_execution_thread="x"'),
    "sharding_on_async_update": _ASYNC_UPDATE.format(update=", sharding={replicated}"),
    "aliasing_on_async_start": _ASYNC.format(start=", output_to_operand_aliasing={{}: (0, {})}", done=""),
    "global_ids_with_channel": _REDUCE.format(attrs=", channel_id=1, use_global_device_ids=true"),
    "global_ids_false_without_channel": _REDUCE.format(attrs=", use_global_device_ids=false"),
    "all_gather_global_ids_without_channel": ("p = f32[8] parameter(0)\n  ROOT g = f32[16] all-gather(p), "
                                              "replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true"),
}


@pytest.mark.parametrize("name", sorted(STRICT_ONLY))
def test_strict_refuses_what_xla_refuses(name):
    body, message = STRICT_ONLY[name]
    text = _module(body)
    assert _xla(text) is None
    parse(text, name)  # (the default mode keeps it)
    with pytest.raises(ParseError, match=message):
        parse(text, name, strict=True)


def test_an_alias_list_with_a_non_integer_index_is_refused_as_xla_refuses_it():
    text = _module("p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p)",
                   header=", input_output_alias={ {}: (0, {a}, may-alias) }")
    assert _xla(text) is None
    for strict in (False, True):
        with pytest.raises(ParseError, match="expects integer"):
            parse(text, "alias", strict=strict)


def test_a_header_attribute_xla_does_not_take_is_refused_in_strict_mode():
    text = _module("p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)",
                   header=", cross_program_prefetches={{0, {}}}")
    assert _xla(text) is None
    parse(text, "header")
    with pytest.raises(ParseError, match='unexpected attribute "cross_program_prefetches". Allowed attributes: '
                                         "alias_passthrough_params"):
        parse(text, "header", strict=True)


def test_the_allowed_attribute_table_is_what_xla_answers():
    """The table strict mode checks is jaxlib's own list per opcode, asked anew here."""
    import json
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "bench"))
    from xla_attributes import TABLE, derive

    from hloscope.ir.opcodes import OPCODES

    table = json.loads(TABLE.read_text())
    assert table == derive(OPCODES)
    assert len(table["opcodes"]) >= 130 and "custom_call_target" in table["opcodes"]["custom-call"]
    assert "branch_computations" in table["opcodes"]["conditional"]  # (the s32 selector's form)


def test_a_computation_named_after_a_type_needs_its_percent():
    """`f32 {...}` is refused by XLA's parser (and strict mode); `%f32 {...}` is a name."""
    for head, accepted in (("f32", False), ("%f32", True)):
        text = (f"HloModule m\n{head} {{\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}}\n"
                f"ENTRY e {{\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply={head}\n}}\n")
        assert (_xla(text) is not None) == accepted
        if accepted:
            parse(text, "m", strict=True)
        else:
            with pytest.raises(ParseError, match="expects a name: 'f32'"):
                parse(text, "m", strict=True)


@pytest.mark.parametrize("name", sorted(ACCEPTED_TWINS))
@pytest.mark.parametrize("strict", [False, True])
def test_what_xla_accepts_beside_them_is_accepted(name, strict):
    text = _module(ACCEPTED_TWINS[name])
    xla = _xla(text)
    assert xla is not None, "the twin's label disagrees with XLA"
    (m,) = parse(text, name, strict=strict)
    assert str(m.entry.root.shape) == _root_shape(xla.to_string())


def test_a_tuple_takes_one_operand_per_element_as_xla_says():
    for body, wanted, given in (("ROOT t = (f32[2], f32[2]) tuple(p)", 2, 1),
                                ("ROOT t = (f32[2]) tuple(p, p)", 1, 2), ("ROOT t = () tuple(p)", 0, 1)):
        text = _module("p = f32[2] parameter(0)\n  " + body)
        assert _xla(text) is None
        for strict in (False, True):
            with pytest.raises(ParseError, match=rf"4:3: error: expects {wanted} operands, but has {given} operands"):
                parse(text, "tuple", strict=strict)


def test_an_index_past_the_tuple_on_a_shapeless_get_tuple_element_is_a_located_error():
    """XLA's parser aborts the process on this (not asked here); hloscope says where."""
    text = _module("p = (f32[2], f32[2]) parameter(0)\n  ROOT g = get-tuple-element(p), index=5")
    for strict in (False, True):
        with pytest.raises(ParseError, match=r"4:3: error: tuple index 5 out of range for \(f32\[2\], f32\[2\]\)"):
            parse(text, "gte", strict=strict)


_START = ('p0 = f32[4] parameter(0)\n  s = ((f32[4]), f32[4], u32[]) custom-call-start(p0), '
          'custom_call_target="foo"\n')
ASYNC_WIRING = {
    "done_of_a_parameter": "p = ((f32[4]), f32[4], u32[]) parameter(0)\n  ROOT d = f32[4] custom-call-done(p)",
    "update_changing_the_shape": _START + "  u = ((f32[4]), f32[4], s32[]) custom-call-update(s)\n"
                                          "  ROOT d = f32[4] custom-call-done(u)",
    "start_with_a_flat_shape": ('p0 = f32[4] parameter(0)\n  s = (f32[4], u32[]) custom-call-start(p0), '
                                'custom_call_target="foo"\n  ROOT d = f32[4] custom-call-done(s)'),
    "done_of_another_op": _START + "  ROOT d = f32[4] fusion-done(s)",
}


@pytest.mark.parametrize("name", sorted(ASYNC_WIRING))
def test_async_shorthand_wiring_is_refused_in_xlas_words(name):
    """The async shorthand (custom-call-start/-update/-done) wired wrongly: both modes refuse
    it, located, with XLA's own sentence (hloscope adds which op it meant)."""
    text = _module(ASYNC_WIRING[name])
    from jaxlib import _hlo

    with pytest.raises(Exception) as xla:
        _hlo.hlo_module_from_text(text)
    said = " ".join(str(xla.value).split()).split("error: ", 1)[1]
    sentence = re.split(r"\.(?: |$)|, but got", said)[0]
    for strict in (False, True):
        with pytest.raises(ParseError) as ours:
            parse(text, name, strict=strict)
        assert sentence in str(ours.value), (sentence, str(ours.value))


def test_a_replica_or_partition_id_that_is_not_u32_scalar_is_a_located_error():
    """XLA's parser aborts the process on `(u32[], u32[]) replica-id()` (a module in its
    collective-permute decomposer's tests; not asked here); hloscope says where, in XLA's words."""
    for op, shape in (("replica-id", "(u32[], u32[])"), ("partition-id", "s32[]"), ("replica-id", "u32[2]")):
        text = _module(f"ROOT r = {shape} {op}()")
        for strict in (False, True):
            with pytest.raises(ParseError, match=rf"3:3: error: HloInstruction {op} must have a shape of u32\[\]"):
                parse(text, op, strict=strict)
    (m,) = parse(_module("ROOT r = u32[]{:T(128)} replica-id()"), "laid out")
    assert m.entry.root.opcode == "replica-id"


@pytest.mark.parametrize("body, message", [
    ("p = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] tuple(p)", r"Expected a tuple shape\. Got f32\[2,3\]"),
    ("p = f32[2,3] parameter(0)\n  ROOT r = f32[7] reshape(p)",
     r"reshape %r: the result f32\[7\] has 7 elements, its operand %p f32\[2,3\] has 6"),
])
def test_shapes_xlas_parser_aborts_on_are_located_errors(body, message):
    """A tuple printed with an array shape and a reshape that changes the element count make
    XLA's parser abort the process (a CHECK; not asked here): hloscope refuses them, located."""
    for strict in (False, True):
        with pytest.raises(ParseError, match="4:3: error: " + message):
            parse(_module(body), "abort", strict=strict)
    (m,) = parse(_module("p = f32[<=4,3] parameter(0)\n  ROOT r = f32[<=12] reshape(p)"), "dynamic")
    assert m.entry.root.shape.dims == (12,)


@pytest.mark.parametrize("body, message", [
    ("p = f32[4] parameter(0)\n  ROOT r = (f32[4], s32[]) negate(p)",
     r"negate %r makes an array, but its shape is the tuple \(f32\[4\], s32\[\]\)"),
    ("p = f32[4,2] parameter(0)\n  ROOT r = (f32[2,4]) transpose(p), dimensions={1,0}",
     r"transpose %r makes an array, but its shape is the tuple"),
    ("p = (f32[4], s32[]) parameter(0)\n  ROOT r = f32[4] add(p, p)",
     r"add %r works on arrays, but its operand %p is the tuple \(f32\[4\], s32\[\]\)"),
    ("p = (f32[4], s32[]) parameter(0)\n  ROOT r = f32[4] reshape(p)",
     r"reshape %r works on arrays, but its operand %p is the tuple"),
    ("p = (f32[4], s32[]) parameter(0)\n  ROOT g = (f32[2], s32[]) get-tuple-element(p), index=0",
     r"get-tuple-element %g is \(f32\[2\], s32\[\]\), but element 0 of %p is f32\[4\]"),
    ("p = (f32[4], s32[]) parameter(0)\n  ROOT g = s32[2] get-tuple-element(p), index=1",
     r"get-tuple-element %g is s32\[2\], but element 1 of %p is s32\[\]"),
])
def test_shapes_xlas_verifier_refuses_are_refused_in_both_modes(body, message):
    """HAND-WRITTEN modules. XLA's parser takes each of these ops alone, but its verifier
    refuses them and its parser can abort the process once such a value is used (shapes swapped
    in the corpus's modules found them). hloscope refuses them in both modes, located, as it
    does `add` operands that disagree with the result: its analyses need consistent shapes."""
    for strict in (False, True):
        with pytest.raises(ParseError, match=r"\d:3: error: " + message):
            parse(_module(body), "verifier", strict=strict)


def test_a_tuple_select_and_a_tuple_copy_stay_accepted():
    """What the checks above leave alone, as XLA does: select on tuples, a copy of a tuple."""
    for body in ("a = (f32[], f32[]) parameter(0)\n  b = (f32[], f32[]) parameter(1)\n  c = pred[] parameter(2)\n"
                 "  ROOT s = (f32[], f32[]) select(c, a, b)",
                 "a = (f32[2], s32[]) parameter(0)\n  ROOT c = (f32[2], s32[]) copy(a)",
                 "a = (f32[2]{0}, s32[]) parameter(0)\n  ROOT g = f32[2]{0} get-tuple-element(a), index=0"):
        assert _xla(_module(body)) is not None
        for strict in (False, True):
            parse(_module(body), "kept", strict=strict)
