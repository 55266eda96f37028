"""Mutation testing with mutmut, package by package (#39): how many plausible one-line bugs
the tests catch, and which survive.

For each package, a scratch copy of the repository is made (the working tree as committed:
`git worktree`-free, a plain `git clone` of HEAD), mutmut is configured there to mutate only
that package's files and to run the package's own tests, and its results are written to
bench/mutation/<package>.md: the score (killed / all mutants that ran), and every survivor
with its diff, so each can be judged (a missing test, or an equivalent mutant).

    python3 bench/mutation.py --list
    python3 bench/mutation.py diff stage          # some packages
    python3 bench/mutation.py --all               # every package (slow: an hour or more)
    python3 bench/mutation.py --keep cost_model   # keep the scratch copy, then after new tests:
    python3 bench/mutation.py --again cost_model  # only its survivors, against the tests as they are

Needs mutmut >= 3.4 (`pip install mutmut`; 3.3 reads a pytest attribute pytest 9 removed),
and a Python where hloscope is not installed editable in front of the copy: the copy's
package must be the one the tests import (an editable install's path entry comes after the
copy's, so that holds for this repository's own `pip install -e .`). Tests that run hloscope
in a subprocess import the installed package, not the mutant: they can only under-count kills.
Not run in CI (slow).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "mutation"

# package -> (source paths, the tests that exercise it)
PACKAGES: dict[str, tuple[list[str], list[str]]] = {
    "diff": (["hloscope/diff.py"], ["tests/test_diff.py", "tests/test_diff_parts.py",
                                    "tests/test_guards.py"]),
    "stage": (["hloscope/stage.py"], ["tests/test_stage_parts.py", "tests/test_guards.py",
                                      "tests/test_lint_engine.py",
                                      "tests/test_dumpdir.py", "tests/test_numbers.py"]),
    "dumpdir": (["hloscope/dumpdir.py"], ["tests/test_dumpdir.py", "tests/test_dumpdir_parts.py",
                                          "tests/test_guards.py",
                                          "tests/test_paths_in.py"]),
    "cache": (["hloscope/cache.py"], ["tests/test_cache_parts.py", "tests/test_cache_parallel.py",
                                      "tests/test_guards.py"]),
    "sharding": (["hloscope/sharding/"], ["tests/test_sharding.py", "tests/test_step.py",
                                          "tests/test_step_parts.py", "tests/test_mesh_parts.py",
                                          "tests/test_links_parts.py", "tests/test_collectives_parts.py",
                                          "tests/test_links.py", "tests/test_tpu_profile.py",
                                          "tests/test_gpu_capture.py", "tests/test_guards.py",
                                          "tests/test_collective_records.py", "tests/test_bounds_parts.py",
                                          "tests/test_step_loop.py", "tests/test_op_floor.py",
                                          "tests/test_scatter_parts.py", "tests/test_chains_parts.py",
                                          "tests/test_step_more_parts.py"]),
    "report": (["hloscope/report/"], ["tests/test_cli.py", "tests/test_findings.py",
                                      "tests/test_diff.py", "tests/test_diff_parts.py",
                                      "tests/test_guards.py", "tests/test_lint_engine.py",
                                      "tests/test_sarif_strict.py", "tests/test_lint_text.py",
                                      "tests/test_roofline_text.py", "tests/test_report_parts.py",
                                      "tests/test_memory.py",
                                      "tests/test_sharding.py", "tests/test_step.py",
                                      "tests/test_tpu_profile.py", "tests/test_trace.py",
                                      "tests/test_kernel.py", "tests/test_breakdown.py",
                                      "tests/test_xprof_tables.py", "tests/test_gpu_capture.py",
                                      "tests/test_memory_text.py", "tests/test_sharding_text.py",
                                      "tests/test_kernels_text.py"]),
    "cost": (["hloscope/cost/"], ["tests/test_cost.py", "tests/test_memory.py",
                                  "tests/test_precision.py", "tests/test_step.py",
                                  "tests/test_numbers.py", "tests/test_gpu_cost.py",
                                  "tests/test_breakdown.py", "tests/test_chip.py",
                                  "tests/test_trace.py", "tests/test_xprof_tables.py",
                                  "tests/test_diff_parts.py", "tests/test_step_parts.py",
                                  "tests/test_cost_parts.py", "tests/test_sharing_parts.py",
                                  "tests/test_guards.py", "tests/test_category_parts.py",
                                  "tests/test_op_floor.py", "tests/test_step_loop.py",
                                  "tests/test_chips_parts.py"]),
    "rules": (["hloscope/rules/"], ["tests/test_rules.py", "tests/test_gpu_rules.py",
                                    "tests/test_findings.py", "tests/test_lint_engine.py",
                                    "tests/test_rule_docs.py", "tests/test_guards.py",
                                    "tests/test_advice.py", "tests/test_trace.py",
                                    "tests/test_tpu_profile.py", "tests/test_gpu_capture.py",
                                    "tests/test_config_parts.py", "tests/test_trace_rules_parts.py",
                                    "tests/test_split_dot_parts.py", "tests/test_duplicates_parts.py"]),
    # the lint formats of report/ (its profile and roofline texts run captures: slow)
    "report_lint": (["hloscope/report/lint_text.py", "hloscope/report/lint_json.py",
                     "hloscope/report/sarif.py", "hloscope/report/github.py"],
                    ["tests/test_lint_text.py", "tests/test_sarif_strict.py", "tests/test_findings.py",
                     "tests/test_lint_engine.py", "tests/test_guards.py", "tests/test_report_parts.py",
                     "tests/test_lint_formats_parts.py", "tests/test_lint_text_layout.py"]),
    # the rules' configuration and baseline files (the rules package's next survivor groups)
    "rules_config": (["hloscope/rules/config.py", "hloscope/rules/baseline.py"],
                     ["tests/test_config_parts.py", "tests/test_lint_engine.py"]),
    # the trace rules alone (T001-T007: the rules package's largest survivor group), with
    # their part tests. test_rules.py's fixture sweep and test_trace.py also run them, but
    # at a few mutants a minute, and test_trace.py's captures run jax in mutmut's forked
    # children, where it hangs (every such mutant a timeout): left out, so the score is a floor
    "rules_trace": ([f"hloscope/rules/{f}" for f in (
        "t001_roofline_gap.py", "t002_pipeline_bubbles.py", "t003_exposed_communication.py",
        "t004_hot_copy.py", "t005_kernel_dma_bound.py", "t006_kernel_low_mxu.py",
        "t007_kernel_roofline_gap.py")],
        ["tests/test_trace_rules_parts.py",
         "tests/test_h100_advice.py"]),  # (T004's loop-slice advice, on the H100's captures)
    # H014 partial-tile-update and H002's pointer to it; H006 and what it leaves alone
    "rules_tiles": (["hloscope/rules/h014_partial_tile_update.py", "hloscope/rules/h002_retiling_copy.py"],
                    ["tests/test_rules.py", "tests/test_rule_docs.py", "tests/test_rules_lenient_parts.py",
                     "tests/test_tiles_parts.py"]),
    "rules_duplicates": (["hloscope/rules/h006_duplicate_computation.py"],
                         ["tests/test_rules.py", "tests/test_rule_docs.py", "tests/test_duplicates_parts.py", "tests/test_rules_lenient_parts.py"]),
    "rules_split_dot": (["hloscope/rules/h004_split_dot.py"],
                        ["tests/test_rules.py", "tests/test_findings.py", "tests/test_lint_engine.py",
                         "tests/test_split_dot_parts.py", "tests/test_rules_lenient_parts.py"]),
    # the rest of rules/, so that the selections together cover the package file by file
    # (the whole package in one run takes its heaviest tests, test_trace.py's captures and
    # the CLI's, into every mutant: some 3.5 hours here)
    "rules_graph": ([f"hloscope/rules/{f}" for f in (
        "h001_defensive_copy.py", "h003_padding_waste.py", "h005_mxu_misaligned.py",
        "h007_large_all_gather.py", "h008_exposed_collective.py", "h009_layout_coercion.py",
        "h010_f32_matmul.py", "h011_huge_intermediate.py", "h012_hbm_peak.py",
        "h013_loop_overhead.py", "f001_async_collective_flags.py", "g001_triton_tile_waste.py")],
        ["tests/test_rules.py", "tests/test_gpu_rules.py", "tests/test_rule_docs.py",
         "tests/test_findings.py", "tests/test_precision.py", "tests/test_flags.py", "tests/test_rules_lenient_parts.py", "tests/test_rules_graph_parts.py",
         "tests/test_h100_capture.py"]),  # (H010 on cuBLAS gemms, H011 on the H100)
    "rules_kernels": ([f"hloscope/rules/{f}" for f in (
        "k001_output_ref_accumulator.py", "k002_block_misaligned.py", "k003_vmem_over_budget.py",
        "k004_vreg_spill_risk.py", "k005_short_pipeline.py", "k006_no_parallel_axis.py",
        "x001_unknown_opcode.py", "x002_kernel_not_decoded.py")],
        ["tests/test_kernel_rules_parts.py", "tests/test_rules.py", "tests/test_rule_docs.py",
         "tests/test_kernels_text.py", "tests/test_findings.py", "tests/test_rules_lenient_parts.py"]),
    "rules_core": ([f"hloscope/rules/{f}" for f in (
        "base.py", "helpers.py", "engine.py", "registry.py", "select.py", "__init__.py")],
        ["tests/test_rules.py", "tests/test_lint_engine.py", "tests/test_findings.py",
         "tests/test_config_parts.py", "tests/test_rule_docs.py", "tests/test_rules_lenient_parts.py", "tests/test_rules_core_parts.py"]),
    # the rest of cost/ and report/, for the same reason (their whole runs take test_trace.py's
    # captures and the step model's sweeps into every mutant)
    "cost_model": ([f"hloscope/cost/{f}" for f in (
        "__init__.py", "aggregate.py", "category.py", "chips.py", "flops.py", "fused.py", "layout.py",
        "library.py", "memory.py", "ops.py", "precision.py", "roofline.py", "trips.py",
        "xla_memory.py")],
        ["tests/test_cost.py", "tests/test_numbers.py", "tests/test_gpu_cost.py",
         "tests/test_cost_parts.py", "tests/test_category_parts.py", "tests/test_chips_parts.py",
         "tests/test_op_floor.py", "tests/test_step_loop.py", "tests/test_memory.py",
         "tests/test_precision.py", "tests/test_memory_text.py", "tests/test_h100_capture.py",
         "tests/test_h100_advice.py", "tests/test_cost_small_parts.py", "tests/test_precision_parts.py",
         # the op-name breakdown (aggregate.py) and the reports' notebook views
         "tests/test_breakdown.py", "tests/test_api_objects.py",
         "tests/test_trips_parts.py", "tests/test_library_parts.py", "tests/test_xla_memory_parts.py",
         "tests/test_roofline_parts.py", "tests/test_breakdown_parts.py", "tests/test_compute_parts.py"]),
    "report_views": ([f"hloscope/report/{f}" for f in (
        "__init__.py", "common.py", "diff.py", "kernels.py", "memory.py", "parse.py", "profile.py",
        "roofline.py", "shape.py", "sharding.py", "stats.py")],
        ["tests/test_roofline_text.py", "tests/test_memory_text.py", "tests/test_report_parts.py",
         "tests/test_sharding_text.py", "tests/test_kernels_text.py", "tests/test_cli.py",
         "tests/test_diff_parts.py", "tests/test_lint_text.py", "tests/test_profile_text.py",
         "tests/test_tpu_profile.py", "tests/test_gpu_capture.py", "tests/test_roofline_text_parts.py",
         "tests/test_memory_text_parts.py", "tests/test_kernels_text_parts.py",
         "tests/test_diff_text_parts.py", "tests/test_sharding_text_parts.py",
         "tests/test_report_small_parts.py", "tests/test_profile_text_parts.py",
         "tests/test_xprof_tables.py"]),
    # where temporaries go in the outputs' buffers, and which chip a module is costed on
    "cost_placement": (["hloscope/cost/placement.py", "hloscope/cost/resolve.py"],
                       ["tests/test_memory.py", "tests/test_chip.py", "tests/test_sharing_parts.py",
                        "tests/test_gpu_cost.py", "tests/test_placement_parts.py",
                        "tests/test_chips_parts.py", "tests/test_h100_capture.py"]),
    "cost_liveness": (["hloscope/cost/liveness.py", "hloscope/cost/walk.py", "hloscope/cost/sharing.py"],
                      ["tests/test_memory.py", "tests/test_sharing_parts.py", "tests/test_memory_text.py",
                       "tests/test_gpu_cost.py", "tests/test_liveness_parts.py", "tests/test_h100_capture.py",
                       "tests/test_placement_parts.py",  # (sharing.first_fit's part test)
                       "tests/test_sharing_small_parts.py"]),
    # checks of a file changed after its package's selection last ran, with that file's own
    # part tests (later in this table than the selection that covers the file, so --summary
    # keeps counting that one): the chip-file reader (cost_model's run takes four hours here)
    # and H013 (rules_graph's, an hour and a half)
    "check_chips": (["hloscope/cost/chips.py"], ["tests/test_chips_parts.py", "tests/test_chip.py"]),
    "check_h013": (["hloscope/rules/h013_loop_overhead.py"], ["tests/test_rules_graph_parts.py"]),
    "check_h008": (["hloscope/rules/h008_exposed_collective.py"],
                   ["tests/test_rules_graph_parts.py", "tests/test_guards.py", "tests/test_collective_records.py"]),
}
# the check that bench/mutants.py's seeds still apply reads hloscope's source text, which
# mutmut's copy has rewritten (trampolines): it fails there whatever the mutant
_PYTEST_ARGS = ["-p", "no:cacheprovider", "--deselect",
                "tests/test_numbers.py::test_every_seeded_bug_of_bench_mutants_still_applies"]
_COPY = ["fixtures", "grammar", "rules", "bench", "examples", "README.md", "ARCHITECTURE.md",
         ".ci"]


# selections whose tests compile with jax: mutmut's default forks each mutant's child from the
# process that ran the suite, whose jax threads the child inherits, and a compile in the child
# then deadlocks on a futex that no CPU-time limit ends. These fork from a server that has
# only collected the tests (imported them, run none), so each child starts jax afresh. (Not
# every selection: a child forked from the process that ran the suite inherits its warm
# caches, the grammar's tables and compiled patterns; from the server each child builds them,
# which made rules_core some 4x slower.)
_FORKSERVER = {"cost_model"}


def _config(sources: list[str], tests: list[str], repo: Path, forkserver: bool = False) -> str:
    """[tool.mutmut]: the whole package is copied (its imports must resolve in the copy), and
    every file outside `sources` is excluded from mutation."""
    wanted = [s.rstrip("/") for s in sources]
    keep = [str(p.relative_to(repo)) for p in (repo / "hloscope").rglob("*.py")
            if not any(str(p.relative_to(repo)) == w or str(p.relative_to(repo)).startswith(w + "/")
                       for w in wanted)]
    return ("\n[tool.mutmut]\nsource_paths = [\"hloscope/\"]\n"
            f"do_not_mutate = {json.dumps(sorted(keep))}\n"
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
            f"pytest_add_cli_args = {json.dumps(_PYTEST_ARGS)}\n"
            f"also_copy = {json.dumps(_COPY)}\n"
            # a mutant runs only the tests that reach it, so a module-scoped fixture (a
            # capture read once per test file) lands on whichever test comes first: with
            # mutmut's default 1 s in its CPU limit, 30 (t + 1) s, such tests time out
            "timeout_constant = 10.0\n"
            + ('process_isolation = "forkserver"\nforkserver_warmup = "collect"\n' if forkserver else ""))


# mutmut runs each mutant's tests in a child forked from one process, and hloscope's source
# files (whose sizes and times salt its on-disk cache) hold every mutant at once: a lint the
# clean run cached would answer for the mutant, which then survives whatever the test asserts.
# So in the scratch copy every test gets a cache folder of its own.
#
# And mutmut runs, for each mutant, only the tests its first pass saw calling the mutated
# function: a module-scoped fixture's work is seen in the one test that set it up, so the
# module's other tests, which assert on that work, never run against the mutant (a mutant the
# suite kills is reported as surviving). In the scratch copy every fixture a test file defines
# is function-scoped (the conftest's own keep their scope).
_FRESH_CACHE = """

