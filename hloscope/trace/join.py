"""Join profile events to instructions: per-instruction measured statistics.

Events match an instruction by module name and instruction name (names are
unique within an XLA module). Events of modules not given, or naming nothing in
them, are listed as unmatched; executed instructions that never appear are
counted as unseen.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from hloscope.cost.category import category
from hloscope.cost.flops import FREE
from hloscope.ir import Instruction, Module
from hloscope.trace.command_buffers import attribute
from hloscope.trace.events import Profile, union_length
from hloscope.trace.kernels import KernelView, kernel_views

_NOT_KERNELS = FREE | {"while", "call", "conditional"}


@dataclass
class InstructionStats:
    module: str
    instruction: str
    computation: str
    opcode: str
    category: str
    count: int = 0
    total_ns: float = 0.0
    min_ns: float = float("inf")
    max_ns: float = 0.0
    first_ns: float = float("inf")
    last_ns: float = 0.0
    devices: dict[str, int] = field(default_factory=dict)  # plane (or line) -> events
    device_ns: dict[str, float] = field(default_factory=dict)  # plane (or line) -> time
    async_count: int = 0  # events on an async line (overlap, not busy time)
    # executions: runs of the op, where one run may be several kernels (a GPU library call
    # runs 1-3 kernels back to back on its stream); `count` is events, as XProf counts them
    executions: int = 0

    @property
    def mean_ns(self) -> float:
        """Time per execution of the op (all its kernels)."""
        n = self.executions or self.count
        return self.total_ns / n if n else 0.0

    def add(self, start: float, duration: float, device: str) -> None:
        self.count += 1
        self.total_ns += duration
        self.min_ns = min(self.min_ns, duration)
        self.max_ns = max(self.max_ns, duration)
        self.first_ns = min(self.first_ns, start)
        self.last_ns = max(self.last_ns, start + duration)
        self.devices[device] = self.devices.get(device, 0) + 1
        self.device_ns[device] = self.device_ns.get(device, 0.0) + duration


@dataclass
class TraceIndex:
    stats: dict[tuple[str, str], InstructionStats] = field(default_factory=dict)
    unmatched: list[dict] = field(default_factory=list)
    unseen: list[tuple[str, str, str]] = field(default_factory=list)
    steps: int = 0
    step_ns: float = 0.0  # total of all steps' durations
    busy_ns: float = 0.0  # device time covered by ops, summed over steps (busiest device)
    device_kind: str | None = None
    warnings: list[str] = field(default_factory=list)
    kernels: dict[tuple[str, str], KernelView] = field(default_factory=dict)  # TPU kernel views
    labels: dict[int, str] = field(default_factory=dict)  # id(module) -> its key in `stats`

    def label(self, module: Module) -> str:
        """The module's name in `stats` keys: its name, or `name(program id)` when several
        loaded modules share the name (a GPU capture of one function compiled for several
        shapes runs programs `jit_dot(5)`, `jit_dot(21)`, ...)."""
        return self.labels.get(id(module), module.name)

    def get(self, instr: Instruction, module: Module) -> InstructionStats | None:
        return self.stats.get((self.label(module), instr.name))

    devices: int = 1  # devices (planes) the joined ops ran on

    @property
    def per_step(self) -> int:
        """What divides a time summed over the profile to give one step on one device."""
        return max(self.steps, 1) * self.devices

    def share(self, s: InstructionStats) -> float:
        """The op's share of a step on one device: its time per device over the step time."""
        return s.total_ns / self.devices / self.step_ns if self.step_ns else 0.0

    @property
    def idle_fraction(self) -> float:
        return 1.0 - self.busy_ns / self.step_ns if self.step_ns else 0.0


def executed(module: Module) -> list[Instruction]:
    """Instructions that run as kernels: top level of the entry and of loop/call bodies."""
    return [i for instrs in executed_ops(module).values() for i in instrs]


def module_labels(modules: list[Module], pids: dict[int, int | None]) -> dict[int, str]:
    """id(module) -> label: the name, or `name(program id)` where names repeat (`pids`: each
    module's program id, from its file name)."""
    count: dict[str, int] = defaultdict(int)
    for m in modules:
        count[m.name] += 1
    out, seen = {}, defaultdict(int)
    for m in modules:
        label = m.name
        if count[m.name] > 1:
            pid = pids[id(m)]
            seen[m.name] += 1
            label = f"{m.name}({pid})" if pid is not None else f"{m.name}#{seen[m.name]}"
        out[id(m)] = label
    return out


