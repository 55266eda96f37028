"""Guards for the plausible one-line bugs #39 found no test would catch (bench/mutants.py
seeds each one; every test here fails when its bug is put back), each against an oracle of
its own: XLA's cost analysis, the SARIF spec's level names, a hand-worked column or count."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, manifest
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.lint import LintOptions, lint_files
from hloscope.parser import ParseError, load, parse

runner = CliRunner()


def test_a_diff_delta_is_b_minus_a_as_xla_counts_them():
    """B - A, signed: XLA's own FLOP counts of the two compiles say which way."""
    m = manifest()
    a, b = m["mlp_cpu"], m["transformer_cpu"]
    out = json.loads(runner.invoke(app, ["diff", str(FIXTURES / a["file"]), str(FIXTURES / b["file"]),
                                         "--format", "json"]).stdout)
    flops = out["pairs"][0]["totals"]["flops"]
    xla = b["cost_analysis"]["flops"] - a["cost_analysis"]["flops"]
    assert xla < 0 and flops["delta"] < 0
    assert flops["delta"] == pytest.approx(flops["b"] - flops["a"])


def test_sarif_levels_are_the_specs_names_for_each_severity():
    """SARIF 2.1.0 §3.27.10: a warning is "warning", information is "note"."""
    warning = FIXTURES / "rules" / "H001" / "scan_carry_cpu.hlo.txt"
    info = FIXTURES / "rules" / "G001" / "tile_overhang_gpu.hlo.txt"
    for path, severity, level in ((warning, "warning", "warning"), (info, "info", "note")):
        report = lint_files([path], LintOptions())
        assert {str(f.severity) for f in report.findings} == {severity}
        sarif = json.loads(runner.invoke(app, ["lint", "--format", "sarif", str(path)]).stdout)
        assert {r["level"] for r in sarif["runs"][0]["results"]} == {level}


def test_an_inline_suppression_by_rule_name_suppresses(tmp_path):
    case = FIXTURES / "rules" / "H001" / "scan_carry_cpu.hlo.txt"
    (finding,) = lint_files([case], LintOptions(select=["H001"])).findings
    lines = case.read_text().splitlines()
    lines[finding.line - 1] += "  // hloscope: ignore[defensive-copy]"
    quiet = tmp_path / "suppressed.hlo.txt"
    quiet.write_text("\n".join(lines) + "\n")
    report = lint_files([quiet], LintOptions(select=["H001"]))
    assert report.findings == [] and report.suppressed == 1


def test_an_op_names_layer_numbers_do_not_tell_findings_apart():
    """Without a source line, the op_name is the pattern: layer_3 and layer_7 are one."""
    from hloscope.source import Source

    three = Source(op_name="jit(f)/layer_3/attention/dot_general")
    seven = Source(op_name="jit(f)/layer_7/attention/dot_general")
    other = Source(op_name="jit(f)/layer_7/mlp/dot_general")
    assert three.pattern() == seven.pattern() != other.pattern()


def test_a_pass_dump_is_not_the_optimized_module():
    """XLA's pass dumps (NNNN.<pipeline>.after_<pass>.before_<next>) are midway: not
    after_optimizations, whatever the word after_ in their names."""
    from hloscope.stage import AFTER, stage_from_name

    dumps = sorted((FIXTURES / "dumps" / "passes_cpu").glob("*.after_*.before_*.txt"))
    assert dumps
    assert all(stage_from_name(str(p)).name != AFTER for p in dumps)
    assert stage_from_name(str(next((FIXTURES / "dumps" / "passes_cpu").glob("*cpu_after_optimizations.txt")))).name == AFTER


# HAND-WRITTEN minimal module: a loop whose condition has its constant on the left,
# 10 > i, i from 0 by 1: Python's len(range(0, 10, 1)) = 10 iterations.
_LEFT_CONSTANT = """HloModule m
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[]) tuple(next, x)
}
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ten = s32[] constant(10)
  ROOT gt = pred[] compare(ten, i), direction=GT
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[] parameter(0)
  init = (s32[], f32[]) tuple(zero, x)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
}
"""


def test_a_loop_condition_with_its_constant_on_the_left():
    from hloscope.cost.trips import trip_count_from_condition

    from jaxlib import _hlo

    _hlo.hlo_module_from_text(_LEFT_CONSTANT)  # (XLA takes it)
    (m,) = parse(_LEFT_CONSTANT, "left.hlo")
    loop = m.entry.root
    assert trip_count_from_condition(m, m.entry, loop) == len(range(0, 10, 1))


