"""A writer of XSpace profiles for tests, following the public schema
(tsl/profiler/protobuf/xplane.proto: XSpace > XPlane > XLine > XEvent, with per-plane
event and stat metadata maps), encoded with the protobuf wire format directly so that no
generated code is needed. The captures it builds are SYNTHETIC: they copy the structure of
real TPU captures (plane `/device:TPU:N`; lines `XLA Modules`, `XLA Ops`, `Async XLA Ops`,
`XLA TraceMe`, `Tensor Core`, `_counters_`; XLA Ops metadata named by the instruction's
full text with its short name as display name and `program_id`/`symbol_id` stats), not
measurements. Tests take their expected numbers from XProf's own CLI run on them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64 as two's complement, as protobuf does
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field_number: int, wire_type: int) -> bytes:
    return _varint(field_number << 3 | wire_type)


def _int(field_number: int, value: int) -> bytes:
    return _key(field_number, 0) + _varint(value) if value else b""


def _bytes(field_number: int, value: bytes) -> bytes:
    return _key(field_number, 2) + _varint(len(value)) + value


def _str(field_number: int, value: str) -> bytes:
    return _bytes(field_number, value.encode("utf-8")) if value else b""


def _stat(metadata_id: int, value) -> bytes:
    """XStat: metadata_id 1; double 2, uint64 3, int64 4, str 5."""
    out = _int(1, metadata_id)
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float):
        return out + _key(2, 1) + struct.pack("<d", value)
    if isinstance(value, int):
        return out + _key(4, 0) + _varint(value)
    return out + _bytes(5, str(value).encode("utf-8"))


@dataclass
class Line:
    id: int
    name: str
    timestamp_ns: int
    events: list = field(default_factory=list)  # (metadata id, offset ps, duration ps, stats)


@dataclass
class Plane:
    id: int
    name: str
    stats: dict = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)
    event_metadata: dict = field(default_factory=dict)  # (name, display) -> (id, stats)
    stat_ids: dict = field(default_factory=dict)  # stat name -> id

    def stat_id(self, name: str) -> int:
        return self.stat_ids.setdefault(name, len(self.stat_ids) + 1)

    def line(self, name: str, timestamp_ns: int = 0) -> Line:
        line = Line(len(self.lines) + 1, name, timestamp_ns)
        self.lines.append(line)
        return line

    def event(self, line: Line, name: str, start_ps: int, duration_ps: int, stats: dict | None = None,
              display_name: str = "", metadata_stats: dict | None = None) -> None:
        """An event at start_ps (from the line's timestamp) lasting duration_ps."""
        key = (name, display_name)
        if key not in self.event_metadata:
            self.event_metadata[key] = (len(self.event_metadata) + 1, dict(metadata_stats or {}))
        line.events.append((self.event_metadata[key][0], start_ps, duration_ps, dict(stats or {})))

    def encode(self) -> bytes:
        def stats(field_number: int, values: dict) -> bytes:
            return b"".join(_bytes(field_number, _stat(self.stat_id(k), v)) for k, v in values.items())

        out = _int(1, self.id) + _str(2, self.name)
        for line in self.lines:
            body = _int(1, line.id) + _str(2, line.name) + _int(3, line.timestamp_ns)
            for mid, offset, duration, ev_stats in line.events:
                ev = _int(1, mid) + _key(2, 0) + _varint(offset) + _int(3, duration) + stats(4, ev_stats)
                body += _bytes(4, ev)
            out += _bytes(3, body)
        for (name, display), (mid, md_stats) in self.event_metadata.items():
            md = _int(1, mid) + _str(2, name) + _str(4, display) + stats(5, md_stats)
            out += _bytes(4, _int(1, mid) + _bytes(2, md))  # map entry: key 1, value 2
        out += stats(6, self.stats)
        for name, sid in list(self.stat_ids.items()):
            sm = _int(1, sid) + _str(2, name)
            out += _bytes(5, _int(1, sid) + _bytes(2, sm))
        return out


@dataclass
class XSpace:
    planes: list[Plane] = field(default_factory=list)
    hostnames: list[str] = field(default_factory=list)

    def plane(self, name: str, stats: dict | None = None) -> Plane:
        p = Plane(len(self.planes) + 1, name, dict(stats or {}))
        self.planes.append(p)
        return p

    def encode(self) -> bytes:
        return b"".join(_bytes(1, p.encode()) for p in self.planes) + \
            b"".join(_str(4, h) for h in self.hostnames)
