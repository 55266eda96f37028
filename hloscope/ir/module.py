"""A module: computations, the entry, header attributes and debug tables."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TypeVar

from hloscope.ir.computation import Computation
from hloscope.ir.instruction import Instruction

_T = TypeVar("_T")


class Module:
    # (a plain class, not a dataclass: every command imports it; see hloscope.ir.records.
    # Equal only to itself, as a dataclass with eq=False)
    __slots__ = ("name", "attrs", "computations", "file_names", "function_names", "file_locations",
                 "stack_frames", "path", "line", "_by_name", "_entry", "_fused", "_by_opcode", "_facts")
    name: str
    attrs: dict[str, str]
    computations: list[Computation]
    file_names: dict[int, str]
    function_names: dict[int, str]
    file_locations: dict[int, dict[str, object]]
    stack_frames: dict[int, dict[str, object]]
    path: str
    line: int
    _by_name: dict[str, Computation] | None
    _entry: tuple[int, Computation | None] | None  # (len(computations), entry)
    _fused: tuple[int, frozenset[str]] | None  # (len(computations), names)
    # (len(computations), {opcode: its instructions in module order})
    _by_opcode: tuple[int, dict[str, list[Instruction]]] | None
    _facts: tuple[int, dict[str, object]] | None  # (len(computations), fact())

    def __init__(self, name: str, attrs: dict[str, str] | None = None,
                 computations: list[Computation] | None = None,
                 file_names: dict[int, str] | None = None,
                 function_names: dict[int, str] | None = None,
                 file_locations: dict[int, dict[str, object]] | None = None,
                 stack_frames: dict[int, dict[str, object]] | None = None, path: str = "<string>",
                 line: int = 1, _by_name: dict[str, Computation] | None = None,
                 _entry: tuple[int, Computation | None] | None = None,
                 _fused: tuple[int, frozenset[str]] | None = None,
                 _by_opcode: tuple[int, dict[str, list[Instruction]]] | None = None) -> None:
        self.name = name
        self.attrs = {} if attrs is None else attrs
        self.computations = [] if computations is None else computations
        self.file_names = {} if file_names is None else file_names
        self.function_names = {} if function_names is None else function_names
        self.file_locations = {} if file_locations is None else file_locations
        self.stack_frames = {} if stack_frames is None else stack_frames
        self.path = path
        self.line = line
        self._by_name = _by_name
        self._entry = _entry
        self._fused = _fused
        self._by_opcode = _by_opcode
        self._facts = None

    @property
    def by_name(self) -> dict[str, Computation]:
        if self._by_name is None or len(self._by_name) != len(self.computations):
            self._by_name = {c.name: c for c in self.computations}
        return self._by_name

    def __getitem__(self, name: str) -> Computation:
        return self.by_name[name]

    @property
    def entry(self) -> Computation | None:
        if self._entry is None or self._entry[0] != len(self.computations):
            found = next((c for c in self.computations if c.is_entry), None)
            # XLA takes the last computation when none is marked ENTRY.
            self._entry = (len(self.computations),
                           found or (self.computations[-1] if self.computations else None))
        return self._entry[1]

    def instructions(self) -> list[Instruction]:
        return [i for c in self.computations for i in c.instructions]

    @property
    def is_scheduled(self) -> bool:
        """The header's `is_scheduled=true`: each computation lists its instructions in the
        order they run (a compiled module)."""
        return str(self.attrs.get("is_scheduled")).lower() == "true"

    @property
    def input_output_alias(self) -> str:
        """The header's `input_output_alias={...}` text (donated parameters), or ''."""
        return str(self.attrs.get("input_output_alias") or "")

    def opcodes(self) -> frozenset[str]:
        """The distinct opcodes of its instructions (for questions about the module as a
        whole, asked of a few dozen opcodes, not every instruction): the keys of the opcode
        index (`of_opcode`)."""
        return frozenset(self._opcode_index())

    def of_opcode(self, opcode: str) -> list[Instruction]:
        """Its instructions of one opcode, in module order (computations in order, each's
        instructions in order). Not to be changed."""
        return self._opcode_index().get(opcode, [])

    def of_opcodes(self, opcodes: Collection[str]) -> list[Instruction]:
        """Its instructions of any of these opcodes, in module order."""
        index = self._opcode_index()
        found = [index[op] for op in dict.fromkeys(opcodes) if op in index]
        if len(found) < 2:
            return list(found[0]) if found else []
        # (each opcode's list merged by computation and line: a parsed computation's
        # instructions are in line order; where two share a line, a computation the parse
        # made, they are taken from the computations in order instead)
        holders = {i.computation for each in found for i in each}
        order = {c.name: k for k, c in enumerate(self.computations) if c.name in holders}
        merged = sorted([i for each in found for i in each], key=lambda i: (order[i.computation], i.line))
        if all(a.line != b.line or a.computation != b.computation for a, b in zip(merged, merged[1:])):
            return merged
        wanted = frozenset(opcodes)
        return [i for c in self.computations if c.name in holders
                for i in c.instructions if i.opcode in wanted]

    def _opcode_index(self) -> dict[str, list[Instruction]]:
        """{opcode: its instructions in module order}, built in one pass over the module and
        kept per set of computations (the IR is not edited after parsing; the parse asks once
        its tuple elements are expanded, then wraps async shorthand in computations of their
        own): the whole-module questions of the rules and analyses (the fused computations,
        the collectives, the loops, the matmuls, the instruction rules' targets) read it
        instead of walking every instruction each."""
        kept = self._by_opcode
        if kept is None or kept[0] != len(self.computations):
            index: dict[str, list[Instruction]] = {}
            for c in self.computations:
                for i in c.instructions:
                    found = index.get(i.opcode)
                    if found is None:
                        index[i.opcode] = [i]
                    else:
                        found.append(i)
            kept = self._by_opcode = (len(self.computations), index)
        return kept[1]

    def fact(self, key: str, make: Callable[[Module], _T]) -> _T:
        """`make(self)`, made once and kept under `key` per set of computations (as the
        opcode index is): a question about the whole module that several analyses of one
        command ask (its platform, whether its layouts are tiled), each a pass over every
        instruction."""
        kept = self._facts
        if kept is None or kept[0] != len(self.computations):
            kept = self._facts = (len(self.computations), {})
        facts = kept[1]
        if key not in facts:
            facts[key] = make(self)
        return facts[key]  # type: ignore[return-value]

    def control_flow_computations(self) -> list[Computation]:
        """The entry and the computations its loops, calls and conditionals run, each once,
        in the order a depth-first walk from the entry reaches them (never a fusion's, a
        reducer's or a comparator's)."""
        if self.entry is None:
            return []
        out: list[Computation] = []
        seen = {self.entry.name}
        todo = [self.entry]
        while todo:
            comp = todo.pop()
            out.append(comp)
            for i in comp.instructions:
                if i.opcode in ("while", "call", "conditional"):
                    for name in i.called_computations:
                        callee = self.by_name.get(name)
                        if callee is not None and name not in seen:
                            seen.add(name)
                            todo.append(callee)
        return out

    def fusion_computations(self) -> frozenset[str]:
        """Names of computations called by fusion instructions (computed once per
        set of computations: the IR is not edited after parsing)."""
        if self._fused is None or self._fused[0] != len(self.computations):
            names = frozenset(name for i in self.of_opcode("fusion") for name in i.calls())
            self._fused = (len(self.computations), names)
        return self._fused[1]

    def __repr__(self) -> str:
        return f"<Module {self.name} ({len(self.computations)} computations)>"
