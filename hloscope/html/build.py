"""Files (or dump directories) and an optional profile -> one HTML report: lint every file
as `hloscope lint` does (a file that fails is listed as an error, the others go on), then
gather each readable module's sections and render the page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Built:
    html: str
    pages: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # report.common.FileError


def build_report(paths: list[Path], chip: str | None = None, trace: Path | None = None,
                 allow_mismatch: bool = False, select: list[str] | None = None,
                 progress: Callable[[str], None] | None = None,
                 against: Path | None = None) -> Built:
    """The report of every module in `paths`; raises hloscope.lint.LintError on a usage
    error (unknown chip or rule, unreadable or mismatched profile)."""
    from hloscope.html.collect import collect
    from hloscope.html.page import render_page
    from hloscope.lint import LintOptions, lint_files, profile_of
    from hloscope.parser import load

    opts = LintOptions(select=select, chip=chip, trace=trace, allow_mismatch=allow_mismatch)
    report = lint_files(paths, opts)
    failed = {e.file for e in report.errors}
    profile = None
    if trace is not None:
        profile = profile_of(trace)  # (read once: the lint above read it)
    pages, errors = [], list(report.errors)
    loaded = []  # each page's module
    for path in report.files:
        if path in failed:
            continue
        if progress:
            progress(path)
        modules = load(Path(path))
        index = None
        if profile is not None:
            from hloscope.trace import join

            index = join(profile, modules)
        for m in modules:
            pages.append(collect(m, path, [f for f in report.findings if f.file == path],
                                 chip, trace=index, lint_notes=_notes(report.notes, index)))
            loaded.append(m)
    if against is not None:
        _compare(pages, loaded, against, chip, report.findings)
    title = ", ".join(p.name for p in pages[:3]) + (f" and {len(pages) - 3} more" if len(pages) > 3 else "")
    html = render_page(pages, title or "no module", [e.render() for e in errors],
                       trace=str(trace) if trace else None)
    return Built(html, pages, errors)


def _notes(notes: list[str], index) -> list[str]:
    return [n for n in notes if n.startswith("trace:") or index is None or "trace" not in n]


def _compare(pages: list, modules: list, against: Path, chip: str | None, findings: list) -> None:
    """Each page's A/B section (hloscope.diff) against its module in `against`, paired as
    `hloscope diff` pairs them."""
    from hloscope.cost.resolve import chip_for
    from hloscope.diff import Pair, pair_modules, side
    from hloscope.lint import LintOptions, expand, lint_files
    from hloscope.parser import load

    before = [m for f in expand([against]) for m in load(f)]
    before_findings = lint_files([against], LintOptions(chip=chip)).findings
    matched = {id(b): a for a, b in pair_modules(before, modules)[0]}
    for page, b in zip(pages, modules, strict=True):
        a = matched.get(id(b))
        if a is None:
            page.notes.append(f"no module {page.name} in {against} to compare with")
            continue
        spec, _ = chip_for(b, chip)
        page.compare = dict(Pair(side(a, spec, before_findings), side(b, spec, findings)).to_dict(),
                            against=str(against))
