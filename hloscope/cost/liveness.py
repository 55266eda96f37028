"""Peak memory of a scheduled module: static liveness over the schedule XLA printed.

A scheduled module (`is_scheduled=true`) lists each computation's instructions in the order
they run. Every instruction that allocates defines one buffer per array leaf of its result;
the rest name buffers defined elsewhere: bitcast, get-tuple-element, tuple, opt-barrier,
add-dependency, a while (its state is updated in place), sort (in place, in the same memory
space), the `-done` of an async pair (the buffer its `-start` allocated), dynamic-update-slice
and scatter, and each output of a fusion that is one (updated in place, into the operand its
fused parameter names, as XLA's buffer assignment does; inside a loop body that operand is the
caller's loop state, so the update allocates nothing), and fusion outputs the dump aliases to
an operand (`output_to_operand_aliasing`). A result may also take over an operand's buffer
that dies where it is made (XLA's CanShareOperandBufferWithUser): an elementwise op or an
all-reduce on an operand of its shape, a loop/input fusion whose fused parameter feeds only
elementwise ops; one operand per result. A buffer lives from the instruction that defines it
to the last instruction that reads it, through any of those names. A while loop, conditional
or call adds its callee's own peak at its place in the schedule; what the callee returns is
written into the caller's buffers (the loop state, the call's result), not counted again.

XLA's `compiled.memory_analysis()` splits HBM into arguments, outputs, the aliased bytes
between them, and temporaries (`temp_size_in_bytes`: the heap after buffer reuse, i.e. the
peak of temporaries live together, plus fragmentation). This module reports the same four:
arguments are the entry's parameters, outputs the entry root's buffers, alias the outputs
that are parameters (donated, `input_output_alias`), temporaries the peak over the schedule
of the other buffers live at once; and each other memory space (`S(1)`: on-chip VMEM, ...)
on its own. Constants are XLA's own allocations, not counted in any of them.
"""

from __future__ import annotations

from hloscope.cost.chips import platform_of
from hloscope.cost.layout import array_memory, has_tiled_layouts, memory_space_name
from hloscope.cost.memory import tuple_table_bytes
from hloscope.cost.memory_report import MemoryReport
from hloscope.cost.sharing import alias_pairs, leaf_at, leaf_offset
from hloscope.cost.walk import Buffer, _Walk
from hloscope.ir import Module
from hloscope.source import source_of

__all__ = ["Buffer", "MemoryReport", "_Walk", "memory"]


def memory(module: Module, top: int = 10, chip=None) -> MemoryReport:
    """The static peak of a module (meaningful on a scheduled module; on another the
    order of its text is taken as the schedule, and `scheduled` says so); `chip`: the TPU it
    is for, whose allocation unit rounds the output tuple's index table (512 bytes unless the
    chip says otherwise)."""
    report = MemoryReport(module.name, module.is_scheduled)
    if module.entry is None:
        return report
    walk = _Walk(module, module.entry, platform=platform_of(module))
    walk.run()
    hbm = [b for b in walk.buffers if b.space == 0]
    report.argument_bytes = sum(b.bytes for b in hbm if b.kind == "argument")
    report.output_bytes = sum(b.bytes for b in hbm if b.kind == "output")
    root = module.entry.root
    root_ids = walk.values[root.name]
    aliased = {b for b in root_ids if b >= 0 and walk.buffers[b].kind == "argument" and walk.buffers[b].space == 0}
    report.alias_bytes = sum(walk.buffers[b].bytes for b in aliased)
    report.output_bytes += report.alias_bytes  # XLA counts an output that is an argument in both
    # outputs the module header gives an argument's buffer (donation): in both, once in HBM
    params = {p.parameter_number: p for p in module.entry.parameters}
    for out_index, number, index in alias_pairs(module.input_output_alias):
        param = params.get(number)
        leaf = leaf_at(param.shape, index) if param is not None else None
        out_leaf = leaf_at(root.shape, out_index) if root is not None else None
        at = leaf_offset(root.shape, out_index) if root is not None else None
        if at is not None and at < len(root_ids) and root_ids[at] in aliased:
            continue  # (the root hands the argument's own buffer back: counted above)
        if leaf is not None and out_leaf is not None and leaf.is_array:
            report.alias_bytes += array_memory(leaf).padded_bytes
    if root is not None and root.shape.is_tuple and has_tiled_layouts(module):
        report.output_bytes += tuple_table_bytes(root.shape, chip)  # (its index table)
    report.constant_bytes = sum(b.bytes for b in walk.buffers if b.kind == "constant")
    per_space = walk.live_per_space()
    live = per_space.get(0) or [0] * (len(module.entry.instructions) + 1)
    if live:
        step = max(range(len(live)), key=lambda s: live[s])
        report.temp_peak_bytes, report.peak_step = live[step], step
        instrs = module.entry.instructions
        report.peak_instruction = instrs[min(step, len(instrs) - 1)].name  # (step len: the end)
        at_peak = [b for b in hbm if b.kind == "temp" and b.bytes and b.defined <= step <= b.last_use]
        at_peak.sort(key=lambda b: -b.bytes)
        for b in at_peak[:top]:
            src = source_of(module.entry.by_name[b.instruction], module)
            report.peak_live.append({"instruction": b.instruction, "shape": b.shape, "bytes": b.bytes,
                                     "defined": b.defined, "last_use": b.last_use,
                                     "op_name": src.op_name, "source": src.location})
        if step in walk.inner and walk.inner[step].get(0):
            report.peak_live.append({"instruction": report.peak_instruction,
                                     "shape": "(temporaries of the computations it calls)",
                                     "bytes": walk.inner[step][0], "defined": step, "last_use": step,
                                     "op_name": "", "source": ""})
        report.timeline = [(s, instr.name, live[s]) for s, instr in enumerate(instrs)]
    for space, steps in sorted(per_space.items()):
        if space != 0:
            report.other_spaces[memory_space_name(space)] = max(steps, default=0)
    return report
