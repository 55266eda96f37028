"""Roofline per instruction: time if compute-bound vs. memory-bound, on one chip."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from heapq import nsmallest
from operator import attrgetter

from hloscope.cost.chips import Chip
from hloscope.cost.flops import FREE, kernel_cost_estimate
from hloscope.cost.library import gemm_precision, is_library_call
from hloscope.cost.ops import Cost, CostModel
from hloscope.cost.precision import matmul_peak, precision_of
from hloscope.ir import Instruction, Module
from hloscope.source import source_of

_MATMUL = ("dot", "convolution")


@dataclass(slots=True)
class Row:
    computation: str
    instruction: str
    opcode: str
    flops: float
    transcendentals: float
    bytes: int
    logical_bytes: int
    hbm_bytes: int
    intensity: float
    t_compute: float
    t_memory: float
    bound: str
    times: int = 1
    estimated_cycles: int | None = None
    estimated_seconds: float | None = None
    unknown_cost: str | None = None  # why the FLOPs could not be computed (then 0)
    cost_source: str = ""  # custom calls: "cost_estimate" (the kernel's own) or "kernel body" (derived)
    op_name: str = ""  # the JAX op it came from
    source: str = ""  # file:line (function) in the user's program
    t_floor: float = 0.0  # what the op takes however small (the chip's measured op_floor_s)

    @property
    def t_bound(self) -> float:
        """The roofline: a lower bound on the op's time."""
        return max(self.t_compute, self.t_memory)

    @property
    def t_estimate(self) -> float:
        """The op's estimated time: its bound, or the chip's per-op floor where that is more."""
        return max(self.t_compute, self.t_memory, self.t_floor)

    def to_dict(self) -> dict:
        # (every field is a plain value: asdict's recursive deep copy, per op of a 40,000-op
        # dump, took as long as the whole roofline)
        out = dict(zip(_ROW_FIELDS, _row_values(self)))
        out["t_estimate"] = self.t_estimate
        return out


def _cost_order(row: Row) -> float:
    """The text report's order: costliest first (its t_bound x times)."""
    return -row.t_bound * row.times


_ROW_FIELDS = tuple(f.name for f in fields(Row))
# The order roofline() gives a Row's values in (a test holds Row's fields to it)
_ROW_ORDER = ("computation", "instruction", "opcode", "flops", "transcendentals", "bytes",
              "logical_bytes", "hbm_bytes", "intensity", "t_compute", "t_memory", "bound",
              "times", "estimated_cycles", "estimated_seconds", "unknown_cost", "cost_source",
              "op_name", "source", "t_floor")
_row_values = attrgetter(*_ROW_FIELDS)


@dataclass
class Report:
    module: str
    chip: Chip
    rows: list[Row] = field(default_factory=list)
    totals: Cost = field(default_factory=Cost)
    unknown_trip_counts: list[str] = field(default_factory=list)

    def totals_json(self) -> dict:
        # (one pass over the rows, each sum in row order as sum() would add it)
        t_compute = t_memory = t_roofline = t_estimate = 0
        for r in self.rows:
            t_compute += r.t_compute * r.times
            t_memory += r.t_memory * r.times
            bound = max(r.t_compute, r.t_memory)  # (t_bound and t_estimate, inline)
            t_roofline += bound * r.times
            t_estimate += max(bound, r.t_floor) * r.times
        return {
            "flops": self.totals.flops,
            "bytes": self.totals.padded_bytes,
            "logical_bytes": self.totals.bytes,
            "hbm_bytes": self.totals.hbm_bytes,
            "transcendentals": self.totals.transcendentals,
            "t_compute": t_compute,
            "t_memory": t_memory,
            "t_roofline": t_roofline,
            "t_estimate": t_estimate,
            "unknown_trip_counts": self.unknown_trip_counts,
            "unknown_cost": [{"instruction": name, "reason": why}
                             for name, why in dict(self.totals.unknown).items()],
        }

    def __repr__(self) -> str:
        t = sum(r.t_bound * r.times for r in self.rows)
        return (f"<Roofline {self.module} on {self.chip.name}: {len(self.rows)} ops, "
                f"{self.totals.flops:.4g} FLOPs, roofline {t * 1e6:.2f} us>")

    def _repr_html_(self) -> str:
        from hloscope.units import html_table, human_bytes, human_seconds

        rows = sorted(self.rows, key=_cost_order)
        shown = [[r.instruction, r.opcode, f"{r.flops * r.times:.3g}", human_bytes(r.bytes * r.times, 2),
                  human_seconds(r.t_bound * r.times, 3), r.bound, r.source] for r in rows[:25]]
        return html_table(repr(self)[1:-1], ["instruction", "opcode", "FLOPs", "bytes", "time", "bound",
                                             "source"], shown, max(len(rows) - 25, 0))

    def to_dict(self, top: int = 0) -> dict:
        """The JSON record of `hloscope roofline` for this module; `top` > 0: only the `top`
        costliest rows (t_bound x times, ties in program order), with `rows` (how many there
        are) and `derived_rows` (whether any row is costed from a kernel's body), what the
        text report says of the rest (a 40,000-op dump shows 20 rows: not 40,000 records)."""
        if top <= 0:
            return {"name": self.module, "totals": self.totals_json(),
                    "instructions": [row.to_dict() for row in self.rows]}
        shown = nsmallest(top, self.rows, key=_cost_order)
        return {"name": self.module, "totals": self.totals_json(),
                "instructions": [row.to_dict() for row in shown], "rows": len(self.rows),
                "derived_rows": any(r.cost_source == "kernel body" for r in self.rows)}


