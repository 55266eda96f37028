"""Every process-level speed trick hloscope uses, behind one switch.

Nothing here changes a result: each trick has a plain path that gives the same output,
and `HLOSCOPE_PLAIN=1` in the environment takes the plain path everywhere (the test
suite runs once that way in CI). The rest of the package calls these helpers and never
reaches into the interpreter itself.

| trick | module | plain path |
| --- | --- | --- |
| cyclic garbage collector paused while parsing | nogc | collector left alone |
| compiled regular expressions kept on disk (CPython's private `re` internals) | regex_cache | `re.compile` |
| collector thresholds raised and `os._exit` after a CLI command | process | defaults, `sys.exit` |
| numpy's OpenBLAS kept to one thread in the CLI's process (so it may fork) | process | numpy's default |
| large cache entries written after the output, by a detached process | fork, process | written when made |
| a large module parsed or counted in two processes | process (may_fork, may_spawn), fork | one process |
| a file's checks after the scan run in a forked child while the command works on it | fork (Ahead), process | checks first, in the process |
| installed distributions scanned for rule plug-ins without importlib.metadata | plugins | importlib.metadata |
| SHA-1 and BLAKE2b from CPython's own `_sha1` and `_blake2` (no OpenSSL load) | hashes | hashlib |
| the compiled core (`hloscope_native`, native/): instruction lines read, temporaries placed in outputs | `native()`, `core_function()` | the Python scanner, `placement.assign_plain` |
"""

from __future__ import annotations

import os
from functools import cache


def enabled() -> bool:
    """False when HLOSCOPE_PLAIN=1 (read each time, so a test can set it)."""
    return os.environ.get("HLOSCOPE_PLAIN", "") in ("", "0")


def native():
    """The compiled core, the `hloscope_native` module built from native/ (by ./setup.sh
    where cargo is), or None: not built, or HLOSCOPE_PLAIN=1."""
    if not enabled():
        return None
    try:
        import hloscope_native
    except ImportError:
        return None
    return hloscope_native


@cache
def core_function(name: str):
    """The compiled core's function `name`, or None (not built, an older build without it,
    or HLOSCOPE_PLAIN=1), asked once per process: the hot paths that call it (an attribute's
    value, a long line's comments) do not look it up each time. Each is held equal to its
    Python route, so a later change of HLOSCOPE_PLAIN changes no result."""
    return getattr(native(), name, None)


def scanner():
    """The compiled core where it has the parser's line reader (`lines`), else None: asked
    without importing the parser's fast route (hloscope.parser.fast.native.available)."""
    core = native()
    return core if core is not None and hasattr(core, "lines") else None
