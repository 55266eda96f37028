"""The fast path: the module skeleton by one regular expression over the whole text.

`LINE` takes each instruction line as XLA prints it (name, shape, opcode, operand names)
and checks its attribute list (keys, exact bracket pairs, closed strings) without
splitting it: `Instruction.attr_text` is split, or read up to one key, on first use.
It also takes computation headers, closing braces and blank lines. Every other line
(module header, debug tables, comments, multi-line instructions, unusual values) goes
through the line scanner (`_Lines`). Shapes are built by `parse_shape` (compact forms
directly, the rest by the grammar; memoized: dumps repeat a few dozen shape texts).
Anything neither recognises raises ScanMiss, and the caller parses the file with the
full grammar instead, which either gives the same IR or reports the error with its
location.
"""

from __future__ import annotations

import re
from typing import Any

from hloscope._speed import regex_cache
from hloscope.ir import Computation, Instruction, Module
from hloscope.ir.instruction import NAME
from hloscope.ir.opcodes import LITERAL_OPCODES
from hloscope.parser.attrs import parse_shape
from hloscope.parser.fast.compact import MISSING, fast_value
from hloscope.parser.fast.items import ScanMiss, split_items
from hloscope.parser.fast.patterns import (
    CLOSE_GROUP,
    CONTROL,
    HEAD_GROUP,
    HEADER,
    LINE,
    OPERAND_SEP,
    PARAM_ITEM,
    TAIL,
    TYPED_ITEM,
    literal_ok,
)
from hloscope.parser.files import MAX_NESTING
from hloscope.parser.reader import READER
from hloscope.parser.text import (
    Unbalanced,
    match_close,
    nesting_beyond,
    split_top,
    strip_comments,
    unquote,
)

_NAME = rf"%?{NAME}"
_NAME_RE = regex_cache.compile(_NAME)
_OPERAND_RE = regex_cache.compile(rf"{_NAME}(?:#[0-9]+)*")  # `%x#0`: a tuple element (parser.tuple_refs)
_INSTR_HEAD = regex_cache.compile(rf"(\s*)(ROOT\s+)?({_NAME})\s*=\s*")
_ARRAY_SHAPE = regex_cache.compile(r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?")
_OPCODE = regex_cache.compile(rf"\s+({_NAME})\(")
_COMP_HEAD = regex_cache.compile(rf"\s*(ENTRY\s+)?({_NAME})\s*(.*?)\s*\{{\s*$")
_MODULE = regex_cache.compile(rf"\s*HloModule\s+({_NAME}):?\s*(.*)$", re.S)
_STRING_ENTRY = regex_cache.compile(r'\s*(-?\d+)\s+("(?:[^"\\]|\\.)*")\s*$')
_RECORD_ENTRY = regex_cache.compile(r"\s*(-?\d+)\s+\{(.*)\}\s*$")
_SECTIONS = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}


_NONES = [(None,) * n for n in range(64)]  # operand_shapes of operands printed without shapes


def _shape_end(s: str, i: int) -> int:
    if s.startswith("(", i):
        return match_close(s, i) + 1
    m = _ARRAY_SHAPE.match(s, i)
    if not m:
        raise ScanMiss("shape")
    return m.end()


