"""The rule engine and the rules' shared helpers part by part: the internal-error finding, the
measured time a trace adds to findings, a finding's JSON, severities, rule registration, and
the shape helpers (matmul dimensions, physical dimension order, sharding annotations), each
against values worked out here by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import FIXTURES

from hloscope.parser import load, parse
from hloscope.rules.base import InstructionRule, ModuleRule, RuleContext, Severity
from hloscope.rules.engine import internal_error, run
from hloscope.rules.helpers import matmul_dims, physical_dims_order, sharding_annotation
from hloscope.rules.registry import REGISTRY, load_rules, register
from hloscope.trace.join import InstructionStats, TraceIndex

COPY = FIXTURES / "rules" / "H001" / "scan_carry_cpu.hlo.txt"  # real CPU compile with copies


def _divide(n):  # (a rule's helper: the crash is reported where it raised, not where it was called)
    return n / 0


class _Boom(InstructionRule):
    code = "T998"
    name = "boom"
    targets = frozenset({"copy"})

    def check(self, instr, ctx):
        raise ZeroDivisionError("on purpose")


class _DeepBoom(_Boom):
    def check(self, instr, ctx):
        return [_divide(1)]


class _ModuleBoom(ModuleRule):
    code = "T997"
    name = "module-boom"

    def check_module(self, ctx):
        raise KeyError("missing")


# ----------------------------------------------------------------- the internal-error finding

def test_a_rule_crashing_on_an_instruction_is_reported_there_with_its_place_in_the_rule():
    (module,) = load(COPY)
    found = run([module], [_Boom(), load_rules()["H001"]()]).findings
    (err,) = [f for f in found if f.code == "X000"]
    assert any(f.code == "H001" for f in found)  # the other rule still ran
    first = next(i for i in module.instructions() if i.opcode == "copy")
    assert (err.name, err.severity, err.evidence) == ("internal-error", Severity.ERROR, {"rule": "T998"})
    assert (err.file, err.module, err.computation, err.instruction, err.line, err.column) == (
        module.path, module.name, first.computation, first.name, first.line, first.column)
    assert err.message.startswith(f"rule T998 (boom) crashed on %{first.name}: ZeroDivisionError: on purpose at ")
    assert err.message.endswith(f" at test_rules_core_parts.py:{_Boom.check.__code__.co_firstlineno + 1}")
    # raised in a helper the rule called: the place is the helper's line (the last frame)
    (deep,) = [f for f in run([module], [_DeepBoom()]).findings if f.code == "X000"]
    assert deep.message.endswith(f"ZeroDivisionError: division by zero at test_rules_core_parts.py:"
                                 f"{_divide.__code__.co_firstlineno + 1}")


def test_a_rule_crashing_on_the_module_is_reported_at_the_module_once():
    (module,) = load(COPY)
    found = run([module], [_ModuleBoom(), load_rules()["H001"]()]).findings
    (err,) = [f for f in found if f.code == "X000"]
    assert (err.computation, err.instruction, err.line, err.column) == ("", "", module.line, 1)
    assert err.message.startswith("rule T997 (module-boom) crashed: KeyError: 'missing' at ")
    assert any(f.code == "H001" for f in found)  # the other rule still ran


def test_an_error_never_raised_has_no_place():
    (module,) = load(COPY)
    err = internal_error(_Boom, module, ValueError("made, not raised"))
    assert err.message == "rule T998 (boom) crashed: ValueError: made, not raised"


def test_a_crashed_instruction_rule_is_not_run_again_in_that_module():
    calls = []

    class Counting(_Boom):
        code = "T996"

        def check(self, instr, ctx):
            calls.append(instr.name)
            raise ZeroDivisionError("once")

    (module,) = load(COPY)
    copies = [i for i in module.instructions() if i.opcode == "copy"]
    assert len(copies) >= 2
    found = run([module], [Counting()]).findings
    assert len(calls) == 1 and [f.code for f in found] == ["X000"]


# ----------------------------------------------------------------- measured time on findings

def _copy_trace(module, total_ns: float, steps: int, step_ns: float, count: int = 3) -> TraceIndex:
    first = next(f for f in run([module], [load_rules()["H001"]()]).findings)
    s = InstructionStats(module.name, first.instruction, first.computation, "copy", "copy")
    for k in range(count):
        s.add(start=k * 1e6, duration=total_ns / count, device="/device:CPU:0")
    return TraceIndex(stats={(module.name, first.instruction): s}, steps=steps, step_ns=step_ns)


def test_a_finding_carries_its_instructions_measured_time_per_step_and_share():
    (module,) = load(COPY)
    trace = _copy_trace(module, total_ns=6000.0, steps=2, step_ns=24000.0)
    (f, *_) = [f for f in run([module], [load_rules()["H001"]()], trace=trace).findings
               if (module.name, f.instruction) in trace.stats]
    assert f.cost["measured_seconds"] == pytest.approx(6000e-9 / 2)
    assert f.cost["measured_share"] == pytest.approx(6000 / 24000)
    assert f.cost["measured_count"] == 3.0


def test_a_trace_of_no_whole_step_counts_one():
    (module,) = load(COPY)
    trace = _copy_trace(module, total_ns=5000.0, steps=0, step_ns=0.0)
    (f, *_) = [f for f in run([module], [load_rules()["H001"]()], trace=trace).findings
               if (module.name, f.instruction) in trace.stats]
    assert f.cost["measured_seconds"] == pytest.approx(5000e-9)
    assert f.cost["measured_share"] == 0.0


# ----------------------------------------------------------------- a finding, severities, codes

def test_a_findings_json_has_every_field_by_its_public_name():
    (module,) = load(COPY)
    f = run([module], [load_rules()["H001"]()]).findings[0]
    d = f.to_dict()
    assert list(d) == ["code", "name", "severity", "message", "file", "line", "column", "module",
                       "computation", "instruction", "evidence", "cost", "help", "group", "source"]
    assert (d["code"], d["name"], d["severity"]) == ("H001", "defensive-copy", "warning")
    assert (d["line"], d["column"], d["instruction"], d["help"]) == (f.line, f.column, f.instruction, f.help)
    assert d["group"] == f.fingerprint[:16] and len(d["group"]) == 16


def test_severities_parse_from_their_names_in_any_case():
    assert [Severity.parse(t) for t in ("error", " Warning ", "INFO")] == [
        Severity.ERROR, Severity.WARNING, Severity.INFO]
    with pytest.raises(ValueError, match="unknown severity 'fatal'; use error, warning or info"):
        Severity.parse("fatal")


def test_a_rule_code_is_never_taken_twice():
    class Again(InstructionRule):
        code = "H001"
        name = "again"

    with pytest.raises(ValueError, match="rule code H001 is taken by DefensiveCopy"):
        register(Again)
    assert REGISTRY["H001"].__name__ == "DefensiveCopy"
    same = REGISTRY["H001"]
    assert register(same) is same  # (registering the same class again is harmless)


# ----------------------------------------------------------------- shape helpers

# HAND-WRITTEN: a batched dot and a 1x1 convolution, minimal cases for their dimensions
DOTS = """HloModule m

