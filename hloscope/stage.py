"""The compile stage of a module: what part of XLA's pipeline the text comes from.

A pre-optimization module (as lowered, or a pass dump before fusion) is not a scheduled
program: its copies may be sharding annotations and its collectives are not async yet.
Rules declare the stages their pattern means something in (hloscope.rules.base.Rule.stages).

The stage comes from an `--xla_dump_to` file name when it says (`before_optimizations`,
`after_optimizations`, a pass dump `NNNN.<pass>.after_<pass>.before_<next>`), else from the
text: `is_scheduled=true`, fusions or async start/done pairs mean XLA has optimized it;
`Sharding`/Shardy custom calls, or none of those, mean it has not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hloscope.ir import Module

BEFORE = "before_optimizations"
AFTER = "after_optimizations"
STAGES = (BEFORE, AFTER)

# `.NNNN.<pipeline>.after_<pass>.before_<next>.txt`, or a pass's own step dumps (copy
# insertion writes `.NNNN.copy-insertion.after_adding_copies_to_resolve_interference.txt`)
_PASS_DUMP = re.compile(r"\.\d{4}\.([\w.-]+?)\.after_([\w.-]+?)(?:\.before_|\.txt$)")
_ANNOTATIONS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")
_QUOTED_ANNOTATIONS = frozenset(f'"{t}"' for t in _ANNOTATIONS)  # as custom_call_target prints them


@dataclass(frozen=True)
class Stage:
    """name: before_optimizations | after_optimizations; source: why we say so."""

    name: str
    source: str
    pass_name: str | None = None  # a pass dump's pass, when the file name gives it

    @property
    def optimized(self) -> bool:
        return self.name == AFTER

    def to_dict(self) -> dict:
        out = {"stage": self.name, "stage_source": self.source}
        if self.pass_name:
            out["pass"] = self.pass_name
        return out

    def __str__(self) -> str:
        return f"{self.name} ({self.source})"


def stage_from_name(path: str) -> Stage | None:
    """The stage an XLA dump's file name states, if any."""
    name = Path(path).name
    if "before_optimizations" in name:
        return Stage(BEFORE, "file name")
    if "after_optimizations" in name:
        return Stage(AFTER, "file name")
    m = _PASS_DUMP.search(name)
    if m is not None:  # a pass dump: before the pipeline's end, not yet optimized as a whole
        return Stage(BEFORE, "file name: pass dump", pass_name=m.group(2))
    return None


def detect_stage(module: Module, override: str | None = None) -> Stage:
    """The module's stage: `override` (--stage), else its file name, else its text."""
    if override:
        if override not in STAGES:
            raise ValueError(f"unknown stage {override!r}; use {' or '.join(STAGES)}")
        return Stage(override, "--stage")
    named = stage_from_name(module.path)
    if named is not None:
        return named
    if module.is_scheduled:
        return Stage(AFTER, "is_scheduled=true")
    opcodes = module.opcodes()
    if any(i.raw_attr("custom_call_target") in _QUOTED_ANNOTATIONS
           for i in module.of_opcode("custom-call")):
        return Stage(BEFORE, "sharding annotations (Sharding custom calls)")
    if "fusion" in opcodes:
        return Stage(AFTER, "fusions")
    if any(op.endswith("-done") for op in opcodes):
        return Stage(AFTER, "async start/done pairs")
    return Stage(BEFORE, "no fusions, no schedule")
