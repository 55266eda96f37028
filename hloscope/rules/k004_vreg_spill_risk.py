"""K004 vreg-spill-risk: a vector value far larger than the register file: the compiler must spill it."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import KernelRule, human_bytes
from hloscope.rules.registry import register


@register
class VregSpillRisk(KernelRule):
    """A vector value far larger than the register file: the compiler must spill it."""

    code = "K004"
    name = "vreg-spill-risk"
    severity = Severity.WARNING
    summary = "vector values far larger than the vreg file (e.g. a (1024,512) f32 tile)"

    class Options(RuleOptions):
        max_bytes: int = 1 << 20  # 4x the 256 KiB register file of v4/v5 cores

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            if s.largest_vector_bytes <= self.options.max_bytes:
                continue
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} computes a {s.largest_vector_type} value "
                f"({human_bytes(s.largest_vector_bytes)}), far beyond the ~256 KiB vreg file: "
                f"more spills to VMEM per step than a ~1 MiB block",
                evidence={"vector": s.largest_vector_type, "bytes": s.largest_vector_bytes},
                help="Shrink the block to about 1 MiB per value (libtpu's static estimate of "
                     "elementwise and row-reduction kernels is lowest there: ~8% under 2 MiB "
                     "blocks; 512 KiB blocks cost more again in per-step overhead), or work on "
                     "sub-tiles inside the kernel (a fori_loop over row chunks).",
            )