ENTRY e {
  a = f32[4,32,64] parameter(0)
  b = f32[4,64,16] parameter(1)
  d = f32[4,32,16] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  x = f32[8,3,3,256] parameter(2)
  w = f32[1,1,256,512] parameter(3)
  c = f32[8,3,3,512] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[4,32,16], f32[8,3,3,512]) tuple(d, c)
}
"""


def test_matmul_dims_of_a_batched_dot_and_a_1x1_convolution():
    (m,) = parse(DOTS)
    ctx = RuleContext(m, None)
    by = m.entry.by_name
    assert matmul_dims(by["d"], ctx) == {"M": 32, "K": 64, "N": 16, "batch": 4}
    # the convolution: K the input features (i), N the output features (o), M every output
    # position that is not a feature: 8 x 3 x 3
    assert matmul_dims(by["c"], ctx) == {"M": 72, "K": 256, "N": 512, "batch": 1}


def test_physical_dims_order_is_major_to_minor_without_unit_dims():
    (m,) = parse("""HloModule m

ENTRY e {
  p = f32[4,1,8]{0,2,1} parameter(0)
  q = f32[4,1,8] parameter(1)
  ROOT t = (f32[4,1,8]{0,2,1}, f32[4,1,8]) tuple(p, q)
}
""")
    by = m.entry.by_name
    assert physical_dims_order(by["p"].shape) == (2, 0)  # minor_to_major 0,2,1: dim 1 first, dropped
    assert physical_dims_order(by["q"].shape) == (0, 2)  # no layout: row-major


def test_a_sharding_constraint_is_told_by_its_name_or_its_metadata():
    (m,) = parse("""HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  sharding_constraint.3 = f32[8] copy(p)
  c = f32[8] copy(p), metadata={op_name="jit(f)/jit(main)/sharding_constraint" source_file="f.py"}
  d = f32[8] copy(p), metadata={op_name="jit(f)/jit(main)/transpose" source_file="f.py"}
  ROOT t = (f32[8], f32[8], f32[8]) tuple(sharding_constraint.3, c, d)
}
""")
    by = m.entry.by_name
    assert [sharding_annotation(by[n]) for n in ("sharding_constraint.3", "c", "d", "p")] == [
        True, True, False, False]


# HAND-WRITTEN: a tiled bf16 buffer and an update of one row of it, a copy-start's parts
TILED = """HloModule m

