"""A seeded mutation fuzzer over real HLO: every mutant must either parse (and then survive
every analysis) or fail with a located ParseError. Anything else is a crash."""

from __future__ import annotations

import base64
import random
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from hloscope.parser import ParseError
from hloscope.parser.load import decode, parse

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [
    "fixtures/cpu/mlp_cpu.hlo.txt", "fixtures/cpu/scan_cpu.hlo.txt",
    "fixtures/tpu/mlp_v5e.hlo.txt", "fixtures/tpu/pallas_matmul_v5e.hlo.txt",
    "fixtures/tpu/scan_v4.hlo.txt", "fixtures/rules/H008/exposed_permute_v5p.hlo.txt",
    "fixtures/rules/H007/gather_whole_weight_v5p.hlo.txt", "fixtures/tpu/scaling_book_v5p.hlo.txt",
    "fixtures/rules/H006/exp_twice_preopt.hlo.txt", "fixtures/rules/K001/output_accumulator_v5e.hlo.txt",
]
_OPCODE = re.compile(r"(?<= )([a-z][a-z\-]*)(?=\()")
_NAME = re.compile(r"%[A-Za-z_][\w.\-]*")
_NUM = re.compile(r"\d+")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(MUTATIONS)
    return kind.__name__, kind(data, rng)


def truncate(d, r):
    return d[: r.randrange(len(d) + 1)]


def flip(d, r):
    b = bytearray(d)
    for _ in range(r.randint(1, 5)):
        if b:
            b[r.randrange(len(b))] = r.randrange(256)
    return bytes(b)


def delete_lines(d, r):
    ls = _lines(d)
    k = r.randrange(len(ls))
    del ls[k : k + r.randint(1, 3)]
    return b"\n".join(ls)


def duplicate_lines(d, r):
    ls = _lines(d)
    k = r.randrange(len(ls))
    ls[k:k] = ls[k : k + r.randint(1, 3)]
    return b"\n".join(ls)


def swap_brackets(d, r):
    positions = [i for i, c in enumerate(d) if c in b"(){}[]"]
    if not positions:
        return d
    b = bytearray(d)
    b[r.choice(positions)] = r.choice(b"(){}[]<>")
    return bytes(b)


def huge_number(d, r):
    ms = list(_NUM.finditer(d.decode("utf-8", "replace")))
    if not ms:
        return d
    m = r.choice(ms)
    t = d.decode("utf-8", "replace")
    return (t[: m.start()] + "9" * r.choice([20, 40, 400]) + t[m.end():]).encode()


def deep_nesting(d, r):
    n = r.choice([50, 300, 3000])
    t = d.decode("utf-8", "replace")
    return t.replace(" f32[", " " + "(" * n + "f32[", 1).replace("] ", "]" + ")" * n + " ", 1).encode()


def invalid_utf8(d, r):
    k = r.randrange(len(d) + 1)
    return d[:k] + b"\xff\xfe\xc3" + d[k:]


def empty(d, r):
    return r.choice([b"", b"\n\n", b"   "])


def binary(d, r):
    return bytes(r.randrange(256) for _ in range(r.randint(1, 512)))


def unknown_opcode(d, r):
    t = d.decode("utf-8", "replace")
    ms = list(_OPCODE.finditer(t))
    if not ms:
        return d
    m = r.choice(ms)
    return (t[: m.start()] + "zz-op" + t[m.end():]).encode()


def unknown_attribute(d, r):
    ls = _lines(d)
    idx = [i for i, line in enumerate(ls) if b" = " in line]
    if not idx:
        return d
    k = r.choice(idx)
    ls[k] += r.choice([b", zz_attr={1,{2}}", b", q=\"x\"", b", w=[1]<=[1]", b", =", b", z={"])
    return b"\n".join(ls)


def dangling_operand(d, r):
    t = d.decode("utf-8", "replace")
    ms = [m for m in _NAME.finditer(t) if t[m.end(): m.end() + 3] != " = "]
    if not ms:
        return d
    m = r.choice(ms)
    return (t[: m.start()] + "%nowhere.7" + t[m.end():]).encode()


def cycle(d, r):
    """Make an instruction use one defined after it (and so, transitively, itself)."""
    t = d.decode("utf-8", "replace")
    defs = [m.group(0) for m in re.finditer(r"%[\w.\-]+(?= = )", t)]
    if len(defs) < 2:
        return d
    a, b = sorted(r.sample(range(len(defs)), 2))
    line_start = t.find(defs[a] + " = ")
    paren = t.find("(", line_start)
    return (t[: paren + 1] + defs[b] + ", " + t[paren + 1:]).encode()


