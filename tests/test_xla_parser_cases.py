"""XLA's own parser tests (#38): the HLO texts of xla/hlo/parser/hlo_parser_test.cc, transcribed
into fixtures/xla_tests/hlo_parser_test.hlo with the verdict each test expects. Two oracles:
the C++ test's expectation (which also catches a transcription slip: jaxlib's parser must
agree with it) and jaxlib's parser itself. What XLA accepts, both modes accept; what XLA
rejects, strict mode rejects with a located ParseError; neither mode ever raises anything
else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloscope.parser import ParseError, parse

CASES_FILE = Path(__file__).resolve().parents[1] / "fixtures/xla_tests/hlo_parser_test.hlo"
_CASE = re.compile(r"^// CASE (\S+): (accept|reject)(?: \(newer: (.*)\))?$", re.M)


def _cases() -> dict[str, tuple[str, str, str | None]]:
    text = CASES_FILE.read_text(encoding="utf-8")
    marks = list(_CASE.finditer(text))
    out = {}
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        out[m.group(1)] = (text[m.end() + 1:end], m.group(2), m.group(3))
    return out


CASES = _cases()


def _xla_accepts(text: str) -> bool:
    from jaxlib import _hlo

    try:
        _hlo.hlo_module_from_text(text)
    except Exception:  # noqa: BLE001 - XLA's verdict: rejected
        return False
    return True


def test_the_collection_is_whole():
    verdicts = [v for _, v, _ in CASES.values()]
    assert len(CASES) >= 150
    assert verdicts.count("reject") >= 60  # the error tests, not only the round trips


@pytest.mark.parametrize("name", sorted(CASES))
def test_xlas_verdict_is_the_tests_and_ours(name):
    text, expected, newer = CASES[name]
    xla = _xla_accepts(text)
    if newer:  # jaxlib 0.10.2's parser predates the construct: its verdict is the other one
        assert xla != (expected == "accept"), f"{name}: jaxlib now follows the test; drop `newer`"
        return
    assert xla == (expected == "accept"), f"{name}: transcription does not give the test's verdict"
    for strict in (False, True):
        if expected == "accept":
            parse(text, name, strict=strict)
            continue
        try:
            parse(text, name, strict=strict)
        except ParseError as e:
            assert e.line >= 1 and e.column >= 1
            assert not e.message.rstrip().endswith("expected"), e.message  # (an expectation that names nothing)
        else:
            assert not strict, f"{name}: strict mode accepts what XLA rejects"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_windows_and_old_mac_line_ends(newline):
    """SlashSlashCommentMsDosEolFormat / SlashSlashCommentMacEolFormat."""
    text = newline.join(["HloModule slash_slash_comment:", "// Garbage", "ENTRY c1 {", "// Foo bar",
                         "ROOT const1 = f32[1]{0} constant({12345}) // Something else", "}"])
    assert _xla_accepts(text)
    for strict in (False, True):
        (m,) = parse(text, "eol", strict=strict)
        assert m.entry.root.name == "const1"
