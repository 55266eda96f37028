"""Result shapes for instructions printed without one (XLA infers them).

XLA's parser accepts `gte = get-tuple-element(t), index=0` and infers the shape.
We infer the common cases and say clearly when we cannot.
"""

from __future__ import annotations

from dataclasses import replace

from hloscope.ir import Computation, Instruction, Shape

_SAME_AS_OPERAND = frozenset({
    "abs", "negate", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
    "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil", "sign",
    "not", "round-nearest-afz", "round-nearest-even", "copy", "erf", "real", "imag",
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
    "and", "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic",
    "atan2", "clz", "popcnt", "opt-barrier", "add-dependency",
})


class CannotInfer(ValueError):
    pass


def _plain(shape: Shape) -> Shape:
    return replace(shape, layout=None, elements=tuple(_plain(e) for e in shape.elements))


def infer(instr: Instruction, comp: Computation) -> Shape:
    ops = [comp[name].shape for name in instr.operands if name in comp]
    if len(ops) != len(instr.operands):
        raise CannotInfer(f"cannot infer the shape of %{instr.name}: unknown operand")
    op = instr.opcode
    if op == "get-tuple-element" and ops and ops[0].is_tuple:
        return ops[0].elements[int(instr.attrs.get("index", "0"))]
    if op == "tuple":
        return Shape("tuple", elements=tuple(ops))
    if op == "after-all":
        return Shape("token")
    if op == "compare" and ops:
        return Shape("pred", ops[0].dims, ops[0].dynamic)
    if op == "select" and len(ops) == 3:
        return ops[1]
    if op == "clamp" and len(ops) == 3:
        return ops[1]
    if op in _SAME_AS_OPERAND and ops:
        return ops[0]
    raise CannotInfer(f"cannot infer the shape of %{instr.name} ({op}); print its shape explicitly")
