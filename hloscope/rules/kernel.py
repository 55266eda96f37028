"""Pallas/Mosaic kernel rules (K001-K006), read from the decoded tpu_custom_call body."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register
from hloscope.rules.util import human_bytes

DEFAULT_SCOPED_VMEM = 16 << 20  # Mosaic's default scoped VMEM on v4/v5e/v5p


def _kernels(ctx: RuleContext):
    if "_kernels" not in ctx.__dict__:
        if not any(i.opcode == "custom-call" for c in ctx.module.computations for i in c.instructions):
            ctx.__dict__["_kernels"] = []  # (no kernels: the MLIR machinery is not even imported)
            return []
        from hloscope.mlir.kernels import kernels

        ctx.__dict__["_kernels"] = [k for k in kernels(ctx.module, ctx.model.operand_shapes)
                                    if k.summary is not None]
    return ctx.__dict__["_kernels"]


def _sublanes(dtype: str) -> int:
    return {"f32": 8, "i32": 8, "bf16": 16, "f16": 16, "i16": 16, "i8": 32}.get(dtype, 8)


class KernelRule(ModuleRule):
    def each(self, ctx: RuleContext):
        for k in _kernels(ctx):
            yield k, k.summary


@register
class OutputRefAccumulator(KernelRule):
    """An output block is read inside the kernel: it is used as an accumulator."""

    code = "K001"
    name = "output-ref-accumulator"
    severity = Severity.WARNING
    summary = "kernel reads its output ref (o_ref used as an accumulator across grid steps)"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            outputs = [b for b in s.operands if b.role == "output"]
            for index in s.output_reads:
                out = outputs[index] if index < len(outputs) else None
                desc = f" ({out.dtype}{out.block})" if out else ""
                yield self.finding(
                    ctx, k.instruction,
                    f"kernel {s.name} (%{k.instruction.name}) reads output {index}{desc} back, "
                    f"accumulating in the output block across grid steps",
                    evidence={"kernel": s.name, "output": index,
                              "semantics": s.dimension_semantics},
                    help="Accumulate in a VMEM scratch buffer (scratch_shapes=[pltpu.VMEM(...)]) "
                         "zeroed on the first step, and write o_ref once on the last step: the "
                         "output block then needs no read-back and XLA no defensive copy.",
                )


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
                sub, lane = _sublanes(b.dtype), 128
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


@register
class VmemOverBudget(KernelRule):
    """Double-buffered blocks plus scratch exceed the scoped VMEM limit or the chip's VMEM."""

    code = "K003"
    name = "vmem-over-budget"
    severity = Severity.WARNING
    summary = "estimated VMEM footprint above the scoped limit or the chip's VMEM"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        scoped_default = (ctx.chip.scoped_vmem_bytes if ctx.chip and ctx.chip.scoped_vmem_bytes
                          else DEFAULT_SCOPED_VMEM)
        physical = ctx.chip.vmem_bytes if ctx.chip else None
        for k, s in self.each(ctx):
            granted = k.scoped_vmem_bytes
            if s.vmem_bytes <= scoped_default and (physical is None or s.vmem_bytes <= physical):
                continue
            where = (f"the chip's {human_bytes(physical)} of VMEM" if physical and s.vmem_bytes > physical
                     else f"the default scoped limit of {human_bytes(scoped_default)}")
            raised = f"; this call was granted {human_bytes(granted)}" if granted else ""
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} needs ~{human_bytes(s.vmem_bytes)} of VMEM (double-buffered "
                f"blocks + scratch), above {where}{raised}",
                evidence={"vmem_bytes": s.vmem_bytes, "scoped_default": scoped_default,
                          "granted": granted, "physical": physical},
                help="Use smaller blocks (the pipeline keeps two of each in VMEM), or single-"
                     "buffer large inputs; raise vmem_limit_bytes only with room to spare.",
            )


@register
class VregSpillRisk(KernelRule):
    """A vector value far larger than the register file: the compiler must spill it."""

    code = "K004"
    name = "vreg-spill-risk"
    severity = Severity.WARNING
    summary = "vector values far larger than the vreg file (e.g. a (1024,512) f32 tile)"

    @dataclass(frozen=True)
    class Options:
        max_bytes: int = 1 << 20  # 4x the 256 KiB register file of v4/v5 cores

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for k, s in self.each(ctx):
            if s.largest_vector_bytes <= self.options.max_bytes:
                continue
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} computes a {s.largest_vector_type} value "
                f"({human_bytes(s.largest_vector_bytes)}), far beyond the ~256 KiB vreg file: "
                f"expect spills to VMEM",
                evidence={"vector": s.largest_vector_type, "bytes": s.largest_vector_bytes},
                help="Work on smaller tiles inside the kernel (a fori_loop over sub-blocks), or "
                     "shrink the block so per-step values stay near the register file size.",
            )


@register
class ShortPipeline(KernelRule):
    """Too few grid steps for the DMA pipeline to hide fill and drain."""

    code = "K005"
    name = "short-pipeline"
    severity = Severity.INFO
    summary = "too few grid steps for DMA/compute overlap to amortise fill and drain"

    @dataclass(frozen=True)
    class Options:
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
                help="Use smaller blocks so the grid has several steps per core; the pipeline "
                     "then overlaps each step's DMA with the previous step's compute.",
            )


@register
class NoParallelAxis(KernelRule):
    """No grid axis marked parallel, on a chip with two TensorCores (v4, v5p)."""

    code = "K006"
    name = "no-parallel-axis"
    severity = Severity.WARNING
    summary = "no grid axis marked parallel on a megacore chip (v4, v5p): one core idles"

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.chip is None or ctx.chip.tensorcores < 2:
            return  # needs --chip: only megacore chips split parallel axes across cores
        for k, s in self.each(ctx):
            if "parallel" in s.dimension_semantics or s.grid_steps < 2:
                continue
            yield self.finding(
                ctx, k.instruction,
                f"kernel {s.name} marks no grid axis parallel ({s.dimension_semantics or 'none'}); "
                f"on {ctx.chip.name} only one of its {ctx.chip.tensorcores} TensorCores runs it",
                evidence={"semantics": s.dimension_semantics, "grid": s.grid},
                help="Mark independent grid axes (typically the output's row/column block axes) "
                     "'parallel' in dimension_semantics; keep reduction axes 'arbitrary'.",
            )
