"""Instruction rules that say their findings are at the instruction they check (`located`):
a run asked for some instructions' findings (`only`, as `graph --around`'s overlay asks)
checks only those with them, and finds there exactly what a whole run finds."""

from __future__ import annotations

import random

from conftest import FIXTURES

from hloscope.lint import LintOptions, build_rules
from hloscope.parser import load
from hloscope.rules.base import InstructionRule
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules


def _at(f) -> tuple[str, str]:
    return f.computation, f.instruction


def _key(f) -> tuple:
    return f.code, f.computation, f.instruction, f.message


def test_every_builtin_instruction_rule_says_whether_it_is_located():
    rules = [r for r in load_rules().values() if issubclass(r, InstructionRule)
             and r.__module__.startswith("hloscope.rules.")]
    assert rules and all("located" in vars(r) for r in rules), [r.code for r in rules]


def test_a_run_for_some_instructions_finds_there_what_a_whole_run_does():
    rules = build_rules(LintOptions())
    located = {r.code for r in rules if isinstance(r, InstructionRule) and r.located}
    rng = random.Random(3)
    paths = sorted((FIXTURES / "rules").rglob("*.hlo.txt"))
    seen_located = 0
    for path in paths:
        modules = load(path)
        whole = run(modules, rules).findings
        names = [(c.name, i.name) for m in modules for c in m.computations for i in c.instructions]
        for wanted in ({_at(f) for f in whole}, set(rng.sample(names, len(names) // 3)), set()):
            part = run(modules, rules, only=wanted).findings
            assert [_key(f) for f in whole if _at(f) in wanted] == \
                   [_key(f) for f in part if _at(f) in wanted], (path, len(wanted))
            assert all(_at(f) in wanted for f in part if f.code in located), path
        seen_located += sum(f.code in located for f in whole)
    assert seen_located >= 10  # (the located rules' positive fixtures are among them)
