"""X002 kernel-not-decoded: Pallas (Mosaic) kernels the kernel rules could not read."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register


@register
class KernelNotDecoded(ModuleRule):
    """Pallas kernels whose body could not be decoded, so K001-K006 did not see them.

    Without jax (the light install) no kernel decodes: one finding per module, naming the
    extra. A kernel from a newer jax (a Mosaic IR version the installed jaxlib cannot read)
    or a corrupt body: one finding per kernel, naming both versions."""

    code = "X002"
    name = "kernel-not-decoded"
    severity = Severity.INFO
    summary = "Pallas kernel body not decoded (no jax, or a newer Mosaic version): kernel rules skipped it"
    include_fused = True

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        ctx.kernels  # noqa: B018 - decoding sets ctx.undecoded
        undecoded = ctx.undecoded
        if not undecoded:
            return
        reasons = {k.error for k in undecoded}
        if len(reasons) == 1 and "needs jax and jaxlib" in (undecoded[0].error or ""):
            first = undecoded[0].instruction
            more = f" and {len(undecoded) - 1} more" if len(undecoded) > 1 else ""
            yield self.finding(
                ctx, first,
                f"{len(undecoded)} Pallas kernel(s) not decoded (%{first.name}{more}): "
                f"{undecoded[0].error}; the kernel rules (K001-K006) did not check them",
                evidence={"kernels": [k.instruction.name for k in undecoded], "why": undecoded[0].error},
                help="Install the jax extra (pip install 'hloscope[jax]') with a jaxlib at least as "
                     "new as the jax that compiled the kernels, and lint again.",
            )
            return
        for k in undecoded:
            yield self.finding(
                ctx, k.instruction,
                f"Pallas kernel %{k.instruction.name} not decoded: {k.error}; the kernel rules "
                f"(K001-K006) did not check it",
                evidence={"kernel": k.instruction.name, "why": k.error},
                help="Decode it with the jax that compiled it (a jaxlib at least that new), or "
                     "recompile the kernel with the jax installed here.",
            )
