"""The printer's compact forms of typed attribute values, without loading the grammar.

Real dumps print replica groups, windows, shardings and dimension lists in a few fixed
forms (`[2,4]<=[8]`, `{size=3x3 pad=1_1x1_1}`, `{devices=[4,1,2]<=[8] last_tile_dim_replicate}`).
`fast_value(rule, text)` builds exactly the value the grammar's typed rule builds, or
returns MISSING for anything else, which then goes through the grammar. Tests compare
both routes on every value of the fixtures and the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hloscope._speed import regex_cache
from hloscope.ir.instruction import NAME
from hloscope.parser.fast.shapes import fast_shape, fast_shape_list
from hloscope.parser.grammar.source import terminal_regex
from hloscope.parser.text import scalar_text

if TYPE_CHECKING:  # (the value classes load on first use: a stats run needs none)
    from hloscope.ir.values import Sharding, Window

MISSING = object()

_INTS = r"[0-9]+(?:,[0-9]+)*"
_SINTS = r"-?[0-9]+(?:,-?[0-9]+)*"
_INT_LIST = regex_cache.compile(rf"\{{((?:{_SINTS})?)\}}")
_GROUP_LIST = regex_cache.compile(rf"\{{((?:\{{(?:{_SINTS})?\}}(?:,\{{(?:{_SINTS})?\}})*)?)\}}")
_GROUP = regex_cache.compile(r"\{([^{}]*)\}")
_IOTA = regex_cache.compile(rf"\[({_INTS})\]<=\[({_INTS})\](?:T\(({_INTS})\))?")
# the mesh form as XLA prints it with no device_ids and no sub-axes:
# mesh['axis_0'=2,'axis_1'=4] {'axis_0'} (its names plain: no escapes to read)
_AXIS = r"'[A-Za-z0-9_]+'"
_MESH = regex_cache.compile(rf"mesh\[({_AXIS}=[0-9]+(?:,{_AXIS}=[0-9]+)*)\] \{{({_AXIS}(?:,{_AXIS})*)\}}")
_NAME = rf"%?{NAME}"
_BOOLS = regex_cache.compile(rf"\{{((?:{_NAME})(?:,{_NAME})*)?\}}")
# (a string as an unrolled loop: a run of plain characters at a time, not one alternation
# per character, four times faster on metadata records)
_FIELD = rf'({_NAME})=("[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|-?[0-9]+|{_NAME})'
_RECORD = regex_cache.compile(rf"\{{(?:{_FIELD}(?:(?:[ \t]*,[ \t]*|[ \t]+){_FIELD})*)?\}}")
_FIELD_ITEM = regex_cache.compile(_FIELD)
_PROGRAM = regex_cache.compile(r"\{\s*\((.*)\)\s*->\s*(.*?)\s*\}")
_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_WINDOW = regex_cache.compile(r"\{((?:[a-z_]+=[-0-9_x]+)(?: [a-z_]+=[-0-9_x]+)*)?\}")
# An aliasing list as the printer writes it: `{ {0}: (0, {}, may-alias), {1, 2}: (3, {0}) }`
# (every token in it is an INT, a name, a comma, a colon or a bracket, so the grammar's
# generic `braces` takes any text of this form).
_INDEX = r"\{[ \t]*(?:[0-9]+(?:[ \t]*,[ \t]*[0-9]+)*)?[ \t]*\}"
_ALIAS_ITEM = (rf"{_INDEX}[ \t]*:[ \t]*\([ \t]*[0-9]+[ \t]*,[ \t]*{_INDEX}"
               r"(?:[ \t]*,[ \t]*(?:may|must)-alias)?[ \t]*\)")
_ALIASING = regex_cache.compile(rf"\{{[ \t]*(?:{_ALIAS_ITEM}(?:[ \t]*,[ \t]*{_ALIAS_ITEM})*)?[ \t]*\}}")
# A flat MLIR attribute dictionary, as custom-calls print backend_config when it is not
# JSON: `{attn_heads = 32 : i64, dropout_probability = 0.000000e+00 : f64, mode = "x"}`:
# names, numbers, strings, `,` `:` `=` (each a token the grammar's `braces` takes).
# Each token is taken whole and never given back (an atomic group, possessive repeats), as
# a lexer takes it: a run of name characters read as several adjacent names made the
# match exponential (30 s for a 60-character value).
_MLIR_TOKEN = (rf'{NAME}|-?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|-?[0-9]+(?![0-9A-Za-z_.])'
               r'|"[^"\\\n]*"|[,:=]')
_MLIR_DICT = regex_cache.compile(rf"\{{[ \t]*+(?:(?>{_MLIR_TOKEN})[ \t]*+)*+\}}")
# Untyped values (the grammar's `generic`) whose printed form a pattern proves the grammar
# takes: checked without loading Lark (a caller asking for the value still gets its tree).
_ACCEPTED = {"input_output_alias": _ALIASING, "output_to_operand_aliasing": _ALIASING,
             "backend_config": _MLIR_DICT}
_SLICES = regex_cache.compile(r"\{((?:\[-?[0-9]+:-?[0-9]+(?::-?[0-9]+)?\])(?:, \[-?[0-9]+:-?[0-9]+(?::-?[0-9]+)?\])*)?\}")
_SLICE = regex_cache.compile(r"\[(-?[0-9]+):(-?[0-9]+)(?::(-?[0-9]+))?\]")
_SHARDING = regex_cache.compile(rf"\{{(replicated|manual|unknown|maximal device=([0-9]+)"
                       rf"|devices={_IOTA.pattern}( last_tile_dim_replicate)?)\}}")


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",")) if text else ()


def build_sharding(items: list[tuple], words: Callable[[Any], list[str]] = lambda v: [str(v)]) -> Sharding:
    """A Sharding from its items: ("flag", name), ("int", n), ("field", key, value)
    where a `devices=` value is ("tile", dims, ("iota", dims, perm) | ("list", ids));
    `words` lists the names of a `last_tile_dims={...}` value."""
    flags: list[str] = []
    fields: dict[str, Any] = {}
    extra_devices: list[int] = []
    tile: tuple | None = None
    for item in items:
        if item[0] == "flag":
            flags.append(item[1])
        elif item[0] == "int":
            extra_devices.append(item[1])
        elif item[0] == "field":
            if isinstance(item[2], tuple) and item[2] and item[2][0] == "tile":
                tile = item[2]
            else:
                fields[item[1]] = item[2]
    kind = "tiled" if tile else next(
        (f for f in flags if f in ("replicated", "maximal", "manual", "unknown")), "tiled"
    )
    tile_shape: tuple[int, ...] = ()
    devices: tuple[int, ...] = ()
    dims: tuple[int, ...] = ()
    perm: tuple[int, ...] = ()
    if tile:
        tile_shape = tile[1]
        src = tile[2]
        if src and src[0] == "iota":
            dims, perm = src[1], src[2]
            from hloscope.ir.values import iota_devices

            devices = tuple(iota_devices(dims, perm))
        elif src:
            devices = tuple(src[1]) + tuple(extra_devices)
    last_dims = fields.pop("last_tile_dims", None)
    from hloscope.ir.values import Sharding

    return Sharding(
        kind,
        tile_shape=tile_shape,
        devices=devices,
        iota_dims=dims,
        iota_perm=perm,
        last_tile_dim_replicate="last_tile_dim_replicate" in flags,
        last_tile_dims=tuple(words(last_dims)) if last_dims is not None else (),
        device=fields.get("device") if isinstance(fields.get("device"), int) else None,
        flags=tuple(flags),
        fields=fields,
    )


def _sharding(m: re.Match[str]) -> Sharding:
    body = m.group(1)
    if m.group(2) is not None:
        return build_sharding([("flag", "maximal"), ("field", "device", int(m.group(2)))])
    if not body.startswith("devices="):
        return build_sharding([("flag", body)])
    items: list[tuple] = [("field", "devices", ("tile", _ints(m.group(3)),
                                                ("iota", _ints(m.group(4)), _ints(m.group(5) or ""))))]
    if m.group(6):
        items.append(("flag", "last_tile_dim_replicate"))
    return build_sharding(items)


def _window(text: str) -> Window | Any:
    m = _WINDOW.fullmatch(text)
    if m is None:
        return MISSING
    fields: dict[str, Any] = {}
    for item in (m.group(1) or "").split(" ") if m.group(1) else ():
        key, value = item.split("=")
        if key not in _WINDOW_KEYS or not any(
                terminal_regex(t).fullmatch(value) for t in ("INT", "DXD", "PAD")):
            return MISSING
        if key == "pad":
            parts = [part.split("_") for part in value.split("x")]
            if any(len(part) != 2 for part in parts):
                return MISSING  # (the grammar's route says why)
            fields["pad"] = tuple((int(lo), int(hi)) for lo, hi in parts)
        else:
            fields[key] = tuple(int(x) for x in value.split("x"))
    from hloscope.ir.values import Window

    return Window(**fields)


def _program_shape(text: str) -> Any:
    m = _PROGRAM.fullmatch(text)
    if m is None:
        return MISSING
    shapes = fast_shape_list(m.group(1).strip())
    result = fast_shape(m.group(2))
    if result is None or shapes is None:
        return MISSING
    return tuple(shapes), result


def _slices(text: str) -> Any:
    if _SLICES.fullmatch(text) is None:
        return MISSING
    from hloscope.ir.values import SliceRange

    return tuple(SliceRange(int(a), int(b), *((int(c),) if c else ()))
                 for a, b, c in _SLICE.findall(text))


def _padding(text: str) -> Any:
    if not (terminal_regex("PAD").fullmatch(text) or terminal_regex("INT").fullmatch(text)):
        return MISSING
    return tuple(tuple(int(x) for x in part.split("_")) for part in text.split("x"))


def _shape_list(text: str) -> Any:
    if not (text.startswith("{") and text.endswith("}")):
        return MISSING
    shapes = fast_shape_list(text[1:-1])
    return MISSING if shapes is None else tuple(shapes)


def _record(text: str) -> Any:
    if _RECORD.fullmatch(text) is None:
        return MISSING
    out: dict[str, Any] = {}
    for key, value in _FIELD_ITEM.findall(text):
        kind = "STRING" if value.startswith('"') else ("INT" if value.lstrip("-").isdigit() else "NAME")
        out[key.lstrip("%")] = scalar_text(kind, value)
    return out


def plain_record(text: str) -> bool:
    """Whether `text` is a record in the compact form with no escapes: one its reader
    types without fail (so a check of every value need not build it)."""
    return "\\" not in text and _RECORD.fullmatch(text) is not None


def accepted(key: str, text: str) -> bool:
    """Whether `text`, the value of attribute `key`, is in a printed form the grammar takes
    as an untyped value (False for every typed key, and for unknown forms: the grammar
    decides)."""
    pattern = _ACCEPTED.get(key)
    return pattern is not None and pattern.fullmatch(text) is not None


# The rules whose compact form a function of its own reads (the rest are read inline below).
_READERS: dict[str, Callable[[str], Any]] = {
    "window": _window, "program_shape": _program_shape, "record": _record,
    "slice_ranges": _slices, "padding": _padding, "shape_list": _shape_list,
}


def fast_value(rule: str, text: str) -> Any:
    """The value of `text` under typed rule `rule` in the compact form, else MISSING."""
    reader = _READERS.get(rule)
    if reader is not None:
        return reader(text)
    if rule == "int_list":
        m = _INT_LIST.fullmatch(text)
        if m is not None:
            return _ints(m.group(1))
    elif rule == "dim_labels":
        if terminal_regex("DIM_LABELS").fullmatch(text):
            return text
    elif rule == "name_list":
        if text.startswith("{") and text.endswith("}"):
            names = [n.strip() for n in text[1:-1].split(",")] if text[1:-1].strip() else []
            if all(terminal_regex("NAME").fullmatch(n) for n in names):
                return tuple(n.lstrip("%") for n in names)
    elif rule == "replica_groups":
        from hloscope.ir.values import ReplicaGroups, iota_groups

        m = _IOTA.fullmatch(text)
        if m is not None:
            shape, dims, perm = _ints(m.group(1)), _ints(m.group(2)), _ints(m.group(3) or "")
            return ReplicaGroups("iota", iota_groups(shape, dims, perm), shape, dims, perm)
        m = _GROUP_LIST.fullmatch(text)
        if m is not None:
            return ReplicaGroups("list", tuple(_ints(g) for g in _GROUP.findall(m.group(1))))
        m = _MESH.fullmatch(text)
        if m is not None:
            from hloscope.ir.values import mesh_groups

            axes = tuple((a[1:a.index("'", 1)], int(a[a.rindex("=") + 1:]))
                         for a in m.group(1).split(","))
            refs = tuple(r[1:-1] for r in m.group(2).split(","))
            return ReplicaGroups("mesh", mesh_groups(axes, refs, ()), mesh_axes=axes, mesh_refs=refs)
    elif rule == "bool_list":
        m = _BOOLS.fullmatch(text)
        if m is not None:
            names = m.group(1).split(",") if m.group(1) else []
            return tuple(n.lstrip("%") == "true" for n in names)
    elif rule == "sharding":
        m = _SHARDING.fullmatch(text)
        if m is not None:
            return _sharding(m)
    return MISSING
