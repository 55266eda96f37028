"""H012 hbm-peak: the program's static HBM peak exceeds the chip's HBM, or comes within 5%."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from hloscope.cost.memory import hbm_upper_bound
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import hbm_capacity, human_bytes
from hloscope.rules.registry import register
from hloscope.stage import AFTER


@register
class HbmPeak(ModuleRule):
    """Arguments + outputs - aliased + peak temporaries near or over the chip's HBM.

    Against a chip nothing states (no --chip, no record in the dump folder), only an info
    finding that names the assumed chip: no error or warning rests on a guessed capacity."""

    code = "H012"
    name = "hbm-peak"
    severity = Severity.WARNING
    summary = "the static HBM peak (arguments, outputs, live temporaries) is over or within 5% of the chip's HBM"
    stages = frozenset({AFTER})  # the schedule, and so the peak, exists after optimization

    class Options(RuleOptions):
        margin: float = 0.05  # warn from (1 - margin) x HBM
        # JAX's GPU allocator takes this share of a GPU's memory unless told otherwise
        # (XLA_PYTHON_CLIENT_MEM_FRACTION, default .75; XLA's GPU compiler itself warns past 80%)
        gpu_memory_fraction: float = 0.75

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        hbm = hbm_capacity(ctx)
        module = ctx.module  # (an entry with a root: the parser holds every module to that)
        chip = ctx.chip or ctx.assumed_chip
        gpu = chip is not None and chip.platform == "gpu"
        usable = hbm * self.options.gpu_memory_fraction if gpu else hbm
        if hbm_upper_bound(module, ctx.chip) < (1 - self.options.margin) * usable:
            return  # (all its buffers at once would not come near: no peak to walk)
        from hloscope.cost.liveness import memory  # (after optimization only)

        r = memory(module, chip=ctx.chip)
        if r.hbm_bytes < (1 - self.options.margin) * usable:
            return
        over = r.hbm_bytes > hbm
        assumed = ctx.chip is None  # (a capacity nothing states: no verdict against it)
        of = f"{human_bytes(hbm)}" + (f" of an assumed {chip.name}" if assumed and chip else "")
        if gpu and not over:
            of += (f"; JAX's allocator takes {self.options.gpu_memory_fraction:.0%} of it, "
                   f"{human_bytes(usable)}, unless XLA_PYTHON_CLIENT_MEM_FRACTION says otherwise")
        where = module.entry.by_name[r.peak_instruction] if r.temp_peak_bytes else module.entry.root
        live = ", ".join(f"%{b['instruction']} {human_bytes(b['bytes'])}" for b in r.peak_live[:3])
        found = self.finding(
            ctx, where,
            f"static HBM peak {human_bytes(r.hbm_bytes)} "
            f"({r.hbm_bytes / hbm:.1%} of {of}): arguments {human_bytes(r.argument_bytes)}"
            f" + outputs {human_bytes(r.output_bytes)} - aliased {human_bytes(r.alias_bytes)} + "
            f"temporaries {human_bytes(r.temp_peak_bytes)}" + (f" (largest live: {live})" if live else "")
            + ("; set --chip to judge it: nothing states the chip" if assumed
               else "; it does not fit" if over
               else "; over what JAX allocates" if r.hbm_bytes > usable
               else f"; under {self.options.margin:.0%} headroom"),
            evidence={"hbm_bytes": r.hbm_bytes, "capacity": hbm, "argument_bytes": r.argument_bytes,
                      "output_bytes": r.output_bytes, "alias_bytes": r.alias_bytes,
                      "temp_peak_bytes": r.temp_peak_bytes, "peak_step": r.peak_step},
            help="Donate inputs the step replaces (donate_argnums) so outputs reuse them; "
                 "rematerialise large activations (jax.checkpoint); shard the largest arrays "
                 "over more devices; or shrink the batch. `hloscope memory` lists what is live "
                 "at the peak." + (" On a GPU, XLA_PYTHON_CLIENT_MEM_FRACTION=.95 lets JAX's "
                                   "allocator take more of the memory." if gpu else ""))
        if assumed:
            yield replace(found, severity=Severity.INFO)
        else:
            yield replace(found, severity=Severity.ERROR) if over else found
