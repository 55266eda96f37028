"""Decode and summarize kernels in a child process.

jaxlib's MLIR bindings can abort the whole process (a C++ exception escaping nanobind)
on a corrupt kernel body, which no Python `except` can catch. So kernels are decoded
here, in a separate process that serves the parent for its whole run: the parent sends
(target, backend_config dict, CallInfo) items one at a time, length-prefixed pickles on
stdin, and reads each result back. If this process dies on an item, the parent marks the
item as undecodable and starts a new one for the next.
"""

from __future__ import annotations

import pickle
import struct
import sys


def _one(item):
    from hloscope.mlir.decode import DecodeError, decode_config
    from hloscope.mlir.summary import summarize

    target, config, call = item
    try:
        body = decode_config(target, config)
    except DecodeError as e:
        return ("error", str(e), None, None, [])
    summary = None
    error = None
    if body.module is not None and not body.generic:
        try:
            summary = summarize(body, call)
        except Exception as e:  # noqa: BLE001 - an unexpected kernel: report it
            error = f"cannot summarize kernel: {type(e).__name__}: {e}"
    return ("ok", error, body.text, summary, body.notes)


def _read(stream, n: int) -> bytes | None:
    data = stream.read(n)
    return data if data is not None and len(data) == n else None


def main() -> None:
    """Serve requests until stdin closes: each is a length-prefixed pickled item, each
    answer a length-prefixed pickled result."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while (head := _read(inp, 8)) is not None:
        (n,) = struct.unpack("<Q", head)
        payload = _read(inp, n)
        if payload is None:
            return
        data = pickle.dumps(_one(pickle.loads(payload)))
        out.write(struct.pack("<Q", len(data)) + data)
        out.flush()


if __name__ == "__main__":
    main()
