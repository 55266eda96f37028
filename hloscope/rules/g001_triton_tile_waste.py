"""G001 triton-tile-waste: a Triton GEMM whose tiles overhang its output, or whose grid leaves
the last wave of thread blocks mostly empty."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from math import ceil, prod

from hloscope.cost.roofline import compute_peak
from hloscope.ir import Instruction
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import human_seconds, matmul_dims
from hloscope.rules.registry import register

# XLA's GPU backend prints a Triton GEMM's tiling in its fusion backend config, as JSON or
# (older dumps) as a quoted text proto: read both the same way
_GEMM = {k: re.compile(k + r'\W+(\d+)') for k in ("block_m", "block_n", "block_k", "split_k", "num_stages")}
_TILES = re.compile(r'output_tiles\W*\[\s*\{\s*\W*sizes\W*\[([^\]]*)\]')


def triton_tiling(instr: Instruction) -> dict | None:
    """{"block_m", "block_n", "split_k", ...} of a `__triton_gemm` fusion, {"tile": [...]} of
    a nested-GEMM/block-level one, else None."""
    if not instr.may_contain("__triton"):  # (read unsplit: a TPU step has 6,000 fusions)
        return None
    config = instr.raw_attr("backend_config") or ""
    if "__triton" not in config:
        return None
    if "triton_gemm_config" in config:
        out = {k: int(m.group(1)) for k, rx in _GEMM.items() if (m := rx.search(config))}
        return out if "block_m" in out and "block_n" in out else None
    if "gemm" in config and (m := _TILES.search(config)):
        sizes = [int(s) for s in re.findall(r"\d+", m.group(1))]
        return {"tile": sizes} if sizes else None
    return None


@register
class TritonTileWaste(InstructionRule):
    """A Triton GEMM whose tiles overhang its output, or whose last wave is mostly empty."""

    code = "G001"
    name = "triton-tile-waste"
    severity = Severity.WARNING
    summary = "Triton GEMM tiles larger than the output, or a grid whose last wave idles most SMs"
    targets = frozenset({"fusion"})
    located = True  # (its findings are at the instruction checked)

    class Options(RuleOptions):
        max_waste: float = 0.25  # share of the tiles' work that is overhang
        min_wave_efficiency: float = 0.75  # grid / (waves x SMs) over more than one wave
        min_flops: float = 1e8  # smaller GEMMs: a note (info), not a warning

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        tiling = triton_tiling(instr)
        if tiling is None:
            return
        dot = _dot(instr, ctx)
        dims = matmul_dims(dot, ctx) if dot is not None else None
        if "tile" in tiling:  # tile sizes per output dimension (its logical order)
            out = instr.shape.dims
            sizes = tiling["tile"]
            if len(sizes) != len(out) or 0 in sizes:
                return
            grid = prod(ceil(d / s) for d, s in zip(out, sizes))
            useful, covered = prod(out), grid * prod(sizes)
            what = "x".join(map(str, sizes)) + " tiles on a " + "x".join(map(str, out)) + " output"
        else:
            if dims is None:
                return
            m, n, batch = dims["M"], dims["N"], max(dims["batch"], 1)
            bm, bn = tiling["block_m"], tiling["block_n"]
            grid = batch * ceil(m / bm) * ceil(n / bn) * tiling.get("split_k", 1)
            useful, covered = m * n, ceil(m / bm) * bm * ceil(n / bn) * bn
            what = f"{bm}x{bn} tiles on a {m}x{n} output" + (f" (x{batch} batch)" if batch > 1 else "")
        if not useful:
            return
        waste = 1 - useful / covered
        sms = ctx.chip.sm_count if ctx.chip is not None and ctx.chip.platform == "gpu" else None
        waves = ceil(grid / sms) if sms else 0
        efficiency = grid / (waves * sms) if sms and waves > 1 else 1.0
        problems = []
        if waste >= self.options.max_waste:
            problems.append(f"{what}: {waste * 100:.0f}% of the tiles' work is overhang")
        if efficiency < self.options.min_wave_efficiency:
            problems.append(f"{grid} thread blocks make {waves} waves on {ctx.chip.name}'s {sms} SMs, "
                            f"the last {grid - (waves - 1) * sms} of {sms}: {efficiency * 100:.0f}% of "
                            "the SM-time used")
        if not problems:
            return
        flops = ctx.model.cost(instr).flops
        lost = 1 - (1 - waste) * efficiency
        cost: dict[str, float] = {}
        if ctx.chip is not None and flops:
            # (at the rate its dot runs: bf16, TF32 for f32 at DEFAULT precision, f32 at HIGHEST)
            cost["est_seconds"] = flops / (1 - lost) * lost / compute_peak(ctx.model, ctx.chip, instr)
        est = f", ~{human_seconds(cost['est_seconds'])} lost" if cost else ""
        found = self.finding(
            ctx, instr, f"%{instr.name}: " + "; ".join(problems) + est,
            evidence={"grid": grid, "waste": round(waste, 4), "wave_efficiency": round(efficiency, 4),
                      "sm_count": sms, "flops": flops, **tiling},
            cost=cost,
            help=("XLA's autotuner picks the tiling from what it measured (none measured: its "
                  "defaults, with --xla_gpu_autotune_level=0 or a stale autotune cache). Shapes "
                  "that are multiples of the block (pad M/N to 64 or 128) stop the overhang; a "
                  "grid of a whole number of waves (batch, split-K) stops the idle SMs."),
        )
        yield found if flops >= self.options.min_flops else replace(found, severity=Severity.INFO)


def _dot(instr: Instruction, ctx: RuleContext) -> Instruction | None:
    """The dot inside a Triton GEMM fusion."""
    for name in instr.called_computations:
        comp = ctx.module.by_name.get(name)
        if comp is not None:
            for i in comp.instructions:
                if i.opcode == "dot":
                    return i
    return None
