"""What a profile holds once read: op events (joined to instructions later), and from TPU
captures the kernel-internal regions (`XLA TraceMe`), utilization counter samples
(`_counters_`) and LLO bundle counts (`Tensor Core`) used by the kernel view."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MODULE_SUFFIX = re.compile(r"\(\d+\)$")  # `jit_matmul(17342868964687645945)`: name(program id)
# A TPU "XLA Ops" event is named by its instruction's full text: `%name = shape opcode(...), ...`
_INSTRUCTION_TEXT = re.compile(r"\s*(?:ROOT\s+)?%?([^\s=%]+)\s+=\s")


def instruction_name(event_name: str) -> str:
    """The instruction an XLA Ops event names: its name, or the name in its full text."""
    m = _INSTRUCTION_TEXT.match(event_name)
    return m.group(1) if m else event_name


def as_int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def union_length(intervals: list[tuple[float, float]]) -> float:
    """Length covered by the union of (start, end) intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


class TraceError(ValueError):
    """A profile that cannot be read; the message says why (exit code 2)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: error: {self.args[0]}" if self.path else self.args[0]


@dataclass(frozen=True)
class OpEvent:
    module: str
    hlo_op: str
    device: str  # plane/line (or pid/tid) the event ran on
    start_ns: float
    duration_ns: float
    program_id: int | None = None
    run_id: int | None = None
    plane: str = ""  # the device plane (`/device:TPU:0`), when the profile has planes
    is_async: bool = False  # on `Async XLA Ops`: overlaps other work, is not busy time
    kernel: str = ""  # GPU captures: the kernel (or memset, copy) the event is, by its name


@dataclass(frozen=True)
class Span:
    """A named interval on a device plane: a TraceMe region, a counter sample (`value`:
    its `% util`), or a run of LLO bundles (`value`: how many)."""

    plane: str
    name: str
    start_ns: float
    duration_ns: float
    value: float = 0.0

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass
class Profile:
    path: str
    events: list[OpEvent] = field(default_factory=list)
    # pre-aggregated per-op stats (XProf hlo_stats tables): (module, op) -> (count, total_ns)
    aggregated: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)
    device_kind: str | None = None
    warnings: list[str] = field(default_factory=list)
    regions: list[Span] = field(default_factory=list)  # XLA TraceMe
    counters: list[Span] = field(default_factory=list)  # _counters_ samples
    bundles: list[Span] = field(default_factory=list)  # Tensor Core LLO bundles
    programs: dict[int, str] = field(default_factory=dict)  # program id -> module name
    # GPU captures: the launch API calls on the host, (module, program id) -> (count, host ns)
    launches: dict[tuple[str, int | None], tuple[int, float]] = field(default_factory=dict)
    device: str | None = None  # GPU captures: the device plane's facts, in words
    # XProf tables: (module, op) -> {"self_ns", "category" (XProf's), "op_name" (framework op)}
    details: dict[tuple[str, str], dict] = field(default_factory=dict)
