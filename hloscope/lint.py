"""The lint API: parse files, configure and run the rules, apply baseline, report.

    from hloscope.lint import LintOptions, lint_files
    report = lint_files(["kernel.hlo.txt"], LintOptions(select=["H0"]))
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hloscope.parser.errors import ParseError
from hloscope.paths import LintError, expand  # (the lint API names them too)
from hloscope.report.common import FileError, LintReport
from hloscope.rules.base import Rule, Severity

if TYPE_CHECKING:
    from hloscope.rules.config import Config
# (the engine, registry and selection load when a file is linted: a run answered from the
# cache needs none of them)


@dataclass
class LintOptions:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    chip: str | None = None
    rule_options: dict[str, dict] = field(default_factory=dict)  # by rule name or code
    baseline: Path | None = None
    strict: bool = False
    trace: Path | None = None
    allow_mismatch: bool = False  # --allow-mismatch: lint with a trace of another program
    raise_errors: bool = False  # --debug: a file's failure propagates (with its traceback)
    stage: str | None = None  # --stage: the compile stage to assume (default: detected)
    flags: str | None = None  # --flags: the XLA_FLAGS / LIBTPU_INIT_ARGS it was compiled with


def merge(config: Config, select=None, ignore=None, chip=None) -> LintOptions:
    """Command-line choices override the config file's."""
    return LintOptions(
        select=select or config.select,
        ignore=[*(config.ignore or []), *(ignore or [])],
        chip=chip or config.chip,
        rule_options=config.rules,
    )


def build_rules(opts: LintOptions) -> list[Rule]:
    from hloscope.rules.registry import load_rules
    from hloscope.rules.select import select_rules

    rules = load_rules()
    try:
        chosen = select_rules(rules, opts.select, opts.ignore)
    except ValueError as e:
        raise LintError(str(e)) from None
    by_key = {**{r.name: r for r in rules.values()}, **rules}
    for key in opts.rule_options:
        if key not in by_key:
            raise LintError(f"configuration names unknown rule {key!r}")
    out = []
    for cls in chosen:
        values = {**opts.rule_options.get(cls.code, {}), **opts.rule_options.get(cls.name, {})}
        try:
            out.append(cls(cls.make_options(values)))
        except (TypeError, ValueError) as e:
            raise LintError(str(e)) from None
    return out


# A worker process costs ~0.3 s to start (interpreter, imports); below this much HLO in
# total the serial run is faster than any pool (measured by bench/run.py).
PARALLEL_MIN_BYTES = 16 << 20


def auto_jobs(paths: list[str | Path]) -> int:
    """Processes for `lint -j 0`: one per core for large inputs, else 1."""
    import os

    files = expand(paths)
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            pass
    if len(files) < 2 or total < PARALLEL_MIN_BYTES:
        return 1
    return min(os.cpu_count() or 1, len(files))


@dataclass
class FileResult:
    findings: list
    notes: list[str]
    instructions: int
    suppressed: int
    error: FileError | None = None  # the file could not be linted: why, and where
    modules: list[dict] = field(default_factory=list)  # file, name, stage of each module
    line_count: int = 0  # the file's lines, and the text of those its findings point at:
    excerpts: dict[int, str] = field(default_factory=dict)  # what the text report shows

    def source_lines(self) -> list[str]:
        """The file's lines as the report needs them: those of its findings, the rest
        empty (none for a result that was not linted: an error)."""
        lines = [""] * self.line_count
        for n, text in self.excerpts.items():
            lines[n - 1] = text
        return lines


def _flag_files(path: Path | None) -> list:
    """The flag files beside a module and their times: a changed flag file is a new lint."""
    if path is None:
        return []
    from hloscope.flags import files_beside

    return [(str(f), f.stat().st_mtime_ns) for f in files_beside(path)]


