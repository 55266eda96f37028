"""The report package's remaining parts (the mutation run found them untested): a file error
from each kind of failure, the lint summary's counts, and the text of `stats` and `diff`
against the JSON of the same run (both come from one record)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.lint import LintOptions, lint_files
from hloscope.parser.errors import ParseError
from hloscope.report.common import FileError
from hloscope.units import human_bytes, human_seconds

runner = CliRunner()


# ------------------------------------------------------------------ file errors
def test_a_parse_error_keeps_its_place_and_reads_its_line(tmp_path):
    f = tmp_path / "m.hlo.txt"
    f.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} paramter(0)\n}\n")
    e = FileError.of(str(f), ParseError("unknown opcode 'paramter'", str(f), 3, 22))
    assert (e.file, e.line, e.column, e.message) == (str(f), 3, 22, "unknown opcode 'paramter'")
    assert e.source_line == "  ROOT p = f32[4]{0} paramter(0)"  # read back from the file
    # (the line indented by two, the caret under column 22)
    assert e.render().splitlines() == [f"{f}:3:22: error: unknown opcode 'paramter'",
                                       "    ROOT p = f32[4]{0} paramter(0)", " " * (2 + 21) + "^"]
    assert e.to_dict() == {"file": str(f), "line": 3, "column": 22, "message": "unknown opcode 'paramter'"}
    # an error that carries its line keeps it; one parsed from a string takes the file's path
    given = FileError.of(str(f), ParseError("bad", "<string>", 1, 1, "HloModule m"))
    assert (given.file, given.source_line) == (str(f), "HloModule m")
    assert FileError.of(str(f), ParseError("bad", "", 2, 1)).file == str(f)
    assert FileError.of(str(f), ParseError("bad", "other.txt", 0, 0)).source_line is None


def test_an_input_error_is_said_plainly_and_anything_else_is_ours():
    class Missing(ValueError):
        is_input_error = True

    e = FileError.of("x.pb", Missing("reading a binary HloProto needs jax"))
    assert (e.file, e.line, e.column, e.message) == ("x.pb", 0, 0, "reading a binary HloProto needs jax")
    bug = FileError.of("x.hlo", KeyError("k"))
    assert bug.message == "internal error (KeyError: 'k'); rerun with --debug"
    assert (bug.line, bug.column) == (0, 0)
    assert bug.render() == "x.hlo: error: internal error (KeyError: 'k'); rerun with --debug"


# ------------------------------------------------------------------ the lint summary
def test_the_summary_counts_what_the_findings_say(tmp_path):
    bad = tmp_path / "bad.hlo.txt"
    bad.write_text("HloModule m\nENTRY e {\n")
    paths = [FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt", FIXTURES / "rules" / "H002" / "transpose_out_v5e.hlo.txt", bad]
    report = lint_files(paths, LintOptions(chip="v5e"))
    s = report.summary()
    assert s["files"] == 3 and s["errors"] == 1 and s["findings"] == len(report.findings)
    assert s["by_severity"] == dict(Counter(str(f.severity) for f in report.findings))
    assert s["by_code"] == dict(sorted(Counter(f.code for f in report.findings).items()))
    assert list(s["by_code"]) == sorted(s["by_code"])
    assert s["groups"] == len({(f.file, f.fingerprint) for f in report.findings}) < s["findings"]
    assert s["instructions"] == report.instructions > 0 and s["notes"] == report.notes
    doc = report.to_dict()
    assert doc["version"] == 1 and doc["summary"] == s and len(doc["findings"]) == s["findings"]
    assert doc["errors"] == [e.to_dict() for e in report.errors] and doc["modules"] == report.modules


# ------------------------------------------------------------------ stats text
def test_stats_text_states_its_json():
    path = FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"
    text = runner.invoke(app, ["stats", str(path), "--per-computation"]).output.splitlines()
    (rec,) = json.loads(runner.invoke(app, ["stats", str(path), "--per-computation", "-f", "json"]).output)["modules"]
    assert text[0] == (f"HloModule {rec['name']}: {rec['instructions']} instructions in "
                       f"{rec['computations']} computations ({rec['fusion_computations']} fused)")
    assert text[1] == "  opcodes: " + ", ".join(f"{k} {v}" for k, v in rec["opcodes"].items())
    assert "  fusion kinds: " + ", ".join(f"{k} {v}" for k, v in rec["fusion_kinds"].items()) in text
    mem = rec["memory"]
    assert ("  all buffers added up (not memory in use: `hloscope memory` gives the peak): "
            + ", ".join(f"{k} {human_bytes(v, 2)}" for k, v in mem["bytes_per_memory_space"].items())
            + f"; padding waste {human_bytes(mem['padding_waste_bytes'], 2)}") in text
    at = text.index("  largest buffers:")
    for line, b in zip(text[at + 1:], mem["largest_buffers"]):
        assert line.startswith(f"    {human_bytes(b['padded_bytes'], 2):>11}  {b['instruction']} {b['shape']}")
        assert ("(padded " in line) == (b["ratio"] > 1)
    for c in rec["per_computation"]:
        tag = " [entry]" if c["is_entry"] else (" [fusion]" if c["is_fusion"] else "")
        line = f"  {c['name']}{tag}: {c['instructions']} instructions"
        assert line in text
        assert text[text.index(line) + 1] == "    opcodes: " + ", ".join(f"{k} {v}" for k, v in c["opcodes"].items())
    assert any(c["is_entry"] for c in rec["per_computation"]) and any(c["is_fusion"] for c in rec["per_computation"])
    kernel = FIXTURES / "tpu" / "pallas_matmul_4096_v5e.hlo.txt"
    ktext = runner.invoke(app, ["stats", str(kernel)]).output
    (krec,) = json.loads(runner.invoke(app, ["stats", str(kernel), "-f", "json"]).output)["modules"]
    assert ("  custom-call targets: " + ", ".join(f"{k} {v}" for k, v in krec["custom_call_targets"].items())
            in ktext.splitlines())


# ------------------------------------------------------------------ diff text
@pytest.mark.parametrize("a,b", [
    (FIXTURES / "rules" / "H007" / "sharded_weight_v5p.hlo.txt", FIXTURES / "rules" / "H007" / "gather_whole_weight_v5p.hlo.txt"),
    (FIXTURES / "rules" / "H010" / "bf16_matmul_v5e.hlo.txt", FIXTURES / "rules" / "H010" / "f32_matmul_v5e.hlo.txt"),
])
def test_diff_text_states_its_json(a, b):
    from hloscope.report.diff import METRIC_FORMAT, _change

    args = ["diff", str(a), str(b), "--chip", "v5p", "--fail-if", "step_time>+1%"]
    text = runner.invoke(app, args).output.splitlines()
    doc = json.loads(runner.invoke(app, [*args, "-f", "json"]).output)
    (p,) = doc["pairs"]
    assert text[:2] == [f"A: {a}", f"B: {b}"]
    for k, t in p["totals"].items():
        fmt = METRIC_FORMAT[k]
        assert f"  {k:10} {fmt(t['a']):>14} -> {fmt(t['b']):>14}  {_change(t['a'], t['b'])}" in text
    for k, c in p["categories"].items():
        line = (f"    {k:18} {human_seconds(c['seconds']['a'])} -> {human_seconds(c['seconds']['b'])}"
                f"; {c['flops']['a']:.3g} -> {c['flops']['b']:.3g}"
                f"; {human_bytes(c['bytes']['a'])} -> {human_bytes(c['bytes']['b'])}")
        moved = c["seconds"]["delta"] or c["flops"]["delta"] or c["bytes"]["delta"]
        assert (line in text) == bool(moved)
    for o in p["ops_added"]:
        assert f"  op added: {o['opcode']} [{o['op']}] " + ", ".join(f"{f} x{n}" for f, n in o["forms"].items()) in text
    for o in p["ops_removed"]:
        assert f"  op removed: {o['opcode']} [{o['op']}] " + ", ".join(f"{f} x{n}" for f, n in o["forms"].items()) in text
    for o in p["ops_changed"]:
        before = ", ".join(f"{f} x{n}" for f, n in o["a"].items()) or "-"
        after = ", ".join(f"{f} x{n}" for f, n in o["b"].items()) or "-"
        assert f"  op changed: {o['opcode']} [{o['op']}] {before} -> {after}" in text
    for c in p["collectives"]:
        assert (f"  collective {c['opcode']} {human_bytes(c['moved_bytes'])}"
                f"{' async' if c['async'] else ''}: x{c['a']} -> x{c['b']}") in text
    for f in p["findings_new"]:
        assert f"  new finding: {f['code']} x{f['count']}: {f['message']}" in text
    for f in p["findings_fixed"]:
        assert f"  fixed finding: {f['code']} x{f['count']}: {f['message']}" in text
    (g,) = p["gates"]
    assert f"  gate step_time>+1%: {'TRIPPED' if g['tripped'] else 'ok'}" in text
    assert [x for x in text if x.startswith("regression: ")] == [f"regression: {t}" for t in doc["tripped"]]
    assert p["ops_added"] or p["ops_changed"] or p["collectives"]


def test_a_change_reads_as_a_signed_percentage():
    from hloscope.report.diff import _change

    assert _change(2.0, 2.0) == "="
    assert _change(0.0, 5.0) == "new"
    assert _change(200.0, 250.0) == "+25.0%" and _change(200.0, 150.0) == "-25.0%"
    assert _change(-200.0, -150.0) == "+25.0%"  # relative to |a|
