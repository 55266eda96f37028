"""Bracket- and string-aware text helpers shared by the fast and strict paths."""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Sequence
from typing import Any

from hloscope._speed import core_function, regex_cache

_BREAK = regex_cache.compile("\n")

# A quoted string (group 1), or a comment: strings kept (`\1`), comments removed (an
# unmatched group stands for nothing), with no Python call per match.
_COMMENT = regex_cache.compile(r'("[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\')|/\*.*?\*/|//[^\n]*',
                      re.S)
_BARE_COMMENT = regex_cache.compile(r'/\*.*?\*/|//[^\n]*', re.S)
# Jump to the next character that matters for nesting, skipping plain text and whole
# strings in C: group 1 is a bracket, a comma (depth 0 only), or a quote that never closes.
_STR = r'"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\''
STRING = regex_cache.compile(_STR)  # a closed double- or single-quoted string
# A bracket pair holding no bracket and no quote, passed over whole: nothing in it can
# split a list or unbalance one (`bf16[512,8]{1,0}` is two such, not eight stops)
_LEAF = r'\([^(){}\[\]"\']*\)|\[[^(){}\[\]"\']*\]|\{[^(){}\[\]"\']*\}'
# (unrolled loops: linear time, no nested quantifiers to backtrack through; each
# alternative starts with its own character, which the runs between them exclude)
# (the group is optional: text that ends in a closed string has no next character)
_NEXT_TOP = regex_cache.compile(r'[^(){}\[\],"\']*(?:(?:' + _STR + '|' + _LEAF + r')[^(){}\[\],"\']*)*'
                       r'([(){}\[\],"\'])?')
_NEXT_IN = regex_cache.compile(r'[^(){}\[\]"\']*(?:(?:' + _STR + '|' + _LEAF + r')[^(){}\[\]"\']*)*'
                      r'([(){}\[\]"\'])?')
_OPEN = {"(": ")", "[": "]", "{": "}"}


def strip_comments(s: str) -> str:
    """Remove /*...*/ and //... comments that are not inside strings (on a long line by the
    compiled core where it is built and models the line: a header's layout list, 130 kB
    with a comment per parameter, 6 ms by the patterns)."""
    if "/*" not in s and "//" not in s:
        return s
    if len(s) > 512 and (core := core_function("comments_out")) is not None:
        out = core(s)
        if out is not None:
            return out
    if '"' not in s and "'" not in s:  # (no string to keep: the comments alone, found in C)
        return _BARE_COMMENT.sub("", s)
    return _COMMENT.sub(r"\1", s)


def normalize(s: str) -> str:
    """The canonical text of a value: comments removed, outer blanks stripped."""
    return strip_comments(s).strip()


_BRACKET = regex_cache.compile(r"[(\[{)\]}]")
_INNERMOST = regex_cache.compile(r"[(\[{][^(){}\[\]]*[)\]}]")  # any opener, any closer: depth counts so


def nesting_beyond(s: str, limit: int) -> int | None:
    """Offset of the first bracket nested deeper than `limit` in s, or None (brackets in
    strings count too, and a closer with nothing open counts for nothing: a bound). The
    compiled core walks it where it is built (a tuple of a thousand elements is a line of
    tens of kilobytes, which the passes below took a millisecond over)."""
    if s.count("(") + s.count("[") + s.count("{") <= limit:
        return None
    core = core_function("nesting_beyond")
    if core is not None:
        return core(s, limit)
    return walk_nesting(s, limit)


def walk_lines_with(text: str, needle: str) -> list[tuple[int, str]]:
    """The lines holding `needle` (no line break in it), each once, in order: (1-based
    number, text without its line break). The plain route of the core's lines_with, and its
    oracle in the tests."""
    out: list[tuple[int, str]] = []
    at, line, counted = (text.find(needle) if needle and "\n" not in needle else -1), 1, 0
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        line += text.count("\n", counted, start)
        counted = start
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        out.append((line, text[start:end]))
        at = text.find(needle, end)
    return out


