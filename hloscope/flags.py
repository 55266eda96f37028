"""The compiler flags a module was built with: read from XLA's files beside it in an
--xla_dump_to folder (`tpu_comp_env.txt`, libtpu's compilation environment, `name: value`
per line; `debug_options`, XLA's DebugOptions, the same form) or given as XLA_FLAGS /
LIBTPU_INIT_ARGS text (`--name=value ...`, `lint --flags`). Values are kept as written and
read through `state()`: on, off, auto, or the value itself."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:\s*(.*?)\s*$")
_STAGE_SUFFIX = re.compile(r"\.(?:[\w.]+_)?(?:before|after)_optimizations\.txt$")
FLAG_FILES = ("tpu_comp_env.txt", "debug_options")
_ON = {"true", "1", "enabled", "kenabled", "yes"}
_OFF = {"false", "0", "disabled", "kdisabled", "no"}
_AUTO = {"auto", "kauto"}


def parse_flags(text: str) -> dict[str, str]:
    """`--a=1 --b=true` (XLA_FLAGS) or `a: 1` lines (tpu_comp_env.txt, debug_options)."""
    out: dict[str, str] = {}
    if "--" in text and ":" not in text.split("--", 1)[0]:
        try:
            tokens = shlex.split(text)
        except ValueError:
            tokens = text.split()
        for tok in tokens:
            if tok.startswith("--"):
                name, _, value = tok[2:].partition("=")
                out[name] = value if _ else "true"
        return out
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and not line.lstrip().startswith("#"):
            out[m.group(1)] = m.group(2).strip('"')
    return out


def state(value: str | None) -> str:
    """'on', 'off', 'auto', 'unset' (None), or the value as written."""
    if value is None:
        return "unset"
    low = value.strip().lower()
    return "on" if low in _ON else "off" if low in _OFF else "auto" if low in _AUTO else value


def files_beside(module_path: str | Path) -> list[Path]:
    """XLA's flag files for a module file: in a dump folder the same `module_NNNN.name`
    prefix's tpu_comp_env.txt / debug_options; beside `X.hlo.txt`, `X.tpu_comp_env.txt`."""
    p = Path(module_path)
    name = p.name
    if _STAGE_SUFFIX.search(name):
        stem = _STAGE_SUFFIX.sub("", name)
    elif name.endswith(".hlo.txt"):
        stem = name[: -len(".hlo.txt")]
    else:
        return []
    return [p.with_name(f"{stem}.{f}") for f in FLAG_FILES if p.with_name(f"{stem}.{f}").is_file()]


def flags_for(module_path: str | Path, given: str | None = None) -> tuple[dict[str, str], list[str]]:
    """(flags, their sources): the files beside the module, then `given` over them."""
    flags: dict[str, str] = {}
    sources: list[str] = []
    for f in files_beside(module_path):
        try:
            flags.update(parse_flags(f.read_text(encoding="utf-8", errors="replace")))
            sources.append(str(f))
        except OSError:
            continue
    if given:
        flags.update(parse_flags(given))
        sources.append("--flags")
    return flags, sources
