"""Public entry points: parse HLO text or files into Modules."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hloscope._speed.nogc import no_cyclic_gc
from hloscope.parser.errors import ParseError, from_lark
from hloscope.parser.files import MAX_NESTING, read, read_input
from hloscope.parser.text import nesting_beyond

if TYPE_CHECKING:
    from collections.abc import Callable

    from hloscope.ir import Module
# (the scanner, the reader and the checks load with the first parse: importing the
# package, as a run answered from the cache does, compiles none of their patterns)

# Parsing, typing and printing a shape recurse once or twice per nesting level: the
# interpreter's limit (1000 by default) is raised to cover MAX_NESTING (a deeper text is
# refused first, with its place). Pickling such a module for the cache works too (tested).
sys.setrecursionlimit(max(sys.getrecursionlimit(), 16 * MAX_NESTING))


def _check_nesting(text: str, path: str) -> None:
    """Refuse bracket nesting deeper than MAX_NESTING (a deep-tuple bomb), with its place."""
    unspaced = text.replace(" ", "")  # (a quick test before counting every bracket)
    if "(" * (MAX_NESTING + 1) not in unspaced and "{" * (MAX_NESTING + 1) not in unspaced:
        return
    at = nesting_beyond(text, MAX_NESTING)
    if at is not None:
        line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        raise ParseError(f"brackets nested deeper than {MAX_NESTING} "
                         "(HLOSCOPE_MAX_NESTING raises the limit)", path, line, col)


def _strings_with_bad_bytes(data: bytes, first: UnicodeDecodeError, path: str) -> str:
    """Text whose only invalid UTF-8 is inside quoted strings (an op_name or a file name
    with a stray byte; XLA's own parser takes a string's bytes as they are): the bytes
    become U+FFFD. Invalid UTF-8 anywhere else is a located error with its line."""
    at = first.start
    while True:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        line = data[start:end if end >= 0 else len(data)]
        quotes = line[: at - start].replace(b'\\"', b"").count(b'"')
        if quotes % 2 == 0:  # not inside a string
            text_line = line.decode("utf-8", errors="replace")
            col = len(line[: at - start].decode("utf-8", errors="replace")) + 1
            raise ParseError("invalid UTF-8 outside a quoted string; expected HLO text", path,
                             data.count(b"\n", 0, at) + 1, col, source_line=text_line)
        try:
            data[at:].decode("utf-8")
            break
        except UnicodeDecodeError as e:
            at += e.start if e.start > 0 else 1
            if at >= len(data):
                break
    return data.decode("utf-8", errors="replace")


def decode(data: bytes, path: str) -> str:
    """Bytes to HLO text, refusing empty input and what is not HLO with a located error.
    Other inputs are recognised (hloscope.parser.inputs): a binary HloProto or StableHLO
    text becomes HLO text through jaxlib; XLA's buffer-assignment and memory reports and
    XProf's JSON are refused with a message saying what they are."""
    nul = data.find(b"\0")
    if nul >= 0 or data[:2] == b"\x1f\x8b":
        from hloscope.parser.inputs import classify_binary

        try:
            return classify_binary(data, path)
        except ParseError as e:
            if nul < 0 or "cannot read as an HloProto" not in e.message:
                raise
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        col = nul - (data.rfind(b"\n", 0, nul) + 1) + 1
        raise ParseError("binary file (NUL byte); expected HLO text", path, line, col)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        text = _strings_with_bad_bytes(data, e, path)
    if not text or text.isspace():  # (no stripped copy of a large file)
        raise ParseError("empty file; expected 'HloModule'", path, 1, 1)
    if not text.lstrip()[:9] == "HloModule":
        from hloscope.parser.inputs import classify_text

        return classify_text(text, path)
    return text


def parse(text: str, path: str = "<string>", strict: bool = False) -> list[Module]:
    """Parse HLO text into modules.

    The default path scans the skeleton and parses attribute values on first use;
    `strict=True` runs everything through the full grammar and types every
    attribute now. Both give the same IR; errors raise ParseError. The cyclic garbage
    collector is paused meanwhile (see hloscope._speed.nogc).
    """
    if "\r" in text:  # (Windows and old Mac line ends: a `//` comment ends at either, as in XLA)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    with no_cyclic_gc():
        return _parse(text, path, strict)


