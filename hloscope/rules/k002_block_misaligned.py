"""K002 block-misaligned: block shapes whose last two dims are not multiples of the (sublane, 128-lane) tile."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.helpers import KernelRule, sublanes
from hloscope.rules.registry import register


@register
class BlockMisaligned(KernelRule):
    """Block shapes whose last two dims are not multiples of the (sublane, 128-lane) tile."""

    code = "K002"
    name = "block-misaligned"
    severity = Severity.WARNING
    summary = "block's last two dims not multiples of (8/16/32 sublanes, 128 lanes)"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            for b in s.operands:
                if not b.block or len(b.block) < 2 or b.memory_space not in ("vmem", "any"):
                    continue
                sub, lane = sublanes(b.dtype), 128
                rows, cols = b.block[-2], b.block[-1]
                if rows % sub == 0 and cols % lane == 0:
                    continue
                padded = (-(-rows // sub) * sub) * (-(-cols // lane) * lane)
                yield self.finding(
                    ctx, k.instruction,
                    f"kernel {s.name}: {b.role} block {b.block} {b.dtype} is not a multiple of "
                    f"({sub}, {lane}); each block occupies {padded / (rows * cols):.2f}x its "
                    f"data in vregs and VMEM",
                    evidence={"block": b.block, "dtype": b.dtype, "tile": [sub, lane],
                              "role": b.role},
                    help=f"Choose block shapes whose last two dims are multiples of ({sub}, 128) "
                         "for this dtype; pad the array, or reshape so the minor dim is 128-dense.",
                )
