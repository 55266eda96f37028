"""hloscope vs XLA's own parser: same computations, names, opcodes, shapes, operands."""

from __future__ import annotations

import pytest
from conftest import corpus_files, fixture_files, needs_corpus, rel, xla_view_map
from oracle import compare, our_view

from hloscope.parser import load


def _check(path, strict: bool) -> None:
    xla = xla_view_map()[str(path)]
    if "error" in xla:
        pytest.skip(f"XLA rejects {rel(path)}: {xla['error'][:80]}")
    (module, *rest) = load(path, strict=strict)
    assert not rest, "XLA accepted the file, so it holds one module"
    problems = compare(our_view(module), xla)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("strict", [False, True], ids=["fast", "strict"])
@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_fixture_matches_xla(path, strict):
    if strict and path.stat().st_size > 1_000_000:
        pytest.skip("strict mode on the 5 MB module is covered by the equivalence test")
    _check(path, strict)


@needs_corpus
@pytest.mark.parametrize("strict", [False, True], ids=["fast", "strict"])
@pytest.mark.parametrize("path", corpus_files(), ids=rel)
def test_corpus_matches_xla(path, strict):
    _check(path, strict)


def test_every_fixture_is_accepted_by_xla():
    views = xla_view_map()
    rejected = [rel(p) for p in fixture_files() if "error" in views[str(p)]]
    assert not rejected


@needs_corpus
def test_most_of_the_corpus_is_compared():
    """Guard against the differential test silently skipping everything."""
    views = xla_view_map()
    accepted = [p for p in corpus_files() if "error" not in views[str(p)]]
    assert len(accepted) >= 35, [rel(p) for p in corpus_files() if p not in accepted]