@pytest.fixture(autouse=True)
def _mutation_fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "hloscope-cache"))


_mutation_fixture = pytest.fixture


def _function_scoped_fixture(*args, **kwargs):
    kwargs.pop("scope", None)
    return _mutation_fixture(*args, **kwargs)


pytest.fixture = _function_scoped_fixture
"""


def _results(repo: Path, mutmut: list[str]) -> dict[str, str]:
    out = subprocess.run([*mutmut, "results", "--all", "true"], cwd=repo, capture_output=True,
                         text=True).stdout
    status = {}
    for line in out.splitlines():
        name, _, state = line.strip().rpartition(": ")
        if name:
            status[name] = state.strip()
    return status


def run(package: str, mutmut: list[str], keep: bool = False) -> dict:
    sources, tests = PACKAGES[package]
    work = Path(tempfile.mkdtemp(prefix=f"mutation-{package}-"))
    repo = work / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    shared = ROOT.parent / "shared"
    if shared.exists():  # (tests read ../shared/corpus beside the repository: mutmut runs
        # them from its copy, repo/mutants, so beside that too)
        (work / "shared").symlink_to(shared)
        (repo / "shared").symlink_to(shared)
    with open(repo / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write(_config(sources, tests, repo, package in _FORKSERVER))
    with open(repo / "tests" / "conftest.py", "a", encoding="utf-8") as f:
        f.write(_FRESH_CACHE)
    t0 = time.time()
    done = subprocess.run([*mutmut, "run", "--max-children", "2"], cwd=repo, capture_output=True,
                          text=True)
    record = _record(package, repo, mutmut, done, time.time() - t0,
                     **({"kept": str(work)} if keep else {}))  # (for --again)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return record


def again(package: str, mutmut: list[str], only: list[str] = (), minutes: float | None = None) -> dict:
    """A kept run's survivors run again against the working tree's tests and sources as they
    are now (the tests written from those survivors), in the kept copy: every other mutant's
    result stands but a changed function's, mutmut collects the new tests' coverage and runs
    only the survivors and the changed functions' mutants (those matching `only`'s patterns,
    when given). Cheaper than a whole run where most mutants were killed before. Stopped
    after `minutes`, the mutants it reached count and the others keep their earlier result."""
    previous = json.loads((OUT / f"{package}.json").read_text())
    work = Path(previous.get("kept") or _newest_kept(package))
    repo = work / "repo"
    if not (repo / "mutants").is_dir():
        raise SystemExit(f"{package}: no kept copy (run it with --keep first)")
    sources, tests = PACKAGES[package]
    # survivors, mutants no test reached (the tests as they are now may reach them), and
    # those an earlier run stopped before (a changed function's, not yet run)
    survivors = sorted(n for n, s in _results(repo, mutmut).items()
                       if s in ("survived", "no tests", "not checked"))
    # the sources as they are now: mutmut makes the mutants of a changed file again and
    # forgets the verdicts of the functions whose code changed; all of those run again
    changed = _changed_functions(repo, ROOT, sources)
    survivors += [f"{name}__mutmut_*" for name in changed]
    _refresh(repo)
    with open(repo / "tests" / "conftest.py", "a", encoding="utf-8") as f:
        f.write(_FRESH_CACHE)
    pyproject = (repo / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = re.sub(r"(?m)^pytest_add_cli_args_test_selection = .*$",
                       lambda _: f"pytest_add_cli_args_test_selection = {json.dumps(tests)}", pyproject)
    (repo / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if only:
        survivors = [n for n in survivors if any(fnmatch.fnmatch(n, p) for p in only)]
    # a changed test selection makes mutmut reset every verdict; the others stand (a mutant
    # the old tests killed, the new ones, a superset, kill too): kept and put back after,
    # but for the changed functions' (other mutants now)
    before = {path: {k: v for k, v in codes.items() if not any(k.startswith(f"{c}__mutmut_") for c in changed)}
              for path, codes in _verdicts(repo).items()}
    t0 = time.time()
    # (with no names mutmut runs every mutant without a verdict: after a reset, all of them)
    done = (_bounded([*mutmut, "run", "--max-children", "2", *survivors], repo, minutes) if survivors
            else subprocess.CompletedProcess([], 0, "(nothing to run again)", ""))
    _restore(repo, before)
    return _record(package, repo, mutmut, done, previous["seconds"] + time.time() - t0, kept=str(work),
                   again={"survivors_before": len(survivors), "seconds": round(time.time() - t0)})


def _functions(path: Path) -> dict[str, str]:
    """mutmut's name of each function and method of a file (`x_name`, `xǁClassǁname`) -> its code."""
    import ast

    out = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[f"x_{node.name}"] = ast.dump(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"x\u01c1{node.name}\u01c1{item.name}"] = ast.dump(item)
    return out


