"""The compiled core's read of one attribute (`hloscope_native.attr_value`, which
`Instruction.raw_attr` asks on the instructions the core's scan builds) and of a whole list
(`attr_items`, which their `attrs` split with) against the pattern route's (`hloscope.parser.fast.patterns`: ATTR_ITEM, the items as the grammar's LINE takes
them), on every instruction of the modules at hand (bench/conformance.collect: the fixtures,
the corpus, XLA's test modules) and on mutated attribute lists."""

from __future__ import annotations

import random

import pytest
from conformance import collect

from hloscope.ir import Instruction
from hloscope.parser.fast.patterns import split_attr_text
from hloscope.parser.reader import NATIVE_READER, READER

pytestmark = pytest.mark.skipif(
    __import__("hloscope.parser.fast.native", fromlist=["available"]).available() is None,
    reason="the compiled extension is not in use (HLOSCOPE_PLAIN=1 or not built)")

# keys every list is asked for, given or not: the common ones, a key inside metadata's value,
# and names that are the end of another key (`kind=` in `some_kind=`)
_ASKED = ("kind", "calls", "metadata", "backend_config", "sharding", "replica_groups",
          "op_name", "channel_id", "device_ids", "dimensions", "to_apply", "estimated_cycles")


def _python(attr_text: str, key: str):
    """raw_attr as the pattern route reads it (the same list, a reader with no core)."""
    return Instruction("x", "add", "f32[]", attr_text=attr_text, reader=READER).raw_attr(key)


def _native(attr_text: str, key: str):
    return Instruction("x", "add", "f32[]", attr_text=attr_text, reader=NATIVE_READER).raw_attr(key)


def _lists() -> list[str]:
    from hloscope.parser import ParseError, parse

    out: list[str] = []
    for label, text in collect():
        try:
            modules = parse(text, label)
        except ParseError:
            continue
        out += [i.attr_text for m in modules for c in m.computations for i in c.instructions
                if i.attr_text and i._attrs is None]
    return out


@pytest.fixture(scope="module")
def lists() -> list[str]:
    found = _lists()
    assert len(found) > 50_000  # (the modules at hand: a few hundred thousand)
    return found


def test_every_key_of_every_list_at_hand_reads_as_the_pattern_route(lists):
    distinct = list(dict.fromkeys(lists))
    asked = 0
    for attr_text in distinct:
        for key in {*split_attr_text(attr_text), *_ASKED}:
            assert _native(attr_text, key) == _python(attr_text, key), (attr_text, key)
            asked += 1
    assert asked > 100_000


def test_every_list_at_hand_splits_as_the_pattern_route(lists):
    """The whole list, as `attrs` gives it (dicts equal in their order too)."""
    for attr_text in dict.fromkeys(lists):
        got = NATIVE_READER.split(attr_text)
        want = READER.split(attr_text)
        assert list(got.items()) == list(want.items()), attr_text


def test_mutated_lists_read_as_the_pattern_route_or_are_left_to_it(lists):
    """Lists the scan would not keep (a bracket, quote or comma moved): the core reads them
    as the pattern does, or leaves them to it (False); it never answers differently."""
    import hloscope_native

    rng = random.Random(37)
    alphabet = '(){}[]",%= \\\'x'
    sample = rng.sample(list(dict.fromkeys(lists)), 3000)
    left = 0
    for attr_text in sample:
        chars = list(attr_text)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars))
            chars[at:at + rng.randint(0, 2)] = rng.choice(alphabet)
        text = "".join(chars)
        items = hloscope_native.attr_items(text)
        if items is not None:
            assert list(NATIVE_READER.split(text).items()) == list(READER.split(text).items()), text
        for key in ("calls", "metadata", "backend_config", "kind", "sharding"):
            got = hloscope_native.attr_value(text, key)
            if got is False:
                left += 1
                continue
            try:
                want = _python(text, key)
            except Exception:  # noqa: BLE001 - the pattern route refuses it: so may the core not answer
                want = object()
            assert got == want, (text, key)
    assert left  # (some are not items the core reads: Python's)


def test_twice_given_and_mesh_groups_are_left_to_python():
    """HAND-WRITTEN attribute lists (labelled as such) in forms the corpus does not hold."""
    import hloscope_native

    assert hloscope_native.attr_value(", a=1, b=2, a=3", "a") is False
    assert _native(", a=1, b=2, a=3", "a") == _python(", a=1, b=2, a=3", "a") == "3"
    mesh = ", replica_groups=mesh[a=2,b=4], device_ids=(1,0) {0}, channel_id=2"
    assert hloscope_native.attr_value(mesh, "replica_groups") is False
    assert _native(mesh, "replica_groups") == _python(mesh, "replica_groups")
    assert _native(mesh, "channel_id") == "2"
    assert NATIVE_READER.split(mesh) == READER.split(mesh)  # (the mesh value joined back)
    assert NATIVE_READER.split(", a=1, b=2, a=3") == READER.split(", a=1, b=2, a=3") == {"a": "3", "b": "2"}


