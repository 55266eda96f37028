"""Shapes as XLA prints them, without loading the grammar.

Real dumps hold a few dozen shape texts, all in the printer's compact form:
`bf16[4,512]{1,0:T(8,128)(2,1)S(1)}` and tuples of such. `fast_shape` builds those
directly (the same Shape the grammar's `shape` rule gives, with the same checks) and
returns None for anything else, which then goes through the grammar. The element
types come from the grammar's TYPE_LB terminal; tests compare both routes on every
shape of the fixtures and the corpus.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from math import prod

from hloscope._speed import regex_cache
from hloscope.ir.shape import COMBINE_DIM, Layout, Shape

INT64_MAX = (1 << 63) - 1
_TILE_MAX = 1 << 31


@cache
def _array() -> re.Pattern[str]:
    from hloscope.parser.grammar.source import terminal_source

    types = terminal_source("TYPE_LB")[0].removesuffix(r"\[")
    return regex_cache.compile(
        rf"({types})\[((?:[0-9]+(?:,[0-9]+)*)?)\]"
        r"(?:\{(?=[0-9:])((?:[0-9]+(?:,[0-9]+)*)?)(?::((?:T(?:\((?:[0-9]+|\*)(?:,(?:[0-9]+|\*))*\))+"
        r"|[SE]\([0-9]+\))*))?\})?"
    )


# One piece of `shape, shape, ...`: loose, for the boundaries only (fast_shape then
# checks each piece; pieces joined by ", " are the whole text, so the split is sound).
_PIECE = regex_cache.compile(r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?|\((?:[^()]|\([^()]*\))*\))(?:, |$)")


_ITEM = regex_cache.compile(r"([TSE])((?:\([^()]*\))+)")


def _layout(m2m: str, items: str | None, rank: int) -> Layout | None:
    minor = tuple(int(x) for x in m2m.split(",")) if m2m else ()
    if minor and sorted(minor) != list(range(rank)):
        return None  # the grammar route reports it
    fields: dict = {"minor_to_major": minor}
    for key, args in _ITEM.findall(items or ""):
        groups = [g.split(",") for g in args[1:-1].split(")(")]
        if key == "T":
            tiles = tuple(tuple(COMBINE_DIM if a == "*" else int(a) for a in g) for g in groups)
            if any(a > _TILE_MAX for t in tiles for a in t):
                return None
            fields["tiles"] = tiles
        elif len(groups) != 1:
            return None
        else:
            fields["memory_space" if key == "S" else "element_size_bits"] = int(groups[0][0])
    return Layout(**fields)


@lru_cache(maxsize=65536)
def _one(text: str) -> Shape | None:
    """One array shape (memoized by text: a tuple of a thousand elements repeats a few
    dozen, and equal texts share one Shape, as parse_shape's do)."""
    m = _array().fullmatch(text)
    if m is None:
        return None
    etype, dims_text, m2m, items = m.groups()
    dims = tuple(int(d) for d in dims_text.split(",")) if dims_text else ()
    if any(d > INT64_MAX for d in dims) or prod(dims) > INT64_MAX:
        return None
    layout = None
    if m2m is not None:
        layout = _layout(m2m, items, len(dims))
        if layout is None:
            return None
    return Shape(etype, dims, (False,) * len(dims), layout)


def fast_shape(text: str) -> Shape | None:
    """The Shape of `text` in the printer's compact form, else None."""
    if not text.startswith("("):
        return _one(text)
    if not text.endswith(")"):
        return None
    body = text[1:-1]
    if not body:
        return Shape("tuple")
    elements = []
    for part in body.split(", "):  # a nested tuple leaves a part no array matches
        shape = _one(part)
        if shape is None:
            return None
        elements.append(shape)
    return Shape("tuple", elements=tuple(elements))


def fast_shape_list(text: str) -> list[Shape] | None:
    """The shapes of `shape, shape, ...` (a program shape's parameters) in the compact
    form, else None."""
    if not text:
        return []
    pieces = []
    pos = 0
    match = _PIECE.match
    while pos < len(text):
        m = match(text, pos)
        if m is None:
            return None
        pieces.append(m.group(1))
        pos = m.end()
    if text.endswith(", "):
        return None
    known: dict[str, Shape | None] = {}  # (parameter lists repeat a few shapes)
    out = []
    for piece in pieces:
        if piece not in known:
            known[piece] = fast_shape(piece)
        if known[piece] is None:
            return None
        out.append(known[piece])
    return out
