"""H004 split-dot: dots that share one operand and could be one wider matmul; or more dots than expected."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from hloscope.cost.aggregate import parse_op_name
from hloscope.cost.flops import ELEMENTWISE
from hloscope.ir import Instruction
from hloscope.rules.base import MATMUL, Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import contains_matmul, matmul_unit
from hloscope.rules.registry import register
from hloscope.source import source_of


def _independent(users: list[Instruction], instructions: list[Instruction],
                 positions: dict[str, int]) -> list[Instruction]:
    """The matmuls of a group that no other kept one feeds, in order: a matmul that reads
    another's result (the next layer's) cannot be merged with it. XLA prints each
    instruction after its operands, so one walk forward over the computation from the first
    matmul to the last, carrying what the kept ones feed, finds them (a walk back from each
    matmul cost a layer stack's length per layer)."""
    at = {positions[u.name]: u for u in users}
    kept: list[Instruction] = []
    reached: set[str] = set()  # the kept matmuls and everything they feed so far
    for k in range(min(at), max(at) + 1):
        instr = instructions[k]
        if reached and not reached.isdisjoint(instr.operands):
            reached.add(instr.name)
        elif k in at:
            kept.append(instr)
            reached.add(instr.name)
    return kept


def _size(comp, name: str) -> int:
    instr = comp.by_name.get(name)
    return instr.shape.logical_bytes if instr is not None else 0


# Ops that carry a value to a matmul keeping every element (a norm's scale, a cast, a
# relayout); a broadcast does not: a statistic broadcast into the activation is not what the
# matmul multiplies.
_CARRY = ELEMENTWISE | frozenset({"bitcast", "copy", "transpose", "reshape"})


def _role(module, comp, user: Instruction, operand: str) -> tuple | None:
    """How `operand` enters the matmul `user` is (or fuses): (side, its contracting dims or
    the convolution's dim_labels, the shape of the matmul's other input); None when it does
    not reach a matmul input keeping its elements. `user` is a matmul (two operands at least:
    the parser holds dot and convolution to that) or a fusion calling one (contains_matmul)."""
    if user.opcode in MATMUL:
        side = user.operands.index(operand)
        other = comp.by_name[user.operands[1 - side]]
        return _dims(user, side) + (str(other.shape), _sums_rows(user, comp))
    callee = module.by_name[user.called_computations[0]]
    number = user.operands.index(operand)
    param = next((i for i in callee.instructions if i.opcode == "parameter"
                  and i.parameter_number == number), None)
    if param is None:
        return None
    users = callee.users()  # (kept: a fusion's other shared operands ask it again)
    elements = param.shape.num_elements if param.shape.is_array else -1
    frontier, seen = [param], {param.name}
    while frontier:  # (forward from the parameter through ops that keep its elements)
        value = frontier.pop()
        for u in users.get(value.name, []):
            if u.opcode in MATMUL and value.name in u.operands[:2]:
                side = u.operands.index(value.name)
                other = _traced_input(callee, u.operands[1 - side])
                return _dims(u, side) + (other, _sums_rows(u, callee))
            if (u.opcode in _CARRY or u.opcode == "fusion") and u.name not in seen \
                    and u.shape.is_array and u.shape.num_elements == elements:
                # (a fusion nested in the matmul's, a norm say, keeping the elements)
                seen.add(u.name)
                frontier.append(u)
    return None


def _dims(matmul: Instruction, side: int) -> tuple:
    if matmul.opcode == "convolution":  # (the inputs' labels: the output's layout is free)
        return (side, str(matmul.attrs.get("dim_labels", "")).split("->")[0])
    key = "lhs_contracting_dims" if side == 0 else "rhs_contracting_dims"
    return (side, str(matmul.attrs.get(key, "")))


def _sums_rows(matmul: Instruction, comp) -> bool:
    """Neither input contracted over its last (feature) dimension: x^T g, a sum over the
    batch's rows (and sequence, experts' slots), as a weight gradient is. A forward projection
    contracts its activation's features, the last dimension. (A convolution's labels, as
    TPU fusions print dots, number the operand after XLA's reshapes: not judged here; JAX's
    op_name tells those apart, _backward.)"""
    if matmul.opcode != "dot":
        return False
    for side, key in enumerate(("lhs_contracting_dims", "rhs_contracting_dims")):
        dims = str(matmul.attrs.get(key, "")).strip("{}").split(",")
        if str(comp.by_name[matmul.operands[side]].shape.rank - 1) in dims:
            return False
    return True


def _traced_input(callee, name: str) -> str:
    """The shape of a fused matmul's other input: of the fusion parameter it comes from
    (through carrying ops: the weight as stored), else of the value inside the fusion."""
    value = callee.by_name[name]
    while value.operands and (value.opcode in _CARRY or (
            value.opcode == "fusion" and len(value.operands) == 1)):
        value = callee.by_name[value.operands[0]]  # (operands come first: the walk ends)
    return str((value if value.opcode == "parameter" else callee.by_name[name]).shape)


def _gated(module, comp, members: list[Instruction]) -> bool:
    """Whether two members' results meet in an elementwise op (a gate: silu(x w1) * (x w3),
    gelu(a) * b), in the computation or inside the fusion that reads them. XLA fuses such a
    gate into the second matmul's epilogue; one matmul over the stacked weights has to write
    both halves out to split them, and XLA's own estimates make it slower (measured in the
    rule's doc), so such pairs are not reported. Results that meet in a matmul (attention's
    q and k) are not a gate."""
    return _meet(module, comp, {m.name: m.name for m in members})


def _meet(module, comp, origin: dict[str, str]) -> bool:
    """Whether two of the values `origin` names (value -> the member it carries) reach one
    elementwise op of `comp`, in order, through ops that keep their elements (not through a
    matmul), or meet inside a fusion that reads them; a fusion with no matmul inside, nested
    fusions included, carries its operand too (silu(a) in a fusion of its own). Callees are
    defined before their callers (the parser holds modules to that), so the walk into nested
    fusions ends. Only the users of what is carried are looked at, in program order (an op
    comes after its operands, so each is judged with all it reads already known): a walk over
    the whole computation per pair cost a 40k-op module a second."""
    origin = dict(origin)
    positions, users = comp.positions(), comp.users()
    todo = sorted({positions[u.name] for name in origin for u in users.get(name, ())})
    seen = set(todo)
    while todo:
        i = comp.instructions[heapq.heappop(todo)]
        if i.name in origin:
            continue
        came = {origin[o] for o in i.operands if o in origin}
        if i.opcode in MATMUL:
            continue
        if len(came) >= 2:
            if i.opcode in ELEMENTWISE or _meet_inside(module, i, origin):
                return True
        elif (i.opcode in _CARRY and i.shape.is_array) or (
                i.opcode == "fusion" and not _has_matmul(module, i)):
            origin[i.name] = next(iter(came))
            for u in users.get(i.name, ()):
                k = positions[u.name]
                if k not in seen:
                    seen.add(k)
                    heapq.heappush(todo, k)
    return False


def _has_matmul(module, fusion: Instruction) -> bool:
    """Whether a fusion does more than carry its operand: a matmul inside, in a nested
    fusion too (a fusion with no `calls=`, which the lenient parser takes, is not judged: it
    does not carry)."""
    if not fusion.called_computations:
        return True
    return any(i.opcode in MATMUL or (i.opcode == "fusion" and _has_matmul(module, i))
               for i in module.by_name[fusion.called_computations[0]].instructions)


def _meet_inside(module, fusion: Instruction, origin: dict[str, str]) -> bool:
    """Inside a fusion reading several members: do two of them meet (_meet), in nested
    fusions too?"""
    if fusion.opcode != "fusion" or not fusion.called_computations:
        return False
    callee = module.by_name[fusion.called_computations[0]]
    seeds = {p.name: origin[fusion.operands[p.parameter_number]] for p in callee.instructions
             if p.opcode == "parameter" and p.parameter_number < len(fusion.operands)
             and fusion.operands[p.parameter_number] in origin}
    return _meet(module, callee, seeds)


def _backward(ctx: RuleContext, members: list[Instruction]) -> bool:
    """All members are JAX's transpose of the forward (op_name `transpose(jvp(...))`): weight
    gradients sharing an activation are the forward pair's own transpose; merging is the
    forward's fix, reported there."""
    return all(parse_op_name(source_of(u, ctx.module).op_name)[0] == "backward" for u in members)


@register
class SplitDot(ModuleRule):
    """Dots that share one operand and could be one wider matmul; or more dots than expected."""

    code = "H004"
    name = "split-dot"
    severity = Severity.INFO
    summary = "several matmuls share an operand (e.g. separate Q/K/V projections), or more than expected"

    class Options(RuleOptions):
        min_group: int = 2
        expect: Mapping[str, int] = MappingProxyType({})  # {"dot": 2}: at most 2 matmuls

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        yield from self._shared_operand(ctx)
        yield from self._over_budget(ctx)

    def _shared_operand(self, ctx: RuleContext) -> Iterator[Finding]:
        for comp in ctx.module.computations:
            if comp.name in ctx.fused:
                continue
            groups: dict[str, list[Instruction]] = defaultdict(list)
            for instr in comp.instructions:
                if contains_matmul(instr, ctx):
                    for operand in dict.fromkeys(instr.operands):
                        groups[operand].append(instr)
            if not groups or all(len(u) < self.options.min_group for u in groups.values()):
                continue
            reported: set[str] = set()  # matmuls already in a reported group
            positions = comp.positions()
            # the largest shared operand first: the activation, not a norm statistic
            shared = [kv for kv in groups.items() if len(kv[1]) >= self.options.min_group]
            for operand, users in sorted(shared, key=lambda kv: -_size(comp, kv[0])):
                src = comp.by_name[operand]
                if src.shape.rank < 2:  # (a vector or scalar: no projection; a tuple has no dims)
                    continue
                if reported and reported.issuperset([u.name for u in users]):
                    continue  # (each group of these matmuls would be one reported already)
                by_role: dict[tuple, list[Instruction]] = defaultdict(list)
                for u in users:  # same side, same contracted dims, same-shaped other input
                    role = _role(ctx.module, comp, u, operand)
                    if role is not None:
                        by_role[role].append(u)
                for role, members in by_role.items():
                    if len(members) < self.options.min_group:
                        continue
                    # drop the members others feed (the next layer's, a matmul whose fused
                    # epilogue reads the others' results), then judge the rest
                    members = _independent(members, comp.instructions, positions)
                    if len(members) < self.options.min_group:
                        continue
                    names_set = {u.name for u in members}
                    if names_set <= reported:
                        continue  # the same matmuls, reached through another shared operand
                    reported |= names_set
                    if role[3] or _backward(ctx, members) or _gated(
                            ctx.module, comp, members):
                        continue
                    yield self._finding(ctx, members, operand, src, role)

    def _finding(self, ctx: RuleContext, users: list[Instruction], operand: str, src, role) -> Finding:
        first = users[0]
        names = ", ".join(f"%{u.name}" for u in users)
        return self.finding(
            ctx, first,
            f"{len(users)} matmuls ({names}) all multiply %{operand} {src.shape} by "
            f"same-shaped weights ({role[2]}), contracting the same dimensions: one matmul on "
            f"the stacked weights would read %{operand} once",
            evidence={"shared_operand": operand, "matmuls": [u.name for u in users],
                      "weights": role[2], "contracting": role[1]},
            help="Store the weights stacked on a new axis (one W_qkv of shape [d, 3, d], "
                 "initialised and kept so; shard its last axis as the separate weights were) and "
                 "index the result: the shared operand is read once, not once per matmul. Do not "
                 "concatenate them along a sharded output dimension ([W_q | W_k | W_v] split "
                 "after a model-sharded matmul moves data between chips), nor inside the jitted "
                 "step (a copy of the weights every step). It saves memory traffic; the time on "
                 f"{matmul_unit(ctx)} barely moves (see the rule's doc for XLA's own figures).",
        )

    def _over_budget(self, ctx: RuleContext) -> Iterator[Finding]:
        for opcode, limit in self.options.expect.items():
            found = ctx.module.of_opcode(opcode)
            if len(found) > limit:
                extra = found[limit]
                yield self.finding(
                    ctx, extra,
                    f"module has {len(found)} {opcode} instructions, expected at most {limit}; "
                    f"first extra: %{extra.name}",
                    evidence={"opcode": opcode, "count": len(found), "expected": limit},
                    help="Check whether a projection was split or a matmul duplicated.",
                )
