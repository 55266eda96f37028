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
from pathlib import Path

from hloscope.trace.events import (
    MODULE_SUFFIX,
    OpEvent,
    Profile,
    TraceError,
    as_int,
    instruction_name,
)

DEFAULT_MAX_BYTES = 2 << 30  # decompressed input we accept
DEFAULT_MAX_EVENTS = 50_000_000
TRACE_EVENT_CAP = 1_000_000  # jax's trace.json.gz stops at this many events


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
        from hloscope.trace.xplane import load_xplane

        return load_xplane(p, _read(p, max_bytes), max_events)
    if name.endswith((".json", ".json.gz")):
        data = _read(p, max_bytes)
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise TraceError(f"not valid JSON ({e}); truncated?", str(p)) from None
        from hloscope.trace.xprof import read_tool_output

        tool = read_tool_output(p, doc)  # (hlo_stats, framework_op_stats; others refused)
        return tool if tool is not None else _load_trace_json(p, doc, max_events)
    raise TraceError("unknown profile format; expected a directory, *.xplane.pb, "
                     "*.trace.json[.gz] or an XProf hlo_stats / framework_op_stats .json[.gz]", str(p))


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
        merged.regions.extend(prof.regions)
        merged.counters.extend(prof.counters)
        merged.bundles.extend(prof.bundles)
        merged.programs.update(prof.programs)
        merged.device_kind = merged.device_kind or prof.device_kind
    return merged


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
            module=MODULE_SUFFIX.sub("", str(args.get("hlo_module", ""))), hlo_op=str(op),
            device=f"{names.get(ev.get('pid'), ev.get('pid'))}/{ev.get('tid')}",
            start_ns=float(ev.get("ts", 0)) * 1e3, duration_ns=float(ev.get("dur", 0)) * 1e3,
            program_id=as_int(args.get("program_id")), run_id=as_int(args.get("run_id"))))
    if any("TPU" in str(n) for n in names.values()):
        prof.device_kind = next(str(n) for n in names.values() if "TPU" in str(n))
    elif names:
        prof.device_kind = "cpu" if all("CPU" in str(n) or "python" in str(n).lower() for n in names.values()) else None
    return prof


__all__ = ["OpEvent", "Profile", "TraceError", "instruction_name", "load_profile"]
