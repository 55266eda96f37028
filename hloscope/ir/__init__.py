"""Pure data: the parsed form of an HLO dump. Nothing here imports the parser."""

from __future__ import annotations

from hloscope.ir.computation import Computation
from hloscope.ir.instruction import Instruction
from hloscope.ir.module import Module
from hloscope.ir.shape import Layout, Shape

__all__ = ["Computation", "Instruction", "Layout", "Module", "Shape"]