def _options_key(opts: LintOptions, path: Path | None = None) -> str:
    import json

    return json.dumps({"select": opts.select, "ignore": opts.ignore, "chip": opts.chip,
                       "rules": opts.rule_options, "strict": opts.strict, "stage": opts.stage,
                       "flags": opts.flags, "flag_files": _flag_files(path),
                       "chip_beside": _chip_beside(path), "user_chips": _user_chips()},
                      sort_keys=True, default=str)


def _chip_beside(path: Path | None) -> list:
    """What the chip resolution reads beside a file: the record `hloscope compile` wrote and
    the compute capability the dump's name (or a sibling's) states."""
    if path is None:
        return []
    from hloscope.cost.resolve import capability, recorded_chip

    return [recorded_chip(path), capability(path)]


def _user_chips() -> list[str]:
    from hloscope.cost.chips import user_chips

    return [repr(c) for c in user_chips()]


def lint_one(path: Path, opts: LintOptions) -> FileResult:
    """Findings for one file (from the cache when file, options and hloscope are unchanged).
    A file that cannot be linted gives a result holding its error: the run goes on with
    the other files."""
    try:
        return _lint_file(path, opts)
    except LintError:
        raise  # a usage or configuration problem: the whole run's
    except Exception as e:  # noqa: BLE001 - one file must not sink the run
        if opts.raise_errors:
            raise
        return FileResult([], [], 0, 0, FileError.of(str(path), e))


def _named(hit: FileResult, path: Path) -> FileResult:
    """A cached result, named after `path` (the text may have been linted under another)."""
    from dataclasses import replace

    hit.findings = [f if f.file == str(path) else replace(f, file=str(path)) for f in hit.findings]
    hit.modules = [{**m, "file": str(path)} for m in hit.modules]
    return hit


def _lint_file(path: Path, opts: LintOptions) -> FileResult:
    from hloscope import cache
    from hloscope.parser.files import file_digest, read_digest, read_input

    # (one hash, both keys: the findings' and the modules'; hashed as the core reads the
    # file where it can, so that a run the cache answers never reads it into Python)
    digest = file_digest(path) if cache.is_enabled() else None
    k = cache.key(digest, _options_key(opts, path)) if digest and opts.trace is None else ""
    if k and (hit := cache.get("lint", k)) is not None:
        return _named(hit, path)
    # the text decoded from a map of the file where it is plain HLO text (no bytes made),
    # else the bytes, decoded below
    data, text = read_input(path)
    if cache.is_enabled():  # (the keys are of what was read: the file may have changed)
        now = read_digest(path, data, text)
        if now != digest:  # (or the core did not hash it: the plain route)
            digest = now
            k = cache.key(digest, _options_key(opts, path)) if opts.trace is None else ""
            if k and (hit := cache.get("lint", k)) is not None:
                return _named(hit, path)
    from hloscope.parser.load import check_values, decode, load_checked_ahead
    from hloscope.parser.text import Lines
    from hloscope.rules.engine import run

    chip = _chip(opts)
    rules = build_rules(opts)
    if text is None:
        text = decode(data, str(path))
    lines = Lines(text)

    def typed(modules: list) -> None:  # every value typed: what `parse` accepts, no more
        check_values(modules, lines, str(path))

    # (the checks in a second process while the rules run, when it may fork)
    modules, settle = load_checked_ahead(path, data, text, typed, strict=opts.strict,
                                         digest=digest)
    del data  # (the file's bytes: the text and the modules are what is needed now)
    try:
        index, notes = _trace(opts, modules, chip)
        chip = _trace_chip(chip, index, notes)
        result = run(modules, rules, chip=chip, sources={str(path): lines}, trace=index,
                     stage=opts.stage, flags=opts.flags)
    finally:
        settle()  # a file the checks refuse: its located error, not what it led the rules to
    out = FileResult(result.findings, notes + result.notes, result.instructions, result.suppressed,
                     modules=result.modules, line_count=len(lines),
                     excerpts={f.line: lines[f.line - 1] for f in result.findings
                               if 0 < f.line <= len(lines)})
    if k:
        cache.put("lint", k, out)
    return out


