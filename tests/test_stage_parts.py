"""hloscope.stage, each way a stage is known (the mutation run of bench/mutation.py found no
test reaching most of them): an --xla_dump_to file name, --stage, and the text's own signs.
File names are XLA's (fixtures/dumps/); the modules for the text's signs are hand-written
minimal ones, labelled so, one sign each."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from hloscope.parser import parse
from hloscope.stage import AFTER, BEFORE, Stage, detect_stage, stage_from_name

PASSES = sorted((FIXTURES / "dumps" / "passes_cpu").glob("module_*.[0-9][0-9][0-9][0-9].*.txt"))


def test_stage_from_an_xla_file_name():
    dump = FIXTURES / "dumps" / "memory_mlp_train_v5e"
    after = next(dump.glob("*.after_optimizations.txt"))
    before = next(dump.glob("*.before_optimizations.txt"))
    assert stage_from_name(str(after)) == Stage(AFTER, "file name")
    assert stage_from_name(str(before)) == Stage(BEFORE, "file name")
    # a report of the optimized module names its stage too
    assert stage_from_name(str(next(dump.glob("*-buffer-assignment.txt")))) == Stage(AFTER, "file name")
    assert stage_from_name("fixtures/cpu/mlp_cpu.hlo.txt") is None
    assert stage_from_name("") is None


def test_a_pass_dump_is_before_the_pipeline_end_and_names_its_pass():
    first = next(p for p in PASSES if ".0000." in p.name)
    s = stage_from_name(str(first))
    assert s == Stage(BEFORE, "file name: pass dump", pass_name="pipeline-start")
    assert s.to_dict() == {"stage": BEFORE, "stage_source": "file name: pass dump", "pass": "pipeline-start"}
    names = {stage_from_name(str(p)).pass_name for p in PASSES}
    assert "dce" in names and all(names) and len(names) > 10
    assert stage_from_name("module_0000.jit_f.0003.sharding-removal.after_dce.before_pipeline-end.txt"
                           ).pass_name == "dce"
    # four digits, then the pipeline, then after_/before_: other numbers are not pass dumps
    assert stage_from_name("module_0000.jit_f.003.x.after_dce.before_end.txt") is None
    assert stage_from_name("module_0000.jit_f.0003.x.after_dce") is None
    # a pass's own step dumps (XLA's copy insertion writes three), as they are named
    steps = [p for p in PASSES if ".copy-insertion.after_" in p.name]
    assert [stage_from_name(str(p)).pass_name for p in steps] == [
        "adding_copies_to_resolve_interference", "removing_unnecessary_copies",
        "adding_special-case_copies"]
    assert all(stage_from_name(str(p)).name == BEFORE for p in steps)


def test_stage_override_and_its_error():
    (m,) = parse(_HAND + "ENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n", "after_optimizations.txt")
    assert detect_stage(m, "before_optimizations") == Stage(BEFORE, "--stage")
    assert detect_stage(m, AFTER).optimized and not detect_stage(m, BEFORE).optimized
    assert detect_stage(m, None) == Stage(AFTER, "file name")  # no override: the name
    assert detect_stage(m, "") == Stage(AFTER, "file name")
    with pytest.raises(ValueError) as e:
        detect_stage(m, "optimized")
    assert str(e.value) == "unknown stage 'optimized'; use before_optimizations or after_optimizations"


def test_a_stage_prints_with_its_reason():
    s = Stage(AFTER, "fusions")
    assert str(s) == "after_optimizations (fusions)"
    assert s.to_dict() == {"stage": AFTER, "stage_source": "fusions"}


_HAND = "// HAND-WRITTEN minimal module: one sign of its compile stage\nHloModule m"


@pytest.mark.parametrize(("header", "body", "want"), [
    (", is_scheduled=true", "  ROOT p = f32[4]{0} parameter(0)", Stage(AFTER, "is_scheduled=true")),
    (", is_scheduled=false", "  ROOT p = f32[4]{0} parameter(0)", Stage(BEFORE, "no fusions, no schedule")),
    ("", "  p = f32[4]{0} parameter(0)\n"
         '  ROOT s = f32[4]{0} custom-call(p), custom_call_target="Sharding", sharding={replicated}',
     Stage(BEFORE, "sharding annotations (Sharding custom calls)")),
    ("", "  p = f32[4]{0} parameter(0)\n"
         '  ROOT s = f32[4]{0} custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}',
     Stage(BEFORE, "sharding annotations (Sharding custom calls)")),
    ("", "  p = f32[4]{0} parameter(0)\n"
         '  ROOT s = f32[4]{0} custom-call(p), custom_call_target="MyKernel"',
     Stage(BEFORE, "no fusions, no schedule")),
    ("", "  p = f32[4]{0} parameter(0)\n  ROOT f = f32[4]{0} fusion(p), kind=kLoop, calls=add_one",
     Stage(AFTER, "fusions")),
    ("", "  p = f32[4]{0} parameter(0)\n"
         "  s = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(p)\n  ROOT d = f32[4]{0} copy-done(s)",
     Stage(AFTER, "async start/done pairs")),
    ("", "  p = f32[4]{0} parameter(0)\n  ROOT a = f32[4]{0} add(p, p)",
     Stage(BEFORE, "no fusions, no schedule")),
])
def test_the_texts_own_signs(header, body, want):
    callee = ("add_one {\n  x = f32[4]{0} parameter(0)\n  ROOT y = f32[4]{0} add(x, x)\n}\n\n"
              if "fusion(" in body else "")
    (m,) = parse(f"{_HAND}{header}\n\n{callee}ENTRY e {{\n{body}\n}}\n", "module.hlo.txt")
    assert detect_stage(m) == want


def test_sharding_annotations_outrank_fusions():
    """A partly lowered module holding both a Sharding call and a fusion is before
    optimization: the annotations are gone once XLA has partitioned it."""
    text = (f"{_HAND}\n\nadd_one {{\n  x = f32[4]{{0}} parameter(0)\n  ROOT y = f32[4]{{0}} add(x, x)\n}}\n\n"
            "ENTRY e {\n  p = f32[4]{0} parameter(0)\n"
            '  s = f32[4]{0} custom-call(p), custom_call_target="Sharding", sharding={replicated}\n'
            "  ROOT f = f32[4]{0} fusion(s), kind=kLoop, calls=add_one\n}\n")
    (m,) = parse(text, "module.hlo.txt")
    assert detect_stage(m).name == BEFORE
