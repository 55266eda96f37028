"""The chip table (chips.toml): peak numbers with their sources."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ALIASES = {"v4": "tpu-v4", "v5e": "tpu-v5e", "v5p": "tpu-v5p", "v6e": "tpu-v6e",
           "v7x": "tpu-v7x", "v5litepod": "tpu-v5e", "trillium": "tpu-v6e"}


@dataclass(frozen=True)
class Chip:
    key: str
    name: str
    peak_bf16_flops: float
    peak_f32_flops: float
    hbm_bandwidth: float
    hbm_bytes: int
    vmem_bytes: int | None = None
    scoped_vmem_bytes: int | None = None
    mxu: tuple[int, int] | None = None
    ici_bandwidth: float | None = None
    clock_hz: float | None = None
    tensorcores: int = 1
    sources: tuple[str, ...] = ()

    @property
    def ridge(self) -> float:
        """FLOPs per byte above which an op is compute-bound (bf16 peak / HBM bandwidth)."""
        return self.peak_bf16_flops / self.hbm_bandwidth

    def peak_flops(self, dtype: str) -> float:
        return self.peak_f32_flops if dtype in ("f32", "f64", "c64", "c128") else self.peak_bf16_flops


@cache
def chips() -> dict[str, Chip]:
    data = tomllib.loads((Path(__file__).with_name("chips.toml")).read_text(encoding="utf-8"))
    out = {}
    for key, row in data.items():
        row = dict(row)
        if "mxu" in row:
            row["mxu"] = tuple(row["mxu"])
        row["sources"] = tuple(row.get("sources", ()))
        out[key] = Chip(key=key, **row)
    return out


def get_chip(name: str) -> Chip:
    """A chip by key (`tpu-v5e`), short name (`v5e`) or device kind ('TPU v5 lite')."""
    table = chips()
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    kinds = {"tpu v4": "tpu-v4", "tpu v5 lite": "tpu-v5e", "tpu v5": "tpu-v5p",
             "tpu v5p": "tpu-v5p", "tpu v6 lite": "tpu-v6e", "tpu v6e": "tpu-v6e"}
    key = kinds.get(key, key)
    if key not in table:
        raise KeyError(f"unknown chip {name!r}; known: {', '.join(sorted(table))}")
    return table[key]