MatmulSpec = tuple  # (operand element types, precision, algorithm or None)


def matmul_spec(model: CostModel, instr: Instruction) -> MatmulSpec | None:
    """What feeds the matrix unit of one op: the operand types, precision and algorithm of
    its first dot/convolution (its own, or the first in what it calls); a kernel's (custom
    call's) from its decoded body's matmuls, else its array operands' types. None: no matmul."""
    if instr.opcode in _MATMUL:
        return _spec(model, instr)
    if instr.opcode == "custom-call":
        body = model.kernel_costs.get(instr.name)
        if body is not None and body.matmul_types:
            return body.matmul_types, "default", None
        types = tuple(s.element_type for s in model.operand_shapes(instr)
                      if s.is_array and len(s.dims) >= 2)
        stated = gemm_precision(instr) if is_library_call(instr) else None
        return (types[:2], *(stated or ("default", None))) if types else None
    for name in instr.calls():
        if name not in model.matmul_types:  # (once per computation, not per caller)
            comp = model.module.by_name.get(name)
            first = next((i for i in comp.instructions if i.opcode in _MATMUL), None) if comp else None
            model.matmul_types[name] = _spec(model, first) if first is not None else None
        if model.matmul_types[name] is not None:
            return model.matmul_types[name]
    return None


def _spec(model: CostModel, instr: Instruction) -> MatmulSpec:
    types = tuple(s.element_type for s in model.operand_shapes(instr)[:2])
    algorithm = instr.attrs.get("algorithm")
    return types, precision_of(instr.attrs.get("operand_precision")), str(algorithm) if algorithm else None


def compute_peak(model: CostModel, chip: Chip, instr: Instruction) -> float:
    """FLOP/s an op's FLOPs run at: its matmul's rate (operand types, precision: MXU passes),
    or, with no matmul, the rate of its own element type."""
    spec = matmul_spec(model, instr)
    if spec is not None:
        return matmul_peak(chip, *spec)
    return chip.peak_flops(instr.shape.element_type if instr.shape.is_array else "bf16")


def estimated_cycles(instr: Instruction) -> int | None:
    """The TPU compiler's own estimate: backend_config[.window_config].estimated_cycles
    (None where it printed none, or its "no estimate" sentinel near 2^63)."""
    config = instr.config_with("estimated_cycles")
    if not isinstance(config, dict):
        return None
    for holder in (config, config.get("window_config")):
        if isinstance(holder, dict) and "estimated_cycles" in holder:
            try:
                cycles = int(holder["estimated_cycles"])
            except (TypeError, ValueError):
                return None
            return cycles if 0 <= cycles < 1 << 62 else None
    return None


