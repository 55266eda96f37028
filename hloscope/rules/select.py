"""Rule selection like ruff: codes, code prefixes (H1, H), names, or ALL."""

from __future__ import annotations

from collections.abc import Iterable

from hloscope.rules.base import Rule


def _matches(rule: type[Rule], selector: str) -> bool:
    s = selector.strip()
    return s.upper() == "ALL" or rule.code.startswith(s.upper()) or rule.name == s.lower()


def select_rules(rules: dict[str, type[Rule]], select: Iterable[str] | None,
                 ignore: Iterable[str] | None) -> list[type[Rule]]:
    """Rules matched by `select` (default: all) and not by `ignore`. An unknown
    selector is an error: a typo must not silently select nothing."""
    select = [s for s in (select or ["ALL"]) if s.strip()]
    ignore = [s for s in (ignore or []) if s.strip()]
    for s in [*select, *ignore]:
        if not any(_matches(r, s) for r in rules.values()):
            raise ValueError(f"no rule matches {s!r}; see `hloscope rules`")
    chosen = [r for r in rules.values() if any(_matches(r, s) for s in select)]
    return [r for r in chosen if not any(_matches(r, s) for s in ignore)]
