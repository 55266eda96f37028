"""Every H/K rule's advice, applied to its own real positive fixture, improves the figure the
rule is about (XLA's own where XLA has one: estimated cycles, cost_analysis bytes,
memory_analysis peak), and the rule falls silent on the fixed program (bench/advice.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import advice  # noqa: E402

from hloscope.rules.registry import load_rules  # noqa: E402

ROWS = {f'{r["code"]}:{r["before"]}': r for r in advice.rows()}


def test_every_h_and_k_rule_has_a_case():
    codes = {code for code in load_rules() if code[0] in "HKF"}
    covered = {r["code"] for r in ROWS.values()}
    assert codes <= covered, sorted(codes - covered)
    assert not [c for c, r in ROWS.items() if r.get("missing")]


@pytest.mark.parametrize("case", sorted(ROWS))
def test_the_fix_helps_and_silences_the_rule(case):
    r = ROWS[case]
    code = r["code"]
    assert r["fires_before"] >= 1 and r["fires_after"] == 0, r
    assert r["figure"] != "none"  # (every H/K rule now has a static figure)
    assert r["better"], (code, r["value_before"], r["value_after"])
    if code.startswith("K") and r["figure"] == "time":
        # a Pallas kernel's time is XLA's own: libtpu's static LLO estimate of it
        assert r["unit"] == "cycles" and r["figures_before"]["xla_cycles"]


def test_the_rule_docs_carry_their_row():
    for r in ROWS.values():
        code = r["code"]
        (doc,) = (ROOT / "rules").glob(f"{code}-*.md")
        text = doc.read_text(encoding="utf-8")
        case = r["before"].split("_", 1)[1]
        assert "## Does the advice help?" in text and f"| {code} | {case} -> " in text, (code, case)
