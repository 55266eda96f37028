"""`hloscope stats` from the compiled pass (native/src/check.rs and count.rs), with no
`Instruction` made per line: the pass checks what `validate` checks (the value checks run
here once per distinct signature, as hloscope.parser.fast.checks does) and counts what the
stats read; Python then reads only what the counts cannot hold: the module headers and debug
tables (through the same line scanner as the parse), custom calls, commented lines and the
few largest buffers' metadata.

The same records as `stats(module)` of the parsed module, or None whenever that is not
certain (the pass gives up, a line Python would read otherwise, any check that fails or
raises): the caller then parses the file as usual, and reports its error where it has one.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from typing import Any

from hloscope.cost.flops import custom_call_flop_gap
from hloscope.cost.layout import memory_leaves, memory_space_name
from hloscope.cost.library import is_library_call
from hloscope.cost.memory import _NOT_ALLOCATED, memory_total
from hloscope.ir import Instruction, Module
from hloscope.ir.opcodes import ASYNC_LATER
from hloscope.parser.asyncs import shorthand_start
from hloscope.parser.fast.beside import Beside, count_level
from hloscope.parser.fast.checks import (
    _fails,
    _problem,
    _shape,
    chained,
    decided_fails,
    read_alike,
    stubs,
)
from hloscope.parser.fast.native import available
from hloscope.parser.fast.patterns import CONTROL, literal_ok
from hloscope.parser.fast.scan import _Lines, scan_instruction
from hloscope.parser.files import MAX_NESTING
from hloscope.parser.reader import READER
from hloscope.parser.text import nesting_beyond, strip_comments, walk_lines_with
from hloscope.parser.validate import VALUE_CHECKED, _header
from hloscope.source import tables_of, unresolved_source
from hloscope.stats.counts import _as_json, stats_total


class _Unsure(Exception):
    """The counts cannot stand for the parsed module's: parse it."""


def stats_of_text(text: str, path: str, every: bool,
                  beside: Beside | None = None) -> list[dict[str, Any]] | None:
    """The stats records of every module of `text` (as `ModuleStats.to_dict()` holds them;
    `every`: with the per-computation list), or None (the caller parses the text).
    `beside`: the pass, started already at the level `every` asks (`count_level`)."""
    native = available()
    if native is None or not hasattr(native, "line_texts"):
        if beside is not None:
            beside.answer()  # (joined: the caller may fork next)
        return None
    # the pass runs without the interpreter lock: meanwhile this core reads the commented
    # lines, which the parse's line scanner reads and the pass hands back to compare
    if beside is None or beside.level != count_level(every):
        if beside is not None:
            beside.answer()  # (another level's: not this run's)
        beside = Beside(text, count_level(every))
    early = _commented_lines(native, text)
    found = beside.answer()
    if found is None:
        return None
    why, seen, signatures, rewritten, counted, decided = found[:6]
    if why is not None or counted is None or any(shorthand_start(entry[0]) for entry in decided) \
            or any(chained(entry[4]) for entry in rewritten):
        # (a shorthand start: the parse adds the computation it wraps; an async op on a
        # line read again: its chain's checks read its operands' opcodes, not at hand)
        return None
    try:
        return _records(native, text, path, every, seen, signatures, decided, rewritten,
                        counted, early)
    except Exception:  # noqa: BLE001 - anything unexpected: the parse decides
        return None


def _commented_lines(native, text: str) -> dict[int, Instruction | None]:
    """Each line with a `/*` comment read as the parse reads it (None where it takes none):
    line number -> Instruction. The compiled reader takes most (comments out, as the line
    scanner takes them); the line scanner reads the rest."""
    # (one pass in the core where built: str.find stops at every `/` of the file paths)
    found = native.lines_with(text, "/*") if hasattr(native, "lines_with") else walk_lines_with(text, "/*")
    return _as_parsed(native, [line for line, _ in found], [raw for _, raw in found])


