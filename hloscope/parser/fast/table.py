"""The compiled scanner's module table read in place (`hloscope_native.scan_spans`): one
array per column (names, opcodes, shapes, operands in CSR, lines, ROOT flags), spans as byte
offsets into the text's UTF-8 encoding. Nothing is made per instruction until asked for:
`name(i)`, `operands(i)`, ... decode the one instruction's fields; `with_opcode` answers
the index rules ask for most (opcode -> instructions) from the opcode column alone."""

from __future__ import annotations

import sys
from array import array


def _column(data: bytes, code: str) -> array:
    out = array(code)
    out.frombytes(data)
    if sys.byteorder == "big":  # (the extension writes little-endian)
        out.byteswap()
    return out


class SpanTable:
    """The module table of one HLO text (`native`: the hloscope_native module)."""

    def __init__(self, native, text: str) -> None:
        t = native.scan_spans(text)
        self.data = text.encode()
        self.opcode_names: list[str] = t["opcode_names"]
        self._names = _column(t["names"], "I")
        self._shapes = _column(t["shapes"], "I")
        self._operand_spans = _column(t["operand_spans"], "I")
        self._operand_starts = _column(t["operand_starts"], "I")
        self.lines = _column(t["lines"], "I")
        self.opcodes = _column(t["opcodes"], "H")
        self.roots = t["roots"]
        self.misses: list[int] = t["misses"]
        self.module = self._text(t["module"])
        self.computations = [(self._text(span), entry, first, end)
                             for span, entry, first, end in t["computations"]]

    def __len__(self) -> int:
        return len(self.lines)

    def _text(self, span) -> str:
        return self.data[span[0]:span[1]].decode()

    def _span(self, column: array, k: int) -> str:
        return self.data[column[2 * k]:column[2 * k + 1]].decode()

    def name(self, i: int) -> str:
        return self._span(self._names, i)

    def shape(self, i: int) -> str:
        return self._span(self._shapes, i)

    def opcode(self, i: int) -> str:
        return self.opcode_names[self.opcodes[i]]

    def operands(self, i: int) -> list[str]:
        starts = self._operand_starts
        return [self._span(self._operand_spans, k) for k in range(starts[i], starts[i + 1])]

    def is_root(self, i: int) -> bool:
        return bool(self.roots[i])

    def with_opcode(self, opcode: str) -> list[int]:
        """The instructions of one opcode, in text order."""
        try:
            code = self.opcode_names.index(opcode)
        except ValueError:
            return []
        return [i for i, o in enumerate(self.opcodes) if o == code]
