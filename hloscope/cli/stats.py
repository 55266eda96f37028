"""`hloscope stats`: opcode, fusion-kind and custom-call counts, memory facts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope import cache
from hloscope.cli.common import (
    FileArg,
    Format,
    FormatOpt,
    NoCacheOpt,
    StrictOpt,
    emit,
    fail,
    fail_located,
    guard,
    load_file,
    note_file,
    parsing_notice,
    settle,
    take_jobs,
    use_cache,
)


def _read(path: Path) -> tuple[bytes | None, str]:
    """The file's bytes (None where its plain text was decoded from a map) and text, or exit
    2 with the located error."""
    from hloscope.parser import ParseError
    from hloscope.parser.files import read_input
    from hloscope.parser.load import decode

    note_file(path)
    try:
        data, text = read_input(path)  # (plain text decoded from a map of the file)
        return data, text if text is not None else decode(data, str(path))
    except ParseError as e:
        fail_located(e)


def _counted_early(path: Path, text: str, every: bool, halves: bool) -> list[dict] | None:
    """Stats counted without parsing the file, or None: from the compiled checks' one pass
    (hloscope.stats.table) where they answer, else, with `halves`, on two cores
    (hloscope.stats.halves)."""
    from hloscope.parser.fast.beside import Beside, count_level

    # the compiled pass starts now, on a thread of its own, and the rest of stats is
    # imported while it runs (the pass holds no interpreter lock)
    beside = Beside(text, count_level(every))
    from hloscope.stats.table import stats_of_text

    with parsing_notice(path, False):
        counted = stats_of_text(text, str(path), every, beside)
        if counted is None and halves:
            from hloscope.stats.halves import stats_in_halves

            counted = stats_in_halves(text, str(path), every)
        return counted


def stats(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False,
          per_computation: Annotated[bool, typer.Option(
              "--per-computation", help="Also list every computation's counts (text format).")] = False,
          no_cache: NoCacheOpt = False,
          jobs: Annotated[int, typer.Option("--jobs", "-j", help=(
              "1: one process. Otherwise a single module of 2 MB or more that the cache does not "
              "hold is counted in two halves on two cores (the same result)."))] = 0) -> None:
    """Count opcodes, fusion kinds and custom-call targets per module and computation.

    Example: hloscope stats fixtures/tpu/transformer_v5p.hlo.txt
    """
    use_cache(no_cache)
    take_jobs(jobs)
    every = per_computation or format == Format.json  # JSON always carries the list
    if file.is_dir():
        _stats_of_folder(file, format, strict, per_computation, every)
        return
    # the counts the cache keeps for this text, else the module counted from the compiled
    # checks' pass where they answer (hloscope.stats.table), else a large one on two cores
    # (hloscope.stats.halves), else parsed; the counts are kept, not the parsed module (a
    # cached module took longer to read back than the file to count)
    from hloscope.parser.files import file_digest, is_stdin, read_digest

    cached = not no_cache and not strict
    digest = file_digest(file) if cached else None
    read = None
    if cached and digest is None and not is_stdin(file):  # (the plain route: hashed once read)
        read = _read(file)
        digest = cache.digest_read(*read)
    k = _key(digest, every)
    hit = cache.get("stats", k) if k else None
    if hit is not None:  # (the same text may have been counted under another name)
        records = [{**r, "path": str(file)} if "path" in r else r for r in hit]
        emit(format, lambda: {"version": 1, "modules": records},
             lambda: _text(records, per_computation))
        return
    if read is None and not strict:
        read = _read(file)
        if k and (now := read_digest(file, *read)) != digest:  # (what was read: it changed)
            k = _key(now, every)
    counted = None if strict else _counted_early(file, read[1], every, jobs != 1)
    modules = load_file(file, strict, read) if counted is None else []

    def run() -> list[dict]:
        if counted:
            from hloscope.stats.counts import ordered

            records = [ordered(r) for r in counted]
        else:
            from hloscope.stats import stats as module_stats

            records = [module_stats(m, every).to_dict() for m in modules]
        emit(format, lambda: {"version": 1, "modules": records},
             lambda: _text(records, per_computation))
        return records

    records = guard(run)
    if k:  # (printed: the checks passed)
        cache.put("stats", k, records)


def _key(digest: bytes | None, every: bool) -> str:
    """The cache key of a text's counts ("" for standard input: no digest)."""
    return cache.key(digest, f"stats every={every}") if digest else ""


def _text(records: list[dict], per_computation: bool) -> str:
    from hloscope.report.stats import stats_text

    return stats_text(records, per_computation)


def _stats_of_folder(folder: Path, format: Format, strict: bool, per_computation: bool,
                     every: bool) -> None:
    """Every module of a folder (an --xla_dump_to folder: each module's after_optimizations
    text); a file that fails is reported where it is and the others are counted."""
    from hloscope.paths import LintError, expand
    from hloscope.report.stats import stats_text
    from hloscope.stats import stats as module_stats

    try:
        files = expand([folder])
    except LintError as e:
        fail(f"error: {e}")
    records, failed = [], False
    for f in files:
        try:
            modules = load_file(f, strict)
            found = guard(lambda ms=modules, f=f: [dict(module_stats(m, every).to_dict(), file=str(f))
                                                   for m in ms])
            settle()  # (the file's checks ran beside it)
        except typer.Exit:  # its error is printed; the other files go on
            failed = True
            continue
        records.extend(found)
    emit(format, lambda: {"version": 1, "modules": records}, lambda: stats_text(records, per_computation))
    if failed:
        raise typer.Exit(2)
