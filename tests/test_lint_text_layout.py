"""The text report's layout, line by line, on hand-made findings over a hand-written
three-line file (labelled: a unit test of the layout, not of a rule): the expected text is
derived by hand from the format the README shows: a module line and a blank line, each
entry's head, the file's line under a `LINE | ` gutter with a caret, the source, the other
places of a repeated pattern (four at most, then "and N more"), help once per rule, a blank
line after each entry, and the summary."""

from __future__ import annotations

from hloscope.report.common import LintReport
from hloscope.report.lint_text import _MAX_LINE, _excerpt, render
from hloscope.rules.base import Finding, Severity

LINES = ["HloModule m", "ENTRY e {", "  ROOT c = f32[8]{0} copy(p)", "}"]


def _finding(line: int, column: int, *, code="H001", fingerprint="", source=None, help="", file="m.hlo.txt",
             instruction="c") -> Finding:
    return Finding(code=code, name="defensive-copy", severity=Severity.WARNING, message="a copy",
                   file=file, line=line, column=column, module="m", computation="e",
                   instruction=instruction, help=help, fingerprint=fingerprint, source=source or {})


def _report(findings, **kw) -> LintReport:
    return LintReport(findings=findings, rules=[], files=["m.hlo.txt"], instructions=2,
                      sources={"m.hlo.txt": LINES}, **kw)


def test_the_whole_layout_of_a_small_report():
    src = {"op_name": "jit(f)/copy", "file": "f.py", "line": 7, "function": "f"}
    first = _finding(1, 1, help="donate the buffer", source=src, fingerprint="a")
    last = _finding(4, 1, help="donate the buffer", fingerprint="b")
    report = _report([first, last], modules=[{"file": "m.hlo.txt", "name": "m", "stage": "after_optimizations",
                                                 "stage_source": "schedule"}])
    assert render(report).splitlines() == [
        "m.hlo.txt: HloModule m, after_optimizations (schedule)",
        "",
        "m.hlo.txt:1:1: H001 [warning] defensive-copy: a copy",
        "     1 | HloModule m",
        "         ^",
        "       = source: f.py:7 (f) [jit(f)/copy]",
        "       = help: donate the buffer",
        "",
        "m.hlo.txt:4:1: H001 [warning] defensive-copy: a copy",
        "     4 | }",
        "         ^",
        "",
        "2 finding(s) (2 warning) in 1 file(s), 2 instructions checked",
    ]


def test_a_finding_with_no_line_or_no_source_text_shows_no_excerpt():
    unplaced = _finding(0, 0, fingerprint="a")
    elsewhere = _finding(2, 1, fingerprint="b", file="other.hlo.txt")  # no text kept for it
    lines = render(_report([unplaced, elsewhere])).splitlines()
    assert lines[:4] == ["m.hlo.txt:0:0: H001 [warning] defensive-copy: a copy", "",
                         "other.hlo.txt:2:1: H001 [warning] defensive-copy: a copy", ""]


def test_findings_without_a_fingerprint_are_not_grouped():
    lines = render(_report([_finding(3, 3), _finding(3, 10)])).splitlines()
    heads = [x for x in lines if x.startswith("m.hlo.txt:")]
    assert heads == ["m.hlo.txt:3:3: H001 [warning] defensive-copy: a copy",
                     "m.hlo.txt:3:10: H001 [warning] defensive-copy: a copy"]
    assert lines[-1] == "2 finding(s) (2 warning) in 1 file(s), 2 instructions checked"


def test_a_source_without_a_file_is_its_op_name():
    src = {"op_name": "jit(f)/copy", "file": "", "line": 0, "function": ""}
    assert "       = source: jit(f)/copy" in render(_report([_finding(3, 3, source=src)])).splitlines()


def _also(n: int) -> str:
    group = [_finding(3, 3 + k, fingerprint="same", instruction=f"c{k}") for k in range(n)]
    return next(x for x in render(_report(group)).splitlines() if x.startswith("       = also at: "))


def test_other_places_list_four_then_count_the_rest():
    assert _also(5) == "       = also at: 3:4 %c1, 3:5 %c2, 3:6 %c3, 3:7 %c4 (--expand lists each)"
    assert _also(6) == "       = also at: 3:4 %c1, 3:5 %c2, 3:6 %c3, 3:7 %c4 and 1 more (--expand lists each)"
    assert _also(2) == "       = also at: 3:4 %c1 (--expand lists each)"


def test_an_excerpt_is_cut_only_where_the_line_goes_on():
    whole = "a" * (_MAX_LINE - 1) + "X"
    assert _excerpt(whole + "\n", 5) == (whole, 5)  # exactly the width: as written
    line = "b" * 300 + "%end"
    text, at = _excerpt(line, 301)
    assert text == "..." + line[-_MAX_LINE:]  # the window ends with the line: nothing follows
    assert text[at - 1:] == "%end"
    text, at = _excerpt(line, 1)
    assert text == line[:_MAX_LINE] + "..." and at == 1
