"""A/B comparison of two compiles of one program (`hloscope diff A B`): modules matched by
name (a pair of single-module files is matched whatever their names), and for each pair the
deltas a tuning loop looks at: FLOPs, bytes and static time per op category, the step
estimate and its exposed communication, the static HBM peak, ops added / removed / changed,
collectives, and lint findings new and fixed by pattern. Instruction numbers differ between
compiles, so ops are matched by what they are (opcode and the JAX op that made them, else
the name with its numbers taken out), never by name. Two profiles compare measured time per
module and per op instead.

Regression gates (`--fail-if`): `METRIC>+N%` or `METRIC>+N` for step_time, flops, bytes,
hbm_peak, exposed (seconds), mfu, findings (count).

Donation is read from each module's `input_output_alias` (the bytes of inputs whose buffers
outputs reuse): where B donates more than A and its static HBM peak is lower, the pair's
verdict names the donation as the improvement.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from hloscope.ir import Module

METRICS = ("step_time", "flops", "bytes", "hbm_peak", "exposed", "mfu", "findings")
_GATE = re.compile(r"^\s*(\w+)\s*>\s*\+?\s*([0-9.]+)\s*(%?)\s*$")
_NUMBERS = re.compile(r"\.\d+|\d+")


@dataclass
class Gate:
    metric: str
    threshold: float
    relative: bool

    @classmethod
    def parse(cls, text: str) -> Gate:
        m = _GATE.match(text)
        if not m or m.group(1) not in METRICS:
            raise ValueError(f"bad --fail-if {text!r}: use METRIC>+N% or METRIC>+N with METRIC one of "
                             + ", ".join(METRICS))
        return cls(m.group(1), float(m.group(2)), bool(m.group(3)))

    def tripped(self, a: float, b: float) -> bool:
        if self.relative:
            return (b - a) > self.threshold / 100 * abs(a) if a else b > 0
        return (b - a) > self.threshold

    def __str__(self) -> str:
        return f"{self.metric}>+{self.threshold:g}{'%' if self.relative else ''}"


@dataclass
class Side:
    """One module's numbers."""

    name: str
    totals: dict[str, float]
    categories: dict[str, dict[str, float]]  # category -> flops, bytes, seconds
    ops: Counter  # (kind key, description) -> count
    collectives: Counter  # (opcode, bytes, async) -> count
    findings: dict[str, dict]  # fingerprint -> {code, message, count}


def _op_key(instr, module: Module) -> tuple[str, str]:
    from hloscope.source import source_of

    src = source_of(instr, module)
    what = _NUMBERS.sub("", src.op_name) if src.op_name else _NUMBERS.sub("", instr.name)
    return (instr.opcode, what)


def _op_form(instr) -> str:
    kind = instr.attr("kind", None) if instr.opcode == "fusion" else None
    return instr.shape.text() + (f" {kind}" if kind else "")


def side(module: Module, chip, findings: list) -> Side:
    from hloscope.cost.category import category
    from hloscope.cost.liveness import memory
    from hloscope.cost.roofline import roofline
    from hloscope.mlir.cost import body_costs
    from hloscope.sharding.step import estimate
    from hloscope.trace.join import executed_ops

    report = roofline(module, chip, kernel_costs=body_costs(module))
    step = estimate(module, chip, report)
    mem = memory(module)
    cats: dict[str, dict[str, float]] = defaultdict(lambda: {"flops": 0.0, "bytes": 0.0, "seconds": 0.0})
    for r in report.rows:
        instr = module.by_name[r.computation].by_name[r.instruction]
        c = cats[category(instr, module)]
        c["flops"] += r.flops * r.times
        c["bytes"] += r.hbm_bytes * r.times
        c["seconds"] += r.t_bound * r.times
    ops: Counter = Counter()
    for instrs in executed_ops(module).values():
        for i in instrs:
            ops[(*_op_key(i, module), _op_form(i))] += 1
    collectives = Counter((c.opcode, c.moved_bytes, c.is_async) for c in step.collectives)
    mine: dict[str, dict] = {}
    for f in findings:
        if f.module == module.name:
            entry = mine.setdefault(f.fingerprint or f"{f.code}:{f.instruction}",
                                    {"code": f.code, "message": f.message, "count": 0})
            entry["count"] += 1
    totals = {"step_time": step.step_seconds, "flops": report.totals.flops,
              "bytes": float(report.totals.hbm_bytes), "exposed": step.exposed_seconds,
              "mfu": step.mfu or 0.0, "hbm_peak": float(mem.hbm_bytes) if mem.scheduled else 0.0,
              "findings": float(len([f for f in findings if f.module == module.name])),
              "donated": float(mem.alias_bytes)}
    return Side(module.name, totals, dict(cats), ops, collectives, mine)


