"""Hand-broken files (HAND-WRITTEN, labelled): the exact error location and message,
for every command, with exit code 2 and no traceback; --debug shows the traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path
import sys

import pytest

GOOD = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] negate(a)\n}\n"

BROKEN = [
    # (name, text, line, column, message)
    ("used-before-defined", "HloModule m\nENTRY e {\n  b = f32[2] negate(a)\n  ROOT a = f32[2] parameter(0)\n}\n",
     3, 3, "operand %a of %b is used before it is defined"),
    ("undefined-operand", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] negate(c)\n}\n",
     4, 3, "operand %c of %b is not defined in e"),
    ("duplicate-name", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  a = f32[2] negate(a)\n}\n",
     4, 3, "instruction %a is defined twice in e"),
    ("missing-computation", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  z = f32[] constant(0)\n"
     "  ROOT b = f32[] reduce(a, z), dimensions={0}, to_apply=nope\n}\n", 5, 3,
     "%b calls computation nope, which does not exist"),
    ("arity", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] add(a)\n}\n",
     4, 3, "add takes 2 operands, %b has 1"),
    ("shape-mismatch", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n"
     "  ROOT c = f32[2] add(a, b)\n}\n", 5, 3, "add %c: operand %b is f32[3] but the result is f32[2]"),
    # what XLA's parser rejects beyond syntax (each also checked against XLA in test_syntax)
    ("literal-range", "HloModule m\nENTRY e {\n  ROOT c = s8[] constant(300)\n}\n",
     3, 3, "value 300 is out of range for literal's primitive type s8"),
    ("literal-dims", "HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n",
     3, 3, "expects 3 elements in dimension 0, but sees 2"),
    ("operand-count", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] transpose(a, a), dimensions={0}\n}\n",
     4, 3, "transpose expects 1 operand, but %b has 2"),
    ("async-chain", "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
     "  s = ((f32[8]), f32[4], s32[]) slice-start(p), slice={[0:4]}\n  ROOT d = f32[4] negate-done(s)\n}\n",
     5, 3, "Expect async wrapped opcode to be slice, but got negate (%d continues slice-start)"),
    ("async-start-shape", "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
     "  s = f32[4] slice-start(p), slice={[0:4]}\n  ROOT d = f32[4] slice-done(s)\n}\n",
     4, 3, "AsyncStart expects the op shape to be in the form of ((async-operands), async-outputs, state)"),
    ("two-roots", "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n  ROOT b = f32[2] negate(a)\n}\n",
     4, 3, "e has more than one ROOT"),
    ("parameter-gap", "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(2)\n"
     "  ROOT c = f32[2] add(a, b)\n}\n", 4, 3, "e has parameters [0, 2] but no parameter(1)"),
    ("tuple-index", "HloModule m\nENTRY e {\n  a = (f32[2]) parameter(0)\n  ROOT b = f32[2] get-tuple-element(a), index=3\n}\n",
     4, 3, "tuple index 3 out of range for (f32[2])"),
    ("bad-layout", "HloModule m\nENTRY e {\n  ROOT a = f32[2,2]{1,0:T(%x)} parameter(0)\n}\n",
     3, 20, "malformed layout attribute T"),
    ("layout-rank", "HloModule m\nENTRY e {\n  ROOT a = f32[2,2]{0} parameter(0)\n}\n",
     3, 12, "is not a permutation of the 2 dimensions"),
    ("unclosed-brace", "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), frontend_attributes={x=\"1\"\n}\n",
     5, 1, "unexpected end of input"),
    ("bad-shape", "HloModule m\nENTRY e {\n  ROOT a = f32[2 parameter(0)\n}\n", 3, 18, "unexpected name 'parameter'"),
    ("deep-nesting", "HloModule m\nENTRY e {\n  ROOT a = " + "(" * 1100 + "f32[]" + ")" * 1100 + " parameter(0)\n}\n",
     3, 1035, "brackets nested deeper than 1024"),
    ("empty-computation", "HloModule m\nENTRY e {\n}\n", 2, 1, "computation e has no instructions"),
    # inside whole-value tokens (grammar/hlo.lark, any_shape): located in the file
    ("bracket-kinds", "HloModule m\nENTRY e {\n  ROOT a = f32[2]{0} parameter(0), metadata={op_name=\"x\" y=(1]}\n}\n",
     3, 62, "unexpected ']'"),
    ("dim-in-tuple", "HloModule m\nENTRY e {\n  ROOT a = (f32[2]{0}, s32[q]) parameter(0)\n}\n",
     3, 28, "unexpected name 'q'"),
    ("number-operand", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, /*index=1*/ 1)\n}\n",
     4, 37, "a literal is not an operand of add"),
    ("huge-dimension", "HloModule m\nENTRY e {\n  ROOT a = f32[99999999999999999999] parameter(0)\n}\n",
     3, 16, "is not a non-negative int64"),
]


@pytest.mark.parametrize(("name", "text", "line", "col", "message"), BROKEN, ids=[b[0] for b in BROKEN])
@pytest.mark.parametrize("strict", [False, True], ids=["fast", "strict"])
def test_exact_error_location(name, text, line, col, message, strict):
    from hloscope.parser import ParseError, parse

    with pytest.raises(ParseError) as err:
        parse(text, f"{name}.hlo", strict=strict)
    e = err.value
    assert (e.line, e.column) == (line, col), str(e)
    assert message in e.message


UNKNOWN_OPCODE = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] frobnicate(a)\n}\n"


def test_an_unknown_opcode_is_an_error_in_strict_mode_and_kept_otherwise():
    from jaxlib import _hlo

    from hloscope.parser import ParseError, parse

    with pytest.raises(Exception, match="expects opcode but sees: frobnicate"):
        _hlo.hlo_module_from_text(UNKNOWN_OPCODE)  # as XLA does
    with pytest.raises(ParseError) as err:
        parse(UNKNOWN_OPCODE, "u.hlo", strict=True)
    assert (err.value.line, err.value.column) == (4, 3)
    assert "unknown opcode 'frobnicate'" in err.value.message
    (m,) = parse(UNKNOWN_OPCODE, "u.hlo")  # a newer XLA's opcode must not stop a linter
    assert [(i.opcode, i.operands) for i in m.entry.instructions] == [("parameter", ()), ("frobnicate", ("a",))]


@pytest.mark.parametrize(("name", "text"), [(b[0], b[1]) for b in BROKEN
                                              if b[0].startswith(("literal", "operand", "async"))])
def test_xla_rejects_these_too(name, text):
    from jaxlib import _hlo

    with pytest.raises(Exception):  # noqa: B017 - XLA's parser raises its own status error
        _hlo.hlo_module_from_text(text)


def test_the_good_twin_parses():
    from hloscope.parser import parse

    (m,) = parse(GOOD)
    assert m.entry.root.name == "b"


COMMANDS = [["parse"], ["stats"], ["lint"], ["roofline"], ["sharding"], ["kernel"],
            ["graph", "-o", "{tmp}/g.dot"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_gives_one_located_line(tmp_path, command):
    bad = tmp_path / "broken.hlo"
    bad.write_text(BROKEN[1][1])
    args = [a.format(tmp=tmp_path) for a in command]
    proc = subprocess.run([sys.executable, "-m", "hloscope", args[0], "--no-cache", str(bad), *args[1:]],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{bad}:4:3: error: operand %c of %b is not defined in e")
    lint_summary = "0 finding(s) (none) in 1 file(s), 0 instructions checked; 1 file(s) could not be linted\n"
    assert "Traceback" not in proc.stderr and proc.stdout == (lint_summary if args[0] == "lint" else "")


def test_profile_command_on_garbage(tmp_path):
    bad = tmp_path / "x.trace.json.gz"
    bad.write_bytes(b"\x1f\x8b\x08garbage")
    proc = subprocess.run([sys.executable, "-m", "hloscope", "profile", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith(f"{bad}: error: truncated or corrupt gzip")
    assert "Traceback" not in proc.stderr


def test_debug_shows_the_traceback(tmp_path):
    bad = tmp_path / "broken.hlo"
    bad.write_text(BROKEN[1][1])
    proc = subprocess.run([sys.executable, "-m", "hloscope", "--debug", "stats", "--no-cache", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "ParseError" in proc.stderr


def test_a_stray_byte_in_a_string_is_kept_and_elsewhere_is_shown_with_its_caret(tmp_path):
    """Invalid UTF-8 inside a quoted string (an op_name) is read as U+FFFD, as XLA's parser
    takes a string's bytes; anywhere else it is a located error with the line and a caret."""
    from hloscope.parser import ParseError, load

    real = (Path(__file__).parents[1] / "fixtures" / "cpu" / "mlp_cpu.hlo.txt").read_bytes()
    at = real.index(b'op_name="') + len(b'op_name="jit(')
    in_string = tmp_path / "in_string.hlo.txt"
    in_string.write_bytes(real[:at] + b"\xff\xfe" + real[at:])
    (m,) = load(in_string)
    assert any("\ufffd" in str(i.raw_attr("metadata")) for i in m.instructions())
    at = real.index(b" fusion(")
    outside = tmp_path / "outside.hlo.txt"
    outside.write_bytes(real[:at] + b"\xff" + real[at:])
    with pytest.raises(ParseError) as e:
        load(outside)
    rendered = e.value.render()
    assert "invalid UTF-8 outside a quoted string" in rendered
    line = real[:at].count(b"\n") + 1
    assert f"outside.hlo.txt:{line}:" in rendered and "^" in rendered.splitlines()[-1]


def test_operand_counts_are_asked_only_of_the_opcodes_that_have_a_rule():
    """validate asks arity() only of ARITY_CHECKED; of every other opcode XLA knows it says
    nothing, whatever the operand count and shape (instructions built by hand: any shape,
    0 to 5 operands)."""
    from hloscope.ir import Instruction
    from hloscope.ir.opcodes import OPCODES
    from hloscope.ir.shape import Shape
    from hloscope.parser.consistency import ARITY_CHECKED, arity

    shapes = [Shape("f32", dims=(2,)), Shape("tuple", elements=(Shape("f32", dims=()),)),
              Shape("u32", dims=())]
    asked = 0
    for op in sorted(OPCODES - ARITY_CHECKED):
        for n in range(6):
            for shape in shapes:
                instr = Instruction("x", op, str(shape), tuple(f"o{k}" for k in range(n)),
                                    _shape=shape, attr_text="")
                assert arity(instr, {}) is None, (op, n, shape)
                asked += 1
    assert asked > 1000
    assert {"tuple", "dot", "clamp", "conditional"} <= ARITY_CHECKED  # (clamp: OPERAND_COUNTS)
