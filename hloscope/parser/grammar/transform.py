"""Turns sub-grammar parse trees (shape, layout, typed attributes) into IR values."""

from __future__ import annotations

from math import prod
from typing import Any

from lark import Token, Transformer, Tree

from hloscope.ir.shape import COMBINE_DIM, UNBOUNDED, Layout, Shape
from hloscope.ir.values import (
    ReplicaGroups,
    Sharding,
    SliceRange,
    Window,
    iota_groups,
    mesh_groups,
)
from hloscope.ir.values import iota_devices as iota_device_ids
from hloscope.parser.fast.compact import build_sharding
from hloscope.parser.text import scalar_text, unquote  # noqa: F401 (unquote: re-exported)

PUNCT = {"COMMA", "COLON", "EQUAL", "ARROW", "LEQ", "QMARK", "STAR", "HASH", "PLUS", "TILDE", "LAYOUT_OPEN"}


INT64_MAX = (1 << 63) - 1


def _dim(tok: Token) -> int:
    value = int(tok)
    if not 0 <= value <= INT64_MAX:
        raise ValueError(f"dimension size {tok} is not a non-negative int64")
    return value


def _ints(items: list[Any]) -> tuple[int, ...]:
    return tuple(int(t) for t in items if isinstance(t, Token) and t.type == "INT")


def _perm(tok: Token | None) -> tuple[int, ...]:
    if tok is None:
        return ()
    inner = tok[2:-1].strip()
    return tuple(int(x) for x in inner.split(",") if x.strip())


def scalar(tok: Token) -> Any:
    """A single-token value: int, float, string, or a name/keyword as text."""
    return scalar_text(tok.type, str(tok))


