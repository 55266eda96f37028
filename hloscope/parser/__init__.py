"""Text -> IR. `parse`/`load` are the entry points; grammar/hlo.lark is the specification.

Two routes give the same IR: `fast/` (a line scanner and compact readers, each proven
equal to the grammar by differential tests) and `grammar/` (the Lark grammar itself,
strict mode, and the fallback for anything the fast route does not take).

The scanner and the typed-value readers load on first use: a command answered from the
cache, or one that only needs `ParseError`, compiles none of their patterns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hloscope.parser.errors import ParseError
from hloscope.parser.load import load, parse

if TYPE_CHECKING:
    from hloscope.parser.attrs import parse_attr, parse_shape


def __getattr__(name: str) -> Any:
    if name not in ("parse_attr", "parse_shape"):
        raise AttributeError(f"module 'hloscope.parser' has no attribute {name!r}")
    from hloscope.parser import attrs

    return getattr(attrs, name)


__all__ = ["ParseError", "load", "parse", "parse_attr", "parse_shape"]
