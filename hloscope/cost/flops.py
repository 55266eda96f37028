"""FLOP formulas per opcode (XLA HloCostAnalysis conventions) and the opcode sets they
rest on; hloscope.cost.ops.CostModel applies them to a module."""

from __future__ import annotations

from math import prod

from hloscope.ir import Instruction, Shape
from hloscope.ir.opcodes import async_shorthand
from hloscope.ir.shape import per_shape

ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "compare", "select", "clamp",
    "negate", "abs", "and", "or", "xor", "not", "sign", "floor", "ceil", "round-nearest-afz",
    "round-nearest-even", "shift-left", "shift-right-logical", "shift-right-arithmetic",
    "remainder", "is-finite", "popcnt", "clz", "real", "imag", "complex", "convert",
    "reduce-precision", "stochastic-convert", "map",
})
# One FLOP per output element, as XLA's cost analysis counts: the elementwise ops, and a
# bitcast-convert (not elementwise for buffer sharing: sharing.py reads ELEMENTWISE).
PER_ELEMENT = ELEMENTWISE | {"bitcast-convert"}
TRANSCENDENTAL = frozenset({
    "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt", "cbrt",
    "tanh", "logistic", "sine", "cosine", "tan", "power", "erf", "atan2",
})
# No data moves and nothing is computed: names for values that already exist.
FREE = frozenset({
    "parameter", "get-tuple-element", "tuple", "bitcast", "after-all", "partition-id",
    "replica-id", "opt-barrier", "add-dependency", "domain", "constant",
})
SLICING = frozenset({"slice", "dynamic-slice", "gather"})
# Data movement and bookkeeping: no FLOPs (their bytes are counted by CostModel.memory).
# (reduce-scatter: XLA's HloCostAnalysis, whose figures TPU and CPU compiles report, counts
# none; all-reduce it counts, each element of each operand once per reducer FLOP.)
NO_FLOPS = FREE | SLICING | frozenset({
    "copy", "copy-start", "copy-done", "transpose", "reshape", "broadcast", "concatenate",
    "pad", "reverse", "iota", "dynamic-update-slice", "dynamic-reshape",
    "all-gather", "all-gather-start", "all-gather-done", "all-to-all", "collective-permute",
    "collective-permute-start", "collective-permute-done", "collective-broadcast",
    "all-reduce-done", "reduce-scatter", "reduce-scatter-done", "ragged-all-to-all", "send", "send-done",
    "recv", "recv-done", "infeed", "outfeed", "get-dimension-size", "set-dimension-size",
    "optimization-barrier", "async-update", "async-done", "rng-get-and-update-state",
    "rng-bit-generator", "custom-call-done",
})
CONTROL = frozenset({"while", "call", "conditional", "async-start", "async-update", "async-done"})
# Opcodes CostModel.compute has a formula for (beyond the sets above).
_FORMULAS = frozenset({"dot", "convolution", "reduce", "reduce-window", "all-reduce",
                       "all-reduce-start", "fusion", "sort", "custom-call", "rng",
                       "fft", "scatter"})


def fft_flops(instr: Instruction, operand: Shape) -> float:
    """XLA's count (HloCostAnalysis::HandleFft): 2 FLOPs per FMA x 4 FMAs per complex multiply
    x the product of floor(log2) of each transformed length x the operand's elements, for
    every FFT type. Checked against XLA's cost_analysis of real compiles (FFT, 2-D FFT, RFFT,
    IRFFT: tests/test_gpu_cost.py)."""
    lengths = instr.attr("fft_length") or ()
    log_factors = prod(max(int(n).bit_length() - 1, 0) for n in lengths) if lengths else 0
    return 8.0 * log_factors * elements(operand)


class UnknownCost(ValueError):
    """The model has no number it can stand behind for this instruction."""


@per_shape
def elements(shape: Shape) -> int:
    """Elements of the shape's array leaves (once per shape object: every op asks)."""
    return sum(s.num_elements for s in shape.leaves() if s.is_array)


def dot_flops(instr: Instruction, lhs: Shape) -> float:
    contracting = instr.attr("lhs_contracting_dims", ())
    if any(not 0 <= d < lhs.rank for d in contracting):
        raise UnknownCost(f"lhs_contracting_dims {list(contracting)} do not fit {lhs}")
    k = prod(lhs.dims[d] for d in contracting) if contracting else 1
    return 2.0 * elements(instr.shape) * k


