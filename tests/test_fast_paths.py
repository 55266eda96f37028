"""The fast path's shortcuts agree with the grammar they stand in for.

The whole-line pattern, the compact shape reader, the compact typed values and the
terminal patterns read from hlo.lark's text are each compared with the route through
Lark on every fixture and corpus file, and on generated and broken inputs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache

import pytest
from conftest import ROOT, corpus_files, fixture_files
from hypothesis import given, settings
from hypothesis import strategies as st

from hloscope.ir.opcodes import async_shorthand
from hloscope.parser import parse
from hloscope.parser.attrs import KEY_RULES, parse_rule
from hloscope.parser.fast.compact import _ACCEPTED, MISSING, accepted, fast_value
from hloscope.parser.fast.patterns import LINE as _LINE
from hloscope.parser.fast.scan import scan_instruction, scan_text
from hloscope.parser.fast.shapes import fast_shape
from hloscope.parser.grammar.source import lark_parser, terminal_regex


@cache
def _modules():
    out = []
    for path in fixture_files() + corpus_files():
        try:
            out.extend(parse(path.read_text(), str(path)))
        except Exception:  # files XLA rejects too; their own tests cover them
            continue
    return out


@cache
def _shape_texts() -> list[str]:
    texts: set[str] = set()
    for m in _modules():
        for c in m.computations:
            texts.update(s for _, s in c.params)
            texts.add(c.result_shape_text or "f32[]")
            for i in c.instructions:
                texts.add(i.shape_text)
                texts.update(s for s in i.operand_shapes if s)
    texts.discard("")
    return sorted(texts)


def _grammar_shape(text: str):
    return parse_rule("shape", text)


def test_fast_shape_equals_grammar_on_every_real_shape():
    texts = _shape_texts()
    assert len(texts) > 300
    fast = 0
    for text in texts:
        shape = fast_shape(text)
        if shape is not None:
            fast += 1
            assert shape == _grammar_shape(text), text
    assert fast > 0.9 * len(texts)  # real shapes are in the compact form


_TYPES = st.sampled_from(["f32", "bf16", "s32", "pred", "u8", "f8e4m3fn", "s4", "token"])
_DIMS = st.lists(st.integers(0, 4096), max_size=4)


@st.composite
def _array_text(draw) -> str:
    etype, dims = draw(_TYPES), draw(_DIMS)
    text = f"{etype}[{','.join(map(str, dims))}]"
    if draw(st.booleans()):
        perm = draw(st.permutations(range(len(dims)))) if draw(st.booleans()) else \
            draw(st.lists(st.integers(0, 5), max_size=4))  # often not a permutation
        items = draw(st.lists(st.sampled_from(
            ["T(8,128)", "(2,1)", "T(256)", "T(4,128)(4,1)", "S(1)", "S(5)", "E(4)", "T(*,8)", "T()"]),
            max_size=3))
        text += "{" + ",".join(map(str, perm)) + (":" + "".join(items) if items else "") + "}"
    return text


@settings(max_examples=400, deadline=None)
@given(st.lists(_array_text(), min_size=1, max_size=3), st.booleans())
def test_fast_shape_never_disagrees_with_grammar(parts, as_tuple):
    text = "(" + ", ".join(parts) + ")" if as_tuple else parts[0]
    try:
        expected = _grammar_shape(text)
    except Exception:
        assert fast_shape(text) is None, text  # the grammar rejects: no fast answer
        return
    got = fast_shape(text)
    assert got is None or got == expected, text


@pytest.mark.parametrize("text", [
    "f32[2,3]{0}", "f32[2]{1}", "f32[99999999999999999999]", "f32[2]{0:T()}", "f32[2]{0:S(1)(2)}",
    "f32[4]{0:T(4294967296)}", "(f32[], (s32[]))", "f32[ 2]", "f32[<=4]", "qq[2]", "(f32[],)", "f32[]{}",
])
def test_fast_shape_leaves_the_unusual_to_the_grammar(text):
    assert fast_shape(text) is None


_COMPACT_RULES = ("int_list", "dim_labels", "name_list", "replica_groups", "window", "sharding",
                  "program_shape", "record", "bool_list", "slice_ranges", "padding", "shape_list")


def test_fast_typed_values_equal_grammar():
    """Every compact value of the fixtures and corpus equals the grammar's value."""
    checked: dict[str, int] = {r: 0 for r in _COMPACT_RULES}
    values = {(KEY_RULES.get(k), v) for m in _modules() for c in m.computations
              for i in c.instructions for k, v in i.attrs.items() if KEY_RULES.get(k) in checked}
    values |= {(KEY_RULES.get(k), v) for m in _modules() for k, v in m.attrs.items()
               if KEY_RULES.get(k) in checked}
    for rule, value in sorted(values):
        fast = fast_value(rule, value)
        if fast is not MISSING:
            checked[rule] += 1
            assert fast == parse_rule(rule, value), (rule, value)
    assert all(n > 0 for n in checked.values()), checked
    for rule, text in [("int_list", "{1, 2}"), ("int_list", "{1,,2}"), ("name_list", "{a,}"),
                       ("dim_labels", "b01f_01io->b01f "), ("replica_groups", "[2,4]<=[8]T()"),
                       ("replica_groups", "{{0, 1}}"), ("window", "{size=3x3  pad=1_1x1_1}"),
                       ("window", "{size=3x3 bogus=1}"), ("sharding", "{devices=[2,1]0,1}"),
                       ("sharding", "{replicated }"), ("record", '{a="x"b=1}'),
                       ("record", "{a=1.5}"), ("record", "{a={b=1}}"), ("bool_list", "{true, false}"),
                       ("program_shape", "{(f32[2]{1})->f32[]}"), ("slice_ranges", "{[0:1],[2:3]}"),
                       ("slice_ranges", "{[0:1], [2]}"), ("padding", "1_2x"), ("padding", "1x2"),
                       ("shape_list", "{f32[2]{1}}"), ("shape_list", "{f32[2], }"),
                       ("replica_groups", "mesh['a'=2]  {'a'}"),
                       ("replica_groups", "mesh['a'=4] {'a':(1)2}"),
                       ("replica_groups", "mesh['a'=2], device_ids=(1,0) {'a'}")]:
        assert fast_value(rule, text) is MISSING, (rule, text)


