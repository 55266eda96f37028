"""Result shapes for instructions printed without one (XLA infers them).

XLA's parser accepts `gte = get-tuple-element(t), index=0` and infers the shape.
We infer the common cases and say clearly when we cannot.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hloscope.ir import Computation, Instruction, Shape

_SAME_AS_OPERAND = frozenset({
    "abs", "negate", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
    "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil", "sign",
    "not", "round-nearest-afz", "round-nearest-even", "copy", "erf", "real", "imag",
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
    "and", "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic",
    "atan2", "clz", "popcnt", "opt-barrier", "add-dependency", "domain", "reverse",
    "count-leading-zeros", "logistic", "acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh",
})
_SCALAR_RESULT = {"partition-id": "u32", "replica-id": "u32", "get-dimension-size": "s32"}
_COMPLEX_PART = {"c64": "f32", "c128": "f64"}
_COMPLEX_OF = {"f32": "c64", "f64": "c128"}


class CannotInfer(ValueError):
    pass


def _array(element_type: str, dims: tuple[int, ...] | list[int]) -> Shape:
    dims = tuple(dims)
    return Shape(element_type, dims, (False,) * len(dims))


def _plain(shape: Shape) -> Shape:
    return replace(shape, layout=None, elements=tuple(_plain(e) for e in shape.elements))


def infer(instr: Instruction, comp: Computation, module: Any = None) -> Shape:
    """The shape XLA infers for an instruction printed without one; `module` (any object
    with `by_name` computations) for ops whose shape is a called computation's. Attributes
    that do not fit the operands (an index past a tuple's end, a dimension past the rank)
    raise CannotInfer, never a bare IndexError."""
    try:
        return _infer(instr, comp, module)
    except (IndexError, KeyError, TypeError) as cause:
        raise CannotInfer(f"cannot infer the shape of %{instr.name} ({instr.opcode}): its attributes "
                          f"do not fit its operands ({cause})") from None


def _infer(instr: Instruction, comp: Computation, module: Any = None) -> Shape:
    ops = [comp[name].shape for name in instr.operands if name in comp]
    if len(ops) != len(instr.operands):
        raise CannotInfer(f"cannot infer the shape of %{instr.name}: unknown operand")
    op = instr.opcode
    if op in _SCALAR_RESULT:
        return Shape(_SCALAR_RESULT[op])
    if op == "is-finite" and ops:
        return Shape("pred", ops[0].dims, ops[0].dynamic)
    if op in ("real", "imag") and ops and ops[0].element_type in _COMPLEX_PART:
        return Shape(_COMPLEX_PART[ops[0].element_type], ops[0].dims, ops[0].dynamic)
    if op == "complex" and ops and ops[0].element_type in _COMPLEX_OF:
        return Shape(_COMPLEX_OF[ops[0].element_type], ops[0].dims, ops[0].dynamic)
    if op == "transpose" and ops and ops[0].is_array:
        perm = instr.attr("dimensions", ())
        if sorted(perm) == list(range(ops[0].rank)):
            return _array(ops[0].element_type, [ops[0].dims[d] for d in perm])
    if op == "concatenate" and ops and all(o.is_array for o in ops):
        (dim,) = instr.attr("dimensions", (0,))[:1] or (0,)
        dims = list(ops[0].dims)
        if 0 <= dim < len(dims):
            dims[dim] = sum(o.dims[dim] for o in ops)
            return _array(ops[0].element_type, dims)
    if op == "dot" and len(ops) == 2 and all(o.is_array for o in ops):
        lb, lc = instr.attr("lhs_batch_dims", ()), instr.attr("lhs_contracting_dims", ())
        rb, rc = instr.attr("rhs_batch_dims", ()), instr.attr("rhs_contracting_dims", ())
        lhs, rhs = ops
        dims = ([lhs.dims[d] for d in lb]
                + [n for d, n in enumerate(lhs.dims) if d not in lb and d not in lc]
                + [n for d, n in enumerate(rhs.dims) if d not in rb and d not in rc])
        return _array(lhs.element_type, dims)
    if op == "reduce" and len(ops) == 2 and ops[0].is_array:
        drop = set(instr.attr("dimensions", ()))
        return _array(ops[1].element_type, [n for d, n in enumerate(ops[0].dims) if d not in drop])
    if op == "while" and ops:
        return ops[0]
    if op == "pad" and len(ops) == 2 and ops[0].is_array:
        # padding=lo_hi[_interior] per dimension, `x` between: lo + hi + d + (d - 1) x interior
        parts = str(instr.raw_attr("padding") or "").split("x")
        if len(parts) == ops[0].rank:
            try:
                dims = []
                for d, part in zip(ops[0].dims, parts):
                    nums = [int(v) for v in part.split("_")]
                    interior = nums[2] if len(nums) > 2 else 0
                    dims.append(nums[0] + nums[1] + d + max(d - 1, 0) * interior)
                return _array(ops[0].element_type, dims)
            except (ValueError, IndexError):
                pass
    if op in ("call", "conditional") and module is not None:
        called = instr.called_computations
        target = module.by_name.get(called[-1 if op == "call" else 0]) if called else None
        if target is not None and target.root is not None and target.root.shape_text:
            return target.root.shape
    if op == "sort" and ops:
        return ops[0] if len(ops) == 1 else Shape("tuple", elements=tuple(ops))
    if op == "get-tuple-element" and ops and ops[0].is_tuple:
        index = int(instr.attrs.get("index", "0"))
        if not 0 <= index < len(ops[0].elements):
            raise CannotInfer(f"tuple index {index} out of range for {ops[0]}")
        return ops[0].elements[index]
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
