"""The text report of `lint`, checked against the file it reports on (the mutation run found
its layout untested): the caret stands under the character at the finding's column, long
lines are cut around it, repeated findings are one entry with their count and places, help
is given once per rule, and the summary line counts what the findings say."""

from __future__ import annotations

import re
from collections import Counter

from conftest import FIXTURES

from hloscope.lint import LintOptions, lint_files
from hloscope.report.common import LintReport
from hloscope.report.lint_text import _MAX_LINE, _excerpt, render

SOURCED = FIXTURES / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt"
REPEATED = FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt"
_HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]\d{3}) \[(?P<sev>\w+)\] ")


def _entries(text: str) -> list[list[str]]:
    """The finding entries: the head line and the lines under it."""
    out, cur = [], None
    for line in text.splitlines():
        if _HEAD.match(line):
            cur = [line]
            out.append(cur)
        elif cur is not None and line:
            cur.append(line)
        else:
            cur = None
    return out


def test_the_caret_stands_under_the_findings_column():
    report = lint_files([SOURCED, REPEATED], LintOptions(chip="v5e"))
    text = render(report)
    checked = 0
    for entry in _entries(text):
        m = _HEAD.match(entry[0])
        source = (FIXTURES.parent / m["file"]) if not m["file"].startswith("/") else None
        lines = open(source or m["file"], encoding="utf-8").read().splitlines()
        line, col = int(m["line"]), int(m["col"])
        gutter = f"{line:>6} | "
        shown, caret = entry[1], entry[2]
        assert shown.startswith(gutter) and caret.strip() == "^"
        at = caret.index("^") - len(gutter)
        excerpt = shown[len(gutter):]
        assert excerpt[at] == lines[line - 1][col - 1]  # the same character of the file
        if len(lines[line - 1]) > _MAX_LINE:
            assert len(excerpt) <= _MAX_LINE + 6
            assert excerpt.removeprefix("...").removesuffix("...") in lines[line - 1]
        checked += 1
    assert checked >= 3


def test_a_long_line_is_cut_around_the_column():
    line = "x" * 300 + "%target" + "y" * 300
    col = 301
    text, at = _excerpt(line + "\n", col)
    assert text.startswith("...") and text.endswith("...")
    assert text[at - 1:at - 1 + 7] == "%target"
    assert len(text) == _MAX_LINE + 6
    near = "%t" + "z" * 400
    text, at = _excerpt(near, 1)
    assert not text.startswith("...") and text.endswith("...") and at == 1 and text[0] == "%"
    end = "a" * 400 + "%end"
    text, at = _excerpt(end, 401)
    assert text[at - 1:] == "%end" and text.startswith("...")  # nothing follows: no dots after
    assert _excerpt("short\tline\n", 3) == ("short line", 3)


def test_repeated_findings_are_one_entry_with_their_places():
    report = lint_files([REPEATED], LintOptions(chip="v5e"))
    text = render(report)
    groups = Counter((f.file, f.fingerprint) for f in report.findings)
    repeated = [k for k, n in groups.items() if n > 1]
    assert repeated, "the 16-layer step repeats its findings per layer"
    entries = _entries(text)
    assert len(entries) == len(groups)
    for entry in entries:
        m = re.search(r" \(x (\d+)\)$", entry[0])
        also = [x for x in entry if x.startswith("       = also at: ")]
        if not m:
            assert not also
            continue
        n = int(m.group(1))
        places = also[0].removeprefix("       = also at: ").removesuffix(" (--expand lists each)")
        more = re.search(r" and (\d+) more$", places)
        listed = places[: more.start()] if more else places
        assert len(listed.split(", ")) == min(n - 1, 4)
        assert (int(more.group(1)) if more else 0) == max(n - 1 - 4, 0)
    helps = [x for x in text.splitlines() if x.startswith("       = help: ")]
    assert len(helps) == len({f.code for f in report.findings if f.help})
    expanded = render(LintReport(**{**report.__dict__, "expand": True}))
    assert len(_entries(expanded)) == len(report.findings) and "also at" not in expanded


def test_the_summary_line_counts_the_findings():
    report = lint_files([REPEATED, SOURCED], LintOptions(chip="v5e"))
    last = [x for x in render(report).splitlines() if " finding(s)" in x][-1]
    sev = Counter(str(f.severity) for f in report.findings)
    kinds = len({(f.file, f.fingerprint) for f in report.findings})
    want = (f"{len(report.findings)} finding(s) of {kinds} kind(s) ("
            + ", ".join(f"{n} {k}" for k, n in sorted(sev.items())) + ") in 2 file(s), "
            f"{report.summary()['instructions']} instructions checked")
    assert last == want
    empty = lint_files([FIXTURES / "rules" / "H002" / "elementwise_v5e.hlo.txt"], LintOptions(chip="v5e"))
    tail = render(empty).splitlines()[-1 - len(empty.notes)]
    assert tail.startswith("0 finding(s) (none) in 1 file(s), ") and ";" not in tail


def test_the_summary_counts_suppressed_baselined_and_unreadable(tmp_path):
    bad = tmp_path / "bad.hlo.txt"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(\n}\n")
    report = lint_files([bad, SOURCED], LintOptions(chip="v5e"))
    report.suppressed, report.baselined = 2, 3
    line = [x for x in render(report).splitlines() if " finding(s)" in x][-1]
    assert line.endswith("; 2 suppressed inline, 3 in baseline, 1 file(s) could not be linted")
    report.suppressed = 0
    line = [x for x in render(report).splitlines() if " finding(s)" in x][-1]
    assert line.endswith("; 3 in baseline, 1 file(s) could not be linted")


def test_a_findings_source_names_file_line_function_and_op(tmp_path):
    report = lint_files([SOURCED], LintOptions(chip="v5e"))
    text = render(report)
    f = next(x for x in report.findings if x.source.get("file"))
    s = f.source
    assert (f"       = source: {s['file']}:{s['line']} ({s['function']}) [{s['op_name']}]"
            in text.splitlines())
    # --source-root: the same file in another checkout
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "generate.py").write_text("")
    rooted = render(LintReport(**{**report.__dict__, "source_root": str(tmp_path)}))
    want = f"{tmp_path}/fixtures/generate.py:{s['line']} ({s['function']}) [{s['op_name']}]"
    assert f"       = source: {want}" in rooted.splitlines()
