"""A forked helper process and the pipe pair to talk to it (plain data, by marshal).

Used only where process.may_fork() says fork is safe; the caller keeps a serial path
for every other case and for any failure.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hloscope._speed.nogc import no_cyclic_gc


class Peer:
    """One end of a two-way channel to the other process."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd

    def send(self, value: Any) -> None:
        data = marshal.dumps(value)
        view = memoryview(len(data).to_bytes(8, "little") + data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def receive(self) -> Any:
        return marshal.loads(self._exactly(int.from_bytes(self._exactly(8), "little")))

    def _exactly(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = os.read(self.read_fd, min(n - got, 1 << 20))
            if not chunk:
                raise EOFError("the other process left")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)


@contextmanager
def forked(child: Callable[[Peer], None]) -> Iterator[Peer]:
    """Run child(peer) in a forked process (which then leaves at once, whatever happens)
    and yield this side's peer; on leaving the block the pipes close and the child is
    reaped. The cyclic collector is paused on both sides meanwhile."""
    to_parent, from_child = os.pipe()[::-1]
    from_parent, to_child = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
        os.close(from_child)
        os.close(to_child)
        try:
            with no_cyclic_gc():
                child(Peer(from_parent, to_parent))
        except BaseException:  # noqa: BLE001 - a parent gone away: nothing to tell
            pass
        finally:
            os._exit(0)
    os.close(to_parent)
    os.close(from_parent)
    try:
        with no_cyclic_gc():
            yield Peer(from_child, to_child)
    finally:
        os.close(from_child)
        os.close(to_child)
        os.waitpid(pid, 0)
