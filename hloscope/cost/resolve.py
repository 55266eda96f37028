"""Which chip a module is costed on: one resolution for every command and the API.

In this order:
1. the chip asked for (`--chip`, `chip = ...` in hloscope.toml, the API's `chip=`), a name
   from the table or from a chip file (`--chip-file`, a `[chips]` table);
2. the chip recorded in the module's dump folder: `hloscope compile` writes its topology and
   chip into `hloscope.json` there (libtpu's own option files name no chip generation);
3. what the module shows: a GPU dump named `..._sm_9.0_gpu_after_optimizations.txt` (its
   compute capability) and the `gpu_target_config.pbtxt` XLA dumps beside it (the device's
   name and memory: an H200 is an H100's SM with more memory), a CPU module (the generic CPU
   entry); a capability the table holds several chips of (H100 and H200), with no target
   config to tell them apart, is the first of them, assumed;
4. otherwise an *assumed* chip: a TPU module whose ops carry megacore_config (split over two
   TensorCores) -> TPU v5p, another TPU module of no known generation -> TPU v5e, a GPU
   module of no known generation -> H100. Every output names an assumed chip as assumed, and no
   error or warning verdict is given against its capacity.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hloscope.cost.chips import Chip, get_chip, platform_of

RECORD = "hloscope.json"  # written by `hloscope compile` into its dump folder
# GPU compute capability (major, minor) -> chip key; the first of a family stands for it
CAPABILITY = {(7, 0): "v100", (8, 0): "a100", (9, 0): "h100", (10, 0): "b200"}
# (dotted first: sm_10.0 is 10.0, not "10"; Hopper and later dumps add the arch-specific
# suffix: a real H100 compile is named ..._sm_9.0a_gpu_after_optimizations.txt)
_SM = re.compile(r"(?:^|[._-])sm_?(\d+\.\d+|\d{2,3})[af]?(?:[._-]|$)")
ASSUMED = {"tpu": "v5e", "gpu": "h100", None: "v5e"}
# The table's GPUs of one compute capability, told apart by their memory or their name (an
# H200 is an H100's SM with 141 GB of HBM3e; a GB200's GPU is a B200's)
SIBLINGS = {"h100": ("h100", "h200"), "b200": ("b200", "gb200")}
_MODEL = re.compile(r"\b(G?[A-Z]\d{3})\b")  # `NVIDIA H200 141GB HBM3e` -> H200
TARGET_CONFIG = ".gpu_target_config.pbtxt"  # XLA GPU's description of the device, per module


@dataclass(frozen=True)
class ChipChoice:
    chip: Chip
    source: str  # how it was chosen, in words
    assumed: bool = False

    @property
    def note(self) -> str | None:
        """The line outputs print about the choice (None for a chip asked for)."""
        if self.assumed:
            return (f"chip assumed: {self.chip.name} ({self.source}); --chip NAME, or "
                    f"--chip-file with your chip's numbers, sets it. Capacity verdicts against "
                    f"an assumed chip are informational")
        if self.source == "asked":
            return None
        return f"chip {self.chip.name}: {self.source}"

    def to_dict(self) -> dict:
        return {"chip": self.chip.key, "name": self.chip.name, "source": self.source,
                "assumed": self.assumed}


def compile_record(path: str | Path | None) -> dict:
    """What `hloscope compile` recorded in the folder of `path` (hloscope.json: topology,
    chip, mesh...), or {}."""
    if not path:
        return {}
    folder = Path(path)
    folder = folder if folder.is_dir() else folder.parent
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_chip(path: str | Path | None) -> tuple[str, str] | None:
    """(chip name, topology) recorded beside a module by `hloscope compile`, or None."""
    data = compile_record(path)
    chip = data.get("chip")
    return (str(chip), str(data.get("topology") or "")) if chip else None


_MODULE_ID = re.compile(r"^(module_\d+\.)")


@lru_cache(maxsize=64)
def _listing(folder: str) -> tuple[str, ...]:
    """The file names in a folder, sorted; () when it cannot be listed (listed once per
    folder: a dump folder of thousands of files is read once, not once per module)."""
    try:
        return tuple(sorted(p.name for p in Path(folder).iterdir()))
    except OSError:
        return ()


@lru_cache(maxsize=64)
def _stated_beside(folder: str) -> dict[str, re.Match]:
    """module id prefix -> the sm_XX a file of that module in `folder` states."""
    out: dict[str, re.Match] = {}
    for name in _listing(folder):
        mid = _MODULE_ID.match(name)
        if mid and mid.group(1) not in out and (found := _SM.search(name)):
            out[mid.group(1)] = found
    return out


def gpu_chip(key: str, memory: int = 0, description: str = "") -> str:
    """The table's chip for a GPU of the family `key` (CAPABILITY's): the one its description
    names (`NVIDIA H200`), else the one whose HBM is nearest `memory` bytes, else `key`."""
    family = SIBLINGS.get(key, (key,))
    model = _MODEL.search(description or "")
    if model and model.group(1).lower() in family:
        return model.group(1).lower()
    if memory > 0:
        return min(family, key=lambda k: abs(get_chip(k).hbm_bytes - memory))
    return key


@lru_cache(maxsize=64)
def _configs_beside(folder: str) -> dict[str, str]:
    """module id prefix -> the name of its gpu_target_config.pbtxt in `folder`."""
    return {mid.group(1): name for name in _listing(folder)
            if name.endswith(TARGET_CONFIG) and (mid := _MODULE_ID.match(name))}


_DESCRIPTION = re.compile(r'^device_description_str:\s*"([^"\n]*)"', re.M)
_MEMORY = re.compile(r"^\s*device_memory_size:\s*(\d+)", re.M)


def target_config(path: str | Path | None) -> tuple[str, int] | None:
    """(device description, memory bytes) from the gpu_target_config.pbtxt XLA's GPU backend
    dumps beside a module (`module_0012.jit_f.gpu_target_config.pbtxt`), or None."""
    if not path:
        return None
    p = Path(path)
    mid = _MODULE_ID.match(p.name)
    name = _configs_beside(str(p.parent)).get(mid.group(1)) if mid else None
    return _device_told(str(p.parent / name)) if name is not None else None


@lru_cache(maxsize=64)
def _device_told(config: str) -> tuple[str, int] | None:
    """target_config's answer from one config file, read once (every command resolves a
    module's chip more than once)."""
    try:
        text = Path(config).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    description, memory = _DESCRIPTION.search(text), _MEMORY.search(text)
    if description is None and memory is None:
        return None
    return (description.group(1) if description else "", int(memory.group(1)) if memory else 0)


