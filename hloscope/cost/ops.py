"""FLOPs, transcendentals and bytes per instruction (XLA HloCostAnalysis conventions).

Conventions: a multiply-add is 2 FLOPs; elementwise arithmetic is 1 FLOP per
output element; transcendental functions count apart; data movement costs no
FLOPs. Bytes are operand bytes read plus result bytes written, counted at the
top level: a fusion reads its operands and writes its result, and the traffic
between the instructions it fuses stays on chip. while/call/conditional cost
what they call; a while multiplies by its trip count when the HLO states one; a
conditional costs, per quantity, the most any branch costs (XLA's convention).

An instruction the model cannot cost (an opcode it has no formula for, a kernel with no
cost estimate, dimension attributes that do not fit the shapes) is never counted as
free: its Cost carries `unknown` (instruction name, reason), which reports show.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from hloscope.cost.flops import (
    CONTROL,
    FREE,
    NO_FLOPS,
    PER_ELEMENT,
    SLICING,
    TRANSCENDENTAL,
    UnknownCost,
    convolution_flops,
    dot_flops,
    elements,
    fft_flops,
    kernel_cost_estimate,
    kernel_flops,
)
from hloscope.cost.fused import fusion_traffic
from hloscope.cost.layout import add_first_piece, byte_totals, logical_bytes, split_share
from hloscope.cost.library import is_library_call, library_flops, workspace
from hloscope.cost.trips import trip_count_from_condition
from hloscope.cost.values import BodyCost, Cost
from hloscope.ir import Instruction, Module, Shape
from hloscope.ir.opcodes import OPCODES, async_shorthand, carried_element


# Opcodes whose traffic is plainly their operands read and their result written (no branch
# of CostModel._memory_into applies to them).
_PLAIN_TRAFFIC = frozenset(
    op for op in OPCODES
    if op not in FREE and op not in CONTROL and op not in SLICING and not op.endswith("-done")
    and op not in ("dynamic-update-slice", "scatter", "copy-start", "collective-permute-start",
                   "all-gather-start", "fusion", "custom-call"))

# Opcodes whose cost (FLOPs, transcendentals, bytes) is a function of the opcode, the result
# shape and the operand shapes alone: elementwise ops and plain data movement, with no
# attribute, called computation or special traffic in _compute or _memory_into.
_BY_SHAPES = frozenset(
    op for op in _PLAIN_TRAFFIC
    if op in PER_ELEMENT or op in TRANSCENDENTAL or op in (
        "copy", "transpose", "reshape", "broadcast", "concatenate", "pad", "reverse", "iota",
        "dynamic-reshape"))


class CostModel:
    """Costs instructions of one module; computations are costed once and cached."""

    def __init__(self, module: Module, trip_counts: bool = True,
                 kernel_costs: dict[str, BodyCost] | None = None) -> None:
        self.module = module
        self.trip_counts = trip_counts
        self._costs: dict[int, tuple[Instruction, Cost]] = {}  # id -> (instruction, its cost)
        # custom calls with no cost_estimate, costed from their decoded kernel bodies (by
        # instruction name; hloscope.mlir.cost.body_costs)
        self.kernel_costs = kernel_costs or {}
        self._computation_flops: dict[str, Cost] = {}
        # computation -> (operand types, precision, algorithm) of its first matmul
        # (hloscope.cost.roofline.matmul_spec)
        self.matmul_types: dict[str, tuple | None] = {}
        self._names: dict[str, dict[str, Instruction]] = {}  # computation -> its instructions by name
        self._shared: dict[tuple, Cost] = {}  # (opcode, ids of its shapes) -> cost (_by_shapes)
        self._kept: list[tuple] = []  # the shapes whose ids are keys of _shared and _fused_traffic
        # by a computation's structure digest (Computation.structure: the same opcodes,
        # shapes, operands, attributes and callees, names and metadata apart): its FLOPs,
        # and a fusion's traffic by (its callee's digest, ids of its shapes); an unrolled
        # model's layers repeat their fusions (the 31 MB step: 14,449 fused computations,
        # 65 structures)
        self._structures: dict[tuple[int, int], Cost] = {}
        self._fused_traffic: dict[tuple, tuple[list[Shape], list[Shape]]] = {}

    # -- helpers
    def operand_shapes(self, instr: Instruction) -> list[Shape]:
        by_name = self._names.get(instr.computation)
        if by_name is None:
            comp = self.module.by_name.get(instr.computation)
            if comp is None:
                return []
            by_name = self._names[instr.computation] = comp.by_name
        printed, operands = instr.operand_shapes, instr.operands
        if not printed:
            return [by_name[n].shape for n in operands if n in by_name]
        if len(printed) == len(operands) and not any(printed):  # (none printed: most dumps)
            if len(operands) == 1:  # (the usual collective, convert, copy: no list built)
                return [by_name[operands[0]].shape]
            return [by_name[n].shape for n in operands]
        out = []
        for k, n in enumerate(operands):  # (a collective may read hundreds)
            if k < len(printed) and printed[k]:
                out.append(instr.operand_shape(k))
            elif n in by_name or k < len(printed):
                out.append(by_name[n].shape)
        return out

    def computation_compute(self, name: str) -> Cost:
        """FLOPs and transcendentals of everything a computation executes once."""
        if name not in self._computation_flops:
            digest = self.module[name].structure
            shared = self._structures.get(digest) if digest is not None else None
            if shared is not None:  # (one of the same structure, costed already)
                self._computation_flops[name] = shared
                return shared
            self._computation_flops[name] = Cost()  # cycle guard
            total = Cost()
            for instr in self.module[name].instructions:
                c = self.compute(instr)
                total.flops += c.flops
                total.transcendentals += c.transcendentals
                total.unknown_trip_counts.extend(c.unknown_trip_counts)
                total.unknown.extend(c.unknown)
            self._computation_flops[name] = total
            if digest is not None and not total.unknown and not total.unknown_trip_counts:
                self._structures[digest] = total  # (names none of its instructions)
        return self._computation_flops[name]

    def trip_count(self, instr: Instruction) -> int | None:
        """The while's trip count: XLA's `known_trip_count`, else what its condition, body
        and initial state imply (cost/trips.py), else None."""
        config = instr.config_with("known_trip_count")
        if isinstance(config, dict):
            n = config.get("known_trip_count", {})
            n = n.get("n") if isinstance(n, dict) else None
            try:
                value = int(n) if n is not None else None
            except (TypeError, ValueError):
                value = None
            if value is not None and 0 <= value <= 1 << 40:
                return value
        caller = self.module.by_name.get(instr.computation)
        return trip_count_from_condition(self.module, caller, instr) if caller is not None else None

    # -- the model
    def compute(self, instr: Instruction) -> Cost:
        """FLOPs/transcendentals of one instruction (including what it calls); when the
        model cannot compute them, 0 with the reason in `unknown`."""
        try:
            return self._compute(instr)
        except UnknownCost as e:
            return Cost(unknown=[(instr.name, str(e))])

    def _compute(self, instr: Instruction) -> Cost:
        op = instr.opcode
        c = Cost()
        out_elems = elements(instr.shape)
        if op in PER_ELEMENT:
            c.flops = out_elems
        elif op in TRANSCENDENTAL:
            c.transcendentals = out_elems
        elif op == "dot":
            c.flops = dot_flops(instr, self.operand_shapes(instr)[0])
        elif op == "convolution":
            lhs, rhs = self.operand_shapes(instr)[:2]
            c.flops = convolution_flops(instr, lhs, rhs)
        elif op in ("reduce", "reduce-window", "all-reduce", "all-reduce-start"):
            shapes = self.operand_shapes(instr)
            # (inputs..., inits...) of a reduce; every operand of a collective (XLA's combiner
            # makes one of many, each reduced)
            n_inputs = max(1, len(shapes) // 2) if op == "reduce" else max(1, len(shapes))
            in_elems = sum(elements(s) for s in shapes[:n_inputs])
            applied = max(0, in_elems - out_elems) if op == "reduce" else in_elems
            if op == "reduce-window":  # (window - 1) combines per output element, as XLA counts
                window = instr.attr("window")
                applied = out_elems * max((prod(window.size) if window and window.size else 1) - 1, 0)
            reducer = self.computation_compute(instr.called_computations[0]) if instr.called_computations else Cost()
            c.flops = applied * max(reducer.flops, 1.0) / n_inputs if op == "reduce" else applied * reducer.flops
            c.transcendentals = applied * reducer.transcendentals
        elif op == "fusion" or op in ("call", "async-start"):
            for name in instr.called_computations:
                c.add(self.computation_compute(name))
        elif op == "while":
            cond, body = instr.attr("condition"), instr.attr("body")
            trips = self.trip_count(instr) if self.trip_counts else 1
            if trips is None:
                c.unknown_trip_counts.append(instr.name)
                trips = 1
            for name in (cond, body):
                c.add(self.computation_compute(name), trips)
        elif op == "fft":
            c.flops = fft_flops(instr, self.operand_shapes(instr)[0])
        elif op == "scatter":
            # XLA: each update element combined once by the scatter's computation
            shapes = self.operand_shapes(instr)
            n = max(1, (len(shapes) - 1) // 2)  # (inputs..., indices, updates...)
            updated = elements(shapes[n + 1]) if len(shapes) > n + 1 else 0
            reducer = self.computation_compute(instr.called_computations[0]) if instr.called_computations else Cost()
            c.flops, c.transcendentals = updated * reducer.flops, updated * reducer.transcendentals
        elif op == "sort":
            # XLA: n log2(n) comparisons over all elements of the (first) operand
            shapes = self.operand_shapes(instr)
            n = shapes[0].num_elements if shapes and shapes[0].is_array else 0
            c.flops = float(n * max(1, (n - 1).bit_length())) if n > 1 else 0.0
        elif op == "custom-call":
            c.flops, c.transcendentals = self._kernel_flops(instr)
        elif op == "conditional":
            c.add(Cost.most([self.computation_compute(n) for n in instr.called_computations]))
        elif op in ("rng",):  # XLA: one transcendental per generated element
            c.transcendentals = out_elems
        elif async_shorthand(op) is not None:  # slice-start, fusion-start, ... (the -start works)
            base, phase = async_shorthand(op)
            if phase == "start" and base == "custom-call":
                c.flops, c.transcendentals = self._kernel_flops(instr)
            elif phase == "start":  # what the computation the parser wrapped its op in does
                for name in instr.called_computations:
                    c.add(self.computation_compute(name))
        elif op not in NO_FLOPS and op not in CONTROL:
            raise UnknownCost(f"no FLOP model for opcode {op}")
        return c

    def _kernel_flops(self, instr: Instruction) -> tuple[float, float]:
        body = self.kernel_costs.get(instr.name)
        if body is not None and not kernel_cost_estimate(instr):
            return body.flops, body.transcendentals
        if is_library_call(instr):  # cuBLAS, cuDNN, TransformerEngine: from their configs
            found = library_flops(instr, self.operand_shapes(instr))
            if found is not None:
                return found
        return kernel_flops(instr)

    def _kernel_bytes(self, instr: Instruction) -> int | None:
        """A kernel's bytes: its own estimate (Pallas cost_estimate, as XLA uses it), else
        the HBM<->VMEM block traffic its BlockSpecs imply (kernel_costs), else None."""
        estimate = kernel_cost_estimate(instr)
        if "bytes_accessed" in estimate:
            return int(estimate["bytes_accessed"])
        body = self.kernel_costs.get(instr.name)
        return body.bytes if body is not None and not estimate else None

    def memory(self, instr: Instruction) -> Cost:
        """Bytes read and written by one top-level instruction.

        Slicing ops read only what they produce; dynamic-update-slice reads and
        writes only its update (the buffer is updated in place), a scatter its indices, its
        updates and the old values where they go; a fusion reads,
        of each operand, only what its fused slices take of it.
        """
        return self._memory_into(Cost(), instr)

    def _memory_into(self, c: Cost, instr: Instruction) -> Cost:
        """`memory`, its byte counts set on `c` (which holds no bytes yet)."""
        op = instr.opcode
        if op in FREE or op in CONTROL:
            return c
        shapes = self.operand_shapes(instr)
        if op in _PLAIN_TRAFFIC:  # (most ops: no branch below applies)
            return self._traffic(c, shapes, (instr.shape,))
        reads: list[Shape] = list(shapes)
        written: list[Shape] = [instr.shape]
        if op in SLICING and shapes:
            reads = [instr.shape, *shapes[1:]]
        elif op == "dynamic-update-slice" and len(shapes) > 1:
            reads, written = shapes[1:], [shapes[1]]
        elif op == "scatter" and len(shapes) >= 3:
            # (operands..., indices, updates...): as XLA counts it, the indices and the updates
            # read, and at each position updated the old value read and the new one written
            n = max(1, (len(shapes) - 1) // 2)
            updates = shapes[n + 1:]
            reads, written = [shapes[n], *updates, *updates], list(updates)
        elif op in ("copy-start", "collective-permute-start", "all-gather-start"):
            # the result tuple carries the operand(s) beside what is written: the
            # destination, the contexts
            carried = carried_element(op)
            written = [e for k, e in enumerate(instr.shape.elements) if k != carried] or [instr.shape]
            if op == "copy-start" and written and split_share(written[0]) < 1:
                return add_first_piece(self._traffic(c, reads, written[1:]), written[0], written=True)
        elif async_shorthand(op) is not None:  # ((operands), output, state): writes the output
            phase = async_shorthand(op)[1]
            if phase != "start" or not instr.shape.is_tuple or len(instr.shape.elements) < 2:
                return c  # update/done: the start's work
            written = [instr.shape.elements[1]]
            if async_shorthand(op)[0] in SLICING:  # reads only what it produces
                reads = list(written)
        elif op.endswith("-done") and instr.shape.is_array:
            reads = [instr.shape]
            if op == "copy-done" and split_share(instr.shape) < 1:
                return add_first_piece(add_first_piece(c, instr.shape, written=False), instr.shape, written=True)
        elif op == "fusion":
            reads, written = self._fusion_traffic(instr, shapes)
        elif op == "custom-call" and instr.attr("custom_call_target") == "AllocateBuffer":
            return c  # reserves a buffer; moves no data
        elif op == "custom-call" and instr.attr("custom_call_target") == "ConcatBitcast":
            # (the TPU lays its operands out end to end and bitcasts them: no data moves, and
            # it carries no estimated_cycles; XLA's cost analysis counts its result written,
            # not its operands read: equal to XLA's bytes on 25 real compiles)
            c = self._traffic(c, (), written)
            c.hbm_bytes = 0
            return c
        elif op == "custom-call" and workspace(instr):  # (a library call's scratch: not traffic)
            skip = set(workspace(instr))
            written = [e for k, e in enumerate(instr.shape.elements) if k not in skip]
        elif op == "custom-call" and (total := self._kernel_bytes(instr)) is not None:
            out_b = logical_bytes(instr.shape)
            c.bytes_written = c.padded_written = min(out_b, total)
            c.bytes_read = c.padded_read = total - c.bytes_written
            c.hbm_bytes = total
            return c
        return self._traffic(c, reads, written)

    @staticmethod
    def _traffic(c: Cost, reads: Sequence[Shape], written: Sequence[Shape]) -> Cost:
        """`c` with the bytes of reading `reads` and writing `written` set."""
        logical = padded = hbm = 0
        for s in reads:
            t = byte_totals(s)
            logical += t[0]
            padded += t[1]
            hbm += t[2]
        c.bytes_read, c.padded_read = logical, padded
        logical = padded = 0
        for s in written:
            t = byte_totals(s)
            logical += t[0]
            padded += t[1]
            hbm += t[2]
        c.bytes_written, c.padded_written, c.hbm_bytes = logical, padded, hbm
        return c

    def cost(self, instr: Instruction) -> Cost:
        """FLOPs and bytes of one top-level instruction; `unknown` says when the FLOPs
        could not be computed (they are then 0 in the totals, and reports say so).
        Computed once per instruction (the totals and the rows both ask), and once per
        opcode and shapes for the ops whose cost is theirs alone (an unrolled layer
        repeats them): callers read the Cost, never change it."""
        found = self._costs.get(id(instr))
        if found is None or found[0] is not instr:
            c = self._by_shapes(instr) if instr.opcode in _BY_SHAPES else self._own(instr)
            self._costs[id(instr)] = found = (instr, c)
        return found[1]

    def _own(self, instr: Instruction) -> Cost:
        """The instruction's cost, worked out for it alone."""
        c = self.compute(instr)  # (a Cost of its own: no bytes set yet)
        # (as floats, as a sum of costs is: compute gives an elementwise op's as an int)
        c.flops, c.transcendentals = float(c.flops), float(c.transcendentals)
        return self._memory_into(c, instr)

    def _fusion_traffic(self, instr: Instruction, shapes: list[Shape]) -> tuple[list[Shape], list[Shape]]:
        """fusion_traffic, once per callee structure and shapes (the shapes that made a key
        are kept, as _by_shapes keeps its own)."""
        calls = instr.called_computations
        callee = self.module.by_name.get(calls[0]) if calls else None
        digest = callee.structure if callee is not None else None
        if digest is None:
            return fusion_traffic(self.module, instr, shapes)
        key = (digest, id(instr.shape), *map(id, shapes))
        found = self._fused_traffic.get(key)
        if found is None:
            found = self._fused_traffic[key] = fusion_traffic(self.module, instr, shapes)
            self._kept.append((instr.shape, shapes))
        return found

    def _by_shapes(self, instr: Instruction) -> Cost:
        """The cost of an op in _BY_SHAPES, shared by the ops of the same opcode, result
        shape and operand shapes (by identity: the shapes that made a key are kept, so no
        other shape can take their ids while the model lives)."""
        shapes = self.operand_shapes(instr)
        key = (instr.opcode, id(instr.shape), *map(id, shapes))
        c = self._shared.get(key)
        if c is None:
            c = self._own(instr)
            if c.unknown or c.unknown_trip_counts:
                return c  # (it names the instruction: its own)
            self._shared[key] = c
            self._kept.append((instr.shape, shapes))
        return c

    def module_cost(self) -> Cost:
        """Totals over the entry computation, descending into control flow."""
        total = Cost()
        entry = self.module.entry
        if entry is None:
            return total
        self._visit(entry.name, total, 1.0)
        return total

    def _visit(self, comp_name: str, total: Cost, times: float) -> None:
        for instr in self.module[comp_name].instructions:
            if instr.opcode == "while":
                trips = self.trip_count(instr) if self.trip_counts else 1
                if trips is None:
                    total.unknown_trip_counts.append(instr.name)
                    trips = 1
                for name in (instr.attr("condition"), instr.attr("body")):
                    self._visit(name, total, times * trips)
            elif instr.opcode in ("call", "async-start"):
                for name in instr.called_computations:
                    self._visit(name, total, times)
            elif instr.opcode == "conditional":  # the costliest branch, per quantity
                branches = []
                for name in instr.called_computations:
                    branches.append(Cost())
                    self._visit(name, branches[-1], 1.0)
                total.add(Cost.most(branches), times)
            else:
                total.add(self.cost(instr), times)