def _changed_functions(old_root: Path, new_root: Path, sources: list[str]) -> list[str]:
    """The qualified mutmut names (`hloscope.cost.ops.xǁCostModelǁ_compute`) of the functions
    of `sources` whose code differs between two trees, or that only the new one has.
    (A change outside any function, a constant, is not seen: mutmut forgets nothing for it
    either.)"""
    out = []
    for src in sources:
        where = new_root / src
        for new in sorted(where.rglob("*.py") if where.is_dir() else [where]):
            rel = new.relative_to(new_root)
            old = old_root / rel
            before = _functions(old) if old.exists() else {}
            module = ".".join(rel.with_suffix("").parts)
            out += [f"{module}.{name}" for name, code in _functions(new).items() if before.get(name) != code]
    return out


def _refresh(repo: Path) -> None:
    """The kept copy's package, tests and data brought up to the working tree's."""
    for name in ("hloscope", "tests", *_COPY):
        src = ROOT / name
        if not src.exists():
            continue
        dst = repo / name
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        else:
            shutil.copy2(src, dst)


def _newest_kept(package: str) -> str:
    """The newest kept copy of a package's run (one kept before runs recorded where)."""
    kept = sorted(Path(tempfile.gettempdir()).glob(f"mutation-{package}-*/repo/mutants"),
                  key=lambda p: p.stat().st_mtime)
    return str(kept[-1].parents[1]) if kept else ""


