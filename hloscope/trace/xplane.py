"""Read an XSpace (`*.xplane.pb`): hloscope.trace.xspace_pb, or jax's ProfileData for large files.

Op events are those carrying `hlo_op` (and `hlo_module`) stats — the CPU thunk executor and
GPU kernel lines — or sitting on a TPU `XLA Ops` line (named by the instruction's full text;
no hlo_op stat), whose module, program id and run id come from the enclosing `XLA Modules`
event (`jit_matmul(17342868964687645945)`: module name and program id). `Async XLA Ops`
events are kept as async (overlap, not busy time). From TPU planes also: `XLA TraceMe`
regions (kernel-internal: `ep_wait_in`, `ep_copy_in`, `ep_run_kernel`, ...), `_counters_`
samples (`MXU`, `Vector ALU`, ... with a `% util` stat) and `Tensor Core` LLO bundles.
"""

from __future__ import annotations

import bisect
from pathlib import Path

from hloscope.trace.gpu import Executions, device_chip, is_gpu_plane
from hloscope.trace.events import (
    MODULE_SUFFIX,
    OpEvent,
    Profile,
    Span,
    TraceError,
    as_int,
    instruction_name,
)

OP_LINES = {"XLA Ops": False, "Async XLA Ops": True}  # line name -> async
REGION_LINE, COUNTER_LINE, BUNDLE_LINE, MODULE_LINE = "XLA TraceMe", "_counters_", "Tensor Core", "XLA Modules"


class _Modules:
    """The `XLA Modules` events of a plane, to find the one enclosing a time."""

    def __init__(self, lines) -> None:
        spans = []
        for line in lines:
            if line.name == MODULE_LINE:
                for e in line.events:
                    st = dict(e.stats)
                    program = as_int(st.get("program_id"))
                    suffix = MODULE_SUFFIX.search(e.name)
                    if program is None and suffix:
                        program = as_int(suffix.group(0)[1:-1])
                    spans.append((e.start_ns, e.start_ns + e.duration_ns,
                                  MODULE_SUFFIX.sub("", e.name), program, as_int(st.get("run_id"))))
        spans.sort()
        self.spans = spans
        self.starts = [s[0] for s in spans]

    def at(self, t: float) -> tuple[str, int | None, int | None] | None:
        """(module, program id, run id) of the module event running at t (they do not
        overlap on one plane), or None."""
        k = bisect.bisect_right(self.starts, t) - 1
        if k < 0 or self.spans[k][1] < t:
            return None
        return self.spans[k][2:]


def _util(stats: dict) -> float:
    for key, v in stats.items():
        if "util" in str(key).lower():
            try:
                return float(v)
            except (TypeError, ValueError):
                return 0.0
    return 0.0


