"""Semantic checks after parsing, for what XLA's parser (or its verifier) rejects:
unknown opcodes (strict mode; the default mode keeps them, and lint warns), async
start/update/done chains that do not match, literals that do not fit their shape or
element type, operand counts, undefined or later-defined operands, duplicate names, missing called
computations, several ROOTs, parameter numbering, operand counts of elementwise ops,
elementwise shape mismatches, tuple indices out of range, the module header's aliasing
lists, one ENTRY; in strict mode also the attributes XLA's parser allows on each opcode and
on the module header (xla_attributes.json, in XLA's words: bench/xla_attributes.py asks
jaxlib) and how a computation's instructions fit together (hloscope.parser.wiring). Each is
a ParseError at the instruction's location."""

from __future__ import annotations

import json
from collections.abc import Container
from functools import cache
from pathlib import Path

from hloscope._speed import regex_cache
from hloscope.ir import Computation, Instruction, Module
from hloscope.ir.opcodes import (
    OPCODES,
    UNARY_ELEMENTWISE,
    async_shorthand,
)
from hloscope.parser.consistency import (
    ARITY_CHECKED,
    GENERIC_ASYNC,
    SHAPE_CHECKED,
    VALUE_CHECKED,
    VALUE_KEYS,
    arity,
    int_or_none,
    shape_problem,
)
from hloscope.parser.errors import ParseError, attribute_error
from hloscope.parser.literals import literal_problem
from hloscope.parser.wiring import wiring_problem


def _error(msg: str, module: Module, instr: Instruction | None, comp: Computation | None,
           text: str | None) -> ParseError:
    line = instr.line if instr is not None else (comp.line if comp is not None else module.line)
    col = instr.column if instr is not None else 1
    lines = text.split("\n") if text else None
    src = lines[line - 1] if lines and 0 < line <= len(lines) else None
    return ParseError(msg, module.path, line, col, src)


def validate(modules: list[Module], text: str | None = None, strict: bool = False) -> None:
    """Raise a located ParseError for the first semantic error; `text` (the parsed
    file) only supplies the offending line for the message; `strict`: an opcode XLA
    does not know is an error (else it is kept as an opaque instruction)."""
    for module in modules:
        check_module(module, text, strict=strict)


def check_module(module: Module, text: str | None, callable_names: Container[str] | None = None,
                 strict: bool = False) -> None:
    """validate for one module; `callable_names`: the names its calls may use, when not
    only its own computations' (hloscope.stats.halves checks half a module at a time)."""
    _header(module, text, strict)
    if not module.computations and callable_names is None:
        raise _error("expects a computation after the module header (XLA's parser needs one)",
                     module, None, None, text)
    entries = [c for c in module.computations if c.is_entry]
    if len(entries) > 1:
        raise _error("expects only one ENTRY", module, None, entries[1], text)
    names: set[str] = set()
    for comp in module.computations:
        if comp.name in names:
            raise _error(f"computation {comp.name} is defined twice", module, None, comp, text)
        names.add(comp.name)
    consistent: set[tuple] = set()  # shape checks passed, by their texts
    before: set[str] = set()  # XLA's parser needs a computation defined before its callers
    for comp in module.computations:
        visible = before if callable_names is None else _Earlier(before, names, callable_names)
        try:
            _computation(module, comp, visible, text, consistent, strict, names)
        except ParseError as e:  # attribute errors are raised without the file's name
            if not e.path or e.path == "<string>":
                e.path = module.path
                lines = text.split("\n") if text else []
                if e.source_line is None and 0 < e.line <= len(lines):
                    e.attach_source(lines[e.line - 1])
            raise
        before.add(comp.name)


class _Earlier:
    """The names a computation may call when the module is checked in parts: its own
    part's computations defined before it, or any name the other part may have."""

    def __init__(self, before: set[str], own: set[str], others: Container[str]) -> None:
        self.before, self.own, self.others = before, own, others

    def __contains__(self, name: object) -> bool:
        return name in self.before or (name not in self.own and name in self.others)


_INDEX = r"\{[\d,\s]*\}"
_ALIAS = (rf"{_INDEX}\s*:\s*\(\s*\d+\s*,\s*{_INDEX}\s*(?:,\s*(?:may-alias|must-alias)\s*)?\)")
_DONOR = rf"\(\s*\d+\s*,\s*{_INDEX}\s*\)"
# the module header's aliasing lists, whole: `{ {out}: (param, {in}[, kind]), ... }`
_LISTS = {key: regex_cache.compile(rf"\{{\s*(?:{item}(?:\s*,\s*{item})*)?\s*\}}")
          for key, item in (("input_output_alias", _ALIAS), ("buffer_donor", _DONOR))}
_LIST_FORMS = {"input_output_alias": "{ {output index}: (parameter, {index}[, may-alias|must-alias]), ... }",
               "buffer_donor": "{ (parameter, {index}), ... }"}


