"""A reader of XSpace files (`*.xplane.pb`) in plain Python: the protobuf wire format of the
public schema (tsl/profiler/protobuf/xplane.proto), only the fields hloscope reads, shaped
as jax's ProfileData shows them (plane name and stats; line name and events; event name,
start and duration in ns, stats by name), so that profiles need no jax (#40).

XSpace: planes 1. XPlane: name 2, lines 3, event_metadata 4 and stat_metadata 5 (maps:
key 1, value 2), stats 6. XLine: name 2, timestamp_ns 3, events 4. XEvent: metadata_id 1,
offset_ps 2, duration_ps 3, stats 4. XStat: metadata_id 1, then one of double 2, uint64 3,
int64 4, str 5, bytes 6, ref 7 (the name of another stat metadata). XEventMetadata /
XStatMetadata: id 1, name 2.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from hloscope.protowire import WireError
from hloscope.protowire import fields as _fields

_DOUBLE = struct.Struct("<d")


class XSpaceError(ValueError):
    """Bytes that are not an XSpace (truncated, corrupt, or another format)."""


@dataclass
class Event:
    name: str
    start_ns: float
    duration_ns: float
    stats: list[tuple[str, object]]


@dataclass
class Line:
    name: str
    events: list[Event] = field(default_factory=list)


@dataclass
class Plane:
    name: str
    stats: list[tuple[str, object]] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _text(buf: bytes, span: tuple[int, int]) -> str:
    return buf[span[0]:span[1]].decode("utf-8", errors="replace")


def _stat(buf: bytes, span, names: dict[int, str]) -> tuple[str, object]:
    mid, value = 0, None
    for number, _, v in _fields(buf, *span):
        if number == 1:
            mid = v
        elif number == 2:
            value = _DOUBLE.unpack(v)[0]
        elif number == 3:
            value = v
        elif number == 4:
            value = _signed(v)
        elif number == 5:
            value = _text(buf, v)
        elif number == 6:  # (bytes: text, as ProfileData gives them)
            value = _text(buf, v)
        elif number == 7:
            value = names.get(v, "")
    if mid not in names:  # (a stat of no known metadata: ProfileData gives it as (None, None))
        return None, None
    return names[mid], value


def _metadata_name(buf: bytes, span) -> tuple[int, str]:
    """(id, name) of a map entry whose value is an XEventMetadata or XStatMetadata."""
    key, name = 0, ""
    for number, _, v in _fields(buf, *span):
        if number == 1:
            key = v
        elif number == 2:
            for n2, _, v2 in _fields(buf, *v):
                if n2 == 2:
                    name = _text(buf, v2)
    return key, name


def _plane(buf: bytes, span) -> Plane:
    name, lines, stats = "", [], []
    event_names: dict[int, str] = {}
    stat_names: dict[int, str] = {}
    for number, _, v in _fields(buf, *span):  # (metadata first: lines refer to it)
        if number == 2:
            name = _text(buf, v)
        elif number == 3:
            lines.append(v)
        elif number == 4:
            k, n = _metadata_name(buf, v)
            event_names[k] = n
        elif number == 5:
            k, n = _metadata_name(buf, v)
            stat_names[k] = n
        elif number == 6:
            stats.append(v)
    plane = Plane(name, [_stat(buf, s, stat_names) for s in stats])
    for line_span in lines:
        line_name, timestamp, events = "", 0, []
        for number, _, v in _fields(buf, *line_span):
            if number == 2:
                line_name = _text(buf, v)
            elif number == 3:
                timestamp = _signed(v)
            elif number == 4:
                events.append(v)
        line = Line(line_name)
        for ev in events:
            mid, offset, duration, ev_stats = 0, 0, 0, []
            for number, _, v in _fields(buf, *ev):
                if number == 1:
                    mid = v
                elif number == 2:
                    offset = _signed(v)
                elif number == 3:
                    duration = _signed(v)
                elif number == 4:
                    ev_stats.append(_stat(buf, v, stat_names))
            # (in whole ns, as ProfileData gives them)
            line.events.append(Event(event_names.get(mid, ""), float(timestamp + offset // 1000),
                                     float(duration // 1000), ev_stats))
        plane.lines.append(line)
    return plane


def read_xspace(data: bytes) -> list[Plane]:
    """The planes of a serialized XSpace."""
    try:
        return [_plane(data, v) for number, wire, v in _fields(data, 0, len(data))
                if number == 1 and wire == 2]
    except WireError as e:
        raise XSpaceError(str(e)) from None
    except struct.error:
        raise XSpaceError("a double stat is cut short (truncated file?)") from None
