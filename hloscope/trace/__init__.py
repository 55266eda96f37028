"""Profiler output -> per-instruction measured statistics, joined to the IR."""

from __future__ import annotations

from hloscope.trace.join import InstructionStats, TraceIndex, TraceMismatch, join, mismatch
from hloscope.trace.load import OpEvent, Profile, TraceError, load_profile

__all__ = ["InstructionStats", "OpEvent", "Profile", "TraceError", "TraceIndex", "TraceMismatch", "join", "mismatch", "load_profile"]
