"""Strict mode on two cores: a large module is split at a computation boundary and the
grammar parses the second half in a spawned process while this one parses the first.

Only the parse itself is split; the halves' computations are joined into one module and
everything after (typing every value, validation) runs on the whole. Whenever the text
does not split cleanly, or either half fails, the caller parses the text whole: results
and error messages are always those of the whole-text parse.
"""

from __future__ import annotations

import os
import re

from hloscope.ir import Computation, Module

# Below this the worker's start-up (~0.4 s: interpreter, imports, grammar tables) costs
# more than half of the parse saves.
PARALLEL_MIN_CHARS = 1 << 20
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


def _second_half(text: str, path: str) -> list[Computation] | None:
    """The computations of a headerless half (in the worker), or None if it fails."""
    from hloscope.parser.strict import parse_strict

    try:
        modules = parse_strict(text, path)
    except Exception:  # noqa: BLE001 - the caller parses the whole text for the error
        return None
    return modules[0].computations if len(modules) == 1 else None


def _can_spawn() -> bool:
    """A spawned worker re-imports the main module: impossible when it came from stdin."""
    import sys

    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.exists(main_file)


def parse_halves(text: str, path: str) -> list[Module] | None:
    """parse_strict's modules, the halves parsed at once; None: parse the whole instead."""
    import hloscope

    if not hloscope.spawn_workers or len(text) < PARALLEL_MIN_CHARS or (os.cpu_count() or 1) < 2 \
            or not _can_spawn():
        return None
    split = split_point(text)
    if split is None:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from hloscope.parser.strict import parse_strict

    # Line numbers stay those of the whole file: the second half starts after as many
    # newlines as precede it (the grammar skips them).
    second = "\n" * text.count("\n", 0, split) + text[split:]
    # spawn, not fork: the caller may hold threads (JAX does) that fork would copy mid-flight
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        future = pool.submit(_second_half, second, path)
        try:
            first = parse_strict(text[:split], path)
        except Exception:  # noqa: BLE001
            future.cancel()
            return None
        try:
            rest = future.result()
        except Exception:  # noqa: BLE001 - a worker that died: parse the whole here
            return None
    if rest is None or len(first) != 1:
        return None
    module = first[0]
    module.computations.extend(rest)
    return first
