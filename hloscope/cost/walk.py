"""One computation's buffers over its schedule (`_Walk`): what each instruction defines,
names or writes in place, and how long each buffer lives. hloscope.cost.liveness's
docstring gives the rules it follows; liveness.memory() reports a module from its walk."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

from hloscope._speed import native
from hloscope.cost.layout import memory_leaves
from hloscope.cost.placement import callee_peak, place_in_outputs
from hloscope.cost.sharing import (
    SHARE_OPS,
    UPDATES,
    alias_pairs,
    backend_aliases,
    gpu_fusion_shares,
    in_place,
    leaf_count,
    leaf_offset,
    leaf_offsets,
    shareable_operands,
    sole_reader,
)
from hloscope.ir import Computation, Instruction, Module
from hloscope.ir.opcodes import carried_element

_SAME = frozenset({"bitcast", "opt-barrier", "add-dependency"})
_CALLS = frozenset({"while", "conditional", "call"})
# Opcodes whose value may name buffers made elsewhere (with the async parts, by suffix).
_NAMING = _SAME | _CALLS | {"parameter", "constant", "get-tuple-element", "tuple", "custom-call"}
_ASYNC_PARTS = ("-done", "-update", "-start")


@dataclass(slots=True)
class Buffer:
    computation: str
    instruction: str
    shape: str
    bytes: int
    space: int
    defined: int  # schedule step of the defining instruction
    last_use: int
    kind: str = "temp"  # "argument" | "output" | "temp" | "constant" | "in output" (a temp in an output's buffer) | "returned" (a callee's result, in its caller's buffer)


class _Walk:
    """Buffers of one computation over its schedule."""

    def __init__(self, module: Module, comp: Computation, outer: dict[str, list[int]] | None = None,
                 platform: str | None = None):
        self.module = module
        self.platform = platform  # (each compiler decides buffer sharing by its own rules)
        self.comp = comp
        self.buffers: list[Buffer] = []
        self.values: dict[str, list[int]] = {}  # instruction -> buffer ids of its leaves
        self.inner: dict[int, dict[int, int]] = {}  # step -> callee peak per space
        self.callees: dict[int, list[_Walk]] = {}  # step -> the walks of what it calls
        self.outer = outer  # parameter leaves of a callee: the caller's buffers (not counted)
        self.by_name = comp.by_name  # (each instruction's operands are looked up in it)
        self.sharing: list[tuple[int, int, int]] = []  # (step, operand buffer, result buffer)
        # GPU: (operand buffer, result buffer) pairs the result may be written over where the
        # operand dies, by XLA's rule even through a get-tuple-element: an output's
        # allocation takes them one after the other (placement.place_in_outputs)
        self.touching: set[tuple[int, int]] = set()
        # an output's buffer id -> (the step from which a value written in place into it
        # holds it, that value's buffer id): share()'s chains of in-place results ending in
        # an output
        self.held_from: dict[int, tuple[int, int]] = {}

    def new(self, instr: Instruction, step: int, kind: str = "temp") -> list[int]:
        first = len(self.buffers)
        comp, name = self.comp.name, instr.name
        leaves = memory_leaves(instr.shape)
        if len(leaves) == 1:  # (most: one array)
            mem = leaves[0]
            self.buffers.append(Buffer(comp, name, mem.shape, mem.padded_bytes, mem.memory_space,
                                       step, step, kind))
            return [first]
        self.buffers.extend([Buffer(comp, name, mem.shape, mem.padded_bytes, mem.memory_space,
                                    step, step, kind) for mem in leaves])
        return list(range(first, len(self.buffers)))

    def leaves_of_element(self, instr: Instruction, index: int) -> list[int]:
        """The buffer ids of tuple element `index` of an instruction's value."""
        shape = instr.shape
        if not shape.is_tuple or index >= len(shape.elements):
            return []
        offsets = leaf_offsets(shape)
        return self.values[instr.name][offsets[index]:offsets[index + 1]]

    def value(self, instr: Instruction, step: int) -> list[int]:
        """The buffer ids of an instruction's value, for all but run()'s plain case."""
        op = instr.opcode
        by_name = self.by_name
        operands = [by_name[o] for o in instr.operands]  # (the parser: each defined before its use)
        if op in SHARE_OPS:  # (most of the rest: elementwise, written over an operand that dies)
            shape = instr.shape
            if shape.is_array and _unaliased(instr):
                return self._shared(instr, step, operands, shape)
        if op not in _NAMING and not op.endswith(_ASYNC_PARTS):  # (most: one new value)
            return self._made(instr, step, operands)
        if op == "parameter":
            if self.outer is not None:
                return [-1] * leaf_count(instr.shape)  # the caller's buffers
            return self.new(instr, step, "argument")
        if op == "constant":
            return self.new(instr, step, "constant")
        if op in _SAME and operands:
            return list(self.values[operands[0].name])
        if op == "get-tuple-element" and operands:
            return self.leaves_of_element(operands[0], int(instr.attr("index") or 0))
        if op == "tuple" or (op == "custom-call" and instr.attr("custom_call_target") == "ConcatBitcast"):
            # ConcatBitcast: TPU lays its operands out end to end, the result is their bitcast
            return [b for o in operands for b in self.values[o.name]]
        if op == "while" and operands:
            self._callee_peaks(instr, step)
            return list(self.values[operands[0].name])
        if op in ("conditional", "call"):
            self._callee_peaks(instr, step)
            return self.new(instr, step)
        if op == "copy-done" and operands:
            return self.leaves_of_element(operands[0], 0)
        if op.endswith("-done") and operands:
            start = operands[0]
            return self.leaves_of_element(start, 1) if start.shape.is_tuple else list(
                self.values[start.name])
        if op.endswith("-update") and operands:
            return list(self.values[operands[0].name])
        if op.endswith("-start") and instr.shape.is_tuple and instr.shape.elements:
            return self._start(instr, step, operands)
        return self._made(instr, step, operands)

    def _made(self, instr: Instruction, step: int, operands: list[Instruction]) -> list[int]:
        """The buffers of a value the instruction makes (some written into an operand's)."""
        op = instr.opcode
        ids = self.new(instr, step)
        if op == "sort" and len(ids) == len(operands):
            # sorted in place: each result is its operand's buffer
            for k, o in enumerate(operands):
                self._reuse(ids, k, o)
            return ids
        updated = in_place(instr, self.module) if operands and ids else []
        for leaf, k in updated:  # (the operand's buffer, updated)
            if leaf < len(ids) and k < len(operands):
                self._reuse(ids, leaf, operands[k])
        if updated:
            return ids
        if not instr.may_have("output_to_operand_aliasing"):
            if len(ids) == 1 and operands:
                if self._may_share(step, ids[0], operands, shareable_operands(instr, operands, self.module, self.platform == "gpu")):
                    ids[0] = -1
            elif len(ids) > 1 and operands and self.platform == "gpu" and op == "fusion" \
                    and len(ids) == len(instr.shape.elements):  # (a GPU multi-output fusion)
                for leaf in range(len(ids)):
                    ks = [k for k, o in enumerate(operands)
                          if gpu_fusion_shares(instr, k, o, self.module, leaf)]
                    if self._may_share(step, ids[leaf], operands, ks):
                        ids[leaf] = -1
            elif len(ids) > 1 and operands:  # (a tuple: the leaves the TPU compiler lets share)
                for leaf, ks in backend_aliases(instr).items():
                    if leaf < len(ids) and self._may_share(step, ids[leaf], operands,
                                                           [k for k in ks if k < len(operands)]):
                        ids[leaf] = -1
            return ids
        for out_path, operand, _ in alias_pairs(instr.raw_attr("output_to_operand_aliasing")):
            leaf = leaf_offset(instr.shape, out_path)
            if leaf is not None and leaf < len(ids) and operand < len(operands):
                self._reuse(ids, leaf, operands[operand])
        return ids

    def _shared(self, instr: Instruction, step: int, operands: list[Instruction], shape) -> list[int]:
        """_made's value for an elementwise op or all-reduce of one array, with no aliasing
        attribute (neither `output_to_operand_aliasing` nor a backend_config's
        `aliasing_operands`): its own buffer, which may take over an operand's of its shape
        (shareable_operands's rule for such an op, without its questions)."""
        leaves = memory_leaves(shape)
        if len(leaves) != 1 or not operands:
            return self.new(instr, step)
        mem = leaves[0]
        made = len(self.buffers)
        self.buffers.append(Buffer(self.comp.name, instr.name, mem.shape, mem.padded_bytes,
                                   mem.memory_space, step, step, "temp"))
        dims = shape.dims
        same = []
        for k, o in enumerate(operands):  # (the operands of the result's dims)
            s = o.shape
            if s is shape or (s.dims == dims and s.is_array):
                same.append(k)
        if same and self._may_share(step, made, operands, same):
            return [-1]
        return [made]

    def _reuse(self, ids: list[int], k: int, operand: Instruction) -> None:
        """Result leaf k is written into `operand`'s buffer (when that is one buffer of
        this computation): the buffer made for it holds nothing."""
        alias = self.values[operand.name]
        if len(alias) != 1:
            return
        if alias[0] >= 0 and self.buffers[alias[0]].space != self.buffers[ids[k]].space:
            return  # (written to another memory space: not in place)
        self.buffers[ids[k]].bytes = 0  # (-1: a caller's buffer, updated inside a loop body)
        ids[k] = alias[0]

    def _may_share(self, step: int, made: int, operands: list[Instruction], candidates: list[int]) -> bool:
        """Note the operands (numbers in `candidates`) whose buffer the result may be written
        into, as XLA's buffer assignment does when the operand's last use is this
        instruction (share()). True: written into a caller's buffer now (a loop body's
        state updated in place: the operand is its last reader's only input from it)."""
        if not candidates:
            return False
        buffers, values, platform = self.buffers, self.values, self.platform
        size, space = buffers[made].bytes, buffers[made].space
        for k in candidates:
            ids = values[operands[k].name]
            if len(ids) == 1 and (bid := ids[0]) >= 0:
                b = buffers[bid]
                if b.bytes != size or b.space != space:
                    continue
                if platform == "gpu":
                    self.touching.add((bid, made))  # (through a get-tuple-element too: placement)
                if b.kind == "temp" and (platform == "tpu" or (
                        (op := operands[k].opcode) not in _PASSED and not op.endswith("-done"))):
                    # (XLA's heap shares only a value the operand itself defines, IsUserOf;
                    # the TPU compiler's own aliasing lists name tuple elements too)
                    self.sharing.append((step, bid, made))
            elif ids == [-1] and self._only_reader(operands[k], step, size, space):
                self.buffers[made].bytes = 0
                return True
        return False

    def _only_reader(self, operand: Instruction, step: int, size: int, space: int) -> bool:
        """Whether the instruction at `step` is the last to read `operand`, a caller's buffer
        of the result's size (sharing.sole_reader)."""
        leaves = memory_leaves(operand.shape)
        if len(leaves) != 1 or leaves[0].padded_bytes != size or leaves[0].memory_space != space:
            return False
        return sole_reader(self.comp, operand, self.comp.instructions[step])

    def share(self) -> None:
        """Results written into an operand's buffer that dies where they are made (XLA's
        CanShareOperandBufferWithUser: an elementwise op, a loop fusion elementwise on the
        operand, an all-reduce): one buffer, living from the operand's definition to the
        result's last use (and an output's buffer, when the result is an output)."""
        root: dict[int, int] = {}  # buffer id -> the buffer it was merged into
        taken: set[int] = set()
        for step, operand, made in self.sharing:
            while operand in root:
                operand = root[operand]
            b, r = self.buffers[operand], self.buffers[made]
            if made in taken or b.last_use != step or not r.bytes or "in output" in (b.kind, r.kind):
                continue
            taken.add(made)  # (one operand's buffer per result; a buffer taken over may be
            # taken again where the value written into it dies: a chain of in-place results)
            if r.kind == "output":
                if self.platform != "tpu":
                    continue  # (an output's allocation is not in the heap: no sharing)
                b.kind = "in output"  # (its bytes are the output's)
                self.held_from[made] = min(self.held_from.get(made, (r.defined, made)), (b.defined, operand))
                continue
            b.last_use = max(b.last_use, r.last_use)
            r.bytes = 0
            root[made] = operand

    def _start(self, instr: Instruction, step: int, operands: list[Instruction]) -> list[int]:
        """An async start's tuple: the operands it carries, then what it allocates. copy-start
        is (destination, source, context)."""
        elements = instr.shape.elements
        fresh = self.new(instr, step)
        out: list[int] = []
        k = 0
        carried = carried_element(instr.opcode)
        for e, element in enumerate(elements):
            n = leaf_count(element)
            if e == carried:
                mine = [b for o in operands for b in self.values[o.name]]
                if len(mine) == n:
                    for b in fresh[k:k + n]:
                        self.buffers[b].bytes = 0
                    out += mine
                    k += n
                    continue
            out += fresh[k:k + n]
            k += n
        return out

    def _callee_peaks(self, instr: Instruction, step: int) -> None:
        walks = []
        for name in instr.called_computations:
            callee = self.module.by_name.get(name)
            if callee is None:
                continue
            walk = _Walk(self.module, callee, outer={}, platform=self.platform)
            walk.run()
            walks.append(walk)
        self.callees[step] = walks
        self.inner[step] = callee_peak(walks)

    def run(self) -> None:
        core = native()
        if core is not None and hasattr(core, "walk_steps"):
            # (the loop below in the compiled core: native/src/steps.rs. The buffers are its
            # columns while it runs, which value() reads and writes through views; then
            # Buffers, as the rest of the analysis reads them)
            self.buffers = core.Store()
            try:
                core.walk_steps(self, memory_leaves, _plain, SHARE_OPS, list(_PASSED))
                self.buffers = self.buffers.buffers(Buffer)
            except (OverflowError, RuntimeError):
                # (a buffer of 2**63 bytes or more, which the columns do not hold, or the
                # core's internal error: the Python steps, which raise what they raise)
                self.__init__(self.module, self.comp, self.outer, self.platform)
                self._steps()
        else:
            self._steps()
        self._ends()

    def _steps(self) -> None:
        """Each instruction's value, in schedule order (the plain route of walk_steps)."""
        values, buffers, new, value, plain_ops = self.values, self.buffers, self.new, self.value, _PLAIN
        for step, instr in enumerate(self.comp.instructions):
            for o in instr.operands:
                for b in values[o]:
                    if b >= 0:  # (steps only grow: this read is the latest so far)
                        buffers[b].last_use = step
            plain = plain_ops.get(instr.opcode)
            if plain is None:
                plain = plain_ops[instr.opcode] = _plain(instr.opcode)
            # (most: a new value of its own, shared with no operand: _made's plain case;
            # _unaliased written out, as it is asked of most instructions)
            if plain and (("aliasing" not in text) if (text := instr.attr_text) else not instr._attrs):
                values[instr.name] = new(instr, step)
            else:
                values[instr.name] = value(instr, step)

    def _ends(self) -> None:
        """The root's buffers live to the end; then sharing and placement."""
        end = len(self.comp.instructions)
        for b in self.values[self.comp.root.name]:  # (the parser: no computation is empty)
            if b >= 0:
                self.buffers[b].last_use = end
                if self.buffers[b].kind == "temp":
                    # (a callee's result is written into its caller's buffer: a loop's
                    # state, a call's or conditional's result, which the caller counts)
                    self.buffers[b].kind = "output" if self.outer is None else "returned"
        if self.outer is None and self.platform != "tpu":
            # (XLA's buffer assigner first puts values into the outputs' allocations while
            # they are free; only the rest go to the heap, where results share operands)
            place_in_outputs(self)
            self.share()
            return
        self.share()
        if self.outer is None:
            place_in_outputs(self)

    def live_per_space(self, only: int | None = None) -> dict[int, list[int]]:
        """Bytes of temporaries live at each step, callees' peaks included, per memory
        space (every space a buffer or a callee's peak is in), from one pass over the
        buffers; `only`: that space alone (zeros where nothing is in it)."""
        return {space: self.live(space, delta) for space, delta in self.deltas(only).items()}

    def deltas(self, only: int | None = None) -> dict[int, list[int]]:
        """Per memory space (`only`: that one), how the bytes of live temporaries change at
        each step: + where one is defined, - after its last use (live() adds them up;
        placement takes out those it places, for each order it tries)."""
        n = len(self.comp.instructions) + 1
        deltas: dict[int, list[int]] = {} if only is None else {only: [0] * (n + 1)}
        for b in self.buffers:
            if only is not None and b.space != only:
                continue
            delta = deltas.get(b.space) or deltas.setdefault(b.space, [0] * (n + 1))
            if b.kind == "temp" and b.bytes:
                delta[b.defined] += b.bytes
                delta[min(b.last_use, n - 1) + 1] -= b.bytes
        if only is None:
            for space in {s for peaks in self.inner.values() for s in peaks} - deltas.keys():
                deltas[space] = [0] * (n + 1)
        return deltas

    def live(self, space: int, delta: list[int]) -> list[int]:
        """The bytes live at each step in one space: the running sum of its deltas, plus
        the peaks of the callees run at each step as they now are."""
        n = len(self.comp.instructions) + 1
        live = list(accumulate(delta[:n]))
        for step, peaks in self.inner.items():
            if step < n:
                live[step] += peaks.get(space, 0)
        return live

    def peak_per_space(self) -> dict[int, int]:
        return {s: max(live, default=0) for s, live in self.live_per_space().items()}


# Opcodes whose value _made makes with no operand's buffer involved unless an attribute says
# so (output_to_operand_aliasing, a TPU backend_config's aliasing_operands): not naming
# others' buffers (value), not sorted or updated in place (in_place), not sharing an
# operand's buffer by XLA's rule (shareable_operands). By opcode, filled as they are seen.
_PLAIN: dict[str, bool] = {}


def _plain(op: str) -> bool:
    return not (op in _NAMING or op.endswith(_ASYNC_PARTS) or op in _NOT_PLAIN)


def _unaliased(instr: Instruction) -> bool:
    """No aliasing attribute (`output_to_operand_aliasing`, a backend_config's
    `aliasing_operands`), without splitting the attributes."""
    text = instr.attr_text
    return ("aliasing" not in text) if text else not instr._attrs


_NOT_PLAIN = UPDATES | SHARE_OPS | {"sort", "fusion", "all-reduce-start"}


# Opcodes whose value is another's (XLA's heap simulator shares a result with an operand's
# buffer only where the operand defines the value it holds, IsUserOf): a get-tuple-element,
# bitcast or tuple passes on what another instruction defined, as does an async `-done`.
_PASSED = ("get-tuple-element", "bitcast", "tuple")
