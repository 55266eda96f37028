"""Loads grammar/hlo.lark once (LALR, contextual lexer) for every start rule."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from hloscope.resources import grammar_path

if TYPE_CHECKING:
    from lark import Lark

START_RULES = [
    "hlo_file", "shape", "layout", "replica_groups", "window", "slice_ranges",
    "int_list", "int_list_list", "name_list", "bool_list", "sharding", "record",
    "program_shape", "shape_list", "dim_labels", "padding", "generic", "computation",
]


@cache
def lark_parser(positions: bool = True) -> Lark:
    """The LALR tables take ~0.15 s to build; Lark caches them in the temp directory,
    keyed by the grammar's hash, so later runs load them in ~0.02 s.

    `positions=False`: the same grammar and tables, without the start and end of every
    tree node (a third of the parse time over a whole file; tokens keep theirs)."""
    from lark import Lark

    options = dict(parser="lalr", lexer="contextual", start=START_RULES,
                   propagate_positions=positions, maybe_placeholders=True)
    text = _grammar_text()
    try:
        return Lark(text, cache=True, **options)
    except OSError:  # no writable temp directory: build every time
        return Lark(text, **options)


@cache
def _grammar_text() -> str:
    return grammar_path().read_text(encoding="utf-8")


@cache
def terminal_source(name: str) -> tuple[str, str]:
    """(pattern, flags) of a `NAME[.priority]: /pattern/flags` terminal, read from the
    grammar text itself (no Lark import: the fast path needs a few terminals only)."""
    m = re.search(rf"^{re.escape(name)}(?:\.-?[0-9]+)?:[ \t]*/(.*)/([imslux]*)[ \t]*$",
                  _grammar_text(), re.M)
    if m is None:
        raise KeyError(f"terminal {name} is not a /regex/ in hlo.lark")
    return m.group(1), m.group(2)


@cache
def terminal_regex(name: str) -> re.Pattern[str]:
    """A grammar terminal as a compiled regex, for the fast path's token checks."""
    pattern, flags = terminal_source(name)
    value = 0
    for f in flags:
        value |= getattr(re, f.upper())
    return re.compile(pattern, value)
