"""What every command shares: option types, the load/cache/error wrapper, exits.

Exit codes: 0 success (lint: nothing at or above --fail-on), 1 findings,
2 usage or input error (printed as FILE:LINE:COL: error: ... and the source line).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

T = TypeVar("T")

_state: dict[str, Any] = {"debug": False, "file": ""}


class Format(str, Enum):
    text = "text"
    json = "json"


FileArg = Annotated[Path, typer.Argument(help=(
    "HLO text (as XLA dumps or prints it): a file, a .gz, - for standard input, or a "
    "directory / --xla_dump_to folder (its modules' after-optimizations texts)."))]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Parse everything through the full grammar now.")
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help=(
        "Do not read or write the on-disk cache of parsed modules and findings."))
]
ModuleOpt = Annotated[str | None, typer.Option("--module", "-m", help=(
    "Of several modules (a dump folder, a file holding more than one): the one of this name "
    "or id (module_0021 or 21)."))]
ChipOpt = Annotated[str, typer.Option("--chip", "-c", help=(
    "Chip from the table: v4, v5e, v5p, v6e, v7x, v100, a100, h100, h200, b200, gb200, mi300x, "
    "mi355x, cpu, or one from --chip-file."))]
AutoChipOpt = Annotated[str | None, typer.Option("--chip", "-c", help=(
    "Chip from the table: v4, v5e, v5p, v6e, v7x, v100, a100, h100, h200, b200, gb200, mi300x, "
    "mi355x, cpu, or one from --chip-file (default: the chip `hloscope compile` recorded in the dump folder, else what "
    "the module shows (a GPU dump's sm_XX, a CPU module), else an assumed one, said so)."))]
GpusPerNodeOpt = Annotated[int | None, typer.Option("--gpus-per-node", min=1, help=(
    "GPUs joined by NVLink / Infinity Fabric (one node, or a GB200 NVL72 rack): collectives "
    "whose groups span more run over the network (default: the chip's, 8 on DGX/HGX)."))]
ChipFileOpt = Annotated[Path | None, typer.Option("--chip-file", help=(
    "TOML file of your own chips, one table each with chips.toml's fields (name, "
    "peak_bf16_flops, peak_f32_flops, hbm_bandwidth, hbm_bytes, ...); --chip names one, or "
    "the file's only chip is used."))]


def set_debug(debug: bool) -> None:
    _state["debug"] = debug


def debugging() -> bool:
    """Whether --debug was given (errors then show their Python traceback)."""
    return bool(_state["debug"])


def note_file(path: Path | str) -> None:
    """The file now being read: named in errors raised later by values parsed on first use."""
    _state["file"] = str(path)


def fail(message: str) -> NoReturn:
    """Exit 2 with the message; or with the located error of a file whose checks were
    still running and fail (settle): what that file led to is not the error to show."""
    settle()
    typer.echo(message, err=True)
    raise typer.Exit(2)


def fail_located(e) -> NoReturn:
    """Exit 2 with a ParseError's located line (--debug: the traceback instead)."""
    if _state["debug"]:
        raise e
    fail(e.render())


def take_jobs(jobs: int) -> None:
    """`-j 1` asks for one process: not even a file's checks beside the command's work
    (hloscope._speed.process.no_helpers)."""
    if jobs == 1:
        from hloscope._speed.process import no_helpers

        no_helpers()


def use_cache(no_cache: bool) -> None:
    from hloscope import cache

    cache.set_enabled(not no_cache)


# Parses expected to take a second or more (~30 MB/s fast, ~3 MB/s strict) say so on a
# terminal while they run.
NOTICE_BYTES = {False: 32 << 20, True: 3 << 20}


@contextmanager
def parsing_notice(path: Path, strict: bool) -> Iterator[None]:
    """`parsing FILE (N MB)...` on stderr while a long parse runs, when it is a terminal."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    shown = size >= NOTICE_BYTES[strict] and sys.stderr.isatty()
    if shown:
        sys.stderr.write(f"parsing {path} ({size / 1e6:.0f} MB{', strict' if strict else ''})...")
        sys.stderr.flush()
    try:
        yield
    finally:
        if shown:
            sys.stderr.write("\r\033[K")  # the line cleared: output follows as usual
            sys.stderr.flush()


def load_file(path: Path, strict: bool = False,
              read: tuple[bytes | None, str] | None = None) -> list:
    """The file's modules, or exit 2 with the located error; `read`: (bytes, text) of
    the file when the caller has read it. In the default mode the checks after the scan
    may still be running beside the command (hloscope.parser.load.load_checked_ahead):
    `settle` waits for them, and `emit` and `guard` call it before they print."""
    from hloscope.parser import ParseError
    from hloscope.parser.load import load_checked_ahead

    settle()  # (a file's checks are done before the next file is read)
    note_file(path)
    try:
        with parsing_notice(path, strict):
            modules, rest = load_checked_ahead(path, read and read[0], read and read[1],
                                               strict=strict)
    except ParseError as e:
        fail_located(e)
    _state["settle"] = (path, rest)
    return modules


class Refused(typer.Exit):
    """Exit 2, raised by settle once it printed a file's located error (a command going
    through several files may catch it and go on with the next)."""


def settle() -> None:
    """Wait for the checks of the file load_file read last, if still running: exit 2
    (Refused) with their located error when they fail."""
    from hloscope.parser import ParseError

    pending = _state.pop("settle", None)
    if pending is None:
        return
    path, rest = pending
    try:
        rest()
    except ParseError as e:
        note_file(path)
        if _state["debug"]:
            raise
        typer.echo(e.render(), err=True)
        raise Refused(2) from None


def load_inputs(path: Path, strict: bool = False, module: str | None = None,
                single: bool = False) -> tuple[list, bool]:
    """The modules one path argument names (a file, `.gz`, `-` for standard input, a
    directory or --xla_dump_to folder: hloscope.paths.expand), `--module` picking among
    them, and whether a file among them was refused: its located error is printed and the
    other files' modules are kept (exit 2 with a usage error, or when none is left)."""
    from hloscope.paths import LintError, expand, pick_modules

    notes: list[str] = []
    try:
        files = expand([path], notes=notes)
    except LintError as e:
        fail(f"error: {e}")
    for line in notes:
        typer.echo(f"note: {line}", err=True)
    modules, refused = [], False
    for k, p in enumerate(files):
        try:
            loaded = load_file(p, strict)
            if k + 1 < len(files):
                settle()  # (its checks before the next file: a refused file's modules go)
        except typer.Exit:  # (its located error is printed: the other files go on)
            refused = True
            continue
        modules += loaded
    if refused and not modules:
        raise typer.Exit(2)
    try:
        return pick_modules(modules, module, str(path), single), refused
    except LintError as e:
        settle()
        fail(f"error: {e}")


