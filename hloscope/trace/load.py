"""Read jax.profiler output: profile directories, *.xplane.pb, *.trace.json(.gz), and
XProf's hlo_stats tables. Bounded: size limits, gzip-bomb and truncation checks.

Device op events are those carrying `hlo_op` (and `hlo_module`) stats — the CPU thunk
executor and GPU kernel lines — or sitting on a TPU "XLA Ops" line, whose module comes
from the enclosing "XLA Modules" event.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MAX_BYTES = 2 << 30  # decompressed input we accept
DEFAULT_MAX_EVENTS = 50_000_000
TRACE_EVENT_CAP = 1_000_000  # jax's trace.json.gz stops at this many events
_MODULE_SUFFIX = re.compile(r"\(\d+\)$")
# A TPU "XLA Ops" event is named by its instruction's full text: `%name = shape opcode(...), ...`
_INSTRUCTION_TEXT = re.compile(r"\s*(?:ROOT\s+)?%?([^\s=%]+)\s+=\s")


def instruction_name(event_name: str) -> str:
    """The instruction an XLA Ops event names: its name, or the name in its full text."""
    m = _INSTRUCTION_TEXT.match(event_name)
    return m.group(1) if m else event_name


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


@dataclass
class Profile:
    path: str
    events: list[OpEvent] = field(default_factory=list)
    # pre-aggregated per-op stats (XProf hlo_stats tables): (module, op) -> (count, total_ns)
    aggregated: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)
    device_kind: str | None = None
    warnings: list[str] = field(default_factory=list)


def _read(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise TraceError(f"cannot read: {e.strerror or e}", str(path)) from None
    if size > max_bytes:
        raise TraceError(f"{size} bytes, over the {max_bytes}-byte limit (--max-bytes)", str(path))
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, max_bytes, str(path))
    return data


def _gunzip(data: bytes, max_bytes: int, where: str) -> bytes:
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            while chunk := gz.read(1 << 20):
                out.write(chunk)
                if out.tell() > max_bytes:
                    raise TraceError(f"decompresses to over {max_bytes} bytes (a gzip bomb?); "
                                     "raise --max-bytes if it is real", where)
    except (EOFError, OSError, gzip.BadGzipFile) as e:
        raise TraceError(f"truncated or corrupt gzip data ({e})", where) from None
    return out.getvalue()


def load_profile(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_events: int = DEFAULT_MAX_EVENTS) -> Profile:
    """A profile from a file or a directory (the newest session under plugins/profile)."""
    p = Path(path)
    if p.is_dir():
        return _load_dir(p, max_bytes, max_events)
    name = p.name
    if name.endswith(".xplane.pb"):
        return _load_xplane(p, max_bytes, max_events)
    if name.endswith((".json", ".json.gz")):
        data = _read(p, max_bytes)
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise TraceError(f"not valid JSON ({e}); truncated?", str(p)) from None
        if isinstance(doc, dict) and "cols" in doc and "rows" in doc:
            return _load_hlo_stats(p, doc)
        return _load_trace_json(p, doc, max_events)
    raise TraceError("unknown profile format; expected a directory, *.xplane.pb, "
                     "*.trace.json[.gz] or an XProf hlo_stats .json[.gz]", str(p))


def _load_dir(p: Path, max_bytes: int, max_events: int) -> Profile:
    sessions = sorted(p.glob("plugins/profile/*")) or [p]
    session = sessions[-1]
    files = sorted(session.glob("*.xplane.pb")) or sorted(session.glob("*.trace.json.gz"))
    if not files:
        raise TraceError("no *.xplane.pb or *.trace.json.gz under it", str(p))
    merged = Profile(str(p))
    for f in files:
        prof = load_profile(f, max_bytes, max_events)
        merged.events.extend(prof.events)
        merged.warnings.extend(prof.warnings)
        merged.device_kind = merged.device_kind or prof.device_kind
    return merged


def _load_xplane(p: Path, max_bytes: int, max_events: int) -> Profile:
    data = _read(p, max_bytes)
    bad = data.count(b"\xef\xbf\xbd")
    if bad > 100 and bad * 3 > len(data) // 20:
        raise TraceError(f"not a binary XSpace: {bad} U+FFFD sequences show the file was "
                         "passed through a text conversion that replaced its non-UTF-8 bytes; "
                         "the original bytes are lost", str(p))
    try:
        from jax.profiler import ProfileData

        pd = ProfileData.from_serialized_xspace(data)
    except Exception as e:  # noqa: BLE001 - the C++ parser says only that it failed
        raise TraceError(f"not a valid XSpace protobuf, truncated or corrupt ({e})", str(p)) from None
    prof = Profile(str(p))
    count = 0
    for plane in pd.planes:
        stats = dict(plane.stats)
        kind = stats.get("device_type_string") or stats.get("device_kind") or stats.get("chip")
        if kind and prof.device_kind is None:
            prof.device_kind = str(kind)
        if plane.name.startswith("/host:CPU") and prof.device_kind is None and "cpu" in plane.name.lower():
            prof.device_kind = "cpu"
        lines = list(plane.lines)
        modules = _module_spans(lines)
        for line in lines:
            device = f"{plane.name}/{line.name}"
            xla_ops = line.name == "XLA Ops"
            for ev in line.events:
                st = dict(ev.stats)
                op = st.get("hlo_op") or (instruction_name(ev.name) if xla_ops else None)
                if not op:
                    continue
                module = st.get("hlo_module") or _enclosing(modules, ev.start_ns) or ""
                count += 1
                if count > max_events:
                    raise TraceError(f"more than {max_events} op events (--max-events)", str(p))
                prof.events.append(OpEvent(
                    module=_MODULE_SUFFIX.sub("", str(module)), hlo_op=str(op), device=device,
                    start_ns=float(ev.start_ns), duration_ns=float(ev.duration_ns),
                    program_id=_int(st.get("program_id")), run_id=_int(st.get("run_id"))))
    return prof


def _module_spans(lines) -> list[tuple[float, float, str]]:
    for line in lines:
        if line.name == "XLA Modules":
            return [(e.start_ns, e.start_ns + e.duration_ns, e.name) for e in line.events]
    return []


def _enclosing(spans: list[tuple[float, float, str]], t: float) -> str | None:
    for start, end, name in spans:
        if start <= t <= end:
            return name
    return None


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _load_trace_json(p: Path, doc, max_events: int) -> Profile:
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise TraceError("no traceEvents list", str(p))
    prof = Profile(str(p))
    if len(events) >= TRACE_EVENT_CAP:
        prof.warnings.append(f"{len(events)} events: the trace looks cut at jax's "
                             f"{TRACE_EVENT_CAP}-event cap; later ops are missing")
    names = {}
    for ev in events:
        if isinstance(ev, dict) and ev.get("ph") == "M" and ev.get("name") == "process_name":
            names[ev.get("pid")] = ev.get("args", {}).get("name", "")
    for k, ev in enumerate(events):
        if k >= max_events:
            raise TraceError(f"more than {max_events} events (--max-events)", str(p))
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        args = ev.get("args") or {}
        op = args.get("hlo_op")
        if not op:
            continue
        prof.events.append(OpEvent(
            module=_MODULE_SUFFIX.sub("", str(args.get("hlo_module", ""))), hlo_op=str(op),
            device=f"{names.get(ev.get('pid'), ev.get('pid'))}/{ev.get('tid')}",
            start_ns=float(ev.get("ts", 0)) * 1e3, duration_ns=float(ev.get("dur", 0)) * 1e3,
            program_id=_int(args.get("program_id")), run_id=_int(args.get("run_id"))))
    if any("TPU" in str(n) for n in names.values()):
        prof.device_kind = next(str(n) for n in names.values() if "TPU" in str(n))
    elif names:
        prof.device_kind = "cpu" if all("CPU" in str(n) or "python" in str(n).lower() for n in names.values()) else None
    return prof


def _load_hlo_stats(p: Path, doc: dict) -> Profile:
    """XProf's hlo_stats tool output: one row per (program, HLO op), times in us."""
    cols = [c.get("id") for c in doc["cols"]]
    prof = Profile(str(p), device_kind="tpu")
    for row in doc["rows"]:
        values = dict(zip(cols, (c.get("v") if isinstance(c, dict) else None for c in row.get("c", []))))
        op = values.get("hlo_op_name")
        if not op:
            continue
        module = str(values.get("program_id", ""))
        count, total_us = int(values.get("occurrences") or 0), float(values.get("total_time") or 0)
        prev = prof.aggregated.get((module, op), (0, 0.0))
        prof.aggregated[(module, op)] = (prev[0] + count, prev[1] + total_us * 1e3)
    return prof
