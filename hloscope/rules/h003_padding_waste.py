"""H003 padding-waste: buffers whose padded size exceeds their data by a ratio and an absolute amount."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.cost.layout import memory_leaves
from hloscope.ir.opcodes import ALIASING
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import human_bytes
from hloscope.rules.registry import register
from hloscope.stage import AFTER


@register
class PaddingWaste(ModuleRule):
    """Buffers whose padded size exceeds their data by a ratio and an absolute amount."""

    code = "H003"
    name = "padding-waste"
    severity = Severity.WARNING
    summary = "tiled layout pads a buffer far beyond its data (e.g. 8 lanes padded to 128)"
    stages = frozenset({AFTER})  # layouts and copies are XLA's after optimization

    class Options(RuleOptions):
        ratio: float = 2.0
        min_bytes: int = 1 << 20  # wasted bytes

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        entry = ctx.module.entry
        ratio, min_bytes = self.options.ratio, self.options.min_bytes
        wasteful: dict[int, tuple] = {}  # id(shape) -> (shape, its leaves over both limits)
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue
            for instr in comp.instructions:
                if instr.opcode in ALIASING or (instr.opcode == "parameter" and comp is not entry):
                    continue
                shape = instr.shape
                known = wasteful.get(id(shape))
                if known is None or known[0] is not shape:  # (a step's ops share a few hundred)
                    known = wasteful[id(shape)] = (shape, [
                        leaf for leaf in memory_leaves(shape)
                        if leaf.ratio >= ratio and leaf.waste_bytes >= min_bytes])
                for leaf in known[1]:
                    waste = leaf.waste_bytes
                    yield self.finding(
                        ctx, instr,
                        f"%{instr.name} {leaf.shape}: {human_bytes(leaf.padded_bytes)} in memory "
                        f"for {human_bytes(leaf.logical_bytes)} of data ({leaf.ratio:.1f}x); dims "
                        f"{list(leaf.logical_dims)} pad to {list(leaf.padded_dims)}",
                        evidence={"shape": leaf.shape, "logical_bytes": leaf.logical_bytes,
                                  "padded_bytes": leaf.padded_bytes,
                                  "padded_dims": list(leaf.padded_dims), "ratio": leaf.ratio},
                        cost={"bytes_wasted": float(waste)},
                        help="Make the minor dimension a multiple of 128 (and the second-minor a "
                             "multiple of 8, 16 for bf16): reshape [N, 8] to [N/16, 128], batch "
                             "small features together, or transpose so the long dim is minor.",
                    )
