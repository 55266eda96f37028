"""K005 short-pipeline: too few grid steps for the DMA pipeline to hide fill and drain."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import KernelRule, human_bytes
from hloscope.rules.registry import register


@register
class ShortPipeline(KernelRule):
    """Too few grid steps for the DMA pipeline to hide fill and drain."""

    code = "K005"
    name = "short-pipeline"
    severity = Severity.INFO
    summary = "too few grid steps for DMA/compute overlap to amortise fill and drain"

    class Options(RuleOptions):
        min_steps: int = 4
        min_block_bytes: int = 1 << 20  # small transfers cost little even when exposed

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            moved = sum(b.bytes for b in s.operands if b.block)
            if s.grid_steps >= self.options.min_steps or moved < self.options.min_block_bytes:
                continue
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} runs {s.grid_steps} grid step(s) (grid {s.grid}) moving "
                f"{human_bytes(moved)} of blocks per step: the first load and last store are "
                f"not overlapped with compute",
                evidence={"grid": s.grid, "steps": s.grid_steps, "block_bytes": moved},
                help="Use blocks of about 1 MiB so the grid has several steps per core; the "
                     "pipeline then overlaps each step's DMA with the previous step's compute. "
                     "Much smaller blocks cost more again: each grid step has a fixed overhead "
                     "(libtpu's static estimate of an 8 MiB copy: 1 step 37,805 cycles, 2 steps "
                     "20,790, 8 steps 19,397, 32 steps 30,897).",
            )
