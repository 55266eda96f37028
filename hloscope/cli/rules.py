"""`hloscope rules` and `hloscope rule CODE`: the rule list and one rule's document."""

from __future__ import annotations

from typing import Annotated

import typer

from hloscope.cli.common import Format, FormatOpt, emit_json, emit_text, fail


def list_rules(format: FormatOpt = Format.text) -> None:
    """List the available rules (code, name, default severity, summary)."""
    from hloscope.rules.registry import load_rules

    rules = load_rules()
    if format == Format.json:
        emit_json({"version": 1, "rules": [
            {"code": r.code, "name": r.name, "severity": str(r.severity), "summary": r.summary}
            for r in rules.values()]})
        return
    emit_text("\n".join(f"{r.code}  {r.name:24} {str(r.severity):8} {r.summary}" for r in rules.values()))


def show_rule(code: Annotated[str, typer.Argument(help="A rule code (H001) or name (defensive-copy).")]) -> None:
    """Print a rule's documentation: what it finds, why it costs, how to fix it."""
    from hloscope.rules.registry import load_rules

    for r in load_rules().values():
        if code.upper() == r.code or code.lower() == r.name:
            emit_text(r.doc().rstrip("\n"))
            return
    fail(f"error: no rule {code!r}; see `hloscope rules`")
