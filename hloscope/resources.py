"""Where the data files hloscope ships live: in the wheel under the package
(`_grammar/`, `_rules/`), else in the repository beside it (`grammar/`, `rules/`)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def grammar_path() -> Path:
    """grammar/hlo.lark, the HLO grammar."""
    for candidate in (_PACKAGE / "_grammar" / "hlo.lark", _PACKAGE.parent / "grammar" / "hlo.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("hlo.lark not found next to the hloscope package")


def rule_docs_dir() -> Path:
    """rules/, one Markdown document per rule (`H001-defensive-copy.md`)."""
    for candidate in (_PACKAGE / "_rules", _PACKAGE.parent / "rules"):
        if candidate.is_dir():
            return candidate
    return _PACKAGE.parent / "rules"
