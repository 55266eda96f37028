"""H011 huge-intermediate: a materialized attention score or vocabulary logits tensor far
larger than the program's inputs."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.cost.layout import padded_bytes
from hloscope.ir import Instruction, Shape
from hloscope.ir.opcodes import ALIASING
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import hbm_capacity, human_bytes, human_seconds
from hloscope.rules.registry import register
from hloscope.stage import AFTER


_MULTI_OUTPUT = frozenset({"fusion", "custom-call"})


@register
class HugeIntermediate(ModuleRule):
    """A [.., S, S] attention score or [.., vocab] logits buffer the program writes to HBM."""

    code = "H011"
    name = "huge-intermediate"
    severity = Severity.WARNING
    summary = "materialized [.., S, S] attention scores or [.., vocab] logits: flash attention / chunked loss"
    stages = frozenset({AFTER})  # before optimization every value looks materialized

    class Options(RuleOptions):
        hbm_fraction: float = 0.01  # of the chip's HBM (16 GiB without --chip)
        min_ratio: float = 4.0  # times the largest parameter of the same computation
        min_seq: int = 512  # the S of [.., S, S]
        min_vocab: int = 32768  # the last dim of [.., vocab]

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        hbm = hbm_capacity(ctx)
        threshold = self.options.hbm_fraction * hbm
        kinds: dict[int, tuple] = {}  # id(shape) -> (shape, _kind): a step shares few shapes
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue  # inside a fusion a value stays on chip
            largest = None  # (its largest parameter's bytes: read at its first candidate)
            for instr in comp.instructions:
                if instr.opcode in ALIASING or instr.opcode == "parameter":
                    continue
                if instr.shape.is_array:
                    shape = instr.shape
                    known = kinds.get(id(shape))
                    if known is None or known[0] is not shape:
                        known = kinds[id(shape)] = (shape, self._kind(shape))
                    if known[1] is None:
                        continue  # (most arrays: neither scores nor logits)
                    arrays = [(None, shape)]
                elif instr.opcode in _MULTI_OUTPUT:  # each array a multi-output op writes
                    arrays = [(k, e) for k, e in enumerate(instr.shape.elements) if e.is_array]
                else:
                    continue
                found = []
                for index, shape in arrays:
                    kind = self._kind(shape)
                    if not kind or (nbytes := _bytes(shape)) < threshold:
                        continue
                    if largest is None:
                        largest = max((_bytes(p.shape) for p in comp.parameters), default=0)
                    if nbytes >= self.options.min_ratio * max(largest, 1):
                        found.append((nbytes, index, shape, kind))
                if found:  # (one finding per instruction: its largest such output)
                    nbytes, index, shape, kind = max(found, key=lambda f: f[0])
                    yield self._report(ctx, instr, shape, kind, nbytes, largest, hbm, index,
                                       len(instr.shape.elements), [f[1] for f in found if f[1] != index])

    def _kind(self, shape: Shape) -> str | None:
        dims = shape.dims
        if len(dims) >= 3 and dims[-1] == dims[-2] >= self.options.min_seq:
            return "attention"
        if len(dims) >= 2 and dims[-1] >= self.options.min_vocab:
            return "logits"
        return None

    def _report(self, ctx: RuleContext, instr: Instruction, shape: Shape, kind: str, nbytes: int,
                largest: int, hbm: int, index: int | None, outputs: int,
                others: list) -> Finding:
        """`index`: which output of `outputs` (None: the instruction's one array); `others`:
        the other outputs that are such arrays too."""
        users = ctx.users(instr)
        traffic = padded_bytes(shape) * (1 + max(len(users), 1))  # written once, read by each user
        cost: dict[str, float] = {"bytes_wasted": float(traffic)}
        if ctx.chip is not None:
            cost["est_seconds"] = traffic / ctx.chip.hbm_bandwidth
        est = f" (~{human_seconds(cost['est_seconds'])} of HBM time)" if "est_seconds" in cost else ""
        if kind == "attention":
            what = f"attention scores [.., {shape.dims[-2]}, {shape.dims[-1]}]"
            fix = ("Use a flash attention kernel (jax.nn.dot_product_attention with "
                   "implementation='cudnn' on GPU, jax.experimental.pallas.ops.tpu.flash_attention "
                   "on TPU), which keeps each block of scores on chip; or attend in chunks "
                   "(jax.lax.map over query blocks).")
        else:
            what = f"vocabulary logits [.., {shape.dims[-1]}]"
            fix = ("Compute the loss in chunks over the batch/sequence (jax.lax.map or a scan "
                   "over token blocks, recomputing logits in the backward pass) or with a "
                   "fused cross-entropy kernel, so the full logits never sit in HBM.")
        where = "" if index is None else f" (output {index} of its {outputs}"
        if others:
            where += f"; output{'s' if len(others) > 1 else ''} {', '.join(map(str, others))} too"
        where += ")" if index is not None else ""
        return self.finding(
            ctx, instr,
            f"%{instr.name} materializes {what} {shape}{where}: {human_bytes(nbytes)} in HBM "
            f"({nbytes / hbm * 100:.1f}% of {human_bytes(hbm)}, {nbytes / max(largest, 1):.0f}x the "
            f"largest input), {human_bytes(traffic)} of HBM traffic to write and read it{est}",
            evidence={"kind": kind, "shape": shape.text(), "bytes": nbytes, "output_index": index,
                      "traffic_bytes": traffic, "largest_parameter_bytes": largest,
                      "users": [u.name for u in users]},
            cost=cost, help=fix)


def _bytes(shape: Shape) -> int:
    """Logical bytes: the tensor's elements times its element size."""
    return sum(s.logical_bytes for s in shape.leaves() if s.is_array)
