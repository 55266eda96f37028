"""Module-level memory facts: bytes per memory space, padding waste, largest buffers."""

from __future__ import annotations

import heapq
from collections import defaultdict

from hloscope.cost.layout import memory_leaves, memory_space_name
from hloscope.ir import Computation, Module
from hloscope.ir.opcodes import ALIASING, ASYNC_LATER
from hloscope.source import resolve, tables_of, unresolved_source

# Results that allocate no buffer: aliases, and parameters (the caller's buffers).
_NOT_ALLOCATED = ALIASING | {"parameter"}


def memory_facts(module: Module, top: int = 5) -> dict:
    return memory_total([memory_part(module.computations, module.fusion_computations(), top,
                                     tables_of(module))], top)


def memory_part(comps: list[Computation], fused: frozenset[str], top: int = 5,
                tables: tuple | None = None) -> dict:
    """The memory facts of some of a module's computations (plain data: it may come from
    another process), for memory_total; `fused` is the whole module's; `tables` the
    stack-frame tables when this part holds them."""
    per_space: dict[str, int] = defaultdict(int)
    waste = 0
    logical = 0
    buffers = []
    # shape text (and, for async starts, the operands' shape texts) -> its leaves' facts:
    # dumps repeat a few shapes thousands of times
    by_text: dict[str | tuple[str, ...], list[tuple]] = {}
    for comp in comps:
        if comp.name in fused:
            continue
        for instr in comp.instructions:
            if instr.opcode in _NOT_ALLOCATED or not instr.shape_text or instr.opcode.endswith(ASYNC_LATER):
                continue  # (an async done or update names the buffer its start allocated)
            start = instr.opcode.endswith("-start")
            key = (instr.shape_text, *[comp[o].shape_text for o in instr.operands if o in comp]
                   ) if start else instr.shape_text
            facts = by_text.get(key)
            if facts is None:
                shape = instr.shape
                if start and shape.is_tuple:
                    # the result tuple carries the operands back: only new buffers count
                    inputs = {comp[o].shape for o in instr.operands if o in comp}
                    shape = type(shape)("tuple", elements=tuple(e for e in shape.elements
                                                              if e not in inputs))
                facts = by_text[key] = [
                    (memory_space_name(leaf.memory_space), leaf.padded_bytes, leaf.waste_bytes,
                     leaf.logical_bytes, leaf.shape, leaf.ratio) for leaf in memory_leaves(shape)]
            for space, padded, wasted, logical_bytes, text, ratio in facts:
                per_space[space] += padded
                waste += wasted
                logical += logical_bytes
                buffers.append((-padded, comp.name, instr.name, text, ratio))
    largest = heapq.nsmallest(top, buffers)  # biggest first, then by name
    by_name = {c.name: c for c in comps}
    return {"per_space": dict(per_space), "waste": waste, "logical": logical,
            "largest": [(*b, unresolved_source(by_name[b[1]][b[2]])) for b in largest],
            "tables": tables if tables is not None and any(tables) else None}


def hbm_upper_bound(module: Module, chip=None) -> int:
    """A bound the static HBM peak (liveness.memory's hbm_bytes) cannot exceed, without its
    walk: every HBM leaf of every result in the computations the walk visits (the entry and
    what its loops, calls and conditionals run, each once) live at once, and the output
    tuple's index table (`tuple_table_bytes`, which the walk adds where layouts are tiled). Each buffer the walk counts (an argument, an
    output, a temporary, a callee's at its caller's step) is one such leaf at most, once;
    aliasing only takes bytes off. A rule judging the peak against a capacity need not walk
    a module this bound already keeps under it."""
    entry = module.entry
    if entry is None:
        return 0
    total = 0
    for comp in module.control_flow_computations():
        for instr in comp.instructions:
            for leaf in memory_leaves(instr.shape):
                if leaf.memory_space == 0:
                    total += leaf.padded_bytes
    root = entry.root
    if root is not None and root.shape.is_tuple:
        total += tuple_table_bytes(root.shape, chip)
    return total


def tuple_table_bytes(shape, chip=None) -> int:
    """An output tuple's index table: 4 bytes per element, in the chip's allocation unit (as
    XLA's memory_analysis counts it: 512 bytes on v5e, 32 on v5p)."""
    unit = getattr(chip, "tuple_table_alignment", None) or 512
    return -(-4 * len(shape.elements) // unit) * unit


def memory_total(parts: list[dict], top: int = 5) -> dict:
    """memory_facts from the parts of a module's computations."""
    per_space: dict[str, int] = defaultdict(int)
    for part in parts:
        for space, n in part["per_space"].items():
            per_space[space] += n
    largest = heapq.nsmallest(top, [tuple(b) for p in parts for b in p["largest"]])
    tables = next((p["tables"] for p in parts if p.get("tables")), ({}, {}, {}, {}))
    return {
        "bytes_per_memory_space": dict(sorted(per_space.items())),
        "logical_bytes": sum(p["logical"] for p in parts),
        "padding_waste_bytes": sum(p["waste"] for p in parts),
        "largest_buffers": [
            {"computation": c, "instruction": n, "shape": s, "padded_bytes": -b, "ratio": round(r, 3),
             **_source_fields(resolve(tuple(raw), tables))}
            for b, c, n, s, r, raw in largest
        ],
    }


def _source_fields(src) -> dict:
    return {"op_name": src.op_name, "source": src.location}
