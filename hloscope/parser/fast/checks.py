"""validate for scanned modules through the compiled checks (`hloscope_native.checks`,
native/src/check.rs): the structural checks (names, operands defined above, callees defined
before, ROOTs, parameter numbers, computations) run in Rust over the text, and the value
checks (`validate.value_problem`) run here once per distinct signature (opcode, shape, the
attributes those checks read, literal, operand shapes) instead of once per instruction: a
dump repeats a few hundred signatures over 100k instructions. Opcodes validate checks
against their operand's opcode (the async chains: generic, shorthand, unlisted) come back
once per (opcode, shape, operands' opcodes and shapes) and are checked here the same way
(as validate, on the modules as scanned: the `async_wrapped` computations the parse makes
for shorthand starts come after, on either route).

Sound by construction, not by trust: the Rust side answers only for texts it models and
gives up on everything else; its view of the computations (names, ENTRY, instruction
counts) must be the scanned modules' own; any problem found anywhere sends the modules to
`validate`, which raises the located error. So the result is always validate's.
"""

from __future__ import annotations

from hloscope.ir import Instruction, Module
from hloscope.ir.opcodes import OPCODES
from hloscope.parser.attrs import parse_shape
from hloscope.parser.consistency import GENERIC_ASYNC
from hloscope.parser.errors import ParseError
from hloscope.parser.fast.beside import compiled_checks
from hloscope.parser.reader import READER
from hloscope.parser.validate import (
    VALUE_CHECKED,
    _async,
    _generic_async,
    _header,
    validate,
    value_problem,
)


def validate_scanned(modules: list[Module], text: str, answer: tuple | None = None) -> None:
    """validate(modules, text) of modules the fast scan made from `text`, the same verdict
    and error, mostly through the compiled checks (`answer`: theirs, when they ran already,
    as `Beside` runs them)."""
    if not passed(modules, text, answer):
        validate(modules, text)


def passed(modules: list[Module], text: str, answer: tuple | None = None) -> bool:
    """True when the compiled checks and the value checks of every signature pass (then
    validate would pass); False when they cannot tell or something fails. `answer`: the
    compiled pass's, when it ran already; with the computations' structure digests, they
    are set on the modules' computations when it passes."""
    found = answer if answer is not None else compiled_checks(text)
    if found is None:
        return False
    why, seen, signatures, rewritten, _, decided = found[:6]
    if why is not None or len(seen) != len(modules):
        return False
    for module, comps in zip(modules, seen):
        if [(c.name, c.is_entry, len(c.instructions)) for c in module.computations] != comps:
            return False  # (the scan read the text otherwise: validate decides)
    try:
        for module in modules:
            _header(module, text)
    except ParseError:  # (validate raises it where it belongs among the others)
        return False
    if rewritten and not _agree(modules, rewritten):
        return False
    shapes: dict[str, object] = {}
    if any(_fails(sig, shapes) for sig in signatures) or any(
            decided_fails(entry, shapes) for entry in decided):
        return False
    structures = found[6] if len(found) > 6 else None
    for module, digests in zip(modules, structures or ()):  # (of the computations just matched)
        for comp, digest in zip(module.computations, digests):
            comp.structure = digest
    return True


def _agree(modules: list[Module], rewritten: list[tuple]) -> bool:
    """Whether the instructions of rewritten lines, as the compiled checks read them, are
    the scanned modules' own (read_alike), and pass their checks (on the instruction
    itself: value_problem, or an async chain's against its operand)."""
    at_line: dict[tuple[int, int], dict[int, Instruction]] = {}
    for entry in rewritten:
        m, c, line, _, opcode, _, operands, *_ = entry
        comp = modules[m].computations[c]
        lines = at_line.get((m, c))
        if lines is None:
            lines = at_line[m, c] = {i.line: i for i in comp.instructions}
        instr = lines.get(line)
        if instr is None or not read_alike(instr, entry):
            return False
        if opcode in VALUE_CHECKED or chained(opcode):
            by_name = comp.by_name
            seen = {o: by_name[o] for o in operands}
            if _problem(instr, seen) if opcode in VALUE_CHECKED else _chain_fails(instr, seen):
                return False
    return True