ENTRY e {
  t = bf16[16,1024]{1,0:T(8,128)(2,1)} parameter(0)
  u = bf16[1,1024]{1,0:T(8,128)(2,1)} parameter(1)
  plain = bf16[16,1024] parameter(2)
  s = (bf16[16,1024]{1,0:T(8,128)(2,1)}, bf16[16,1024]{1,0:T(8,128)(2,1)}, u32[]) copy-start(t)
  d = bf16[16,1024]{1,0:T(8,128)(2,1)} copy-done(s)
  c = bf16[16,1024]{0,1} copy(plain)
  tu = (bf16[16,1024]{1,0:T(8,128)(2,1)}, bf16[1,1024]{1,0:T(8,128)(2,1)}) tuple(t, u)
  ct = (bf16[16,1024]{1,0:T(8,128)(2,1)}, bf16[1,1024]{1,0:T(8,128)(2,1)}) copy(tu)
  ROOT r = (bf16[16,1024]{1,0:T(8,128)(2,1)}, bf16[16,1024]{0,1}) tuple(d, c)
}
"""


@pytest.fixture(scope="module")
def tiled():
    (m,) = parse(TILED)
    return m


def test_tiled_dims_partial_dims_and_touched_tile_bytes_of_a_one_row_update(tiled):
    from hloscope.rules.helpers import partial_dims, tiled_dims, touched_tile_bytes

    by = tiled.entry.by_name
    target, update = by["t"].shape, by["u"].shape
    assert tiled_dims(target) == [(0, 8), (1, 128)]  # (8, 128) tiles: dim 0 by 8 rows, dim 1 by 128
    assert partial_dims(target, update) == [(0, 1, 8)]  # 1 row of every 8-row tile it meets
    assert touched_tile_bytes(target, update) == 8 * 1024 * 2  # the 8 x 1024 tile row, bf16
    assert partial_dims(target, target) == []
    assert partial_dims(target, by["r"].shape.elements[1]) == []  # (no tile on the plain side)
    plain = by["plain"].shape
    assert tiled_dims(plain) == [] and touched_tile_bytes(plain, update) == 1 * 1024 * 2
    from hloscope.parser import parse_shape

    assert partial_dims(target, parse_shape("bf16[1,1,1024]")) == []  # ranks differ: not an update


def test_tile_helpers_at_their_edges():
    from hloscope.parser import parse_shape
    from hloscope.rules.helpers import partial_dims, tiled_dims, tiles, touched_tile_bytes

    assert tiles(parse_shape("bf16[8,1024]{1,0:T(8,128)(2,1)}")) == ((8, 128), (2, 1))
    assert tiles(parse_shape("bf16[8,1024]{1,0}")) == () and tiles(parse_shape("bf16[8,1024]")) == ()
    assert tiled_dims(parse_shape("bf16[8,1024]{1,0}")) == []  # a layout with no tiles
    # two-row tiles: one row of every two is a partial update
    two = parse_shape("f32[6,256]{1,0:T(2,128)}")
    assert partial_dims(two, parse_shape("f32[1,256]")) == [(0, 1, 2)]
    assert partial_dims(two, parse_shape("f32[2,256]")) == []  # whole tiles
    # an update spanning the whole dimension is not partial, tiles or not (5 rows of 5)
    five = parse_shape("bf16[5,1024]{1,0:T(8,128)(2,1)}")
    assert partial_dims(five, parse_shape("bf16[5,1024]")) == []
    assert partial_dims(five, parse_shape("bf16[3,1024]")) == [(0, 3, 8)]
    # one tiled dim: 100 elements of 256-element tiles touch one tile, 1 KiB of f32
    one = parse_shape("f32[1024]{0:T(256)}")
    assert touched_tile_bytes(one, parse_shape("f32[100]")) == 1024
    assert touched_tile_bytes(one, parse_shape("f32[300]")) == 2048
    assert isinstance(touched_tile_bytes(one, parse_shape("f32[300]")), int)


def test_memory_space_of_a_shape_with_and_without_a_layout():
    from hloscope.parser import parse_shape
    from hloscope.rules.helpers import memory_space

    assert memory_space(parse_shape("f32[8]")) == 0  # (no layout printed: device memory)
    assert memory_space(parse_shape("f32[8]{0}")) == 0
    assert memory_space(parse_shape("f32[8]{0:S(1)}")) == 1


def test_kernel_views_of_a_trace_with_and_without_kernels(tiled):
    from types import SimpleNamespace

    from hloscope.rules.helpers import TraceRule

    rule = TraceRule()
    without = RuleContext(tiled, None, trace=SimpleNamespace())  # (a GPU trace: no kernel views)
    assert list(rule.kernel_views(without)) == []
    ran, idle = SimpleNamespace(runs=3), SimpleNamespace(runs=0)
    views = {(tiled.name, "t"): ran, (tiled.name, "u"): idle, ("other", "d"): ran}
    withk = RuleContext(tiled, None, trace=SimpleNamespace(kernels=views))
    assert [(i.name, v) for i, v in rule.kernel_views(withk)] == [("t", ran)]


def test_copy_io_of_a_copy_a_copy_start_and_a_tuple_copy(tiled):
    from hloscope.rules.helpers import copy_io

    ctx = RuleContext(tiled, None)
    by = tiled.entry.by_name
    src, dst = copy_io(by["s"], ctx)  # copy-start: the destination is its first element
    assert str(src) == str(by["t"].shape) and str(dst) == str(by["t"].shape)
    src, dst = copy_io(by["c"], ctx)
    assert src.layout is None and dst.layout.minor_to_major == (0, 1)
    assert copy_io(by["ct"], ctx) is None  # a tuple copied: no array on either side


def test_moved_cost_is_bytes_per_trip_and_time_from_xlas_estimate_or_hbm():
    import re

    from hloscope.cost.chips import get_chip
    from hloscope.rules.helpers import moved_cost

    (m,) = load(FIXTURES / "precision" / "bf16_v5e.hlo.txt")
    fusion = m.entry.by_name["fusion"]
    line = (FIXTURES / "precision" / "bf16_v5e.hlo.txt").read_text().splitlines()[fusion.line - 1]
    cycles = int(re.search(r'"estimated_cycles":"(\d+)"', line).group(1))  # 143,032
    v5e = get_chip("v5e")
    assert moved_cost(RuleContext(m, None), 1000, None) == {"bytes_wasted": 1000.0}
    assert moved_cost(RuleContext(m, None), 1000, 3) == {"bytes_wasted": 3000.0}
    hbm = moved_cost(RuleContext(m, v5e), 1000, 3)
    assert hbm == {"bytes_wasted": 3000.0, "est_seconds": pytest.approx(3000 / 819e9)}
    xla = moved_cost(RuleContext(m, v5e), 1000, 3, fusion)
    assert xla["xla_est_seconds"] == pytest.approx(cycles * 3 / 1.5e9)
    assert xla["est_seconds"] == xla["xla_est_seconds"]
    assert "xla_est_seconds" not in moved_cost(RuleContext(m, get_chip("cpu")), 1000, 3, fusion)


def test_hbm_capacity_and_mxu_size_follow_the_chip_with_their_defaults():
    from hloscope.cost.chips import get_chip
    from hloscope.rules.helpers import hbm_capacity, mxu_size

    (m,) = parse(DOTS)
    v5p, v6e = get_chip("v5p"), get_chip("v6e")
    assert hbm_capacity(RuleContext(m, v5p)) == 102005473280
    assert hbm_capacity(RuleContext(m, None, assumed_chip=v6e)) == 32 << 30
    assert hbm_capacity(RuleContext(m, v5p, assumed_chip=v6e)) == 102005473280
    assert hbm_capacity(RuleContext(m, None)) == 16 << 30
    assert [mxu_size(RuleContext(m, c)) for c in (v6e, v5p, get_chip("h100"), None)] == [256, 128, 128, 128]
    # a chip file may give an MXU that is not square: the size is its first figure, as the table gives it
    assert mxu_size(RuleContext(m, replace(v5p, mxu=(256, 128)))) == 256
    assert mxu_size(RuleContext(m, replace(v5p, mxu=()))) == 128


def test_a_rule_without_a_doc_says_so():
    from hloscope.rules.base import rule_doc

    assert rule_doc("Z999", "nowhere") == "# Z999 nowhere\n\n(no documentation)\n"
    assert rule_doc("H001", "defensive-copy").startswith("# H001")


# ----------------------------------------------------------------- fingerprints, suppression, run

class _Says(ModuleRule):
    """A test rule: one finding on each instruction named in `on`, with the message given."""

    code = "T995"
    name = "says"

    def __init__(self, on: dict[str, str]):
        super().__init__()
        self.on = on

    def check_module(self, ctx):
        for comp in ctx.module.computations:
            for instr in comp.instructions:
                if instr.name in self.on:
                    yield self.finding(ctx, instr, self.on[instr.name], help="Do it.")


# HAND-WRITTEN: two fusions of one shape over different bodies, with and without metadata
FUSIONS = """HloModule m

