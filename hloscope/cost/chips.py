"""The chip table (chips.toml): peak numbers with their sources."""

from __future__ import annotations

from dataclasses import dataclass, fields
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
    approximate: bool = False  # the entry's numbers are an order of magnitude (the generic CPU)
    sm_count: int | None = None  # GPUs: streaming multiprocessors
    shared_memory_per_sm: int | None = None  # GPUs: bytes
    vendor: str = ""  # GPUs: "nvidia" or "amd"
    link_domain: int | None = None  # GPUs: how many GPUs the scale-up links join
    nic_bandwidth: float | None = None  # GPUs: scale-out network per GPU, bytes/s each way
    link_latency_s: float | None = None  # GPUs: fixed cost of one collective step (alpha)
    tuple_table_alignment: int | None = None  # TPUs: the unit an output tuple's table takes
    op_floor_s: float | None = None  # measured: what an op of a scheduled program takes however small

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
    return {key: _chip(key, row, "chips.toml") for key, row in _rows().items()}


def _rows() -> dict:
    """chips.toml's tables: kept as Python in hloscope.cost.chips_data while it was written
    from this very text (its digest), else parsed: every command costing a module asks, and
    the TOML reader's import and parse took 10 ms of lint here. `python3 -m
    hloscope.cost.chips` writes it."""
    from hloscope.cost import chips_data

    text = Path(__file__).with_name("chips.toml").read_text(encoding="utf-8")
    if chips_data.TOML_DIGEST == _digest(text):
        return chips_data.ROWS
    import tomllib  # (here: a command that names no chip need not load the TOML reader)

    return tomllib.loads(text)


def _digest(text: str) -> str:
    from hloscope._speed.hashes import blake2b

    return blake2b(text.encode()).hexdigest()


def data_module() -> str:
    """The text of hloscope/cost/chips_data.py for the chips.toml at hand."""
    import tomllib

    text = Path(__file__).with_name("chips.toml").read_text(encoding="utf-8")
    rows = "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in tomllib.loads(text).items()) + "}"
    return ('"""chips.toml as Python, written by `python3 -m hloscope.cost.chips` (do not edit: '
            'edit chips.toml\nand run that; while TOML_DIGEST is not chips.toml\'s, chips.toml '
            'is parsed instead)."""\n\n'
            f'TOML_DIGEST = "{_digest(text)}"\n\nROWS = {rows}\n')


_FIELDS = {f.name for f in fields(Chip)} - {"key"}
_REQUIRED = ("name", "peak_bf16_flops", "peak_f32_flops", "hbm_bandwidth", "hbm_bytes")
_USER: dict[str, Chip] = {}  # chips from --chip-file / a [chips] table, by key
_DOMAIN: list[int] = []  # --gpus-per-node: the GPU link domain size every GPU chip gets


def set_link_domain(gpus: int | None) -> None:
    """Set (None: clear) how many GPUs the scale-up links join, for every GPU chip."""
    _DOMAIN[:] = [gpus] if gpus else []


def _with_domain(chip: Chip) -> Chip:
    if _DOMAIN and chip.platform == "gpu" and chip.link_domain != _DOMAIN[0]:
        from dataclasses import replace

        return replace(chip, link_domain=_DOMAIN[0])
    return chip


class ChipFileError(ValueError):
    """A chip file or table that cannot be used (the message says where and why)."""


def _chip(key: str, row: dict, where: str) -> Chip:
    if not isinstance(row, dict):
        raise ChipFileError(f"{where}: [{key}] is not a table of chip fields")
    unknown = sorted(set(row) - _FIELDS)
    if unknown:
        raise ChipFileError(f"{where}: [{key}] has unknown field(s) {', '.join(unknown)}; "
                            f"fields: {', '.join(sorted(_FIELDS))}")
    missing = [f for f in _REQUIRED if f not in row]
    if missing:
        raise ChipFileError(f"{where}: [{key}] lacks {', '.join(missing)} (needed to cost a module)")
    row = {name: _value(key, name, value, where) for name, value in row.items()}
    return Chip(key=key.lower(), **row)


_KINDS = {f.name: str(f.type) for f in fields(Chip)}  # (the annotations, as text)


def _value(key: str, name: str, value, where: str):
    """A chip field's value as Chip holds it, or a ChipFileError saying what it must be."""
    kind = _KINDS[name]
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind.startswith("tuple[int, int]"):
        ok = (isinstance(value, list) and len(value) == 2
              and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value))
        want, value = "two positive whole numbers, as [128, 128]", tuple(value) if ok else value
    elif kind.startswith("tuple[str"):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        want, value = "a list of texts", tuple(value) if ok else value
    elif kind.startswith(("float", "int")):
        positive = name in _REQUIRED or not name.endswith("_s")  # (a latency or floor may be 0)
        ok = number and (value > 0 if positive else value >= 0)
        if kind.startswith("int"):
            ok = ok and float(value).is_integer()
            value = int(value) if ok else value
        want = ("a " + ("positive " if positive else "") + ("whole number" if kind.startswith("int") else "number")
                + ("" if positive else " of 0 or more"))
    elif kind == "bool":
        ok, want = isinstance(value, bool), "true or false"
    else:
        ok, want = isinstance(value, str), "a text in quotes"
    if not ok:
        raise ChipFileError(f"{where}: [{key}] {name} = {value!r}: must be {want}")
    return value


