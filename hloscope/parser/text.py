"""Bracket- and string-aware text helpers shared by the fast and strict paths."""

from __future__ import annotations

import re

# A quoted string, or a comment (group 1): comments are removed, strings kept.
_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|(/\*.*?\*/|//[^\n]*)', re.S)
# The only characters that matter for nesting: brackets, commas and strings.
_STRUCT = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[(){}\[\],"\']')
_OPEN = {"(": ")", "[": "]", "{": "}"}


def strip_comments(s: str) -> str:
    """Remove /*...*/ and //... comments that are not inside strings."""
    if "/" not in s:
        return s
    return _COMMENT.sub(lambda m: "" if m.group(1) else m.group(0), s)


def normalize(s: str) -> str:
    """The canonical text of a value: comments removed, outer blanks stripped."""
    return strip_comments(s).strip()


class Unbalanced(ValueError):
    """Brackets do not close within the text (e.g. a value continues on the next line)."""


def split_top(s: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of s[start:end] between commas at bracket depth 0."""
    end = len(s) if end is None else end
    spans: list[tuple[int, int]] = []
    stack: list[str] = []
    piece = start
    for m in _STRUCT.finditer(s, start, end):
        c = m.group()
        if len(c) > 1:
            continue
        if c in "\"'":
            raise ValueError(f"unterminated string at offset {m.start()}")
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c == ",":
            if not stack:
                spans.append((piece, m.start()))
                piece = m.end()
        elif not stack or stack.pop() != c:
            raise ValueError(f"unmatched {c!r} at offset {m.start()}")
    if stack:
        raise Unbalanced("unclosed bracket")
    spans.append((piece, end))
    return spans


def match_close(s: str, i: int) -> int:
    """Index of the bracket closing the one at s[i]."""
    stack: list[str] = []
    for m in _STRUCT.finditer(s, i):
        c = m.group()
        if len(c) > 1 or c == ",":
            continue
        if c in "\"'":
            raise ValueError(f"unterminated string at offset {m.start()}")
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif not stack or stack.pop() != c:
            raise ValueError(f"unmatched {c!r} at offset {m.start()}")
        elif not stack:
            return m.start()
    raise Unbalanced("unclosed bracket")
