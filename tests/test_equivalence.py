"""The fast path and strict mode build the same IR, attribute values included."""

from __future__ import annotations

import pytest
from conftest import corpus_files, fixture_files, is_test_input, needs_corpus, rel
from irdump import dump_module

from hloscope.parser import ParseError, load
from hloscope.parser.fast.scan import ScanMiss, scan_text


def _both(path):
    try:
        strict = load(path, strict=True)
    except ParseError as e:
        if e.message.startswith("unknown opcode"):  # by design: the default mode keeps it
            opcodes = {i.opcode for m in load(path) for i in m.instructions()}
            assert e.message.split("'")[1] in opcodes
            return
        with pytest.raises(ParseError) as fast_err:
            load(path)
        assert (fast_err.value.line, fast_err.value.column) == (e.line, e.column)
        return
    fast = load(path)
    assert [dump_module(m) for m in fast] == [dump_module(m) for m in strict]


@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_fixture_fast_equals_strict(path):
    _both(path)


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=rel)
def test_corpus_fast_equals_strict(path):
    _both(path)


@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_fast_path_handles_real_output_itself(path):
    """Real compiler output never needs the full-grammar fallback."""
    if is_test_input(path):
        pytest.skip("XLA's own test input, not compiler output (parsed by the grammar route)")
    try:
        scan_text(path.read_text(), str(path))
    except ScanMiss as e:  # pragma: no cover - the failure message is the point
        pytest.fail(f"fast scan fell back on {rel(path)}: {e}")


def _token_route(text: str, path: str):
    """Strict mode's modules built from whole-value tokens, without node positions
    (raises _NeedPositions where only positions give a part's text)."""
    from hloscope.parser.grammar.source import lark_parser
    from hloscope.parser.grammar.strict import _Builder
    from hloscope.parser.load import _finished

    tree = lark_parser(positions=False).parse(text, start="hlo_file")
    return _finished(_Builder(text, path, positions=False).modules(tree))


@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_strict_mode_reads_real_output_as_whole_value_tokens(path):
    """Real compiler output takes strict mode's fast route (no second parse with node
    positions), and it builds what the fast path builds."""
    if is_test_input(path):
        pytest.skip("XLA's own test input, not compiler output")
    modules = _token_route(path.read_text(), str(path))
    assert [dump_module(m) for m in modules] == [dump_module(m) for m in load(path)]


# HAND-WRITTEN (labelled): forms no whole-value token takes (a tuple nested three deep,
# a shaped literal, a buffer shape, a multi-line operand list, a comment in a shape).
OTHER_FORMS = """HloModule m
ENTRY e {
  a = (f32[2], ((s32[], f32[]))) parameter(0)
  b = f32[2] get-tuple-element(a), index=0
  c = f32[2] add(b,
                 b)
  d = f32[2] /* the shape */ negate(c)
  ROOT e = b(f32[2]) custom-call(d), custom_call_target="x", literal=f32[] 0
}
"""


def test_other_forms_take_the_rules_with_positions():
    from hloscope.parser import parse
    from hloscope.parser.grammar.strict import _NeedPositions

    with pytest.raises(_NeedPositions):
        _token_route(OTHER_FORMS, "m.hlo")
    strict, fast = parse(OTHER_FORMS, "m.hlo", strict=True), parse(OTHER_FORMS, "m.hlo")
    assert [dump_module(m) for m in strict] == [dump_module(m) for m in fast]
    instrs = strict[0].entry.instructions
    assert instrs[0].shape_text == "(f32[2], ((s32[], f32[])))"
    assert instrs[2].operands == ("b", "b") and instrs[4].attrs["literal"] == "f32[] 0"
