"""Step time: the roofline's time per op, plus the communication compute does not hide.

The model, per device (an SPMD module after partitioning is one device's program):
- every op that is not a collective takes its roofline time, max(compute, memory), times how
  often it runs (loop trip counts);
- every logical collective (an async pair, or a chain of async collective fusions, is one)
  takes its link time from hloscope.sharding.links (on GPUs NCCL's alpha-beta model over
  NVLink and the network; on TPUs:) bytes moved per device over a
  bidirectional ring on one mesh axis, (n-1)/n of the gathered array for an all-gather, twice
  that for an all-reduce ("How to Scale Your Model", jax-ml.github.io/scaling-book, part 3:
  an all-gather costs about V / W_ici, an all-reduce twice as much); a chip with no ICI figure
  (CPU) falls back to the op's own roofline time;
- a synchronous collective is exposed whole; an async one is hidden by the compute XLA
  scheduled between its start and its done (a chain's continuation fusions included), up to
  that compute's time: exposed = max(0, collective - overlapped compute);
- an async copy (copy-start -> copy-done: a DMA between HBM and on-chip memory, or a
  prefetch) takes its start's roofline time, the done's none, and is hidden the same way by
  the compute scheduled between its start and done; only what that compute does not cover is
  added (`copies_exposed_seconds`);
- step = ops + exposed communication + exposed copies; MFU = the module's FLOPs / (step x the chip's bf16 peak).
It ignores contention between overlapped compute and collectives for HBM, latency terms and
multi-axis collectives (each runs on one axis's links), so it is a lower bound of the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from hloscope.cost.chips import Chip
from hloscope.cost.roofline import Report, Row
from hloscope.ir import Module
from hloscope.sharding.collectives import Collective


@dataclass
class CollectiveTime:
    instruction: str
    opcode: str
    axis: str
    group_size: int
    moved_bytes: float
    is_async: bool
    seconds: float  # its own time: ICI model, or its roofline time without an ICI figure
    overlap_seconds: float  # compute scheduled between its start and done
    hidden_seconds: float
    exposed_seconds: float
    times: int = 1  # executions per step (inside loops)
    overlapped_by: list[str] = field(default_factory=list)
    links: str = ""  # what bounds its time: ICI, NVLink, Infinity Fabric, network

    def to_dict(self) -> dict:
        # (plain values and one list of names: asdict's recursive deep copy cost more than
        # the step estimate on a dump of 1,600 collectives)
        out = {name: getattr(self, name) for name in _TIME_FIELDS}
        out["overlapped_by"] = list(self.overlapped_by)
        return out


_TIME_FIELDS = tuple(f.name for f in fields(CollectiveTime))


@dataclass
class StepTime:
    module: str
    chip: str
    ops_seconds: float = 0.0  # every op but the collectives and async copies (Row.t_estimate)
    floor_seconds: float = 0.0  # ... of which the chip's per-op floor adds (ops under it)
    copies_seconds: float = 0.0  # async copies (copy-start -> copy-done), their own time
    copies_exposed_seconds: float = 0.0  # ... the part the compute between does not hide
    collective_seconds: float = 0.0
    hidden_seconds: float = 0.0
    exposed_seconds: float = 0.0
    flops: float = 0.0
    peak_flops: float = 0.0
    collectives: list[CollectiveTime] = field(default_factory=list)
    caveat: str | None = None  # why the estimate is indicative (a pre-optimization module)
    platform: str = ""  # the chip's platform
    links: str = ""  # what its collectives run over, in words (sharding.links)
    op_floor_seconds: float = 0.0  # the chip's per-op floor applied (0: none, or a module before optimization)

    @property
    def step_seconds(self) -> float:
        return self.ops_seconds + self.exposed_seconds + self.copies_exposed_seconds

    @property
    def mfu(self) -> float | None:
        step = self.step_seconds
        return self.flops / (step * self.peak_flops) if step > 0 and self.peak_flops else None

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "collectives"}
        out.update(step_seconds=self.step_seconds, mfu=self.mfu,
                   collectives=[c.to_dict() for c in self.collectives])
        return out


def step_time(module: Module, chip: Chip, report: Report, collectives: list[Collective]) -> StepTime:
    """The step estimate from a roofline report and the module's logical collectives."""
    rows: dict[tuple[str, str], Row] = {(r.computation, r.instruction): r for r in report.rows}
    times_of = {r.computation: r.times for r in report.rows}
    own: set[tuple[str, str]] = set()  # rows that are the collectives themselves
    for c in collectives:
        own.add((c.computation, c.instruction))
        if c.done:
            own.add((c.computation, c.done))
    out = StepTime(module.name, chip.key, flops=report.totals.flops, peak_flops=chip.peak_flops("bf16"),
                   caveat=stage_caveat(module), platform=chip.platform)
    words = sorted({c.links for c in collectives if c.links})
    out.links = " and ".join(words)
    copies = _async_copies(module, rows)
    for start, done in copies:
        own.update((start, done))
    ops_seconds = floor_seconds = op_floor = 0.0  # (one pass, the sums in row order)
    for key, r in rows.items():
        if key not in own:
            bound = max(r.t_compute, r.t_memory)  # (t_bound; t_estimate is the floor's max)
            estimate = max(bound, r.t_floor)
            ops_seconds += estimate * r.times
            floor_seconds += (estimate - bound) * r.times
            op_floor = max(op_floor, r.t_floor)
    out.ops_seconds, out.floor_seconds, out.op_floor_seconds = ops_seconds, floor_seconds, op_floor
    spans: dict[str, tuple[dict[str, int], list[float]] | None] = {}
    for start, done in copies:
        r = rows[start]
        seconds = r.t_bound  # (the start's DMA moves the data; XLA's cost_analysis also
        # counts the done's result as accessed, which the roofline's bytes keep)
        overlap = _estimate_between(module, start[0], start[1], done[1], rows, own, spans)
        out.copies_seconds += seconds * r.times
        out.copies_exposed_seconds += max(0.0, seconds - overlap) * r.times
    for c in collectives:
        times = times_of.get(c.computation, 1)
        mine = [rows[k] for k in ((c.computation, c.instruction), (c.computation, c.done or "")) if k in rows]
        seconds = c.est_seconds if c.est_seconds is not None else sum(r.t_bound for r in mine)
        between = (_rows_between(module, c.computation, c.instruction, c.done, rows, own)
                   if c.is_async and c.done else [])
        overlap = sum(r.t_estimate for r in between)
        hidden = min(seconds, overlap)
        out.collectives.append(CollectiveTime(
            instruction=c.instruction, opcode=c.opcode, axis=c.axis, group_size=c.group_size,
            moved_bytes=c.moved_bytes, is_async=c.is_async, seconds=seconds, overlap_seconds=overlap,
            hidden_seconds=hidden, exposed_seconds=seconds - hidden, times=times,
            overlapped_by=[r.instruction for r in between], links=c.links))
        out.collective_seconds += seconds * times
        out.hidden_seconds += hidden * times
        out.exposed_seconds += (seconds - hidden) * times
    return out


