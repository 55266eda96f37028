"""What a GPU capture (XLA GPU on CUDA or ROCm) adds to an XSpace.

A GPU device plane (`/device:GPU:0`) holds one event per *kernel* (or device copy), on
stream lines, with `hlo_op`, `hlo_module`, `program_id` and a `correlation_id`; its plane
stats describe the device (vendor, SM or CU count, compute capability, memory). The host
plane holds, with the same `correlation_id`, the API call that launched each kernel
(`cuLaunchKernel`, `hipModuleLaunchKernel`, `hipMemcpyDtoDAsync`...; they carry `hlo_op` too:
host time, not device time), and one `GpuExecutable::ExecuteThunks` /
`<module>:XLA GPU module` event per execution of a program on each device.

So: kernels are the op events; launches are kept apart (counted, for launch overhead); an
execution is the host execution event enclosing a kernel's launch, numbered per host thread
and module in time order — the k-th execution of a program on every device is step k.
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from hloscope.cost.resolve import CAPABILITY as NVIDIA  # compute capability -> chip key
from hloscope.cost.resolve import gpu_chip
from hloscope.trace.events import as_int

EXECUTION_EVENTS = ("GpuExecutable::ExecuteThunks",)
EXECUTION_SUFFIX = ":XLA GPU module"
# AMD gfx version (gfx942 -> 9.4) -> chip key
AMD = {(9, 4): "mi300x", (9, 5): "mi355x"}


def is_gpu_plane(name: str) -> bool:
    return name.startswith("/device:GPU")


def device_chip(stats: dict) -> tuple[str | None, str]:
    """(chip key or None, the device in words) from a GPU plane's stats."""
    vendor = str(stats.get("device_vendor") or "").strip()
    major, minor = as_int(stats.get("compute_cap_major")), as_int(stats.get("compute_cap_minor"))
    cores = as_int(stats.get("core_count"))
    memory = as_int(stats.get("memory_size")) or 0
    words = ", ".join(x for x in (
        vendor or "GPU",
        f"compute capability {major}.{minor}" if major is not None else "",
        f"{cores} {'CUs' if vendor.lower().startswith('amd') else 'SMs'}" if cores else "",
        f"{memory / 2**30:.0f} GiB" if memory else "") if x)
    if major is None:
        return None, words
    if vendor.lower().startswith("amd"):
        return AMD.get((major, minor)), words
    key = NVIDIA.get((major, minor))
    # (an H200 is an H100's SM with 141 GB of HBM3e: the family's chip nearest its memory)
    return (gpu_chip(key, memory) if key is not None else None), words


class Executions:
    """Host launch events and execution spans, to give each kernel its execution ordinal."""

    def __init__(self) -> None:
        self.launch: dict[int, tuple[str, float]] = {}  # correlation id -> (host line, time)
        self.spans: dict[str, list[tuple[float, float, str]]] = defaultdict(list)  # line -> spans
        self.launches: dict[tuple[str, int | None], list[float]] = defaultdict(lambda: [0, 0.0])
        self._ordinal: dict[tuple[str, float], int] = {}
        self._home: dict[str, str | None] = {}
        self.unnamed: dict[int, float] = {}  # correlation id -> host ns of a launch with no hlo_op

    def add_host_line(self, line_name: str, events) -> None:
        for ev in events:
            st = dict(ev.stats)
            name = ev.name
            if name in EXECUTION_EVENTS or name.endswith(EXECUTION_SUFFIX):
                if name.endswith(EXECUTION_SUFFIX):
                    module = name[: -len(EXECUTION_SUFFIX)]
                else:
                    module = str(st.get("module_name") or "")
                self.spans[line_name].append((float(ev.start_ns), float(ev.start_ns + ev.duration_ns), module))
            # (jax 0.11 names a launch by its kernel, with no hlo_op: any host event with a
            # correlation id launched the device event of that id, a cuGraphLaunch a buffer's)
            corr = as_int(st.get("correlation_id"))
            if corr is not None:
                self.launch[corr] = (line_name, float(ev.start_ns))
                if st.get("hlo_op") is None:  # (counted once its kernel names the program)
                    self.unnamed[corr] = float(ev.duration_ns)
            if st.get("hlo_op") is not None:
                row = self.launches[(str(st.get("hlo_module") or ""), as_int(st.get("program_id")))]
                row[0] += 1
                row[1] += float(ev.duration_ns)

    def finish(self) -> None:
        """Number each line's execution spans per module in time order; keep one span per
        execution (ExecuteThunks and the `XLA GPU module` event nest)."""
        for line, spans in self.spans.items():
            spans.sort(key=lambda s: (s[0], -s[1]))
            kept, count = [], defaultdict(int)
            for start, end, module in spans:
                if kept and start >= kept[-1][0] and end <= kept[-1][1]:
                    continue  # nested in the execution before
                kept.append((start, end, module))
                self._ordinal[(line, start)] = count[module]
                count[module] += 1
            self.spans[line] = kept
        self._starts = {line: [s[0] for s in spans] for line, spans in self.spans.items()}

    def _enclosing(self, line: str, t: float) -> tuple[float, float, str] | None:
        starts = self._starts.get(line)
        if not starts:
            return None
        k = bisect.bisect_right(starts, t) - 1
        if k < 0 or self.spans[line][k][1] < t:
            return None
        return self.spans[line][k]

    def _home_line(self, launch_line: str) -> str | None:
        """The execution line whose spans hold most of a launch line's launches (API
        callbacks and TraceMe events name the same host thread differently)."""
        if launch_line in self._home:
            return self._home[launch_line]
        if launch_line in self.spans:
            self._home[launch_line] = launch_line
            return launch_line
        times = [t for line, t in self.launch.values() if line == launch_line]
        best, most = None, 0
        for line in self.spans:
            held = sum(1 for t in times if self._enclosing(line, t) is not None)
            if held > most:
                best, most = line, held
        self._home[launch_line] = best
        return best

    def claim(self, correlation_id, module: str, program_id: int | None) -> None:
        """Count the launch of a device event whose host call named no program (jax 0.11)
        under the event's program."""
        host_ns = self.unnamed.pop(as_int(correlation_id), None) if correlation_id is not None else None
        if host_ns is not None:
            row = self.launches[(module, program_id)]
            row[0] += 1
            row[1] += host_ns

    def run_of(self, correlation_id) -> int | None:
        """The execution ordinal of the kernel launched under this correlation id."""
        found = self.launch.get(as_int(correlation_id)) if correlation_id is not None else None
        if found is None:
            return None
        line = self._home_line(found[0])
        span = self._enclosing(line, found[1]) if line else None
        return self._ordinal.get((line, span[0])) if span else None
