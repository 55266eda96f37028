"""The ValueReader the parser gives every instruction it builds: shapes and typed
attribute values read from their text on first use (hloscope.ir.instruction)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hloscope._speed import core_function
from hloscope.ir import Instruction, Shape
from hloscope.parser.attrs import parse_attr, parse_shape
from hloscope.parser.errors import ParseError, attribute_error
from hloscope.parser.fast.patterns import join_mesh_devices, seek_attrs, split_attr_text


def lark_errors() -> tuple[type[Exception], ...]:
    """Lark's exception classes, imported only once something has gone wrong (the
    fast path does not load Lark at all)."""
    from lark.exceptions import LarkError

    return (LarkError,)


def locate_attr(instr: Instruction, key: str, cause: Exception, path: str,
                lines: list[str] | None = None, value: str | None = None) -> ParseError:
    """The located error of `instr`'s attribute `key`."""
    src = lines[instr.line - 1] if lines and 0 < instr.line <= len(lines) else None
    return attribute_error(key, value, cause, path, instr.line, instr.column, src)


class TextReader:
    """Reads values from HLO text, memoized by text (one instance: READER)."""

    __slots__ = ()

    def shape(self, text: str) -> Shape:
        return parse_shape(text)

    def attr(self, instr: Instruction, key: str, text: str) -> Any:
        """The typed value, or a located error (path filled in by whoever knows the file)."""
        try:
            return parse_attr(key, text)
        except (ValueError, IndexError, KeyError, TypeError, *lark_errors()) as e:
            raise locate_attr(instr, key, e, "", value=text) from e

    def split(self, attr_text: str) -> dict[str, str]:
        return split_attr_text(attr_text)

    def seek(self, attr_text: str, keys: Collection[str], n: int, start: int = 0) -> dict[str, str]:
        return seek_attrs(attr_text, keys, n, start)

    def item(self, attr_text: str, key: str) -> str | None | bool:
        return False  # (Instruction.raw_attr reads it)

    def __reduce__(self) -> str:
        return "READER"  # pickled (by the cache) as a reference to the one instance


class NativeReader(TextReader):
    """The reader of the instructions the compiled core's scan builds: one attribute's value
    (`hloscope_native.attr_value`) and the whole list (`attr_items`) read by the core, the
    items split as the scan checked them: about a tenth of the patterns' time on a TPU op's
    long backend_config."""

    __slots__ = ()

    def item(self, attr_text: str, key: str) -> str | None | bool:
        value = core_function("attr_value")
        return value(attr_text, key) if value is not None else False

    def split(self, attr_text: str) -> dict[str, str]:
        items = core_function("attr_items")
        found = items(attr_text) if items is not None else None
        if found is None:  # (not items the core reads: the patterns split them)
            return split_attr_text(attr_text)
        return join_mesh_devices(found) if "device_ids" in found else found

    def __reduce__(self) -> str:
        return "NATIVE_READER"


READER = TextReader()
NATIVE_READER = NativeReader()