def roofline(module: Module, chip: Chip, trip_counts: bool = True, kernel_costs=None) -> Report:
    """`kernel_costs`: hloscope.mlir.cost.body_costs(module), for kernels with no cost_estimate."""
    model = CostModel(module, trip_counts=trip_counts, kernel_costs=kernel_costs)
    report = Report(module.name, chip)
    report.totals = model.module_cost()
    report.unknown_trip_counts = sorted(set(report.totals.unknown_trip_counts))
    floor = op_floor(module, chip)
    rows, cost, clock = report.rows, model.cost, chip.clock_hz
    for comp_name, times in _executed(model, module):
        for instr in module[comp_name].instructions:
            op = instr.opcode
            if op in _NO_ROW:  # (has_row)
                continue
            c = cost(instr)
            t_compute, t_memory = op_times(model, chip, instr, c)
            cycles = estimated_cycles(instr)
            src = source_of(instr, module)
            # (by position, in _ROW_ORDER: a 40,000-op dump's rows by keyword cost 3x)
            rows.append(Row(
                comp_name, instr.name, op, c.flops, c.transcendentals, c.padded_bytes, c.bytes,
                c.hbm_bytes, c.flops / c.padded_bytes if c.padded_bytes else 0.0,
                t_compute, t_memory, "compute" if t_compute >= t_memory else "memory", times,
                cycles, cycles / clock if cycles and clock else None,
                "; ".join(f"%{n}: {why}" for n, why in c.unknown) if c.unknown else None,
                _cost_source(model, instr),
                src.op_name, src.location, floor if runs_alone(op) else 0.0))
    return report


def op_floor(module: Module, chip: Chip) -> float:
    """The chip's per-op floor where the module is a scheduled program (after optimizations);
    0 before: the ops of a pre-optimization module are fused later, not run one by one."""
    if not chip.op_floor_s:
        return 0.0
    from hloscope.stage import detect_stage

    return chip.op_floor_s if detect_stage(module).optimized else 0.0


_NO_ROW = FREE | {"while", "call", "conditional"}


def has_row(opcode: str) -> bool:
    """Whether an op is costed as a row of its own (control flow is its callees' rows)."""
    return opcode not in _NO_ROW


_WAITS = ("-start", "-done", "-update")  # async halves: the work is the pair's, timed apart
_COLLECTIVES = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                          "collective-permute", "collective-broadcast", "ragged-all-to-all",
                          "send", "recv"})


def runs_alone(opcode: str) -> bool:
    """Whether an op is a kernel of its own that the per-op floor applies to (collectives are
    timed by the sharding model, async halves by their pair)."""
    return not opcode.endswith(_WAITS) and opcode not in _COLLECTIVES


def op_times(model: CostModel, chip: Chip, instr: Instruction, cost: Cost | None = None) -> tuple[float, float]:
    """(compute, memory) seconds of one op on a chip: its FLOPs at the rate of its matmul
    (operand types and precision, compute_peak; its own type otherwise), its HBM bytes at HBM bandwidth (on-chip VMEM
    operands cost no HBM traffic)."""
    c = cost if cost is not None else model.cost(instr)
    if not c.flops:  # (a copy, a reshape, a collective: no rate to look up)
        return 0.0, c.hbm_bytes / chip.hbm_bandwidth
    peak = compute_peak(model, chip, instr)
    return (c.flops / peak if peak else 0.0), c.hbm_bytes / chip.hbm_bandwidth


def _cost_source(model: CostModel, instr: Instruction) -> str:
    if instr.opcode != "custom-call":
        return ""
    if kernel_cost_estimate(instr):
        return "cost_estimate"
    if is_library_call(instr):
        return "library call"
    return "kernel body" if instr.name in model.kernel_costs else ""


def _executed(model: CostModel, module: Module) -> list[tuple[str, int]]:
    """Computations whose instructions run as kernels, with how often they run."""
    out: list[tuple[str, int]] = []
    if module.entry is None:
        return out
    stack = [(module.entry.name, 1)]
    seen: set[str] = set()
    while stack:
        name, times = stack.pop()
        if name in seen or name not in module.by_name:
            continue
        seen.add(name)
        out.append((name, times))
        for instr in module[name].instructions:
            if instr.opcode == "while":
                trips = (model.trip_count(instr) if model.trip_counts else 1) or 1
                stack.extend((c, times * trips) for c in (instr.attr("condition"), instr.attr("body")))
            elif instr.opcode in ("call", "conditional", "async-start"):
                stack.extend((c, times) for c in instr.called_computations)
    return out
