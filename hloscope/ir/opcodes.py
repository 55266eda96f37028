"""Every HLO opcode XLA's text parser knows, as printed.

From the HloOpcode enum of jaxlib 0.10.2 (each spelling checked against XLA's own parser).
"""

from __future__ import annotations

OPCODES = frozenset({
    "abs", "acos", "acosh", "add", "add-dependency", "after-all", "all-gather",
    "all-gather-done", "all-gather-start", "all-reduce", "all-reduce-done", "all-reduce-start",
    "all-to-all", "and", "asin", "asinh", "async-done", "async-start", "async-update", "atan2",
    "atanh", "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast",
    "bitcast-convert", "broadcast", "call", "cbrt", "ceil", "cholesky", "clamp",
    "collective-broadcast", "collective-permute", "collective-permute-done",
    "collective-permute-start", "compare", "complex", "concatenate", "conditional", "constant",
    "convert", "convolution", "copy", "copy-done", "copy-start", "cosh", "cosine",
    "count-leading-zeros", "custom-call", "divide", "domain", "dot", "dynamic-reshape",
    "dynamic-slice", "dynamic-update-slice", "erf", "exponential", "exponential-minus-one",
    "fft", "floor", "fusion", "gather", "get-dimension-size", "get-tuple-element", "imag",
    "infeed", "iota", "is-finite", "log", "log-plus-one", "logistic", "map", "maximum",
    "minimum", "mulhi", "multiply", "negate", "not", "opt-barrier", "or", "outfeed", "pad",
    "parameter", "partition-id", "popcnt", "power", "ragged-all-to-all", "ragged-dot", "real",
    "recv", "recv-done", "reduce", "reduce-precision", "reduce-scatter", "reduce-window",
    "remainder", "replica-id", "reshape", "reverse", "rng", "rng-bit-generator",
    "rng-get-and-update-state", "round-nearest-afz", "round-nearest-even", "rsqrt",
    "scaled-dot", "scan", "scatter", "select", "select-and-scatter", "send", "send-done",
    "set-dimension-size", "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign",
    "sine", "sinh", "slice", "sort", "sqrt", "stochastic-convert", "subtract", "tan", "tanh",
    "topk", "transpose", "triangular-solve", "tuple", "while", "xor",
})

UNARY_ELEMENTWISE = frozenset({
    "abs", "negate", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
    "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil", "sign", "not",
    "round-nearest-afz", "round-nearest-even", "erf", "is-finite", "popcnt",
    "count-leading-zeros", "real", "imag", "copy", "convert", "bitcast-convert",
    "reduce-precision", "acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh",
})
BINARY_SAME_SHAPE = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
    "and", "or", "xor", "atan2", "shift-left", "shift-right-logical", "shift-right-arithmetic",
})

# Operand counts XLA's parser requires (beyond the elementwise sets above).
OPERAND_COUNTS: dict[str, int] = {
    **{op: 1 for op in ("bitcast", "opt-barrier", "all-gather-done", "all-reduce-done",
                        "collective-permute-done", "copy-done", "copy-start", "topk", "reshape",
                        "while", "domain", "get-dimension-size", "transpose", "broadcast",
                        "slice", "reverse", "get-tuple-element", "fft", "send-done", "recv-done")},
    **{op: 2 for op in ("add-dependency", "set-dimension-size", "pad", "compare", "convolution", "complex")},
    **{op: 3 for op in ("clamp", "select")},
    **{op: 0 for op in ("iota", "replica-id", "partition-id")},
}

# Results that are another instruction's buffer (or a computation's carried one), not a
# buffer of their own.
ALIASING = frozenset({"bitcast", "get-tuple-element", "tuple", "opt-barrier", "add-dependency",
                      "while", "call", "conditional"})

# The collectives, and the opcodes an instruction that is one (or starts one) may have:
# `<collective>-start`, or async-start wrapping one.
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
               "collective-broadcast", "ragged-all-to-all")
MAY_BE_COLLECTIVE = frozenset({*COLLECTIVES, *(f"{op}-start" for op in COLLECTIVES), "async-start"})

# Opcodes whose parentheses hold a literal, not operand names: constant(1), parameter(0).
LITERAL_OPCODES = frozenset({"constant", "parameter"})

# XLA prints an op wrapped in async-start/-update/-done as `<op>-start`, `<op>-update`,
# `<op>-done` (slice-start, all-to-all-start, ...) for any opcode that has no async
# form of its own.
ASYNC_PHASES = ("-start", "-update", "-done")
# An async op's later halves: they name the buffer and the work their start holds.
ASYNC_LATER = ASYNC_PHASES[1:]


def carried_element(opcode: str) -> int:
    """Which element of an async start's tuple holds the operand(s) it carries: copy-start
    prints (destination, source, context), the others (operands, results[, contexts])."""
    return 1 if opcode == "copy-start" else 0


def async_shorthand(opcode: str) -> tuple[str, str] | None:
    """(wrapped opcode, phase: start | update | done) of an async shorthand opcode."""
    if opcode in OPCODES:
        return None
    for phase in ASYNC_PHASES:
        if opcode.endswith(phase) and opcode[: -len(phase)] in OPCODES:
            return opcode[: -len(phase)], phase[1:]
    return None


def known_opcode(opcode: str) -> bool:
    """Whether XLA's parser knows this opcode (as printed, or as async shorthand)."""
    return opcode in OPCODES or async_shorthand(opcode) is not None
