"""`hloscope lint`: rule findings for HLO files and dump folders."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import (
    ChipFileOpt,
    GpusPerNodeOpt,
    Format,
    NoCacheOpt,
    StrictOpt,
    chip_file,
    debugging,
    fail,
    guard,
    progress_bar,
    split_list,
    take_jobs,
    use_cache,
)


class LintFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


def lint(
    files: Annotated[list[Path], typer.Argument(help="HLO text files, or folders of XLA dumps.")],
    format: Annotated[LintFormat, typer.Option("--format", "-f", help="Output format.")] = LintFormat.text,
    select: Annotated[list[str] | None, typer.Option("--select", help="Rules to run: codes, prefixes (H0), names, ALL. Comma-separated or repeated.")] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Rules to skip, same forms as --select.")] = None,
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="Exit 1 when a finding is at or above: error, warning, info. [default: warning]")] = None,
    chip: Annotated[str | None, typer.Option("--chip", "-c", help=(
        "Target chip (v5e, v5p, v6e, h100, ..., or one from --chip-file): MXU size, HBM capacity, "
        "time estimates (default: the one `hloscope compile` recorded, else what the module "
        "shows, else an assumed one, against which no capacity verdict is given)."))] = None,
    chip_file_path: ChipFileOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
    config: Annotated[Path | None, typer.Option("--config", help="hloscope.toml or pyproject.toml to use (default: nearest one).")] = None,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Ignore findings recorded in this baseline file.")] = None,
    write_baseline: Annotated[Path | None, typer.Option("--write-baseline", help="Record the current findings as the baseline and exit 0.")] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when there are findings.")] = False,
    trace: Annotated[Path | None, typer.Option("--trace", help="A jax.profiler profile: findings gain measured time; trace rules run.")] = None,
    allow_mismatch: Annotated[bool, typer.Option("--allow-mismatch", help="Use a --trace that links fewer than half of a module's ops (by default an error: the trace is of another program).")] = False,
    dask: Annotated[str | None, typer.Option("--dask", help=(
        "Lint on a Dask cluster: --dask alone starts a local one (one worker per core, or -j N), "
        "--dask tcp://host:8786 uses a running scheduler. Needs pip install 'hloscope[fleet]'."))] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel processes for many files (0: one per core when there is enough HLO to repay their start-up, else 1, with a file's checks beside its rules on a second core; 1: one process).")] = 0,
    expand: Annotated[bool, typer.Option("--expand", help="Text format: list every finding of a repeated pattern, not one line per pattern.")] = False,
    source_root: Annotated[Path | None, typer.Option("--source-root", help="Where the profiled program's source files are on this machine (maps the dump's paths).")] = None,
    flags: Annotated[str | None, typer.Option("--flags", help="The XLA_FLAGS / LIBTPU_INIT_ARGS the dump was compiled with ('--name=value ...'), over the flag files beside it (F001).")] = None,
    passes: Annotated[bool, typer.Option("--passes", help=(
        "List each dumped module's pass dumps in the order the passes ran, instead of linting "
        "(hloscope passes DIR --instruction NAME names the pass that made an instruction)."))] = False,
    stage: Annotated[str | None, typer.Option("--stage", help="The compile stage to assume: before_optimizations or after_optimizations (default: from the dump's file name, else from the text).")] = None,
    strict: StrictOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Check HLO files against hloscope's rules and report findings.

    Exit codes: 0 nothing at or above --fail-on, 1 findings, 2 a usage error or a file
    that could not be linted (reported after every other file's findings).

    Examples:

      hloscope lint fixtures/tpu/transformer_v5p.hlo.txt

      hloscope lint --select H001,H002 --fail-on error dump/*.txt

      hloscope lint --format sarif module.hlo.txt > results.sarif

      hloscope lint xla_dump_dir/        (each module's after_optimizations text)

      hloscope lint xla_dump_dir/ --passes   (the pass dumps, in order)
    """
    if passes:
        from hloscope.cli.passes import passes as list_passes

        for f in files:
            list_passes(f, format=Format.json if format == LintFormat.json else Format.text)
        return
    use_cache(no_cache)
    from hloscope.lint import LintError, auto_jobs, exit_code, lint_files, merge
    from hloscope.report import render
    from hloscope.rules.base import Severity
    from hloscope.rules.config import ConfigError, load_config

    try:
        cfg = load_config(config)
        if cfg.chips:
            from hloscope.cost.chips import add_chips

            add_chips(cfg.chips, f"{cfg.source} [chips]")
        chip = chip_file(chip_file_path, chip, gpus_per_node)
        opts = merge(cfg, split_list(select), split_list(ignore), chip)
        threshold = Severity.parse(fail_on or cfg.fail_on)
    except (ConfigError, ValueError) as e:
        fail(f"error: {e}")
    opts.strict = strict
    opts.baseline = baseline
    opts.trace = trace
    opts.allow_mismatch = allow_mismatch
    opts.flags = flags
    opts.raise_errors = debugging()
    if stage is not None:
        from hloscope.stage import STAGES

        if stage not in STAGES:
            fail(f"error: unknown stage {stage!r}; use {' or '.join(STAGES)}")
        opts.stage = stage
    bar = progress_bar()

    def run():
        try:
            if dask is not None:
                from hloscope.fleet import FleetError, dask_runner

                try:
                    return lint_files(files, opts, progress=bar, runner=dask_runner(dask, jobs))
                except FleetError as e:
                    fail(f"error: {e}")
            take_jobs(jobs)
            workers = jobs if jobs > 0 else auto_jobs(files)
            return lint_files(files, opts, jobs=workers, progress=bar)
        except LintError as e:
            fail(f"error: {e}")

    report = guard(run)
    if write_baseline is not None:
        from hloscope.rules.baseline import write_baseline as write

        write(write_baseline, report.findings)
        typer.echo(f"wrote {len(report.findings)} finding(s) to {write_baseline}", err=True)
        raise typer.Exit(0)
    report.expand = expand
    report.source_root = str(source_root) if source_root else None
    sys.stdout.write(render(format.value, report))
    for e in report.errors:  # after everything else, on stderr (JSON/SARIF/github carry them too)
        typer.echo(e.render(), err=True)
    raise typer.Exit(exit_code(report, threshold, exit_zero))


def optional_dask_value(argv: list[str]) -> list[str]:
    """`--dask` alone means a local cluster: give it the value `local` when the next word is
    not a scheduler address (`tcp://host:8786`, `host:8786`) or `local`."""
    import re

    out = []
    for k, word in enumerate(argv):
        out.append(word)
        if word == "--dask":
            nxt = argv[k + 1] if k + 1 < len(argv) else ""
            if nxt != "local" and "://" not in nxt and not re.fullmatch(r"[\w.-]+:\d+", nxt):
                out.append("local")
    return out
