"""The fast path: a line-oriented scan of the module skeleton.

Names, opcodes, operand names and attribute texts are cut out with regexes and a
bracket-aware splitter; shapes go through the grammar's `shape` rule (memoized:
real dumps repeat a few hundred shape strings), attribute values are parsed on
first use. Anything the scan does not recognise raises ScanMiss, and the caller
parses the file with the full grammar instead, which either succeeds (same IR)
or reports the error with its location.
"""

from __future__ import annotations

import re

from hloscope.ir import Computation, Instruction, Module
from hloscope.parser.attrs import parse_shape
from hloscope.parser.text import Unbalanced, match_close, split_top, strip_comments
from hloscope.parser.values import unquote

LITERAL_OPCODES = frozenset({"constant", "parameter"})

_NAME = r"%?[A-Za-z_][A-Za-z0-9_.\-]*"
_NAME_RE = re.compile(_NAME)
_INSTR_HEAD = re.compile(rf"(\s*)(ROOT\s+)?({_NAME})\s*=\s*")
_ARRAY_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?")
_OPCODE = re.compile(rf"\s+({_NAME})\(")
_COMP_HEAD = re.compile(rf"\s*(ENTRY\s+)?({_NAME})\s*(.*?)\s*\{{\s*$")
_ATTR = re.compile(rf"\s*({_NAME})\s*=\s*")
_MODULE = re.compile(rf"\s*HloModule\s+({_NAME})\s*(.*)$", re.S)
_STRING_ENTRY = re.compile(r'\s*(-?\d+)\s+("(?:[^"\\]|\\.)*")\s*$')
_RECORD_ENTRY = re.compile(r"\s*(-?\d+)\s+\{(.*)\}\s*$")
_RECORD_FIELD = re.compile(rf'\s*({_NAME})=("(?:[^"\\]|\\.)*"|-?\d+|{_NAME})')
_SECTIONS = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}


class ScanMiss(Exception):
    """The fast scan cannot handle this text; use the full grammar."""


def _attrs(s: str, start: int) -> dict[str, str]:
    """`, key=value, key=value` from s[start:] -> {key: value text}."""
    out: dict[str, str] = {}
    if s[start:].strip() == "":
        return out
    spans = split_top(s, start)
    if s[spans[0][0] : spans[0][1]].strip():
        raise ScanMiss("text before the first attribute")
    for a, b in spans[1:]:
        m = _ATTR.match(s, a, b)
        if not m:
            raise ScanMiss("not key=value")
        value = s[m.end() : b].strip()
        if not value:
            raise ScanMiss("empty attribute value")
        out[m.group(1).lstrip("%")] = value
    return out


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
    elif inner.strip():
        pieces = inner.split(",") if not any(c in inner for c in "([{") else [
            inner[a:b] for a, b in split_top(inner)
        ]
        for piece in pieces:
            piece = piece.strip()
            shape_part, _, name = piece.rpartition(" ")
            if not _NAME_RE.fullmatch(name):
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
        attrs=_attrs(s, close + 1),
        literal=literal,
        is_root=head.group(2) is not None,
        line=line,
        column=len(head.group(1)) + 1,
        computation=computation,
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


def _record(body: str) -> dict[str, object]:
    fields: dict[str, object] = {}
    pos = 0
    for m in _RECORD_FIELD.finditer(body):
        if body[pos : m.start()].strip(" ,"):
            raise ScanMiss("record")
        value = m.group(2)
        if value.startswith('"'):
            fields[m.group(1)] = unquote(value)
        elif value[0] in "-0123456789":
            fields[m.group(1)] = int(value)
        else:
            fields[m.group(1)] = value.lstrip("%")
        pos = m.end()
    if body[pos:].strip(" ,"):
        raise ScanMiss("record")
    return fields


def scan_text(text: str, path: str) -> list[Module]:
    """Scan a whole file into modules; raises ScanMiss when unsure."""
    modules: list[Module] = []
    module: Module | None = None
    comp: Computation | None = None
    section: str | None = None
    lines = text.split("\n")
    n = len(lines)
    k = 0
    while k < n:
        lineno = k + 1
        s = lines[k]
        k += 1
        if "/" in s:
            s = strip_comments(s)
        if not s or s.isspace():
            continue
        if comp is not None:
            stripped = s.strip()
            if stripped.startswith("}"):
                comp.attrs = _attrs(stripped, 1)
                module.computations.append(comp)  # type: ignore[union-attr]
                comp = None
                continue
            while True:
                try:
                    instr = scan_instruction(s, lineno, comp.name)
                    break
                except Unbalanced:
                    if k >= n:
                        raise ScanMiss("unclosed bracket") from None
                    nxt = lines[k]
                    k += 1
                    s = s + "\n" + (strip_comments(nxt) if "/" in nxt else nxt)
                except ValueError as e:
                    raise ScanMiss(str(e)) from None
            comp.instructions.append(instr)
            continue
        stripped = s.strip()
        if stripped.startswith("HloModule"):
            m = _MODULE.match(s)
            if not m:
                raise ScanMiss("module header")
            module = Module(m.group(1).lstrip("%"), path=path, line=lineno)
            try:
                module.attrs = _attrs(s, m.start(2))
            except ValueError as e:
                raise ScanMiss(str(e)) from None
            modules.append(module)
            section = None
            continue
        if module is None:
            if not stripped.endswith("{"):
                raise ScanMiss("text before HloModule")
            module = Module("", path=path, line=lineno)  # headerless: named below
            modules.append(module)
        if stripped in _SECTIONS:
            section = stripped
            continue
        if stripped.endswith("{"):
            m = _COMP_HEAD.match(s)
            if not m or m.group(2) in _SECTIONS:
                raise ScanMiss("computation header")
            try:
                params, result = _signature(m.group(3))
            except ValueError as e:
                raise ScanMiss(str(e)) from None
            comp = Computation(
                m.group(2).lstrip("%"), is_entry=m.group(1) is not None, params=params,
                result_shape_text=result, line=lineno,
            )
            section = None
            continue
        if section in ("FileNames", "FunctionNames"):
            m = _STRING_ENTRY.match(s)
            if not m:
                raise ScanMiss("string entry")
            table = module.file_names if section == "FileNames" else module.function_names
            table[int(m.group(1))] = unquote(m.group(2))
            continue
        if section in ("FileLocations", "StackFrames"):
            m = _RECORD_ENTRY.match(s)
            if not m:
                raise ScanMiss("record entry")
            table = module.file_locations if section == "FileLocations" else module.stack_frames
            table[int(m.group(1))] = _record(m.group(2))
            continue
        raise ScanMiss("unrecognised line")
    if comp is not None:
        raise ScanMiss("unclosed computation")
    if not modules:
        raise ScanMiss("no module")
    for m in modules:
        if not m.name and m.entry is not None:
            m.name = "module_" + m.entry.name
    return modules
