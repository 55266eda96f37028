"""Parsing with the cyclic garbage collector paused.

Parsing allocates hundreds of thousands of objects that hold no reference cycles (parse
trees, instructions, shapes); the collector re-traverses all of them each time the heap
grows, which costs 10% of a fast parse and more than half of a strict one. In the CLI's
own process, what was made while it was paused is then left out of its walks for good
(keep_out_of_gc): else the first young collection after the pause walks all of it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from hloscope._speed import enabled


_one_shot = {"on": False}  # (the CLI's own process: it ends with the command)


def one_shot() -> None:
    """This process is the CLI's own (hloscope._speed.process.run_command): it ends with
    the command, so keep_out_of_gc may freeze what it holds."""
    _one_shot["on"] = True


def keep_out_of_gc() -> None:
    """In the CLI's own process with the tricks on, what the process holds now is left out
    of the cyclic collector's walks (`gc.freeze`): called as the collector comes back on
    after a pause (a scan, or a forked child's checks), whose objects the first young
    collection would otherwise walk all of (72 ms of `lint` on the 31 MB dump, 22 ms of
    `memory` on Mixtral). Frozen objects are still freed by reference counting; a library
    caller's process, or a long-lived worker's, is left as it is."""
    if enabled() and _one_shot["on"]:
        gc.freeze()


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector off inside the block (restored after; nests). Plain: as is."""
    was_enabled = gc.isenabled()
    if enabled():
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            keep_out_of_gc()
            gc.enable()
