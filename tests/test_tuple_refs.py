"""`%x#i` operands (newer XLA's dumps print no get-tuple-element; parser/tuple_refs.py).

Oracle: the same executable printed twice by XLA on an H100 (fixtures/h100, jax 0.11.2):
`--xla_dump_to`'s after-optimizations file (with `#`) and `compiled.as_text()` (with the
get-tuple-elements), matched by the module's fingerprint. Both must give the same
instructions, in the same order, each reading the same tuple elements. The error cases are
hand-written minimal modules, labelled as such.
"""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES

from hloscope.parser import ParseError, parse
from hloscope.parser import load as load_file

H100 = FIXTURES / "h100"
_FINGERPRINT = re.compile(r'fingerprint_before_lhs="([0-9a-f]+)"')


def _fingerprint(path) -> str:
    with open(path, encoding="utf-8") as f:
        return _FINGERPRINT.search(f.readline()).group(1)


def _pairs():
    printed = {_fingerprint(p): p for p in H100.glob("*.hlo.txt")}
    for dump in sorted((H100 / "dump").glob("*after_optimizations.txt")):
        text = dump.read_text(encoding="utf-8")
        if re.search(r"[\w.\-]#[0-9]", text):
            yield dump, printed[_fingerprint(dump)]


PAIRS = list(_pairs())


def _canonical(module):
    """Per computation, its instructions other than get-tuple-element, each with its operands
    read through get-tuple-elements as (instruction, index, index, ...)."""
    out = {}
    wrapped = {c for i in module.instructions() if i.opcode.endswith("-start") for c in i.called_computations}
    for comp in module.computations:
        by_name = comp.by_name

        def ref(name, by_name=by_name):
            i = by_name[name]
            if i.opcode == "get-tuple-element":
                return (*ref(i.operands[0]), int(i.attrs["index"]))
            return (name,)

        if comp.name in wrapped:
            continue
        out[comp.name] = [(i.name, _ASYNC.get(i.opcode, i.opcode), i.shape_text, tuple(ref(o) for o in i.operands))
                          for i in comp.instructions if i.opcode != "get-tuple-element" or i.is_root]
    return out


# The dump prints an async fusion in full (async-start calling %async_computation), as_text
# in its shorthand (fusion-start, whose wrapped computation the parser names async_wrapped)
_ASYNC = {"fusion-start": "async-start", "fusion-done": "async-done"}


def test_five_real_dumps_use_the_syntax():
    assert len(PAIRS) == 5


@pytest.mark.parametrize("plain", [False, True])
@pytest.mark.parametrize("dump,printed", PAIRS, ids=[d.name.split(".")[1] + d.name[:12] for d, _ in PAIRS])
def test_dump_reads_as_the_module_as_text_prints(dump, printed, plain, monkeypatch):
    if plain:
        monkeypatch.setenv("HLOSCOPE_PLAIN", "1")
    (a,) = parse(dump.read_text(encoding="utf-8"), str(dump))
    (b,) = parse(printed.read_text(encoding="utf-8"), str(printed))
    assert _canonical(a) == _canonical(b)
    gtes = [i for i in a.instructions() if i.opcode == "get-tuple-element" and "#" in i.name]
    assert gtes
    for g in gtes:  # the element's shape, from the tuple it reads
        base = a[g.computation][g.operands[0]]
        assert g.shape == base.shape.elements[int(g.attrs["index"])]


@pytest.mark.parametrize("dump,printed", PAIRS[:1])
def test_strict_parse_agrees(dump, printed):
    (a,) = load_file(dump, strict=True)
    (b,) = parse(dump.read_text(encoding="utf-8"), str(dump))
    assert _canonical(a) == _canonical(b)


# Hand-written minimal modules (syntax corners), labelled as such.
_MODULE = """HloModule m, is_scheduled=true

ENTRY %main (p: (f32[2], (s32[], f32[3]))) -> f32[3] {
  %p = (f32[2]{0}, (s32[], f32[3]{0})) parameter(0)
  ROOT %n = f32[3]{0} negate(%p#{ref})
}
"""


@pytest.mark.parametrize("plain", [False, True])
def test_nested_element(plain, monkeypatch):
    if plain:
        monkeypatch.setenv("HLOSCOPE_PLAIN", "1")
    (m,) = parse(_MODULE.replace("{ref}", "1#1"))
    comp = m.entry
    assert [i.name for i in comp.instructions] == ["p", "p#1", "p#1#1", "n"]
    assert comp["p#1"].shape_text == "(s32[], f32[3]{0})"
    assert comp["p#1#1"].operands == ("p#1",) and comp["p#1#1"].attrs["index"] == "1"
    assert comp["n"].operands == ("p#1#1",)


@pytest.mark.parametrize("plain", [False, True])
def test_an_element_past_the_tuple_is_a_located_error(plain, monkeypatch):
    if plain:
        monkeypatch.setenv("HLOSCOPE_PLAIN", "1")
    text = _MODULE.replace("{ref}", "2")
    with pytest.raises(ParseError) as e:
        parse(text, "m.hlo")
    line = text.split("\n")[4]
    assert (e.value.line, e.value.column) == (5, line.index("p#2") + 1)
    assert "no tuple element 2" in e.value.message


def test_an_element_of_an_array_is_a_located_error():
    text = _MODULE.replace("{ref}", "0#0")
    with pytest.raises(ParseError) as e:
        parse(text, "m.hlo")
    assert e.value.line == 5 and "f32[2]{0}, which has no tuple element 0" in e.value.message


def test_without_any_hash_nothing_is_added():
    (m,) = parse(_MODULE.replace("%p#{ref}", "%q").replace("negate", "copy").replace(
        "%p = (f32[2]{0}, (s32[], f32[3]{0})) parameter(0)",
        "%p = (f32[2]{0}, (s32[], f32[3]{0})) parameter(0)\n  %q = f32[3]{0} constant({1,2,3})"))
    assert [i.opcode for i in m.entry.instructions] == ["parameter", "constant", "copy"]
