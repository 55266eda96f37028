"""A collective's bytes: what its operands and result hold, as its (start's) shape prints
them, and what a ring moves per device over groups of n (hloscope.sharding.collectives)."""

from __future__ import annotations

from hloscope.ir import Instruction, Shape


def moved_bytes(op: str, n: int, operand: int, result: int) -> float:
    """Bytes a ring moves per device over groups of n (collective-permute: all it sends)."""
    if n <= 1:
        return 0.0
    frac = (n - 1) / n
    return {"all-gather": result * frac, "reduce-scatter": operand * frac,
            "all-reduce": 2 * operand * frac, "all-to-all": operand * frac,
            "ragged-all-to-all": operand * frac}.get(op, float(operand))


_STARTS_WITH_OPERANDS = frozenset({"async-start", "all-gather-start", "collective-permute-start"})


def result_shape(instr: Instruction) -> Shape:
    """What a collective (or its start) produces. An async wrapper's start is ((operands),
    outputs[, context]); an all-gather's or a permute's start is (operands, results[,
    contexts]); an all-reduce's start is its result, a tuple of them when it combines several,
    as a synchronous collective over several operands is."""
    result = instr.shape
    if instr.opcode in _STARTS_WITH_OPERANDS and result.is_tuple and len(result.elements) >= 2:
        return result.elements[1]
    return result


def sized_collective(op: str, n: int, instr: Instruction,
                     operands: list[Shape]) -> tuple[int, int, float, str]:
    """(operand bytes, result bytes, bytes moved per device, global shape as the operands
    and result show it) of a collective over groups of n."""
    # (a ragged all-to-all's operands are its input, the output buffer it writes into and
    # four offset/size lists: what it sends is a share of the input)
    operand_bytes = (operands[0].logical_bytes if op == "ragged-all-to-all" and operands
                     else sum(s.logical_bytes for s in operands))
    result = result_shape(instr)
    result_bytes = result.logical_bytes
    gshape = str(result) if op == "all-gather" or not operands else str(operands[0])
    return operand_bytes, result_bytes, moved_bytes(op, n, operand_bytes, result_bytes), gshape
