"""The counts of `hloscope stats`: opcodes, fusion kinds, custom-call targets, per module
and per computation, also from parts of a module counted apart (stats.halves)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hloscope._speed import regex_cache
from hloscope.cost.flops import custom_call_flop_gap, has_flop_model
from hloscope.cost.library import is_library_call
from hloscope.ir import Computation, Instruction, Module

# The keys of a stats record, in the order its JSON prints them (ModuleStats.to_dict)
RECORD_KEYS = ("name", "path", "computations", "fusion_computations", "instructions", "opcodes",
               "fusion_kinds", "custom_call_targets", "unknown_cost", "per_computation", "memory")


def ordered(record: dict[str, Any]) -> dict[str, Any]:
    """A stats record in RECORD_KEYS order, as ModuleStats.from_record(record).to_dict() gives
    it, without the dataclass (`hloscope stats` from the compiled pass imports none)."""
    if set(record) != set(RECORD_KEYS):
        raise TypeError(f"not a stats record: keys {sorted(record)}")
    return {key: record[key] for key in RECORD_KEYS}


# XLA prints a fusion's kind first: read there, the key cannot be inside another value.
_KIND_FIRST = regex_cache.compile(r",[ \t]*kind=([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:,|$)")


def _kind(instr: Instruction) -> str | None:
    if instr.opcode != "fusion":
        return None
    if instr._attrs is None and instr.attr_text.count("kind=") == 1:
        m = _KIND_FIRST.match(instr.attr_text)
        if m is not None:
            return m.group(1)
    return instr.raw_attr("kind") or "kLoop"


def _counters(instrs: list[Instruction]) -> tuple[Counter, Counter, Counter]:
    opcodes = Counter(i.opcode for i in instrs)
    kinds = Counter(_kind(i) for i in instrs if i.opcode == "fusion") if "fusion" in opcodes else Counter()
    targets = Counter(
        str(i.attr("custom_call_target")) for i in instrs if i.opcode == "custom-call"
    ) if "custom-call" in opcodes else Counter()
    return opcodes, kinds, targets


def _as_json(n: int, opcodes: Counter, kinds: Counter, targets: Counter) -> dict[str, Any]:
    return {
        "instructions": n,
        "opcodes": dict(opcodes.most_common()),
        "fusion_kinds": dict(kinds.most_common()),
        "custom_call_targets": dict(targets.most_common()),
    }


def module_stats(module: Module, per_computation: bool = True) -> dict[str, Any]:
    """Counts for the module; `per_computation=False` leaves that list empty."""
    fused = module.fusion_computations()
    entry = module.entry
    part = stats_part(module.computations, fused, entry.name if entry else None, per_computation)
    return stats_total(module.name, module.path, fused, [part])


def stats_part(comps: list[Computation], fused: frozenset[str], entry: str | None,
               per_computation: bool) -> dict[str, Any]:
    """The counts of some of a module's computations (plain data: it may come from another
    process), for stats_total; `fused` and `entry` are the whole module's."""
    per_comp = []
    for comp in comps if per_computation else ():
        per_comp.append({"name": comp.name, "is_entry": comp.name == entry,
                         "is_fusion": comp.name in fused,
                         **_as_json(len(comp.instructions), *_counters(comp.instructions))})
    opcodes, kinds, targets = _counters([i for c in comps for i in c.instructions])
    uncosted = sum(1 for c in comps for i in c.instructions
                   if i.opcode == "custom-call" and custom_call_flop_gap(i) and not is_library_call(i)
                   ) if "custom-call" in opcodes else 0  # (cuBLAS, cuDNN: costed from their configs)
    return {"computations": len(comps), "instructions": sum(len(c.instructions) for c in comps),
            "opcodes": dict(opcodes), "kinds": dict(kinds), "targets": dict(targets),
            "uncosted_custom_calls": uncosted, "per_computation": per_comp}


def stats_total(name: str, path: str, fused: frozenset[str], parts: list[dict[str, Any]]) -> dict[str, Any]:
    """module_stats from the parts of its computations, in order (counts that tie keep
    the order they were first seen in, as over the whole module)."""
    opcodes, kinds, targets = Counter(), Counter(), Counter()
    unknown: Counter = Counter()
    for part in parts:
        unknown["custom-call without cost_estimate"] += part["uncosted_custom_calls"]
        opcodes.update(part["opcodes"])
        kinds.update(part["kinds"])
        targets.update(part["targets"])
    for op, n in opcodes.items():
        if not has_flop_model(op):
            unknown[f"{op} (no FLOP model)"] += n
    return {
        "name": name,
        "path": path,
        "computations": sum(p["computations"] for p in parts),
        "fusion_computations": len(fused),
        **_as_json(sum(p["instructions"] for p in parts), opcodes, kinds, targets),
        "unknown_cost": {k: n for k, n in unknown.most_common() if n},
        "per_computation": [c for p in parts for c in p["per_computation"]],
    }
