"""Pure data: the parsed form of an HLO dump. Nothing here imports the parser."""

from __future__ import annotations

from hloscope.ir.computation import Computation
from hloscope.ir.instruction import Instruction
from hloscope.ir.layout import Layout
from hloscope.ir.module import Module
from hloscope.ir.shape import Shape

__all__ = ["Computation", "Instruction", "Layout", "Module", "Shape"]
