"""The compiled core's whole-text helpers (native/src/text.rs) against their Python oracles:
`lines_with` (the lines `hloscope stats` reads for their `/*` comments) against the Python
walk it replaced, and `nesting_beyond` against `hloscope.parser.text.walk_nesting`, on every
module at hand and on random bracket texts."""

from __future__ import annotations

import random

import pytest
from conftest import corpus_files, fixture_files

from hloscope.parser.text import walk_lines_with

pytestmark = pytest.mark.skipif(
    __import__("hloscope.parser.fast.native", fromlist=["available"]).available() is None,
    reason="the compiled extension is not in use (HLOSCOPE_PLAIN=1 or not built)")


def test_lines_with_equals_the_python_walk_on_every_module():
    from hloscope._speed import native

    core = native()
    files = fixture_files() + corpus_files()
    assert len(files) > 300
    marked = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        want = walk_lines_with(text, "/*")
        assert core.lines_with(text, "/*") == want, path
        marked += bool(want)
    assert marked > 50  # (tuple shapes print `/*index=5*/`: many real modules have some)


def test_lines_with_on_hand_written_corners():
    """HAND-WRITTEN minimal texts: a marker at the start and end, twice on a line, in a last
    line with no line break, across non-ASCII text."""
    from hloscope._speed import native

    core = native()
    for text in ("/*a*/\nb /* c */ /* d */\n\n/*", "none\n", "", "é /* ü\nx\n/*é*/", "\n\n/*\n"):
        assert core.lines_with(text, "/*") == walk_lines_with(text, "/*"), text
    assert core.lines_with("a\nb", "") == walk_lines_with("a\nb", "") == []  # (no marker: no line)


def test_nesting_beyond_equals_the_python_walk():
    from hloscope._speed import native
    from hloscope.parser.text import walk_nesting

    core = native()
    rng = random.Random(37)
    for _ in range(3000):
        n = rng.randrange(0, 60)
        s = "".join(rng.choice("([{)]}a,é\"") for _ in range(n))
        limit = rng.randrange(0, 8)
        assert core.nesting_beyond(s, limit) == walk_nesting(s, limit), (s, limit)
    for path in fixture_files()[:200]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for limit in (2, 5, 1024):
            assert core.nesting_beyond(text, limit) == walk_nesting(text, limit), (path, limit)


def test_stats_reads_the_same_commented_lines_either_way(monkeypatch):
    """hloscope.stats.table's commented lines, from the core and from the Python walk, are
    the same instructions (name, opcode, shape, operands, attributes) on real modules."""
    import hloscope.stats.table as table
    from hloscope._speed import native

    core = native()

    class _WithoutLinesWith:  # (the core less lines_with: the Python walk)
        lines = staticmethod(core.lines)

    files = [p for p in corpus_files() + fixture_files() if "/*" in p.read_text(errors="replace")][:40]
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        fast = table._commented_lines(core, text)
        slow = table._commented_lines(_WithoutLinesWith, text)
        assert list(fast) == list(slow), path
        for line, instr in fast.items():
            other = slow[line]
            assert (instr is None) == (other is None), (path, line)
            if instr is not None:
                assert (instr.name, instr.opcode, instr.shape_text, instr.operands, instr.attr_text) == (
                    other.name, other.opcode, other.shape_text, other.operands, other.attr_text), (path, line)
