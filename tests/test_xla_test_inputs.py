"""XLA's own test inputs (#38): the `.hlo` files of openxla/xla's codegen tests and tools,
copied into fixtures/xla_tests/emitter_tests.hlo with their source path and commit (lit
RUN/CHECK comment lines dropped). XLA's verdict on each is jaxlib's parser's, taken here;
both modes must give it, and on what XLA accepts, its instruction count."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloscope.parser import ParseError, parse

CASES_FILE = Path(__file__).resolve().parents[1] / "fixtures/xla_tests/emitter_tests.hlo"
_CASE = re.compile(r"^// CASE (\S+) (\S+)@([0-9a-f]{40})$", re.M)


def _cases() -> dict[str, str]:
    text = CASES_FILE.read_text(encoding="utf-8")
    marks = list(_CASE.finditer(text))
    return {m.group(1): text[m.end() + 1:marks[k + 1].start() if k + 1 < len(marks) else len(text)]
            for k, m in enumerate(marks)}


CASES = _cases()


def _xla_count(text: str) -> int | None:
    """XLA's instruction count of a module (None: its parser rejects it)."""
    from jaxlib import _hlo

    try:
        printed = _hlo.hlo_module_from_text(text).to_string()
    except Exception:  # noqa: BLE001 - XLA's verdict: rejected
        return None
    return len(re.findall(r"^\s+(?:ROOT )?%\S+ = ", printed, re.M))


def test_the_collection_names_its_sources():
    assert len(CASES) >= 35
    text = CASES_FILE.read_text(encoding="utf-8")
    assert all(p.startswith("xla/") and p.endswith(".hlo") for _, p, _ in _CASE.findall(text))


@pytest.mark.parametrize("name", sorted(CASES))
def test_xlas_verdict_and_instruction_count_in_both_modes(name):
    text = CASES[name]
    want = _xla_count(text)
    for strict in (False, True):
        if want is None:
            with pytest.raises(ParseError):
                parse(text, name, strict=True)
            return
        modules = parse(text, name, strict=strict)
        got = sum(len(c.instructions) for m in modules for c in m.computations)
        assert got == want, f"{name} (strict={strict}): {got} instructions, XLA {want}"
