"""Human-readable findings, grouped by file, with the HLO line shown."""

from __future__ import annotations

from hloscope.report.common import LintReport

_MAX_LINE = 160


def _excerpt(line: str, column: int) -> tuple[str, int]:
    line = line.rstrip("\n").replace("\t", " ")
    if len(line) <= _MAX_LINE:
        return line, column
    start = max(0, min(column - 20, len(line) - _MAX_LINE))
    return ("..." if start else "") + line[start : start + _MAX_LINE] + "...", column - start + (3 if start else 0)


def render(report: LintReport) -> str:
    out: list[str] = [f"{m['file']}: HloModule {m['name']}, {m['stage']} ({m['stage_source']})"
                      for m in report.modules]
    if out:
        out.append("")
    by_file: dict[str, list] = {}
    for f in report.findings:
        by_file.setdefault(f.file, []).append(f)
    helped: set[str] = set()
    for path, findings in by_file.items():
        lines = report.sources.get(path, [])
        for f in findings:
            out.append(f"{f.file}:{f.line}:{f.column}: {f.code} [{f.severity}] {f.name}: {f.message}")
            if 0 < f.line <= len(lines):
                text, col = _excerpt(lines[f.line - 1], f.column)
                gutter = f"{f.line:>6} | "
                out.append(gutter + text)
                out.append(" " * (len(gutter) + col - 1) + "^")
            if f.help and f.code not in helped:  # once per rule: the fix does not vary
                helped.add(f.code)
                out.append(f"       = help: {f.help}")
            out.append("")
    s = report.summary()
    sev = ", ".join(f"{n} {k}" for k, n in sorted(s["by_severity"].items())) or "none"
    tail = f"{s['findings']} finding(s) ({sev}) in {s['files']} file(s), {s['instructions']} instructions checked"
    extras = [f"{s['suppressed']} suppressed inline" if s["suppressed"] else "",
              f"{s['baselined']} in baseline" if s["baselined"] else ""]
    extras = [e for e in extras if e]
    if report.errors:
        extras.append(f"{len(report.errors)} file(s) could not be linted")
    out.append(tail + (f"; {', '.join(extras)}" if extras else ""))
    out.extend(f"note: {n}" for n in report.notes)
    return "\n".join(out) + "\n"
