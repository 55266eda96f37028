"""Pure data: the parsed form of an HLO dump. Nothing here imports the parser.

The classes load on first use (`from hloscope.ir import Instruction`), so that the opcode
tables (`hloscope.ir.opcodes`) are read without them: `hloscope stats` starts its compiled
pass before the IR is imported (hloscope.parser.fast.beside)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hloscope._speed.lazy import lazy_names

if TYPE_CHECKING:
    from hloscope.ir.computation import Computation
    from hloscope.ir.instruction import Instruction
    from hloscope.ir.module import Module
    from hloscope.ir.shape import Layout, Shape

__all__ = ["Computation", "Instruction", "Layout", "Module", "Shape"]
_WHERE = {"Computation": "computation", "Instruction": "instruction", "Module": "module",
          "Layout": "shape", "Shape": "shape"}


__getattr__ = lazy_names(__name__, _WHERE, globals())