def _valid_pairs(in_size: int, win: int, out: int, stride: int, lo: int, lhs_dil: int,
                 rhs_dil: int) -> int:
    """(output, window) position pairs that land on a real input element, not on
    padding or a hole left by base (lhs) dilation."""
    dilated = (in_size - 1) * lhs_dil + 1 if in_size else 0
    if out * win > 10_000_000:  # too big to enumerate: every pair counts (an upper bound)
        return out * win
    count = 0
    for o in range(out):
        base = o * stride - lo
        for w in range(win):
            pos = base + w * rhs_dil
            if 0 <= pos < dilated and pos % lhs_dil == 0:
                count += 1
    return count


def convolution_flops(instr: Instruction, lhs: Shape, rhs: Shape) -> float:
    """2 x batch x out-features x in-features x valid window positions (per XLA)."""
    labels = instr.attr("dim_labels")
    if not labels:
        raise UnknownCost("convolution without dim_labels")
    lhs_l, rest = labels.split("_")
    rhs_l, out_l = rest.split("->")
    out = instr.shape
    if (len(lhs_l), len(rhs_l), len(out_l)) != (lhs.rank, rhs.rank, out.rank):
        raise UnknownCost(f"dim_labels {labels} do not fit {lhs}, {rhs} -> {out}")
    batch = out.dims[out_l.index("b")]
    out_feat = out.dims[out_l.index("f")]
    in_feat = rhs.dims[rhs_l.index("i")]
    window = instr.attr("window")
    spatial = 1
    for k in range(len(lhs_l) - 2):
        d = str(k)
        size_in, size_w, size_o = lhs.dims[lhs_l.index(d)], rhs.dims[rhs_l.index(d)], out.dims[out_l.index(d)]
        def pick(values, default):
            return values[k] if values and k < len(values) else default
        stride = pick(window.stride if window else (), 1)
        lo = pick(window.pad if window else (), (0, 0))[0]
        spatial *= _valid_pairs(size_in, size_w, size_o, stride, lo,
                                pick(window.lhs_dilate if window else (), 1),
                                pick(window.rhs_dilate if window else (), 1))
    return 2.0 * batch * out_feat * in_feat * spatial


# Custom-call targets that annotate or move data and compute nothing.
NO_FLOP_TARGETS = frozenset({
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
    "AllocateBuffer", "LayoutConstraint", "annotate_device_placement", "xla.sdy.GlobalToLocalShape",
    "xla.sdy.LocalToGlobalShape", "xla.sdy.FuncResultSharding", "X64Combine", "X64SplitLow",
    "X64SplitHigh",
    # TPU markers: the ends of a collective cloned into async collective fusions, and the
    # bitcast of operands laid out end to end; they compute nothing
    "AsyncCollectiveStart", "AsyncCollectiveDone", "ConcatBitcast",
})


def has_flop_model(opcode: str) -> bool:
    """Whether CostModel.compute has a formula (or a known zero) for this opcode."""
    shorthand = async_shorthand(opcode)
    if shorthand is not None:
        base, phase = shorthand
        return phase != "start" or base in NO_FLOPS or base in ASYNC_CALLERS
    return (opcode in PER_ELEMENT or opcode in TRANSCENDENTAL or opcode in NO_FLOPS
            or opcode in CONTROL or opcode in _FORMULAS)


# Wrapped ops whose FLOPs are those of what they call (or their kernel's estimate).
ASYNC_CALLERS = frozenset({"fusion", "call", "custom-call"})


def custom_call_flop_gap(instr: Instruction) -> str | None:
    """Why a custom call's FLOPs are unknown (None when its estimate or target says)."""
    target = instr.attr("custom_call_target")
    if target in NO_FLOP_TARGETS or kernel_cost_estimate(instr):
        return None
    return f"custom-call {target} states no cost_estimate"


def kernel_flops(instr: Instruction) -> tuple[float, float]:
    """(FLOPs, transcendentals) of a custom call from its kernel's cost estimate."""
    gap = custom_call_flop_gap(instr)
    if gap is not None:
        raise UnknownCost(gap)
    estimate = kernel_cost_estimate(instr)
    try:
        return float(estimate.get("flops", 0)), float(estimate.get("transcendentals", 0))
    except (TypeError, ValueError):
        raise UnknownCost(f"cost_estimate {estimate} is not numeric") from None


def kernel_cost_estimate(instr: Instruction) -> dict[str, str]:
    """`custom_call_config.cost_estimate` of a Mosaic TPU custom call, if any."""
    config = instr.config_with("cost_estimate")
    if isinstance(config, dict):
        estimate = config.get("custom_call_config", {}).get("cost_estimate")
        if isinstance(estimate, dict):
            return estimate
    return {}


