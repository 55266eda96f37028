"""Custom-call bodies: Mosaic TPU kernels (MLIR bytecode) and textual IR (Triton)."""

from __future__ import annotations

from hloscope.mlir.decode import DecodeError, KernelBody, decode_custom_call
from hloscope.mlir.summary import CallInfo, KernelSummary, summarize

__all__ = ["CallInfo", "DecodeError", "KernelBody", "KernelSummary", "decode_custom_call", "summarize"]
