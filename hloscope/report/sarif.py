"""SARIF 2.1.0 for code-scanning tools: rule metadata in tool.driver.rules."""

from __future__ import annotations

import json

from hloscope._version import __version__
from hloscope.report.common import LintReport
from hloscope.rules.base import Severity
from hloscope.source import map_root

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(report: LintReport) -> str:
    rules = sorted({r.code: r for r in report.rule_classes()}.values(), key=lambda r: r.code)
    index = {r.code: k for k, r in enumerate(rules)}
    driver_rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary or r.name},
            "fullDescription": {"text": r.__doc__.strip() if r.__doc__ else r.summary},
            "help": {"text": r.doc(), "markdown": r.doc()},
            "defaultConfiguration": {"level": _LEVEL[r.severity]},
        }
        for r in rules
    ]
    results = []
    for f in report.findings:
        result = {
            "ruleId": f.code,
            "level": _LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": f.file},
                    "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
                },
                "logicalLocations": [{
                    "name": f.instruction or f.module,
                    "fullyQualifiedName": "/".join(x for x in (f.module, f.computation, f.instruction) if x),
                    "kind": "member",
                }],
            }],
            "partialFingerprints": {"hloscope/v1": ":".join(f.key), "hloscope/pattern/v1": f.fingerprint},
            "properties": {"evidence": f.evidence, "cost": f.cost, "group": f.group},
        }
        if f.source.get("file"):
            result["relatedLocations"] = [{
                "id": 1,
                "message": {"text": f"source: {f.source.get('op_name', '')}".rstrip(": ")},
                "physicalLocation": {
                    "artifactLocation": {"uri": map_root(f.source["file"], report.source_root)},
                    "region": {"startLine": max(int(f.source.get("line") or 1), 1)}},
            }]
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    notifications = [{
        "level": "error",
        "message": {"text": e.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": e.file},
            "region": {"startLine": max(e.line, 1), "startColumn": max(e.column, 1)}}}],
    } for e in report.errors]
    payload = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "hloscope", "version": __version__,
                                "informationUri": "https://github.com/hloscope/hloscope",
                                "rules": driver_rules}},
            "properties": {"modules": report.modules},
            "invocations": [{"executionSuccessful": not report.errors,
                             "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }
    return json.dumps(payload, indent=1) + "\n"