def read_alike(instr: Instruction, entry: tuple) -> bool:
    """Whether an instruction of a rewritten line, as the compiled checks read it (an entry
    of their answer's `rewritten`), is `instr`: name, opcode, shape, operands, ROOT,
    callees and literal."""
    _, _, _, name, opcode, shape, operands, literal, root, calls, *_ = entry
    return (instr.name, instr.opcode, instr.shape_text, instr.operands, instr.is_root,
            tuple(instr.calls()), instr.literal) == (
        name, opcode, shape, tuple(operands), root, tuple(calls),
        literal.strip() if literal is not None else None)


def stubs(names, shape_texts, shapes: dict[str, object],
          opcodes=None) -> dict[str, Instruction]:
    """Operands that are only their shapes (parameters named `names`, or of `opcodes`),
    for value_problem and the async chains' checks."""
    ops = opcodes if opcodes is not None else ["parameter"] * len(names)
    return {name: Instruction(name, op, text, _shape=_shape(text, shapes), reader=READER)
            for name, op, text in zip(names, ops, shape_texts)}


def _fails(signature: tuple, shapes: dict[str, object]) -> bool:
    """Whether an instruction of this signature fails its value checks."""
    opcode, shape_text, attr_text, literal, operand_shapes = signature
    seen = stubs([f"operand.{k}" for k in range(len(operand_shapes))], operand_shapes, shapes)
    instr = Instruction("checked", opcode, shape_text, tuple(seen), (None,) * len(seen),
                        literal=literal.strip() if literal is not None else None,
                        _shape=_shape(shape_text, shapes), attr_text=attr_text, reader=READER)
    return _problem(instr, seen)


def decided_fails(entry: tuple, shapes: dict[str, object]) -> bool:
    """Whether an instruction of an opcode the compiled checks leave to Python (a generic
    async op, an async shorthand such as `custom-call-start`, an opcode XLA does not list),
    as they read it (an entry of their answer's `decided`: opcode, shape, each operand's
    opcode and shape), fails validate's checks of it: the async chain's, in the default
    (not strict) mode."""
    opcode, shape_text, operands = entry
    if opcode in VALUE_CHECKED:
        return True  # (none is: should one be, validate decides)
    seen = stubs([f"operand.{k}" for k in range(len(operands))], [t for _, t in operands],
                 shapes, [op for op, _ in operands])
    instr = Instruction("checked", opcode, shape_text, tuple(seen), (None,) * len(seen),
                        _shape=_shape(shape_text, shapes), reader=READER)
    return _chain_fails(instr, seen)


def chained(opcode: str) -> bool:
    """Whether validate checks an op of this opcode against its operand's opcode (the
    async chains: generic async ops, shorthand ones, and opcodes it does not list)."""
    return opcode in GENERIC_ASYNC or opcode not in OPCODES


def _chain_fails(instr: Instruction, seen: dict[str, Instruction]) -> bool:
    """Whether validate's checks of an opcode its table does not class fail (the async
    chain's, not strict), `seen`: the instruction's operands."""
    try:
        if instr.opcode in GENERIC_ASYNC:
            return _generic_async(instr, seen) is not None
        return instr.opcode in OPCODES or _async(instr, seen, False) is not None
    except Exception:  # noqa: BLE001 - a shape that does not read: validate says where
        return True


def _problem(instr: Instruction, seen: dict[str, Instruction]) -> bool:
    """Whether value_problem finds a problem, or cannot read a value (validate then
    raises the located error)."""
    try:
        return value_problem(instr, seen) is not None
    except Exception:  # noqa: BLE001 - a value that does not read: validate says where
        return True


def _shape(text: str, shapes: dict[str, object]):
    found = shapes.get(text)
    if found is None:
        found = shapes[text] = parse_shape(text)
    return found
