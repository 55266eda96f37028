"""Public entry points: parse HLO text or files into Modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lark.exceptions import UnexpectedInput

from hloscope.ir import Instruction, Module
from hloscope.parser.attrs import parse_attr
from hloscope.parser.errors import ParseError, from_lark
from hloscope.parser.scan import ScanMiss, scan_text
from hloscope.parser.strict import AttributeParseError, force_attributes, parse_strict


def _locate_attr(instr: Instruction, key: str, cause: Exception, path: str,
                 lines: list[str] | None = None) -> ParseError:
    src = lines[instr.line - 1] if lines and 0 < instr.line <= len(lines) else None
    col = instr.column
    if src is not None:
        at = src.find(f"{key}=")
        col = at + 1 if at >= 0 else col
    detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    return ParseError(f"malformed {key}= value: {detail}", path, instr.line, col, src)


def attr_hook(instr: Instruction, key: str, text: str) -> Any:
    """Installed as the IR's attribute parser: typed value, or a located error."""
    try:
        return parse_attr(key, text)
    except (UnexpectedInput, ValueError, IndexError, KeyError) as e:
        raise _locate_attr(instr, key, e, "") from e


def decode(data: bytes, path: str) -> str:
    """Bytes to text, refusing binary and empty input with a located error."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        col = nul - (data.rfind(b"\n", 0, nul) + 1) + 1
        raise ParseError("binary file (NUL byte); expected HLO text", path, line, col)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ParseError("invalid UTF-8; expected HLO text", path, line, col) from None
    if not text.strip():
        raise ParseError("empty file; expected 'HloModule'", path, 1, 1)
    return text


def parse(text: str, path: str = "<string>", strict: bool = False) -> list[Module]:
    """Parse HLO text into modules.

    The default path scans the skeleton and parses attribute values on first use;
    `strict=True` runs everything through the full grammar and types every
    attribute now. Both give the same IR; errors raise ParseError.
    """
    if not text.strip():
        raise ParseError("empty input; expected 'HloModule'", path, 1, 1)
    if not strict:
        try:
            return scan_text(text, path)
        except ScanMiss:
            pass  # the grammar decides: same IR, or a located error
    try:
        modules = parse_strict(text, path)
    except UnexpectedInput as e:
        raise from_lark(e, text, path) from None
    except RecursionError:
        raise ParseError("nesting too deep", path, 1, 1) from None
    if strict:
        try:
            force_attributes(modules)
        except AttributeParseError as e:
            raise _locate_attr(e.instr, e.key, e.cause, path, text.splitlines()) from None
    return modules


def load(path: str | Path, strict: bool = False) -> list[Module]:
    """Read and parse an HLO text file (served from the on-disk cache when unchanged)."""
    from hloscope import cache

    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ParseError(f"cannot read file: {e.strerror or e}", str(path), 0, 0) from None
    k = cache.key(data, "strict" if strict else "fast") if cache.enabled else ""
    modules = cache.get("modules", k) if k else None
    if modules is not None:
        for m in modules:
            m.path = str(path)
        return modules
    modules = parse(decode(data, str(path)), str(path), strict=strict)
    if k:
        cache.put("modules", k, modules)
    return modules
