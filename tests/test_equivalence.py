"""The fast path and strict mode build the same IR, attribute values included."""

from __future__ import annotations

import pytest
from conftest import corpus_files, fixture_files, needs_corpus, rel
from irdump import dump_module

from hloscope.parser import ParseError, load
from hloscope.parser.scan import ScanMiss, scan_text


def _both(path):
    try:
        strict = load(path, strict=True)
    except ParseError as e:
        with pytest.raises(ParseError) as fast_err:
            load(path)
        assert (fast_err.value.line, fast_err.value.column) == (e.line, e.column)
        return
    fast = load(path)
    assert [dump_module(m) for m in fast] == [dump_module(m) for m in strict]


@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_fixture_fast_equals_strict(path):
    _both(path)


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=rel)
def test_corpus_fast_equals_strict(path):
    _both(path)


@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_fast_path_handles_real_output_itself(path):
    """Real compiler output never needs the full-grammar fallback."""
    try:
        scan_text(path.read_text(), str(path))
    except ScanMiss as e:  # pragma: no cover - the failure message is the point
        pytest.fail(f"fast scan fell back on {rel(path)}: {e}")