def _scan_attrs(text: str, core: bool):
    """The line scanner's split of `, key=value` items (`items.split_items`), by the core
    (`attr_items_deep`) where it answers or by the patterns alone: the dict, or "miss"."""
    import hloscope_native

    from hloscope.parser.fast import items

    split = hloscope_native.attr_items_deep if core else None
    real = items.core_function
    items.core_function = lambda name: split if name == "attr_items_deep" else real(name)
    try:
        return list(items.split_items(text, 0).items())
    except (items.ScanMiss, ValueError) as e:  # (an unmatched bracket: ValueError)
        return type(e).__name__
    finally:
        items.core_function = real


def _headers() -> list[str]:
    """The attribute lists of the module headers at hand (comments out, as the scan reads
    them): entry_computation_layout nests deeper than any instruction's list."""
    import re

    from hloscope.parser.text import strip_comments

    out = []
    for _, text in collect():
        for line in text.splitlines():
            m = re.match(r"\s*HloModule\s+\S+?(,.*)$", strip_comments(line))
            if m:
                out.append(m.group(1))
    return list(dict.fromkeys(out))


def test_headers_and_lists_at_hand_split_by_the_core_as_by_the_patterns(lists):
    import hloscope_native

    headers = _headers()
    answered = sum(hloscope_native.attr_items_deep(h) is not None for h in headers)
    assert len(headers) > 300 and answered > 0.9 * len(headers)  # (the core reads most)
    for text in [*headers, *dict.fromkeys(lists)]:
        assert _scan_attrs(text, True) == _scan_attrs(text, False), text


def test_mutated_headers_split_by_the_core_as_by_the_patterns_or_left_to_them():
    """Headers with a bracket, quote, blank, `=` or comma moved: the same dict, or the same
    refusal (ScanMiss), whether the core answered or left them to the patterns."""
    rng = random.Random(38)
    alphabet = '(){}[]",%= \t\'x:->'
    headers = _headers()
    for header in rng.sample(headers, min(3000, len(headers))):
        chars = list(header)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars))
            chars[at:at + rng.randint(0, 2)] = rng.choice(alphabet)
        text = "".join(chars)
        assert _scan_attrs(text, True) == _scan_attrs(text, False), text


def test_forms_the_core_reads_otherwise_are_left_to_the_patterns():
    """HAND-WRITTEN lists (labelled as such): a blank after `=`, a blank value, `%` before a
    key, a blank before `=`, a computation written inside a call key (also where the key is
    given again after it): the same dict or the same refusal by both routes."""
    for text in (", a= 1, b=2", ", a=1, b= ", ", a=1, b=\t", ", %a=1", ", a =1",
                 ", calls={x=1}", ", calls={x=1}, calls=%f", ", a={(f32[1]{0:T(8)})->f32[]}, b=2",
                 ", replica_groups=mesh[a=2], device_ids=(1,0) {0}"):
        assert _scan_attrs(text, True) == _scan_attrs(text, False), text


def _patterns_strip(s: str) -> str:
    from hloscope.parser import text

    return text._COMMENT.sub(r"\1", s) if ("/*" in s or "//" in s) else s


def test_long_lines_lose_their_comments_by_the_core_as_by_the_patterns():
    """`strip_comments` of every commented line at hand (a long one by the core's
    comments_out), and of mutants of the long ones (quotes, comment marks moved), against
    the patterns alone."""
    import hloscope_native

    from hloscope.parser.text import strip_comments

    lines = [line for _, text in collect() for line in text.splitlines() if "/*" in line]
    long = [line for line in dict.fromkeys(lines) if len(line) > 512]
    assert len(long) > 100 and sum(hloscope_native.comments_out(s) is not None for s in long) > 100
    for line in dict.fromkeys(lines):
        assert strip_comments(line) == _patterns_strip(line), line
    rng = random.Random(39)
    for line in rng.sample(long, min(2000, len(long))):
        chars = list(line)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars))
            chars[at:at + rng.randint(0, 2)] = rng.choice(['"', "'", "/*", "*/", "//", "\\", "x"])
        s = "".join(chars)
        assert strip_comments(s) == _patterns_strip(s), s