def scan_instruction(s: str, line: int, computation: str) -> Instruction:
    head = _INSTR_HEAD.match(s)
    if not head:
        raise ScanMiss("instruction head")
    i = head.end()
    j = _shape_end(s, i)
    shape_text = s[i:j]
    m = _OPCODE.match(s, j)
    if not m:
        raise ScanMiss("opcode")
    opcode = m.group(1)
    open_paren = m.end() - 1
    close = match_close(s, open_paren)
    inner = s[open_paren + 1 : close]
    literal = None
    names: list[str] = []
    shapes: list[str | None] = []
    if opcode in LITERAL_OPCODES:
        literal = inner.strip()
        if not literal_ok(literal):
            raise ScanMiss("literal")
    elif inner.strip():
        pieces = inner.split(",") if not any(c in inner for c in "([{") else [
            inner[a:b] for a, b in split_top(inner)
        ]
        for piece in pieces:
            piece = piece.strip()
            shape_part, _, name = piece.rpartition(" ")
            if not _OPERAND_RE.fullmatch(name):
                raise ScanMiss("operand")
            names.append(name.lstrip("%"))
            shape_part = shape_part.strip()
            if shape_part:
                parse_shape(shape_part)
            shapes.append(shape_part or None)
    instr = Instruction(
        name=head.group(3).lstrip("%"),
        opcode=opcode,
        shape_text=shape_text,
        operands=tuple(names),
        operand_shapes=tuple(shapes),
        _attrs=split_items(s, close + 1),
        literal=literal,
        is_root=head.group(2) is not None,
        line=line,
        column=len(head.group(1)) + 1,
        computation=computation,
        reader=READER,
    )
    instr._shape = parse_shape(shape_text)
    return instr


def _signature(text: str) -> tuple[list[tuple[str, str]], str | None]:
    if not text:
        return [], None
    if not text.startswith("("):
        raise ScanMiss("signature")
    close = match_close(text, 0)
    params: list[tuple[str, str]] = []
    if text[1:close].strip():
        for a, b in split_top(text, 1, close):
            pname, colon, pshape = text[a:b].partition(":")
            pname, pshape = pname.strip(), pshape.strip()
            if not colon or not _NAME_RE.fullmatch(pname):
                raise ScanMiss("parameter")
            parse_shape(pshape)
            params.append((pname.lstrip("%"), pshape))
    rest = text[close + 1 :].strip()
    if not rest.startswith("->"):
        raise ScanMiss("result shape")
    result = rest[2:].strip()
    parse_shape(result)
    return params, result