def _verdicts(repo: Path) -> dict[str, dict]:
    """Each mutmut meta file's verdicts (exit code per mutant)."""
    return {str(p): dict(json.loads(p.read_text()).get("exit_code_by_key", {}))
            for p in (repo / "mutants").rglob("*.meta")}


def _restore(repo: Path, before: dict[str, dict]) -> None:
    """Put back the verdicts mutmut reset of mutants it did not run again (not asked, or not
    reached before --minutes ran out)."""
    for path, codes in before.items():
        meta = json.loads(Path(path).read_text())
        now = meta.get("exit_code_by_key", {})
        for key, code in codes.items():
            if now.get(key) is None:
                now[key] = code
        meta["exit_code_by_key"] = now
        Path(path).write_text(json.dumps(meta))


def _bounded(command: list[str], cwd: Path, minutes: float | None) -> subprocess.CompletedProcess:
    """The command's run, stopped (its whole process group) after `minutes`."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=minutes * 60 if minutes else None)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\n(stopped after {minutes} minutes)"
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _record(package: str, repo: Path, mutmut: list[str], done, seconds: float, **extra) -> dict:
    """The run's record (`extra`: fields beside the counts), written with its survivors."""
    sources, tests = PACKAGES[package]
    status = _results(repo, mutmut)
    killed = sum(1 for s in status.values() if s == "killed")
    survived = sorted(n for n, s in status.items() if s == "survived")
    other = {s: sum(1 for v in status.values() if v == s) for s in sorted(set(status.values()))}
    ran = killed + len(survived)
    record = {"package": package, "sources": sources, "tests": tests, "mutants": len(status),
              "killed": killed, "survived": len(survived), "states": other,
              "score": killed / ran if ran else None, "seconds": round(seconds),
              "exit": done.returncode, "tail": done.stdout[-400:] + done.stderr[-400:]}
    diffs = _diffs(repo, mutmut, survived)
    wording = sorted(n for n in survived if is_wording(diffs.get(n, "")))
    record["wording_only"] = len(wording)
    record["score_without_wording"] = killed / (ran - len(wording)) if ran - len(wording) else None
    judged = judgements()
    same = sorted(n for n in survived if judged.get(n, ("",))[0] == "equivalent" and n not in wording)
    record["equivalent"] = len(same)
    rest = ran - len(wording) - len(same)  # (without the rewordings too, as --summary counts)
    record["score_without_equivalent"] = killed / rest if rest else None
    record.update(extra)
    _write(record, diffs, set(wording), {n: f"{judged[n][0].capitalize()}: {judged[n][1]}"
                                         for n in survived if n in judged and n not in wording})
    return record


