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


def read(path: str | Path) -> bytes:
    """A file's bytes, refusing files over MAX_FILE_BYTES, with located errors; `-` or
    `<stdin>`: standard input, read once."""
    if str(path) in ("-", STDIN):
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
