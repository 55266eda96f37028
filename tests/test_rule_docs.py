"""Rule docs: each one exists, its Example fires the rule and its Use-instead does not."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.parser import parse
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules

RULES = load_rules()
_BLOCK = re.compile(r"## (Example|Use instead)\s+```(hlo|python|text)\n(.*?)```", re.S)


def _blocks(doc: str) -> dict[str, tuple[str, str]]:
    return {m.group(1): (m.group(2), m.group(3)) for m in _BLOCK.finditer(doc)}


@pytest.mark.parametrize("code", sorted(RULES))
def test_doc_examples(code):
    rule = RULES[code]
    doc = rule.doc()
    assert doc.startswith(f"# {code} {rule.name}")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Options"):
        assert section in doc, f"{code} doc lacks {section}"
    blocks = _blocks(doc)
    assert set(blocks) == {"Example", "Use instead"}
    if code.startswith(("K", "T", "F", "X002")):
        # Kernel rules read Mosaic bytecode, trace rules read profiles: their docs show the
        # Pallas source or the profile; fixtures/rules/<code> holds the real pair (test_rules).
        # flag rules (F) read the compile's flag files: their docs show the flags as text;
        # X002 depends on the jax installed: its doc shows the commands
        assert all(lang == ("python" if code.startswith("K") else "text") for lang, _ in blocks.values())
        assert f"fixtures/rules/{code}/" in doc
        return
    for name, (lang, text) in blocks.items():
        assert lang == "hlo" and text.startswith("// HAND-WRITTEN"), f"{code} {name}: label hand-written HLO"
    fired = run(parse(blocks["Example"][1], f"{code}-example"), [rule()]).findings
    assert [f.code for f in fired if f.code == code], f"{code}: Example does not fire"
    clean = run(parse(blocks["Use instead"][1], f"{code}-fix"), [rule()]).findings
    assert not clean, f"{code}: Use-instead fires: {[f.message for f in clean]}"


def test_rule_command_prints_the_doc():
    runner = CliRunner()
    res = runner.invoke(app, ["rule", "H001"])
    assert res.exit_code == 0 and res.stdout.startswith("# H001 defensive-copy")
    assert runner.invoke(app, ["rule", "defensive-copy"]).stdout == res.stdout
    bad = runner.invoke(app, ["rule", "H999"])
    assert bad.exit_code == 2


def test_rules_command_lists_every_rule():
    res = CliRunner().invoke(app, ["rules"])
    for code, rule in RULES.items():
        assert f"{code}  {rule.name}" in res.stdout


@pytest.mark.parametrize("code", sorted(RULES))
def test_doc_lists_the_evidence_a_finding_carries(code):
    """Every rule documents its findings' evidence keys; tests/conftest.py then holds every
    finding any test makes to that list (an undocumented or missing key fails the test)."""
    from conftest import documented_evidence

    documented = documented_evidence(code)
    assert documented is not None, f"{code}'s doc has no ## Evidence section"
    always, sometimes = documented
    assert always | sometimes, f"{code}'s ## Evidence lists no key"
    assert not always & sometimes
