"""The lint formats against their specifications, on findings made by hand: GitHub's
workflow-command escaping (docs.github.com, "Workflow commands": `%`, CR and LF escaped as
%25, %0D, %0A in the message; `:` and `,` as %3A and %2C as well in a property), SARIF's
1-based regions (SARIF 2.1.0 3.30.5: startLine and startColumn are at least 1), and the
text format's source line (`file:line (function) [op_name]`)."""

from __future__ import annotations

import json

from hloscope.report import github, lint_text, sarif
from hloscope.report.common import FileError, LintReport
from hloscope.rules.base import Finding, Severity


def _finding(message="%x is 5% slower", file="a,b:c.hlo", line=3, column=7, source=None, code="H001"):
    return Finding(code=code, name="defensive-copy", severity=Severity.WARNING, message=message,
                   file=file, line=line, column=column, module="m", computation="e",
                   instruction="x", source=source or {})


def _report(*findings, errors=()):
    return LintReport(findings=list(findings), rules=[], files=[f.file for f in findings],
                      errors=list(errors))


def test_github_escapes_the_message_and_the_properties_as_its_docs_say():
    f = _finding(message="50% of it\r\nis copied")
    (line,) = github.render(_report(f)).splitlines()
    assert line == ("::warning file=a%2Cb%3Ac.hlo,line=3,col=7,title=H001 defensive-copy::"
                    "50%25 of it%0D%0Ais copied")
    assert github.render(_report()) == ""


def test_github_names_the_programs_source_line_when_the_dump_gives_one():
    f = _finding(message="copied", source={"file": "model.py", "line": 42, "op_name": "jit(f)/copy"})
    assert github.render(_report(f)).endswith("::copied (source: model.py:42)\n")
    bare = _finding(message="copied", source={"file": "model.py"})
    assert github.render(_report(bare)).endswith("::copied (source: model.py)\n")  # (no line: no `:0`)


def test_github_and_sarif_place_a_file_error_at_line_1_column_1_at_least():
    err = FileError(file="bad.hlo", line=0, column=0, message="empty file")
    (line,) = github.render(_report(errors=[err])).splitlines()
    assert line.startswith("::error file=bad.hlo,line=1,col=1,")
    at_one = FileError(file="bad.hlo", line=1, column=1, message="x")
    assert ",line=1,col=1," in github.render(_report(errors=[at_one]))
    run = json.loads(sarif.render(_report(errors=[at_one])))["runs"][0]
    regions = json.dumps(run)
    assert '"startLine": 1' in regions and '"startColumn": 1' in regions and '"startLine": 2' not in regions


def test_sarif_regions_are_one_based_and_keep_line_one():
    for line, column, want in ((1, 1, (1, 1)), (0, 0, (1, 1)), (9, 4, (9, 4))):
        doc = json.loads(sarif.render(_report(_finding(line=line, column=column))))
        region = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == want


def test_sarif_relates_a_finding_to_the_programs_source_line():
    f = _finding(source={"file": "model.py", "line": 1, "op_name": "jit(f)/copy"})
    result = json.loads(sarif.render(_report(f)))["runs"][0]["results"][0]
    (related,) = result["relatedLocations"]
    assert related["message"]["text"] == "source: jit(f)/copy"
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "model.py"
    assert related["physicalLocation"]["region"]["startLine"] == 1
    nameless = _finding(source={"file": "model.py", "line": 0})
    (related,) = json.loads(sarif.render(_report(nameless)))["runs"][0]["results"][0]["relatedLocations"]
    assert related["message"]["text"] == "source"
    assert related["physicalLocation"]["region"]["startLine"] == 1


def test_text_names_the_source_as_file_line_function_and_op_name():
    def source_of(src):
        return lint_text._source(_finding(source=src), None)

    assert source_of({"file": "m.py", "line": 4, "function": "f", "op_name": "jit(f)/x"}) == "m.py:4 (f) [jit(f)/x]"
    assert source_of({"file": "m.py", "line": 4}) == "m.py:4"
    assert source_of({"file": "m.py"}) == "m.py"
    assert source_of({"op_name": "jit(f)/x"}) == "jit(f)/x"
    assert source_of({}) == ""


def test_sarif_maps_the_programs_source_under_the_source_root(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text("")
    f = _finding(source={"file": "/build/42/pkg/model.py", "line": 3, "op_name": "jit(f)/copy"})
    report = _report(f)
    report.source_root = str(tmp_path)
    (related,) = json.loads(sarif.render(report))["runs"][0]["results"][0]["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == str(tmp_path / "pkg" / "model.py")


def test_sarif_describes_a_rule_in_full_by_its_docstring_else_its_summary():
    from hloscope.rules.base import Rule
    from hloscope.rules.h001_defensive_copy import DefensiveCopy

    class Bare(Rule):
        code, name, summary = "Z901", "bare", "a rule with no docstring"

    Bare.__doc__ = None
    report = _report()
    report.rules = [DefensiveCopy, Bare]
    rules = {r["id"]: r for r in json.loads(sarif.render(report))["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["H001"]["fullDescription"]["text"] == DefensiveCopy.__doc__.strip() != DefensiveCopy.summary
    assert rules["Z901"]["fullDescription"]["text"] == "a rule with no docstring"
