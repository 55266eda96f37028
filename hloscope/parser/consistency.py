"""Per-instruction consistency checks (hloscope.parser.validate runs them): operand counts
that hang on the op's shapes or attributes, and shapes that disagree with the operands, each a
message in XLA's parser's or verifier's words, or None."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hloscope.ir.opcodes import BINARY_SAME_SHAPE, OPERAND_COUNTS, UNARY_ELEMENTWISE

if TYPE_CHECKING:  # (the tables below are read without the IR: hloscope.parser.fast.beside)
    from hloscope.ir import Instruction


# ops on arrays that make an array: a tuple shape on one, or a tuple operand of one, is refused
# by XLA's verifier (its parser takes the op alone, and can abort the process when such a value
# is used: found by swapping shapes in the corpus's modules)
ARRAY_RESULT = (UNARY_ELEMENTWISE - {"copy"}) | BINARY_SAME_SHAPE | {
    "reshape", "slice", "transpose", "select", "broadcast", "dynamic-slice", "dynamic-update-slice",
    "concatenate", "pad", "compare", "clamp", "reverse", "dot", "convolution", "gather"}
SHAPE_CHECKED = ARRAY_RESULT | {"reduce", "get-tuple-element"}


# the opcodes arity() has anything to say of (validate asks it of these only)
ARITY_CHECKED = frozenset(OPERAND_COUNTS) | {
    "replica-id", "partition-id", "tuple", "dot", "reduce-window", "reduce", "scatter",
    "dynamic-slice", "dynamic-update-slice", "conditional", "concatenate"}

# the opcodes validate's value_problem checks anything of, and the attribute keys it reads
# (no other: tests/test_native_checks.py watches every read it makes over the corpus); the
# generic async ops, which validate checks against their operand's opcode
VALUE_CHECKED = ARITY_CHECKED | SHAPE_CHECKED | UNARY_ELEMENTWISE | {"compare", "constant"}
VALUE_KEYS = ("branch_computations", "dimensions", "direction", "type", "index", "dim_labels",
              "lhs_contracting_dims", "lhs_batch_dims", "rhs_contracting_dims", "rhs_batch_dims")
GENERIC_ASYNC = frozenset({"async-start", "async-update", "async-done"})


def arity(instr: Instruction, seen: dict[str, Instruction]) -> str | None:
    """Operand counts (fixed per opcode, or hanging on the op's shapes or attributes) and the
    result shapes an opcode fixes, in XLA's parser's words."""
    op, n = instr.opcode, len(instr.operands)
    if op in ("replica-id", "partition-id") and not (instr.shape.is_array and instr.shape.rank == 0
                                                     and instr.shape.element_type == "u32"):
        # (XLA's parser aborts on it)
        return f"HloInstruction {op} must have a shape of u32[], but {instr.shape_text} is specified"
    if op == "tuple":
        if not instr.shape.is_tuple:  # (XLA's parser aborts on it)
            return f"Expected a tuple shape. Got {instr.shape_text}"
        if n != len(instr.shape.elements):
            return f"expects {len(instr.shape.elements)} operands, but has {n} operands"
    wanted = OPERAND_COUNTS.get(op)
    if wanted is not None and n != wanted:
        return f"{op} expects {wanted} operand{'s' * (wanted != 1)}, but %{instr.name} has {n}"
    if op == "dot" and n < 2:  # (more are sparsity metadata)
        return f"dot expects at least 2 operands, but %{instr.name} has {n}"
    if op in ("reduce-window", "reduce") and (n < 2 or n % 2):  # (inputs, then as many inits)
        return f"expects an even number of operands, but has {n} operands"
    if op == "scatter" and (n < 3 or n % 2 == 0):  # (inputs, indices, as many updates)
        return f"expects an odd number of operands, at least 3, but has {n} operands"
    if op in ("dynamic-slice", "dynamic-update-slice") and n and instr.operands[0] in seen:
        base = 2 if op == "dynamic-update-slice" else 1
        rank = seen[instr.operands[0]].shape.rank
        # (one index per dimension, or XLA's older form: one rank-1 array of them)
        vector = n == base + 1 and seen[instr.operands[base]].shape.rank == 1
        if n != base + rank and not vector:
            return (f"Wrong number of operands. (%{instr.name} has {n}: the {op} of a rank-{rank} "
                    f"array takes {base} and one index per dimension)")
    if op == "conditional":
        branches = len(instr.attr("branch_computations", ()) or ()) or 2
        if n != 1 + branches:
            return f"conditional %{instr.name} has {branches} branches, so 1 + {branches} operands, not {n}"
    if op == "concatenate" and len(instr.attr("dimensions", ())) != 1:
        return f"concatenate %{instr.name} needs one dimension in dimensions=, not {instr.raw_attr('dimensions')}"
    return None


def shape_problem(instr: Instruction, seen: dict[str, Instruction]) -> str | None:
    """The message of the first shape inconsistency of instr, if any."""
    op = instr.opcode
    n = len(instr.operands)
    if op in ARRAY_RESULT and instr.shape.is_tuple and not (
            op == "select" and n == 3 and seen[instr.operands[1]].shape.is_tuple):
        return f"{op} %{instr.name} makes an array, but its shape is the tuple {instr.shape}"
    if op in ARRAY_RESULT and not (op == "select" and instr.shape.is_tuple):
        tuple_operand = next((o for o in instr.operands if seen[o].shape.is_tuple), None)
        if tuple_operand is not None:
            return (f"{op} %{instr.name} works on arrays, but its operand %{tuple_operand} is the "
                    f"tuple {seen[tuple_operand].shape}")
    if op == "reshape" and n == 1:  # (XLA's parser aborts on a count that differs)
        src, out = seen[instr.operands[0]].shape, instr.shape
        if (src.is_array and out.is_array and not any(src.dynamic) and not any(out.dynamic)
                and src.num_elements != out.num_elements):
            return (f"reshape %{instr.name}: the result {out} has {out.num_elements} elements, "
                    f"its operand %{instr.operands[0]} {src} has {src.num_elements}")
    if op in BINARY_SAME_SHAPE:
        if n != 2:
            return f"{op} takes 2 operands, %{instr.name} has {n}"
        out = instr.shape
        for name in instr.operands:
            s = seen[name].shape
            if s.is_array and out.is_array and (s.dims != out.dims or s.element_type != out.element_type):
                return f"{op} %{instr.name}: operand %{name} is {s} but the result is {out}"
    if op in ("dot", "convolution") and n >= 2:
        lhs, rhs = seen[instr.operands[0]].shape, seen[instr.operands[1]].shape
        for key, side in (("lhs_contracting_dims", lhs), ("lhs_batch_dims", lhs),
                          ("rhs_contracting_dims", rhs), ("rhs_batch_dims", rhs)):
            dims = instr.attr(key, ())
            if any(not 0 <= d < side.rank for d in dims):
                return f"{key}={{{','.join(map(str, dims))}}} out of range for {side}"
        labels = instr.attr("dim_labels") if op == "convolution" else None
        if labels:
            parts = labels.replace("->", "_").split("_")
            ranks = (lhs.rank, rhs.rank, instr.shape.rank)
            if len(parts) != 3 or any(len(p) != r for p, r in zip(parts, ranks)):
                return f"dim_labels={labels} do not match the ranks {ranks}"
    if op in ("reduce", "transpose", "broadcast", "reverse") and n >= 1 and instr.may_have("dimensions"):
        rank = (instr.shape if op == "broadcast" else seen[instr.operands[0]].shape).rank
        dims = instr.attr("dimensions", ())
        if any(not 0 <= d < max(rank, 1) for d in dims) and not (op == "broadcast" and not dims):
            return f"dimensions={{{','.join(map(str, dims))}}} out of range for rank {rank}"
    if op == "get-tuple-element" and n == 1:
        src = seen[instr.operands[0]].shape
        index = int_or_none(instr.raw_attr("index"))
        if not src.is_tuple:
            return f"get-tuple-element of %{instr.operands[0]}, which is not a tuple ({src})"
        if index is None or not 0 <= index < len(src.elements):
            return f"tuple index {instr.raw_attr('index')} out of range for {src}"
        if _unlaid(src.elements[index]) != _unlaid(instr.shape):
            return (f"get-tuple-element %{instr.name} is {instr.shape}, but element {index} of "
                    f"%{instr.operands[0]} is {src.elements[index]}")
    return None


def _unlaid(shape) -> tuple:
    """A shape without its layout: (type, dims) of an array, its elements' of a tuple."""
    if shape.is_tuple:
        return ("tuple", tuple(_unlaid(e) for e in shape.elements))
    return (shape.element_type, shape.dims)


def int_or_none(text: str | None) -> int | None:
    """The integer `text` spells, or None (no text, or not an integer)."""
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
