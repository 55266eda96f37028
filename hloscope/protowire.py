"""The protobuf wire format, read without generated code: varints and a message's fields
(hloscope.parser.inputs reads HloProto files with it, hloscope.trace.xspace_pb XSpaces)."""

from __future__ import annotations

from collections.abc import Iterator


class WireError(ValueError):
    """Bytes that are not a well-formed protobuf message (truncated, or another format)."""


def varint(buf: bytes, i: int) -> tuple[int, int]:
    """(the varint at i, the position after it)."""
    if i < len(buf) and buf[i] < 0x80:  # (most: one byte)
        return buf[i], i + 1
    result = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise WireError("a varint runs past the end (truncated file?)")
        b = buf[i]
        result |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return result, i
        shift += 7


def fields(buf: bytes, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value) of the message in buf[start:end]: an int for a
    varint, the raw bytes of a fixed64 or fixed32, (start, end) of a length-delimited one."""
    end = len(buf) if end is None else end
    i = start
    while i < end:
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0 (not a protobuf message?)")
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            value = (i, i + n)
            i += n
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise WireError(f"wire type {wire} is not one protobuf writes (not a protobuf message?)")
        if i > end:
            raise WireError("a field runs past its message (truncated file?)")
        yield number, wire, value
