"""Conformance with XLA's parser on every module at hand and on seeded mutants (the full
run, with 3,000 mutants, is bench/conformance.py; its figures are in the README)."""

from __future__ import annotations

from conformance import collect, measure, mutants


def test_real_modules_xla_accepts_are_accepted_with_its_instruction_count():
    tally = measure(collect())
    assert tally.accepted_by_xla >= 150
    rates = tally.rates()
    assert rates["default_accepts"] >= 0.995 and rates["strict_accepts"] >= 0.99, tally.misses


def test_strict_mode_rejects_what_xla_rejects():
    tally = measure(mutants(collect(), 500, seed=11))
    assert tally.rejected_by_xla >= 200
    assert tally.rates()["strict_rejects"] >= 0.90, tally.leniencies[:10]
