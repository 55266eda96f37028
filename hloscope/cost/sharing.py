"""When XLA's buffer assignment writes a result into an operand's buffer (hloscope.cost.liveness
uses these rules): in place (dynamic-update-slice, scatter, an async all-reduce's start, and each
fusion output that is one, into the operand its fused parameter names), and operand sharing (XLA's
CanShareOperandBufferWithUser: an elementwise op or all-reduce on an operand of its shape, a
loop/input fusion whose fused parameter feeds only elementwise ops), and the operands a TPU
op's backend_config names in `aliasing_operands` (the TPU compiler's own in-place groups)."""

from __future__ import annotations

import bisect
import re

from hloscope.cost.flops import ELEMENTWISE, TRANSCENDENTAL
from hloscope.ir import Computation, Instruction, Module
from hloscope.ir.shape import per_shape

UPDATES = frozenset({"dynamic-update-slice", "scatter"})
_ELEMENTWISE = ELEMENTWISE | TRANSCENDENTAL
SHARE_OPS = _ELEMENTWISE | {"all-reduce"}  # (liveness: the opcodes that may share)
_INSIDE = _ELEMENTWISE | {"copy"}  # (XLA's IsElementwiseOnOperand: a bitcast is not)


def shareable_operands(instr: Instruction, operands: list[Instruction], module: Module,
                       gpu: bool = False) -> list[int]:
    """Operand numbers whose buffer `instr`'s result may take over, by XLA's rule: the op is
    elementwise (or an all-reduce) on an operand of the result's shape, or a loop/input fusion
    whose fused parameter only feeds elementwise ops of its shape; on a GPU, a fusion by the
    GPU compiler's own rule (gpu_fusion_shares)."""
    shape = instr.shape
    if not shape.is_array:
        return []
    dims = shape.dims
    if instr.may_contain('"aliasing_operands"'):
        # the TPU compiler states, op by op, which operands the result may be written
        # into (its buffer assignment follows that list, empty or not)
        return [k for k in backend_aliases(instr).get(0, ()) if k < len(operands)]
    if gpu and instr.opcode == "fusion":
        return [k for k, o in enumerate(operands) if gpu_fusion_shares(instr, k, o, module)]
    share_op = instr.opcode in SHARE_OPS
    if not share_op and instr.opcode != "fusion":
        return []  # (most ops: asked of every instruction a walk makes)
    same = [k for k, o in enumerate(operands) if o.shape.is_array and o.shape.dims == dims]
    if share_op:
        return same
    calls = instr.calls()
    if not same or not calls:
        return []
    kind = str(instr.attr("kind") or "")
    if kind not in ("kLoop", "kInput"):
        return []
    callee = module.by_name.get(calls[0])
    if callee is None:
        return []
    params = {p.parameter_number: p for p in callee.instructions if p.opcode == "parameter"}
    users = callee.users()
    return [k for k in same if k in params and _elementwise_uses(params[k], users, dims)]


def gpu_fusion_shares(fusion: Instruction, k: int, operand: Instruction, module: Module,
                      index: int | None = None) -> bool:
    """XLA's GPU rule for a fusion writing its result (element `index` of a multi-output
    fusion's tuple) into operand k's buffer (FusionCanShareBufferHint): the operand has the
    result's element count and element size (a bitcast apart is fine), and every path from
    the fused parameter is elementwise on it (a copy is not), a bitcast, or a reduction the
    emitter computes first, and reaches that result; a non-elementwise result reached
    together with another output does not share."""
    out = fusion.shape if index is None else fusion.shape.elements[index]
    shape = operand.shape
    if not (out.is_array and shape.is_array) or out.num_elements != shape.num_elements \
            or out.element_bits != shape.element_bits:
        return False
    calls = fusion.calls()
    callee = module.by_name.get(calls[0]) if calls else None
    root = callee.root if callee is not None else None
    if root is None or (root.opcode == "tuple") != (index is not None):
        return False
    output = callee.by_name.get(root.operands[index]) if index is not None else root
    param = next((p for p in callee.instructions if p.opcode == "parameter"
                  and p.parameter_number == k), None)
    if param is None or output is None:
        return False
    target = _through_bitcasts(callee, output) if output.opcode == "bitcast" else output
    hero = _hero(callee, root)
    users = callee.users()
    seen, queue, found = {param.name}, [param], False
    while queue:
        here = queue.pop()
        found = found or here is output
        if here is hero:
            continue
        for u in users.get(here.name, ()):
            if u.name not in seen:
                seen.add(u.name)
                queue.append(u)
            at = u.operands.index(here.name)
            if u.opcode in ("bitcast", "tuple") or u is hero:
                continue
            if u.opcode == "dynamic-update-slice" and (at == 0 or u is target):
                continue  # (in place on its first operand; the update itself, at the root)
            if u.opcode not in _ELEMENTWISE:
                return False
    if index is not None and target.opcode not in _ELEMENTWISE:
        others = [o for o in root.operands if o != output.name]
        if any(o in seen for o in others):
            return False
    return found