def _parse(text: str, path: str, strict: bool, scan: bool = True) -> list[Module]:
    """parse; `scan=False`: the fast scan missed already (straight to the grammar)."""
    from hloscope.parser.reader import locate_attr
    from hloscope.parser.validate import validate

    if not text or text.isspace():
        raise ParseError("empty input; expected 'HloModule'", path, 1, 1)
    if not strict and scan:  # (the scan leaves lines nested deeper than MAX_NESTING to the grammar)
        modules, answer = _scanned_beside(text, path)
        if modules is not None:
            return _checked(modules, text, strict, answer)
    _check_nesting(text, path)
    from lark.exceptions import UnexpectedInput, VisitError

    from hloscope.parser.attrs import AttributeParseError, force_attributes
    from hloscope.parser.grammar.halves import parse_halves
    from hloscope.parser.grammar.strict import parse_strict
    from hloscope.parser.tuple_refs import expand

    try:
        modules = parse_halves(text, path) or parse_strict(text, path)
        expand(modules, text, path)
    except ParseError as e:
        e.path = path if e.path in ("", "<string>") else e.path
        raise
    except UnexpectedInput as e:
        raise from_lark(e, text, path) from None
    except VisitError as e:  # a value the grammar accepts but that means nothing (T(%x))
        meta = getattr(getattr(e, "obj", None), "meta", None)
        line, col = (getattr(meta, "line", 1), getattr(meta, "column", 1)) if meta else (1, 1)
        lines = text.split("\n")
        raise ParseError(str(e.orig_exc), path, line or 1, col or 1,
                         lines[line - 1] if line and 0 < line <= len(lines) else None) from None
    except RecursionError:
        raise ParseError(f"nesting too deep (over {MAX_NESTING} levels)", path, 1, 1) from None
    if strict:
        try:
            force_attributes(modules)
        except AttributeParseError as e:
            raise locate_attr(e.instr, e.key, e.cause, path, text.splitlines(),
                               value=e.instr.attrs.get(e.key)) from None
        _known_keys(modules, text, path)

    validate(modules, text, strict)
    return _finished(modules)


def _scanned(text: str, path: str) -> list[Module] | None:
    """The fast scan's modules, unchecked; None when the grammar must decide (same IR, or
    a located error)."""
    from hloscope.parser.fast.native import available, scan_native
    from hloscope.parser.fast.scan import ScanMiss, scan_text
    from hloscope.parser.reader import lark_errors
    from hloscope.parser.tuple_refs import expand

    try:
        native = available()  # (the compiled line reader: the same modules, faster)
        modules = scan_native(native, text, path) if native is not None else scan_text(text, path)
    except (ScanMiss, ValueError, KeyError, IndexError, TypeError, *lark_errors()):
        return None
    expand(modules, text, path)  # (`%x#i` operands: the get-tuple-elements they stand for)
    return modules


def digest_structures(on: bool = True) -> None:
    """Ask the parses of this process for each computation's structure digest, which the
    compiled checks make (Computation.structure: the cost model shares the costs of
    computations alike, an unrolled model's repeated fusions); the commands whose cost
    model works out fused computations ask."""
    from hloscope.parser.fast.beside import DIGESTS

    DIGESTS["on"] = on


def _digested(modules: list[Module], data: bytes | None, text: str | None, path: str) -> None:
    """Cached modules, given their structure digests where this process asks for them and
    they were kept without (a command that does not ask parsed them): from the compiled
    checks' pass over the text, set where it passes them (hloscope.parser.fast.checks)."""
    from hloscope.parser.fast.beside import DIGESTS, compiled_checks
    from hloscope.parser.fast.checks import passed

    if not DIGESTS["on"] or any(c.structure is not None for m in modules for c in m.computations):
        return
    if text is None:
        text = decode(data, path)
    found = compiled_checks(text, 0, True)
    if found is not None:
        with no_cyclic_gc():
            passed(modules, text, found)


