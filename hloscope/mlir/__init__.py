"""Custom-call bodies: Mosaic TPU kernels (MLIR bytecode) and textual IR (Triton).

The names below load on first use (`from hloscope.mlir import decode_custom_call`), so that
`roofline`, which asks `hloscope.mlir.cost` for the kernels' costs, builds the decoder's and
the summaries' classes only where a module has kernels (their dataclasses took 1.2% of
roofline on Mixtral, which has none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hloscope._speed.lazy import lazy_names

if TYPE_CHECKING:
    from hloscope.mlir.decode import DecodeError, KernelBody, decode_custom_call
    from hloscope.mlir.summary import CallInfo, KernelSummary, summarize

__all__ = ["CallInfo", "DecodeError", "KernelBody", "KernelSummary", "decode_custom_call", "summarize"]
_WHERE = {"DecodeError": "decode", "KernelBody": "decode", "decode_custom_call": "decode",
          "CallInfo": "summary", "KernelSummary": "summary", "summarize": "summary"}


__getattr__ = lazy_names(__name__, _WHERE, globals())
