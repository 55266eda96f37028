"""The computations XLA's parser makes for async shorthand (`slice-start(...)`): each start
wraps its op in a computation of its own, `async_wrapped` (`.1`, `.2`, ... after the
first), whose parameters `async_param` take the start's operands and whose root, named
after the op, is the op itself with the start's attributes. The start calls it; its
-update and -done continue it (their operand is the start)."""

from __future__ import annotations

from hloscope.ir import Computation, Instruction, Module
from hloscope.ir.opcodes import OPCODES, async_shorthand


class NameUniquer:
    """XLA's NameUniquer: `base`, then `base.1`, `base.2`, ... among the names taken (also
    the strict route's, for nested operands and inline computations)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}  # base -> the suffix to try first (names only grow)

    def take(self, name: str) -> None:
        self.taken.add(name)

    def unique(self, base: str) -> str:
        # (every suffix under `next` is taken already: starting over at 0 each time made a
        # module of 3,000 async slices spend 4 s here)
        n = self.next.get(base, 0)
        name = f"{base}.{n}" if n else base
        while name in self.taken:
            n += 1
            name = f"{base}.{n}"
        self.taken.add(name)
        self.next[base] = n + 1
        return name


def needs_wrapping(module: Module) -> bool:
    """Whether the module holds a shorthand async start (which wrap_async_shorthand wraps)."""
    return any(shorthand_start(op) for op in module.opcodes().difference(OPCODES))


def wrap_async_shorthand(module: Module) -> None:
    """Add the wrapped computation of every shorthand async start (before its caller, as
    XLA orders a module's computations), in the order the starts appear."""
    if not needs_wrapping(module):
        return
    names = NameUniquer()
    out: list[Computation] = []
    for comp in module.computations:
        names.take(comp.name)
        made: list[Computation] = []
        for instr in comp.instructions:
            names.take(instr.name)
            if shorthand_start(instr.opcode):
                made.append(_wrap(instr, comp, names))
        out.extend([*made, comp])
    module.computations[:] = out
    module._by_name = None


def shorthand_start(opcode: str) -> bool:
    """Whether the opcode is an async shorthand's start (`slice-start`), which the parse
    wraps in a computation of its own."""
    parts = async_shorthand(opcode)
    return parts is not None and parts[1] == "start"


def _wrap(start: Instruction, caller: Computation, names: NameUniquer) -> Computation:
    base = async_shorthand(start.opcode)[0]
    comp = Computation(names.unique("async_wrapped"), line=start.line)
    params = []
    for k, operand in enumerate(start.operands):
        shape = start.operand_shapes[k] if k < len(start.operand_shapes) else None
        text = shape or caller[operand].shape_text
        params.append(Instruction(names.unique("async_param"), "parameter", text, literal=str(k),
                                  line=start.line, column=start.column, computation=comp.name,
                                  reader=start.reader))
    output = start.shape.elements[1]
    root = Instruction(names.unique(base), base, output.text(), tuple(p.name for p in params),
                       (None,) * len(params), start._attrs, None, True, start.line, start.column,
                       comp.name, output, start.attr_text, start.reader)
    comp.instructions = [*params, root]
    comp.params = [(p.name, p.shape_text) for p in params]
    comp.result_shape_text = root.shape_text
    start._calls = [comp.name]  # (XLA does not print `calls=` for the shorthand)
    return comp
