"""Temporaries XLA's buffer assignment places in an output's buffer before the output is
written (hloscope.cost.liveness calls this once the entry computation is walked).

The output allocation is not in the temporaries' heap, and a value that fits in it and ends
before the output is defined shares it, largest values first, as XLA assigns them: an FSDP
stack's per-layer activations all live in its output, and so does a loop body's temporary
when the loop runs before the output is made (a chunked loss's 256 MiB logits block, inside
the loop that runs before the gradient's buffer is allocated).
"""

from __future__ import annotations

import bisect
from itertools import compress
from dataclasses import replace
from typing import Any

from hloscope._speed import native
from hloscope.cost.sharing import RUN, alias_pairs, first_fit, leaf_offset

_Walk = Any  # (hloscope.cost.liveness._Walk: one computation's buffers over its schedule)


def callee_peak(walks: list[_Walk]) -> dict[int, int]:
    """The most any of the called computations holds at once, per memory space."""
    peaks: dict[int, int] = {}
    for walk in walks:
        for space, n in walk.peak_per_space().items():
            peaks[space] = max(peaks.get(space, 0), n)
    return peaks


def place_in_outputs(walk: _Walk) -> None:
    """Mark as "in output" the temporaries (the entry's, and those of the computations its
    loops and calls run, each as if alive for its caller's whole step) that fit in an
    output's buffer while it is free; the callees' peaks are then taken again.

    The outputs are tried in two orders, and the one that leaves the lower peak is kept: in
    the order they are returned, and the output written last first (free longest). XLA's
    assignment does either on real compiles: examples/mlp.py's step on v5p puts the first
    gradient's all-reduce result into the buffer of the output written last, after a
    temporary the earlier output could not hold (in output order it had no room: +19%), and
    the wide transformer's step keeps the output order (the other leaves 24 MiB more live
    than XLA's own peak_memory_in_bytes)."""
    donated = _donated_outputs(walk)  # (the parameter's buffer: occupied from the start)
    ids = [k for k, b in enumerate(walk.buffers) if b.kind == "output" and b.space == 0
           and b.bytes and k not in donated]
    if not ids:
        return
    outputs = [walk.buffers[k] for k in ids]
    temps = [(b, b) for b in walk.buffers if b.kind == "temp" and b.space == 0 and b.bytes]
    for step, walks in walk.callees.items():  # (a callee's temporary, seen from its caller)
        temps += [(replace(b, defined=step, last_use=step), b) for w in walks for b in w.buffers
                  if b.kind == "temp" and b.space == 0 and b.bytes]
    temps.sort(key=lambda t: t[0].defined)  # (then largest first: the sort is stable)
    temps.sort(key=lambda t: t[0].bytes, reverse=True)
    whiles = _whiles(walk)
    held = [_held(walk, k, whiles) for k in ids]
    number = {id(b): k for k, b in enumerate(walk.buffers)}
    spec = _spec(temps, number)  # (the core's view of them: made once for both orders)
    delta = walk.deltas(0)[0]
    best = None
    for order in (range(len(outputs)), sorted(range(len(outputs)), key=lambda k: -outputs[k].defined)):
        placed, moved = _assign(outputs, temps, list(order), held, ids, number, walk.touching, spec)
        saved = {step: walk.inner[step] for step in moved}  # (a moved step runs a callee: its peaks)
        _apply(walk, placed, moved, "in output")
        peak = _hbm_peak(walk, delta, [t for t in placed if id(t) in number])
        _apply(walk, placed, (), "temp")
        walk.inner.update(saved)
        if best is None or peak < best[0]:
            best = (peak, placed, moved)
    _apply(walk, best[1], best[2], "in output")


def _hbm_peak(walk: _Walk, delta: list[int], own: list) -> int:
    """The HBM peak live_per_space(0) gives once the walk's own temporaries `own` are in
    outputs (their deltas taken from `delta`, the walk's HBM deltas before any is placed),
    the callees' peaks as they now are: not a pass over every buffer per order tried."""
    if own:
        n = len(delta) - 1
        delta = delta.copy()
        for b in own:
            delta[b.defined] -= b.bytes
            delta[min(b.last_use, n - 1) + 1] += b.bytes
    return max(walk.live(0, delta), default=0)


def _whiles(walk: _Walk) -> list[int]:
    """The steps of the walked computation that run a loop, in order."""
    return [s for s, i in enumerate(walk.comp.instructions) if i.opcode == "while"]


def _held(walk: _Walk, k: int, whiles: list[int] | None = None) -> list[tuple[int, int]]:
    """The step ranges an output's buffer is taken before the output is made: from where a
    value written in place into it (a chain of in-place results) was made, but for the steps
    of the loops that carry that value as their state (inside the body, the state's buffer
    is free between the old value's last read and the new one's write: XLA puts the body's
    temporaries there)."""
    output = walk.buffers[k]
    start, value = walk.held_from.get(k, (output.defined, k))
    if whiles is None:
        whiles = _whiles(walk)
    within = whiles[bisect.bisect_left(whiles, start):bisect.bisect_left(whiles, output.defined)]
    loops = [s for s in within if value in walk.values[walk.comp.instructions[s].name]]
    ranges, first = [], start
    for s in loops + [output.defined]:
        if first < s:
            ranges.append((first, s - 1))
        first = s + 1
    return ranges


