"""XLA's own memory reports, read from a --xla_dump_to directory, to set beside ours.

For a module dumped as `X.after_optimizations.txt`, XLA writes next to it:
- `X.after_optimizations-buffer-assignment.txt`: one `allocation N: size S, ...:` header per
  buffer, saying what it holds (`parameter P`, `output shape is |...|`, `maybe-live-out`,
  `constant`, `thread-local`, `preallocated-temp`) and its memory space (`color C`, absent for
  the default space, HBM on TPU).
- `X.after_optimizations-memory-usage-report.txt`: per memory space, `Memory Space: NAME
  (color=C)` and `Total bytes: N`, the sum of that space's allocations.
- `X.after_optimizations-live-range.txt`: the schedule and `Live ranges at STEP (peak):`, with
  `Stack trace breakdown for peak usage: N bytes` (digits grouped by spaces).

On TPU the temporaries of the default space are one `preallocated-temp` allocation: the heap
left after buffer reuse, what compiled.memory_analysis() reports as temp_size_in_bytes (give
or take scratch XLA adds outside buffer assignment).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

SUFFIXES = {"buffer_assignment": "-buffer-assignment.txt",
            "memory_usage_report": "-memory-usage-report.txt",
            "live_range": "-live-range.txt"}
_ALLOCATION = re.compile(r"allocation (\d+): size (\d+)(.*):\s*$")
_SHAPE = re.compile(r"\|[^|]*\|")
_SPACE = re.compile(r"Memory Space: (.+) \(color=(\d+)\)\s*$")
_TOTAL = re.compile(r"Total bytes: (\d+)")
_PEAK_STEP = re.compile(r"\s*Live ranges at (\d+) \(peak\):")
_PEAK_BYTES = re.compile(r"\s*Stack trace breakdown for peak usage: ([\d ]+) bytes")


class ReportError(ValueError):
    """A file that is not the XLA report its name says: path, line and why."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}:1: {message}" if line else f"{path}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass
class Space:
    """One memory space as XLA's buffer assignment splits it (bytes)."""

    color: int
    name: str = ""
    arguments: int = 0
    outputs: int = 0
    aliased: int = 0  # allocations both a parameter and live out (donated)
    temporaries: int = 0
    constants: int = 0
    thread_local: int = 0  # buffers of called computations run in place (not in the heap)
    report_total: int | None = None  # the memory-usage report's "Total bytes"

    @property
    def hbm_figure(self) -> int:
        """arguments + outputs - aliased + temporaries: memory_analysis()'s HBM split."""
        return self.arguments + self.outputs - self.aliased + self.temporaries


@dataclass
class XlaMemory:
    files: list[str] = field(default_factory=list)
    spaces: dict[int, Space] = field(default_factory=dict)
    peak_step: int | None = None  # from the live-range file
    peak_bytes: int | None = None

    def space(self, color: int) -> Space:
        return self.spaces.setdefault(color, Space(color))

    def to_dict(self) -> dict:
        return {"files": self.files,
                "spaces": [dict(asdict(s), hbm_figure=s.hbm_figure) for _, s in sorted(self.spaces.items())],
                "live_range_peak_step": self.peak_step, "live_range_peak_bytes": self.peak_bytes}


def beside(module_file: str | Path) -> dict[str, Path]:
    """XLA's report files next to a dumped module (kind -> path), those that exist."""
    p = Path(module_file)
    if p.suffix != ".txt":
        return {}
    base = p.name[: -len(".txt")]
    found = {kind: p.with_name(base + suffix) for kind, suffix in SUFFIXES.items()}
    return {kind: f for kind, f in found.items() if f.is_file()}


ANALYSIS = "memory_analysis.json"  # what `hloscope compile` writes of compiled.memory_analysis()


def analysis_beside(module_file: str | Path, module_name: str) -> dict[str, int] | None:
    """XLA's memory_analysis() of the module, where `hloscope compile` wrote it beside the
    dump (memory_analysis.json, for the module its hloscope.json names), else None."""
    import json

    if not Path(module_file).is_file():
        return None  # (a module parsed from a string)
    folder = Path(module_file).parent
    try:
        record = json.loads((folder / "hloscope.json").read_text(encoding="utf-8"))
        figures = json.loads((folder / ANALYSIS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("module") != module_name or not isinstance(figures, dict):
        return None  # (a helper module the same compile dumped: the figures are not its)
    return {k: int(v) for k, v in figures.items() if isinstance(v, (int, float))}


def kind_of(path: str | Path) -> str | None:
    name = Path(path).name
    return next((kind for kind, suffix in SUFFIXES.items() if name.endswith(suffix)), None)


def read(paths: list[str | Path]) -> XlaMemory:
    """The reports in paths (any of the three kinds, by file name) as one XlaMemory."""
    out = XlaMemory()
    for path in paths:
        kind = kind_of(path)
        if kind is None:
            raise ReportError(str(path), 0, "not an XLA memory report (expected a name ending in "
                              + ", ".join(SUFFIXES.values()) + ")")
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        {"buffer_assignment": _buffer_assignment, "memory_usage_report": _usage_report,
         "live_range": _live_range}[kind](text, str(path), out)
        out.files.append(str(path))
    return out


def _buffer_assignment(text: str, path: str, out: XlaMemory) -> None:
    seen = 0
    for n, line in enumerate(text.splitlines(), 1):
        m = _ALLOCATION.match(line)
        if not m:
            if line.startswith("allocation "):
                raise ReportError(path, n, f"unreadable allocation header: {line[:80]!r}")
            continue
        seen += 1
        size, what = int(m.group(2)), _SHAPE.sub("", m.group(3))
        color = re.search(r", color (\d+)", what)
        space = out.space(int(color.group(1)) if color else 0)
        parameter = re.search(r", parameter \d+", what) is not None
        live_out = "maybe-live-out" in what or "output shape is" in what
        if parameter:
            space.arguments += size
            if live_out:
                space.outputs += size
                space.aliased += size
        elif live_out:
            space.outputs += size
        elif ", constant" in what:
            space.constants += size
        elif "thread-local" in what:
            space.thread_local += size
        else:
            space.temporaries += size
    if not seen:
        raise ReportError(path, 1, "no `allocation N: size S...:` lines: not a buffer-assignment dump")


def _usage_report(text: str, path: str, out: XlaMemory) -> None:
    space = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _SPACE.match(line)
        if m:
            space = out.space(int(m.group(2)))
            space.name = m.group(1)
            continue
        t = _TOTAL.match(line)
        if t:
            if space is None:
                raise ReportError(path, n, "`Total bytes` before any `Memory Space:` line")
            space.report_total = int(t.group(1))
    if space is None:
        raise ReportError(path, 1, "no `Memory Space: NAME (color=N)` line: not a memory-usage report")


def _live_range(text: str, path: str, out: XlaMemory) -> None:
    for line in text.splitlines():
        m = _PEAK_STEP.match(line)
        if m:
            out.peak_step = int(m.group(1))
        b = _PEAK_BYTES.match(line)
        if b:
            out.peak_bytes = int(b.group(1).replace(" ", ""))
    if not text.startswith("HloLiveRange"):
        raise ReportError(path, 1, "does not start with `HloLiveRange`: not a live-range dump")