def verdicts(a: Side, b: Side) -> list[str]:
    """What a reader should take from the pair beyond the deltas: a donation that lowered
    the static HBM peak is an improvement, whatever else moved."""
    from hloscope.units import human_bytes

    out = []
    da, db = a.totals["donated"], b.totals["donated"]
    pa, pb = a.totals["hbm_peak"], b.totals["hbm_peak"]
    if db > da and pa and pb and pb < pa:
        out.append(f"improvement: B donates {human_bytes(db - da)} more of its inputs "
                   f"(input_output_alias) and its static HBM peak falls "
                   f"{human_bytes(pa - pb)} ({(pb - pa) / pa:+.1%})")
    elif db < da and pa and pb and pb > pa:
        out.append(f"regression: B donates {human_bytes(da - db)} less of its inputs and its "
                   f"static HBM peak rises {human_bytes(pb - pa)} ({(pb - pa) / pa:+.1%})")
    return out


@dataclass
class Pair:
    a: Side
    b: Side
    gates: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        a, b = self.a, self.b
        totals = {k: {"a": a.totals[k], "b": b.totals[k], "delta": b.totals[k] - a.totals[k],
                      "ratio": b.totals[k] / a.totals[k] if a.totals[k] else None} for k in a.totals}
        cats = {}
        for k in sorted(set(a.categories) | set(b.categories)):
            za, zb = a.categories.get(k, {}), b.categories.get(k, {})
            cats[k] = {m: {"a": za.get(m, 0.0), "b": zb.get(m, 0.0), "delta": zb.get(m, 0.0) - za.get(m, 0.0)}
                       for m in ("flops", "bytes", "seconds")}
        return {"a": a.name, "b": b.name, "totals": totals, "categories": cats,
                **ops_delta(a.ops, b.ops), "collectives": _counter_delta(a.collectives, b.collectives,
                                                                           ("opcode", "moved_bytes", "async")),
                "findings_new": [dict(v, fingerprint=k) for k, v in b.findings.items() if k not in a.findings],
                "findings_fixed": [dict(v, fingerprint=k) for k, v in a.findings.items() if k not in b.findings],
                "verdicts": verdicts(a, b), "gates": self.gates}


def _counter_delta(a: Counter, b: Counter, names: tuple[str, ...]) -> list[dict]:
    out = []
    for key in sorted(set(a) | set(b), key=str):
        if a[key] != b[key]:
            out.append({**dict(zip(names, key, strict=True)), "a": a[key], "b": b[key]})
    return out


def ops_delta(a: Counter, b: Counter) -> dict:
    """Ops added, removed, and changed (same opcode and JAX op, another shape, layout or
    fusion kind), by count."""
    by_kind_a, by_kind_b = defaultdict(Counter), defaultdict(Counter)
    for (op, what, form), n in a.items():
        by_kind_a[(op, what)][form] += n
    for (op, what, form), n in b.items():
        by_kind_b[(op, what)][form] += n
    added, removed, changed = [], [], []
    for kind in sorted(set(by_kind_a) | set(by_kind_b)):
        fa, fb = by_kind_a.get(kind, Counter()), by_kind_b.get(kind, Counter())
        if fa == fb:
            continue
        entry = {"opcode": kind[0], "op": kind[1]}
        if not fa:
            added.append(dict(entry, forms=dict(fb)))
        elif not fb:
            removed.append(dict(entry, forms=dict(fa)))
        else:
            changed.append(dict(entry, a=dict(fa - fb), b=dict(fb - fa)))
    return {"ops_added": added, "ops_removed": removed, "ops_changed": changed}


def pair_modules(a: list[Module], b: list[Module]) -> tuple[list[tuple[Module, Module]], list[str]]:
    """Modules matched by name; a single module on each side is matched whatever its name.
    Notes name the modules left unmatched."""
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])], []
    by_name = {m.name: m for m in b}
    pairs = [(m, by_name[m.name]) for m in a if m.name in by_name]
    notes = [f"only in A: {m.name}" for m in a if m.name not in by_name]
    names_a = {m.name for m in a}
    notes += [f"only in B: {m.name}" for m in b if m.name not in names_a]
    return pairs, notes


def apply_gates(pairs: list[Pair], gates: list[Gate]) -> list[str]:
    """The gates that trip, per pair (recorded on each pair too)."""
    tripped = []
    for p in pairs:
        for g in gates:
            a, b = p.a.totals[g.metric], p.b.totals[g.metric]
            hit = g.tripped(a, b)
            p.gates.append({"gate": str(g), "a": a, "b": b, "tripped": hit})
            if hit:
                tripped.append(f"{p.b.name}: {g} ({a:.6g} -> {b:.6g})")
    return tripped
