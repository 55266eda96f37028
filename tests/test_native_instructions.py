"""Instructions the compiled line reader makes itself (`hloscope_native.instructions_from`,
hloscope.parser.fast.native._part) held to those the parse makes from the fields it hands
back otherwise (`lines_from`), on every fixture and corpus module: every field of every
instruction and every computation's. Skipped where the extension is not built."""

from __future__ import annotations

import pytest
from conftest import corpus_files, fixture_files, rel

from hloscope.ir.instruction import Instruction
from hloscope.parser.fast import native as fast_native
from hloscope.parser.fast.scan import _NONES, ScanMiss, _Lines
from hloscope.parser.reader import NATIVE_READER

native = pytest.importorskip("hloscope_native")
if not hasattr(native, "instructions_from"):
    pytest.skip("an extension built before instructions_from", allow_module_level=True)

FILES = fixture_files() + corpus_files()


class _FieldsOnly:
    """The extension as one built before instructions_from: only the fields come back."""

    def __init__(self) -> None:
        self.lines_from = native.lines_from
        self.lines = native.lines


def _fields(modules) -> list:
    out = []
    for m in modules:
        out.append((m.name, m.attrs))
        for c in m.computations:
            out.append((c.name, c.is_entry, c.params, c.result_shape_text, c.line, c.attrs))
            out += [(i.name, i.opcode, i.shape_text, i.operands, i.operand_shapes, i._attrs, i.literal,
                     i.is_root, i.line, i.column, i.computation, i._shape, i.attr_text, i.reader,
                     i._calls) for i in c.instructions]
    return out


def _scan(core, text: str, path: str):
    try:
        return _fields(fast_native.scan_native(core, text, path))
    except (ScanMiss, ValueError, KeyError, IndexError, TypeError) as e:
        return type(e)


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_made_instructions_are_the_ones_made_from_their_fields(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    assert _scan(native, text, str(path)) == _scan(_FieldsOnly(), text, str(path))


def test_most_instructions_come_made():
    """On Mixtral's text the core makes nearly every instruction (the loop of scan_native
    makes the rest: typed operands, constants' literals)."""
    path = next((p for p in corpus_files() if "mixtral" in p.name), None)
    if path is None:
        pytest.skip("the corpus is not at hand")
    text = path.read_text()
    lines = _Lines(str(path))
    items, _ = native.instructions_from(text, 0, 0, 1 << 30,
                                        (Instruction, lines.shapes, lines.shape, NATIVE_READER, _NONES, 0))
    made = [i for i in items if isinstance(i, Instruction)]
    fields = [i for i in items if isinstance(i, tuple) and len(i) == 11]
    assert len(made) > 20 * len(fields) > 0
    assert all(i.computation == "" and i.reader is NATIVE_READER for i in made)


# hand-written (syntax corners, not compiler output): an instruction line outside any
# computation, and one after a header the line scanner reads
ODD = [
    "HloModule m\n\na = f32[2]{0} parameter(0)\n\nENTRY main {\n  ROOT p = f32[2]{0} parameter(0)\n}\n",
    "HloModule m\n\nENTRY main {\n  p = f32[2]{0} parameter(0)\n}\n  q = f32[2]{0} negate(p)\n",
    "HloModule m\n\nENTRY main (x: f32[2]) -> f32[2] /* c */ {\n  p = f32[2]{0} parameter(0)\n"
    "  ROOT n = f32[2]{0} negate(p)\n}\n",
]


@pytest.mark.parametrize("text", ODD)
def test_an_instruction_the_line_scanner_decides_is_handed_to_it(text):
    assert _scan(native, text, "odd.hlo") == _scan(_FieldsOnly(), text, "odd.hlo")
