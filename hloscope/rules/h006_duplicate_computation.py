"""H006 duplicate-computation: the same opcode on the same operands with the same attributes, computed twice."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from hloscope.cost.sharing import in_place
from hloscope.ir import Computation, Instruction
from hloscope.ir.opcodes import async_shorthand
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
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
    """Per-call or side-effecting by its opcode alone (custom calls are asked one by one), or
    one part of an asynchronous op (`slice-start`, `fusion-done`...): each start is a transfer
    of its own that XLA scheduled, not a value computed twice."""
    return opcode in _SKIP or opcode.startswith(_EFFECT_PREFIXES) or async_shorthand(opcode) is not None


def _written_in_place(comp: Computation, instrs: list[Instruction], ctx: RuleContext) -> set[str]:
    """The names of those of `instrs` (of `comp`) whose buffer a user writes into (a loop's
    state, a sort, an in-place update): two equal values are then two buffers XLA keeps
    apart on purpose (its broadcast clones for loop-state initialisers, an iota per sort),
    not one value to compute once. A tuple passes the question on to its users, nested
    tuples too (a tuple's operands come before it, so the walk ends). The users of all of
    them are found together (Computation.users_of: one pass, or the index where built)."""
    written: set[str] = set()
    # name asked after -> the names of `instrs` whose value it holds (itself, or tuples of it)
    asked: dict[str, set[str]] = {i.name: {i.name} for i in instrs}
    while asked:
        users = comp.users_of(asked)
        tuples: dict[str, set[str]] = {}
        for name, holders in asked.items():
            for user in users.get(name, ()):
                if user.opcode in ("while", "sort") or any(
                        user.operands[k] == name for _, k in in_place(user, ctx.module)
                        if k < len(user.operands)):
                    written |= holders
                elif user.opcode == "tuple":
                    tuples.setdefault(user.name, set()).update(holders)
        asked = {t: holders - written for t, holders in tuples.items() if holders - written}
    return written


@register
class DuplicateComputation(ModuleRule):
    """The same opcode on the same operands with the same attributes, computed twice."""

    code = "H006"
    name = "duplicate-computation"
    severity = Severity.INFO
    summary = "identical instructions (same opcode, operands, attributes) computed more than once"

    class Options(RuleOptions):
        min_elements: int = 1024  # smaller duplicates are too cheap to matter

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        # (the module's opcodes never compared, asked once: not per instruction)
        skip = frozenset([op for op in ctx.module.opcodes() if _never_duplicate(op)])
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue  # XLA duplicates cheap ops into fusions on purpose
            yield from self._check_computation(ctx, comp, skip)

    def _check_computation(self, ctx: RuleContext, comp: Computation,
                           skip: frozenset[str]) -> Iterator[Finding]:
        canonical: dict[str, str] = {}  # name -> first equal instruction's name
        # a duplicate that reads an earlier duplicate only follows it (a function called
        # twice repeats each of its ops): one finding per chain, at the duplicate that starts
        # it (its root), its followers listed with it
        root_of: dict[str, str] = {}  # duplicate's name -> its chain's root's name
        chains: dict[str, tuple[Instruction, Instruction, list[Instruction]]] = {}
        # (opcode, shape, operands) first: attributes are compared only on a collision,
        # each colliding one kept with its attribute text but metadata (_told)
        seen: dict[tuple, Instruction | list[tuple[Instruction, object]]] = {}
        attr_keys: dict[int, tuple] = {}  # id(instr) -> _attr_key, split once
        duplicates = canonical.keys()  # (a view: it follows the dict)
        for instr in comp.instructions:
            opcode = instr.opcode
            if opcode in skip or (opcode == "custom-call" and (
                    instr.raw_attr("custom_call_has_side_effect") == "true"
                    or instr.attr("custom_call_target") == "AllocateBuffer")):
                continue  # (AllocateBuffer computes nothing: each call is a buffer of its own)
            operands = instr.operands
            read = None  # the first earlier duplicate it reads, if any
            if canonical and not duplicates.isdisjoint(operands):
                read = next(o for o in operands if o in canonical)
                operands = tuple([canonical.get(o, o) for o in operands])
            key = (opcode, instr.shape_text, operands)
            earlier = seen.setdefault(key, instr)
            if earlier is instr:
                continue  # (the first of its key: a list only on a collision, most have none)
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
            root = root_of.get(read) if read is not None else None
            if root is None:
                root_of[instr.name] = instr.name
                chains[instr.name] = (instr, first, [])
            else:
                root_of[instr.name] = root
                chains[root][2].append(instr)
        if not chains:
            return
        limit = self.options.min_elements
        model_cost = ctx.model.cost
        written = _written_in_place(
            comp, [i for instr, first, _ in chains.values() for i in (instr, first)], ctx)
        for instr, first, followers in chains.values():
            if instr.name in written or first.name in written:
                continue
            big = [i for i in (instr, *followers)
                   if not i.shape.is_array or i.shape.num_elements >= limit]
            if not big:
                continue  # too small to matter, root and followers alike
            cost = model_cost(instr)
            wasted = float(sum([model_cost(i).padded_bytes for i in big]))  # (memoized)
            then = (f"; {len(followers)} op(s) computed from it repeat theirs too"
                    if followers else "")
            evidence = {"first": first.name, "opcode": instr.opcode,
                        "flops": cost.flops, "bytes": cost.padded_bytes}
            if followers:
                evidence["followers"] = [i.name for i in followers]
            yield self.finding(
                ctx, instr,
                f"%{instr.name} recomputes %{first.name} ({instr.opcode} {instr.shape} of "
                f"the same operands){then}",
                evidence=evidence,
                cost={"bytes_wasted": wasted},
                help="Compute the value once and reuse it (in JAX: bind it to a variable "
                     "instead of calling the function twice).",
            )
