"""Seed small bugs into hloscope and check that the tests catch each one.

Each mutant is one textual change to one file (a plausible slip in a number's derivation);
the script copies the repository to a temporary directory, applies the mutant there and runs
the tests that cover that code. A mutant is killed when a test fails, and survives when all
pass. Every mutant must die: a survivor names a number no test checks.

    python bench/mutants.py              # all mutants (a few minutes)
    python bench/mutants.py --only iota-inverse-permutation --keep
    python bench/mutants.py --list
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SELF_CHECK = "tests/test_numbers.py::test_every_seeded_bug_of_bench_mutants_still_applies"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    original: str
    mutated: str
    tests: tuple[str, ...]  # pytest node ids or files that should catch it


MUTANTS = [
    # the places #39 found unguarded: a reviewer's plausible one-line bugs outside the numbers
    Mutant("diff-delta-sign", "hloscope/diff.py",
           '"delta": b.totals[k] - a.totals[k],', '"delta": a.totals[k] - b.totals[k],',
           ("tests/test_guards.py", "tests/test_diff.py",)),
    Mutant("diff-gate-at-threshold", "hloscope/diff.py",
           "return (b - a) > self.threshold\n", "return (b - a) >= self.threshold\n",
           ("tests/test_diff.py",)),
    Mutant("sarif-levels-swapped", "hloscope/report/sarif.py",
           '_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}',
           '_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "note", Severity.INFO: "warning"}',
           ("tests/test_guards.py", "tests/test_findings.py", "tests/test_lint_engine.py", "tests/test_cli.py")),
    Mutant("suppress-by-name-ignored", "hloscope/rules/engine.py",
           'return finding.code in codes or finding.name in codes or "ALL" in codes',
           'return finding.code in codes or "ALL" in codes',
           ("tests/test_guards.py", "tests/test_lint_engine.py", "tests/test_findings.py")),
    Mutant("fingerprint-keeps-layer-numbers", "hloscope/source.py",
           'return _NUMBER.sub("#", self.op_name)', "return self.op_name",
           ("tests/test_guards.py", "tests/test_findings.py", "tests/test_lint_engine.py")),
    Mutant("pass-dump-as-optimized", "hloscope/stage.py",
           'return Stage(BEFORE, "file name: pass dump", pass_name=m.group(2))',
           'return Stage(AFTER, "file name: pass dump", pass_name=m.group(2))',
           ("tests/test_guards.py", "tests/test_dumpdir.py", "tests/test_lint_engine.py")),
    Mutant("trip-count-constant-on-the-left", "hloscope/cost/trips.py",
           'k, bound, direction = _element(cond, b), _constant(cond, a), _FLIP.get(direction, "")',
           'k, bound, direction = _element(cond, b), _constant(cond, a), direction',
           ("tests/test_guards.py", "tests/test_numbers.py", "tests/test_cost.py")),
    Mutant("exposed-communication-once-per-loop", "hloscope/sharding/step.py",
           "out.exposed_seconds += (seconds - hidden) * times", "out.exposed_seconds += seconds - hidden",
           ("tests/test_guards.py", "tests/test_step.py",)),
    Mutant("h008-start-without-done-overlapped", "hloscope/rules/h008_exposed_collective.py",
           "if c.is_async and c.done is not None and c.overlap_instructions > 0:",
           "if c.is_async and (c.done is None or c.overlap_instructions > 0):",
           ("tests/test_guards.py", "tests/test_rules_graph_parts.py")),
    Mutant("attribute-error-column", "hloscope/parser/errors.py",
           "self.column = m.end() + self.value_column if self.value_column else m.start(1) + 1",
           "self.column = m.end() + self.value_column if self.value_column else m.start(1)",
           ("tests/test_guards.py", "tests/test_errors.py",)),
    Mutant("padded-size-inner-tiles", "hloscope/cost/layout.py",
           "padded_elems = prod(_tiled_shape(dims, tiles))", "padded_elems = prod(_tiled_shape(dims, tiles[:1]))",
           ("tests/test_numbers.py", "tests/test_cost.py")),
    # the semantics wave 1 had: an inner level tiles the previous tile, not the tiled shape
    # (bf16 vectors twice their size, s8/pred ones four times)
    Mutant("inner-tile-over-the-tile", "hloscope/cost/layout.py",
           "padded_elems = prod(_tiled_shape(dims, tiles))",
           "padded_elems = prod(padded) * prod(prod(_tile([d if d != COMBINE_DIM else 1 for d in a], b)) "
           "for a, b in zip(tiles, tiles[1:])) // max(1, prod(prod(d for d in a if d != COMBINE_DIM) "
           "for a in tiles[:-1]))",
           ("tests/test_numbers.py",)),
    Mutant("layout-key-ignores-tiles", "hloscope/rules/helpers.py",
           "return (order, layout.tiles, layout.element_size_bits)",
           "return (order, (), layout.element_size_bits)",
           ("tests/test_rules.py", "tests/test_numbers.py")),
    Mutant("iota-inverse-permutation", "hloscope/ir/values.py",
           "    pdims = [dims[p] for p in perm]\n    pstrides = [strides[p] for p in perm]",
           "    pdims = [dims[perm.index(i)] for i in range(len(perm))]\n"
           "    pstrides = [strides[perm.index(i)] for i in range(len(perm))]",
           ("tests/test_numbers.py", "tests/test_syntax.py", "tests/test_sharding.py")),
    Mutant("convolution-low-padding", "hloscope/cost/flops.py",
           "lo = pick(window.pad if window else (), (0, 0))[0]", "lo = 0",
           ("tests/test_numbers.py", "tests/test_cost.py")),
    Mutant("grouped-convolution-features", "hloscope/cost/flops.py",
           'in_feat = rhs.dims[rhs_l.index("i")]', 'in_feat = lhs.dims[lhs_l.index("f")]',
           ("tests/test_numbers.py", "tests/test_cost.py")),
    Mutant("k001-scalar-prefetch-offset", "hloscope/mlir/summary.py",
           "output_args = {id_ for id_ in range(len(grid) + n_prefetch + n_in,\n"
           "                                        len(grid) + n_prefetch + n_in + n_out)}",
           "output_args = {id_ for id_ in range(len(grid) + n_in,\n"
           "                                        len(grid) + n_in + n_out)}",
           ("tests/test_rules.py", "tests/test_kernel.py", "tests/test_numbers.py")),
    Mutant("trace-module-filter", "hloscope/trace/join.py",
           "instr = names[label].get(ev.hlo_op) if label is not None else None",
           "instr = next((n[ev.hlo_op] for n in names.values() if ev.hlo_op in n), None)",
           ("tests/test_trace.py", "tests/test_numbers.py", "tests/test_gpu_capture.py")),
    Mutant("trace-overlap-double-count", "hloscope/trace/join.py",
           "busy = union_length(intervals)", "busy = sum(b - a for a, b in intervals)",
           ("tests/test_trace.py", "tests/test_numbers.py")),
    Mutant("trace-busiest-device", "hloscope/trace/join.py",
           "if prev is None or busy > prev[1]:", "if prev is None or busy < prev[1]:",
           ("tests/test_trace.py", "tests/test_numbers.py")),
    Mutant("trip-count-inclusive-bound", "hloscope/cost/trips.py",
           'span = bound - init + (1 if direction == "LE" else 0)', "span = bound - init",
           ("tests/test_numbers.py",)),
    Mutant("implicit-group-size", "hloscope/sharding/groups.py",
           "return big.dims[d] // small.dims[d]", "return big.dims[d]",
           ("tests/test_numbers.py", "tests/test_sharding.py")),
    Mutant("ring-fraction", "hloscope/sharding/sizes.py",
           "frac = (n - 1) / n", "frac = 1.0",
           ("tests/test_step.py", "tests/test_sharding.py")),
    Mutant("overlap-not-capped", "hloscope/sharding/step.py",
           "hidden = min(seconds, overlap)", "hidden = overlap",
           ("tests/test_step.py",)),
    # the classes the XLA-oracle tests of the fourteenth stop found (tests/test_compute_parts.py)
    Mutant("combined-all-reduce-first-operand", "hloscope/cost/ops.py",
           "else max(1, len(shapes))\n", "else 1\n",
           ("tests/test_compute_parts.py",)),
    Mutant("scatter-reads-whole-operands", "hloscope/cost/ops.py",
           "reads, written = [shapes[n], *updates, *updates], list(updates)",
           "reads, written = shapes[1:], [shapes[-1]]",
           ("tests/test_compute_parts.py",)),
]


def _copy_repo(dest: Path) -> Path:
    repo = dest / "repo"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".ruff_cache"))
    shared = ROOT.parent / "shared"
    if shared.is_dir():  # the tests read the corpus next to the repository
        (dest / "shared").symlink_to(shared)
    return repo


def run(mutant: Mutant, timeout: float) -> tuple[str, float, str]:
    """('killed' | 'survived' | 'not applied', seconds, the failing tests or why)."""
    source = (ROOT / mutant.file).read_text(encoding="utf-8")
    if source.count(mutant.original) != 1:
        return "not applied", 0.0, f"{mutant.file}: the original text occurs {source.count(mutant.original)} times"
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        repo = _copy_repo(Path(tmp))
        (repo / mutant.file).write_text(source.replace(mutant.original, mutant.mutated), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"}
        t0 = time.time()
        try:
            # (the test that the mutants still apply would fail on any mutated copy: not a kill)
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                   "--deselect", SELF_CHECK, *mutant.tests], cwd=repo, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "killed", time.time() - t0, "timed out"
        seconds = time.time() - t0
        failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        if proc.returncode == 0:
            return "survived", seconds, ""
        if proc.returncode in (4, 5):  # usage error, no tests collected: nothing was tested
            return "not tested", seconds, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        return "killed", seconds, "; ".join(failed[:2]) or proc.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", help="mutant name (repeatable)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--timeout", type=float, default=900)
    ns = ap.parse_args(argv)
    if ns.list:
        for m in MUTANTS:
            print(f"{m.name:32} {m.file}")
        return 0
    chosen = [m for m in MUTANTS if not ns.only or m.name in ns.only]
    unknown = set(ns.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        ap.error(f"unknown mutant(s): {', '.join(sorted(unknown))}")
    killed = 0
    for m in chosen:
        verdict, seconds, detail = run(m, ns.timeout)
        killed += verdict == "killed"
        print(f"{m.name:32} {verdict:11} {seconds:6.1f} s  {detail}", flush=True)
    print(f"\n{killed}/{len(chosen)} mutants killed")
    return 0 if killed == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
