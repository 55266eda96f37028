"""The memory report of a module (`hloscope memory`, `Program.memory()`): XLA's HBM figure
and the peak of temporaries over the schedule, built by hloscope.cost.liveness. A result,
so a dataclass, kept apart from hloscope.cost.memory: `hloscope stats` reads that module
and needs no dataclass."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MemoryReport:
    module: str
    scheduled: bool
    argument_bytes: int = 0
    output_bytes: int = 0
    alias_bytes: int = 0
    temp_peak_bytes: int = 0  # HBM temporaries live together at the peak
    peak_step: int = -1
    peak_instruction: str = ""
    peak_live: list[dict] = field(default_factory=list)  # the largest buffers live at the peak
    other_spaces: dict[str, int] = field(default_factory=dict)  # peak per non-HBM space
    timeline: list[tuple[int, str, int]] = field(default_factory=list)  # (step, instr, HBM temp live)
    constant_bytes: int = 0

    def __repr__(self) -> str:
        from hloscope.units import human_bytes

        return (f"<MemoryReport {self.module}: HBM {human_bytes(self.hbm_bytes, 2)} = arguments "
                f"{human_bytes(self.argument_bytes, 2)} + outputs {human_bytes(self.output_bytes, 2)} "
                f"- aliased {human_bytes(self.alias_bytes, 2)} + peak temporaries "
                f"{human_bytes(self.temp_peak_bytes, 2)} (at %{self.peak_instruction or '-'})>")

    @property
    def hbm_bytes(self) -> int:
        """arguments + outputs - aliased + peak temporaries: XLA's HBM figure."""
        return self.argument_bytes + self.output_bytes - self.alias_bytes + self.temp_peak_bytes

    def to_dict(self) -> dict:
        return {"module": self.module, "scheduled": self.scheduled,
                "argument_bytes": self.argument_bytes, "output_bytes": self.output_bytes,
                "alias_bytes": self.alias_bytes, "temp_peak_bytes": self.temp_peak_bytes,
                "hbm_bytes": self.hbm_bytes, "peak_step": self.peak_step,
                "peak_instruction": self.peak_instruction, "peak_live": self.peak_live,
                "other_spaces": self.other_spaces, "constant_bytes": self.constant_bytes,
                "timeline": [list(t) for t in self.timeline]}
