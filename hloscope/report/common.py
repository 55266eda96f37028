"""What every format needs: the run's findings plus its context."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from hloscope.rules.base import Finding, Rule


@dataclass(frozen=True)
class FileError:
    """A file that could not be linted: where and why (located when the input is at fault)."""

    file: str
    line: int
    column: int
    message: str
    source_line: str | None = None

    @classmethod
    def of(cls, path: str, err: BaseException) -> FileError:
        """From a ParseError (located), or any other failure (an internal error of hloscope
        on this file, not located)."""
        from hloscope.parser.errors import ParseError

        if isinstance(err, ParseError):
            where = err.path if err.path not in ("", "<string>") else path
            source = err.source_line
            if source is None and err.line > 0:
                import linecache

                source = linecache.getline(where, err.line).rstrip("\n") or None
            return cls(where, err.line, err.column, err.message, source)
        if getattr(err, "is_input_error", False):  # the input's fault, said plainly
            return cls(path, 0, 0, str(err))
        return cls(path, 0, 0, f"internal error ({type(err).__name__}: {err}); rerun with --debug")

    def render(self) -> str:
        """`FILE:LINE:COL: error: message`, the source line and a caret under the column."""
        from hloscope.parser.errors import ParseError

        return ParseError(self.message, self.file, self.line, self.column, self.source_line).render()

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column, "message": self.message}


@dataclass
class LintReport:
    findings: list[Finding]
    # the rules that ran, for SARIF's tool.driver.rules (or a function giving them, called
    # on first use: a run answered from the cache loads no rule): see rule_classes
    rules: list[type[Rule]] | Callable[[], list[type[Rule]]]
    files: list[str]
    instructions: int = 0
    suppressed: int = 0
    baselined: int = 0
    notes: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    errors: list[FileError] = field(default_factory=list)  # files that could not be linted
    modules: list[dict] = field(default_factory=list)  # file, name, compile stage of each module
    expand: bool = False  # text output: each finding of a group on its own (--expand)
    source_root: str | None = None  # --source-root: where the program's files are here

    def __iter__(self):
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __getitem__(self, k):
        return self.findings[k]

    def __repr__(self) -> str:
        by = ", ".join(f"{n} {c}" for c, n in sorted(Counter(f.code for f in self.findings).items()))
        return (f"<LintReport: {len(self.findings)} finding(s){' (' + by + ')' if by else ''} in "
                f"{len(self.files)} file(s), {self.instructions} instructions checked>")

    def _repr_html_(self) -> str:
        from hloscope.units import html_table

        rows = [[f.code, str(f.severity), f"{f.line}:{f.column}", f.instruction, f.message]
                for f in self.findings[:50]]
        return html_table(repr(self)[1:-1], ["code", "severity", "line", "instruction", "message"],
                          rows, max(len(self.findings) - 50, 0))

    def rule_classes(self) -> list[type[Rule]]:
        if callable(self.rules):
            self.rules = self.rules()
        return self.rules

    def to_dict(self) -> dict:
        """The JSON output of `hloscope lint`."""
        return {"version": 1, "modules": self.modules,
                "findings": [f.to_dict() for f in self.findings],
                "errors": [e.to_dict() for e in self.errors], "summary": self.summary()}

    def summary(self) -> dict:
        return {
            "files": len(self.files),
            "instructions": self.instructions,
            "findings": len(self.findings),
            "by_severity": dict(Counter(str(f.severity) for f in self.findings)),
            "by_code": dict(sorted(Counter(f.code for f in self.findings).items())),
            "groups": len({(f.file, f.fingerprint) for f in self.findings}),
            "suppressed": self.suppressed,
            "baselined": self.baselined,
            "errors": len(self.errors),
            "notes": self.notes,
        }