def _assign(outputs: list, temps: list, order: list[int], held: list[list[tuple[int, int]]],
            ids: list[int] | None = None, number: dict[int, int] | None = None,
            touch: set[tuple[int, int]] | frozenset = frozenset(),
            spec: list[tuple[int, int, int, int]] | None = None) -> tuple[list, set[int]]:
    """The temporaries placed (largest first, each in the first output in `order` that is
    written after it ends and has room over its steps), and the steps whose callees gave one
    up. In the compiled core (`hloscope_native.place`, native/src/place.rs) where it is
    built: on a 30 MB training step this loop was half of lint's time; `assign_plain` is
    the same in Python, the plain route (HLOSCOPE_PLAIN=1), tested equal to it; `spec`:
    `_spec(temps, number)` where already made."""
    core = native()
    if core is None or ids is None or number is None or not hasattr(core, "place"):
        return assign_plain(outputs, temps, order, held, ids, number, touch)
    try:
        flags = core.place([o.bytes for o in outputs], [o.defined for o in outputs], held, ids, order,
                           spec if spec is not None else _spec(temps, number), set(touch), RUN)
    except OverflowError:  # (a buffer of 2**63 bytes or more: the core's integers hold less)
        return assign_plain(outputs, temps, order, held, ids, number, touch)
    fits = list(compress(temps, flags))  # (few: those placed)
    return [t for _, t in fits], {seen.defined for seen, t in fits if seen is not t}


def _spec(temps: list, number: dict[int, int]) -> list[tuple[int, int, int, int]]:
    """Each temporary as the core's `place` takes it: (bytes, first step, last step, buffer
    id, or -1 for a callee's)."""
    return [(seen.bytes, seen.defined, seen.last_use, number.get(id(t), -1) if seen is t else -1)
            for seen, t in temps]


def assign_plain(outputs: list, temps: list, order: list[int], held: list[list[tuple[int, int]]],
                 ids: list[int] | None = None, number: dict[int, int] | None = None,
                 touch: set[tuple[int, int]] | frozenset = frozenset()) -> tuple[list, set[int]]:
    """`_assign` in Python (the specification of native/src/place.rs)."""
    # per output, the step ranges of the values placed in it, kept sorted by start (they
    # never overlap, so a new range fits when it ends before the next one starts and
    # starts after the one before ends); the output itself holds [defined, forever), and a
    # chain written in place into it the ranges `held` says
    starts: list[list[int]] = [[a for a, _ in h] + [o.defined] for o, h in zip(outputs, held)]
    ends: list[list[int]] = [[b for _, b in h] + [1 << 62] for h in held]
    # (the buffer of each range, for the pairs in `touch`: an output's own, -1 for a held one)
    owners = [[-1] * len(h) + [k] for h, k in zip(held, ids)] if ids is not None else None
    defined = [o.defined for o in outputs]
    rank = {k: r for r, k in enumerate(order)}
    by_size = sorted(range(len(outputs)), key=lambda k: -outputs[k].bytes)
    eligible: list[int] = []  # the outputs big enough for the temporaries so far, by rank
    runs: list[tuple[int, list[int]]] = []  # eligible in runs, with their latest definition
    added = 0
    placed, moved = [], set()
    for seen, t in temps:  # (largest first: eligible only grows)
        grew = added
        while added < len(by_size) and outputs[by_size[added]].bytes >= seen.bytes:
            bisect.insort(eligible, by_size[added], key=rank.__getitem__)
            added += 1
        if added > grew:
            runs = [(max(defined[k] for k in run), run)
                    for run in (eligible[i:i + RUN] for i in range(0, len(eligible), RUN))]
        me = number.get(id(t), -1) if number is not None and seen is t else -1  # (a callee's: no pairs)
        if first_fit(seen.defined, seen.last_use, runs, defined, starts, ends, owners, me, touch):
            placed.append(t)
            if seen is not t:
                moved.add(seen.defined)
    return placed, moved


def _apply(walk: _Walk, placed: list, moved, kind: str) -> None:
    for t in placed:
        t.kind = kind
    for step in moved:
        walk.inner[step] = callee_peak(walk.callees[step])


def _donated_outputs(walk: _Walk) -> set[int]:
    """Buffer ids of the root's leaves the module header aliases to a parameter."""
    root = walk.comp.root
    ids = walk.values[root.name]
    out = set()
    for out_index, _, _ in alias_pairs(walk.module.input_output_alias):
        at = leaf_offset(root.shape, out_index)
        if at is not None and at < len(ids) and ids[at] >= 0:
            out.add(ids[at])
    return out
