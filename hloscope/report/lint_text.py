"""Human-readable findings, grouped by file, with the HLO line shown. Findings of one
pattern (equal fingerprints: a repeated layer) are one entry with their count and other
places, unless the report asks to expand them."""

from __future__ import annotations

from hloscope.report.common import LintReport

_MAX_LINE = 160


def _excerpt(line: str, column: int) -> tuple[str, int]:
    line = line.rstrip("\n").replace("\t", " ")
    if len(line) <= _MAX_LINE:
        return line, column
    start = max(0, min(column - 20, len(line) - _MAX_LINE))
    cut = line[start : start + _MAX_LINE]
    before = "..." if start else ""
    after = "..." if start + _MAX_LINE < len(line) else ""
    return before + cut + after, column - start + len(before)


def _source(f, root: str | None) -> str:
    """The program's `file:line (function)` and op_name for a finding, as one line."""
    from hloscope.source import Source, map_root

    src = f.source
    if not src:
        return ""
    location = Source(file=map_root(src.get("file", ""), root), line=src.get("line", 0),
                      function=src.get("function", "")).location
    op_name = src.get("op_name", "")
    return f"{location} [{op_name}]" if location and op_name else (location or op_name)


def render(report: LintReport) -> str:
    out: list[str] = [f"{m['file']}: HloModule {m['name']}, {m['stage']} ({m['stage_source']})"
                      for m in report.modules]
    if out:
        out.append("")
    groups: dict[tuple[str, str], list] = {}  # (file, fingerprint) -> its findings, in order
    for f in report.findings:
        groups.setdefault((f.file, f.fingerprint or id(f)), []).append(f)
    by_file: dict[str, list] = {}
    for (path, _), members in groups.items():
        by_file.setdefault(path, []).extend(members if report.expand else [members])
    helped: set[str] = set()
    for path, entries in by_file.items():
        lines = report.sources.get(path, [])
        for entry in entries:
            f, others = (entry[0], entry[1:]) if isinstance(entry, list) else (entry, [])
            times = f" (x {len(others) + 1})" if others else ""
            out.append(f"{f.file}:{f.line}:{f.column}: {f.code} [{f.severity}] {f.name}: {f.message}{times}")
            if 0 < f.line <= len(lines):
                text, col = _excerpt(lines[f.line - 1], f.column)
                gutter = f"{f.line:>6} | "
                out.append(gutter + text)
                out.append(" " * (len(gutter) + col - 1) + "^")
            where = _source(f, report.source_root)
            if where:
                out.append(f"       = source: {where}")
            if others:
                shown = ", ".join(f"{o.line}:{o.column} %{o.instruction}" for o in others[:4])
                more = f" and {len(others) - 4} more" if len(others) > 4 else ""
                out.append(f"       = also at: {shown}{more} (--expand lists each)")
            if f.help and f.code not in helped:  # once per rule: the fix does not vary
                helped.add(f.code)
                out.append(f"       = help: {f.help}")
            out.append("")
    s = report.summary()
    sev = ", ".join(f"{n} {k}" for k, n in sorted(s["by_severity"].items())) or "none"
    grouped = len(groups)
    kinds = f" of {grouped} kind(s)" if grouped != s["findings"] else ""
    tail = (f"{s['findings']} finding(s){kinds} ({sev}) in {s['files']} file(s), "
            f"{s['instructions']} instructions checked")
    extras = [f"{s['suppressed']} suppressed inline" if s["suppressed"] else "",
              f"{s['baselined']} in baseline" if s["baselined"] else ""]
    extras = [e for e in extras if e]
    if report.errors:
        extras.append(f"{len(report.errors)} file(s) could not be linted")
    out.append(tail + (f"; {', '.join(extras)}" if extras else ""))
    out.extend(f"note: {n}" for n in report.notes)
    return "\n".join(out) + "\n"