def capability(path: str | Path | None) -> tuple[int, int] | None:
    """The GPU compute capability an XLA GPU dump states in its file name (sm_9.0, sm_90), or
    in the name of another file of the same module in its folder (XLA's GPU backend names
    its after-optimizations files so; the before-optimizations one does not say)."""
    if not path:
        return None
    p = Path(path)
    m = _SM.search(p.name)
    if not m and (mid := _MODULE_ID.match(p.name)):
        stated = _stated_beside(str(p.parent))
        m = stated.get(mid.group(1))
        if m is None and len({s.group(1) for s in stated.values()}) == 1:
            # (a pass dump of a module with no optimized file here: one process dumps for one
            # GPU, so the capability every other module of the folder states)
            m = next(iter(stated.values()))
    if not m:
        return None
    text = m.group(1)
    if "." in text:
        major, minor = text.split(".", 1)
        return int(major), int(minor)
    return int(text[:-1]), int(text[-1])


def megacore(module) -> bool:
    """Whether the module's ops carry a megacore_config: libtpu splits them over the two
    TensorCores of a megacore chip. Of the real compiles in fixtures/, 75 of 79 for v5p carry
    one, none of the 99 for v5e, v6e (single-TensorCore chips) and v4 (as libtpu 0.0.42
    compiles it): a v5p, then, but still an assumption, said so."""
    entry = module.entry  # (where the fusions that carry it are: asked first, the answer alike)
    comps = [entry, *(c for c in module.computations if c is not entry)] if entry is not None \
        else module.computations
    return any(i.may_contain("megacore_config") and "megacore_config" in (i.raw_attr("backend_config") or "")
               for c in comps for i in c.instructions)


def resolve_chip(module, name: str | None = None) -> ChipChoice:
    """The chip to cost `module` on (see the module's docstring for the order)."""
    if name:
        return ChipChoice(get_chip(name), "asked")
    path = getattr(module, "path", None)
    recorded = recorded_chip(path)
    if recorded is not None:
        try:
            return ChipChoice(get_chip(recorded[0]), f"recorded by hloscope compile ({recorded[1] or recorded[0]})")
        except KeyError:
            pass
    platform = platform_of(module)
    cc = capability(path)
    if cc is not None:
        key = CAPABILITY.get(cc) or CAPABILITY.get((cc[0], 0))
        if key is not None:
            told = target_config(path)
            if told is not None:  # (the device itself, as XLA described it for the compile)
                return ChipChoice(get_chip(gpu_chip(key, told[1], told[0])),
                                  f"{told[0] or 'the device'} ({told[1] / 2**30:.0f} GiB) in the dump's "
                                  f"gpu_target_config.pbtxt")
            if key in SIBLINGS:  # (several of the table's chips: their memory tells them apart)
                names = " or ".join(get_chip(k).name for k in SIBLINGS[key])
                return ChipChoice(get_chip(key), f"sm_{cc[0]}.{cc[1]} in the dump's name: {names}, "
                                  f"whose memory differs; the dump's gpu_target_config.pbtxt would "
                                  f"say which", assumed=True)
            return ChipChoice(get_chip(key), f"sm_{cc[0]}.{cc[1]} in the dump's name")
        return ChipChoice(get_chip(ASSUMED["gpu"]), f"a GPU of compute capability {cc[0]}.{cc[1]}, "
                          f"not in the table", assumed=True)
    if platform == "cpu":
        return ChipChoice(get_chip("cpu"), "a CPU module: the generic CPU entry, a rough figure")
    if platform == "tpu" and megacore(module):
        return ChipChoice(get_chip("v5p"), "a TPU module whose fusions are split over a chip's two "
                          "TensorCores (megacore_config), as libtpu prints them for v5p", assumed=True)
    what = {"tpu": "a TPU module whose generation nothing states",
            "gpu": "a GPU module whose generation nothing states"}.get(
        platform, "a module that states no platform (before optimization?)")
    return ChipChoice(get_chip(ASSUMED[platform]), what, assumed=True)  # (platform_of: tpu, gpu, cpu or None)


def chip_for(module, name: str | None) -> tuple[Chip, str | None]:
    """The chip to cost a module on and a note about the choice (hloscope.cost.resolve: the
    chip asked for, the one its dump folder records, what the module shows, or an assumed
    one, said so); a note too when a named chip is another platform's than the module's."""
    choice = resolve_chip(module, name)
    return choice.chip, choice_note(module, choice, name)


def choice_note(module, choice: ChipChoice, name: str | None) -> str | None:
    """The note outputs print about a choice: the choice's own, or, for a chip asked for,
    that it is another platform's than the module's."""
    if name:
        platform = platform_of(module)
        if platform and platform != choice.chip.platform:
            return (f"a {platform.upper()} module costed on {choice.chip.name} as asked; "
                    f"its numbers are that chip's, not the machine's that compiled it")
    return choice.note
