"""Strict mode on two cores (speed only: off with HLOSCOPE_PLAIN=1, see hloscope._speed).

A large module is split at a computation boundary and the grammar parses the second half
in a spawned process while this one parses the first.

Only the parse itself is split; the halves' computations are joined into one module and
everything after (typing every value, validation) runs on the whole. Whenever the text
does not split cleanly, or either half fails, the caller parses the text whole: results
and error messages are always those of the whole-text parse.
"""

from __future__ import annotations

from hloscope._speed.process import may_spawn
from hloscope.ir import Computation, Module
from hloscope.parser.split import split_point

# Below this the worker's start-up (~0.4 s: interpreter, imports, grammar tables) costs
# more than half of the parse saves.
PARALLEL_MIN_CHARS = 1 << 20


def _second_half(text: str, path: str) -> list[Computation] | None:
    """The computations of a headerless half (in the worker), or None if it fails."""
    from hloscope.parser.grammar.strict import parse_strict

    try:
        modules = parse_strict(text, path)
    except Exception:  # noqa: BLE001 - the caller parses the whole text for the error
        return None
    return modules[0].computations if len(modules) == 1 else None


def parse_halves(text: str, path: str) -> list[Module] | None:
    """parse_strict's modules, the halves parsed at once; None: parse the whole instead."""
    if len(text) < PARALLEL_MIN_CHARS or not may_spawn():
        return None
    split = split_point(text)
    if split is None:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from hloscope.parser.grammar.strict import parse_strict

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