def _header(module: Module, text: str | None, strict: bool = False) -> None:
    """The module header's attribute values, typed now (entry_computation_layout, ...); in
    strict mode only the attributes XLA's parser allows on a header."""
    from hloscope.parser.attrs import parse_attr
    from hloscope.parser.fast.compact import accepted

    allowed = xla_attributes()["module"] if strict else None
    for key, value in module.attrs.items():
        if allowed is not None and key not in allowed:
            raise _error(f'unexpected attribute "{key}". Allowed attributes: ' + ", ".join(allowed),
                         module, None, None, text)
        if key in _LISTS and not _LISTS[key].fullmatch(value):
            raise _error(f"{key} expects integer indices and parameter numbers in the form "
                         f"{_LIST_FORMS[key]}", module, None, None, text)
        if accepted(key, value):
            continue  # an untyped value in a form the grammar takes (no tree is read)
        try:
            parse_attr(key, value)
        except Exception as cause:  # noqa: BLE001 - any failure of the value is located
            lines = text.split("\n") if text else []
            src = lines[module.line - 1] if 0 < module.line <= len(lines) else None
            raise attribute_error(key, value, cause, module.path, module.line, 1, src) from None


def _computation(module: Module, comp: Computation, computations: Container[str], text,
                 consistent: set[tuple], strict: bool = False,
                 defined: Container[str] = frozenset()) -> None:
    """The checks of one computation; `computations`: the module's computation names,
    `consistent`: the texts of shape checks passed so far (shared across the module)."""
    if not comp.instructions:
        raise _error(f"computation {comp.name} has no instructions", module, None, comp, text)
    seen: dict[str, Instruction] = {}
    roots = 0
    params: dict[int, Instruction] = {}
    for instr in comp.instructions:
        op, name = instr.opcode, instr.name
        if op not in OPCODES:
            problem = _async(instr, seen, strict)
            if problem is not None:
                raise _Raiser(module, instr, comp, text)(problem)
        if name in seen:
            raise _Raiser(module, instr, comp, text)(
                f"instruction %{name} is defined twice in {comp.name}")
        for operand in instr.operands:
            if operand not in seen:
                later = operand in comp.by_name
                raise _Raiser(module, instr, comp, text)(
                    f"operand %{operand} of %{name} is "
                    + ("used before it is defined" if later else f"not defined in {comp.name}"))
        for called in instr.calls():
            if called not in computations:
                raise _Raiser(module, instr, comp, text)(
                    f"%{name} calls computation {called}, which "
                    + ("is defined after it (XLA's parser needs callees first)"
                       if called in defined else "does not exist"))
        if instr.is_root:
            roots += 1
            if roots > 1:
                raise _Raiser(module, instr, comp, text)(f"{comp.name} has more than one ROOT")
        if strict and instr.attrs:
            allowed = _allowed(op)
            extra = [k for k in instr.attrs if k not in allowed] if allowed is not None else None
            if extra:
                raise _Raiser(module, instr, comp, text)(
                    f'unexpected attribute "{extra[0]}". Allowed attributes: ' + ", ".join(allowed))
            if (op in _GLOBAL_IDS_NEED_CHANNEL and instr.attrs.get("use_global_device_ids") == "true"
                    and "channel_id" not in instr.attrs):
                raise _Raiser(module, instr, comp, text)(
                    "Cannot have use_global_device_ids=true without channel_id")
        if op in GENERIC_ASYNC:
            problem = _generic_async(instr, seen)
            if problem is not None:
                raise _Raiser(module, instr, comp, text)(problem)
        if op == "parameter":
            number = int_or_none(instr.literal)
            if number is None or not 0 <= number < len(comp.instructions):
                raise _Raiser(module, instr, comp, text)(
                    f"parameter number {instr.literal!r} is not between 0 and the "
                    f"number of instructions of {comp.name}")
            if number in params:
                raise _Raiser(module, instr, comp, text)(
                    f"parameter {number} is defined twice in {comp.name}")
            params[number] = instr
        problem = value_problem(instr, seen, consistent)
        if problem is not None:
            raise _Raiser(module, instr, comp, text)(problem)
        seen[name] = instr
    if strict:
        found = wiring_problem(comp)
        if found is not None:
            raise _Raiser(module, found[0], comp, text)(found[1])
    if params and sorted(params) != list(range(len(params))):
        missing = next(i for i, n in enumerate(sorted(params)) if i != n)
        raise _error(f"{comp.name} has parameters {sorted(params)} but no parameter({missing})",
                     module, params[max(params)], comp, text)


def value_problem(instr: Instruction, seen: dict[str, Instruction],
                  consistent: set[tuple] | None = None) -> str | None:
    """The checks of one instruction that read only the instruction and its operands'
    shapes: operand counts, comparisons, literals, shapes against the operands (their
    message, or None). So they answer alike for every instruction of the same opcode, shape,
    VALUE_KEYS attributes, literal and operand shapes: the compiled checks
    (hloscope.parser.fast.checks) ask once per such signature. `consistent`: the texts of
    shape checks passed so far."""
    op = instr.opcode
    problem = arity(instr, seen) if op in ARITY_CHECKED else None
    if problem is None and op == "compare":
        problem = _comparison(instr)
    if problem is not None:
        return problem
    if op == "constant" and instr.literal is not None:
        problem = literal_problem(instr.shape, instr.literal)
        if problem is not None:
            return problem
    elif op in UNARY_ELEMENTWISE and len(instr.operands) != 1:
        return f"{op} takes 1 operand, %{instr.name} has {len(instr.operands)}"
    if op not in SHAPE_CHECKED:
        return None
    # the verdict rests on texts only, and dumps repeat them layer after layer
    # (attributes the line scanner split have no attr_text: no key)
    key = (op, instr.shape_text, instr.attr_text, *[seen[o].shape_text for o in instr.operands]
           ) if instr._attrs is None and consistent is not None else None
    if key is not None and key in consistent:
        return None
    problem = shape_problem(instr, seen)
    if problem is None and key is not None:
        consistent.add(key)
    return problem