@pytest.mark.parametrize("rule,text", [
    ("replica_groups", "[3]<=[8]"), ("replica_groups", "[2,4]<=[2,4]T(0,0)"),
    ("sharding", "{devices=[2,2]<=[2,2]T(1,1)}"), ("replica_groups", "mesh['a'=2] {'b'}"),
])
def test_fast_typed_values_fail_like_the_grammar(rule, text):
    with pytest.raises(Exception) as grammar_err:
        parse_rule(rule, text)
    with pytest.raises(ValueError) as fast_err:
        fast_value(rule, text)
    assert str(fast_err.value) in str(grammar_err.value)


def _grammar_takes(text: str) -> bool:
    try:
        parse_rule("generic", text)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


def test_untyped_values_the_fast_check_accepts_the_grammar_accepts():
    """Header aliasing lists and MLIR-dictionary backend_configs are checked by a pattern
    instead of Lark: every real value it accepts, the grammar accepts, and it accepts the
    real ones (else Lark would still load for them)."""
    assert not set(_ACCEPTED) & set(KEY_RULES)  # a typed key's value is always built
    taken = {key: 0 for key in _ACCEPTED}
    for m in _modules():
        values = [*m.attrs.items()] + [(k, v) for c in m.computations for i in c.instructions
                                        for k, v in i.attrs.items() if k in _ACCEPTED]
        for key, value in values:
            if key in _ACCEPTED and accepted(key, value):
                assert _grammar_takes(value), (key, value)
                taken[key] += 1
    assert taken["input_output_alias"] >= 10 and taken["backend_config"] >= 1, taken
    assert taken["output_to_operand_aliasing"] >= 1, taken


_SOUP = st.lists(st.sampled_from(["a", "x.y-z", "i64", "32", "-7", "0.5", "1.0e+00", "1e5", '"s t"',
                                  ",", ":", "=", " ", "{", "}", "(", ")", "-", "1x2", "'", "@", "12ab",
                                  "{0}", "may-alias", "[", "]"]), max_size=14)


@settings(max_examples=400, deadline=None)
@given(_SOUP, st.sampled_from(sorted(_ACCEPTED)))
def test_generated_values_the_fast_check_accepts_the_grammar_accepts(tokens, key):
    text = "{" + "".join(tokens) + "}"
    if accepted(key, text):
        assert _grammar_takes(text), text


def test_a_value_of_adjacent_names_is_decided_not_backtracked():
    """A backend_config of 30 adjacent names and a stray `@` (found by the test above) is
    left by the fast check to the grammar. The check used to try every way to cut
    the names apart: 1.3 s for 3 names, never ending for 30. It runs in a child process
    so that a relapse fails here (after 60 s) instead of hanging the suite."""
    text = "{" + "may-alias" * 30 + "@}"
    code = ("import sys\nfrom hloscope.parser.fast.compact import accepted\n"
            "print(accepted('backend_config', sys.argv[1]))")
    out = subprocess.run([sys.executable, "-c", code, text], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=60)
    assert out.stdout.strip() == "False"
    assert accepted("backend_config", '{mode = "x", heads = 32 : i64, p = 0.000000e+00 : f64}')


