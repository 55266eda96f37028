"""Reading an input file's bytes (with located errors) and the resource bounds of parsing
it: kept apart from the scanner, since a lint answered from the cache reads the file and
parses nothing."""

from __future__ import annotations

import os
from pathlib import Path

from hloscope.parser.errors import ParseError

# Resource bounds; raise them with these environment variables.
MAX_FILE_BYTES = int(os.environ.get("HLOSCOPE_MAX_FILE_BYTES", str(4 << 30)))
# Deeper bracket nesting is refused (a deep-tuple bomb); HLOSCOPE_MAX_NESTING raises it.
# (XLA's parser takes tuples nested thousands deep; 1024 levels and the interpreter's
# recursion limit raised to cover them: hloscope.parser.load)
MAX_NESTING = int(os.environ.get("HLOSCOPE_MAX_NESTING", "1024"))


STDIN = "<stdin>"  # the name standard input goes by (a path argument `-`)
_stdin: list[bytes] = []


def is_stdin(path: str | Path) -> bool:
    """Whether a path argument names standard input (`-`, or the name it goes by)."""
    return str(path) in ("-", STDIN)


def read(path: str | Path) -> bytes:
    """A file's bytes, refusing files over MAX_FILE_BYTES, with located errors; `-` or
    `<stdin>`: standard input, read once."""
    if is_stdin(path):
        if not _stdin:
            import sys

            _stdin.append(sys.stdin.buffer.read(MAX_FILE_BYTES + 1))
            if len(_stdin[0]) > MAX_FILE_BYTES:
                raise ParseError(f"over the {MAX_FILE_BYTES}-byte limit (HLOSCOPE_MAX_FILE_BYTES "
                                 "raises it)", STDIN, 0, 0)
        return _stdin[0]
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ParseError(f"{size} bytes, over the {MAX_FILE_BYTES}-byte limit "
                             "(HLOSCOPE_MAX_FILE_BYTES raises it)", str(path), 0, 0)
        return p.read_bytes()
    except OSError as e:
        raise ParseError(f"cannot read file: {e.strerror or e}", str(path), 0, 0) from None


def read_text(path: str | Path) -> str | None:
    """A plain HLO text file's text, decoded from a read-only map of the file: no bytes
    object is made (on this project's machines reading a 31 MB dump into a new buffer cost
    50-170 ms, decoding it from the map 25-30 ms, and the bytes beside the text were a copy
    of the file at the peak). None where it is not that, or where the speed tricks are off
    (standard input, an empty file or one over MAX_FILE_BYTES, a NUL byte, gzip, not UTF-8,
    not starting with `HloModule`, a file that cannot be mapped): the caller reads its
    bytes with `read`, and `parser.load.decode` says what they are."""
    from hloscope._speed import enabled

    if not enabled() or is_stdin(path):
        return None
    import mmap

    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if not 0 < size <= MAX_FILE_BYTES:
                return None
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                if m[:2] == b"\x1f\x8b" or m.find(b"\0") >= 0:
                    return None
                text = str(m, "utf-8")
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if text.isspace() or text.lstrip()[:9] != "HloModule":
        return None
    return text


def read_input(path: str | Path) -> tuple[bytes | None, str | None]:
    """(None, its text) of a plain HLO text file (read_text), else (its bytes, None) for
    `parser.load.decode` (with read's located errors)."""
    text = read_text(path)
    return (read(path), None) if text is None else (None, text)


def file_digest(path: str | Path) -> bytes | None:
    """The cache's digest of an input file, hashed as the compiled core reads it
    (hloscope.cache.file_digest, within MAX_FILE_BYTES); None for standard input, or where
    the core cannot say: the caller then reads the file. Kept with the file's stamp for
    `read_digest`."""
    from hloscope import cache

    if is_stdin(path):
        return None
    _HASHED.pop(os.fspath(path), None)  # (an earlier one's: this hash is the file's now)
    before = stamp(path)
    digest = cache.file_digest(path, MAX_FILE_BYTES)
    if digest is not None and before is not None:
        _HASHED[os.fspath(path)] = (before, digest)
    return digest


def read_digest(path: str | Path, data: bytes | None, text: str | None) -> bytes:
    """The cache's digest of the file as read (`data`, or the `text` decoded from a map of
    it: hloscope.cache.digest_read): the one `file_digest` made when the file's stamp is
    the same now as then (its bytes are those hashed: on a 31 MB dump a second hash is 10
    ms), else hashed again."""
    from hloscope import cache

    kept = _HASHED.pop(os.fspath(path), None) if not is_stdin(path) else None
    if kept is not None and stamp(path) == kept[0]:
        return kept[1]
    return cache.digest_read(data, text)


_HASHED: dict[str, tuple[tuple, bytes]] = {}  # path -> (its stamp, its digest): file_digest's

# A file modified this recently may be written again within its timestamp's granularity,
# leaving its stamp as it was (git's "racy" files): such a file has no stamp
_RACY_NS = 2_000_000_000


def stamp(path: str | Path) -> tuple[int, ...] | None:
    """What changes when a file's bytes do: (device, inode, size, modification and change
    times in ns), by os.stat; None where it cannot say (standard input, a file it cannot
    stat, or one modified within the last two seconds)."""
    import time

    if is_stdin(path):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_NS:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