# the reducing collectives, whose global device ids XLA's parser ties to a channel
_GLOBAL_IDS_NEED_CHANNEL = frozenset({"all-reduce", "all-reduce-start", "reduce-scatter"})


@cache
def xla_attributes() -> dict:
    """The attributes XLA's parser allows: {"module": [...], "opcodes": {opcode: [...]}},
    in XLA's own words (bench/xla_attributes.py asks jaxlib for them)."""
    return json.loads((Path(__file__).parent / "xla_attributes.json").read_text())


def _allowed(op: str) -> list[str] | None:
    """The attributes XLA allows on op. An async shorthand (`custom-call-start`) takes its
    wrapped op's and the thread's; its -update and -done only the thread and the common ones."""
    table = xla_attributes()["opcodes"]
    parts = async_shorthand(op) if op not in table else None
    if parts is None:
        return table.get(op)
    wrapped, phase = parts
    if phase == "start":
        own = table.get(wrapped)
        return None if own is None else sorted({*own, "async_execution_thread"})
    return [key for key in table["async-done"] if key != "calls"]


def _generic_async(instr: Instruction, seen: dict[str, Instruction]) -> str | None:
    """XLA's parser's checks of the generic async ops, in its words."""
    if instr.opcode == "async-start":
        shape = instr.shape
        if not (shape.is_tuple and len(shape.elements) >= 2 and shape.elements[0].is_tuple):
            return ("AsyncStart expects the op shape to be in the form of ((async-operands), "
                    "async-outputs, state)")
        return None
    source = seen.get(instr.operands[0]) if len(instr.operands) == 1 else None
    if source is None or source.opcode not in ("async-start", "async-update"):
        return "AsyncUpdate and AsyncDone expect a single async op as their operand"
    if instr.opcode == "async-update" and source.shape_text and instr.shape_text \
            and source.shape != instr.shape:
        return "AsyncUpdate expects the op shape to be the same as the operand shape"
    return None


_DIRECTIONS = frozenset({"EQ", "NE", "GE", "GT", "LE", "LT"})
_COMPARISON_TYPES = frozenset({"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "PARTIALORDER"})


def _comparison(instr: Instruction) -> str | None:
    """XLA's words for a compare whose direction or type is no comparison's."""
    direction = instr.raw_attr("direction")
    if direction is not None and direction not in _DIRECTIONS:
        return f"expects comparison direction but sees: {direction}"
    kind = instr.raw_attr("type")
    if kind is not None and kind not in _COMPARISON_TYPES:
        return f"expects comparison type but sees: {kind}"
    return None


class _Raiser:
    """Makes the located error for one instruction (built only when one is raised)."""

    __slots__ = ("module", "instr", "comp", "text")

    def __init__(self, module: Module, instr: Instruction, comp: Computation, text) -> None:
        self.module, self.instr, self.comp, self.text = module, instr, comp, text

    def __call__(self, msg: str) -> ParseError:
        return _error(msg, self.module, self.instr, self.comp, self.text)




def _async(instr: Instruction, seen: dict[str, Instruction], strict: bool) -> str | None:
    """What XLA says of an opcode it does not list: the async shorthand's chain checks, or
    `unknown opcode` (strict mode only). None: accepted."""
    parts = async_shorthand(instr.opcode)
    if parts is None:
        return f"unknown opcode '{instr.opcode}'" if strict else None
    wrapped, phase = parts
    if phase == "start":
        shape = instr.shape
        if not (shape.is_tuple and len(shape.elements) >= 2 and shape.elements[0].is_tuple):
            return ("AsyncStart expects the op shape to be in the form of ((async-operands), "
                    f"async-outputs, state), not {instr.shape_text}")
        return None
    source = seen.get(instr.operands[0]) if len(instr.operands) == 1 else None
    before = async_shorthand(source.opcode) if source is not None else None
    if source is None or before is None or before[1] == "done":
        return ("AsyncUpdate and AsyncDone expect a single async op as their operand "
                f"(the {wrapped}-start or -update that {instr.opcode} continues)")
    if before[0] != wrapped:
        return (f"Expect async wrapped opcode to be {before[0]}, but got {wrapped} "
                f"(%{instr.name} continues {source.opcode})")
    if phase == "update" and source.shape_text != instr.shape_text:
        return f"AsyncUpdate expects the op shape to be the same as the operand shape {source.shape_text}"
    return None