def test_exposed_communication_in_a_loop_body_counts_every_iteration():
    """A scan over layers gathers its weights in the loop body: each iteration's exposed
    time counts, trip-count times."""
    import hloscope

    program = hloscope.load(FIXTURES / "zoo" / "transformer_sharded_scan_train_v5p8.hlo.txt")
    step = program.step_time("v5p")
    looped = [c for c in step.collectives if c.times > 1 and c.exposed_seconds > 0]
    assert looped, "the fixture's loop body holds exposed collectives"
    assert step.exposed_seconds == pytest.approx(sum(c.exposed_seconds * c.times for c in step.collectives))
    assert step.exposed_seconds > sum(c.exposed_seconds for c in step.collectives)


def test_an_unknown_attribute_error_points_at_its_key():
    line = "  ROOT c = f32[] add(a, a), foo_bar=1"
    text = f"HloModule m\nENTRY e {{\n  a = f32[] parameter(0)\n{line}\n}}\n"
    with pytest.raises(ParseError) as e:
        parse(text, "x.hlo", strict=True)
    assert (e.value.line, e.value.column) == (4, line.index("foo_bar") + 1)


def test_every_guarded_bug_is_seeded_in_bench_mutants():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("bench_mutants_guards", FIXTURES.parent / "bench" / "mutants.py")
    mutants = importlib.util.module_from_spec(spec)
    sys.modules["bench_mutants_guards"] = mutants
    spec.loader.exec_module(mutants)
    names = {m.name for m in mutants.MUTANTS}
    assert {"diff-delta-sign", "sarif-levels-swapped", "suppress-by-name-ignored",
            "fingerprint-keeps-layer-numbers", "pass-dump-as-optimized",
            "trip-count-constant-on-the-left", "exposed-communication-once-per-loop",
            "attribute-error-column", "diff-gate-at-threshold", "h008-start-without-done-overlapped"} <= names
    guarded = names & {"diff-delta-sign", "sarif-levels-swapped", "suppress-by-name-ignored",
                       "fingerprint-keeps-layer-numbers", "pass-dump-as-optimized",
                       "trip-count-constant-on-the-left", "exposed-communication-once-per-loop",
                       "attribute-error-column", "h008-start-without-done-overlapped"}
    assert all("tests/test_guards.py" in m.tests for m in mutants.MUTANTS if m.name in guarded)


def test_a_relayout_costs_what_the_tpu_compiler_estimated_for_it():
    """H002's seconds are XLA's own estimated_cycles for the copy at the chip's clock (the
    number is in the copy's backend_config), not a bandwidth guess."""
    import re

    from hloscope.cost.chips import get_chip

    case = next(p for p in sorted((FIXTURES / "rules" / "H002").glob("*.hlo.txt"))
                if p.with_suffix("").with_suffix(".expected").read_text().strip())
    (f,) = lint_files([case], LintOptions(select=["H002"], chip="v5e")).findings
    line = case.read_text().splitlines()[f.line - 1]
    cycles = int(re.search(r'"estimated_cycles":"?(\d+)', line).group(1))
    assert f.cost["est_seconds"] == pytest.approx(cycles / get_chip("v5e").clock_hz)


def test_an_async_start_without_its_done_is_not_taken_as_overlapped():
    """HAND-WRITTEN minimal module: an all-reduce-start of 4 MiB whose done is not in its
    computation. Nothing is seen to overlap it (the step estimate counts it exposed), so H008
    reports it, saying why; the same start with its done right after it is reported as
    back to back, and with a dot between them it is not reported."""
    from conftest import make_rule

    from hloscope.cost.chips import get_chip
    from hloscope.rules.base import RuleContext

    def h008(tail: str):
        (m,) = parse(f"""HloModule m, num_partitions=4

sum {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY e {{
  p = f32[1024,1024]{{1,0}} parameter(0)
  s = f32[1024,1024]{{1,0}} all-reduce-start(p), channel_id=1, replica_groups={{{{0,1,2,3}}}}, to_apply=sum
{tail}
}}
""", "m.after_optimizations.txt")
        return list(make_rule("H008").check_module(RuleContext(m, get_chip("v5p"))))

    (alone,) = h008("  ROOT w = f32[1024,1024]{1,0} dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    assert "has no done in %e: nothing is seen to overlap it" in alone.message
    (back,) = h008("  ROOT d = f32[1024,1024]{1,0} all-reduce-done(s)")
    assert "has nothing scheduled between it and %d" in back.message
    assert h008("  w = f32[1024,1024]{1,0} dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                "  d = f32[1024,1024]{1,0} all-reduce-done(s)\n"
                "  ROOT t = (f32[1024,1024]{1,0}, f32[1024,1024]{1,0}) tuple(w, d)") == []
