"""XProf's tool outputs (what `xprof` / TensorBoard's profile plugin serve as JSON): the two
that hold per-op times are read, the others named for what they are.

- `hlo_stats`: one row per (program, HLO op): occurrences, total (inclusive) and self time,
  XProf's op category, the framework op (`tf_op_name`, JAX's op_name path);
- `framework_op_stats`: one row per framework op (JAX's op_name path) and type, device and
  host, with total and self time (its first table counts IDLE as an op; the second, read
  here, does not).
Any other JSON without Chrome trace events is recognised by its shape (overview page,
op profile, graph viewer, input pipeline, roofline model, memory profile / viewer, runs) and
refused with what it is and what to give instead.
"""

from __future__ import annotations

from pathlib import Path

from hloscope.trace.events import Profile, TraceError

FRAMEWORK = "framework"  # the module name framework ops are kept under
_READABLE = ("give hloscope profile XProf's hlo_stats or framework_op_stats JSON, a "
             "*.xplane.pb or a *.trace.json.gz")


def _values(table: dict) -> list[dict]:
    cols = [c.get("id") for c in table.get("cols", [])]
    return [dict(zip(cols, (c.get("v") if isinstance(c, dict) else None for c in row.get("c", []))))
            for row in table.get("rows", [])]


def _add(prof: Profile, key: tuple[str, str], count: int, total_ns: float, self_ns: float,
         category: str, op_name: str) -> None:
    prev = prof.aggregated.get(key, (0, 0.0))
    prof.aggregated[key] = (prev[0] + count, prev[1] + total_ns)
    detail = prof.details.setdefault(key, {"self_ns": 0.0, "category": category, "op_name": op_name})
    detail["self_ns"] += self_ns


def load_hlo_stats(p: Path, doc: dict) -> Profile:
    prof = Profile(str(p), device_kind="tpu")
    for v in _values(doc):
        op = v.get("hlo_op_name")
        if not op:
            continue
        total = float(v.get("total_time") or 0) * 1e3
        self_time = v.get("total_self_time")
        _add(prof, (str(v.get("program_id", "")), str(op)), int(v.get("occurrences") or 0), total,
             float(self_time) * 1e3 if self_time is not None else total, str(v.get("category") or ""),
             str(v.get("tf_op_name") or "").rstrip(":"))
    return prof


def load_framework_op_stats(p: Path, tables: list[dict]) -> Profile:
    prof = Profile(str(p))
    rows = _values(tables[-1])  # (the table without IDLE)
    for v in rows:
        op = v.get("operation")
        if not op or str(v.get("type")) == "IDLE":
            continue
        where = str(v.get("host_or_device") or "Device")
        total = float(v.get("total_time") or 0) * 1e3
        _add(prof, (FRAMEWORK if where == "Device" else f"{FRAMEWORK} (host)", str(op)),
             int(v.get("occurrences") or 0), total, float(v.get("total_self_time") or 0) * 1e3,
             str(v.get("type") or ""), str(op))
    if not prof.aggregated:
        prof.warnings.append("framework_op_stats with no framework op rows")
    return prof


def _is_table(x) -> bool:
    return isinstance(x, dict) and "cols" in x and "rows" in x


def _columns(table: dict) -> set:
    return {c.get("id") for c in table.get("cols", []) if isinstance(c, dict)}


def read_tool_output(p: Path, doc) -> Profile | None:
    """The profile an XProf tool output holds, None for Chrome trace events, or a TraceError
    naming the tool output that holds no per-op times."""
    if isinstance(doc, dict) and "traceEvents" in doc or isinstance(doc, list) and doc and \
            isinstance(doc[0], dict) and "ph" in doc[0]:
        return None
    if _is_table(doc) and "hlo_op_name" in _columns(doc):
        return load_hlo_stats(p, doc)
    tables = doc if isinstance(doc, list) and doc and all(_is_table(t) for t in doc) else None
    if tables and "operation" in _columns(tables[-1]) and "type" in _columns(tables[-1]):
        return load_framework_op_stats(p, tables)
    raise TraceError(f"{_what(p, doc)}, not a per-op table hloscope reads; {_READABLE}", str(p))


def _what(p: Path, doc) -> str:
    name = p.name
    for tool in ("overview_page", "op_profile", "graph_viewer", "input_pipeline_analyzer",
                 "roofline_model", "memory_profile", "memory_viewer", "trace_viewer", "pod_viewer",
                 "kernel_stats", "megascale_stats"):
        if tool in name:
            return f"XProf's {tool} tool output"
    if isinstance(doc, dict):
        keys = set(doc)
        if {"byProgram", "deviceType"} <= keys or {"byCategory"} & keys:
            return "XProf's op_profile (or graph viewer) output"
        if "memoryProfilePerAllocator" in keys:
            return "XProf's memory_profile output"
        if "logicalBufferSpans" in keys or "heapSizes" in keys:
            return "XProf's memory_viewer output"
    if isinstance(doc, list) and doc and all(isinstance(x, str) for x in doc):
        return "a list of XProf runs (runs.json)"
    if _is_table(doc) or isinstance(doc, list) and doc and all(_is_table(t) for t in doc):
        return "an XProf table that is not hlo_stats or framework_op_stats"
    return "JSON without Chrome trace events (no traceEvents list)"
