"""Text -> IR. `parse`/`load` are the entry points; grammar/hlo.lark is the specification.

Two routes give the same IR: `fast/` (a line scanner and compact readers, each proven
equal to the grammar by differential tests) and `grammar/` (the Lark grammar itself,
strict mode, and the fallback for anything the fast route does not take).
"""

from __future__ import annotations

from hloscope.parser.attrs import parse_attr, parse_shape
from hloscope.parser.errors import ParseError
from hloscope.parser.load import load, parse

__all__ = ["ParseError", "load", "parse", "parse_attr", "parse_shape"]
