"""`stats` of one large module on two cores.

The text is split at a computation boundary near its middle line. A forked child
parses and checks the second half while this process does the first; each then counts
its own computations (hloscope.summary.stats_part, hloscope.cost.memory.memory_part)
and only those counts cross between the processes, as plain data. What one half needs
of the other is exchanged first: the computation names (calls across the halves are
checked against both), which computations fusions call, and which is the entry.

Anything unexpected in either half (a line the fast scan leaves to the grammar, any
error, a call to a computation neither half has) and the caller parses the whole text
in one process as usual: results and errors are always those of the serial path
(tested). Fork is used only where it is safe: Linux, and a process with a single
thread, native ones included (a child of a threaded process may inherit held locks).
"""

from __future__ import annotations

import marshal
import os
from typing import Any

from hloscope.cost.memory import memory_part, memory_total
from hloscope.summary import stats_part, stats_total

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


def _alone() -> bool:
    """Whether this process has a single thread, native ones included (Linux's /proc)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _half(text: str, path: str, first_line: int) -> tuple[Any, dict]:
    """Scan and check one half: (its module, what the other half needs of it). Raises
    on anything the serial path would treat otherwise."""
    from hloscope.parser.scan import scan_text
    from hloscope.parser.validate import check_module

    modules = scan_text(text, path, first_line)
    if len(modules) != 1:
        raise ValueError("not one module")
    module = modules[0]
    names = [c.name for c in module.computations]
    calls = _Calls(names)
    check_module(module, text, calls)  # (the second half's module has no header to check)
    entry = next((c.name for c in module.computations if c.is_entry), None)
    return module, {"names": names, "elsewhere": sorted(calls.elsewhere), "entry": entry,
                    "fused": sorted(module.fusion_computations())}


def _send(fd: int, value: Any) -> None:
    data = marshal.dumps(value)
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int) -> Any:
    def exactly(n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = os.read(fd, min(n - got, 1 << 20))
            if not chunk:
                raise EOFError("the other process left")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    return marshal.loads(exactly(int.from_bytes(exactly(8), "little")))


def _child(text: str, path: str, first_line: int, every: bool, out: int, inp: int) -> None:
    """The second half's side of the exchange; never returns."""
    try:
        try:
            module, facts = _half(text, path, first_line)
        except BaseException:  # noqa: BLE001 - the parent parses the whole for the error
            _send(out, None)
            return
        _send(out, facts)
        shared = _receive(inp)  # (fused, entry) of the whole module, or None: stop
        if shared is not None:
            fused, entry = frozenset(shared[0]), shared[1]
            _send(out, (stats_part(module.computations, fused, entry, every),
                        memory_part(module.computations, fused)))
    except BaseException:  # noqa: BLE001 - a parent gone away: nothing to tell
        pass
    finally:
        os._exit(0)


def stats_in_halves(text: str, path: str, every: bool) -> list[dict] | None:
    """[{**module_stats(m, every), "memory": memory_facts(m)}] for the module of `text`,
    counted on two cores; None when that does not apply (the caller goes serial)."""
    if len(text) < MIN_CHARS or (os.cpu_count() or 1) < 2 or not _alone():
        return None
    from hloscope.parser.nogc import no_cyclic_gc
    from hloscope.parser.parallel import split_point

    split = split_point(text, by_lines=True)  # (the scan's cost goes by lines)
    if split is None:
        return None
    first_line = text.count("\n", 0, split) + 1
    to_parent, from_child = os.pipe()[::-1]
    from_parent, to_child = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(from_child)
        os.close(to_child)
        with no_cyclic_gc():
            _child(text[split:], path, first_line, every, to_parent, from_parent)
    os.close(to_parent)
    os.close(from_parent)
    try:
        with no_cyclic_gc():
            return _parent(text[:split], path, every, from_child, to_child)
    except Exception:  # noqa: BLE001 - any trouble: the serial path says what
        return None
    finally:
        os.close(from_child)
        os.close(to_child)
        os.waitpid(pid, 0)


def _parent(text: str, path: str, every: bool, from_child: int, to_child: int) -> list[dict] | None:
    try:
        module, mine = _half(text, path, 1)
    except Exception:  # noqa: BLE001
        _send(to_child, None)
        return None
    theirs = _receive(from_child)
    if theirs is None:
        return None
    names = set(mine["names"])
    if names & set(theirs["names"]) or \
            not set(mine["elsewhere"]) | set(theirs["elsewhere"]) <= names | set(theirs["names"]):
        _send(to_child, None)
        return None
    fused = frozenset(mine["fused"]) | frozenset(theirs["fused"])
    # XLA takes the last computation when none is marked ENTRY
    entry = mine["entry"] or theirs["entry"] or (theirs["names"] or mine["names"])[-1]
    _send(to_child, (sorted(fused), entry))
    stats, memory = (stats_part(module.computations, fused, entry, every),
                     memory_part(module.computations, fused))
    their_stats, their_memory = _receive(from_child)
    return [{**stats_total(module.name, module.path, fused, [stats, their_stats]),
             "memory": memory_total([memory, their_memory])}]