EQUIVALENT = OUT / "equivalent.toml"


def judgements() -> dict[str, tuple[str, str]]:
    """Every judged survivor: name -> (kind, reason), from bench/mutation/equivalent.toml:
    [[group]] kind = "...", reason = "...", mutants = ["module.function__mutmut_N", ...].
    kind is "equivalent" (the default: no input tells the mutant from the code), "accepted"
    (a change of behaviour judged not worth a test, the reason says why) or "by hand" (killed
    by the test the reason names, which mutmut does not run for it: its per-function test
    selection misses a call made in a subprocess). A mutant's number changes with its
    function's code: a judgement names the code it was made on, and one whose mutant
    changed no longer applies."""
    import tomllib

    if not EQUIVALENT.exists():
        return {}
    data = tomllib.loads(EQUIVALENT.read_text(encoding="utf-8"))
    out = {}
    for g in data.get("group", []):
        kind = g.get("kind", "equivalent")
        if kind not in ("equivalent", "accepted", "by hand"):
            raise ValueError(f"{EQUIVALENT}: unknown kind {kind!r}")
        for name in g.get("mutants", []):
            out[name] = (kind, g["reason"])
    return out


_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
out = {}
for name in json.load(sys.stdin):
    try:
        out[name] = get_diff_for_mutant(name)
    except Exception as e:  # (a mutant mutmut cannot show: say so in its place)
        out[name] = f"(no diff: {e})"
