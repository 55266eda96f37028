"""2,000 seeded mutants of real HLO per run: no uncaught exception anywhere."""

from __future__ import annotations

from fuzzing import differential, fuzz


def test_mutation_fuzz_finds_no_crash():
    outcome = fuzz(2000, seed=20261122)
    assert outcome.cases == 2000
    assert outcome.rejected > 500 and outcome.parsed > 100  # both sides exercised
    assert not outcome.crashes, "\n\n".join(f"{c[0]} ({c[1]}):\n{c[2]}" for c in outcome.crashes[:3])
    assert outcome.rule_crashes == 0


def test_fast_path_and_strict_mode_agree_on_mutants():
    """Both routes accept the same mutants and reject the others at the same place."""
    disagreements = differential(600, seed=20261122)
    assert not disagreements, "\n".join(map(str, disagreements[:5]))