class ValueBuilder(Transformer):
    """Bottom-up construction of shapes, layouts and typed attribute values."""

    # -- names and shapes
    def name(self, c: list[Token]) -> str:
        return c[0].lstrip("%")

    def static_dim(self, c: list[Token]) -> tuple[int, bool]:
        return _dim(c[0]), False

    def bounded_dim(self, c: list[Token]) -> tuple[int, bool]:
        return _dim(c[-1]), True

    def unbounded_dim(self, c: list[Token]) -> tuple[int, bool]:
        return UNBOUNDED, True

    def array_shape(self, c: list[Any]) -> Shape:
        etype = c[0][:-1]
        layout = c[-1] if isinstance(c[-1], Layout) else None
        dims = [d for d in c[1:] if isinstance(d, tuple)]
        sizes = [d for d, _ in dims if d != UNBOUNDED]
        if prod(sizes) > INT64_MAX:
            raise ValueError(f"{etype}{[d for d, _ in dims]} has more than 2^63 elements")
        if layout is not None and layout.minor_to_major and sorted(layout.minor_to_major) != list(range(len(dims))):
            raise ValueError(f"layout {{{','.join(map(str, layout.minor_to_major))}}} is not a "
                             f"permutation of the {len(dims)} dimensions")
        return Shape(etype, tuple(d for d, _ in dims), tuple(b for _, b in dims), layout)

    def shape(self, c: list[Shape]) -> Shape:
        return c[0]

    def tuple_shape(self, c: list[Any]) -> Shape:
        return Shape("tuple", elements=tuple(s for s in c if isinstance(s, Shape)))

    def buffer_shape(self, c: list[Any]) -> Shape:
        return Shape("buffer", elements=(next(s for s in c if isinstance(s, Shape)),))

    # -- layouts
    def tile_dim(self, c: list[Token]) -> int:
        return int(c[0])

    def combine_dim(self, c: list[Token]) -> int:
        return COMBINE_DIM

    def dim_level(self, c: list[Any]) -> str:
        return "".join(str(x) for x in c if x is not None)

    def layout_args(self, c: list[Any]) -> tuple:
        return tuple(x for x in c if x is not None)

    def split_args(self, c: list[Any]) -> tuple:
        ints = _ints(c)
        return ("split", ints[0], ints[1:])

    def shape_arg(self, c: list[Any]) -> tuple:
        return ("shape", next(s for s in c if isinstance(s, Shape)))

    def named_layout_item(self, c: list[Any]) -> tuple:
        return (c[0], c[1:])

    def index_type(self, c: list[Any]) -> tuple:
        return ("#", [(c[-1],)])

    def pointer_type(self, c: list[Any]) -> tuple:
        return ("*", [(c[-1],)])

    def layout(self, c: list[Any]) -> Layout:
        minor = tuple(int(t) for t in c if isinstance(t, Token) and t.type == "INT")
        fields: dict[str, Any] = {"minor_to_major": minor}
        for item in c:
            if not isinstance(item, tuple):
                continue
            key, args = item
            first = args[0] if args else ()
            _check_layout_args(key, args)
            if key == "T":
                fields["tiles"] = tuple(tuple(a) for a in args)
            elif key == "D":
                fields["dim_level_types"] = tuple(first)
            elif key == "L":
                fields["tail_padding_alignment"] = first[0]
            elif key == "E":
                fields["element_size_bits"] = first[0]
            elif key == "S":
                fields["memory_space"] = first[0]
            elif key == "M":
                fields["dynamic_prefix_bytes"] = first[0]
            elif key == "SC":
                fields["split_configs"] = tuple((a[1], a[2]) for a in args)
            elif key == "P":
                fields["physical_shape"] = first[1]
            elif key == "#":
                fields["index_type"] = first[0]
            elif key == "*":
                fields["pointer_type"] = first[0]
            else:
                raise ValueError(f"unknown layout attribute {key!r}")
        return Layout(**fields)

    def program_shape(self, c: list[Any]) -> tuple[tuple[Shape, ...], Shape]:
        shapes = [s for s in c if isinstance(s, Shape)]
        return tuple(shapes[:-1]), shapes[-1]

    def shape_list(self, c: list[Any]) -> tuple[Shape, ...]:
        return tuple(s for s in c if isinstance(s, Shape))

    # -- lists
    def int_list(self, c: list[Any]) -> tuple[int, ...]:
        return _ints(c)

    def int_list_list(self, c: list[Any]) -> tuple[tuple[int, ...], ...]:
        return tuple(x for x in c if isinstance(x, tuple))

    def name_list(self, c: list[Any]) -> tuple[str, ...]:
        return tuple(x for x in c if isinstance(x, str) and not isinstance(x, Token))

    def bool_list(self, c: list[Any]) -> tuple[bool, ...]:
        # `{true,false}` (a bare `true` never gets here: parse_attr answers it)
        names = [x for x in c if isinstance(x, str) and not isinstance(x, Token)]
        return tuple(n == "true" for n in names)

    # -- replica groups
    def list_groups(self, c: list[Any]) -> ReplicaGroups:
        return ReplicaGroups("list", c[0])

    def iota_dims(self, c: list[Any]) -> tuple[int, ...]:
        return _ints(c)

    def iota_list(self, c: list[Any]) -> ReplicaGroups:
        shape, dims, perm_tok = c
        perm = _perm(perm_tok)
        return ReplicaGroups("iota", iota_groups(shape, dims, perm), shape, dims, perm)

    def replica_groups(self, c: list[Any]) -> ReplicaGroups:
        return c[0]

    def mesh_axis(self, c: list[Any]) -> tuple[str, int]:
        if len(c) == 1:
            return (str(len(c)), int(c[0]))
        return (scalar(c[0]), int(c[-1]))

    def mesh_axes(self, c: list[Any]) -> tuple:
        return tuple(x for x in c if isinstance(x, tuple))

    def mesh_ref(self, c: list[Any]) -> str:
        return scalar(c[0])

    def mesh_refs(self, c: list[Any]) -> tuple[str, ...]:
        return tuple(x for x in c if isinstance(x, str) and not isinstance(x, Token))

    def mesh_groups(self, c: list[Any]) -> ReplicaGroups:
        axes, key, devices, refs = c
        if key is not None and str(key) != "device_ids":
            raise ValueError(f"expected device_ids= after the mesh axes, not {key}=")
        devices = devices or ()
        return ReplicaGroups("mesh", mesh_groups(axes, refs, devices), mesh_axes=axes,
                             mesh_refs=refs, mesh_devices=devices)

    def mesh_iota_devices(self, c: list[Any]) -> tuple[int, ...]:
        dims, perm = c
        return tuple(iota_device_ids(dims, _perm(perm)))

    def mesh_device_list(self, c: list[Any]) -> tuple[int, ...]:
        return _ints(c)

    # -- window, slices, dim labels, padding
    def window_field(self, c: list[Any]) -> tuple[str, str]:
        return (c[0], str(c[-1]))

    def window(self, c: list[Any]) -> Window:
        fields: dict[str, Any] = {}
        for key, text in c:
            if key == "pad":
                parts = [part.split("_") for part in _split_x(text)]
                if any(len(part) != 2 for part in parts):
                    raise ValueError("expects padding_low and padding_high separated by '_'")
                fields["pad"] = tuple((int(lo), int(hi)) for lo, hi in parts)
            elif key in ("size", "stride", "lhs_dilate", "rhs_dilate", "rhs_reversal"):
                fields[key] = tuple(int(x) for x in text.split("x"))
            else:
                raise ValueError(f"unknown window field {key!r}")
        return Window(**fields)

    def slice_range(self, c: list[Any]) -> SliceRange:
        ints = [int(t) for t in c if t is not None]
        return SliceRange(*ints)

    def slice_ranges(self, c: list[Any]) -> tuple[SliceRange, ...]:
        return tuple(x for x in c if isinstance(x, SliceRange))

    def dim_labels(self, c: list[Token]) -> str:
        return str(c[0])

    def padding(self, c: list[Token]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(int(x) for x in part.split("_")) for part in _split_x(str(c[0])))

    # -- sharding
    def shard_flag(self, c: list[Any]) -> tuple:
        return ("flag", c[0])

    def shard_int(self, c: list[Any]) -> tuple:
        return ("int", int(c[0]))

    def shard_field(self, c: list[Any]) -> tuple:
        value = c[1]
        if isinstance(value, Token):
            value = scalar(value)
        return ("field", c[0], value)

    def tile_shape(self, c: list[Any]) -> tuple:
        ints = _ints(c)
        devices = c[-1] if isinstance(c[-1], tuple) else None
        return ("tile", ints, devices)

    def iota_devices(self, c: list[Any]) -> tuple:
        perm_tok = c[-1] if isinstance(c[-1], Token) and c[-1].type == "TRANSPOSE" else None
        return ("iota", _ints(c), _perm(perm_tok))

    def first_device(self, c: list[Any]) -> tuple:
        return ("list", (int(c[0]),))

    def sharding_tail(self, c: list[Any]) -> list:
        return list(c)

    def sharding(self, c: list[Any]) -> Sharding:
        items: list[tuple] = []
        for x in c:
            if isinstance(x, list):
                items.extend(x)
            elif isinstance(x, tuple):
                items.append(x)
        return build_sharding(items, _brace_words)

    def named_axis(self, c: list[Any]) -> tuple[str, int]:
        return (scalar(c[0]), int(c[1]))

    def named_axes(self, c: list[Any]) -> tuple:
        return tuple(x for x in c if isinstance(x, tuple))

    def named_ref(self, c: list[Any]) -> tuple[str, int, int]:
        return (scalar(c[0]), int(c[1]), int(c[2])) if c[1] is not None else (scalar(c[0]), 1, 0)

    def named_dim(self, c: list[Any]) -> tuple:
        return tuple(x for x in c if isinstance(x, tuple))

    named_refs = named_dim

    def named_sharding(self, c: list[Any]) -> Sharding:
        from hloscope.ir.named_sharding import named_sharding

        axes, key, devices, *rest = c
        if key is not None and key != "device_ids":
            raise ValueError(f"expected device_ids= after the mesh axes, not {key}=")
        dims = tuple(x for x in rest if isinstance(x, tuple))
        groups: dict[str, tuple] = {}
        names = [x for x in rest if isinstance(x, str)]
        for group, refs in zip(names, dims[len(dims) - len(names):]):
            if group not in ("manual", "unreduced", "replicated") or group in groups:
                raise ValueError(f"expected manual=, unreduced= or replicated= once each, not {group}=")
            groups[group] = refs
        return named_sharding(axes, devices or (), dims[:len(dims) - len(names)], groups)

    def tuple_sharding(self, c: list[Any]) -> Sharding:
        return Sharding("tuple", elements=tuple(x for x in c if isinstance(x, Sharding)))

    # -- records and the generic value
    def field(self, c: list[Any]) -> tuple[str, Any]:
        value = c[1]
        if isinstance(value, Token):
            value = scalar(value)
        return (c[0], value)

    def record(self, c: list[Any]) -> dict[str, Any]:
        return dict(x for x in c if isinstance(x, tuple))

    def braces(self, c: list[Any]) -> Tree:
        return Tree("braces", c)

    def generic(self, c: list[Any]) -> Any:
        return c[0]

    def attr_value(self, c: list[Any]) -> Any:
        (v,) = c
        return scalar(v) if isinstance(v, Token) else v


def _check_layout_args(key: str, args: tuple) -> None:
    """What each layout attribute may hold: T tiles ints/'*', D level names, the rest one int."""
    flat = [a for group in args for a in (group if isinstance(group, tuple) else (group,))]
    if key == "T":
        ok = all(isinstance(a, int) and a <= 1 << 31 for a in flat) and all(args)
    elif key == "D":
        ok = all(isinstance(a, str) and a.rstrip("+~") in ("D", "C", "S", "H") for a in flat)
    elif key in ("L", "E", "S", "M"):
        ok = len(args) == 1 and len(args[0]) == 1 and isinstance(args[0][0], int)
    else:
        return
    if not ok:
        raise ValueError(f"malformed layout attribute {key}{list(args)}")


def _split_x(text: str) -> list[str]:
    # 'x' separates dimensions; '-' signs never contain an 'x'.
    return text.split("x")


def _brace_words(value: Any) -> list[str]:
    if isinstance(value, Tree):  # {manual, replicated}: names are str after `name`
        return [t for t in value.children if isinstance(t, str) and not isinstance(t, Token)]
    return [str(value)]