neg {
  a = f32[64,128] parameter(0)
  ROOT n = f32[64,128] negate(a)
}

exp {
  a = f32[64,128] parameter(0)
  ROOT n = f32[64,128] exponential(a)
}

ENTRY e {
  p = f32[64,128] parameter(0)
  q = f32[64,256] parameter(1)
  f1 = f32[64,128] fusion(p), kind=kLoop, calls=neg
  f2 = f32[64,128] fusion(p), kind=kLoop, calls=exp
  s1 = f32[64,128] slice(p), slice={[0:64], [0:128]}
  s2 = f32[64,128] slice(q), slice={[0:64], [0:128]}
  m1 = f32[64,128] negate(p), metadata={op_name="jit(f)/neg" source_file="/m/f.py" source_line=7}
  m2 = f32[64,128] negate(p), metadata={op_name="jit(f)/neg"}
  ROOT t = (f32[64,128], f32[64,128], f32[64,128], f32[64,128], f32[64,128], f32[64,128]) tuple(f1, f2, s1, s2, m1, m2)
}
"""


def _found(text: str, on: dict[str, str], **kw):
    modules = parse(text)
    return {f.instruction: f for f in run(modules, [_Says(on)], **kw).findings}


def test_fingerprints_tell_callees_apart_where_nothing_from_the_program_does():
    found = _found(FUSIONS, {"f1": "a fusion", "f2": "a fusion"})
    assert found["f1"].fingerprint != found["f2"].fingerprint  # negate vs exponential inside


def test_fingerprints_follow_the_operands_shapes_and_the_message_words_not_its_numbers():
    found = _found(FUSIONS, {"s1": "a slice of 64 rows", "s2": "a slice of 64 rows"})
    assert found["s1"].fingerprint != found["s2"].fingerprint  # f32[64,128] vs f32[64,256] read
    a = _found(FUSIONS, {"s1": "a slice of 64 rows at %p.1"})["s1"]
    b = _found(FUSIONS, {"s1": "a slice of 32 rows at %q.7"})["s1"]
    c = _found(FUSIONS, {"s1": "a slice of 64 columns at %p.1"})["s1"]
    d = _found(FUSIONS, {"s1": "a slice of f32[64,128]{1,0:T(8,128)} rows"})["s1"]
    e = _found(FUSIONS, {"s1": "a slice of f32[64,128]{0,1} rows"})["s1"]
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert d.fingerprint == e.fingerprint  # a layout in the message does not count


def test_a_findings_source_is_its_metadata_where_it_has_any():
    found = _found(FUSIONS, {"m1": "x", "m2": "x", "s1": "x"})
    assert (found["m1"].source["op_name"], found["m1"].source["file"], found["m1"].source["line"]) == (
        "jit(f)/neg", "/m/f.py", 7)
    assert found["m2"].source["op_name"] == "jit(f)/neg" and not found["m2"].source["file"]
    assert found["s1"].source == {}


def test_a_module_level_finding_is_fingerprinted_by_its_code_and_message():
    class Module_(ModuleRule):
        code = "T994"
        name = "module-level"

        def check_module(self, ctx):
            from hloscope.rules.base import Finding

            yield Finding(code=self.code, name=self.name, severity=Severity.INFO, message=ctx.module.name,
                          file="", line=1, column=1, module=ctx.module.name, computation="",
                          instruction="", help="Nothing.")

    (a,) = run(parse(FUSIONS), [Module_()]).findings
    (b,) = run(parse(FUSIONS.replace("HloModule m", "HloModule other")), [Module_()]).findings
    assert a.fingerprint != b.fingerprint and a.source == {} and len(a.fingerprint) == 40


def test_inline_suppression_by_code_list_by_name_and_all():
    lines = FUSIONS.splitlines()
    k = next(i for i, line in enumerate(lines) if line.strip().startswith("s1 ="))

    def suppressed(comment: str) -> tuple[int, set]:
        text = "\n".join(lines[:k] + [lines[k] + " " + comment] + lines[k + 1:])
        modules = parse(text)
        result = run(modules, [_Says({"s1": "x", "s2": "y"})], sources={modules[0].path: text.splitlines()})
        return result.suppressed, {f.instruction for f in result.findings}

    assert suppressed("// hloscope: ignore[H001, T995]") == (1, {"s2"})
    assert suppressed("// hloscope: ignore[says]") == (1, {"s2"})
    assert suppressed("// hloscope: ignore[ALL]") == (1, {"s2"})
    assert suppressed("// hloscope: ignore[H001]") == (0, {"s1", "s2"})
    assert suppressed("// hloscope: ignore[all]") == (0, {"s1", "s2"})  # ALL, as documented


def test_run_counts_every_suppressed_finding():
    lines = FUSIONS.splitlines()
    text = "\n".join(line + (" // hloscope: ignore[T995]" if line.strip()[:3] in ("s1 ", "s2 ") else "")
                     for line in lines)
    modules = parse(text)
    result = run(modules, [_Says({"s1": "x", "s2": "y", "m1": "z"})],
                 sources={modules[0].path: text.splitlines()})
    assert result.suppressed == 2 and [f.instruction for f in result.findings] == ["m1"]


def test_run_sorts_findings_by_cost_highest_first():
    class Costs(_Says):
        def check_module(self, ctx):
            for f in super().check_module(ctx):
                yield replace(f, cost={"est_seconds": float(f.message)})

    found = run(parse(FUSIONS), [Costs({"s1": "2", "s2": "9", "m1": "5", "f1": "1"})]).findings
    assert [f.instruction for f in found] == ["s2", "m1", "s1", "f1"]


def test_run_notes_rules_skipped_for_want_of_a_trace_and_kernels_not_decoded():
    (module,) = load(FIXTURES / "rules" / "X002" / "future_kernel_v5e.hlo.txt")
    rules = load_rules()
    result = run([module], [rules["T001"](), rules["T002"](), rules["K001"]()])
    assert "T001 (roofline-gap), T002 (pipeline-bubbles) skipped: needs trace" in result.notes
    (note,) = [n for n in result.notes if n.startswith("kernel rules skipped")]
    assert note.startswith(f"kernel rules skipped 1 Pallas kernel(s) of {module.name} that could not "
                           "be decoded: Mosaic deserialization failed")
    with_x002 = run([module], [rules["K001"](), rules["X002"]()])
    assert not any(n.startswith("kernel rules skipped") for n in with_x002.notes)
    assert [f.code for f in with_x002.findings] == ["X002"]


def test_run_takes_the_stage_it_is_given_over_the_modules_own():
    (module,) = load(COPY)  # an after-optimizations CPU compile
    assert run([module], [load_rules()["H001"]()]).findings
    before = run([module], [load_rules()["H001"]()], stage="before_optimizations")
    assert before.findings == [] and any("skipped on" in n for n in before.notes)
    assert before.modules[0]["stage"] == "before_optimizations"


def test_unknown_rule_options_are_an_error_naming_the_known_ones():
    rules = load_rules()
    with pytest.raises(ValueError) as e:
        rules["H004"].make_options({"min_grup": 3, "bogus": 1})
    assert str(e.value) == "H004 (split-dot) has no option(s) bogus, min_grup; known: expect, min_group"
    with pytest.raises(ValueError) as e:
        rules["K001"].make_options({"x": 1})
    assert str(e.value).endswith("known: none")
    assert rules["H004"].make_options({"min_group": 3}).min_group == 3


def test_a_context_knows_its_modules_stage_unless_given_one():
    from hloscope.stage import detect_stage

    (module,) = load(COPY)
    assert RuleContext(module).stage.name == "after_optimizations"
    given = detect_stage(module, "before_optimizations")
    assert RuleContext(module, stage=given).stage is given


def test_contains_matmul_and_matmul_unit_per_platform():
    from hloscope.cost.chips import get_chip
    from hloscope.rules.helpers import contains_matmul, matmul_unit

    (m,) = parse(DOTS)
    ctx = RuleContext(m, None)
    by = m.entry.by_name
    assert [contains_matmul(by[n], ctx) for n in ("d", "c", "a", "t")] == [True, True, False, False]
    (f,) = parse(FUSIONS)
    assert not contains_matmul(f.entry.by_name["f1"], RuleContext(f, None))  # negate inside
    assert [matmul_unit(RuleContext(m, get_chip(c))) for c in ("v5e", "h100", "cpu")] == [
        "the MXU", "the tensor cores", "the matrix units"]


def test_ici_time_names_the_links_and_says_nothing_without_a_time():
    from types import SimpleNamespace

    from hloscope.rules.helpers import ici_time

    assert ici_time(SimpleNamespace(est_seconds=5.83e-6, links="ICI")) == ", ~5.83 us on ICI"
    assert ici_time(SimpleNamespace(est_seconds=2e-3, links="")) == ", ~2.00 ms on the links"
    assert ici_time(SimpleNamespace(est_seconds=2e-3)) == ", ~2.00 ms on the links"
    assert ici_time(SimpleNamespace(est_seconds=0.0, links="ICI")) == ""


def test_the_engine_counts_every_instruction_of_every_computation_as_xla_parses_them():
    """The summary's `instructions` over two files: what XLA's own parser finds in each (every
    computation, the fused ones included), added up."""
    from oracle import xla_views

    from hloscope.lint import LintOptions, lint_files

    files = [FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt", FIXTURES / "rules" / "H001" / "dus_donated_v5e.hlo.txt"]
    views = xla_views([p.read_text() for p in files])
    counts = [sum(len(c["instructions"]) for c in v["computations"]) for v in views]
    assert counts[0] > 10_000 and counts[1] > 5
    report = lint_files([str(p) for p in files], LintOptions(chip="v5e"))
    assert report.instructions == sum(counts)


def test_flags_given_to_the_engine_reach_the_rules():
    """F001 judges the flags `lint --flags` gives (the module read from text: no flag file
    beside it says how it was compiled)."""
    from conftest import make_rule

    from hloscope.cost.chips import get_chip

    (m,) = parse((FIXTURES / "rules" / "F001" / "exposed_gather_v5p.hlo.txt").read_text())
    flags = "--xla_tpu_enable_async_collective_fusion=false"
    found = run([m], [make_rule("F001")], chip=get_chip("v5p"), flags=flags).findings
    assert found and all(f.message.endswith("(flags from --flags)") for f in found)
    assert run([m], [make_rule("F001")], chip=get_chip("v5p")).findings == []  # nothing says how


def test_a_suppression_on_the_first_or_last_line_holds_and_no_line_is_no_line():
    """A finding's line counts from 1: the comment on line 1 and on the last line suppresses
    the finding there; a finding at line 0 (no place in the file) is never suppressed by the
    last line's comment; a list split on commas only."""
    from hloscope.rules.base import Finding
    from hloscope.rules.engine import _suppressed

    def at(line: int, code: str = "H001") -> Finding:
        return Finding(code=code, name="defensive-copy", severity=Severity.INFO, message="", file="",
                       line=line, column=1, module="m", computation="", instruction="")

    lines = ["HloModule m // hloscope: ignore[H001]", "ENTRY e {", "} // hloscope: ignore[H002 H001]",
             "x // hloscope: ignore[H003,H001]"]
    assert _suppressed(at(1), lines)
    assert not _suppressed(at(2), lines)
    assert not _suppressed(at(3), lines)  # ("H002 H001" is one name, not a list)
    assert _suppressed(at(4), lines) and _suppressed(at(4, "H003"), lines)
    assert not _suppressed(at(0), lines) and not _suppressed(at(5), lines)