def _hero(callee: Computation, root: Instruction) -> Instruction | None:
    """The reduction a reduction fusion's emitter computes first (its root's, or the first
    reduce among a multi-output fusion's outputs, through bitcasts)."""
    outputs = [callee.by_name.get(o) for o in root.operands] if root.opcode == "tuple" else [root]
    for out in outputs:
        out = _through_bitcasts(callee, out)
        if out is not None and out.opcode == "reduce":
            return out
    return None


def _elementwise_uses(param: Instruction, users: dict[str, list[Instruction]], dims) -> bool:
    """XLA's AreTransitiveUsesElementwiseOrTuple: every use of the fused parameter, and
    every use of those, down to the root, is elementwise (of its shape) or a tuple."""
    seen, stack = {param.name}, [param]
    if not users.get(param.name):
        return False
    while stack:
        for u in users.get(stack.pop().name, ()):
            if u.opcode != "tuple" and not (u.opcode in _INSIDE and u.shape.is_array
                                            and u.shape.dims == dims):
                return False
            if u.name not in seen:
                seen.add(u.name)
                stack.append(u)
    return True


_ALIASING_GROUP = re.compile(r'\{"indices":\[([^\]]*)\]\}')


def backend_aliases(instr: Instruction) -> dict[int, list[int]]:
    """Result leaf -> operand numbers the TPU compiler lets it share a buffer with: its
    backend_config's `aliasing_operands` groups, where numbers below the operand count are
    operands and the rest result leaves (operand count + leaf). Groups naming several result
    leaves (an async fusion's nested tuples) are left out."""
    if not instr.may_contain("aliasing_operands"):
        return {}
    key = '"aliasing_operands"'
    raw = instr.attr_text
    at = raw.find(key) if instr._attrs is None else -1
    if at < 0 or raw.find(key, at + 1) >= 0:
        raw = instr.raw_attr("backend_config") or ""
        at = raw.find(key)
    # (else read in the unsplit list: a quote unescaped is no other value's, only the JSON
    # of a backend_config has the key so, and seeking that value cost a walk over the list)
    if at < 0 or raw.startswith('"aliasing_operands":{"lists":[]', at):
        return {}
    n = len(instr.operands)
    out: dict[int, list[int]] = {}
    end = raw.find("}]}", at)  # (the last group's brace, the list's bracket, the object's)
    if end < 0:
        return {}
    for group in _ALIASING_GROUP.findall(raw[at:end + 1]):
        numbers = [int(x) for x in re.findall(r"\d+", group)]
        results = [x - n for x in numbers if x >= n]
        if len(results) == 1:
            out.setdefault(results[0], []).extend(x for x in numbers if x < n)
    return out


def in_place(instr: Instruction, module: Module) -> list[tuple[int, int]]:
    """(result leaf, operand number) pairs XLA updates in place: a dynamic-update-slice or
    scatter writes into its first operand; a fusion does so for each output that is one
    (through bitcasts), into the fusion operand its fused parameter names."""
    if instr.opcode in UPDATES:
        return [(0, 0)] if not instr.shape.is_tuple else []
    if instr.opcode == "all-reduce-start" and '"NVSHMEM"' not in (instr.raw_attr("backend_config") or ""):
        # (XLA's in-place pairs: operand k into result leaf k, or the one result; NVSHMEM's
        # one-shot algorithm needs separate buffers)
        if len(instr.operands) == 1:
            return [(0, 0)]
        return list(zip(leaf_offsets(instr.shape)[:-1], range(len(instr.operands))))
    calls = instr.calls() if instr.opcode == "fusion" else ()
    if not calls:
        return []
    callee = module.by_name.get(calls[0])
    root = callee.root if callee is not None else None
    if root is None or (root.opcode == "tuple" and not any(
            i.opcode in UPDATES for i in callee.instructions)):
        return []  # (no update among a multi-output fusion's ops: its outputs not looked up)
    outputs = ([callee.by_name.get(o) for o in root.operands] if root.opcode == "tuple" else [root])
    offsets = leaf_offsets(instr.shape) if root.opcode == "tuple" else [0, 1]
    pairs = []
    for e, out in enumerate(outputs):
        out = _through_bitcasts(callee, out)
        if out is None or out.opcode not in UPDATES or not out.operands or e + 1 >= len(offsets) \
                or offsets[e + 1] - offsets[e] != 1:
            continue
        target = _through_bitcasts(callee, callee.by_name.get(out.operands[0]))
        if target is not None and target.opcode == "parameter":
            pairs.append((offsets[e], target.parameter_number or 0))
    return pairs


