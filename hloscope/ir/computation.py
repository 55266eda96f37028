"""A computation: a named list of instructions with one ROOT."""

from __future__ import annotations

from collections.abc import Collection

from hloscope.ir.instruction import Instruction


class Computation:
    # (a plain class, not a dataclass: every command imports it; see hloscope.ir.records.
    # Equal only to itself, as a dataclass with eq=False)
    __slots__ = ("name", "is_entry", "params", "result_shape_text", "instructions", "attrs", "line",
                 "structure", "_by_name", "_users", "_positions")
    name: str
    is_entry: bool
    params: list[tuple[str, str]]  # (name, shape text)
    result_shape_text: str | None
    instructions: list[Instruction]
    attrs: dict[str, str]
    line: int
    # A digest of what its instructions are, their names and metadata apart (the compiled
    # checks' `structure.rs`), when the parse had one: computations with equal digests cost
    # the same (hloscope.cost.ops). None: not digested, or holding an op whose cost is not
    # its structure's alone.
    structure: tuple[int, int] | None
    _by_name: dict[str, Instruction] | None
    # (derived indexes, built on first use and rebuilt when instructions were added since;
    # left out of pickles: the cache keeps the IR, not what analyses asked of it)
    _users: tuple[int, dict[str, list[Instruction]]] | None
    _positions: tuple[int, dict[str, int]] | None

    def __init__(self, name: str, is_entry: bool = False, params: list[tuple[str, str]] | None = None,
                 result_shape_text: str | None = None, instructions: list[Instruction] | None = None,
                 attrs: dict[str, str] | None = None, line: int = 0,
                 structure: tuple[int, int] | None = None,
                 _by_name: dict[str, Instruction] | None = None,
                 _users: tuple[int, dict[str, list[Instruction]]] | None = None,
                 _positions: tuple[int, dict[str, int]] | None = None) -> None:
        self.name = name
        self.is_entry = is_entry
        self.params = [] if params is None else params
        self.result_shape_text = result_shape_text
        self.instructions = [] if instructions is None else instructions
        self.attrs = {} if attrs is None else attrs
        self.line = line
        self.structure = structure
        self._by_name = _by_name
        self._users = _users
        self._positions = _positions

    def __getitem__(self, name: str) -> Instruction:
        return self.by_name[name]

    def __contains__(self, name: str) -> bool:
        return name in self.by_name

    def __iter__(self):
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def __bool__(self) -> bool:  # a computation is a thing, even an empty one
        return True

    @property
    def by_name(self) -> dict[str, Instruction]:
        if self._by_name is None:
            self._by_name = {i.name: i for i in self.instructions}
        return self._by_name

    def may_contain(self, fragment: str) -> list[Instruction]:
        """Its instructions whose attributes may hold `fragment` (Instruction.may_contain,
        the usual case tested inline: a large dump asks this of tens of thousands)."""
        return [i for i in self.instructions
                if (fragment in i.attr_text if i.attr_text else i.may_contain(fragment))]

    def users(self) -> dict[str, list[Instruction]]:
        """Each instruction's users, by its name (a user once per operand it reads the value
        as), kept: the rules and analyses of one run share it. Not to be changed."""
        n = len(self.instructions)
        if self._users is None or self._users[0] != n:
            users: dict[str, list[Instruction]] = {}
            for instr in self.instructions:
                for o in instr.operands:
                    users.setdefault(o, []).append(instr)
            self._users = (n, users)
        return self._users[1]

    def users_of(self, names: Collection[str]) -> dict[str, list[Instruction]]:
        """The users of just these instructions, as `users()` gives them: read from it when
        it is built already, else found in one pass that keeps nothing (an analysis that
        asks after a few collectives need not index a 40,000-instruction computation)."""
        n = len(self.instructions)
        if self._users is not None and self._users[0] == n:
            every = self._users[1]
            return {name: every[name] for name in names if name in every}
        wanted = frozenset(names)
        out: dict[str, list[Instruction]] = {}
        if not wanted:
            return out
        for instr in self.instructions:
            operands = instr.operands
            if not wanted.isdisjoint(operands):
                for o in operands:
                    if o in wanted:
                        out.setdefault(o, []).append(instr)
        return out

    def positions(self) -> dict[str, int]:
        """Each instruction's position in the computation, by name (kept, as `users`)."""
        n = len(self.instructions)
        if self._positions is None or self._positions[0] != n:
            self._positions = (n, {instr.name: k for k, instr in enumerate(self.instructions)})
        return self._positions[1]

    def __getstate__(self) -> dict:
        return {k: getattr(self, k) for k in _KEPT}

    def __setstate__(self, state: dict) -> None:
        for k in (*_DERIVED, "structure"):
            setattr(self, k, None)
        for k, v in state.items():
            setattr(self, k, v)

    @property
    def root(self) -> Instruction | None:
        for instr in reversed(self.instructions):
            if instr.is_root:
                return instr
        # XLA takes the last instruction when none is marked ROOT.
        return self.instructions[-1] if self.instructions else None

    @property
    def parameters(self) -> list[Instruction]:
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda i: i.parameter_number or 0)

    def __repr__(self) -> str:
        return f"<Computation {self.name} ({len(self.instructions)} instructions)>"


_DERIVED = ("_by_name", "_users", "_positions")
_KEPT = tuple(k for k in Computation.__slots__ if k not in _DERIVED)