def source_bytes(path: str | Path) -> bytes:
    """An input's bytes (standard input's, as read, for `<stdin>`)."""
    from hloscope.parser.files import read

    return read(path)


def analyse(file: Path, no_cache: bool, run: Callable[[list], None], strict: bool = False,
            module: str | None = None, single: bool = False) -> None:
    """The wrapper every one-file command runs in: the cache choice, the modules its path
    names (a file, `.gz`, `-`, a dump folder; `--module` picks), then run(modules) with
    errors turned into exits; a file refused among them is located and the others run,
    exit 2 after."""
    use_cache(no_cache)
    modules, refused = load_inputs(file, strict, module, single)
    guard(run, modules)
    settle()
    if refused:
        raise typer.Exit(2)


def guard(fn: Callable[..., T], *args: Any) -> T:
    """Run fn; a located error exits 2 with one line, anything else too (unless --debug).
    A file whose checks are still running is settled first: its own error comes before
    whatever it led fn to."""
    from hloscope.parser import ParseError

    try:
        return fn(*args)
    except (typer.Exit, KeyboardInterrupt):
        raise
    except ParseError as e:
        settle()
        if not e.path or e.path == "<string>":  # raised by a value parsed on first use
            e.path = _state.get("file", "")
            if e.source_line is None and e.line > 0 and e.path:
                import linecache

                line = linecache.getline(e.path, e.line)
                if line:
                    e.attach_source(line.rstrip("\n"))
        fail_located(e)
    except Exception as e:  # noqa: BLE001 - never a traceback for a user's file
        settle()
        if _state["debug"]:
            raise
        fail(f"error: internal error ({type(e).__name__}: {e}); rerun with --debug for details")


def chip(name: str):
    """A chip from the table, or a usage error naming the known ones."""
    from hloscope.cost.chips import ChipFileError, get_chip

    try:
        return get_chip(name)
    except (KeyError, ChipFileError) as e:
        fail(f"error: {e.args[0]}")


def chip_file(path: Path | None, name: str | None, gpus_per_node: int | None = None) -> str | None:
    """Register --chip-file's chips (and --gpus-per-node); the chip name to use: --chip, else
    the file's only chip."""
    from hloscope.cost.chips import set_link_domain

    set_link_domain(gpus_per_node)  # (None clears an earlier command's, in one process)
    if path is None:
        return name
    from hloscope.cost.chips import ChipFileError, load_chip_file

    try:
        found = load_chip_file(path)
    except ChipFileError as e:
        fail(f"error: {e}")
    if name is None and len(found) == 1:
        return found[0].key
    return name


def chip_choice(module, name: str | None):
    """hloscope.cost.resolve.resolve_chip, a usage error for an unknown chip."""
    from hloscope.cost.chips import ChipFileError
    from hloscope.cost.resolve import resolve_chip

    try:
        return resolve_chip(module, name)
    except (KeyError, ChipFileError) as e:
        fail(f"error: {e.args[0]}")


def emit_json(payload: object) -> None:
    json.dump(payload, sys.stdout, indent=1)
    sys.stdout.write("\n")


def emit_text(text: str) -> None:
    if text:
        typer.echo(text)


def emit(format: Format, payload: Callable[[], object], text: Callable[[], str]) -> None:
    """Print the JSON payload or the text, as --format asks (each built only when asked),
    once the last file's checks have passed."""
    settle()
    if format == Format.json:
        emit_json(payload())
    else:
        emit_text(text())


def split_list(values: list[str] | None) -> list[str] | None:
    """`--select A,B --select C` -> [A, B, C]."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def progress_bar() -> Callable[[int, int], None] | None:
    """A progress callback drawing on stderr when it is a terminal (nothing in CI logs)."""
    if not sys.stderr.isatty():
        return None

    state: dict[str, Any] = {}

    def show(done: int, total: int) -> None:
        if total < 2:
            return
        if "bar" not in state:  # rich, loaded only when a bar is drawn
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            state["bar"] = Progress("linting", BarColumn(), MofNCompleteColumn(), "files",
                                    TimeElapsedColumn(), console=Console(stderr=True), transient=False)
            state["task"] = state["bar"].add_task("lint", total=total)
            state["bar"].start()
        state["bar"].update(state["task"], completed=done)
        if done == total:
            state["bar"].stop()

    return show
