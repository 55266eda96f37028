"""The line scanner's split of an attribute list (`, key=value, ...`: an instruction line it
reads, a computation's closing line, a module header), and its refusal (ScanMiss): by the
compiled core where it reads the items, else by the patterns."""

from __future__ import annotations

from hloscope._speed import core_function, regex_cache
from hloscope.ir.instruction import CALL_KEYS, NAME
from hloscope.parser.fast.patterns import join_mesh_devices, top_level_blank
from hloscope.parser.text import split_top

_ATTR = regex_cache.compile(rf"\s*(%?{NAME})\s*=\s*")


class ScanMiss(Exception):
    """The fast scan cannot handle this text; use the full grammar."""


def split_items(s: str, start: int) -> dict[str, str]:
    """`, key=value, key=value` from s[start:] -> {key: value text}: split by the compiled
    core where it reads them (a module header's, tens of kilobytes: 9 ms by the patterns
    against 0.3 on Mixtral's), else by the patterns below; the same dict, or the same
    ScanMiss."""
    if s[start:].strip() == "":
        return {}
    out = _core_items(s[start:])
    if out is None:
        out = _pattern_items(s, start)
    else:
        for key, value in out.items():
            _no_inline_computation(key, value)
    return join_mesh_devices(out) if "device_ids" in out else out


def _no_inline_computation(key: str, value: str) -> None:
    if key in CALL_KEYS and value.startswith("{") and "=" in value:
        raise ScanMiss("computation written inside an attribute")  # the grammar builds it


def _pattern_items(s: str, start: int) -> dict[str, str]:
    """The items of s[start:] as the patterns split them, or ScanMiss."""
    out: dict[str, str] = {}
    spans = split_top(s, start)
    if s[spans[0][0] : spans[0][1]].strip():
        raise ScanMiss("text before the first attribute")
    for a, b in spans[1:]:
        m = _ATTR.match(s, a, b)
        if not m:
            raise ScanMiss("not key=value")
        value = s[m.end() : b].strip()
        if not value:
            raise ScanMiss("empty attribute value")
        if top_level_blank(value):
            raise ScanMiss("blank inside an attribute value")
        key = m.group(1).lstrip("%")
        _no_inline_computation(key, value)
        out[key] = value
    return out


def _core_items(text: str) -> dict[str, str] | None:
    """The core's split of `, key=value` items (`attr_items_deep`: it takes the `key=value`
    form with no blank around `=`, a value that does not start with a blank and is not
    empty, which the patterns take alike), or None: the patterns decide. A call key given
    twice is theirs too (its dict keeps the last value; the patterns check each)."""
    split = core_function("attr_items_deep")
    found = split(text) if split is not None else None
    if found is None or any(not v or v[0] in " \t" for v in found.values()) or any(
            key in CALL_KEYS and text.count(f"{key}=") > 1 for key in found):
        return None
    return found
