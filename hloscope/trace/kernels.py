"""The kernel view of a TPU capture: for each run of a custom-call kernel (a Pallas/Mosaic
`tpu_custom_call` on an `XLA Ops` line), what happened inside its time window on the same
device plane:
- `XLA TraceMe` regions (recorded with custom-call region tracing), per name, and their time
  by kind: DMA wait (`*wait*`: the pipeline blocked on a copy), DMA copy (`*copy*`, `*dma*`:
  issuing copies), compute (the rest: `ep_run_kernel`, the kernel's own named scopes). Each
  kind's time is the union of its regions, so nested regions are not counted twice;
- the utilization counters (`_counters_`: MXU, Vector ALU/Load/Store, Scalar ALU), each
  averaged over the kernel's windows weighted by how much of each sample falls inside;
- the LLO bundles executed (`Tensor Core` events inside the windows).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from hloscope.trace.events import Profile, Span, union_length


def region_kind(name: str) -> str:
    low = name.lower()
    if "wait" in low:
        return "dma wait"
    if "copy" in low or "dma" in low:
        return "dma copy"
    return "compute"


@dataclass
class KernelView:
    module: str
    instruction: str
    runs: int = 0
    seconds: float = 0.0  # all runs
    regions: list[dict] = field(default_factory=list)  # name, kind, count, seconds
    kinds: dict[str, float] = field(default_factory=dict)  # kind -> seconds (union)
    counters: dict[str, float] = field(default_factory=dict)  # name -> mean % util
    bundles: int = 0
    devices: dict[str, int] = field(default_factory=dict)  # plane -> runs

    def share(self, kind: str) -> float:
        return self.kinds.get(kind, 0.0) / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["shares"] = {k: self.share(k) for k in self.kinds}
        return out


class _ByPlane:
    """Spans of each plane sorted by start, to take those inside a window quickly."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans: dict[str, list[Span]] = defaultdict(list)
        for s in spans:
            self.spans[s.plane].append(s)
        self.starts = {}
        for plane, items in self.spans.items():
            items.sort(key=lambda s: s.start_ns)
            self.starts[plane] = [s.start_ns for s in items]
        self.longest = {p: max((s.duration_ns for s in items), default=0.0)
                        for p, items in self.spans.items()}

    def overlapping(self, plane: str, start: float, end: float) -> list[Span]:
        items = self.spans.get(plane)
        if not items:
            return []
        starts = self.starts[plane]
        lo = bisect.bisect_left(starts, start - self.longest[plane])
        hi = bisect.bisect_right(starts, end)
        return [s for s in items[lo:hi] if s.end_ns > start and s.start_ns < end]


def kernel_views(profile: Profile, kernels: set[tuple[str, str]]) -> dict[tuple[str, str], KernelView]:
    """(module, instruction) -> KernelView for the named kernels seen in the profile."""
    if not kernels:
        return {}
    regions, counters, bundles = _ByPlane(profile.regions), _ByPlane(profile.counters), _ByPlane(profile.bundles)
    views: dict[tuple[str, str], KernelView] = {}
    by_kind: dict[tuple[str, str], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    per_region: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0, 0.0]))
    weighted: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    for ev in profile.events:
        key = (ev.module, ev.hlo_op)
        if key not in kernels or ev.is_async:
            continue
        v = views.setdefault(key, KernelView(*key))
        start, end = ev.start_ns, ev.start_ns + ev.duration_ns
        v.runs += 1
        v.seconds += ev.duration_ns * 1e-9
        v.devices[ev.plane] = v.devices.get(ev.plane, 0) + 1
        for r in regions.overlapping(ev.plane, start, end):
            a, b = max(r.start_ns, start), min(r.end_ns, end)
            by_kind[key][region_kind(r.name)].append((a, b))
            row = per_region[key][r.name]
            row[0] += 1
            row[1] += (b - a) * 1e-9
        for c in counters.overlapping(ev.plane, start, end):
            inside = min(c.end_ns, end) - max(c.start_ns, start)
            acc = weighted[key][c.name]
            acc[0] += c.value * inside
            acc[1] += inside
        v.bundles += int(sum(b.value for b in bundles.overlapping(ev.plane, start, end)
                             if b.start_ns >= start))
    for key, v in views.items():
        v.kinds = {kind: union_length(spans) * 1e-9 for kind, spans in by_kind[key].items()}
        v.regions = [{"name": n, "kind": region_kind(n), "count": int(c), "seconds": t}
                     for n, (c, t) in sorted(per_region[key].items(), key=lambda kv: -kv[1][1])]
        v.counters = {n: total / time for n, (total, time) in sorted(weighted[key].items()) if time}
    return views
