"""`stats` of one large module on two cores (speed only: off with HLOSCOPE_PLAIN=1, see
hloscope._speed; the result always equals the one-process count, which is tested).

The text is split at a computation boundary near its middle line. A forked child
parses and checks the second half while this process does the first; each then counts
its own computations (hloscope.summary.stats_part, hloscope.cost.memory.memory_part)
and only those counts cross between the processes, as plain data. What one half needs
of the other is exchanged first: the computation names (calls across the halves are
checked against both), which computations fusions call, and which is the entry.

Anything unexpected in either half (a line the fast scan leaves to the grammar, any
error, a call to a computation neither half has) and the caller parses the whole text
in one process as usual: results and errors are always those of the serial path.
"""

from __future__ import annotations

from typing import Any

from hloscope._speed.fork import Peer, forked
from hloscope._speed.process import may_fork
from hloscope.cost.memory import memory_part, memory_total
from hloscope.ir.opcodes import async_shorthand
from hloscope.parser.split import split_point
from hloscope.source import tables_of
from hloscope.stats.counts import stats_part, stats_total

# Below this the fork and the exchange cost more than the second core saves.
MIN_CHARS = 2 << 20


class _Calls:
    """The computation names of a module as one half sees them: a called name the half
    lacks is noted (the other half may have it) instead of failing the check."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names)
        self.elsewhere: set[str] = set()

    def __contains__(self, name: object) -> bool:
        if name not in self.names:
            self.elsewhere.add(str(name))
        return True


def _half(text: str, path: str, first_line: int) -> tuple[Any, dict]:
    """Scan and check one half: (its module, what the other half needs of it). Raises
    on anything the serial path would treat otherwise."""
    from hloscope.parser.fast.native import available, scan_native
    from hloscope.parser.fast.scan import scan_text
    from hloscope.parser.validate import check_module

    native = available()  # (the compiled line reader where it is built, as the serial parse)
    modules = (scan_native(native, text, path, first_line) if native is not None
               else scan_text(text, path, first_line))
    if len(modules) != 1:
        raise ValueError("not one module")
    module = modules[0]
    if any(async_shorthand(op) for op in module.opcodes()):
        raise ValueError("async shorthand")  # (its wrapped computations are made whole-module)
    names = [c.name for c in module.computations]
    calls = _Calls(names)
    check_module(module, text, calls)  # (the second half's module has no header to check)
    entry = next((c.name for c in module.computations if c.is_entry), None)
    return module, {"names": names, "elsewhere": sorted(calls.elsewhere), "entry": entry,
                    "fused": sorted(module.fusion_computations())}


def _child(text: str, path: str, first_line: int, every: bool, parent: Peer) -> None:
    """The second half's side of the exchange."""
    try:
        module, facts = _half(text, path, first_line)
    except BaseException:  # noqa: BLE001 - the parent parses the whole for the error
        parent.send(None)
        return
    parent.send(facts)
    shared = parent.receive()  # (fused, entry) of the whole module, or None: stop
    if shared is not None:
        fused, entry = frozenset(shared[0]), shared[1]
        parent.send((stats_part(module.computations, fused, entry, every),
                     memory_part(module.computations, fused, tables=tables_of(module))))


def stats_in_halves(text: str, path: str, every: bool) -> list[dict] | None:
    """[{**module_stats(m, every), "memory": memory_facts(m)}] for the module of `text`,
    counted on two cores; None when that does not apply (the caller goes serial)."""
    if len(text) < MIN_CHARS or not may_fork():
        return None
    split = split_point(text, by_lines=True)  # (the scan's cost goes by lines)
    if split is None:
        return None
    first_line = text.count("\n", 0, split) + 1
    try:  # (the second half is sliced in the child: the parent never holds that copy)
        with forked(lambda parent: _child(text[split:], path, first_line, every, parent)) as child:
            return _parent(text[:split], path, every, child)
    except Exception:  # noqa: BLE001 - any trouble: the serial path says what
        return None


def _parent(text: str, path: str, every: bool, child: Peer) -> list[dict] | None:
    try:
        module, mine = _half(text, path, 1)
    except Exception:  # noqa: BLE001
        child.send(None)
        return None
    theirs = child.receive()
    if theirs is None:
        return None
    names = set(mine["names"])
    # a call from the first half to the second is to a computation defined after it: the
    # serial path says so
    if names & set(theirs["names"]) or mine["elsewhere"] or not set(theirs["elsewhere"]) <= names:
        child.send(None)
        return None
    fused = frozenset(mine["fused"]) | frozenset(theirs["fused"])
    # XLA takes the last computation when none is marked ENTRY
    entry = mine["entry"] or theirs["entry"] or (theirs["names"] or mine["names"])[-1]
    child.send((sorted(fused), entry))
    stats, memory = (stats_part(module.computations, fused, entry, every),
                     memory_part(module.computations, fused, tables=tables_of(module)))
    their_stats, their_memory = child.receive()
    return [{**stats_total(module.name, module.path, fused, [stats, their_stats]),
             "memory": memory_total([memory, their_memory])}]
