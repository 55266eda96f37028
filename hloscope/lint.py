"""The lint API: parse files, configure and run the rules, apply baseline, report.

    from hloscope.lint import LintOptions, lint_files
    report = lint_files(["kernel.hlo.txt"], LintOptions(select=["H0"]))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hloscope.parser import ParseError, load
from hloscope.report.common import LintReport
from hloscope.rules.base import Rule, Severity
from hloscope.rules.config import Config
from hloscope.rules.engine import run
from hloscope.rules.registry import load_rules
from hloscope.rules.select import select_rules


@dataclass
class LintOptions:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    chip: str | None = None
    rule_options: dict[str, dict] = field(default_factory=dict)  # by rule name or code
    baseline: Path | None = None
    strict: bool = False
    trace: Path | None = None


class LintError(ValueError):
    """A usage or configuration problem (exit code 2)."""


def merge(config: Config, select=None, ignore=None, chip=None) -> LintOptions:
    """Command-line choices override the config file's."""
    return LintOptions(
        select=select or config.select,
        ignore=[*(config.ignore or []), *(ignore or [])],
        chip=chip or config.chip,
        rule_options=config.rules,
    )


def build_rules(opts: LintOptions) -> list[Rule]:
    rules = load_rules()
    try:
        chosen = select_rules(rules, opts.select, opts.ignore)
    except ValueError as e:
        raise LintError(str(e)) from None
    by_key = {**{r.name: r for r in rules.values()}, **rules}
    for key in opts.rule_options:
        if key not in by_key:
            raise LintError(f"configuration names unknown rule {key!r}")
    out = []
    for cls in chosen:
        values = {**opts.rule_options.get(cls.code, {}), **opts.rule_options.get(cls.name, {})}
        try:
            out.append(cls(cls.make_options(values)))
        except (TypeError, ValueError) as e:
            raise LintError(str(e)) from None
    return out


def lint_files(paths: list[str | Path], opts: LintOptions) -> LintReport:
    """Parse every file first (a ParseError aborts before any finding is reported),
    then run the rules."""
    chip = None
    if opts.chip:
        from hloscope.cost.chips import get_chip

        try:
            chip = get_chip(opts.chip)
        except KeyError as e:
            raise LintError(e.args[0]) from None
    rules = build_rules(opts)
    modules = []
    sources: dict[str, list[str]] = {}
    for path in paths:
        parsed = load(path, strict=opts.strict)
        modules.extend(parsed)
        sources[str(path)] = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    index = None
    notes: list[str] = []
    if opts.trace is not None:
        from hloscope.trace import TraceError, join, load_profile
        from hloscope.trace.report import detect_chip

        try:
            profile = load_profile(opts.trace)
        except TraceError as e:
            raise LintError(str(e)) from None
        index = join(profile, modules)
        notes.extend(index.warnings)
        if chip is None:
            chip = detect_chip(profile.device_kind)
            if chip is not None:
                notes.append(f"chip {chip.name} detected from the trace")
        matched = sum(s.count for s in index.stats.values())
        notes.append(f"trace: {matched} op events linked to instructions, "
                     f"{sum(u['count'] for u in index.unmatched)} unmatched, {index.steps} step(s)")
    result = run(modules, rules, chip=chip, sources=sources, trace=index)
    findings = result.findings
    baselined = 0
    if opts.baseline is not None:
        from hloscope.rules.baseline import apply_baseline, read_baseline

        try:
            known = read_baseline(opts.baseline)
        except ValueError as e:
            raise LintError(str(e)) from None
        findings, baselined = apply_baseline(findings, known)
    return LintReport(
        findings=findings, rules=[type(r) for r in rules], files=[str(p) for p in paths],
        instructions=result.instructions, suppressed=result.suppressed, baselined=baselined,
        notes=notes + result.notes, sources=sources,
    )


def exit_code(report: LintReport, fail_on: Severity) -> int:
    return 1 if any(f.severity >= fail_on for f in report.findings) else 0


__all__ = ["LintError", "LintOptions", "ParseError", "build_rules", "exit_code", "lint_files", "merge"]