def _as_parsed(native, where: list[int], raws: list[str]) -> dict[int, Instruction | None]:
    """Lines (numbers, texts) read as the parse reads them: by the compiled reader where it
    takes them (comments out), else by the line scanner; None where neither does."""
    items = native.lines("\n".join(raws)) if raws else []
    return {line: _read(item, line, "") if item.__class__ is tuple and len(item) == 11
            else _scanned_line(raw, line)
            for line, raw, item in zip(where, raws, items)}


def _scanned_line(raw: str, line: int) -> Instruction | None:
    """One instruction line as the line scanner reads it (comments out), or None."""
    s = strip_comments(raw)
    if (len(s) > MAX_NESTING and nesting_beyond(s, MAX_NESTING) is not None) or CONTROL.search(s):
        return None  # (the line scanner leaves it to the grammar)
    try:
        return scan_instruction(s, line, "")
    except Exception:  # noqa: BLE001 - not one it takes (or not whole): the parse decides
        return None


def _records(native, text: str, path: str, every: bool, seen, signatures, decided, rewritten,
             counted, early: dict[int, Instruction | None]) -> list[dict[str, Any]]:
    counts, outside, headers, shape_texts, typed, literals = counted
    modules = _skeletons(native, text, path, outside, headers)
    if len(modules) != len(seen) or len(counts) != len(seen):
        raise _Unsure
    for module in modules:
        _header(module, text)
    shapes: dict[str, Any] = {}
    # the parse reads every shape (instructions', typed operands', headers' parameters and
    # results, as PARAM_ITEM finds them): one that fails, fails it
    for t in (*shape_texts, *typed):
        _shape(t, shapes)
    for lit in literals:
        if not literal_ok(lit.strip()):
            raise _Unsure
    if any(_fails(sig, shapes) for sig in signatures) or any(
            decided_fails(entry, shapes) for entry in decided):
        raise _Unsure
    reread = _reread(native, text, seen, rewritten, shapes, early)
    return [_record(native, text, module, comps, count, every, shapes, reread)
            for module, comps, count in zip(modules, seen, counts)]


def _skeletons(native, text: str, path: str, outside: list[int],
               headers: list[int]) -> list[Module]:
    """The modules (name, header attributes, debug tables, no computations) as the line
    scanner reads the lines outside the computations, in order; a computation between two
    of them ends a debug table there, as it does in the parse."""
    lines = _Lines(path)
    at = 0
    for lineno, raw in zip(outside, native.line_texts(text, outside)):
        while at < len(headers) and headers[at] < lineno:
            lines.section = None
            at += 1
        lines.feed([raw], lineno)
    if lines.pending is not None or lines.comp is not None:
        raise _Unsure
    return lines.modules


def _reread(native, text: str, seen, rewritten, shapes,
            early: dict[int, Instruction | None]) -> dict[int, Instruction]:
    """The lines the pass read rewritten (comments out, single quotes doubled) read as the
    parse reads them (the line scanner; `early`: the commented ones, read already), each
    the instruction the pass read, their values checked: line -> Instruction."""
    from hloscope.stats.counts import _kind

    out: dict[int, Instruction] = {}
    late = [r[2] for r in rewritten if r[2] not in early]
    read = _as_parsed(native, late, native.line_texts(text, late))
    for r in rewritten:
        m, c, line, _, opcode, _, operands, _, _, _, operand_shapes, kind = r
        instr = early[line] if line in early else read[line]
        if instr is None or not read_alike(instr, r):
            raise _Unsure
        instr.computation = seen[m][c][0]
        if opcode == "fusion" and _kind(instr) != kind:
            raise _Unsure
        if opcode in VALUE_CHECKED and _problem(instr, stubs(operands, operand_shapes, shapes)):
            raise _Unsure
        out[line] = instr
    return out


def _instructions(native, text: str, where: list[tuple[int, str]],
                  reread: dict[int, Instruction]) -> list[Instruction]:
    """The instructions of lines (line, computation), as the parse builds them."""
    raws = native.line_texts(text, [line for line, _ in where])
    items = native.lines("\n".join(raws)) if raws else []  # (one call: a line each)
    out = []
    for (line, comp), item in zip(where, items):
        instr = reread.get(line) or (_read(item, line, comp) if item.__class__ is tuple
                                     and len(item) == 11 else None)
        if instr is None:
            raise _Unsure
        out.append(instr)
    return out