def walk_nesting(s: str, limit: int) -> int | None:
    """nesting_beyond in Python (the plain route, and the core's oracle in the tests)."""
    # (in C first: each pass takes out the innermost pairs, one level; none left within
    # a few passes is no deeper than that; anything else is counted bracket by bracket)
    t = s
    for _ in range(min(limit, 16)):
        t = _INNERMOST.sub("", t)
        if not _BRACKET.search(t):
            return None
    depth = 0
    for m in _BRACKET.finditer(s):
        if m.group() in "([{":
            depth += 1
            if depth > limit:
                return m.start()
        elif depth:
            depth -= 1
    return None


class Unbalanced(ValueError):
    """Brackets do not close within the text (e.g. a value continues on the next line)."""


def split_top(s: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of s[start:end] between commas at bracket depth 0."""
    end = len(s) if end is None else end
    spans: list[tuple[int, int]] = []
    stack: list[str] = []
    piece = pos = start
    while True:
        m = (_NEXT_IN if stack else _NEXT_TOP).match(s, pos, end)
        if m is None or m.group(1) is None:
            break
        c = m.group(1)
        i = m.start(1)
        pos = i + 1
        if c in "\"'":
            raise ValueError(f"unterminated string at offset {i}")
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c == ",":
            spans.append((piece, i))
            piece = pos
        elif not stack or stack.pop() != c:
            raise ValueError(f"unmatched {c!r} at offset {i}")
    if stack:
        raise Unbalanced("unclosed bracket")
    spans.append((piece, end))
    return spans


def match_close(s: str, i: int) -> int:
    """Index of the bracket closing the one at s[i]."""
    stack = [_OPEN[s[i]]]
    pos = i + 1
    while True:
        m = _NEXT_IN.match(s, pos)
        if m is None or m.group(1) is None:
            raise Unbalanced("unclosed bracket")
        c = m.group(1)
        j = m.start(1)
        pos = j + 1
        if c in "\"'":
            raise ValueError(f"unterminated string at offset {j}")
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif stack.pop() != c:
            raise ValueError(f"unmatched {c!r} at offset {j}")
        elif not stack:
            return j


def unquote(s: str) -> str:
    """A double- or single-quoted HLO string literal (C escapes) as text."""
    body = s[1:-1]
    if "\\" not in body:
        return body
    return _unescape(body)


def _unescape(body: str) -> str:
    out: list[str] = []
    i = 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in simple:
                out.append(simple[nxt])
                i += 2
                continue
            if nxt == "x":
                j = i + 2
                while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                    j += 1
                out.append(chr(int(body[i + 2 : j] or "0", 16)))
                i = j
                continue
            out.append(nxt)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def scalar_text(kind: str, text: str) -> Any:
    """A single-token value by its grammar terminal: int, float, string, or a
    name/keyword as text."""
    if kind == "INT":
        return int(text)
    if kind == "FLOAT":
        return float(text)
    if kind == "NEG_SPECIAL":
        return float(text.split("(")[0])
    if kind in ("STRING", "SQSTRING"):
        return unquote(text)
    if kind == "NAME":
        return text.lstrip("%")
    return text


def line_breaks(text: str) -> array:
    """The offsets of the text's `\n`s: found by the compiled core for an ASCII text (a
    30 MB dump's 190,000 breaks in a few ms; a match object each costs 30 ms), else here."""
    from hloscope._speed import native

    core = native()
    if core is not None and hasattr(core, "line_breaks") and text.isascii():
        out = array("q")
        out.frombytes(core.line_breaks(text))
        if sys.byteorder != "little":
            out.byteswap()
        return out
    return array("q", (m.start() for m in _BREAK.finditer(text)))


class Lines(Sequence[str]):
    """A text's lines by index, as `text.split("\\n")` numbers them (the parser's line
    numbers; a final line break ends the last line, a `\\r` before a break is dropped),
    found through the offsets of the breaks: the list of a large dump's 50,000 line
    strings costs several MB, and a lint looks at a few hundred lines."""

    __slots__ = ("_breaks", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._breaks: array | None = None

    def _ends(self) -> array:
        if self._breaks is None:
            self._breaks = line_breaks(self.text)
        return self._breaks

    def __len__(self) -> int:
        breaks = self._ends()
        return len(breaks) + (0 if self.text.endswith("\n") or not self.text else 1)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("line index out of range")
        breaks = self._ends()
        start = breaks[index - 1] + 1 if index else 0
        end = breaks[index] if index < len(breaks) else len(self.text)
        line = self.text[start:end]
        return line[:-1] if line.endswith("\r") else line