def test_lint_of_the_corpus_dumps_does_not_load_the_grammar():
    """Mixtral's 77 KB input_output_alias, slices, paddings, layout constraints and cuDNN
    backend_configs are all read without Lark (its load alone was ~0.3 s of Mixtral's lint)."""
    names = ["xla-benchmark-hlo/hlo_mixtral_8x7b_bf16_1x8.hlo",
             "xla-cpu-benchmark-hlo/gemma3_1b_flax_call.hlo"]
    paths = [ROOT.parent / "shared" / "corpus" / n for n in names]
    if not all(p.exists() for p in paths):
        pytest.skip("corpus not at hand")
    code = ("import sys\nfrom hloscope import cache\ncache.set_enabled(False)\n"
            "from hloscope.lint import LintOptions, lint_files\n"
            "r = lint_files(sys.argv[1:], LintOptions())\n"
            "assert not r.errors and r.findings, r.errors\nprint('lark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, *map(str, paths)],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_terminals_read_from_grammar_text_equal_larks():
    terminals = {t.name: t for t in lark_parser().terminals}
    compared = 0
    for name in ("INT", "FLOAT", "NAME", "STRING", "SQSTRING", "NEG_SPECIAL", "DIM_LABELS", "TYPE_LB"):
        ours = terminal_regex(name)
        theirs = terminals[name].pattern
        assert ours.pattern == theirs.value and set(theirs.flags) == {
            f for f in "imslx" if ours.flags & getattr(re, f.upper())}, name
        compared += 1
    assert compared == 8


def test_line_pattern_and_line_scanner_build_the_same_instruction():
    """Every line the whole-line pattern takes, the line-by-line scanner reads the same."""
    seen = 0
    for path in fixture_files() + corpus_files()[:40]:
        text = path.read_text()
        try:
            modules = scan_text(text, str(path))
        except Exception:
            continue
        by_line = {i.line: i for m in modules for c in m.computations for i in c.instructions}
        lines = text.split("\n")
        lineno, counted = 1, 0
        for mt in _LINE.finditer(text):
            lineno += text.count("\n", counted, mt.start())
            counted = mt.start()
            fast = by_line.get(lineno)
            if fast is None or fast._attrs is not None:
                continue  # not an instruction line, or one the line scanner took
            slow = scan_instruction(lines[lineno - 1], lineno, fast.computation)
            assert (fast.name, fast.opcode, fast.shape_text, fast.operands, fast.literal,
                    fast.is_root, fast.column, fast.attrs) == \
                   (slow.name, slow.opcode, slow.shape_text, slow.operands, slow.literal,
                    slow.is_root, slow.column, slow.attrs), f"{path}:{lineno}"
            seen += 1
    assert seen > 30000


def test_fast_path_keeps_attribute_text_until_asked():
    m = parse("HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0), metadata={op_name=\"a,b\"}\n"
              "  ROOT n = f32[2]{0} negate(p), metadata={op_name=\"x\"}, sharding={replicated}\n}\n")[0]
    neg = m.entry.root
    assert neg._attrs is None and neg.attr_text.startswith(", metadata=")
    assert neg.attrs == {"metadata": '{op_name="x"}', "sharding": "{replicated}"}
    assert neg.called_computations == [] and not neg.may_have("to_apply")
    assert m.entry.instructions[0].literal == "0"


def test_stats_of_a_real_tpu_dump_does_not_load_the_grammar():
    """The compact forms cover real output: Lark is loaded only when something needs it."""
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom hloscope.cli.app import app\n"
            "r = CliRunner().invoke(app, ['stats', '--no-cache', sys.argv[1]])\n"
            "assert r.exit_code == 0, r.output\nprint('lark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "fixtures/tpu/llm_v5p_16.hlo.txt")],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_a_command_leaves_the_modules_it_parsed_out_of_the_collectors_walks():
    """As the collector comes back on after the scan (made with it paused), the CLI's own
    process freezes what it holds (nogc.keep_out_of_gc): the first young collection would
    otherwise walk every instruction (22 ms of `memory` on Mixtral, 72 ms of `lint` on the
    31 MB dump); HLOSCOPE_PLAIN=1 leaves the collector as it is. The output is the same."""
    import os

    # (through the console entry point, as a user runs it: the count is read after the
    # output, as the process leaves)
    code = ("import gc, sys\nfrom hloscope._speed.process import after_output\n"
            "from hloscope.parser import load\n"
            "n = sum(len(c.instructions) for m in load(sys.argv[1]) for c in m.computations)\n"
            "after_output(lambda: print(gc.get_freeze_count() >= n > 0, file=sys.stderr))\n"
            "sys.argv = ['hloscope', 'memory', '--no-cache', '--format', 'json', sys.argv[1]]\n"
            "from hloscope.cli import run\nrun()")
    path = str(ROOT / "fixtures/tpu/llm_v5p_16.hlo.txt")
    runs = {}
    for plain in ("", "1"):
        env = {k: v for k, v in os.environ.items() if k != "HLOSCOPE_PLAIN"}
        if plain:
            env["HLOSCOPE_PLAIN"] = plain
        done = subprocess.run([sys.executable, "-c", code, path], capture_output=True,
                              text=True, cwd=ROOT, check=True, env=env)
        runs[plain] = (done.stderr.strip().splitlines()[-1], done.stdout)
    assert runs[""][0] == "True" and runs["1"][0] == "False"
    assert runs[""][1] == runs["1"][1] and '"temp_peak_bytes"' in runs[""][1]


def test_one_attribute_read_without_splitting_equals_the_split():
    """raw_attr (walks to one key) and called_computations give what the full split gives."""
    compared = 0
    for path in fixture_files():
        for m in parse(path.read_text(), str(path)):
            for c in m.computations:
                for i in c.instructions:
                    if i._attrs is not None:
                        continue  # taken by the line scanner: split already
                    if async_shorthand(i.opcode) is not None:
                        continue  # calls the computation XLA's parser wraps it in, not an attribute
                    keys = ["kind", "calls", "dimensions", "index", "to_apply", "metadata",
                            "backend_config", "custom_call_target", "absent_key"]
                    one = {k: i.raw_attr(k) for k in keys}
                    calls = i.called_computations
                    assert i._attrs is None or any(i.attr_text.count(f"{k}=") > 1 for k in keys)
                    i._attrs, i._calls = None, None
                    assert one == {k: i.attrs.get(k) for k in keys}, f"{path}: {i.name}"
                    assert calls == i.called_computations
                    compared += 1
    assert compared > 30000


def test_several_attributes_read_in_one_walk_equal_each_read_alone():
    """attrs_of (one walk over the attribute list for several keys) gives what attr gives for
    each key, typed, on every instruction of the fixtures and the corpus (a dot's dimension
    lists, keys given twice, absent, a prefix of another, inside a string, metadata) and on
    hand-written lines (labelled as such) that put a key inside a string and give one twice."""
    text = ("HloModule m\nENTRY e {\n  a = f32[2,2]{1,0} parameter(0)\n"
            "  d = f32[2,2]{1,0} dot(a, a), lhs_contracting_dims={1}, metadata={op_name=\"rhs_contracting_dims={0}\"}, rhs_contracting_dims={0}\n"
            "  ROOT t = f32[2,2]{1,0} transpose(d), dimensions={1,0}, dimensions={0,1}\n}\n")
    keys = [("lhs_contracting_dims", "lhs_batch_dims", "rhs_contracting_dims", "rhs_batch_dims"),
            ("dimensions", "index", "absent_key"), ("kind", "calls", "metadata"),
            ("replica_groups", "channel_id", "to_apply"), ("dims", "contracting_dims")]
    compared = 0
    for m in parse(text, "hand-written") + _modules():
        for c in m.computations:
            for i in c.instructions:
                for ks in keys:
                    if i.attr_text:
                        i._attrs = None  # (unsplit, as parsed: another test may have split it)
                    got = i.attrs_of(ks, "default")
                    if i.attr_text:
                        i._attrs = None
                    assert got == [i.attr(k, "default") for k in ks], f"{m.path}: {i.name}: {ks}"
                    compared += 1
    assert compared > 400000


def test_called_computations_read_at_the_top_level_equal_the_split():
    """A lone call key is read in place when no string and no open bracket precede it; on
    every real dump and fixture, and on hand-written lines (labelled as such) that put a
    call key inside a value or after a string, it names what the split names."""
    text = ("HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT c = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n"
            "  z = f32[] constant(0)\n"
            "  x = f32[] reduce(p, z), dimensions={0}, to_apply=r\n"
            "  y = f32[] reduce(p, z), dimensions={0}, frontend_attributes={k=\"}\"}, to_apply=r\n"
            "  v = f32[4]{0} copy(p), frontend_attributes={k=\"}\", to_apply=r, b=2}\n"
            "  w = f32[4]{0} copy(p), backend_config={a=1, to_apply=r, b=2}\n"
            "  ROOT t = (f32[], f32[], f32[4]{0}, f32[4]{0}) tuple(x, y, v, w)\n}\n")
    compared = bracketed = 0
    # parsed afresh: the other tests split the shared modules' attributes
    for m in parse(text, "hand-written") + _modules.__wrapped__():
        for c in m.computations:
            for i in c.instructions:
                if i._attrs is not None or async_shorthand(i.opcode) is not None:
                    continue
                calls = list(i.calls())
                bracketed += len(calls) == 1 and "[" in i.attr_text.partition("=" + calls[0])[0]
                i._attrs, i._calls = None, None
                assert i.attrs is not None and calls == i.called_computations, f"{m.path}: {i.name}"
                compared += 1
    assert compared > 100000 and bracketed > 1000


def test_may_contain_misses_no_value_that_holds_the_text():
    """may_contain (a search of the unsplit text) is True for every instruction one of
    whose values holds the fragment, split or not, on every real dump and fixture; a
    computation's may_contain lists every such instruction of it."""
    held = 0
    for m in _modules():
        for c in m.computations:
            for fragment in ("devices=[", "replicated", "op_name="):
                listed = {id(i) for i in c.may_contain(fragment)}
                for i in c.instructions:
                    if any(fragment in v for v in i.attrs_once().values()):
                        assert i.may_contain(fragment), (m.path, i.name, fragment)
                        assert id(i) in listed, (m.path, i.name, fragment)
                        held += 1
                    elif i._attrs is not None:
                        assert not i.may_contain(fragment)
    assert held > 50000


def test_records_the_check_passes_unbuilt_are_ones_both_readers_type():
    """plain_record (force_attributes passes such a record without building it) holds only
    for records the compact reader and the grammar both type, to the same value: every
    real metadata, frontend_attributes and statistics value, and hand-written corners."""
    from hloscope.parser.fast.compact import plain_record

    values = {v for m in _modules() for c in m.computations for i in c.instructions
              for k, v in i.attrs_once().items() if KEY_RULES.get(k) == "record"}
    values |= {'{op_name="a\\"b"}', '{op_name="x" source_line=-3}', "{}", '{a=b, c="d"}',
               '{op_name="x" source_line=1.5}', '{op_name="x}', "{=1}"}
    plain = [v for v in values if plain_record(v)]
    for v in plain:
        assert fast_value("record", v) == parse_rule("record", v), v
    assert len(plain) > 10000 and not plain_record('{op_name="a\\"b"}')
    assert not plain_record('{op_name="x}') and not plain_record('{op_name="x" source_line=1.5}')


def test_attributes_but_metadata_equal_the_split_less_metadata():
    """attrs_but_metadata (which skips a trailing metadata value unread) is the full split
    less metadata, on every instruction of the real dumps and the fixtures, and so is the
    split of text_but_metadata when it tells one (H006 compares those texts unsplit), and
    raw_attr of every key (which takes a trailing metadata value as the rest of the text,
    and reads another from the comma before it) is the split's; the hand-written lines put
    metadata first, last, alone, and with a brace-comma inside its string."""
    text = ("HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0), metadata={op_name=\"a}, b\"}\n"
            "  q = f32[2]{0} negate(p), metadata={op_name=\"x\"}, sharding={replicated}\n"
            "  r = f32[2]{0} negate(q), sharding={replicated}, metadata={op_name=\"y\"}\n"
            "  t = f32[2]{0} negate(r), metadata={op_name=\"a, sharding={x}\"}, frontend_attributes={b=\"1\"}\n"
            "  ROOT s = f32[2]{0} negate(t), metadata={op_name=\"z\"}\n}\n")
    modules = parse(text, "hand-written") + _modules()
    compared = trailing = told = 0
    for m in modules:
        for c in m.computations:
            for i in c.instructions:
                if i.attr_text:
                    i._attrs = None  # (unsplit, as parsed: another test may have split it)
                fast = i.attrs_but_metadata()
                head = i.text_but_metadata()
                trailing += bool(i.attr_text) and i.attr_text.endswith("}") and "metadata" not in fast
                whole = dict(i.attrs_once())  # (not kept: other tests share the modules)
                whole.pop("metadata", None)
                assert fast == whole, f"{m.path}: {i.name}"
                if head is not None:
                    assert (i._reader().split(head) if head else {}) == whole, f"{m.path}: {i.name}"
                    told += 1
                if i.attr_text:
                    i._attrs = None
                    split = i.attrs_once()
                    for key in (*split, "metadata", "sharding", "replica_groups", "body"):
                        assert i.raw_attr(key) == split.get(key), f"{m.path}: {i.name}: {key}"
                compared += 1
    assert compared > 100000 and trailing > 10000 and told > compared * 0.8, (compared, told)


_SCALARS = st.sampled_from(["1", "-2", "0.5", "-1e3", "true", "nan", "-inf", "...", "x.1"])
_LITERALS = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4).map(lambda xs: "{" + ", ".join(xs) + "}"),
    max_leaves=12)