def load_xplane(p: Path, data: bytes, max_events: int) -> Profile:
    bad = data.count(b"\xef\xbf\xbd")
    if bad > 100 and bad * 3 > len(data) // 20:
        raise TraceError(f"not a binary XSpace: {bad} U+FFFD sequences show the file was "
                         "passed through a text conversion that replaced its non-UTF-8 bytes; "
                         "the original bytes are lost", str(p))
    planes = _planes(p, data)
    prof = Profile(str(p))
    count = 0
    gpu = any(is_gpu_plane(plane.name) for plane in planes)
    executions = Executions() if gpu else None
    if executions is not None:  # host launches and executions first: kernels need them
        for plane in planes:
            if plane.name.startswith("/host:"):
                for line in plane.lines:
                    executions.add_host_line(f"{plane.name}/{line.name}", line.events)
        executions.finish()
    for plane in planes:
        stats = dict(plane.stats)
        kind = stats.get("device_type_string") or stats.get("device_kind") or stats.get("chip")
        if executions is not None and is_gpu_plane(plane.name) and prof.device is None:
            key, words = device_chip(stats)
            prof.device = words
            kind = key or kind
            if key is None and words != "GPU":
                prof.warnings.append(f"{plane.name}: {words}: no chip in the table has these facts; "
                                     "--chip NAME (or --chip-file) sets the roofline's chip")
        if kind and prof.device_kind is None:
            prof.device_kind = str(kind)
        if executions is not None and plane.name.startswith("/host:"):
            continue  # launch calls, not device time (counted in prof.launches)
        if plane.name.startswith("/host:CPU") and prof.device_kind is None and "cpu" in plane.name.lower():
            prof.device_kind = "cpu"
        lines = list(plane.lines)
        modules = _Modules(lines)
        for _, _, name, program, _ in modules.spans:
            if program is not None:
                prof.programs.setdefault(program, name)
        for line in lines:
            if line.name in (REGION_LINE, COUNTER_LINE, BUNDLE_LINE):
                _spans(prof, plane.name, line)
                continue
            device = f"{plane.name}/{line.name}"
            is_async = OP_LINES.get(line.name)
            for ev in line.events:
                st = dict(ev.stats)
                op = st.get("hlo_op") or (instruction_name(ev.name) if is_async is not None else None)
                if not op:
                    continue
                enclosing = modules.at(ev.start_ns)
                module, program, run = enclosing if enclosing else ("", None, None)
                count += 1
                if count > max_events:
                    raise TraceError(f"more than {max_events} op events (--max-events)", str(p))
                if st.get("run_id") is not None:
                    run = as_int(st.get("run_id"))
                elif executions is not None:
                    run = executions.run_of(st.get("correlation_id"))
                pid = as_int(st.get("program_id"))
                name = MODULE_SUFFIX.sub("", str(st.get("hlo_module") or module))
                pid = pid if pid is not None else program
                if executions is not None:  # (a launch that named no program: this one's)
                    executions.claim(st.get("correlation_id"), name, pid)
                prof.events.append(OpEvent(
                    module=name, hlo_op=str(op),
                    device=device, start_ns=float(ev.start_ns), duration_ns=float(ev.duration_ns),
                    program_id=pid, run_id=run,
                    plane=plane.name, is_async=bool(is_async),
                    kernel=str(ev.name) if executions is not None else ""))
    if executions is not None:
        prof.launches = {k: (int(c), t) for k, (c, t) in executions.launches.items()}
    return prof


# Below this size the plain-Python reader is faster than importing jax (1.1 s) and reading
# with its ProfileData (the reader: 0.9 s for a 3 MB, 23,000-event GPU capture; bench/README);
# above it, with jax installed, ProfileData's C++ reader is. Both give the same planes
# (tests/test_xspace_reader.py, on every capture in fixtures/ and the corpus).
PLAIN_READER_BYTES = 4 << 20


def _planes(p: Path, data: bytes) -> list:
    """The XSpace's planes: plain Python (hloscope.trace.xspace_pb) for small files or
    without jax, jax's ProfileData for large ones."""
    from hloscope.trace.xspace_pb import XSpaceError, read_xspace

    if len(data) > PLAIN_READER_BYTES:
        try:
            from jax.profiler import ProfileData
        except ImportError:
            ProfileData = None  # noqa: N806 - (the plain reader, slower, still reads it)
        if ProfileData is not None:
            try:
                return list(ProfileData.from_serialized_xspace(data).planes)
            except Exception as e:  # noqa: BLE001 - the C++ parser says only that it failed
                raise TraceError(f"not a valid XSpace protobuf, truncated or corrupt ({e})", str(p)) from None
    try:
        return read_xspace(data)
    except XSpaceError as e:
        raise TraceError(f"not a valid XSpace protobuf, truncated or corrupt ({e})", str(p)) from None


def _spans(prof: Profile, plane: str, line) -> None:
    for ev in line.events:
        span = Span(plane, ev.name, float(ev.start_ns), float(ev.duration_ns))
        if line.name == REGION_LINE:
            prof.regions.append(span)
        elif line.name == COUNTER_LINE:
            prof.counters.append(Span(plane, ev.name, span.start_ns, span.duration_ns, _util(dict(ev.stats))))
        else:
            prof.bundles.append(Span(plane, ev.name, span.start_ns, span.duration_ns, 1.0))
