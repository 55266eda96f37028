"""Where a module's text splits in two at a computation boundary near its middle (for the
two-process parse and count in hloscope.parser.grammar.halves and hloscope.stats.halves)."""

from __future__ import annotations

import re

# A closing brace alone on its line, followed by a blank line or a computation header.
_BOUNDARY = re.compile(r"\n\}[ \t]*\n(?=[ \t]*\n|[ \t]*(?:ENTRY[ \t]+)?%?[A-Za-z_][\w.\-]*[ \t]*[({])")
_MODULE_LINE = re.compile(r"^[ \t]*HloModule\b", re.M)


def split_point(text: str, by_lines: bool = False) -> int | None:
    """Where the second half starts: just after the computation's closing line nearest the
    middle character (the middle line when `by_lines`); None when there is no such line or
    the nearest leaves less than a sixth on one side (a module whose entry computation
    holds most of it, say)."""
    header = _only_header(text)
    if header is None:
        return None  # several modules (or none): not worth the care
    middle = _middle_line(text) if by_lines else len(text) // 2
    candidates = [m.end() for m in (_last_boundary(text, header, middle), _BOUNDARY.search(text, middle))
                  if m is not None and m.end() > header]
    if not candidates:
        return None
    split = min(candidates, key=lambda at: abs(at - middle))
    if by_lines:
        before, total = text.count("\n", 0, split), text.count("\n")
        balanced = total // 6 <= before <= total - total // 6
    else:
        balanced = len(text) // 6 <= split <= len(text) - len(text) // 6
    return split if balanced else None


def _last_boundary(text: str, start: int, end: int) -> re.Match[str] | None:
    """The last boundary between start and end (the pattern searches forward only)."""
    found = None
    for found in _BOUNDARY.finditer(text, start, end):  # noqa: B007 - the last one is kept
        pass
    return found


def _middle_line(text: str, pieces: int = 64) -> int:
    """About where the middle line starts (the line counts of 64 pieces, interpolated)."""
    half = text.count("\n") // 2
    step = len(text) // pieces + 1
    seen = 0
    for start in range(0, len(text), step):
        n = text.count("\n", start, start + step)
        if seen + n >= half:
            return start + (step * (half - seen)) // max(n, 1)
        seen += n
    return len(text) // 2


def _only_header(text: str) -> int | None:
    """Where the one `HloModule` line starts; None when there are several, or none."""
    if text.count("HloModule") == 1:  # (in C; the pattern below walks every line: 20 ms)
        m = _MODULE_LINE.search(text, text.rfind("\n", 0, text.find("HloModule")) + 1)
        return m.start() if m is not None else None
    headers = [m.start() for m in _MODULE_LINE.finditer(text)]
    return headers[0] if len(headers) == 1 else None