_DAMAGE = st.sampled_from(["", "%0", ",", "{", "}", " 2", "f32[] ", ",,"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LITERALS, min_size=1, max_size=3), _DAMAGE, st.integers(0, 40))
def test_literals_the_fast_path_takes_are_ones_the_grammar_takes(items, damage, at):
    """literal_ok is never more lenient than the grammar (the fast path trusts it)."""
    from hloscope.parser import ParseError
    from hloscope.parser.fast.patterns import literal_ok

    text = ", ".join(items)
    text = text[:at] + damage + text[at:]
    if not literal_ok(text.strip()):
        return  # the grammar decides those
    module = f"HloModule m\nENTRY e {{\n  ROOT c = f32[] constant({text})\n}}\n"
    from hloscope.parser.grammar.strict import parse_strict

    try:  # (the grammar alone: whether the literal fits f32[] is validation's, on both paths)
        parse_strict(module, "<string>")
    except ParseError as e:
        pytest.fail(f"the fast path takes {text!r}, the grammar rejects it: {e}")


def test_strict_mode_parses_a_large_module_in_two_halves_with_the_same_result(monkeypatch):
    from hloscope._speed import process
    from hloscope.parser.grammar import halves
    from hloscope.parser.split import split_point

    text = (ROOT / "fixtures/tpu/llm_v5p_16.hlo.txt").read_text()
    split = split_point(text)
    assert split is not None and text[split - 2] == "}" and len(text) // 6 <= split <= len(text) * 5 // 6
    assert halves.parse_halves(text, "m.hlo") is None  # a library caller: no worker unless allowed
    monkeypatch.setitem(process._spawn, "allowed", True)
    monkeypatch.setattr(halves, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(process.os, "cpu_count", lambda: 2)  # (also on a one-core runner)
    parsed = halves.parse_halves(text, "m.hlo")
    from irdump import dump_module

    from hloscope.parser.grammar.strict import parse_strict

    if process.may_spawn():  # (HLOSCOPE_PLAIN=1: never split, checked below)
        assert parsed is not None
        assert [dump_module(m) for m in parsed] == [dump_module(m) for m in parse_strict(text, "m.hlo")]
        # a broken second half: no result from the halves, so the caller's whole parse reports it
        broken = text[:split] + text[split:].replace(" = ", " == ", 1)
        assert halves.parse_halves(broken, "m.hlo") is None
    else:
        assert parsed is None
    monkeypatch.setenv("HLOSCOPE_PLAIN", "1")
    assert halves.parse_halves(text, "m.hlo") is None  # the switch turns the trick off
    assert split_point(text + "\nHloModule second\n") is None  # two modules: whole


def test_patterns_kept_on_disk_are_the_patterns(tmp_path, monkeypatch):
    """hloscope._speed.regex_cache: a program read back from its folder matches exactly as
    re.compile's does; a damaged file, a folder open to others or none at all: compiled
    afresh."""
    from hloscope._speed import regex_cache

    monkeypatch.delenv("HLOSCOPE_PLAIN", raising=False)  # (this tests the trick itself)
    folder = tmp_path / "compiled"
    monkeypatch.setenv("HLOSCOPE_COMPILED_DIR", str(folder))
    text = (ROOT / "fixtures/tpu/transformer_v5p.hlo.txt").read_text()
    fresh = re.compile(_LINE.pattern, _LINE.flags)
    written = regex_cache.compile(_LINE.pattern, _LINE.flags)
    kept = list(folder.iterdir())
    assert len(kept) == 1 and folder.stat().st_mode & 0o777 == 0o700
    read_back = regex_cache.compile(_LINE.pattern, _LINE.flags)
    for p in (written, read_back):
        assert (p.pattern, p.flags, p.groups, p.groupindex) == \
            (fresh.pattern, fresh.flags, fresh.groups, fresh.groupindex)
        assert [m.group(0, *range(1, p.groups + 1)) for m in p.finditer(text)] == \
            [m.group(0, *range(1, fresh.groups + 1)) for m in fresh.finditer(text)]
    kept[0].write_bytes(b"\x00not marshal")
    assert regex_cache.compile(_LINE.pattern, _LINE.flags).pattern == fresh.pattern
    assert regex_cache.compile("a(b)c").match("abc").group(1) == "b"
    folder.chmod(0o777)  # writable by others: not trusted, not written
    before = sorted(p.name for p in folder.iterdir())
    assert regex_cache.compile("d(e)f").match("def").group(1) == "e"
    assert sorted(p.name for p in folder.iterdir()) == before
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("HLOSCOPE_COMPILED_DIR", str(blocked / "compiled"))  # cannot be made
    assert regex_cache.compile("x(y)z").match("xyz").group(1) == "y"
    # CPython's private internals not as expected (another version): re.compile's pattern
    monkeypatch.setenv("HLOSCOPE_COMPILED_DIR", str(tmp_path / "other"))

    def gone(*args):
        raise AttributeError("module 're._compiler' has no attribute '_code'")

    monkeypatch.setattr(regex_cache, "_program", gone)
    fallback = regex_cache.compile(_LINE.pattern, _LINE.flags)
    assert [m.group(0) for m in fallback.finditer(text)] == [m.group(0) for m in fresh.finditer(text)]
    assert not (tmp_path / "other").exists() or not list((tmp_path / "other").iterdir())
    monkeypatch.setenv("HLOSCOPE_PLAIN", "1")  # the switch: re.compile, nothing kept
    monkeypatch.setenv("HLOSCOPE_COMPILED_DIR", str(tmp_path / "plain"))
    assert regex_cache.compile("p(q)r").match("pqr").group(1) == "q"
    assert not (tmp_path / "plain").exists()


def _whole_line_check():
    """LINE as it would be with backend_config checked inline, like every attribute."""
    from hloscope.parser.fast import patterns as p

    attrs = rf"((?:,[ \t]*{p._BARE}={p._VALUE})*)[ \t]*"
    head = p._INSTRUCTION[: p._INSTRUCTION.index("((?:,[ \\t]*(?!backend_config=)")]
    return re.compile(rf"(?:{head}{attrs}|{p._HEADER_BODY}|(\}})[ \t]*|[ \t]*)")


def test_backend_config_tail_checked_once_is_the_whole_line_check():
    """LINE takes backend_config and what follows it as one text (group 10), checked by
    TAIL once per distinct text: the lines taken, and their groups, are those of the
    check done inline, on every real line and on 30,000 mutants of attribute lines."""
    import random

    from hloscope.parser.fast.patterns import HEAD_GROUP, TAIL

    inline = _whole_line_check()

    def verdicts(line):
        a, b = inline.fullmatch(line), _LINE.fullmatch(line)
        if b is not None and b.lastindex is not None and b.lastindex < HEAD_GROUP \
                and b.group(10) is not None and TAIL.fullmatch(b.group(10)) is None:
            b = None
        if a is None or b is None:
            return a is None, b is None
        if a.lastindex is None or b.lastindex is None:
            return a.lastindex, b.lastindex
        if b.lastindex < HEAD_GROUP:
            return a.groups()[:9], b.groups()[:9]
        return a.groups()[9:], b.groups()[10:]

    attr_lines = []
    for path in fixture_files() + corpus_files()[:40]:
        for line in path.read_text().split("\n"):
            fast, full = verdicts(line)
            assert fast == full, line
            if "backend_config=" in line or "metadata=" in line:
                attr_lines.append(line)
    rng = random.Random(20261122)
    for k in range(30000):
        chars = list(attr_lines[k % len(attr_lines)])
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(chars) + 1)
            if rng.random() < 0.4 and chars:
                del chars[min(i, len(chars) - 1)]
            else:
                chars.insert(i, rng.choice(",{}[]()\"= \t/'\\xk%"))
        line = "".join(chars)
        fast, full = verdicts(line)
        assert fast == full, line