def _resolver(modules: list[Module], labels: dict[int, str], pids: dict[int, int | None],
              ran: dict[str, set]):
    """event -> (label, module) or (None, reason): by program id where the capture keys
    programs by the ids the modules' file names state (XLA GPU: the module's unique id;
    a TPU capture uses a fingerprint instead), else by name."""
    by_name: dict[str, list[Module]] = defaultdict(list)
    for m in modules:
        by_name[m.name].append(m)
    by_program = {(m.name, pids[id(m)]): m for m in modules}
    strict = {name for (name, pid) in by_program if pid is not None and pid in ran.get(name, ())}

    def find(ev) -> tuple[str | None, object]:
        found = by_name.get(ev.module)
        if not found:
            return None, "module not loaded"
        if len(found) == 1 and ev.module not in strict:
            return labels[id(found[0])], found[0]
        m = by_program.get((ev.module, ev.program_id))
        if m is None:
            return None, (f"program {ev.program_id} is none of the loaded modules named "
                          f"{ev.module} (their program ids come from their file names)")
        return labels[id(m)], m

    return find


def _warn_unknown_programs(modules: list[Module], pids: dict[int, int | None],
                           ran: dict[str, set], warnings: list[str]) -> None:
    """A module whose file name states no program id, where the trace ran several programs
    of its name: all of them are joined to it, which is right only if they are one."""
    for m in modules:
        found = ran.get(m.name, set()) - {None}
        if len(found) > 1 and pids[id(m)] is None:
            warnings.append(
                f"the trace ran {len(found)} programs named {m.name} (ids {', '.join(map(str, sorted(found)[:6]))}"
                f"{', ...' if len(found) > 6 else ''}) and {m.path} states none: all are joined to it. "
                f"Name the file as XLA dumps it (module_<id>.{m.name}...) or {m.name}.<id>.hlo.txt")


def join(profile: Profile, modules: list[Module]) -> TraceIndex:
    from hloscope.dumpdir import program_id

    index = TraceIndex(device_kind=profile.device_kind, warnings=list(profile.warnings))
    pids = {id(m): program_id(m.path, m.name) for m in modules}  # (from the file names)
    ran: dict[str, set] = defaultdict(set)  # module name -> the program ids its events carry
    for ev in profile.events:
        ran[ev.module].add(ev.program_id)
    index.labels = labels = module_labels(modules, pids)
    names = {labels[id(m)]: {i.name: i for i in m.instructions()} for m in modules}
    by_label = {labels[id(m)]: m for m in modules}
    find = _resolver(modules, labels, pids, ran)
    _warn_unknown_programs(modules, pids, ran, index.warnings)
    events, given = attribute(profile.events, modules, find, executed_ops)
    if given:
        index.warnings.append(
            f"{given} kernels ran inside command buffers (CUDA graphs), where the capture names the "
            "buffer, not the op: each was given to its op by kernel name and schedule order "
            "(XLA_FLAGS=--xla_gpu_enable_command_buffer= captures the ops' own names)")
    reasons: dict[tuple[str, str], str] = {}
    unmatched: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    runs: dict[tuple[str, object], list[float]] = {}
    last: dict[str, tuple] = {}  # device line -> (op, run) of its last event
    planes: set[str] = set()
    for ev in events:
        label, why = find(ev)
        instr = names[label].get(ev.hlo_op) if label is not None else None
        if instr is None:
            where = (label or (f"{ev.module}({ev.program_id})" if why != "module not loaded"
                               else ev.module), ev.hlo_op)
            reasons.setdefault(where, "no such instruction" if label is not None else why)
            u = unmatched[where]
            u[0] += 1
            u[1] += ev.duration_ns
            continue
        key = (label, instr.name)
        s = index.stats.get(key)
        if s is None:
            s = index.stats[key] = InstructionStats(
                label, instr.name, instr.computation, instr.opcode,
                category(instr, by_label[label]))
        s.add(ev.start_ns, ev.duration_ns, ev.plane or ev.device)
        # a GPU op may run as several kernels back to back on its stream, in one execution
        # of its program; every other event is one run of its op
        run_key = (key, ev.run_id)
        if ev.run_id is None or not ev.plane.startswith("/device:GPU") or last.get(ev.device) != run_key:
            s.executions += 1
        last[ev.device] = run_key
        planes.add(ev.plane or ev.device)
        if ev.is_async:
            s.async_count += 1
            continue  # it overlaps the ops that run meanwhile: not busy time of its own
        run = (ev.device, (label, ev.run_id if ev.run_id is not None else 0))
        span = runs.setdefault(run, [ev.start_ns, ev.start_ns + ev.duration_ns, 0.0, []])
        span[0] = min(span[0], ev.start_ns)
        span[1] = max(span[1], ev.start_ns + ev.duration_ns)
        span[3].append((ev.start_ns, ev.start_ns + ev.duration_ns))
    for (module, aggregated_op), (count, total) in profile.aggregated.items():
        unmatched[(module, aggregated_op)] = [count, total]
    index.unmatched = [
        {"module": m, "hlo_op": op, "count": int(c), "total_seconds": t * 1e-9,
         "reason": reasons.get((m, op)) or ("module not loaded" if m not in names else "no such instruction")}
        for (m, op), (c, t) in sorted(unmatched.items(), key=lambda kv: -kv[1][1])
    ]
    # Steps: one per run id; a step lasts from its first op to its last on the busiest device.
    per_run: dict[object, tuple[float, float]] = {}
    for (device, run), (start, end, _, intervals) in runs.items():
        busy = union_length(intervals)
        prev = per_run.get(run)
        if prev is None or busy > prev[1]:
            per_run[run] = (end - start, busy)
    index.devices = max(len(planes), 1)
    index.steps = len(per_run)
    index.step_ns = sum(span for span, _ in per_run.values())
    index.busy_ns = sum(busy for _, busy in per_run.values())
    kernels = {(m.name, i.name) for m in modules for i in m.instructions()  # TPU: by name
               if i.opcode == "custom-call" and (labels[id(m)], i.name) in index.stats
               and i.attr("custom_call_target", "") == "tpu_custom_call"}
    index.kernels = kernel_views(profile, kernels)
    seen = set(index.stats)
    for m in modules:
        label = labels[id(m)]
        if any(k[0] == label for k in seen):
            index.unseen.extend((label, i.computation, i.name) for i in executed(m)
                                if (label, i.name) not in seen and not _ran_wrapped(m, i, label, seen))
    return index


