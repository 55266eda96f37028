"""Lint configuration from `hloscope.toml` or `[tool.hloscope]` in pyproject.toml.

    [tool.hloscope]
    select = ["H"]
    ignore = ["H006"]
    fail-on = "warning"
    chip = "v5e"

    [tool.hloscope.rules.defensive-copy]
    min_bytes = 4096

    [tool.hloscope.rules.split-dot]
    expect = {dot = 2}

    [tool.hloscope.chips.my-chip]     # a chip not in chips.toml (chip = "my-chip" picks it)
    name = "My accelerator"
    peak_bf16_flops = 400e12
    peak_f32_flops = 50e12
    hbm_bandwidth = 2e12
    hbm_bytes = 68719476736
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Config:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    fail_on: str = "warning"
    chip: str | None = None
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    chips: dict[str, dict[str, Any]] = field(default_factory=dict)  # [chips.<key>]: your own chips
    source: str | None = None


class ConfigError(ValueError):
    pass


_KEYS = {"select", "ignore", "fail-on", "chip", "rules", "chips"}


def _from_table(table: dict[str, Any], source: str) -> Config:
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}; known: "
                          f"{', '.join(sorted(_KEYS))}")
    rules = table.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise ConfigError(f"{source}: [rules.<name>] tables expected")
    return Config(
        select=list(table["select"]) if "select" in table else None,
        ignore=list(table.get("ignore", [])),
        fail_on=str(table.get("fail-on", "warning")),
        chip=table.get("chip"),
        rules={k: dict(v) for k, v in rules.items()},
        chips=_chips(table.get("chips", {}), source),
        source=source,
    )


def _chips(table: Any, source: str) -> dict[str, dict[str, Any]]:
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise ConfigError(f"{source}: [chips.<key>] tables expected, with chips.toml's fields")
    return {k: dict(v) for k, v in table.items()}


def load_config(explicit: Path | None = None, start: Path | None = None) -> Config:
    """The explicit file, else the nearest hloscope.toml or pyproject.toml with
    [tool.hloscope] from `start` (default: the working directory) upwards."""
    if explicit is not None:
        return _read(explicit, required=True) or Config()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in ("hloscope.toml", "pyproject.toml"):
            cfg = _read(folder / name, required=False)
            if cfg is not None:
                return cfg
    return Config()


def _read(path: Path, required: bool) -> Config | None:
    if not path.is_file():
        if required:
            raise ConfigError(f"{path}: no such file")
        return None
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        if path.name == "pyproject.toml" and not required and "hloscope" not in text:
            return None  # another tool's project file: no [tool.hloscope] to read in it
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("hloscope")
        if table is None:
            return None if not required else Config(source=str(path))
        return _from_table(table, f"{path} [tool.hloscope]")
    if set(data) == {"tool"} and isinstance(data["tool"], dict) and "hloscope" in data["tool"]:
        # (the README's [tool.hloscope] form, pasted into hloscope.toml: the same table)
        return _from_table(data["tool"]["hloscope"], f"{path} [tool.hloscope]")
    return _from_table(data, str(path))
