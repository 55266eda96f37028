"""What the cost model gives: a Cost (FLOPs, transcendentals and bytes, and what could not
be costed) and a kernel's BodyCost (derived from its body)."""

from __future__ import annotations

from dataclasses import dataclass, field


_EXACT = 1 << 53  # (integers below it are exact as floats)


@dataclass(slots=True)
class Cost:
    flops: float = 0.0
    transcendentals: float = 0.0
    bytes_read: int = 0
    bytes_written: int = 0
    padded_read: int = 0
    padded_written: int = 0
    hbm_bytes: int = 0  # padded bytes of operands/results in memory space 0 (device HBM)
    unknown_trip_counts: list[str] = field(default_factory=list)
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (instruction, why)

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def padded_bytes(self) -> int:
        return self.padded_read + self.padded_written

    def add(self, other: Cost, times: float = 1.0) -> None:
        self.flops += other.flops * times
        self.transcendentals += other.transcendentals * times
        if times == 1 and other.bytes_read.__class__ is int and other.bytes_written.__class__ is int \
                and other.padded_read.__class__ is int and other.padded_written.__class__ is int \
                and other.hbm_bytes.__class__ is int and other.padded_read < _EXACT \
                and other.padded_written < _EXACT and other.hbm_bytes < _EXACT \
                and other.bytes_read < _EXACT and other.bytes_written < _EXACT:
            # (once each: the entry's ops; int(n * 1.0) is n while n is a float exactly)
            self.bytes_read += other.bytes_read
            self.bytes_written += other.bytes_written
            self.padded_read += other.padded_read
            self.padded_written += other.padded_written
            self.hbm_bytes += other.hbm_bytes
        else:
            self.bytes_read += int(other.bytes_read * times)
            self.bytes_written += int(other.bytes_written * times)
            self.padded_read += int(other.padded_read * times)
            self.padded_written += int(other.padded_written * times)
            self.hbm_bytes += int(other.hbm_bytes * times)
        if other.unknown_trip_counts:
            self.unknown_trip_counts.extend(other.unknown_trip_counts)
        if other.unknown:
            self.unknown.extend(other.unknown)

    @classmethod
    def most(cls, costs: list[Cost]) -> Cost:
        """Per quantity, the largest of `costs` (a conditional's branches)."""
        out = cls()
        for q in ("flops", "transcendentals", "bytes_read", "bytes_written", "padded_read",
                  "padded_written", "hbm_bytes"):
            setattr(out, q, max((getattr(c, q) for c in costs), default=0))
        for c in costs:
            out.unknown_trip_counts.extend(c.unknown_trip_counts)
            out.unknown.extend(c.unknown)
        return out


@dataclass(frozen=True)
class BodyCost:
    """A kernel's cost derived from its body: FLOPs and transcendentals over the grid, the
    HBM traffic of its blocks (None when its index maps could not be read)."""

    flops: float
    transcendentals: float
    bytes: int | None
    matmul_flops: float = 0.0
    matmul_types: tuple[str, ...] = ()  # HLO element types of its first matmul's operands