def _ran_wrapped(module: Module, instr: Instruction, label: str, seen: set) -> bool:
    """An async start or done whose wrapped computation's op ran (a GPU capture names the
    wrapped fusion, `loop_dynamic_slice_fusion.1`, not its `fusion-start`)."""
    start = instr
    if instr.opcode.endswith("-done") and instr.operands:
        comp = module.by_name.get(instr.computation)
        start = comp.by_name.get(instr.operands[0]) if comp is not None else None
    if start is None or not start.opcode.endswith("-start"):
        return False
    for name in start.called_computations:
        callee = module.by_name.get(name)
        if callee is not None and any((label, i.name) in seen for i in callee.instructions):
            return True
    return False


class TraceMismatch(ValueError):
    """The trace is not of this program (exit 2 unless --allow-mismatch)."""

    is_input_error = True


def executed_ops(module: Module) -> dict[str, list[Instruction]]:
    """The instructions of a module a profile can show as ops, by computation: those of
    the entry and of the computations control flow runs (loop bodies, branches, calls),
    not free (parameters, tuples, bitcasts...), not control flow itself; never a fusion's,
    a reducer's or a comparator's insides."""
    return {comp.name: [i for i in comp.instructions if i.opcode not in FREE
                        and i.opcode not in ("while", "call", "conditional")]
            for comp in module.control_flow_computations()}


def mismatch(profile: Profile, index: TraceIndex, modules: list[Module]) -> str | None:
    """Why the trace is not of these modules, naming the modules the trace holds; None when
    it is. A module matches when at least half of its ops appear: the entry's, and those of
    each loop body or branch the trace shows at all (a CPU runs a loop as one op)."""
    problems = []
    for m in modules:
        ops = linked = 0
        label = index.label(m)
        for comp, instrs in executed_ops(m).items():
            here = sum(1 for i in instrs if (label, i.name) in index.stats)
            if here or (m.entry is not None and comp == m.entry.name):
                ops += len(instrs)
                linked += here
        if linked == 0 or linked * 2 < ops:
            problems.append(f"{label}: {linked} of its {ops} ops appear in the trace")
    if not problems:
        return None
    counts: dict[str, int] = defaultdict(int)
    for ev in profile.events:
        counts[ev.module] += 1
    held = ", ".join(f"{name} ({n} op events)" for name, n in sorted(counts.items(), key=lambda kv: -kv[1])[:8])
    return ("the trace does not match the HLO (" + "; ".join(problems) + "); the trace holds "
            + (held or "no HLO op events") + ". Profile this program, or pass --allow-mismatch")