print(json.dumps(out))
"""


def _diffs(repo: Path, mutmut: list[str], names: list[str]) -> dict[str, str]:
    """Each survivor's diff, in one process of mutmut's own Python (`mutmut show` per
    mutant costs a second each)."""
    python = Path(shutil.which(mutmut[0]) or mutmut[0]).parent / "python"
    done = subprocess.run([str(python if python.exists() else sys.executable), "-c", _DIFFS],
                          cwd=repo, input=json.dumps(names), capture_output=True, text=True)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {n: f"(no diff: {done.stderr.strip()[-200:]})" for n in names}


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')


_FIELDS = re.compile(r"\{[^{}]*\}")


def is_wording(diff: str) -> bool:
    """Whether a mutant only rewords prose: its removed and added lines are the same once
    string literals are blanked, and every literal it changes holds a space (a sentence of a
    message or help text; a key, opcode or name has none, and changing one is behaviour)."""
    old = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    new = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    if not old or len(old) != len(new):
        return False
    for a, b in zip(old, new):
        if _STRING.sub('""', a) != _STRING.sub('""', b):
            return False
        pairs = [(x, y) for x, y in zip(_STRING.findall(a), _STRING.findall(b)) if x != y]
        if not pairs or not all(" " in x.strip("\"'") for x, _ in pairs):
            return False
        if any(_FIELDS.findall(x) != _FIELDS.findall(y) for x, y in pairs):
            return False  # (an f-string's expression changed: behaviour)
    return True


def _write(record: dict, diffs: dict[str, str], wording: set[str] = frozenset(),
           judged: dict[str, str] | None = None) -> None:
    judged = judged or {}
    OUT.mkdir(exist_ok=True)
    score = f"{record['score']:.1%}" if record["score"] is not None else "-"
    behaviour = record.get("score_without_wording")
    lines = [f"# Mutation score: {record['package']}", "",
             f"Sources: {', '.join(record['sources'])}; tests: {', '.join(record['tests'])}.", "",
             f"{record['mutants']} mutants: {record['killed']} killed, {record['survived']} survived "
             f"(score {score}); states {record['states']}; {record['seconds']} s "
             f"(`python3 bench/mutation.py {record['package']}`).", "",
             f"Of the survivors, {len(wording)} only reword a message or help sentence (a changed string "
             "literal with a space in it, nothing else): accepted, as wording is not behaviour. Without "
             f"them the score is {behaviour:.1%}." if behaviour is not None else "", "",
             (f"{len(judged)} more are judged (bench/mutation/equivalent.toml, each with its kind and "
              f"reason, below); without the {record['equivalent']} judged equivalent too the score is "
              f"{record['score_without_equivalent']:.1%}." if judged else ""), "",
             "## Survivors that change behaviour", ""]
    for name, text in diffs.items():
        if name in wording or name in judged:
            continue
        body = re.sub(r"\n{3,}", "\n\n", text.strip())
        lines += [f"### {name}", "", "```diff", body, "```", ""]
    if judged:
        lines += ["## Survivors judged", ""]
        for name in sorted(judged):
            body = re.sub(r"\n{3,}", "\n\n", diffs.get(name, "").strip())
            lines += [f"### {name}", "", judged[name], "", "```diff", body, "```", ""]
    lines += ["## Survivors that only reword", "", ", ".join(f"`{n}`" for n in sorted(wording)) or "(none)", ""]
    (OUT / f"{record['package']}.md").write_text("\n".join(lines), encoding="utf-8")
    (OUT / f"{record['package']}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def _behaviour_survivors(name: str) -> set[str]:
    """A selection's survivors that are not rewordings (those its report lists with a diff)."""
    path = OUT / f"{name}.md"
    if not path.exists():
        return set()
    text = path.read_text(encoding="utf-8").split("## Survivors that only reword")[0]
    return set(re.findall(r"(?m)^### (\S+)$", text))