def _near_full_in(folder):
    """H012's near-full v5e fixture copied into a folder of its own (nothing beside it but
    what a test writes there): its path."""
    import shutil

    src = FIXTURES / "rules" / "H012" / "near_full_v5e.hlo.txt"
    folder.mkdir()
    shutil.copy(src, folder / src.name)
    return folder / src.name


def test_the_engine_judges_against_the_chip_a_module_records_and_only_informs_against_a_guess(tmp_path):
    """H012 on a module whose peak (15.3 GiB) is within 5% of a v5e's 16 GiB: with `hloscope
    compile`'s record beside it naming the v5e, the verdict is a warning; read where nothing
    states the chip, the v5e is a guess and the finding only informs (and says so)."""
    import json

    from conftest import make_rule

    recorded = _near_full_in(tmp_path / "recorded")
    (recorded.parent / "hloscope.json").write_text(json.dumps({"chip": "v5e", "topology": "v5e:1x1"}))
    (judged,) = run(load(recorded), [make_rule("H012")]).findings
    (guessed,) = run(load(_near_full_in(tmp_path / "bare")), [make_rule("H012")]).findings
    assert judged.severity is Severity.WARNING and judged.message.endswith("; under 5% headroom")
    assert "assumed" not in judged.message
    assert guessed.severity is Severity.INFO and "of an assumed TPU v5e" in guessed.message