def add_chips(table: dict, where: str) -> list[Chip]:
    """Register user chips ({key: {field: value}}, the fields of chips.toml); returns them."""
    out = [_chip(key, row, where) for key, row in table.items()]
    for chip in out:
        _USER[chip.key] = chip
    return out


def user_chips() -> list[Chip]:
    """The chips registered from chip files and [chips] tables in this process."""
    return [c for _, c in sorted(_USER.items())]


def load_chip_file(path: str | Path) -> list[Chip]:
    """Register the chips of a TOML file with chips.toml's fields (one table per chip)."""
    import tomllib

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ChipFileError(f"{p}: cannot read chip file: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ChipFileError(f"{p}: not TOML: {e}") from None
    data = data.get("chips", data) if isinstance(data.get("chips"), dict) else data
    if not data:
        raise ChipFileError(f"{p}: no chip table (write [my-chip] with {', '.join(_REQUIRED)})")
    return add_chips(data, str(p))


def get_chip(name: str) -> Chip:
    """A chip by key (`tpu-v5e`), short name (`v5e`), device kind ('TPU v5 lite'), a key
    from a chip file, or the path of a chip file holding one chip (a GPU with the link
    domain --gpus-per-node set)."""
    return _with_domain(_get_chip(name))


def _get_chip(name: str) -> Chip:
    if name.strip().endswith(".toml"):
        found = load_chip_file(name.strip())
        if len(found) != 1:
            raise KeyError(f"{name} holds {len(found)} chips ({', '.join(c.key for c in found)}): "
                           f"pass it as --chip-file and name one with --chip")
        return found[0]
    key = name.strip().lower()
    if key in _USER:
        return _USER[key]
    table = chips()
    key = ALIASES.get(key, key)
    kinds = {"tpu v4": "tpu-v4", "tpu v5 lite": "tpu-v5e", "tpu v5": "tpu-v5p",
             "tpu v5p": "tpu-v5p", "tpu v6 lite": "tpu-v6e", "tpu v6e": "tpu-v6e"}
    key = kinds.get(key, key)
    if key not in table:
        known = sorted(table) + sorted(_USER)
        raise KeyError(f"unknown chip {name!r}; known: {', '.join(known)} "
                       f"(or --chip-file with your chip's numbers)")
    return table[key]


_GPU_TARGETS = ("__cublas", "__cudnn", "__triton", "__gpu", "__nccl", "te_", "cu_threefry", "CuteDSL",
                "xla.gpu.", "__hipblas", "__miopen")
# keys only XLA's GPU backend writes into backend_config (gpu_backend_config.proto)
_GPU_CONFIG = ("operation_queue_id", "force_earliest_schedule", "gemm_backend_config",
               "fusion_backend_config", "cudnn_conv_backend_config", "cudnn_fmha_backend_config",
               "collective_backend_config", "custom_fusion_config", "__triton", "cudnn")


def platform_of(module) -> str | None:
    """"tpu", "gpu" or "cpu" for an optimized module, from what only that compiler prints:
    tiled layouts (TPU), cuBLAS/cuDNN/Triton/TransformerEngine custom calls or the keys of
    XLA's GPU backend configs (GPU), else a scheduled module is the CPU's; None before
    optimization (nothing says). Found once per module (`Module.fact`)."""
    return module.fact("platform", _platform)


def _platform(module) -> str | None:
    from hloscope.cost.layout import has_tiled_layouts

    if has_tiled_layouts(module):
        return "tpu"
    # XLA's GPU scheduler stamps the module it schedules (gpu_hlo_schedule.h kFingerprintBeforeLHS)
    if "fingerprint_before_lhs" in (module.attrs.get("frontend_attributes") or ""):
        return "gpu"
    if any(c.name.startswith("command_buffer") for c in module.computations):  # GPU command buffers
        return "gpu"
    for instr in module.instructions():
        if instr.opcode == "custom-call" and str(instr.attr("custom_call_target") or "").startswith(_GPU_TARGETS):
            return "gpu"
        if instr.may_have("backend_config"):
            config = instr.raw_attr("backend_config") or ""
            if any(key in config for key in _GPU_CONFIG):
                return "gpu"
    return "cpu" if module.is_scheduled else None


if __name__ == "__main__":
    Path(__file__).with_name("chips_data.py").write_text(data_module(), encoding="utf-8")
