"""`hloscope stats` of one module as a result (a dataclass, as the API's results are): its
counts, opcodes, fusion kinds, custom-call targets and memory facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hloscope.cost.memory import memory_facts
from hloscope.ir import Module
from hloscope.stats.counts import RECORD_KEYS, module_stats


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
        return {key: getattr(self, key) for key in RECORD_KEYS}


def stats(module: Module, per_computation: bool = True) -> ModuleStats:
    """The counts of one module (`per_computation=False` leaves that list empty)."""
    return ModuleStats.from_record({**module_stats(module, per_computation),
                                    "memory": memory_facts(module)})

