"""Result shapes for instructions printed without one (XLA infers them).

XLA's parser accepts `gte = get-tuple-element(t), index=0` and infers the shape.
We infer the common cases and say clearly when we cannot.
"""

from __future__ import annotations

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
    return shape.replace(layout=None, elements=tuple(_plain(e) for e in shape.elements))


def infer(instr: Instruction, comp: Computation, module: Any = None) -> Shape:
    """The shape XLA infers for an instruction printed without one; `module` (any object
    with `by_name` computations) for ops whose shape is a called computation's. Attributes
    that do not fit the operands (an index past a tuple's end, a dimension past the rank)
    raise CannotInfer, never a bare IndexError."""
    try:
        return _infer(instr, comp, module)
    except (IndexError, KeyError, TypeError, StopIteration) as cause:
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
    if op == "abs" and ops and ops[0].element_type in _COMPLEX_PART:
        return Shape(_COMPLEX_PART[ops[0].element_type], ops[0].dims, ops[0].dynamic)
    if op in _SAME_AS_OPERAND and ops:
        return ops[0]
    shaped = _geometry(instr, op, ops)
    if shaped is not None:
        return shaped
    raise CannotInfer(f"cannot infer the shape of %{instr.name} ({op}); print its shape explicitly")


def _geometry(instr: Instruction, op: str, ops: list[Shape]) -> Shape | None:
    """Ops whose result XLA's parser works out from their attributes: broadcast (its
    `dimensions` read as sizes put in front, XLA's old form), fft, scatter, gather,
    convolution and reduce-window."""
    if not ops or not all(o.is_array for o in ops):
        return None
    first = ops[0]
    if op == "broadcast" and len(ops) == 1:
        return _array(first.element_type, tuple(instr.attr("dimensions", ())) + first.dims)
    if op == "fft" and len(ops) == 1:
        kind, lengths = str(instr.raw_attr("fft_type") or "FFT"), tuple(instr.attr("fft_length", ()))
        dims = list(first.dims)
        if kind == "RFFT" and lengths and first.element_type in _COMPLEX_OF:
            dims[-1] = lengths[-1] // 2 + 1
            return _array(_COMPLEX_OF[first.element_type], dims)
        if kind == "IRFFT" and lengths and first.element_type in _COMPLEX_PART:
            dims[-1] = lengths[-1]
            return _array(_COMPLEX_PART[first.element_type], dims)
        return first if kind in ("FFT", "IFFT") else None
    if op == "scatter" and len(ops) >= 3 and len(ops) % 2:
        inputs = ops[: len(ops) // 2]
        return inputs[0] if len(inputs) == 1 else Shape("tuple", elements=tuple(inputs))
    if op == "gather" and len(ops) == 2:
        return _gather(instr, first, ops[1])
    if op == "convolution" and len(ops) == 2:
        return _convolution(instr, first, ops[1])
    if op == "reduce-window" and len(ops) >= 2 and len(ops) % 2 == 0:
        window = instr.attr("window")
        inputs, inits = ops[: len(ops) // 2], ops[len(ops) // 2:]
        dims = _windowed(first.dims, window, base_dilated=True)
        outs = tuple(_array(i.element_type, dims) for i in inits)
        return outs[0] if len(outs) == 1 else Shape("tuple", elements=outs)
    return None


def _windowed(dims: tuple[int, ...], window: Any, base_dilated: bool = False) -> list[int]:
    """Each dimension after a window slides over it: (dilated, padded size - dilated window
    size) // stride + 1. `base_dilated`: the window's lhs_dilate dilates the base (reduce-window)."""
    if window is None or len(window.size) != len(dims):
        raise CannotInfer(f"a window of {len(window.size) if window else 0} dimensions over {len(dims)}")
    out = []
    for k, d in enumerate(dims):
        ld = window.lhs_dilate[k] if window.lhs_dilate else 1
        rd = window.rhs_dilate[k] if window.rhs_dilate else 1
        lo, hi = window.pad[k] if window.pad else (0, 0)
        stride = window.stride[k] if window.stride else 1
        base = (d - 1) * ld + 1 if d else 0
        span = (window.size[k] - 1) * rd + 1
        out.append(max((base + lo + hi - span) // stride + 1, 0))
    return out


def _convolution(instr: Instruction, lhs: Shape, rhs: Shape) -> Shape:
    labels = str(instr.raw_attr("dim_labels") or "")
    try:
        ins, kernel, outs = labels.replace("->", "_").split("_")
    except ValueError:
        raise CannotInfer(f"convolution %{instr.name} needs dim_labels to infer its shape") from None
    spatial = [c for c in ins if c.isdigit()]
    window = instr.attr("window")
    sizes = _windowed(tuple(lhs.dims[ins.index(c)] for c in spatial), window) if spatial else []
    batch_groups = int(instr.attrs.get("batch_group_count", "1"))
    known = {"b": lhs.dims[ins.index("b")] // batch_groups, "f": rhs.dims[kernel.index("o")]}
    known.update(zip(spatial, sizes))
    return _array(lhs.element_type, [known[c] for c in outs])


def _gather(instr: Instruction, operand: Shape, indices: Shape) -> Shape:
    offset_dims = tuple(instr.attr("offset_dims", ()))
    dropped = set(instr.attr("collapsed_slice_dims", ())) | set(instr.attr("operand_batching_dims", ()))
    sizes = tuple(instr.attr("slice_sizes", ()))
    vector_dim = int(instr.attrs.get("index_vector_dim", str(indices.rank)))
    batch = [n for d, n in enumerate(indices.dims) if d != vector_dim]
    offsets = [n for d, n in enumerate(sizes) if d not in dropped]
    if len(offsets) != len(offset_dims):
        raise CannotInfer(f"gather %{instr.name}: {len(offset_dims)} offset_dims for {len(offsets)} slice dimensions")
    rank = len(batch) + len(offsets)
    take_offset, take_batch = iter(offsets), iter(batch)
    return _array(operand.element_type, [next(take_offset) if d in offset_dims else next(take_batch)
                                         for d in range(rank)])
