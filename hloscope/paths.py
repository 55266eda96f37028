"""The files a command's path arguments name: files as given, and the modules inside
directories and --xla_dump_to folders (shared by every command that takes paths; it
loads no rule, report or parser)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (made only when a folder holds no module: the report types load then)
    from hloscope.report.common import FileError

DUMP_PATTERNS = ("*after_optimizations.txt", "*.hlo.txt", "*.hlo")  # outside --xla_dump_to folders


class LintError(ValueError):
    """A usage or configuration problem (exit code 2)."""


def expand(paths: list[str | Path], pattern: str | None = None,
           empty: list[FileError] | None = None, stage: str | None = None,
           notes: list[str] | None = None) -> list[Path]:
    """Files to lint: files as given; in a directory, each --xla_dump_to folder in it gives
    one file per module, its text at `stage` (default after_optimizations; pass dumps and
    XLA's reports are not modules), and other files are searched recursively for `pattern`
    (default: *.hlo.txt and *.hlo). A folder with none is an error entry in `empty` when
    given (the other inputs go on), else a LintError; a dumped module without that stage's
    text is a line in `notes`."""
    out: list[Path] = []
    for raw in paths:
        if str(raw) == STDIN:
            out.append(Path("<stdin>"))  # (read by hloscope.parser.files.read)
            continue
        p = Path(raw)
        if not p.is_dir():
            out.append(p)
            continue
        from hloscope.dumpdir import is_dump_dir, module_files

        patterns = [pattern] if pattern else list(DUMP_PATTERNS)
        dumps = [] if pattern else [d for d in (p, *sorted(x for x in p.rglob("*") if x.is_dir()))
                                    if is_dump_dir(d)]
        found_set: set[Path] = set()
        for d in dumps:
            files, missing = module_files(d, stage or "after_optimizations")
            found_set.update(files)
            if notes is not None:
                notes.extend(missing)
        inside = set(dumps)
        found_set.update(f for pat in patterns for f in p.rglob(pat)
                         if f.is_file() and "buffer-assignment" not in f.name and f.parent not in inside)
        found = sorted(found_set)
        if not found:
            message = f"no files matching {' or '.join(patterns)}"
            if empty is None:
                raise LintError(f"{p}: {message}")
            from hloscope.report.common import FileError

            empty.append(FileError(str(p), 0, 0, message))
        out.extend(found)
    return out


STDIN = "-"


def module_id(module) -> int | None:
    """The id XLA gave a module, from its file name (module_0021.*; `name.21.hlo.txt`)."""
    from hloscope.dumpdir import program_id

    return program_id(getattr(module, "path", None), module.name)


def pick_modules(modules: list, wanted: str | None, where: str, single: bool = False) -> list:
    """`--module NAME|ID`: the modules of that name or id (module_0021, 21); with `single`, a
    command that shows one module refuses several, saying which there are and how to pick
    (a LintError: exit 2)."""
    if wanted:
        key = wanted.strip()
        digits = key.removeprefix("module_").lstrip("0") or "0"
        chosen = [m for m in modules if m.name == key
                  or (digits.isdigit() and module_id(m) == int(digits))]
        if not chosen:
            raise LintError(f"{where}: no module {wanted!r}; it holds {_listing(modules)}")
        modules = chosen
    if single and len(modules) > 1:
        raise LintError(f"{where}: {len(modules)} modules ({_listing(modules)}); this command shows "
                        "one: --module NAME or ID picks it (or give its own folder or file)")
    return modules


def _listing(modules: list) -> str:
    shown = [f"{m.name}" + (f" (id {module_id(m)})" if module_id(m) is not None else "") for m in modules[:8]]
    return ", ".join(shown) + (f", and {len(modules) - 8} more" if len(modules) > 8 else "")
