"""Operands that name one element of a tuple: `fusion(%custom-call.2#0)`.

Newer XLA (jax 0.11's GPU dumps, `--xla_dump_to`) prints a module without its
get-tuple-element instructions: an operand `%x#i` stands for element i of `%x`'s tuple
(`%x#i#j` for element j of that). `compiled.as_text()` of the same executable prints the
get-tuple-elements. The parser reads such an operand as the name `x#i`; `expand` then adds,
once per computation and element, the get-tuple-element it stands for, named `x#i`, right
after `%x`, so every analysis sees the module that as_text prints (tests/test_tuple_refs.py
holds the two printings of real H100 compiles to the same instructions).
"""

from __future__ import annotations

from hloscope.ir import Computation, Instruction, Module
from hloscope.parser.errors import ParseError
from hloscope.parser.reader import READER


def expand(modules: list[Module], text: str, path: str) -> None:
    """Add the get-tuple-elements that `%x#i` operands stand for (a no-op when no `#`)."""
    if "#" not in text:
        return
    for module in modules:
        for comp in module.computations:
            if any("#" in o for i in comp.instructions for o in i.operands):
                _expand(comp, text, path)


def _expand(comp: Computation, text: str, path: str) -> None:
    by_name = {i.name: i for i in comp.instructions}
    after: dict[str, list[Instruction]] = {}  # base name -> the elements to put after it
    for instr in comp.instructions:
        for operand in instr.operands:
            if "#" in operand and operand not in by_name:
                _element(operand, instr, by_name, after, text, path)
    if not after:
        return
    ordered: list[Instruction] = []

    def put(i: Instruction) -> None:
        ordered.append(i)
        for element in after.get(i.name, ()):
            put(element)

    for instr in comp.instructions:
        put(instr)
    comp.instructions[:] = ordered
    comp._by_name = None


def _element(ref: str, user: Instruction, by_name: dict[str, Instruction],
             after: dict[str, list[Instruction]], text: str, path: str) -> Instruction | None:
    """The get-tuple-element `ref` (`x#i`, `x#i#j`) names, made and registered once."""
    found = by_name.get(ref)
    if found is not None:
        return found
    base_ref, _, index_text = ref.rpartition("#")
    if not base_ref or not index_text.isdigit():
        raise _error(f"'{ref}': expected an instruction name, '#' and a tuple index", ref, user, text, path)
    base = by_name.get(base_ref) if "#" not in base_ref else _element(base_ref, user, by_name, after, text, path)
    if base is None:  # (an undefined name: validate says so, as for any operand)
        return None
    index = int(index_text)
    shape = base.shape
    if not shape.is_tuple or index >= len(shape.elements):
        raise _error(f"operand '{ref}': {base.name} has shape {base.shape_text}, which has no tuple "
                     f"element {index}", ref, user, text, path)
    element = shape.elements[index]
    gte = Instruction(ref, "get-tuple-element", element.text(), (base.name,), (None,),
                      {"index": str(index)}, None, False, user.line, user.column, user.computation,
                      element, None, READER)
    by_name[ref] = gte
    after.setdefault(base.name, []).append(gte)
    return gte


def _error(message: str, ref: str, user: Instruction, text: str, path: str) -> ParseError:
    """Located at the operand in its user's line."""
    lines = text.split("\n")
    source = lines[user.line - 1] if 0 < user.line <= len(lines) else None
    col = user.column
    if source is not None:
        at = source.find(ref, user.column - 1)
        col = at + 1 if at >= 0 else col
    return ParseError(message, path, user.line, col, source_line=source)
