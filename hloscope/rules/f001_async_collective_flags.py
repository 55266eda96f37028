"""F001 async-collective-flags: exposed all-gathers in a module compiled without the flags
that let XLA's TPU compiler overlap them."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import AFTER
from hloscope.rules.registry import register

# XLA's flags guidance (openxla.org/xla/flags_guidance, "v5e/Async"): these three together
# turn on asynchronous all-gathers on TPU; the suggested values are these.
ALL_GATHER = (
    ("xla_tpu_enable_async_collective_fusion", "on"),
    ("xla_tpu_enable_async_collective_fusion_fuse_all_gather", "on"),
    ("xla_enable_async_all_gather", "auto or on"),
)


@register
class AsyncCollectiveFlags(ModuleRule):
    """Synchronous all-gathers in a TPU module whose compile flags leave async collective
    fusion of all-gathers off, or set them in a combination that does nothing."""

    code = "F001"
    name = "async-collective-flags"
    severity = Severity.WARNING
    summary = "exposed all-gathers and the async collective fusion flags unset or contradictory"
    stages = frozenset({AFTER})

    class Options(RuleOptions):
        pass

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        from hloscope.flags import state

        flags, sources = ctx.flags
        if not flags or not ctx.is_tpu:
            return  # nothing says how it was compiled
        states = {name: state(flags.get(name)) for name, _ in ALL_GATHER}
        fusion, fuse_ag, async_ag = (states[name] for name, _ in ALL_GATHER)
        where = ", ".join(s if s == "--flags" else s.rsplit("/", 1)[-1] for s in sources)
        if fuse_ag == "on" and fusion == "off":
            yield self.finding(
                ctx, ctx.module.entry.instructions[0],
                "contradictory flags: xla_tpu_enable_async_collective_fusion_fuse_all_gather is "
                "on but xla_tpu_enable_async_collective_fusion is off, so it does nothing "
                f"(flags from {where})",
                evidence={"flags": states, "sources": sources},
                help="Turn on xla_tpu_enable_async_collective_fusion too (XLA flags guidance: "
                     "the three flags are meant to be used together).")
        exposed = [c for c in ctx.collectives if c.opcode == "all-gather" and not c.is_async]
        off = [f"{name} is {states[name]} (want {want})" for name, want in ALL_GATHER
               if states[name] == "off" or (want == "on" and states[name] != "on")]
        if not exposed or not off:
            return
        comp = ctx.module.by_name[exposed[0].computation]
        instr = comp.by_name[exposed[0].instruction]
        moved = sum(c.moved_bytes for c in exposed)
        yield self.finding(
            ctx, instr,
            f"{len(exposed)} all-gather(s) run synchronously ({moved / 2**20:.1f} MiB moved per "
            f"device) and {'; '.join(off)}: XLA was not asked to overlap them with compute "
            f"(flags from {where})",
            evidence={"flags": states, "sources": sources, "exposed": [c.instruction for c in exposed]},
            cost={"bytes_wasted": moved},
            help="Compile with the async all-gather flags XLA's flags guidance gives "
                 "(openxla.org/xla/flags_guidance, v5e/Async): "
                 "--xla_tpu_enable_async_collective_fusion=true "
                 "--xla_tpu_enable_async_collective_fusion_fuse_all_gather=true "
                 "--xla_enable_async_all_gather=true (MaxText sets these in LIBTPU_INIT_ARGS); "
                 "then check with hloscope lint that the gathers became async-collective fusions.")