def _read(item: tuple, line: int, comp: str) -> Instruction | None:
    """The instruction of the compiled reader's fields, as the parse builds it (None: a
    literal the parse refuses)."""
    _, indent, root, name, shape_text, opcode, operands, literal, attr_text, typed, calls = item
    if literal is not None:
        literal = literal.strip()
        if not literal_ok(literal):
            return None
    return Instruction(name, opcode, shape_text, operands, typed or (None,) * len(operands), None,
                       literal, root, line, indent + 1, comp, None, attr_text, READER, calls)


def _record(native, text: str, module: Module, comps, count, every: bool, shapes,
            reread) -> dict[str, Any]:
    opcodes, kinds, custom_calls, groups, fused_names, per = count
    fused = frozenset(fused_names)
    entry = next((name for name, is_entry, _ in comps if is_entry), comps[-1][0] if comps else None)
    targets: dict[int, Counter] = {}  # computation -> its custom calls' targets
    uncosted = 0
    called = _instructions(native, text, [(line, comps[k][0]) for k, line in custom_calls], reread)
    for (k, _), instr in zip(custom_calls, called):
        targets.setdefault(k, Counter())[str(instr.attr("custom_call_target"))] += 1
        uncosted += bool(custom_call_flop_gap(instr) and not is_library_call(instr))
    total_targets: Counter = Counter()
    for k in sorted(targets):
        total_targets.update(targets[k])
    per_comp = [{"name": name, "is_entry": name == entry, "is_fusion": name in fused,
                 **_as_json(n, Counter(dict(ops)), Counter(dict(kind_counts)),
                            targets.get(k, Counter()))}
                for k, ((name, _, n), (ops, kind_counts)) in enumerate(zip(comps, per))
                ] if every else []
    part = {"computations": len(comps), "instructions": sum(n for _, _, n in comps),
            "opcodes": dict(opcodes), "kinds": dict(kinds), "targets": dict(total_targets),
            "uncosted_custom_calls": uncosted, "per_computation": per_comp}
    record = stats_total(module.name, module.path, fused, [part])
    record["memory"] = memory_total([_memory(native, text, module, groups, shapes, reread)])
    return record


def _memory(native, text: str, module: Module, groups, shapes, reread, top: int = 5) -> dict:
    """cost.memory.memory_part of the module, from the groups of the computations no
    fusion calls."""
    per_space: dict[str, int] = defaultdict(int)
    waste = logical = 0
    buffers = []
    for opcode, shape_text, carried, n, smallest in groups:
        if opcode in _NOT_ALLOCATED or not shape_text or opcode.endswith(ASYNC_LATER):
            continue
        shape = _shape(shape_text, shapes)
        if opcode.endswith("-start") and shape.is_tuple:
            # the result tuple carries the operands back: only new buffers count
            inputs = {_shape(t, shapes) for t in carried}
            shape = type(shape)("tuple",
                                elements=tuple(e for e in shape.elements if e not in inputs))
        for leaf in memory_leaves(shape):
            space = memory_space_name(leaf.memory_space)
            per_space[space] += leaf.padded_bytes * n
            waste += leaf.waste_bytes * n
            logical += leaf.logical_bytes * n
            buffers.extend((-leaf.padded_bytes, comp, name, leaf.shape, leaf.ratio, line)
                           for comp, name, line in smallest)
    largest = heapq.nsmallest(top, buffers)
    tables = tables_of(module)
    found = _instructions(native, text, [(b[5], b[1]) for b in largest], reread)
    return {"per_space": dict(per_space), "waste": waste, "logical": logical,
            "largest": [(*b[:5], unresolved_source(instr)) for b, instr in zip(largest, found)],
            "tables": tables if any(tables) else None}
