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

from hloscope._speed.nogc import keep_out_of_gc, no_cyclic_gc


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


def before_exit(work: Callable[[], None]) -> bool:
    """For a process about to leave (hloscope._speed.process.run_command's last step): run
    work() in a forked child and return True at once, without waiting for it (when this
    process leaves, the child passes to init, which reaps it); or return False when this
    process may not fork (the caller then does the work itself). The child's standard
    streams go to /dev/null, so a reader of this process's output does not wait for it.
    Never from a process that goes on: its children would stay unreaped."""
    from hloscope._speed.process import may_fork

    if not may_fork():
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            with no_cyclic_gc():
                work()
        except BaseException:  # noqa: BLE001 - nobody to tell: the work is an optimisation
            pass
        finally:
            os._exit(0)
    return True


class Ahead:
    """`work()` (checks that only raise) run in a forked child while this process goes on,
    on the second core; `passed()` waits for the child and says whether work() returned.

    The plain path (tricks off, or may_fork() says no, or fork fails) runs work() at
    once, in this process, so its exception is raised from the constructor as if called
    directly. With a child, a False from passed() leaves the caller to run work() itself
    to raise the error (the child's exception does not cross; nor does anything work()
    builds). The cyclic collector is paused here until passed() is called: a collection
    would touch every object of the shared heap and copy it page by page.
    """

    def __init__(self, work: Callable[[], None]) -> None:
        from hloscope._speed.process import may_fork

        self.pid: int | None = None
        self.verdict = True
        self.gc_was_enabled = False
        if may_fork():
            import gc

            read_fd, write_fd = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                os.close(read_fd)
                os.close(write_fd)
            else:
                if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
                    os.close(read_fd)
                    answer = b"0"
                    try:
                        gc.disable()
                        work()
                        answer = b"1"
                    except BaseException:  # noqa: BLE001 - the parent runs work() to raise it
                        pass
                    finally:
                        try:
                            os.write(write_fd, answer)
                        finally:
                            os._exit(0)
                os.close(write_fd)
                self.pid, self.read_fd = pid, read_fd
                self.gc_was_enabled = gc.isenabled()
                gc.disable()
                return
        work()

    def passed(self) -> bool:
        """Whether work() returned (waits for the child, once, and reaps it)."""
        if self.pid is not None:
            try:
                self.verdict = os.read(self.read_fd, 1) == b"1"  # b"": the child died
            finally:
                os.close(self.read_fd)
                os.waitpid(self.pid, 0)
                self.pid = None
                if self.gc_was_enabled:
                    import gc

                    keep_out_of_gc()  # (what was made while the collector was held off)
                    gc.enable()
        return self.verdict
