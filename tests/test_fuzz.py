"""2,000 seeded mutants of real HLO per run: no uncaught exception anywhere."""

from __future__ import annotations

from conftest import CORPUS, needs_corpus
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


@needs_corpus
def test_fast_path_and_strict_mode_agree_on_mutants_of_the_corpus():
    """The same on mutants of XLA's own small test and benchmark modules (wider syntax)."""
    files = [f for f in sorted(CORPUS.glob("xla-cpu-benchmark-hlo/*")) + sorted(CORPUS.glob("xla-hlo-import-tests/*.hlo"))
             if f.stat().st_size < 120_000 and f.name not in _XLA_REJECTS]
    assert len(files) > 10
    disagreements = differential(300, seed=7, files=files)
    assert not disagreements, "\n".join(map(str, disagreements[:5]))


# corpus files XLA itself rejects (see test_differential): their mutants prove nothing
_XLA_REJECTS = {"attributes.hlo", "composite_call.hlo", "import_async.hlo", "spmd_module_sharding.hlo"}
