"""XLA's own test inputs (#38): the `.hlo` files of openxla/xla's codegen tests and tools,
copied into fixtures/xla_tests/emitter_tests.hlo with their source path and commit (lit
RUN/CHECK comment lines dropped), the modules of its pass tests' `*_test.cc` files in
fixtures/xla_tests/pass_tests.hlo, and those of its verifier's tests (malformed on purpose,
for a verifier XLA's parser does not run) in fixtures/xla_tests/verifier_tests.hlo. XLA's verdict on each is jaxlib's parser's, taken here
through the differential tests' oracle; both modes must give it, and on what XLA accepts,
XLA's module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from oracle import compare, our_view, xla_views

from hloscope.parser import ParseError, parse

CASE_FILES = [Path(__file__).resolve().parents[1] / "fixtures/xla_tests" / name
              for name in ("emitter_tests.hlo", "pass_tests.hlo", "verifier_tests.hlo")]
_CASE = re.compile(r"^// CASE (\S+) (\S+)@([0-9a-f]{40})$", re.M)


def _cases() -> dict[str, str]:
    cases = {}
    for path in CASE_FILES:
        text = path.read_text(encoding="utf-8")
        marks = list(_CASE.finditer(text))
        cases.update({m.group(1): text[m.end() + 1:marks[k + 1].start() if k + 1 < len(marks) else len(text)]
                      for k, m in enumerate(marks)})
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def xla() -> dict[str, dict]:
    """XLA's view of each case (tests/oracle.py: its parser in a child process)."""
    names = sorted(CASES)
    return dict(zip(names, xla_views([CASES[n] for n in names])))


def test_the_collection_names_its_sources():
    assert len(CASES) >= 45
    for path in CASE_FILES:
        found = _CASE.findall(path.read_text(encoding="utf-8"))
        assert found and all(p.startswith("xla/") and p.endswith((".hlo", "_test.cc")) for _, p, _ in found)


@pytest.mark.parametrize("name", sorted(CASES))
def test_xlas_verdict_and_module_in_both_modes(name, xla):
    """What XLA accepts, both modes read as XLA does (computations, instruction names,
    opcodes, shapes, operands); what it rejects, strict mode rejects."""
    text, view = CASES[name], xla[name]
    if "error" in view:
        with pytest.raises(ParseError):
            parse(text, name, strict=True)
        return
    for strict in (False, True):
        (module,) = parse(text, name, strict=strict)
        assert compare(our_view(module), view) == [], f"{name} (strict={strict})"


def _all_collected() -> dict[str, str]:
    """Every module collected from XLA's tests: these files' and the parser tests' cases."""
    from test_xla_parser_cases import CASES as PARSER_CASES

    return {**CASES, **{f"parser_{k}": text for k, (text, _, _) in PARSER_CASES.items()}}


def test_no_collected_module_nor_mutant_of_one_raises_out_of_the_parser():
    """Each collected module, and three seeded mutants of each (shapes dropped, indices moved
    past their operand, lines deleted, ...), parses or fails with a located ParseError in both
    modes; what the default mode accepts goes through every analysis without an exception."""
    import random

    from fuzzing import MUTATIONS, Outcome, check, drop_shape, renumber_attribute

    rng = random.Random(38)
    outcome = Outcome()
    for name, text in sorted(_all_collected().items()):
        data = text.encode()
        kinds = [drop_shape, renumber_attribute, rng.choice(MUTATIONS)]
        for kind, mutant in [("as collected", data)] + [(k.__name__, k(data, rng)) for k in kinds]:
            check(mutant, name, kind, outcome)
            try:
                parse(mutant.decode("utf-8", "replace"), name, strict=True)
            except ParseError as e:
                assert e.line >= 1 and e.column >= 1, f"{name} ({kind}): error without a location"
            except Exception as e:  # noqa: BLE001 - the point: nothing else may escape
                outcome.crashes.append((name, f"{kind}, strict", repr(e)))
    assert outcome.cases == 4 * len(_all_collected()) >= 4 * 330
    assert not outcome.crashes, "\n\n".join(f"{c[0]} ({c[1]}):\n{c[2]}" for c in outcome.crashes[:3])
    assert outcome.rule_crashes == 0
