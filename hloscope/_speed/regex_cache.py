"""Compiled regular expressions kept on disk, as Python keeps .pyc files.

Python compiles a pattern in two steps: it parses the pattern text into a program for
the C matching engine (in Python: ~10 ms for the fast path's 10 KB whole-line pattern,
in every process), then loads that program into the engine (~0.05 ms). `compile`
keeps the program, keyed by the interpreter's version and the pattern's text, in a
folder of the user's own in the temporary directory, as Lark keeps its grammar tables
($HLOSCOPE_COMPILED_DIR overrides it). It is a build product, not a result: it lives
apart from the cache of parsed modules and findings, which `--no-cache` turns off.
HLOSCOPE_PLAIN=1, or any problem (another interpreter, a missing internal, a folder not the user's own or
writable by others, an unreadable file) compiles the pattern the usual way.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
import zlib

from hloscope._speed import enabled

_FORMAT = 1


def _program(pattern: str, flags: int) -> tuple:
    """(flags, code, groups, groupindex, indexgroup): what re hands the C engine."""
    from re import _compiler, _parser  # CPython 3.11+

    tree = _parser.parse(pattern, flags)
    code = _compiler._code(tree, flags)
    groupindex = dict(tree.state.groupdict)
    indexgroup = [None] * tree.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # plain ints (the code holds named opcode constants, the flags an enum): marshal-able
    return (int(flags | tree.state.flags), [int(c) for c in code], tree.state.groups - 1,
            groupindex, tuple(indexgroup))


def _load(program: tuple, pattern: str) -> re.Pattern[str]:
    import _sre

    flags, code, groups, groupindex, indexgroup = program
    return _sre.compile(pattern, flags, code, groups, groupindex, indexgroup)


def _folder() -> str:
    """The folder of kept programs, made private to this user; OSError when it is not."""
    folder = os.environ.get("HLOSCOPE_COMPILED_DIR")
    if not folder:
        import tempfile

        folder = os.path.join(tempfile.gettempdir(), f"hloscope-{os.getuid()}", "compiled")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.stat(folder)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise OSError(f"{folder} is not this user's own")
    return folder


def _path(pattern: str, flags: int) -> str:
    name = f"{zlib.crc32(pattern.encode()):08x}-{len(pattern)}-{int(flags)}.marshal"
    return os.path.join(_folder(), name)


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 - re's name
    """re.compile(pattern, flags), its program read from disk when kept there."""
    if not enabled():
        return re.compile(pattern, flags)
    try:
        import _sre

        stamp = (_FORMAT, sys.version, _sre.MAGIC)
        path = _path(pattern, flags)
    except Exception:  # noqa: BLE001 - no internals, no cache directory: compile
        return re.compile(pattern, flags)
    try:
        with open(path, "rb") as f:  # (marshal.load reads a file piece by piece: 40x slower)
            kept_stamp, kept_pattern, program = marshal.loads(f.read())
        if kept_stamp == stamp and kept_pattern == pattern:
            return _load(program, pattern)
    except Exception:  # noqa: BLE001 - absent, unreadable or another format: rebuild
        pass
    try:
        program = _program(pattern, flags)
        compiled = _load(program, pattern)
    except Exception:  # noqa: BLE001 - internals not as expected
        return re.compile(pattern, flags)
    _keep(path, (stamp, pattern, program))
    return compiled


def _keep(path: str, record: tuple) -> None:
    """Write atomically; a cache that cannot be written is simply not kept."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(marshal.dumps(record))
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