def test_an_operand_past_the_last_is_none():
    (m,) = load(COPY)
    ctx = RuleContext(m, None)
    copy = next(i for i in m.instructions() if i.opcode == "copy")
    assert ctx.operand(copy, 0).name == copy.operands[0]
    assert ctx.operand(copy, 1) is None and ctx.operand(copy, 2) is None


def test_the_stage_given_to_the_engine_is_the_one_the_rules_see():
    """`lint --stage before_optimizations` on a scheduled dump: H008 reads the stage it is
    given, and says the collectives are not scheduled yet, naming that stage."""
    from conftest import make_rule

    (m,) = load(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt")
    found = run([m], [make_rule("H008")], stage="before_optimizations").findings
    assert found and all(f.evidence.get("stage") == "before_optimizations" for f in found)
    assert all("before_optimizations module: its" in f.message for f in found)


def test_the_assumed_chip_is_noted_once_for_modules_that_share_it(tmp_path):
    from conftest import make_rule

    modules = [m for k in (1, 2) for m in load(_near_full_in(tmp_path / str(k)))]
    notes = run(modules, [make_rule("H012")]).notes
    assumed = [n for n in notes if n.startswith("chip assumed: TPU v5e")]
    assert len(assumed) == 1 and "" not in notes


# (HAND-WRITTEN) a copy that relayouts its operand to column-major; the operand's layout
# not printed (the parser's default), then printed
_RELAYOUT = """HloModule m
ENTRY e {
  p = f32[1024,1024] parameter(0)
  ROOT c = f32[1024,1024]{0,1} copy(p)
}
"""


def test_a_finding_whose_layout_is_printed_or_not_is_the_same_finding():
    """H002 names both layouts; where the operand's is not printed, its message has none.
    Both are the one finding, with one fingerprint; another shape is another finding."""
    def found(text):
        (f,) = run(parse(text, "m"), [load_rules()["H002"]()], stage="after_optimizations").findings
        return f

    bare, printed = found(_RELAYOUT), found(_RELAYOUT.replace("] parameter", "]{1,0} parameter"))
    assert "relayouts f32[1024,1024] ->" in bare.message
    assert "relayouts f32[1024,1024]{1,0} ->" in printed.message
    assert bare.fingerprint == printed.fingerprint
    assert found(_RELAYOUT.replace("1024,1024", "1024,512")).fingerprint != bare.fingerprint


class _PlainOptions(InstructionRule):
    """A rule as a plugin might write it: plain Options, a finding with no help."""

    code = "Z901"
    name = "plain-plugin"
    severity = Severity.INFO
    summary = "every parameter"
    targets = frozenset({"parameter"})

    class Options:  # (not a dataclass)
        pass

    def check(self, instr, ctx):
        yield self.finding(ctx, instr, f"%{instr.name} is a parameter")


def test_a_plugin_rule_with_plain_options_and_no_help():
    """Options need not be a dataclass: no option is known, and one given is an error that
    says so. A finding made with no help has none."""
    assert isinstance(_PlainOptions.make_options({}), _PlainOptions.Options)
    with pytest.raises(ValueError, match=r"Z901 \(plain-plugin\) has no option\(s\) depth; known: none"):
        _PlainOptions.make_options({"depth": 2})
    (f,) = run(parse(_RELAYOUT, "m"), [_PlainOptions()]).findings
    assert (f.instruction, f.help) == ("p", "")