def summary() -> list[dict]:
    """Each package's score from the selections recorded in bench/mutation/: a package whose
    whole run is too slow here is scored over selections that cover it file by file (each
    mutant counted once, in the selection that names its file; every file of the package
    must be in one, else the package is listed with the files missing)."""
    rows = []
    for package in ("rules", "cost", "report", "sharding", "diff", "stage", "dumpdir", "cache"):
        path = {"diff": "hloscope/diff.py", "stage": "hloscope/stage.py", "dumpdir": "hloscope/dumpdir.py",
                "cache": "hloscope/cache.py"}.get(package, f"hloscope/{package}/")
        files = ([path] if path.endswith(".py")
                 else sorted(str(p.relative_to(ROOT)) for p in (ROOT / path).rglob("*.py")))
        covered: dict[str, str] = {}
        for name, (sources, _) in PACKAGES.items():
            record = OUT / f"{name}.json"
            if not record.exists():
                continue
            for f in files:
                if f in covered:
                    continue
                if any(f == s.rstrip("/") or (s.endswith("/") and f.startswith(s)) for s in sources):
                    covered[f] = name
        used = sorted(set(covered.values()))
        killed = ran = wording = 0
        kinds: Counter = Counter()
        judged = judgements()
        for name in used:
            r = json.loads((OUT / f"{name}.json").read_text())
            killed += r["killed"]
            ran += r["killed"] + r["survived"]
            wording += r.get("wording_only") or 0
            for n in _behaviour_survivors(name):
                kinds[judged[n][0] if n in judged else "unjudged"] += 1
        same = kinds["equivalent"]
        rows.append({"package": package, "selections": used, "killed": killed, "ran": ran,
                     "score": killed / ran if ran else None,
                     "score_without_wording": killed / (ran - wording) if ran - wording else None,
                     "equivalent": same, "accepted": kinds["accepted"], "by_hand": kinds["by hand"],
                     "unjudged": kinds["unjudged"],
                     "score_without_equivalent": killed / (ran - wording - same) if ran - wording - same else None,
                     "missing": [f for f in files if f not in covered]})
    return rows