class _Lines:
    """The line-by-line scanner, for everything the whole-line pattern does not take:
    headers, closing braces, debug tables, comments, multi-line instructions."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.modules: list[Module] = []
        self.module: Module | None = None
        self.comp: Computation | None = None
        self.section: str | None = None
        self.pending: tuple[str, int] | None = None  # an instruction continued below
        # shape text -> (that text, its Shape): one string and Shape per distinct text
        self.shapes: dict[str, tuple[str, Any]] = {}

    def shape(self, text: str) -> tuple[str, Any]:
        known = self.shapes.get(text)
        if known is None:
            known = self.shapes[text] = (text, parse_shape(text))
        return known

    def feed(self, lines: list[str], first: int) -> None:
        for k, raw in enumerate(lines):
            lineno = first + k
            s = strip_comments(raw) if "/" in raw else raw
            if self.pending is not None:
                s, lineno = self.pending[0] + "\n" + s, self.pending[1]
                self.pending = None
            elif not s or s.isspace():
                continue
            self.line(s, lineno)

    def open(self, name: str, is_entry: bool, params_text: str, result: str, lineno: int,
             params: list[tuple[str, str]] | None = None) -> Computation:
        """Start the computation of a header `HEADER` has accepted (`params`: its (name,
        shape) pairs as PARAM_ITEM reads them, when the compiled reader read them)."""
        if params is None:
            params = PARAM_ITEM.findall(params_text)
        for _, t in params:
            self.shape(t)
        self.shape(result)
        return self._start(name, is_entry, params, result, lineno)

    def _start(self, name: str, is_entry: bool, params: list[tuple[str, str]],
               result: str | None, lineno: int) -> Computation:
        self.comp = Computation(name.lstrip("%"), is_entry=is_entry, params=params,
                                result_shape_text=result, line=lineno)
        self.section = None
        return self.comp

    def close(self, attrs: dict[str, str] | None = None) -> None:
        """End the current computation at its `}` line (with the attributes after it)."""
        self.comp.attrs = attrs or {}  # type: ignore[union-attr]
        self.module.computations.append(self.comp)  # type: ignore[union-attr]
        self.comp = None

    def finish(self) -> list[Module]:
        """The modules, once every line is read (ScanMiss if something was left open); a
        module with no HloModule line is named after its entry, as XLA's parser names it."""
        if self.pending is not None:
            raise ScanMiss("unclosed bracket")
        if self.comp is not None:
            raise ScanMiss("unclosed computation")
        if not self.modules:
            raise ScanMiss("no module")
        for mod in self.modules:
            if not mod.name and mod.entry is not None:
                mod.name = "module_" + mod.entry.name
        return self.modules

    def target(self) -> tuple[Computation | None, Any, str]:
        """(computation, its instruction list's append, its name) that an instruction
        line taken by the whole-line pattern joins now, or (None, None, "")."""
        comp = self.comp if self.pending is None else None
        return (comp, comp.instructions.append, comp.name) if comp is not None else (None, None, "")

    def line(self, s: str, lineno: int) -> None:
        if len(s) > MAX_NESTING and nesting_beyond(s, MAX_NESTING) is not None:
            raise ScanMiss("deep nesting")  # the grammar route reports where
        if CONTROL.search(s):
            raise ScanMiss("control character")
        comp = self.comp
        if comp is not None:
            stripped = s.strip()
            if stripped.startswith("}"):
                self.close(split_items(stripped, 1))
                return
            try:
                instr = scan_instruction(s, lineno, comp.name)
            except Unbalanced:
                self.pending = (s, lineno)
                return
            except ValueError as e:
                raise ScanMiss(str(e)) from None
            comp.instructions.append(instr)
            return
        stripped = s.strip()
        if stripped.startswith("HloModule"):
            m = _MODULE.match(s)
            if not m:
                raise ScanMiss("module header")
            self.module = Module(m.group(1).lstrip("%"), path=self.path, line=lineno)
            try:
                self.module.attrs = split_items(s, m.start(2))
            except ValueError as e:
                raise ScanMiss(str(e)) from None
            self.modules.append(self.module)
            self.section = None
            return
        if self.module is None:
            if not stripped.endswith("{"):
                raise ScanMiss("text before HloModule")
            self.module = Module("", path=self.path, line=lineno)  # headerless: named below
            self.modules.append(self.module)
        module = self.module
        if stripped in _SECTIONS:
            self.section = stripped
            return
        if stripped.endswith("{"):
            m = HEADER.match(s)
            if m is not None and m.group(2) not in _SECTIONS:
                self.open(m.group(2), m.group(1) is not None, m.group(3), m.group(HEADER.groups), lineno)
                return
            m = _COMP_HEAD.match(s)
            if not m or m.group(2) in _SECTIONS:
                raise ScanMiss("computation header")
            try:
                params, result = _signature(m.group(3))
            except ValueError as e:
                raise ScanMiss(str(e)) from None
            self._start(m.group(2), m.group(1) is not None, params, result, lineno)
            return
        section = self.section
        if section in ("FileNames", "FunctionNames"):
            m = _STRING_ENTRY.match(s)
            if not m:
                raise ScanMiss("string entry")
            table = module.file_names if section == "FileNames" else module.function_names
            table[int(m.group(1))] = unquote(m.group(2))
            return
        if section in ("FileLocations", "StackFrames"):
            m = _RECORD_ENTRY.match(s)
            if not m:
                raise ScanMiss("record entry")
            record = fast_value("record", "{" + m.group(2) + "}")  # as metadata={...} is read
            if record is MISSING:
                raise ScanMiss("record")  # the grammar decides
            table = module.file_locations if section == "FileLocations" else module.stack_frames
            table[int(m.group(1))] = record
            return
        raise ScanMiss("unrecognised line")


