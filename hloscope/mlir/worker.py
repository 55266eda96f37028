"""Decode and summarize kernels in a child process.

jaxlib's MLIR bindings can abort the whole process (a C++ exception escaping nanobind)
on a corrupt kernel body, which no Python `except` can catch. So kernels are decoded
here, in a separate process: the parent sends (target, backend_config dict, CallInfo)
items as one pickle on stdin, and reads one length-prefixed pickle per item back. If
this process dies, the parent marks that item as undecodable and goes on.
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


def main() -> None:
    items = pickle.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    for item in items:
        data = pickle.dumps(_one(item))
        out.write(struct.pack("<Q", len(data)) + data)
        out.flush()


if __name__ == "__main__":
    main()