def duplicate_name(d, r):
    t = d.decode("utf-8", "replace")
    defs = [m for m in re.finditer(r"%[\w.\-]+(?= = )", t)]
    if len(defs) < 2:
        return d
    k = r.randrange(1, len(defs))
    m = defs[k]
    return (t[: m.start()] + defs[k - 1].group(0) + t[m.end():]).encode()


def bad_kernel_body(d, r):
    t = d.decode("utf-8", "replace")
    m = re.search(r'"body":"([^"]+)"', t)
    if not m:
        return d
    bad = r.choice(["!!!not base64!!!", base64.b64encode(b"ML\xefR" + bytes(r.randrange(256) for _ in range(64))).decode(),
                    m.group(1)[: len(m.group(1)) // 2], ""])
    return (t[: m.start(1)] + bad + t[m.end(1):]).encode()


def long_line(d, r):
    n = r.choice([10_000, 1_000_000])
    return d + b"\n" + r.choice([b"a", b"{", b"\"", b"("]) * n + b"\n"


def drop_shape(d, r):
    """An instruction printed without its shape: XLA infers it, and so must the parser, or
    say it cannot (shape inference meets every attribute the mutants make)."""
    t = d.decode("utf-8", "replace")
    ms = list(re.finditer(r"(?m)^(\s*(?:ROOT )?%?[\w.\-]+ = )(\S+) (?=[a-z][a-z\-]*\()", t))
    if not ms:
        return d
    m = r.choice(ms)
    return (t[: m.start(2)] + t[m.end(2) + 1:]).encode()


def renumber_attribute(d, r):
    """An index= or dimensions= value moved past the end (or to the start) of its operand."""
    t = d.decode("utf-8", "replace")
    ms = list(re.finditer(r"(?:index|dimensions|iota_dimension|tuple_index)=\{?(\d+)", t))
    if not ms:
        return d
    m = r.choice(ms)
    return (t[: m.start(1)] + str(r.choice([0, 1, 2, 7, 63])) + t[m.end(1):]).encode()


MUTATIONS = [truncate, flip, delete_lines, duplicate_lines, swap_brackets, huge_number,
             deep_nesting, invalid_utf8, empty, binary, unknown_opcode, unknown_attribute,
             dangling_operand, cycle, duplicate_name, bad_kernel_body, long_line, drop_shape,
             renumber_attribute]


@dataclass
class Outcome:
    cases: int = 0
    parsed: int = 0
    rejected: int = 0
    crashes: list[tuple[str, str, str]] = field(default_factory=list)  # (seed:case, kind, trace)
    rule_crashes: int = 0


def analyse(modules) -> int:
    """Everything the commands do with a parsed module; returns internal-error findings."""
    from hloscope.cost.chips import get_chip
    from hloscope.cost.memory import memory_facts
    from hloscope.cost.roofline import roofline
    from hloscope.mlir.kernels import kernels
    from hloscope.render.graphviz import render_graph
    from hloscope.report.parse import module_json
    from hloscope.rules.engine import run
    from hloscope.rules.registry import load_rules
    from hloscope.sharding import analyze
    from hloscope.stats.counts import module_stats

    chip = get_chip("v5p")
    result = run(modules, [r() for r in load_rules().values()], chip=chip)
    for m in modules:
        module_stats(m)
        module_json(m)
        memory_facts(m)
        roofline(m, chip)
        analyze(m, chip)
        kernels(m)
        if m.entry is not None:
            render_graph(m).source  # noqa: B018
    return sum(1 for f in result.findings if f.code == "X000")


def check(data: bytes, label: str, kind: str, outcome: Outcome) -> None:
    outcome.cases += 1
    try:
        try:
            text = decode(data, label)
            modules = parse(text, label)
        except ParseError as e:
            assert e.line >= 1 and e.column >= 1, f"error without a location: {e}"
            assert str(e).startswith(f"{label}:{e.line}:{e.column}: error: ")
            outcome.rejected += 1
            return
        outcome.parsed += 1
        try:
            outcome.rule_crashes += analyse(modules)
        except ParseError as e:  # a malformed value found on first use: still located
            assert e.line >= 1 and e.column >= 1, f"error without a location: {e}"
    except Exception:  # noqa: BLE001 - the point: nothing else may escape
        outcome.crashes.append((label, kind, traceback.format_exc(limit=6)))


def fuzz(cases: int, seed: int = 0) -> Outcome:
    rng = random.Random(seed)
    seeds = [(s, (ROOT / s).read_bytes()) for s in SEEDS]
    outcome = Outcome()
    for k in range(cases):
        name, data = seeds[k % len(seeds)]
        kind, mutant = mutate(data, rng)
        check(mutant, f"{Path(name).name}#{k}", kind, outcome)
    return outcome


def _wiring(text: str) -> str | None:
    """The first strict-only wiring problem (hloscope.parser.wiring) of text the default mode
    accepts, in its words."""
    from hloscope.parser import parse
    from hloscope.parser.wiring import wiring_problem

    for m in parse(text, "mutant"):
        for c in m.computations:
            found = wiring_problem(c)
            if found is not None:
                return found[1]
    return None


def _verdict(text: str, strict: bool) -> tuple[str, int, int] | None:
    """None when the text is accepted with every value typed, else (message, line, col)."""
    from hloscope.parser import ParseError, parse

    lines = text.split("\n")
    try:
        modules = parse(text, "mutant", strict=strict)
        for m in modules:  # the fast path types values on first use: ask for every one
            for c in m.computations:
                for i in c.instructions:
                    for key in list(i.attrs):
                        i.attr(key)
    except ParseError as e:
        if e.source_line is None and 0 < e.line <= len(lines):
            e.attach_source(lines[e.line - 1])
        return (e.message, e.line, e.column)
    return None


def differential(cases: int, seed: int = 0, files: list[Path] | None = None) -> list[tuple[str, object, object]]:
    """Mutants on which the fast path and strict mode disagree: one accepts what the
    other rejects, or they point at different places. [(case, fast, strict)]
    (A mutant with two errors may have them reported in another order; the seeds
    used here find none such.)"""
    from hloscope.parser import ParseError
    from hloscope.parser.load import decode

    rng = random.Random(seed)
    seeds = [(str(f), Path(f).read_bytes()) for f in files] if files else \
        [(s, (ROOT / s).read_bytes()) for s in SEEDS]
    out = []
    for k in range(cases):
        name, data = seeds[k % len(seeds)]
        kind, mutant = mutate(data, rng)
        try:
            text = decode(mutant, "mutant")
        except ParseError:
            continue  # bytes, not text: one route
        fast, strict = _verdict(text, False), _verdict(text, True)
        if fast is None and strict is not None and strict[0].startswith(
                ("unknown opcode", "unexpected attribute")):
            continue  # by design: the default mode keeps opcodes and attributes it does not know
        if fast is None and strict is not None and _wiring(text) == strict[0]:
            continue  # by design: how instructions fit together is checked in strict mode only
        if (fast is None) != (strict is None) or (fast and strict and fast[1:] != strict[1:]):
            out.append((f"{Path(name).name}#{k} ({kind})", fast, strict))
    return out


def halves_differential(cases: int, seed: int = 0) -> tuple[int, list[str]]:
    """Mutants of the 5.57 MB fixture counted by `stats` in two halves (hloscope.stats.halves)
    and serially: (how many the halves counted, those where the counts differ or the
    serial path rejects what the halves counted). Run it from a script with one thread."""
    from hloscope.cost.memory import memory_facts
    from hloscope.parser import ParseError, parse
    from hloscope.parser.load import decode
    from hloscope.stats.counts import module_stats
    from hloscope.stats.halves import stats_in_halves

    rng = random.Random(seed)
    data = (ROOT / "fixtures" / "tpu" / "llm_v5p_big.hlo.txt").read_bytes()
    counted, wrong = 0, []
    for k in range(cases):
        kind, mutant = mutate(data, rng)
        try:
            text = decode(mutant, "mutant")
        except ParseError:
            continue
        halves = stats_in_halves(text, "mutant", True)
        if halves is None:
            continue  # the serial path decides: nothing to compare
        counted += 1
        try:
            serial = [{**module_stats(m, True), "memory": memory_facts(m)} for m in parse(text, "mutant")]
        except ParseError as e:
            serial = str(e)
        if halves != serial:
            wrong.append(f"#{k} ({kind})")
    return counted, wrong
