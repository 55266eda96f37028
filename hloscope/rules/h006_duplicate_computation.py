"""H006 duplicate-computation: the same opcode on the same operands with the same attributes, computed twice."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from hloscope.ir import Instruction
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register

_SKIP = frozenset({
    "parameter", "constant", "rng", "rng-bit-generator", "rng-get-and-update-state", "infeed",
    "outfeed", "send", "send-done", "recv", "recv-done", "after-all", "tuple",
    "get-tuple-element", "bitcast", "partition-id", "replica-id",
})


_IGNORED_ATTRS = frozenset({"metadata", "backend_config", "frontend_attributes", "sharding",
                            "statistics", "origin", "control-predecessors"})


def _attr_key(instr: Instruction) -> tuple:
    return tuple(sorted((k, v) for k, v in instr.attrs_but_metadata().items()
                         if k not in _IGNORED_ATTRS))


_EFFECT_PREFIXES = ("all-", "collective-", "reduce-scatter", "async-", "copy-start", "copy-done")


_UNTOLD = object()  # an attribute text that cannot be compared without splitting it


def _told(instr: Instruction) -> object:
    """The instruction's attribute text but metadata, or _UNTOLD."""
    text = instr.text_but_metadata()
    return _UNTOLD if text is None else text


@cache
def _never_duplicate(opcode: str) -> bool:
    """Per-call or side-effecting by its opcode alone (custom calls are asked one by one)."""
    return opcode in _SKIP or opcode.startswith(_EFFECT_PREFIXES)


@register
class DuplicateComputation(ModuleRule):
    """The same opcode on the same operands with the same attributes, computed twice."""

    code = "H006"
    name = "duplicate-computation"
    severity = Severity.INFO
    summary = "identical instructions (same opcode, operands, attributes) computed more than once"

    @dataclass(frozen=True)
    class Options:
        min_elements: int = 1024  # smaller duplicates are too cheap to matter

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue  # XLA duplicates cheap ops into fusions on purpose
            canonical: dict[str, str] = {}  # name -> first equal instruction's name
            # (opcode, shape, operands) first: attributes are compared only on a collision,
            # each colliding one kept with its attribute text but metadata (_told)
            seen: dict[tuple, Instruction | list[tuple[Instruction, object]]] = {}
            attr_keys: dict[int, tuple] = {}  # id(instr) -> _attr_key, split once
            for instr in comp.instructions:
                opcode = instr.opcode
                if _never_duplicate(opcode) or (
                        opcode == "custom-call" and instr.raw_attr("custom_call_has_side_effect") == "true"):
                    continue
                operands = instr.operands
                if canonical and not canonical.keys().isdisjoint(operands):  # reads a duplicate
                    operands = tuple([canonical.get(o, o) for o in operands])
                key = (opcode, instr.shape_text, operands)
                earlier = seen.get(key)
                if earlier is None:
                    seen[key] = instr  # (a list only on a collision: most have none)
                    continue
                if not isinstance(earlier, list):
                    earlier = seen[key] = [(earlier, _told(earlier))]
                # (equal attribute texts but metadata: equal attributes, none split)
                text = _told(instr)
                mine = None
                first = None
                for e, theirs_text in earlier:
                    if text is not _UNTOLD and theirs_text == text:
                        first = e
                        break
                    if mine is None:
                        mine = attr_keys[id(instr)] = _attr_key(instr)
                    theirs = attr_keys.get(id(e))
                    if theirs is None:
                        theirs = attr_keys[id(e)] = _attr_key(e)
                    if theirs == mine:
                        first = e
                        break
                if first is None:
                    earlier.append((instr, text))
                    continue
                canonical[instr.name] = canonical.get(first.name, first.name)
                if instr.shape.is_array and instr.shape.num_elements < self.options.min_elements:
                    continue
                cost = ctx.model.cost(instr)
                yield self.finding(
                    ctx, instr,
                    f"%{instr.name} recomputes %{first.name} ({instr.opcode} {instr.shape} of "
                    f"the same operands)",
                    evidence={"first": first.name, "opcode": instr.opcode,
                              "flops": cost.flops, "bytes": cost.padded_bytes},
                    cost={"bytes_wasted": float(cost.padded_bytes)},
                    help="Compute the value once and reuse it (in JAX: bind it to a variable "
                         "instead of calling the function twice).",
                )