def test_the_name_pattern_is_the_grammars():
    """hloscope.ir.instruction.NAME, on which the fast path's patterns are built, is the
    grammar's NAME terminal (less its optional `%`)."""
    from hloscope.ir.instruction import NAME
    from hloscope.parser.grammar.source import terminal_source

    assert "%?" + NAME == terminal_source("NAME")[0]


def test_debug_table_records_read_as_the_grammar_reads_them():
    """HAND-WRITTEN (labelled): a FileLocations entry with a doubled comma is an error on
    both routes, and a `%`-prefixed field name loses its `%` on both."""
    from hloscope.parser import ParseError

    module = "HloModule m\n\nFileLocations\n  1 {{{}}}\n\nENTRY e {{\n  ROOT a = f32[] constant(0)\n}}\n"
    bad = module.format("file_name_id=1,, line=3")
    errors = []
    for strict in (False, True):
        with pytest.raises(ParseError) as e:
            parse(bad, "m.hlo", strict=strict)
        errors.append((e.value.line, e.value.column, e.value.message))
    assert errors[0] == errors[1] and errors[0][:2] == (4, 21)
    good = module.format("%file_name_id=1, line=3")
    assert parse(good, "m.hlo")[0].file_locations == parse(good, "m.hlo", strict=True)[0].file_locations \
        == {1: {"file_name_id": 1, "line": 3}}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "", "b c", "\r", "%x = f32[] parameter(0)", "é"]),
                max_size=8),
       st.booleans())
