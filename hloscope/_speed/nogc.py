"""Parsing with the cyclic garbage collector paused.

Parsing allocates hundreds of thousands of objects that hold no reference cycles (parse
trees, instructions, shapes); the collector re-traverses all of them each time the heap
grows, which costs 10% of a fast parse and more than half of a strict one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from hloscope._speed import enabled


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
            gc.enable()