def _through_bitcasts(comp: Computation, instr: Instruction | None) -> Instruction | None:
    while instr is not None and instr.opcode == "bitcast" and instr.operands:
        instr = comp.by_name.get(instr.operands[0])
    return instr


@per_shape
def leaf_offsets(shape) -> list[int]:
    """Where each tuple element's array leaves start among the shape's, then their count
    (memoized per shape object: a module's alias list asks it once per aliased output, and
    a big training step's output tuple has thousands; the list is shared, not to be changed)."""
    out = [0]
    for e in shape.elements:
        out.append(out[-1] + leaf_count(e))
    return out


@per_shape
def leaf_count(shape) -> int:
    """The shape's array leaves (each a buffer)."""
    return sum(1 for leaf in shape.leaves() if leaf.is_array)


_ALIAS = re.compile(r"\{([\d,\s]*)\}:\s*\((\d+),\s*\{([\d,\s]*)\}")


def alias_pairs(raw: str | None) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]]:
    """(output index, operand or parameter number, its index) of an aliasing list as XLA
    prints it: a module's `input_output_alias={ {0}: (0, {}, may-alias) }`, a fusion's
    `output_to_operand_aliasing={{}: (1, {})}`."""
    def path(text: str) -> tuple[int, ...]:
        return tuple(int(x) for x in text.replace(" ", "").split(",") if x)

    return [(path(o), int(p), path(i)) for o, p, i in _ALIAS.findall(raw or "")]


def leaf_offset(shape, path: tuple[int, ...]) -> int | None:
    """The position among a shape's array leaves of the (first) leaf at a tuple index."""
    offset = 0
    for k in path:
        if not shape.is_tuple or k >= len(shape.elements):
            return None
        offset += leaf_offsets(shape)[k]
        shape = shape.elements[k]
    return offset


def leaf_at(shape, index: tuple[int, ...]):
    for k in index:
        if not shape.is_tuple or k >= len(shape.elements):
            return None
        shape = shape.elements[k]
    return shape


RUN = 32  # outputs per run: a run written before a value's last use is passed over whole


def first_fit(first: int, last: int, runs: list[tuple[int, list[int]]], defined: list[int],
              starts: list[list[int]], ends: list[list[int]], owners: list[list[int]] | None = None,
              me: int = -1, touch: frozenset | set = frozenset()) -> bool:
    """Place the step range [first, last] in the first output (in their order) written
    after `last` that has room for it, recording it there; False when none has. A range may
    begin on the step where one before it ends, or end on the step where the next begins,
    when the later value may be written into the earlier one's buffer (`touch`: pairs of
    (operand, result) buffer ids; `owners`: the buffer of each recorded range), as XLA's
    HloOrdering::MayInterfere lets a value's last use be the other's definition then."""
    for latest, run in runs:
        if latest < last or (latest == last and not touch):
            continue
        for k in run:
            if defined[k] < last or (defined[k] == last and not touch):
                continue
            at = bisect.bisect_left(starts[k], first)
            before = at == 0 or ends[k][at - 1] < first or (
                ends[k][at - 1] == first and owners is not None and (owners[k][at - 1], me) in touch)
            after = starts[k][at] > last or (
                starts[k][at] == last and owners is not None and (me, owners[k][at]) in touch)
            if before and after:
                starts[k].insert(at, first)
                ends[k].insert(at, last)
                if owners is not None:
                    owners[k].insert(at, me)
                return True
    return False


def sole_reader(comp: Computation, operand: Instruction, reader: Instruction) -> bool:
    """Whether `reader` is the only reader of `operand` and no other view of the same
    parameter leaf (another get-tuple-element of it) is read: XLA may then write the reader's
    result into the operand's buffer, a loop body's state updated in place."""
    if any(u is not reader for u in comp.users().get(operand.name, ())):
        return False
    if operand.opcode == "get-tuple-element":
        index = operand.attr("index")
        return not any(i is not operand and i.opcode == "get-tuple-element"
                       and i.operands == operand.operands and i.attr("index") == index
                       for i in comp.instructions)
    return True