def scan_text(text: str, path: str, first_line: int = 1) -> list[Module]:
    """Scan a whole file (or the part of one from line `first_line` on) into modules;
    raises ScanMiss when unsure.

    One pattern (`LINE`, run by the regex engine over the whole text) takes the
    instruction lines as XLA prints them, attribute list checked but not split; the
    lines between its matches go through the line-by-line scanner.
    """
    lines = _Lines(path)
    shapes = lines.shapes
    pos = 0
    lineno = first_line
    comp: Computation | None = None  # the computation the next match belongs to, if any
    tails: dict[str, bool] = {}  # LINE's group 9 -> whether TAIL takes it
    opcodes: dict[str, str] = {}
    for m in LINE.finditer(text):
        start = m.start()
        if start != pos:
            gap = text[pos:start].split("\n")
            gap.pop()  # the text before this match's line start
            lines.feed(gap, lineno)
            lineno += len(gap)
            comp, append, comp_name = lines.target()
        pos = m.end() + 1
        kind = m.lastindex
        if kind is None:  # a blank line
            if lines.pending is not None:
                lines.feed([m.group(0)], lineno)
            lineno += 1
            continue
        if kind >= HEAD_GROUP:
            if kind == CLOSE_GROUP and comp is not None:
                lines.close()
            elif (kind < CLOSE_GROUP and lines.comp is None and lines.pending is None
                  and lines.module is not None and m.group(HEAD_GROUP + 1) not in _SECTIONS):
                lines.open(m.group(HEAD_GROUP + 1), m.group(HEAD_GROUP) is not None,
                           m.group(HEAD_GROUP + 2), m.group(CLOSE_GROUP - 1), lineno)
            else:
                lines.feed([m.group(0)], lineno)  # the line scanner decides
            comp, append, comp_name = lines.target()
            lineno += 1
            continue
        indent, root, name, shape_text, opcode, names, typed, lit, attr_text, tail = m.group(
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
        if tail is not None:  # backend_config on: checked once per distinct text
            ok = tails.get(tail)
            if ok is None:
                ok = tails[tail] = TAIL.fullmatch(tail) is not None
            if not ok:
                comp = None  # not a line the whole-line pattern takes: the line scanner's
        if comp is None or (names is None and typed is None and opcode not in LITERAL_OPCODES):
            lines.feed([m.group(0)], lineno)  # the line scanner decides
            lineno += 1
            comp, append, comp_name = lines.target()
            continue
        operand_shapes = None
        if opcode in LITERAL_OPCODES and typed is None:
            literal = (names if names is not None else lit).strip()
            if not literal_ok(literal):
                raise ScanMiss("literal")
            operands: tuple[str, ...] = ()
        elif typed is not None:  # `f32[2]{0} %a, s32[] %b`: each shape checked once per text
            literal = None
            pairs = TYPED_ITEM.findall(typed)
            operands = tuple(n for _, n in pairs)
            operand_shapes = tuple(lines.shape(t)[0] for t, _ in pairs)
        else:
            literal = None
            # (names hold no blank, comma or %: those are the separators' and the prefix's)
            bare = names.replace("%", "").replace(" ", "")
            operands = (tuple(bare.split(",")) if "\t" not in bare
                        else tuple(OPERAND_SEP.split(bare))) if names else ()
        # one string per distinct shape text and opcode: a dump repeats a few dozen of each
        shape_text, shape = shapes.get(shape_text) or lines.shape(shape_text)
        opcode = opcodes.setdefault(opcode, opcode)
        # positional: name, opcode, shape_text, operands, operand_shapes, _attrs, literal,
        # is_root, line, column, computation, _shape, attr_text, reader
        if operand_shapes is None:
            operand_shapes = _NONES[len(operands)] if len(operands) < 64 else (None,) * len(operands)
        append(Instruction(name, opcode, shape_text, operands, operand_shapes, None, literal, root is not None, lineno,
                           len(indent) + 1, comp_name, shape, attr_text, READER))
        lineno += 1
    rest = text[pos:].split("\n")
    lines.feed(rest, lineno)
    return lines.finish()
