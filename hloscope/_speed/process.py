"""Process-level settings: the collector's thresholds, leaving without teardown, and
whether work may go to a second process.

`run_command` is how the console entry runs a command: as mypy does, it makes the
cyclic garbage collector run far less often (a command allocates a few hundred thousand
objects, almost none in cycles) and leaves with `os._exit` after flushing, instead of
freeing a large parsed module object by object (~0.04 s for a 5 MB dump).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from hloscope._speed import enabled

_spawn = {"allowed": False}
_helpers = {"allowed": True}
_after_output: list[Callable[[], None]] = []  # run_command's work once the output is out


def allow_spawn(allowed: bool = True) -> None:
    """Say that this process's main module is guarded (`if __name__ == "__main__":`), so
    a spawned worker, which re-imports it, is safe. The CLI says so; a library caller may."""
    _spawn["allowed"] = allowed


def may_spawn() -> bool:
    """Whether a second process may be spawned for speed: allowed, tricks on, two cores,
    and a main module a worker can re-import (not one read from stdin)."""
    if not (_spawn["allowed"] and enabled() and (os.cpu_count() or 1) >= 2):
        return False
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.exists(main_file)


def no_helpers() -> None:
    """Say that this process starts no helper process for speed, for the rest of its life:
    it is one of several working side by side (a pool worker, a Dask task: the cores are
    taken), or its user asked for one process (`-j 1`)."""
    _helpers["allowed"] = False


# Native ids of helper threads joined already (parser.fast.beside.Beside): their work is
# done and they hold no lock, but the kernel may list them a moment longer while they exit.
_joined: set[str] = set()


def joined(native_id: int) -> None:
    """Note a helper thread that was joined: may_fork does not count it while it exits."""
    _joined.add(str(native_id))


def may_help() -> bool:
    """Whether this process may put a helper on a second core (a thread or a forked child):
    tricks on, two cores, helpers not refused (no_helpers: a pool worker, `-j 1`)."""
    return enabled() and (os.cpu_count() or 1) >= 2 and _helpers["allowed"]


def may_fork() -> bool:
    """Whether this process may fork a helper for speed: may_help, Linux, and a single
    thread, native ones included (a child of a threaded process may inherit held locks; a
    joined helper that is still exiting is not counted)."""
    if not may_help():
        return False
    try:
        tasks = set(os.listdir("/proc/self/task"))
    except OSError:
        return False
    _joined.intersection_update(tasks)  # (gone for good: forgotten, its id may come back)
    return len(tasks - _joined) == 1


def tune_gc() -> None:
    """With the tricks on, the cyclic collector runs rarely: a lint allocates millions of
    objects without cycles, and each young collection walks them again. For the CLI's
    process and for every worker that lints files (parallel or on Dask)."""
    import gc

    if enabled():
        gc.set_threshold(200_000, 30, 30)


def after_output(work: Callable[[], None]) -> None:
    """Have run_command do `work` after the command's output is flushed (the cache's
    deferred writes: see hloscope.cache.write_in_background)."""
    _after_output.append(work)


def one_blas_thread() -> None:
    """With the tricks on, numpy's OpenBLAS starts no thread of its own in this process
    (unless the user set OPENBLAS_NUM_THREADS): hloscope does no linear algebra (numpy
    comes in with jaxlib's MLIR bindings when kernels are decoded, and with jax for
    `compile`), and a second thread forbids may_fork."""
    if enabled() and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run_command(main: Callable[[], object]) -> int:
    """Run `main` (a CLI app) and return its exit code; with the tricks on, never returns:
    flushes, does the work registered with after_output, and leaves at once."""
    from hloscope._speed.nogc import one_shot

    one_shot()
    tune_gc()
    one_blas_thread()
    try:
        main()
        code = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    if not enabled():  # the plain path: the work now, then leave as Python does
        _run_after_output()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a closed pipe: nothing left to say
            pass
    if enabled():
        _run_after_output()  # (the last thing before leaving: see fork.before_exit)
        os._exit(code)
    return code


def _run_after_output() -> None:
    while _after_output:
        try:
            _after_output.pop(0)()
        except Exception:  # noqa: BLE001 - the command's own result is already out
            pass
