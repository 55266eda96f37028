"""On-disk cache of lint results, `stats` counts and parsed modules (the parse keeps these
only in strict mode and on the plain route: hloscope.parser.load._core_scans), keyed by
content hash.

Location: $HLOSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/hloscope, else ~/.cache/hloscope.
Keys include hloscope's version and the grammar's hash, so an upgrade never serves
stale results. Any cache problem (unwritable, corrupt entry) falls back to the work.
(Build products, not results, are kept elsewhere, as Python keeps .pyc files: Lark's
grammar tables and the fast path's compiled patterns, hloscope._speed.regex_cache.)
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from hloscope._version import __version__
from hloscope.resources import grammar_path

_state = {"enabled": True,  # the CLI's --no-cache turns it off for the process
          "background": False,  # large entries written after the output (the CLI's)
          "hooked": False}  # _write_deferred registered with the after-output step
_deferred: list[tuple[str, str, Any]] = []
# (pickle and tempfile are imported where used: a --no-cache run needs none; the hashes are
# BLAKE2b without hashlib's import, _speed.hashes)


def set_enabled(enabled: bool) -> None:
    """Turn the cache on or off for this process (off: nothing read or written)."""
    _state["enabled"] = enabled


def is_enabled() -> bool:
    return _state["enabled"]


def write_now() -> None:
    """Undo write_in_background in this process (a worker forked from the CLI's process,
    which never reaches the CLI's after-output step): `put` writes at once again."""
    _state["background"] = False
    _deferred.clear()


def write_in_background() -> None:
    """Let `put(..., background=True)` defer its entry until the command's output is out
    (hloscope._speed.process.after_output), then hand it to a child the process does not
    wait for (hloscope._speed.fork.before_exit; written here where it may not fork):
    pickling a parsed module costs up to as much as parsing it, and the user need not
    wait for it. Writing at the end also spares the command the copy-on-write faults a
    fork in mid-command costs. The CLI does this."""
    from hloscope._speed.process import after_output

    _state["background"] = True
    if not _state["hooked"]:  # (once per process, however often this is called)
        _state["hooked"] = True
        after_output(_write_deferred)


def _write_deferred() -> None:
    from hloscope._speed.fork import before_exit

    entries = list(_deferred)
    _deferred.clear()

    def write_all() -> None:
        for entry in entries:
            _write(*entry)

    if entries and not before_exit(write_all):
        write_all()


def cache_dir() -> Path:
    explicit = os.environ.get("HLOSCOPE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hloscope"


@cache
def _code_salt() -> str:
    """hloscope's version, grammar and source: any change to them is a new cache. A source
    file stands by its size and modification time, as it does for Python's own .pyc check
    (reading all ~170 files on every run cost more than the rest of a cached lint)."""
    from hloscope._speed.hashes import blake2b

    h = blake2b(__version__.encode())
    h.update(grammar_path().read_bytes())
    root = os.path.dirname(os.path.abspath(__file__))
    for folder, subfolders, names in os.walk(root):
        subfolders.sort()
        for name in sorted(n for n in names if n.endswith(".py")):
            st = os.stat(os.path.join(folder, name))
            h.update(f"{os.path.relpath(folder, root)}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]


def digest(data: bytes) -> bytes:
    """A file's bytes as the keys made from it hold them (`key(digest(data), ...)`): hashed
    once, however many keys a run makes of one file (lint's findings and its modules). The
    compiled core's BLAKE3 where it is built (hloscope_native.digest_bytes, several times
    BLAKE2b's speed), else BLAKE2b: each route's keys are its own."""
    native = _digests()
    if native is not None:
        return native.digest_bytes(data)
    from hloscope._speed.hashes import blake2b

    return blake2b(data).digest()


def digest_text(text: str) -> bytes:
    """`digest` of the text's UTF-8 bytes: a file's digest from the text decoded from it
    (parser.files.read_text), with no bytes object made."""
    native = _digests()
    if native is not None and hasattr(native, "digest_str"):
        return native.digest_str(text)
    return digest(text.encode("utf-8"))


def digest_read(data: bytes | None, text: str | None) -> bytes:
    """`digest` of a file as it was read: its bytes, else the text decoded from a map of it
    (parser.files.read_input gives one or the other)."""
    return digest(data) if data is not None else digest_text(text)


def file_digest(path: str | Path, max_bytes: int) -> bytes | None:
    """`digest` of a file's bytes, which the compiled core hashes as it reads them, a block at
    a time: a run answered from the cache never reads the file into Python (on a 31 MB
    dump, 10 ms against 51 ms to read and hash it). None where the core cannot say (not
    built, a file over `max_bytes`, one it cannot read): the caller reads the file, with
    the located error that gives."""
    native = _digests()
    if native is None:
        return None
    try:
        if os.stat(path).st_size > max_bytes:
            return None
        return native.digest_file(os.fspath(path))
    except (OSError, RuntimeError):
        return None


def _digests():
    """The compiled core, where it has the digest functions; else None."""
    from hloscope._speed import native

    core = native()
    return core if core is not None and hasattr(core, "digest_bytes") else None


def key(*parts: bytes | str) -> str:
    from hloscope._speed.hashes import blake2b

    h = blake2b(_code_salt().encode())
    for part in parts:
        h.update(b"\0")
        h.update(part if isinstance(part, bytes) else part.encode())
    return h.hexdigest()


def get(kind: str, k: str) -> Any | None:
    if not _state["enabled"]:
        return None
    import pickle

    from hloscope._speed.nogc import no_cyclic_gc

    path = cache_dir() / kind / f"{k}.pickle"
    try:
        with path.open("rb") as f, no_cyclic_gc():  # (a module: ~100k objects, no cycles)
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None


def put(kind: str, k: str, value: Any, background: bool = False) -> None:
    """Keep `value` under (kind, k); `background`: a large entry, written after the output
    when the process allows it (write_in_background), else now."""
    if not _state["enabled"]:
        return
    if background and _state["background"]:
        _deferred.append((kind, k, value))
        return
    _write(kind, k, value)


def _write(kind: str, k: str, value: Any) -> None:
    import pickle
    import tempfile

    folder = cache_dir() / kind
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"{k}.pickle")
    except (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError):
        # a cache is an optimisation: never fail the command over it (nor leave a part)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
