"""A computation: a named list of instructions with one ROOT."""

from __future__ import annotations

from dataclasses import dataclass, field

from hloscope.ir.instruction import Instruction


@dataclass(eq=False, slots=True)
class Computation:
    name: str
    is_entry: bool = False
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, shape text)
    result_shape_text: str | None = None
    instructions: list[Instruction] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)
    line: int = 0
    _by_name: dict[str, Instruction] | None = None

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

    def users_by_name(self) -> dict[str, list[str]]:
        """Each instruction's users, by name (built anew: callers keep it while they need it)."""
        users: dict[str, list[str]] = {}
        for instr in self.instructions:
            for o in instr.operands:
                users.setdefault(o, []).append(instr.name)
        return users

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
