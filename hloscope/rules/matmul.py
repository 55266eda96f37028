"""Matmul rules: split dots (H004), MXU-misaligned shapes (H005), f32 matmuls on TPU (H010)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from math import prod

from hloscope.ir import Instruction, Shape
from hloscope.rules.base import Finding, InstructionRule, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register
from hloscope.rules.util import human_seconds

MATMUL = frozenset({"dot", "convolution"})


def matmul_dims(instr: Instruction, ctx: RuleContext) -> dict[str, int] | None:
    """M, K, N (and batch) of a dot or a 1x1-window convolution."""
    shapes = ctx.model.operand_shapes(instr)
    if len(shapes) < 2:
        return None
    lhs, rhs = shapes[0], shapes[1]
    if instr.opcode == "dot":
        lc = instr.attr("lhs_contracting_dims", ())
        lb = instr.attr("lhs_batch_dims", ())
        rc = instr.attr("rhs_contracting_dims", ())
        rb = instr.attr("rhs_batch_dims", ())
        m = prod(d for i, d in enumerate(lhs.dims) if i not in lc and i not in lb)
        n = prod(d for i, d in enumerate(rhs.dims) if i not in rc and i not in rb)
        k = prod(lhs.dims[i] for i in lc)
        return {"M": m, "K": k, "N": n, "batch": prod(lhs.dims[i] for i in lb)}
    labels = instr.attr("dim_labels")
    if not labels:
        return None
    lhs_l, rest = labels.split("_")
    rhs_l, out_l = rest.split("->")
    k = rhs.dims[rhs_l.index("i")]
    n = rhs.dims[rhs_l.index("o")]
    m = prod(d for i, d in enumerate(instr.shape.dims) if out_l[i] != "f")
    return {"M": m, "K": k, "N": n, "batch": 1}


def _contains_matmul(instr: Instruction, ctx: RuleContext) -> bool:
    if instr.opcode in MATMUL:
        return True
    if instr.opcode == "fusion":
        with_matmul = ctx.__dict__.get("_matmul_computations")
        if with_matmul is None:  # once per module: which computations hold a matmul
            with_matmul = ctx.__dict__["_matmul_computations"] = {
                c.name for c in ctx.module.computations if any(i.opcode in MATMUL for i in c.instructions)}
        return any(name in with_matmul for name in instr.called_computations)
    return False


@register
class SplitDot(ModuleRule):
    """Dots that share one operand and could be one wider matmul; or more dots than expected."""

    code = "H004"
    name = "split-dot"
    severity = Severity.INFO
    summary = "several matmuls share an operand (e.g. separate Q/K/V projections), or more than expected"

    @dataclass(frozen=True)
    class Options:
        min_group: int = 2
        expect: dict[str, int] = field(default_factory=dict)  # {"dot": 2}: at most 2 matmuls

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        yield from self._shared_operand(ctx)
        yield from self._over_budget(ctx)

    def _shared_operand(self, ctx: RuleContext) -> Iterator[Finding]:
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue
            groups: dict[str, list[Instruction]] = defaultdict(list)
            for instr in comp.instructions:
                if _contains_matmul(instr, ctx):
                    for operand in dict.fromkeys(instr.operands):
                        groups[operand].append(instr)
            reported: set[frozenset[str]] = set()
            # the largest shared operand first: that is the activation, not a norm statistic
            for operand, users in sorted(groups.items(), key=lambda kv: -_size(comp, kv[0])):
                src = comp.by_name.get(operand)
                if src is None or not src.shape.is_array or src.shape.rank < 2:
                    continue
                if len(users) < self.options.min_group or not _same_other_operands(users, operand, comp):
                    continue
                members = frozenset(u.name for u in users)
                if members in reported:
                    continue
                reported.add(members)
                first, *rest = users
                names = ", ".join(f"%{u.name}" for u in users)
                yield self.finding(
                    ctx, first,
                    f"{len(users)} matmuls ({names}) all multiply %{operand} {src.shape} by "
                    f"same-shaped weights: one matmul on the concatenated weights would do",
                    evidence={"shared_operand": operand, "matmuls": [u.name for u in users]},
                    help="Concatenate the weights (e.g. W_qkv = [W_q | W_k | W_v]) and split "
                         "the result: one large matmul keeps the MXU busier than several "
                         "narrow ones and reads the shared operand once.",
                )

    def _over_budget(self, ctx: RuleContext) -> Iterator[Finding]:
        for opcode, limit in self.options.expect.items():
            found = [i for i in ctx.module.instructions() if i.opcode == opcode]
            if len(found) > limit:
                extra = found[limit]
                yield self.finding(
                    ctx, extra,
                    f"module has {len(found)} {opcode} instructions, expected at most {limit}; "
                    f"first extra: %{extra.name}",
                    evidence={"opcode": opcode, "count": len(found), "expected": limit},
                    help="Check whether a projection was split or a matmul duplicated.",
                )


def _size(comp, name: str) -> int:
    instr = comp.by_name.get(name)
    return instr.shape.logical_bytes if instr is not None else 0


def _same_other_operands(users: list[Instruction], shared: str, comp) -> bool:
    shapes = set()
    for u in users:
        others = tuple(str(comp[o].shape) for o in u.operands if o != shared and o in comp)
        shapes.add(others)
    return len(shapes) == 1 and all(shapes)


def _mxu(ctx: RuleContext) -> int:
    if ctx.chip is not None and ctx.chip.mxu:
        return ctx.chip.mxu[0]
    return 128


def _sublanes(dtype: str) -> int:
    return {"bf16": 16, "f16": 16, "s8": 32, "u8": 32}.get(dtype, 8)


@register
class MxuMisaligned(InstructionRule):
    """Matmul dims that are not multiples of the MXU tile: the padding is wasted work."""

    code = "H005"
    name = "mxu-misaligned"
    severity = Severity.WARNING
    summary = "dot/convolution K or N not a multiple of the MXU (128, or 256 on v6e/v7x)"
    targets = MATMUL
    include_fused = True

    @dataclass(frozen=True)
    class Options:
        min_utilization: float = 0.9
        min_flops: float = 1e8  # smaller matmuls are not worth a finding

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.is_tpu:
            return
        dims = matmul_dims(instr, ctx)
        if dims is None:
            return
        mxu = _mxu(ctx)
        dtype = ctx.model.operand_shapes(instr)[0].element_type
        sub = _sublanes(dtype)
        padded = {"K": -(-dims["K"] // mxu) * mxu, "N": -(-dims["N"] // mxu) * mxu,
                  "M": -(-dims["M"] // sub) * sub}
        if 0 in padded.values():
            return  # an empty matmul: no work to waste
        util = prod(dims[k] / padded[k] for k in ("K", "N", "M"))
        if util >= self.options.min_utilization:
            return
        flops = ctx.model.compute(instr).flops  # (only for the misaligned: it costs more)
        if flops < self.options.min_flops:
            return
        bad = [f"{k}={dims[k]}" for k in ("K", "N") if dims[k] % mxu] + (
            [f"M={dims['M']} (sublanes {sub})"] if dims["M"] % sub else [])
        cost: dict[str, float] = {}
        if ctx.chip is not None:
            cost["est_seconds"] = flops * (1 / util - 1) / ctx.chip.peak_flops(dtype)
        est = f", ~{human_seconds(cost['est_seconds'])} lost" if cost else ""
        yield self.finding(
            ctx, instr,
            f"%{instr.name}: {', '.join(bad)} not multiples of the {mxu}x{mxu} MXU; "
            f"~{(1 - util) * 100:.0f}% of MXU work is padding{est}",
            evidence={**dims, "mxu": mxu, "utilization": round(util, 4)},
            cost=cost,
            help=f"Pad or choose model dims (hidden, head, vocab) as multiples of {mxu}; "
                 "pack small heads together.",
        )


@register
class F32Matmul(InstructionRule):
    """f32 (or precision=HIGHEST) matmuls on TPU, where bf16 inputs run several times faster."""

    code = "H010"
    name = "f32-matmul"
    severity = Severity.WARNING
    summary = "dot/convolution with f32 operands or HIGHEST precision on a TPU"
    targets = MATMUL
    include_fused = True

    @dataclass(frozen=True)
    class Options:
        min_flops: float = 1e8

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.is_tpu:
            return
        shapes: list[Shape] = ctx.model.operand_shapes(instr)[:2]
        f32 = [s for s in shapes if s.element_type == "f32"]
        precision = [str(p).lower() for p in _precision(instr)]
        highest = "highest" in precision
        if not f32 and not highest:
            return
        flops = ctx.model.compute(instr).flops
        if flops < self.options.min_flops:
            return
        what = " x ".join(str(s) for s in shapes)
        why = "f32 operands" if f32 else "precision=HIGHEST"
        cost: dict[str, float] = {}
        if ctx.chip is not None:
            cost["est_seconds"] = flops / ctx.chip.peak_f32_flops - flops / ctx.chip.peak_bf16_flops
        yield self.finding(
            ctx, instr,
            f"%{instr.name} multiplies with {why} ({what}): the MXU runs f32 as several bf16 "
            f"passes; {flops:.3g} FLOPs",
            evidence={"operands": [str(s) for s in shapes], "precision": precision},
            cost=cost,
            help="Cast inputs to bf16 and keep f32 accumulation "
                 "(preferred_element_type=jnp.float32), or use precision=DEFAULT.",
        )


def _precision(instr: Instruction) -> list[str]:
    text = instr.attrs.get("operand_precision")
    if not text:
        return []
    return [p.strip() for p in text.strip("{}").split(",") if p.strip()]
