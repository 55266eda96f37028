"""hloscope: static analysis of XLA HLO text (and the Mosaic kernels inside it)."""

from __future__ import annotations

__version__ = "0.1.0"
