"""The compiled scanner (native/, issue #37's first step) against the parser: on every
fixture and corpus module, the same computations, and per instruction the same name, opcode,
shape and operand names; a line it cannot read is reported as a miss, never guessed. Skipped
where the extension is not built (`pip install ./native`, which ./setup.sh does)."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES, corpus_files, fixture_files, rel

from hloscope.parser import ParseError, load
from hloscope.parser.attrs import parse_shape

native = pytest.importorskip("hloscope_native")

FILES = fixture_files() + corpus_files()


def _table(text: str) -> dict:
    return native.scan_table(text)


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_the_table_equals_the_parsed_module(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    t = _table(text)
    try:
        modules = load(path)
    except ParseError:
        return  # (the parser rejects it: nothing to compare; the scanner must only not crash)
    if len(modules) != 1 or t["misses"]:
        return  # (several modules in one file; or lines the scanner leaves to the parser)
    (m,) = modules
    written = {name for name, *_ in t["computations"]}
    theirs = [c for c in m.computations if c.name in written]  # (not the parser's own async wrappers)
    assert [name for name, *_ in t["computations"]] == [c.name for c in theirs]
    assert t["module"] in (m.name, "")  # ("": no HloModule line; the parser names it)
    for (name, entry, first, end), comp in zip(t["computations"], theirs):
        assert entry == (comp is m.entry)
        got = [(t["names"][i], t["opcodes"][i], tuple(t["operands"][i]), t["roots"][i])
               for i in range(first, end)]
        want = [(i.name, i.opcode, tuple(i.operands), i is comp.root) for i in comp.instructions]
        assert got == want
        for i, instr in zip(range(first, end), comp.instructions):
            assert parse_shape(t["shapes"][i]) == instr.shape, (instr.name, t["shapes"][i])


def test_most_real_modules_are_read_without_a_miss():
    """Compiler output is one instruction per line (long attributes may go on over several):
    the scanner reads all of it. Its misses are XLA's hand-written test inputs (operands over
    several lines) and files that are not HLO text (buffer-assignment reports)."""
    missed = [rel(p) for p in FILES if _table(p.read_text(encoding="utf-8", errors="replace"))["misses"]]
    assert all("xla-hlo-import-tests" in p or "buffer-assignment" in p for p in missed), missed
    assert len(missed) <= 10


def test_opcode_counts_match_the_parsed_module():
    path = next(p for p in FILES if p.name == "llm_v5p_big.hlo.txt")
    counts, misses = native.opcode_counts(path.read_text(encoding="utf-8"))
    (m,) = load(path)
    want: dict[str, int] = {}
    for i in m.instructions():
        want[i.opcode] = want.get(i.opcode, 0) + 1
    assert not misses and dict(counts) == want


@pytest.mark.parametrize("text", ["", "}", "{", "HloModule", "ENTRY {", "x = (", '"', "\x00\xff",
                                  "ENTRY %e {\n ROOT %r = f32[] a(\"\\\n", "ENTRY %e {\n  %a = f32[2 p(0)\n}\n"])
def test_bad_text_is_a_miss_not_a_crash(text):
    t = _table(text)
    assert isinstance(t["misses"], list)


def _mutant(rng, base: str, alphabet: str, most: int) -> str:
    """`base` with 1 to `most` characters deleted, inserted or replaced (from `alphabet`)."""
    text = list(base)
    for _ in range(rng.randint(1, most)):
        at = rng.randrange(len(text))
        how = rng.randrange(3)
        if how == 0:
            del text[at]
        elif how == 1:
            text.insert(at, rng.choice(alphabet))
        else:
            text[at] = rng.choice(alphabet)
    return "".join(text)


def test_a_fuzz_smoke_of_real_text_never_crashes():
    """300 random mutations of a real TPU module (bytes deleted, inserted, replaced by
    brackets, quotes and newlines): the scanner returns a table every time (a panic would
    reach Python as a RuntimeError)."""
    import random

    base = (FIXTURES / "tpu" / "mlp_v5e.hlo.txt").read_text(encoding="utf-8")
    rng = random.Random(0)
    alphabet = '(){}[]",%= \n\\/'
    for _ in range(300):
        t = _table(_mutant(rng, base, alphabet, most=8))
        assert len(t["names"]) == len(t["opcodes"]) == len(t["operands"]) == len(t["shapes"])


def _routes(text: str, name: str):
    from irdump import dump_module

    from hloscope.parser.fast.native import scan_native
    from hloscope.parser.fast.scan import ScanMiss, scan_text

    got = []
    for route in (lambda: scan_native(native, text, name), lambda: scan_text(text, name)):
        try:
            got.append([dump_module(m) for m in route()])
        except ScanMiss:
            got.append("miss")
        except Exception as e:  # (both routes raise the same errors on bad input)
            got.append(type(e).__name__)
    return got


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_the_native_line_reader_builds_the_regex_routes_modules(path):
    """The parser's fast route with the compiled line reader gives the same IR (every
    instruction, attribute text and position) as the whole-line pattern's, or misses
    where it does."""
    native_ir, regex_ir = _routes(path.read_text(encoding="utf-8", errors="replace"), path.name)
    assert native_ir == regex_ir


# newer XLA's --xla_dump_to files (jax 0.11, an H100): operands `%custom-call.2#0` name tuple elements
DUMPS = sorted(FIXTURES.glob("h100*/dump/*after_optimizations.txt"))


@pytest.mark.parametrize("path", DUMPS, ids=rel)
def test_the_native_line_reader_takes_tuple_element_operands(path):
    """On the real dumps whose operands name tuple elements (`%x#0`), the compiled reader
    builds the regex route's IR, and leaves to Python no instruction line of that form that
    the whole-line pattern takes for want of reading `#i` (it did: the line scanner read them
    all, slower)."""
    from hloscope.parser.fast.patterns import LINE

    text = path.read_text(encoding="utf-8")
    native_ir, regex_ir = _routes(text, path.name)
    assert native_ir == regex_ir and native_ir != "miss"
    raw = text.split("\n")
    left = [raw[item - 1] for item in native.lines(text) if item.__class__ is int]
    for line in left:  # (a line left for another reason, a backend config nested deeper than
        # the reader follows, is left as it is without the `#i`)
        if "#" in line and " = " in line and LINE.fullmatch(line):
            plain = re.sub(r"(%[\w.-]+)(?:#\d+)+", r"\1", line)
            assert [i.__class__ for i in native.lines(plain)] == [int], line


def test_the_dumps_hold_tuple_element_operands():
    taken = [op for p in DUMPS for item in native.lines(p.read_text(encoding="utf-8"))
             if item.__class__ is not int and len(item) == 11 for op in item[6] if "#" in op]
    assert len(taken) > 20 and all(op.rsplit("#", 1)[1].isdigit() for op in taken)


def _typed_base() -> str | None:
    """The first computations of the corpus's Gemma CPU module (operands typed, `s32[] %a`),
    the last of them made the entry: a small real text for mutants (None: no corpus)."""
    path = [p for p in corpus_files() if p.name == "gemma3_1b_flax_call.hlo"]
    if not path:
        return None
    lines = path[0].read_text(encoding="utf-8").split("\n")[:400]
    end = max(k for k, line in enumerate(lines) if line == "}")
    head = max(k for k in range(end) if lines[k].endswith("{") and not lines[k].startswith(" "))
    lines[head] = "ENTRY " + lines[head]
    return "\n".join(lines[:end + 1]) + "\n"


def test_the_native_line_reader_agrees_on_mutants():
    """500 random mutations of real modules (one a newer dump with `%x#0` operands, one a
    CPU module's typed operands): the two routes build the same IR, or both miss."""
    import random

    rng = random.Random(1)
    bases = [(FIXTURES / "tpu" / n).read_text(encoding="utf-8")
             for n in ("mlp_v5e.hlo.txt", "fsdp_async_fusion_v5p.hlo.txt")]
    bases += [next(p for p in DUMPS if "scan_layers" in p.name).read_text(encoding="utf-8")]  # (`%x#0`)
    typed = _typed_base()
    if typed is not None:
        native_ir, regex_ir = _routes(typed, "typed")
        assert native_ir == regex_ir and isinstance(native_ir, list) and native_ir
        bases.append(typed)
    alphabet = '(){}[]",%= \n\\/\'\t,=x1#'
    for k in range(500):
        native_ir, regex_ir = _routes(_mutant(rng, bases[k % len(bases)], alphabet, most=4), f"mutant{k}")
        assert native_ir == regex_ir, k


def test_the_native_line_reader_reads_commented_lines_as_the_line_scanner():
    """Lines with comments (`/*index=5*/` in long tuples: a training step's longest lines)
    are read by the compiled reader with the comments taken out; on 400 mutants of a real
    TPU module changed only on those lines, near and inside their comments and strings (an
    open comment or string, a `//`, quotes and escapes, brackets that no longer pair), the
    two routes build the same IR, or both miss; and the reader does take such lines (all but
    the module's header)."""
    import random

    text = (FIXTURES / "tpu" / "fsdp_async_fusion_one_channel_v5p.hlo.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    commented = [k for k, line in enumerate(lines) if "/*" in line]
    taken = [item for item in native.lines("\n".join(lines[k] for k in commented))
             if item.__class__ is tuple]  # (instructions, and the headers of fusions' tuples)
    assert len(commented) > 30 and len(taken) >= 0.9 * len(commented)
    rng = random.Random(7)
    alphabet = '/*"\'\\(){}[],= %x#\t'
    for n in range(400):
        changed = list(lines)
        for _ in range(rng.randint(1, 3)):
            k = rng.choice(commented)
            line = changed[k]
            marks = [m for m in range(len(line)) if line[m] in '/*"'] or [0]
            at = min(len(line), max(0, rng.choice(marks) + rng.randint(-3, 3)))
            how = rng.randrange(3)
            if how == 0 and at < len(line):
                line = line[:at] + line[at + 1:]
            elif how == 1:
                line = line[:at] + rng.choice(alphabet) + line[at:]
            else:
                line = line[:at] + rng.choice(alphabet) + line[at + 1:]
            changed[k] = line
        native_ir, regex_ir = _routes("\n".join(changed), f"commented{n}")
        assert native_ir == regex_ir, n


def test_the_parser_uses_the_native_reader_when_built(monkeypatch):
    from hloscope.parser.fast.native import available

    monkeypatch.delenv("HLOSCOPE_PLAIN", raising=False)
    assert available() is native
    monkeypatch.setenv("HLOSCOPE_PLAIN", "1")
    assert available() is None  # (the plain route: pure Python)


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_the_span_table_reads_as_the_list_table(path):
    """scan_spans (no Python object per instruction) holds what scan_table spells out."""
    from hloscope.parser.fast.table import SpanTable

    text = path.read_text(encoding="utf-8", errors="replace")
    lists, spans = _table(text), SpanTable(native, text)
    assert len(spans) == len(lists["names"]) and spans.misses == lists["misses"]
    assert spans.module == lists["module"] and spans.computations == lists["computations"]
    assert [spans.name(i) for i in range(len(spans))] == lists["names"]
    assert [spans.opcode(i) for i in range(len(spans))] == lists["opcodes"]
    assert [spans.shape(i) for i in range(len(spans))] == lists["shapes"]
    assert [spans.operands(i) for i in range(len(spans))] == lists["operands"]
    assert list(spans.lines) == lists["lines"] and [spans.is_root(i) for i in range(len(spans))] == lists["roots"]
    for op in set(lists["opcodes"][:50]):
        assert spans.with_opcode(op) == [i for i, o in enumerate(lists["opcodes"]) if o == op]
    assert spans.with_opcode("no-such-op") == []


def test_the_native_line_reader_shares_one_string_per_name():
    """An operand is the very string its instruction was named with (one object, not a copy
    per use: a layer stack's operands were a tenth of the parsed module's memory) where the
    name is given in the same part of the text the reader reads at a time (PART lines: the
    items of the whole text at once were the parse's peak memory), on a real corpus module
    read in parts of 8192 lines and in one part."""
    import hloscope.parser.fast.native as reader

    path = [p for p in corpus_files() if p.name == "hlo_llama31_8b_bf16_1x8.hlo"]
    if not path:
        pytest.skip("the corpus is not beside the checkout")
    text = path[0].read_text(encoding="utf-8")
    for part in (8192, len(text)):
        (m,) = _read_in_parts(reader, text, part)
        shared = uses = 0
        for comp in m.computations:
            for instr in comp.instructions:
                for o in instr.operands:
                    named = comp.by_name[o]
                    if (named.line - 1) // part == (instr.line - 1) // part:
                        uses += 1
                        shared += named.name is o
        # (the lines the Python line scanner reads, 8% of these uses, make strings of their own)
        assert uses > 30000 and shared > 0.9 * uses, (part, shared, uses)


def _read_in_parts(reader, text: str, part: int):
    """The modules scan_native reads from `text`, `part` lines at a time."""
    kept = reader.PART
    reader.PART = part
    try:
        return reader.scan_native(native, text, "llama")
    finally:
        reader.PART = kept


@pytest.mark.parametrize("part", [1, 7, 8192])
def test_the_native_line_reader_reads_a_text_in_parts_as_whole(part):
    """The items of a text read a part at a time (lines_from, `part` lines each) are the
    items of it read whole (lines), numbered on across the parts, on real modules with
    commented, typed and non-ASCII lines, an empty last line and none."""
    from hloscope.parser.fast.native import _part

    paths = [FIXTURES / "tpu" / "llm_v5p_big.hlo.txt", *DUMPS[:2],
             *[p for p in corpus_files() if p.suffix == ".hlo"][:3]]
    texts = [p.read_text(encoding="utf-8") for p in paths if p.exists()]
    texts += ["HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0), metadata={op_name=\"\u00e9\"}\n}",
              "HloModule m\n\n", "", "\n"]  # (hand-written: non-ASCII, blank lines, empty)
    for text in texts:
        whole = native.lines(text, True)
        got, start, first = [], 0, 0
        while start is not None:
            items, start = native.lines_from(text, start, first, part, True)
            assert len(items) == part or start is None
            got += items
            first += len(items)
        assert got == whole and len(whole) == text.count("\n") + 1
    assert _part(native, "a\nb", 0, 0) == (native.lines("a\nb", True), None)


@pytest.mark.parametrize("path", [FIXTURES / "tpu" / "llm_v5p_big.hlo.txt",
                                  FIXTURES / "zoo" / "convnet_train_h100.hlo.txt"], ids=rel)
def test_the_native_line_reader_takes_the_headers_and_braces_line_takes(path):
    """Every computation header and closing brace of a real module that the whole-line
    pattern takes, the compiled reader takes too (the line scanner read each, slower), with
    the fields LINE's groups hold, and the parameters PARAM_ITEM reads from them."""
    from hloscope.parser.fast.patterns import CLOSE_GROUP, HEAD_GROUP, LINE, PARAM_ITEM

    raw = path.read_text(encoding="utf-8").split("\n")
    items = native.lines("\n".join(raw))
    heads = closes = 0
    for item, text in zip(items, raw):
        m = LINE.fullmatch(text)
        if m is None or m.lastindex is None or m.lastindex < HEAD_GROUP:
            continue
        if m.lastindex == CLOSE_GROUP:
            assert item.__class__ is tuple and len(item) == 1, text
            closes += 1
        else:
            entry, name, params, result = (m.group(HEAD_GROUP) is not None, *m.group(
                HEAD_GROUP + 1, HEAD_GROUP + 2, CLOSE_GROUP - 1))
            assert item[1:5] == (entry, name, params, result), text
            assert [tuple(p) for p in item[5]] == PARAM_ITEM.findall(params), text
            heads += 1
    assert heads == closes > 10


def test_the_native_line_reader_numbers_a_later_part_as_the_regex_route():
    """A part of a file from a line on (the second half `stats` counts in another process):
    the compiled reader's modules are the regex route's, lines numbered as in the file."""
    from irdump import dump_module

    from hloscope.parser.fast.native import scan_native
    from hloscope.parser.fast.scan import scan_text
    from hloscope.parser.split import split_point

    text = (FIXTURES / "tpu" / "llm_v5p_big.hlo.txt").read_text(encoding="utf-8")
    split = split_point(text, by_lines=True)
    first = text.count("\n", 0, split) + 1
    part = text[split:]
    native_ir = [dump_module(m) for m in scan_native(native, part, "part", first)]
    regex_ir = [dump_module(m) for m in scan_text(part, "part", first)]
    assert native_ir == regex_ir
    instrs = [i for c in native_ir[0]["computations"] for i in c["instructions"]]
    assert min(i["line"] for i in instrs) > first > 1000
    file_lines = text.split("\n")
    assert all(f"{i['name']} = " in file_lines[i["line"] - 1] for i in instrs)
