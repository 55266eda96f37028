"""`stats` from the compiled pass (hloscope.stats.table) against its oracle, the stats of
the parsed module: whenever it answers, the parse accepts the text and the records are the
same, on every module at hand, on seeded mutants and on targeted ones; and it answers for
most real modules."""

from __future__ import annotations

import json
import random

import pytest

from conformance import collect, mutants
from test_native_checks import _TARGETED, _small_modules, _targeted

pytestmark = pytest.mark.skipif(
    __import__("hloscope.parser.fast.native", fromlist=["available"]).available() is None,
    reason="the compiled extension is not in use (HLOSCOPE_PLAIN=1 or not built)")


def _parsed_stats(text: str, every: bool) -> str | None:
    from hloscope.parser import ParseError, parse
    from hloscope.stats import stats

    try:
        modules = parse(text, "<stats>")
    except ParseError:
        return None
    return json.dumps([stats(m, every).to_dict() for m in modules])


def _answer(text: str, every: bool) -> str | None:
    from hloscope.stats.table import stats_of_text

    found = stats_of_text(text, "<stats>", every)
    return None if found is None else json.dumps(found)


def test_real_modules_same_records_as_the_parsed_modules():
    answered = parsed = 0
    for k, (label, text) in enumerate(collect()):
        every = k % 2 == 0  # (with and without the per-computation list)
        want = _parsed_stats(text, every)
        got = _answer(text, every)
        parsed += want is not None
        if got is not None:
            answered += 1
            assert got == want, label
    assert parsed >= 350
    assert answered >= 0.7 * parsed, (answered, parsed)


def test_mutants_answered_only_where_the_parse_gives_the_same():
    rng = random.Random(41)
    texts = mutants(collect(), 400, seed=41)
    for label, text in _small_modules()[::2]:
        for kind in _TARGETED:
            changed = _targeted(text, kind, rng)
            if changed is not None:
                texts.append((f"{label}~{kind}", changed))
    answered = 0
    for label, text in texts:
        got = _answer(text, False)
        if got is None:
            continue
        answered += 1
        want = _parsed_stats(text, False)
        assert want is not None, f"{label}: answered, but the parse refuses it"
        assert got == want, label
    assert answered >= 150


def test_the_pass_starts_before_the_ir_is_imported():
    """`stats` starts the compiled pass as soon as the file is read and imports the rest
    while it runs: the module that starts it loads neither the IR's classes nor the
    parser's value checks, and a pass started early answers as one started late."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, hloscope.parser.fast.beside; "
            "print(sorted(m for m in sys.modules if m in ('hloscope.ir.instruction', "
            "'hloscope.ir.computation', 'hloscope.parser.validate', 'hloscope.parser.attrs')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout

    from hloscope.parser.fast.beside import Beside, count_level
    from hloscope.stats.table import stats_of_text

    path = Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "llm_v5p_big.hlo.txt"
    text = path.read_text()
    early = Beside(text, count_level(False))
    assert stats_of_text(text, str(path), False, early) == stats_of_text(text, str(path), False)
    other = Beside(text, count_level(True))  # (a pass at another level: not used, joined)
    assert stats_of_text(text, str(path), False, other) == stats_of_text(text, str(path), False)
    assert not other.thread.is_alive()