def test_lines_by_offset_equal_the_split_lines(parts, final_break):
    """lint's lines (found through the offsets of the line breaks) are the lines the parser
    numbers: text.split('\\n') less a final empty one, a '\\r' before a break dropped."""
    from hloscope.parser.text import Lines

    text = "\n".join(parts) + ("\n" if final_break and parts else "")
    want = [p[:-1] if p.endswith("\r") else p for p in text.split("\n")]
    if not text or text.endswith("\n"):
        want.pop()
    lines = Lines(text)
    assert len(lines) == len(want) and list(lines) == want and lines[1:3] == want[1:3]
    if want:
        assert lines[-1] == want[-1]
    with pytest.raises(IndexError):
        lines[len(want)]


def test_lines_of_real_dumps_equal_their_splitlines():
    from hloscope.parser.text import Lines

    for path in fixture_files()[:20] + corpus_files()[:10]:
        text = path.read_text()
        assert list(Lines(text)) == text.splitlines(), path


def test_line_breaks_found_by_the_core_are_the_patterns():
    """The compiled core's line breaks (ASCII texts) are the ones the pattern finds, on real
    dumps; a text with other characters (character offsets are not byte offsets there) is
    left to the pattern."""
    from array import array

    from hloscope.parser.text import _BREAK, line_breaks

    texts = [p.read_text(encoding="utf-8", errors="replace")
             for p in fixture_files()[:20] + corpus_files()[:10]]
    texts += ["", "a", "\n", "a\nb\n\n", 'x = "é"\ny\n']
    for text in texts:
        assert line_breaks(text) == array("q", (m.start() for m in _BREAK.finditer(text)))


