"""The fast path with the compiled line reader (`native/`, module `hloscope_native`): the
same modules as `scan.scan_text`, faster.

`hloscope_native.lines` splits each instruction line that the whole-line pattern `LINE`
would take into the fields `scan_text` reads from LINE's groups (it takes no line LINE would
not: see native/src/lines.rs); every other line goes to the same line scanner (`_Lines`).
So the IR is the one `scan_text` builds, which the equivalence and fuzz tests hold to the
grammar's. Used when the extension is installed and HLOSCOPE_PLAIN is not set.
"""

from __future__ import annotations

from hloscope.ir import Module
from hloscope.ir.instruction import Instruction
from hloscope.parser.fast.patterns import literal_ok
from hloscope.parser.fast.scan import _NONES, _SECTIONS, ScanMiss, _Lines
from hloscope.parser.reader import NATIVE_READER


def available():
    """The extension module, or None (not built, or HLOSCOPE_PLAIN=1)."""
    from hloscope._speed import scanner

    return scanner()


def scan_native(native, text: str, path: str, first_line: int = 1) -> list[Module]:
    """Scan a whole file (or the part of one from line `first_line` on) into modules, as
    scan_text does; raises ScanMiss when unsure."""
    lines = _Lines(path)
    at = first_line - 1  # (the reader numbers the text's lines from 1)
    shapes = lines.shapes
    raw = _Raw(text)  # (a line the line scanner reads after all, by number: split if asked)
    gap = 0  # the first line of the run of lines the line scanner reads, or 0
    run: list[str] = []  # their texts (the reader hands them over: the text is not split)
    # (a part of the text at a time: one part's items are made, read and gone before the
    # next, never all of them beside the whole IR, which was the parse's peak memory)
    start: int | None = 0
    first = 0
    while start is not None:
        items, start = _part(native, text, start, first, lines, at)
        for k, item in enumerate(items, first):
            made = item.__class__ is Instruction  # (made by the core: see _part)
            if not made:
                if item.__class__ is str:
                    if not gap:
                        gap = k + 1
                    run.append(item)
                    continue
                if len(item) < 11:  # a closing brace, or a computation header, as LINE takes them
                    if gap:
                        lines.feed(run, gap + at)
                        gap, run = 0, []
                    _frame(lines, item, raw, at)
                    continue
            if gap:
                lines.feed(run, gap + at)
                gap, run = 0, []
            comp = lines.comp if lines.pending is None else None
            if comp is None:  # (not inside a computation: the line scanner decides)
                lines.feed([raw[k]], k + 1 + at)  # (an item per line: line k + 1)
                continue
            if made:
                item.computation = comp.name
                comp.instructions.append(item)
                continue
            (lineno, indent, root, name, shape_text, opcode, operands, literal, attr_text, typed,
             calls) = item
            if literal is not None:
                literal = literal.strip()
                if not literal_ok(literal):
                    raise ScanMiss("literal")
            shape_text, shape = shapes.get(shape_text) or lines.shape(shape_text)
            n = len(operands)  # (opcodes, names and shapes: one string per text within a part)
            if typed is None:
                typed = _NONES[n] if n < 64 else (None,) * n
            else:  # `f32[2]{0} %a, ...`: each shape text checked once, one string per text
                typed = tuple([lines.shape(t)[0] for t in typed])
            comp.instructions.append(Instruction(
                name, opcode, shape_text, operands, typed, None, literal,
                root, lineno + at, indent + 1, comp.name, shape, attr_text, NATIVE_READER, calls))
        first += len(items)
    if gap:
        lines.feed(run, gap + at)
    return lines.finish()


# Lines per part the parse reads (`_part`): a few hundred kilobytes of items at a time.
PART = 8192


def _part(native, text: str, start: int, first: int, lines: _Lines | None = None,
          at: int = 0) -> tuple[list, int | None]:
    """The items of the text's lines from byte `start` (line `first` + 1 there), PART of
    them, and where the next part starts (None at the end); an extension built before
    `lines_from` reads the whole text as one part. With `lines` (the line scanner, whose
    shapes it reads: `shapes`, and `shape` for a new text), an instruction with no operand
    shapes and no literal but a parameter's number comes made (`instructions_from`), as the
    loop of scan_native would make it from its fields but for its computation (`at`: the
    lines before the text)."""
    if lines is not None and hasattr(native, "instructions_from"):
        return native.instructions_from(
            text, start, first, PART, (Instruction, lines.shapes, lines.shape, NATIVE_READER, _NONES, at))
    if hasattr(native, "lines_from"):
        return native.lines_from(text, start, first, PART, True)
    return native.lines(text, True), None


class _Raw:
    """The text's lines by index, split on first use (few modules need one: a header or
    brace the line scanner decides after all)."""

    def __init__(self, text: str) -> None:
        self.text, self.lines = text, None

    def __getitem__(self, k: int) -> str:
        if self.lines is None:
            self.lines = self.text.split("\n")
        return self.lines[k]


def _frame(lines: _Lines, item: tuple, raw: _Raw, at: int) -> None:
    """A computation's `}` or header line, handled as scan_text handles LINE's groups
    (`at`: the lines before the text scanned)."""
    lineno = item[0]
    if len(item) == 1:
        if lines.comp is not None and lines.pending is None:
            lines.close()
            return
    elif (lines.comp is None and lines.pending is None and lines.module is not None
          and item[2] not in _SECTIONS):
        lines.open(item[2], item[1], item[3], item[4], lineno + at, item[5])
        return
    lines.feed([raw[lineno - 1]], lineno + at)  # the line scanner decides