def _scanned_beside(text: str, path: str,
                    beside: bool = True) -> tuple[list[Module] | None, tuple | None]:
    """_scanned, with the compiled checks of the text run beside the scan on a thread where
    this process may use a second core (and `beside`): (the modules or None, the checks'
    answer or None; without the thread validate_scanned runs them after the scan). Their
    memory then stays in the thread's malloc arena (19 MB on a 31 MB dump), so lint, whose
    checks go to a forked child anyway, does not ask for it."""
    from hloscope._speed.process import may_help
    from hloscope.parser.fast.beside import Beside
    from hloscope.parser.fast.native import available

    beside = Beside(text) if beside and may_help() and available() is not None else None
    modules = _scanned(text, path)
    return modules, beside.answer() if beside is not None else None


def _checked(modules: list[Module], text: str, strict: bool,
             answer: tuple | None = None) -> list[Module]:
    """Scanned modules, checked and finished (`answer`: the compiled checks', when they
    ran beside the scan)."""
    from hloscope.parser.fast.checks import validate_scanned
    from hloscope.parser.validate import validate

    if strict:
        validate(modules, text, strict)
    else:
        validate_scanned(modules, text, answer)
    return _finished(modules)


def _finished(modules: list[Module]) -> list[Module]:
    """What XLA's parser adds after reading: the computations async shorthand wraps."""
    from hloscope.parser.asyncs import wrap_async_shorthand

    for module in modules:
        wrap_async_shorthand(module)
    return modules


def _known_keys(modules: list[Module], text: str, path: str) -> None:
    """Strict mode: an attribute XLA's parser does not know is an error, as XLA makes it."""
    from hloscope.parser.attrs import KNOWN_KEYS

    for module in modules:
        for comp in module.computations:
            for instr in comp.instructions:
                for key in instr.attrs:
                    if key not in KNOWN_KEYS:
                        lines = text.split("\n")
                        src = lines[instr.line - 1] if 0 < instr.line <= len(lines) else None
                        err = ParseError(f"unexpected attribute \"{key}\"", path, instr.line,
                                         instr.column, src, attr_key=key)
                        if src is not None:
                            err.attach_source(src)
                        raise err


def check_values(modules: list[Module], lines: list[str], path: str) -> None:
    """Type every attribute value now (strict mode does so while parsing; `parse` and
    `lint` do so after a default parse, so that both accept exactly the same files);
    memoized by text, so a dump's repeated values cost once."""
    from hloscope.parser.attrs import AttributeParseError, force_attributes
    from hloscope.parser.reader import locate_attr

    try:
        force_attributes(modules)
    except AttributeParseError as e:
        raise locate_attr(e.instr, e.key, e.cause, path, lines,
                          value=e.instr.attrs.get(e.key)) from None


def load(path: str | Path, strict: bool = False, data: bytes | None = None,
         text: str | None = None) -> list[Module]:
    """Read and parse an HLO text file (served from the on-disk cache when unchanged);
    `data` (and `text`, decoded by `decode`): the file when the caller has read it."""
    from hloscope import cache

    data, text = _read(path, data, text)
    k, modules = _cached(path, data, strict, text=text)
    if modules is not None:
        _digested(modules, data, text, str(path))
        return modules
    modules = parse(text if text is not None else decode(data, str(path)), str(path), strict=strict)
    if k:
        cache.put("modules", k, modules, background=True)
    return modules


def _read(path: str | Path, data: bytes | None,
          text: str | None) -> tuple[bytes | None, str | None]:
    """(the file's bytes, its text): the caller's where given; else its text decoded from
    a map of it where it is plain HLO text (read_text: no bytes made), else its bytes."""
    return read_input(path) if data is None and text is None else (data, text)