# -- the bracket walkers of hloscope.parser.text, against a character-by-character reading

_CLOSER = {"(": ")", "[": "]", "{": "}"}


def _string_end(s: str, i: int, end: int) -> int | None:
    """Index of the quote closing the string opened at s[i]; None when it does not close
    (a backslash escapes any character but a line break)."""
    j = i + 1
    while j < end:
        if s[j] == "\\":
            if j + 1 >= end or s[j + 1] == "\n":
                return None
            j += 2
        elif s[j] == s[i]:
            return j
        else:
            j += 1
    return None


def _walk(s: str, start: int, end: int, stack: list[str], commas: bool):
    """Yield ("comma", i) at depth 0 and ("close", i) when the stack empties; raise as the
    walkers do."""
    from hloscope.parser.text import Unbalanced

    i = start
    while i < end:
        c = s[i]
        if c in "\"'":
            j = _string_end(s, i, end)
            if j is None:
                raise ValueError(f"unterminated string at offset {i}")
            i = j
        elif c in _CLOSER:
            stack.append(_CLOSER[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                raise ValueError(f"unmatched {c!r} at offset {i}")
            if not stack:
                yield "close", i
        elif c == "," and commas and not stack:
            yield "comma", i
        i += 1
    if stack:
        raise Unbalanced("unclosed bracket")


def _reference_split(s: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, piece = [], start
    for kind, i in _walk(s, start, end, [], True):
        if kind == "comma":
            spans.append((piece, i))
            piece = i + 1
    return [*spans, (piece, end)]


def _reference_close(s: str, i: int) -> int:
    for kind, j in _walk(s, i + 1, len(s), [_CLOSER[s[i]]], False):
        if kind == "close":
            return j
    raise AssertionError("unreachable: the walk raises when the bracket stays open")


def _reference_nesting(s: str, limit: int) -> int | None:
    depth = 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
            if depth > limit:
                return i
        elif c in ")]}" and depth:
            depth -= 1
    return None


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except ValueError as e:  # (Unbalanced is one)
        return type(e).__name__, str(e)


_PIECES = st.sampled_from(list("()[]{},,\"'\\ a\n") + ["bf16[512,8]{1,0}", "(0, {}, x)", '"a,)"',
                                                        "'\\''", "{1,0:T(8,128)}", ", "])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join), st.integers(0, 4), st.data())
def test_bracket_walkers_agree_with_a_character_by_character_reading(s, limit, data):
    """split_top, match_close and nesting_beyond skip plain text, strings and innermost
    bracket pairs in the regex engine (nesting_beyond by taking out innermost pairs level
    by level first); the reference reads one character at a time. Spans, closing offsets,
    nesting offsets and errors (kind and message) agree."""
    from hloscope.parser.text import match_close, nesting_beyond, split_top

    start = data.draw(st.integers(0, len(s)))
    end = data.draw(st.integers(start, len(s)))
    assert _outcome(split_top, s, start, end) == _outcome(_reference_split, s, start, end)
    assert _outcome(split_top, s) == _outcome(_reference_split, s, 0, len(s))
    for i, c in enumerate(s):
        if c in _CLOSER:
            assert _outcome(match_close, s, i) == _outcome(_reference_close, s, i), (s, i)
    assert nesting_beyond(s, limit) == _reference_nesting(s, limit)
    deep = "(" * (20 + limit) + s + ")" * (20 + limit)  # (past the level-by-level passes)
    assert nesting_beyond(deep, limit + 18) == _reference_nesting(deep, limit + 18)
