"""Kernels that XLA GPU runs inside a command buffer (a CUDA graph), given back to their ops.

XLA GPU records runs of thunks into command buffers (on by default; off with
`--xla_gpu_enable_command_buffer=`). A capture then names the command buffer, not the op, in
each of its kernels' `hlo_op` (`command_buffer_1`); only the event's own name says which
kernel ran. This module gives each such kernel back to an instruction:

- a kernel named after an op at or after the last one given a kernel (XLA names a fusion's
  kernel by the fusion, `.` and `-` as `_`: `gemm_fusion_dot.4` runs `gemm_fusion_dot_4`) is
  that op's;
- any other kernel (a cuBLAS or cuDNN kernel, a memcpy, a kernel XLA reuses under the name
  of another fusion with the same code) is the next op in schedule order that has no kernel
  yet; a memset goes to that op without taking its turn (cuBLAS clears its workspace first).

The ops are those of the computation the command buffer runs (the one whose ops its kernel
names match most; else the entry) in schedule order, less those the capture names directly.
A kernel XLA reuses names an earlier fusion (the f32 X3 algorithm's six splitting fusions run
two kernels, `fusion_11` and `fusion_14`), so a name is only looked for from the last op on.
A kernel that finds no op left without one starts the buffer's next execution (a loop body
runs its buffer once per iteration). An async start's kernel is the op it wraps. Checked
against the same programs captured with command buffers off, where XLA names each kernel's op
itself (tests/test_h100_capture.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

from hloscope.ir import Instruction, Module
from hloscope.ir.opcodes import ASYNC_LATER
from hloscope.trace.events import OpEvent

_COMMAND_BUFFER = re.compile(r"command_buffer(?:_\d+)?$")
_SANITIZE = re.compile(r"[.\-]")


def kernel_key(name: str) -> str:
    """The kernel name XLA GPU gives an op's kernel."""
    return _SANITIZE.sub("_", name)


def attribute(events: list[OpEvent], modules: list[Module], find, executed_ops) -> tuple[list[OpEvent], int]:
    """(events with command-buffer kernels given to their ops, how many were given);
    `executed_ops`: join's (this module may not import join, which imports it)."""
    groups: dict[tuple, list[int]] = defaultdict(list)  # (label, cb, device, run) -> event indices
    direct: dict[str, set[str]] = defaultdict(set)  # label -> ops the capture names itself
    owner: dict[str, Module] = {}
    for k, ev in enumerate(events):
        label, module = find(ev)
        if label is None:
            continue
        if ev.kernel and _COMMAND_BUFFER.match(ev.hlo_op):
            groups[(label, ev.hlo_op, ev.device, ev.run_id)].append(k)
            owner[label] = module
        else:
            direct[label].add(ev.hlo_op)
    if not groups:
        return events, 0
    out = list(events)
    given = 0
    plans: dict[tuple[str, tuple[str, ...]], list[str | None]] = {}
    for (label, _, _, _), indices in groups.items():
        indices.sort(key=lambda k: events[k].start_ns)
        kernels = tuple(events[k].kernel for k in indices)
        plan = plans.get((label, kernels))
        if plan is None:
            plan = plans[(label, kernels)] = _plan(kernels, owner[label], direct[label], executed_ops)
        for k, op in zip(indices, plan):
            if op is not None:
                out[k] = replace(events[k], hlo_op=op)
                given += 1
    return out, given


def _plan(kernels: tuple[str, ...], module: Module, direct: set[str], executed_ops) -> list[str | None]:
    """Each kernel's op, in order (None: none found)."""
    ops = _candidates(kernels, module, direct, executed_ops)
    if not ops:
        return [None] * len(kernels)
    keys = [kernel_key(i.name) for i in ops]
    plan: list[str | None] = []
    at, taken = 0, set()
    for kernel in kernels:
        j = _place(keys, kernel, at, taken)
        if j is None:  # (every op has its kernel: the buffer's next execution)
            at, taken = 0, set()
            j = _place(keys, kernel, at, taken)
        if j is None:
            plan.append(None)
            continue
        if not kernel.startswith("Memset"):
            taken.add(j)
        at = j
        plan.append(ops[j].name)
    return plan


def _place(keys: list[str], kernel: str, at: int, taken: set[int]) -> int | None:
    """The op from `at` on named as the kernel is, else (a library kernel, or one XLA reuses
    under an earlier fusion's name) the first from `at` on with no kernel yet."""
    named = next((j for j in range(at, len(keys)) if keys[j] == kernel), None)
    return named if named is not None else next((j for j in range(at, len(keys)) if j not in taken), None)


def _wrapped(instr: Instruction, module: Module) -> Instruction:
    """An async start's kernel is the op it wraps (`fusion-start` runs its fusion, which is
    what XLA names when command buffers are off)."""
    if not instr.opcode.endswith("-start") or not instr.called_computations:
        return instr
    callee = module.by_name.get(instr.called_computations[0])
    root = callee.root if callee is not None else None
    return root if root is not None and root.opcode != "parameter" else instr


def _candidates(kernels: tuple[str, ...], module: Module, direct: set[str], executed_ops) -> list[Instruction]:
    """The ops, in schedule order, of the computation the buffer runs."""
    by_comp = {comp: [_wrapped(i, module) for i in instrs
                      if i.name not in direct and not i.opcode.endswith(ASYNC_LATER)]
               for comp, instrs in executed_ops(module).items()}
    names = set(kernels)
    best = max(by_comp, key=lambda c: (sum(kernel_key(i.name) in names for i in by_comp[c]),
                                       module.entry is not None and c == module.entry.name), default=None)
    return by_comp.get(best, []) if best is not None else []
