"""The regular expressions of the fast path, and the attribute-list reads that rely on
what the whole-line pattern has checked.

`LINE`'s size is kept in check (see the nesting comment below): its first compile in a
process, before hloscope._speed.regex_cache keeps it, costs ~10 ms per 10 KB. The split
and seek patterns only find value ends in text LINE has already accepted.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache

from hloscope._speed import regex_cache
from hloscope.ir.instruction import NAME
from hloscope.parser.text import STRING

# The whole-line pattern of the fast path. Strings may not span lines; a `/` or `'`
# outside strings (comments, odd quoting) leaves the line to the line scanner, which
# strips comments first. Bracketed values must pair exactly, so every nesting level
# copies the level below once per bracket kind it allows: the pattern is kept small by
# allowing 3 levels of any kind, or 8 of the shape protobuf JSON takes in backend_config:
# objects and arrays 5 deep, then {, [, { (1 + 7 levels).
# Values nested otherwise (rare) also go to the line scanner.
_STR = r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
# (ASCII control characters, which no HLO token holds, also leave a line to the line
# scanner, which leaves the file to the grammar: it says where)
_CTRL = r"\x00-\x08\x0b-\x1f\x7f"
_PLAIN = rf"[^()\[\]{{}}\"'/\n{_CTRL}]"
_PAIRS = {"(": r"\((?:{})*+\)", "[": r"\[(?:{})*+\]", "{": r"\{{(?:{})*+\}}"}


def _nested(levels: list[str]) -> str:
    """Bracketed text nested len(levels) deep; levels[k] = the bracket kinds at depth k+1."""
    inner = _PLAIN + "++"
    for kinds in reversed(levels):
        inner = "(?:" + "|".join([_PLAIN + "++", _STR, *(_PAIRS[k].format(inner) for k in kinds)]) + ")"
    return inner


_JSON_LEVELS = ["[{"] * 4 + ["{", "[", "{"]
# At the top level of a value, no blank before a `key=`: `kind=kLoop calls=%f` (a lost
# comma) is not one value (`mesh[...] {...}` replica groups do have a blank).
_KEY_AHEAD = rf"[ \t]*%?{NAME}[ \t]*="
_VALUE = ("(?:" + "|".join([rf"[^,()\[\]{{}}\"'/\n \t{_CTRL}]++", rf"[ \t]++(?!{_KEY_AHEAD})", _STR,
                            *(_PAIRS[k].format(_nested(["([{"] * 2)) for k in "([{"),
                            _PAIRS["{"].format(_nested(_JSON_LEVELS))]) + ")++")
_BARE = NAME + "+"  # `*+`, possessive: no name is followed by a name character
_SHAPE = (r"[a-z][a-z0-9]*\[[^\]/\n]*\](?:\{[^{}/\n]*\})?"
          r"|\((?:[^()/\n]|\((?:[^()/\n]|\([^()/\n]*\))*\))*\)")
_PARAM = rf"[ \t]*%?({_BARE})[ \t]*:[ \t]*({_SHAPE})[ \t]*"
# (in the header, the same without groups: a group repeated per parameter only costs,
# PARAM_ITEM reads the parameters afterwards; 1.6 -> 0.5 ms on a 1,000-parameter entry)
_PARAM_PLAIN = rf"[ \t]*%?{_BARE}[ \t]*:[ \t]*(?:{_SHAPE})[ \t]*"
_HEADER_BODY = (rf"[ \t]*(ENTRY[ \t]+)?(%?{_BARE})[ \t]*\(((?:{_PARAM_PLAIN}(?:,{_PARAM_PLAIN})*)?)\)"
                rf"[ \t]*->[ \t]*({_SHAPE})[ \t]*\{{[ \t]*")
HEADER = regex_cache.compile(_HEADER_BODY + "$")
# The attribute list (group 9). XLA prints backend_config last, and a dump repeats a few
# hundred of them thousands of times (a third of a TPU dump's text): from it on, the rest
# of the line is taken as group 10 here, and checked by `TAIL` once per distinct text.
# Operands are names (group 6), or typed as older dumps print them, `f32[2]{0} %a` (group 7),
# or a constant's or parameter's literal (group 8).
_TYPED_OPERAND = rf"(?:{_SHAPE})[ \t]+%?{_BARE}"
_OPERAND = _BARE + r"(?:#[0-9]++)*+"  # `%x#0`: a tuple element (hloscope.parser.tuple_refs)
_INSTRUCTION = (
    rf"([ \t]*)(ROOT[ \t]+)?%?({_BARE})[ \t]*=[ \t]*({_SHAPE})[ \t]+({_BARE})"
    rf"\((?:((?:%?{_OPERAND}(?:,[ \t]*%?{_OPERAND})*)?)|({_TYPED_OPERAND}(?:,[ \t]*{_TYPED_OPERAND})*)"
    rf"|([^()/\n]*))\)"
    rf"((?:,[ \t]*(?!backend_config=){_BARE}={_VALUE})*(?:,[ \t]*backend_config=([^\n]*))?)[ \t]*"
)
# One line of the fast path: an instruction (groups 1-10), a computation header (11-18),
# a bare closing brace (19) or a blank line (no group).
LINE = regex_cache.compile(rf"^(?:{_INSTRUCTION}|{_HEADER_BODY}|(\}})[ \t]*|[ \t]*)$", re.M)
HEAD_GROUP, CLOSE_GROUP = 11, LINE.groups
# One typed operand of group 7: its shape text and its name.
TYPED_ITEM = regex_cache.compile(rf"({_SHAPE})[ \t]+%?({_BARE})")
# An instruction line LINE takes is one the whole-line check takes when its group 9
# (if any) is a value and the attributes after it.
TAIL = regex_cache.compile(rf"{_VALUE}(?:,[ \t]*{_BARE}={_VALUE})*[ \t]*")
# Splitting an attribute list `LINE` has accepted: its brackets are known to pair up,
# so one bracket class per level finds the same value ends (and the pattern stays small).
_ANY_PAIR = _PLAIN + "++"
for _ in range(8):
    _ANY_PAIR = rf"(?:{_PLAIN}++|{_STR}|[(\[{{](?:{_ANY_PAIR})*+[)\]}}])"
_SPLIT_VALUE = rf"(?:[^,()\[\]{{}}\"'/\n]++|{_STR}|[(\[{{](?:{_ANY_PAIR})*+[)\]}}])++"
ATTR_ITEM = regex_cache.compile(rf",[ \t]*({_BARE})=({_SPLIT_VALUE})")
PARAM_ITEM = regex_cache.compile(_PARAM)
OPERAND_SEP = regex_cache.compile(r",[ \t]*")
CONTROL = regex_cache.compile(f"[{_CTRL}]")
BLANK_KEY = regex_cache.compile(r"[ \t]" + _KEY_AHEAD)


@cache
def _literal() -> re.Pattern[str]:
    """The text inside constant(...)/parameter(...): comma-separated scalars, names and
    braced lists nested up to 6 deep, from the grammar's terminals (deeper or other
    forms: the grammar decides)."""
    from hloscope.parser.grammar.source import terminal_source

    scalar = "|".join(f"(?:{terminal_source(t)[0]})" for t in ("FLOAT", "NEG_SPECIAL", "INT", "NAME"))
    scalar = rf"{scalar}|\(\s*(?:{scalar})\s*,\s*(?:{scalar})\s*\)"  # and complex (re, im)
    item = rf"(?:{scalar}|\.\.\.)"
    # each item is followed by a comma and another item, or by the closing brace: one copy
    # of the level below per level (a list form would need two)
    for _ in range(6):
        item = rf"(?:\{{\s*(?:{item}\s*(?:,\s*(?!\}})|(?=\}})))*\}}|{scalar}|\.\.\.)"
    return regex_cache.compile(rf"\s*(?:{item}\s*(?:,\s*(?!$)|$))*")


def literal_ok(text: str) -> bool:
    """Whether a constant's or parameter's literal text is one the grammar accepts (False
    also for forms left to the grammar)."""
    return text.isdigit() or _literal().fullmatch(text) is not None


def seek_attrs(attr_text: str, keys: Collection[str], most: int, start: int = 0) -> dict[str, str]:
    """{key: value} of `keys` in an attribute list `LINE` has accepted, reading the
    attributes only up to the `most`-th of them (a key given twice: the last)."""
    if most == 1 and start:  # (one key, from its separating comma: Instruction.raw_attr)
        m = ATTR_ITEM.match(attr_text, start)
        if m is not None and m.group(1) in keys and not (
                m.group(1) == "replica_groups" and MESH_DEVICES_AHEAD.match(attr_text, m.end())):
            return {m.group(1): m.group(2).rstrip()}
    out: dict[str, str] = {}
    for m in ATTR_ITEM.finditer(attr_text, start):
        key = m.group(1)
        if key in keys:
            out[key] = m.group(2).rstrip()
            if key == "replica_groups" and MESH_DEVICES_AHEAD.match(attr_text, m.end()):
                return {k: v for k, v in split_attr_text(attr_text).items() if k in keys}
            most -= 1
            if most <= 0:
                break
    return out


# `replica_groups=mesh[...], device_ids=(...) {...}`: XLA prints the mesh's device order
# after a comma, inside the one value.
MESH_DEVICES_AHEAD = regex_cache.compile(r",[ \t]*device_ids=\(")


def split_attr_text(attr_text: str) -> dict[str, str]:
    """{key: value} of an attribute list `LINE` has accepted (so the split cannot fail)."""
    out = {k: v.rstrip() for k, v in ATTR_ITEM.findall(attr_text)}
    return join_mesh_devices(out) if "device_ids" in out else out


def join_mesh_devices(attrs: dict[str, str]) -> dict[str, str]:
    """`replica_groups=mesh[...]` and `device_ids=(...) {...}`, split at their comma,
    joined back into the one replica_groups value they are."""
    groups = attrs.get("replica_groups", "")
    if not groups.startswith("mesh") or groups.endswith("}"):
        return attrs
    out = {}
    for key, value in attrs.items():
        if key == "device_ids":
            out["replica_groups"] = f"{groups}, device_ids={value}"
        elif key != "replica_groups":
            out[key] = value
    return out


_INNERMOST = regex_cache.compile(r"\([^()\[\]{}]*\)|\[[^()\[\]{}]*\]|\{[^()\[\]{}]*\}")


def top_level_blank(value: str) -> bool:
    """Whether a value has, outside its strings and brackets, a blank before a `key=`
    (`kLoop calls=%f`: a lost comma; the grammar says where)."""
    if " " not in value and "\t" not in value:
        return False
    v = STRING.sub('""', value)
    while True:
        shorter = _INNERMOST.sub("", v)
        if shorter == v:
            return BLANK_KEY.search(v) is not None
        v = shorter
