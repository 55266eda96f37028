"""The chip table (chips.toml): peak numbers with their sources."""

from __future__ import annotations

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
    peak_int8_flops: float | None = None  # (None: the bf16 peak: no faster int8 path)
    peak_fp8_flops: float | None = None  # (None: fp8 runs as bf16)
    peak_tf32_flops: float | None = None  # GPUs: f32 matmuls on tensor cores
    peak_f64_flops: float | None = None
    platform_name: str = ""  # "tpu", "gpu", "cpu" (default: from the key)

    @property
    def platform(self) -> str:
        if self.platform_name:
            return self.platform_name
        return "tpu" if self.key.startswith("tpu-") else "cpu" if self.key == "cpu" else "gpu"

    @property
    def ridge(self) -> float:
        """FLOPs per byte above which an op is compute-bound (bf16 peak / HBM bandwidth)."""
        return self.peak_bf16_flops / self.hbm_bandwidth

    def peak_flops(self, dtype: str) -> float:
        """The rate of work that is not a matmul, by its element type (a matmul's rate
        follows its operand types and precision: hloscope.cost.precision)."""
        return self.peak_f32_flops if dtype in ("f32", "f64", "c64", "c128") else self.peak_bf16_flops


@cache
def chips() -> dict[str, Chip]:
    import tomllib  # (here: a command that names no chip need not load the TOML reader)

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


_GPU_TARGETS = ("__cublas", "__cudnn", "__triton", "__gpu", "__nccl")


def platform_of(module) -> str | None:
    """"tpu", "gpu" or "cpu" for an optimized module, from what only that compiler prints:
    tiled layouts (TPU), cuBLAS/cuDNN/Triton custom calls or GPU backend configs (GPU), else
    a scheduled module is the CPU's; None before optimization (nothing says)."""
    from hloscope.cost.layout import has_tiled_layouts

    if has_tiled_layouts(module):
        return "tpu"
    for instr in module.instructions():
        if instr.opcode == "custom-call" and str(instr.attr("custom_call_target") or "").startswith(_GPU_TARGETS):
            return "gpu"
        if instr.opcode == "fusion" and instr.may_have("backend_config"):
            config = instr.raw_attr("backend_config") or ""
            if "__triton" in config or "cudnn" in config or "operation_queue_id" in config:
                return "gpu"
    return "cpu" if module.attrs.get("is_scheduled") == "true" else None


def chip_for(module, name: str | None) -> tuple[Chip, str | None]:
    """The chip to cost a module on, and a note when it does not match the module's platform.
    No name: TPU (or an unknown platform) -> v5e, CPU -> the generic CPU entry, GPU -> H100,
    saying so; a named chip is used as asked, with a note if the module is another platform's."""
    platform = platform_of(module)
    if name:
        chip = get_chip(name)
        if platform and platform != chip.platform:
            return chip, (f"a {platform.upper()} module costed on {chip.name} as asked; its numbers "
                          f"are that chip's, not the machine's that compiled it")
        return chip, None
    if platform == "cpu":
        return get_chip("cpu"), ("a CPU module: costed on the generic CPU entry (a rough figure; "
                                 "--chip picks another)")
    if platform == "gpu":
        return get_chip("h100"), "a GPU module: costed on the H100 entry (--chip h200 or another to change)"
    return get_chip("v5e"), None