def _trace_chip(chip, index, notes: list[str]):
    """The chip asked for, else the one the trace's device planes describe (noted), else
    None (the engine resolves each module's own)."""
    if chip is None and index is not None:
        from hloscope.trace.report import detect_chip

        chip = detect_chip(index.device_kind)
        if chip is not None:
            notes.append(f"chip {chip.name} detected from the trace")
    return chip


def _chip(opts: LintOptions):
    if not opts.chip:
        return None
    from hloscope.cost.chips import get_chip

    try:
        return get_chip(opts.chip)
    except KeyError as e:
        raise LintError(e.args[0]) from None


_PROFILES: dict[tuple, object] = {}  # (path, its files' sizes and times) -> Profile


def profile_of(path: Path):
    """The profile at `path` (hloscope.trace.load_profile), read once per process while its
    files stay as they were: a folder of modules linted with one --trace reads it once, not
    once per module. Treat as read-only. Raises LintError when it cannot be read."""
    from hloscope.trace import TraceError, load_profile

    p = Path(path)
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    try:
        key = (str(p.resolve()), *((str(f), st.st_size, st.st_mtime_ns)
                                   for f, st in ((f, f.stat()) for f in files)))
    except OSError:
        key = None  # (load_profile says what is wrong)
    found = _PROFILES.get(key) if key is not None else None
    if found is None:
        try:
            found = load_profile(p)
        except TraceError as e:
            raise LintError(str(e)) from None
        if key is not None:
            _PROFILES.clear()  # (one profile kept: a run lints against one)
            _PROFILES[key] = found
    return found


def _trace(opts: LintOptions, modules, chip):
    if opts.trace is None:
        return None, []
    from hloscope.trace import TraceMismatch, join, mismatch

    profile = profile_of(opts.trace)
    index = join(profile, modules)
    why = mismatch(profile, index, modules)
    if why is not None and not opts.allow_mismatch:
        raise TraceMismatch(why)
    notes = list(index.warnings)
    matched = sum(s.count for s in index.stats.values())
    notes.append(f"trace: {matched} op events linked to instructions, "
                 f"{sum(u['count'] for u in index.unmatched)} unmatched, {index.steps} step(s)")
    return index, notes


def _checked_rules(opts: LintOptions) -> list | Callable[[], list]:
    """The classes of the rules `opts` selects, after checking the selection and options
    (a LintError); or, when this hloscope already checked the same options (the cache
    says so) and no plug-in may add rules, a function giving them: a run answered from
    the cache then never imports a rule (only SARIF output asks for their classes)."""
    from hloscope import cache
    from hloscope._speed.plugins import may_have_plugins

    k = cache.key("rule selection", _options_key(opts)) if cache.is_enabled() else ""
    if k and not may_have_plugins() and cache.get("selection", k) is not None:
        return lambda: [type(r) for r in build_rules(opts)]
    rules = [type(r) for r in build_rules(opts)]
    if k:
        cache.put("selection", k, [r.code for r in rules])
    return rules


def prepare_worker(cache_enabled: bool) -> None:
    """Set up a process that lints files for another (a pool worker, a Dask task): the
    caller's cache choice, and the collector tuned as the CLI's own process runs."""
    from hloscope import cache
    from hloscope._speed.process import no_helpers, tune_gc

    cache.set_enabled(cache_enabled)
    cache.write_now()  # (a worker never reaches the CLI's after-output step)
    tune_gc()
    no_helpers()  # (its siblings have the other cores: its checks run in it, not beside it)