def _core_scans() -> bool:
    """Whether the compiled core scans the default parse: then a module is not kept in the
    cache, since reading one back took longer than parsing the file (best of 3: Mixtral
    130 against 87 ms, the 31 MB step 401 against 364 ms); strict mode's grammar and the
    plain route still keep theirs. (Asked before the parse: a module read back from the
    cache imports no scanner.)"""
    from hloscope._speed import scanner

    return scanner() is not None


def _cached(path: str | Path, data: bytes | None, strict: bool, digest: bytes | None = None,
            text: str | None = None) -> tuple[str, list[Module] | None]:
    """(the cache key of the file's modules, "" when the cache is off or keeps no modules
    for this parse (_core_scans); the modules kept under it, named after `path`, or None);
    `digest`: cache.digest(data), when made; the file is `data`, else `text` (decoded
    from it)."""
    from hloscope import cache

    if not cache.is_enabled() or (not strict and _core_scans()):
        return "", None
    if digest is None:
        digest = cache.digest_read(data, text)
    k = cache.key(digest, "strict" if strict else "fast")
    modules = cache.get("modules", k) if k else None
    for m in modules or ():
        m.path = str(path)
    return k, modules


def load_checked_ahead(path: str | Path, data: bytes | None = None, text: str | None = None,
                       more: Callable[[list[Module]], None] | None = None, strict: bool = False,
                       digest: bytes | None = None) -> tuple[list[Module], Callable[[], None]]:
    """`load`, then `more` (such as check_values), where in the default mode the checks
    after the scan (validate, then `more`) run in a forked child (hloscope._speed.fork.Ahead)
    while the caller works on the modules. Returns the modules and `settle`, which the
    caller must call before it reports anything about them: it returns when the checks
    passed, else raises their located error (running them again here: the same error as
    `load`). The modules go to the cache only once settled. Where the checks cannot go
    ahead (strict mode, no fork, the grammar route, async shorthand to wrap, a cached
    module) they run first, as in `load`, and settle does nothing."""
    from hloscope import cache
    from hloscope.parser.asyncs import needs_wrapping

    data, text = _read(path, data, text)
    k, modules = _cached(path, data, strict, digest, text)
    if modules is not None:
        _digested(modules, data, text, str(path))
    else:
        if text is None:
            text = decode(data, str(path))
        with no_cyclic_gc():
            scanned, answer = ((None, None) if strict
                               else _scanned_beside(text, str(path), more is None))
        if scanned is not None and not any(needs_wrapping(m) for m in scanned):
            if more is None and answer is not None and _passed(scanned, text, answer):
                if k:  # (the compiled checks answered: no child to wait for)
                    cache.put("modules", k, scanned, background=True)
                return scanned, _settled
            return scanned, _ahead(scanned, text, k, more, answer)
        with no_cyclic_gc():  # checked now, as parse checks them
            modules = (_parse(text, str(path), strict, scan=False) if scanned is None
                       else _checked(scanned, text, strict, answer))
        if k:
            cache.put("modules", k, modules, background=True)
    if more is not None:
        more(modules)
    return modules, _settled


def _passed(modules: list[Module], text: str, answer: tuple) -> bool:
    """Whether the compiled checks' answer passes the modules (validate would)."""
    from hloscope.parser.fast.checks import passed

    with no_cyclic_gc():
        return passed(modules, text, answer)


def _ahead(modules: list[Module], text: str, k: str, more: Callable[[list[Module]], None] | None,
           answer: tuple | None = None) -> Callable[[], None]:
    """settle() of scanned modules whose checks go to a child now (`answer`: the compiled
    checks', when they ran beside the scan)."""
    from hloscope import cache
    from hloscope._speed.fork import Ahead
    from hloscope.parser.fast.checks import validate_scanned

    def checks() -> None:
        validate_scanned(modules, text, answer)
        if more is not None:
            more(modules)

    ahead = Ahead(checks)

    def settle() -> None:
        if not ahead.passed():
            checks()  # raises the error the child met (else the child died: go on)
        if k:
            cache.put("modules", k, modules, background=True)

    return settle


def _settled() -> None:
    """settle() of modules checked already."""
