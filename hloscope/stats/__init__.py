"""Counts of a module: opcodes, fusion kinds, custom-call targets, memory facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hloscope.cost.memory import memory_facts
from hloscope.ir import Module
from hloscope.stats.counts import module_stats


@dataclass
class ModuleStats:
    """`hloscope stats` of one module; to_dict() is its JSON record."""

    name: str
    path: str
    computations: int
    fusion_computations: int
    instructions: int
    opcodes: dict[str, int]
    fusion_kinds: dict[str, int]
    custom_call_targets: dict[str, int]
    memory: dict[str, Any]
    unknown_cost: dict[str, int] = field(default_factory=dict)  # ops roofline cannot cost
    per_computation: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ModuleStats:
        return cls(**record)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "computations": self.computations,
                "fusion_computations": self.fusion_computations,
                "instructions": self.instructions, "opcodes": self.opcodes,
                "fusion_kinds": self.fusion_kinds,
                "custom_call_targets": self.custom_call_targets,
                "unknown_cost": self.unknown_cost, "per_computation": self.per_computation, "memory": self.memory}


def stats(module: Module, per_computation: bool = True) -> ModuleStats:
    """The counts of one module (`per_computation=False` leaves that list empty)."""
    return ModuleStats.from_record({**module_stats(module, per_computation),
                                    "memory": memory_facts(module)})


__all__ = ["ModuleStats", "stats"]
