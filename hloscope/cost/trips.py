"""A while loop's trip count from its condition, when the HLO does not state it
(`backend_config={"known_trip_count":...}` comes from an optimization pass; dumps before it,
and loops the pass leaves alone, have none).

The pattern, as XLA's own trip-count analysis reads it: the condition compares one tuple
element of the loop state (the induction variable) with a constant; the body adds a
constant step to that element; the while's operand is a tuple whose element is a
constant initial value. Copies, bitcasts and converts between them are looked through.
Anything else: unknown (None), never a guess.
"""

from __future__ import annotations

from hloscope.ir import Computation, Instruction, Module

_THROUGH = frozenset({"copy", "bitcast", "convert", "reshape"})
_FLIP = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "NE": "NE", "EQ": "EQ"}
_LIMIT = 1 << 40


def _skip(comp: Computation, name: str) -> Instruction | None:
    instr = comp.by_name.get(name)
    while instr is not None and instr.opcode in _THROUGH and len(instr.operands) == 1:
        instr = comp.by_name.get(instr.operands[0])
    return instr


def _constant(comp: Computation, name: str) -> int | None:
    instr = _skip(comp, name)
    if instr is None or instr.opcode != "constant" or not instr.shape.is_array or instr.shape.rank:
        return None
    try:
        return int(str(instr.literal).strip())
    except (TypeError, ValueError):
        return None


def _element(comp: Computation, name: str) -> int | None:
    """k when `name` is (a copy of) get-tuple-element(parameter(0)), index=k."""
    instr = _skip(comp, name)
    if instr is None or instr.opcode != "get-tuple-element" or not instr.operands:
        return None
    param = comp.by_name.get(instr.operands[0])
    if param is None or param.opcode != "parameter":
        return None
    index = instr.attr("index")
    return int(index) if isinstance(index, int) else None


def _condition(cond: Computation) -> tuple[int, str, int] | None:
    """(element k, direction with k on the left, bound)."""
    root = cond.root
    if root is None or root.opcode != "compare" or len(root.operands) != 2:
        return None
    direction = str(root.attr("direction") or "")
    a, b = root.operands
    k, bound = _element(cond, a), _constant(cond, b)
    if k is None or bound is None:
        k, bound, direction = _element(cond, b), _constant(cond, a), _FLIP.get(direction, "")
    if k is None or bound is None or not direction:
        return None
    return k, direction, bound


def _step(body: Computation, k: int) -> int | None:
    root = body.root
    if root is None or root.opcode != "tuple" or k >= len(root.operands):
        return None
    update = _skip(body, root.operands[k])
    if update is None or update.opcode not in ("add", "subtract") or len(update.operands) != 2:
        return None
    a, b = update.operands
    if _element(body, a) == k and _constant(body, b) is not None:
        step = _constant(body, b)
    elif update.opcode == "add" and _element(body, b) == k and _constant(body, a) is not None:
        step = _constant(body, a)
    else:
        return None
    return -step if update.opcode == "subtract" else step


def _count(init: int, direction: str, bound: int, step: int) -> int | None:
    if step > 0 and direction in ("LT", "LE"):
        span = bound - init + (1 if direction == "LE" else 0)
    elif step < 0 and direction in ("GT", "GE"):
        span, step = init - bound + (1 if direction == "GE" else 0), -step
    elif step != 0 and direction == "NE" and (bound - init) % step == 0 and (bound - init) // step >= 0:
        return (bound - init) // step
    else:
        return None
    return max(0, -(-span // step))


def trip_count_from_condition(module: Module, caller: Computation, loop: Instruction) -> int | None:
    """The trip count the condition, body and initial state of `loop` imply, or None."""
    cond = module.by_name.get(str(loop.attr("condition") or ""))
    body = module.by_name.get(str(loop.attr("body") or ""))
    if cond is None or body is None or not loop.operands:
        return None
    found = _condition(cond)
    if found is None:
        return None
    k, direction, bound = found
    step = _step(body, k)
    state = caller.by_name.get(loop.operands[0])
    if step is None or state is None or state.opcode != "tuple" or k >= len(state.operands):
        return None
    init = _constant(caller, state.operands[k])
    if init is None:
        return None
    n = _count(init, direction, bound, step)
    return n if n is not None and n <= _LIMIT else None