def stage_caveat(module: Module) -> str | None:
    """Why a module's step time and MFU are only indicative, or None (after optimizations)."""
    from hloscope.stage import detect_stage

    stage = detect_stage(module)
    if stage.optimized:
        return None
    return (f"a {stage.name} module ({stage.source}): the global program before partitioning, "
            "fusion and scheduling, costed as if one chip ran it all; its step time and MFU are "
            "indicative only (cost the after_optimizations dump)")


def _rows_between(module: Module, computation: str, first: str,
                  last: str | None, rows: dict, own: set) -> list[Row]:
    """The rows of the ops scheduled strictly between `first` and `last`."""
    comp = module.by_name.get(computation)
    if comp is None or not last:
        return []
    pos = comp.positions()
    if first not in pos or last not in pos:
        return []
    return [rows[(computation, i.name)] for i in comp.instructions[pos[first] + 1:pos[last]]
            if (computation, i.name) in rows and (computation, i.name) not in own]


def _estimate_between(module: Module, computation: str, first: str, last: str,
                      rows: dict, own: set, spans: dict) -> float:
    """sum(r.t_estimate for r in _rows_between(...)), the same float (the same terms in the
    same order; 0.0 where an op has no row of its own adds nothing): from one list of
    estimates per computation, kept in `spans`, not a list of rows per copy (a 170-layer
    step's 8,433 async copies each looked over the ops they span)."""
    if computation not in spans:
        comp = module.by_name.get(computation)
        if comp is None:
            spans[computation] = None
        else:
            estimates = [0.0] * len(comp.instructions)
            for k, i in enumerate(comp.instructions):
                key = (computation, i.name)
                r = rows.get(key)
                if r is not None and key not in own:
                    estimates[k] = r.t_estimate
            spans[computation] = (comp.positions(), estimates)
    span = spans[computation]
    if span is None or first not in span[0] or last not in span[0]:
        return 0
    return sum(span[1][span[0][first] + 1:span[0][last]])


def _async_copies(module: Module, rows: dict) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """(start, done) row keys of each copy-start and the copy-done that takes it."""
    out = []
    for key, r in rows.items():
        comp = module.by_name.get(key[0]) if r.opcode == "copy-start" else None
        for u in comp.users().get(key[1], ()) if comp is not None else ():
            if u.opcode == "copy-done":
                out.append((key, (key[0], u.name)))
                break
    return out


def estimate(module: Module, chip: Chip, report: Report) -> StepTime:
    """step_time with the module's collectives found here (sharding.analyze)."""
    from hloscope.sharding.collectives import analyze

    _, collectives = analyze(module, chip)
    return step_time(module, chip, report, collectives)
