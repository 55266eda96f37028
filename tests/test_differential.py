"""hloscope vs XLA's own parser: same computations, names, opcodes, shapes, operands."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (
    FIXTURES,
    corpus_files,
    fixture_files,
    manifest,
    needs_corpus,
    rel,
    xla_view_map,
)
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
    """Except those the fixtures script derives on purpose (stated in the manifest and the
    file's first line): an opcode renamed to one XLA does not know, which it rejects; other
    derived changes (every channel_id set to 1) XLA accepts."""
    views = xla_view_map()
    derived = {str(FIXTURES / e["file"]) for e in manifest().values() if e.get("derived")}
    rejected = [rel(p) for p in fixture_files() if "error" in views[str(p)] and str(p) not in derived]
    assert not rejected
    from jaxlib import _hlo

    for path in derived:
        text = Path(path).read_text()
        if "renamed" in text.splitlines()[0]:
            with pytest.raises(Exception, match="expects opcode but sees"):
                _hlo.hlo_module_from_text(text)
        else:
            _hlo.hlo_module_from_text(text)


@needs_corpus
def test_most_of_the_corpus_is_compared():
    """Guard against the differential test silently skipping everything."""
    views = xla_view_map()
    accepted = [p for p in corpus_files() if "error" not in views[str(p)]]
    assert len(accepted) >= 35, [rel(p) for p in corpus_files() if p not in accepted]


def _lit_chunks() -> list[tuple[str, str]]:
    """The modules of XLA's multi-module lit test files, split at `// -----`."""
    out = []
    for path in corpus_files():
        text = path.read_text(encoding="utf-8")
        if "\n// -----" not in text:
            continue
        for k, chunk in enumerate(text.split("\n// -----")):
            if "HloModule" in chunk:
                out.append((f"{rel(path)}#{k}", chunk))
    return out


# Chunks where XLA rewrites what the text says, so "the same result" cannot hold.
KNOWN_REWRITES = {
    "corpus/xla-hlo-import-tests/import_async.hlo#14":
        "recv-done is printed as (f32[128,21], token[]); XLA derives f32[128,32] from its recv",
}


@needs_corpus
def test_split_lit_modules_match_xla():
    from oracle import xla_views

    from hloscope.parser import ParseError, parse

    chunks = _lit_chunks()
    views = xla_views([c for _, c in chunks])
    compared = 0
    for (label, chunk), xla in zip(chunks, views):
        if "error" in xla or label in KNOWN_REWRITES:
            continue
        try:
            (module,) = parse(chunk, label)
        except ParseError as e:
            raise AssertionError(f"{label}: XLA accepts, we reject: {e}") from None
        problems = compare(our_view(module), xla)
        assert not problems, f"{label}: " + "\n".join(problems[:10])
        compared += 1
    assert compared >= 20, compared