def lint_files(paths: list[str | Path], opts: LintOptions, jobs: int = 1,
               progress=None, runner=None) -> LintReport:
    """Lint files (directories expanded). With jobs > 1 files are linted in parallel
    processes; with a `runner` (files, opts, progress) -> FileResults in input order, where
    it runs them (hloscope.fleet: a Dask cluster); results are merged in input order, so
    they equal the serial result. A file that cannot be linted is an error entry; the
    others go on."""
    from hloscope import cache

    missing: list[FileError] = []
    expand_notes: list[str] = []
    files = expand(paths, empty=missing, stage=opts.stage, notes=expand_notes)
    rules = _checked_rules(opts)  # validates the selection and options up front
    _chip(opts)
    results: list[FileResult] = []
    if runner is not None:
        results = runner(files, opts, progress)
    elif jobs > 1 and len(files) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from hloscope._speed.process import may_fork

        # fork when this process holds one thread (workers start at once, with hloscope
        # already imported: spawning costs ~0.6 s a worker); else spawn: a caller's threads
        # (JAX's) would be copied mid-flight by fork
        method = "fork" if may_fork() else "spawn"
        with ProcessPoolExecutor(max_workers=min(jobs, len(files)), initializer=prepare_worker,
                                 initargs=(cache.is_enabled(),),
                                 mp_context=multiprocessing.get_context(method)) as pool:
            futures = [pool.submit(lint_one, f, opts) for f in files]
            for n, fut in enumerate(futures, 1):
                results.append(fut.result())
                if progress:
                    progress(n, len(files))
    else:
        for n, f in enumerate(files, 1):
            results.append(lint_one(f, opts))
            if progress:
                progress(n, len(files))
    errors = missing + [r.error for r in results if r.error is not None]
    findings = [f for r in results for f in r.findings]
    findings.sort(key=lambda f: (-f.sort_cost, f.file, f.line, f.column, f.code))
    notes = list(dict.fromkeys([*expand_notes, *(n for r in results for n in r.notes)]))
    baselined = 0
    if opts.baseline is not None:
        from hloscope.rules.baseline import apply_baseline, read_baseline

        try:
            known = read_baseline(opts.baseline)
        except ValueError as e:
            raise LintError(str(e)) from None
        findings, baselined = apply_baseline(findings, known)
    reported = {f.file for f in findings}
    # the lines of each file with findings, for the text format's excerpts: each result,
    # however it was made (here, in a worker, from the cache), carries its findings' lines
    sources = {str(f): r.source_lines() for f, r in zip(files, results) if str(f) in reported}
    return LintReport(
        findings=findings, rules=rules, files=[str(f) for f in files],
        instructions=sum(r.instructions for r in results),
        suppressed=sum(r.suppressed for r in results), baselined=baselined,
        notes=notes, sources=sources, errors=errors,
        modules=[m for r in results for m in r.modules],
    )


def lint_modules(modules: list, opts: LintOptions, trace=None,
                 sources: dict[str, list[str]] | None = None,
                 only: Collection[tuple[str, str]] | None = None) -> LintReport:
    """Lint parsed modules (the API's way in): `trace` a joined TraceIndex, `sources` each
    module path's lines (for inline suppressions and the text format's excerpts); `only`
    the (computation, instruction) pairs whose findings are wanted (rules.engine.run)."""
    from hloscope.rules.engine import run

    rules = build_rules(opts)
    notes: list[str] = []  # (with a trace and no chip asked: the trace's, as lint_files does)
    chip = _trace_chip(_chip(opts), trace, notes)
    result = run(modules, rules, chip=chip, sources=sources, trace=trace, stage=opts.stage,
                 flags=opts.flags, only=only)
    return LintReport(
        findings=result.findings, rules=[type(r) for r in rules],
        files=list(dict.fromkeys(m.path for m in modules)), instructions=result.instructions,
        suppressed=result.suppressed, notes=notes + result.notes, sources=sources or {},
        modules=result.modules)


def exit_code(report: LintReport, fail_on: Severity, exit_zero: bool = False) -> int:
    """2 when a file could not be linted, else 1 when a finding is at or above `fail_on`
    (unless `exit_zero`), else 0."""
    if report.errors:
        return 2
    if exit_zero:
        return 0
    return 1 if any(f.severity >= fail_on for f in report.findings) else 0


__all__ = ["LintError", "LintOptions", "ParseError", "build_rules", "exit_code", "lint_files",
           "lint_modules", "merge"]
