"""T001 roofline-gap: an op whose measured time exceeds its roofline bound by a ratio."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class RooflineGap(TraceRule):
    """An op whose measured time exceeds its roofline bound by a ratio."""

    code = "T001"
    name = "roofline-gap"
    severity = Severity.WARNING
    summary = "measured time far above the op's roofline bound (compute or memory)"

    class Options(RuleOptions):
        # the kernel-profiling guides' thresholds: over 30% off the bound is a large gap,
        # 2x a red flag
        warning_ratio: float = 1.3
        error_ratio: float = 2.0
        # a chip whose table entry is approximate (the generic CPU) gives a rough bound:
        # a warning only from this ratio, no error
        approximate_ratio: float = 3.0
        min_seconds: float = 10e-6
        # GPUs: what a kernel costs however small (launch, ramp, tail; a few us on NVIDIA and
        # AMD GPUs): a short op whose bound is under it is launch-bound, not a roofline gap
        launch_floor_seconds: float = 5e-6

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.chip is None:
            return
        from hloscope.cost.roofline import op_times  # (only when a trace is given)
        from hloscope.sharding.bounds import by_instruction, link_word

        links = by_instruction(ctx.collectives)
        for instr, s in self.measured(ctx):
            if s.category == "control flow":
                continue  # its time is its body's ops, measured on their own
            if (ctx.module.name, instr.name) in getattr(ctx.trace, "kernels", {}):
                continue  # a custom-call kernel: T007 bounds it by its own body
            c = ctx.model.cost(instr)
            # (the roofline's own bound: FLOPs at the rate of its matmul, bytes at HBM's;
            # a collective's is the time its bytes take over the links)
            collective = links.get(instr.name)
            if collective is not None and collective.est_seconds:
                bound, what = collective.est_seconds, f"{collective.links or link_word(ctx.chip)} bound"
            else:
                bound, what = max(op_times(ctx.model, ctx.chip, instr, c)), "roofline bound"
            mean = s.mean_ns * 1e-9
            rough = ctx.chip.approximate
            warn = self.options.approximate_ratio if rough else self.options.warning_ratio
            if mean < self.options.min_seconds or bound <= 0 or mean < warn * bound:
                continue
            error = not rough and mean >= self.options.error_ratio * bound
            floor = self.options.launch_floor_seconds
            if ctx.chip.platform == "gpu" and collective is None and bound < floor and mean < 4 * floor:
                yield self.finding(
                    ctx, instr,
                    f"%{instr.name} takes {human_seconds(mean)} per run against a {what} of "
                    f"{human_seconds(bound)} on {ctx.chip.name}: launch-bound, near the "
                    f"~{human_seconds(floor)} a GPU kernel costs however small",
                    evidence={"mean_seconds": mean, "roofline_seconds": bound, "flops": c.flops,
                              "hbm_bytes": c.hbm_bytes, "launch_floor_seconds": floor},
                    cost={"est_seconds": (mean - max(bound, floor)) * s.count},
                    help=("Too small to fill the GPU: fuse it with its neighbours, batch several "
                          "into one (vmap over the calls), or cut the launch cost with command "
                          "buffers (CUDA graphs; XLA's --xla_gpu_enable_command_buffer)."),
                )
                continue
            found = self.finding(
                ctx, instr,
                f"%{instr.name} takes {human_seconds(mean)} per run, {mean / bound:.1f}x its "
                f"{what} of {human_seconds(bound)} on {ctx.chip.name}",
                evidence={"mean_seconds": mean, "roofline_seconds": bound, "flops": c.flops,
                          "hbm_bytes": c.hbm_bytes,
                          **({"moved_bytes": collective.moved_bytes, "axis": collective.axis}
                             if collective is not None else {})},
                cost={"est_seconds": (mean - bound) * s.count},
                help=_help(ctx.chip.platform, collective is not None),
            )
            yield replace(found, severity=Severity.ERROR) if error else found


def _help(platform: str, collective: bool) -> str:
    if collective:
        return ("A collective slower than its links allow: it waits for other devices (load "
                "imbalance, a late peer), its groups span a slower axis than assumed, or it is "
                "latency-bound (small messages: combine them).")
    if platform == "tpu":
        return ("Look at what the roofline does not see: padding (H003), relayouts (H002), "
                "poor MXU shapes (H005), or an op the compiler could not fuse.")
    if platform == "gpu":
        return ("Look at what the roofline does not see: kernel launch overhead on short ops, "
                "tensor-core misalignment (dimensions not multiples of 8/16), or an op the "
                "compiler could not fuse.")
    return ("Look at what the roofline does not see: layout changes, cache misses, threading, "
            "or an op the compiler could not fuse.")
