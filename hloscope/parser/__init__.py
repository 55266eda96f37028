"""Text -> IR. `parse`/`load` are the entry points; the grammar is grammar/hlo.lark."""

from __future__ import annotations

from hloscope.ir import instruction as _instruction
from hloscope.parser.attrs import parse_attr, parse_shape
from hloscope.parser.errors import ParseError
from hloscope.parser.load import attr_hook, load, parse
from hloscope.parser.patterns import seek_attrs, split_attr_text

_instruction.shape_parser = parse_shape
_instruction.attr_parser = attr_hook
_instruction.attr_splitter = split_attr_text
_instruction.attr_seeker = seek_attrs

__all__ = ["ParseError", "load", "parse", "parse_attr", "parse_shape"]