def _unfit(mutmut: list[str]) -> str | None:
    """Why mutmut cannot run here, or None: it is missing, or its Python's pytest is 9 or later
    (mutmut 3.8 reads an attribute pytest 9 removed, and every mutant is then "not checked")."""
    found = shutil.which(mutmut[0])
    if found is None:
        return f"no {mutmut[0]} command (pip install mutmut==3.8.1, or --mutmut PATH)"
    python = Path(found).parent / "python"
    done = subprocess.run([str(python if python.exists() else sys.executable), "-c",
                           "import pytest; print(pytest.__version__)"], capture_output=True, text=True)
    major = done.stdout.strip().split(".")[0]
    if major.isdigit() and int(major) >= 9:
        return (f"{mutmut[0]}'s Python has pytest {done.stdout.strip()}; mutmut 3.8 needs pytest < 9: "
                "python3 -m venv --system-site-packages v && v/bin/pip install 'pytest<9' mutmut==3.8.1, "
                "then --mutmut v/bin/mutmut")
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("packages", nargs="*")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--summary", action="store_true",
                    help="each package's score from the recorded selections (no run)")
    ap.add_argument("--mutmut", default="mutmut", help="the mutmut command (default: mutmut)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy (for --again)")
    ap.add_argument("--again", action="store_true",
                    help="run a kept copy's survivors again against the tests as they are now")
    ap.add_argument("--only", action="append", default=[],
                    help="with --again: only survivors matching this pattern (fnmatch; repeatable)")
    ap.add_argument("--minutes", type=float, help="with --again: stop after this long")
    ns = ap.parse_args(argv)
    if ns.list:
        for name, (sources, tests) in PACKAGES.items():
            print(f"{name:10} {' '.join(sources):28} {' '.join(tests)}")
        return 0
    if ns.summary:
        print("| package | selections | killed / ran | score | without rewordings "
              "| and without equivalents (judged) | accepted / killed by hand / unjudged | files not covered |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in summary():
            pct = (lambda v: f"{v:.1%}" if v is not None else "-")
            print(f"| {r['package']} | {', '.join(r['selections'])} | {r['killed']} / {r['ran']} | "
                  f"{pct(r['score'])} | {pct(r['score_without_wording'])} | "
                  f"{pct(r['score_without_equivalent'])} ({r['equivalent']}) | "
                  f"{r['accepted']} / {r['by_hand']} / {r['unjudged']} | "
                  f"{len(r['missing'])}{': ' + ', '.join(r['missing'][:6]) if r['missing'] else ''} |")
        return 0
    names = list(PACKAGES) if ns.all else ns.packages
    unknown = [n for n in names if n not in PACKAGES]
    if not names or unknown:
        ap.error(f"name packages from --list (unknown: {unknown})" if unknown else "name packages or --all")
    if why := _unfit(ns.mutmut.split()):
        print(f"error: {why}", file=sys.stderr)
        return 2
    for name in names:
        r = (again(name, ns.mutmut.split(), ns.only, ns.minutes) if ns.again
             else run(name, ns.mutmut.split(), ns.keep))
        score = f"{r['score']:.1%}" if r["score"] is not None else "-"
        behaviour = r.get("score_without_wording")
        print(f"{name:10} {r['mutants']:5} mutants  {r['killed']:5} killed  {r['survived']:5} survived  "
              f"score {score}, {behaviour:.1%} without {r['wording_only']} rewordings  ({r['seconds']} s)"
              if behaviour is not None else f"score {score}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
