"""--xla_dump_to directories: real dumps (fixtures/dumps/, made by fixtures/generate.py
--dumps and --pass-dumps) read as modules, stages picked, XLA's reports beside them, and the
pass that introduced an instruction found from the pass dumps."""

from __future__ import annotations

import json
import re

from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.dumpdir import scan

runner = CliRunner()
DUMPS = FIXTURES / "dumps"
PASSES = DUMPS / "passes_cpu"


def test_scan_groups_files_per_module_and_kind():
    (m,) = scan(PASSES)
    assert (m.id, m.name) == ("module_0000", "jit_f")
    assert set(m.stages) == {"before_optimizations", "after_optimizations"}
    assert {p.name.split("after_optimizations")[-1] for p in m.reports} >= {"-buffer-assignment.txt",
                                                                            "-memory-usage-report.txt"}
    seqs = [d.seq for d in m.passes]
    assert seqs == sorted(seqs) and len(seqs) == len(list(PASSES.glob("*.0[0-9][0-9][0-9].*.txt")))
    (tpu,) = scan(DUMPS / "fsdp_async_fusion_v5p")
    assert tpu.name.startswith("jit_model.cl_") and "tpu_comp_env.txt" in tpu.options


def test_lint_reads_a_dump_folder_as_its_modules_at_the_asked_stage():
    for stage, expected in ((None, "after_optimizations"), ("before_optimizations", "before_optimizations")):
        args = ["lint", str(DUMPS), "--format", "json", "--exit-zero"] + (["--stage", stage] if stage else [])
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        files = [m["file"] for m in doc["modules"]]
        assert len(files) == 5  # five dumped programs, one module each
        assert all(f.endswith(f"{expected}.txt") for f in files), files
        assert not any(re.search(r"\.\d{4}\.", f) for f in files)  # no pass dump is a module
        assert {m["stage"] for m in doc["modules"]} == {expected}


def test_memory_of_a_dump_folder_takes_xla_s_buffer_assignment_beside_each_module():
    result = runner.invoke(app, ["memory", str(DUMPS / "memory_remat_train_v5e"), "--format", "json"])
    assert result.exit_code == 0, result.output
    (rec,) = json.loads(result.stdout)["modules"]
    assert rec["xla"]["files"] and any("buffer-assignment" in f for f in rec["xla"]["files"])


def test_stats_and_report_take_a_dump_folder(tmp_path):
    result = runner.invoke(app, ["stats", str(DUMPS / "passes_cpu"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert [m["name"] for m in json.loads(result.stdout)["modules"]] == ["jit_f"]
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(DUMPS), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().count('<section class="module"') == 5


def test_passes_names_the_pass_that_introduced_a_copy():
    result = runner.invoke(app, ["passes", str(PASSES), "--instruction", "copy.1"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "  introduced by 0019 copy-insertion: after_adding_copies_to_resolve_interference"
    assert "+ %copy.1 = f32[256,256]{1,0} copy(" in result.stdout
    # the oracle: the dump files themselves, in their numbered order
    dumps = sorted(PASSES.glob("*.jit_f.0*.txt"))
    first = next(p for p in dumps if re.search(r"^\s*%copy\.1 = ", p.read_text(), re.M))
    assert ".0019.copy-insertion." in first.name
    listing = runner.invoke(app, ["passes", str(PASSES)]).stdout.splitlines()
    assert listing[1] == "  before_optimizations" and listing[-1] == "  after_optimizations"
    assert runner.invoke(app, ["passes", str(PASSES), "-i", "nothing.9"]).exit_code == 2
    assert runner.invoke(app, ["passes", str(FIXTURES / "cpu")]).exit_code == 2


def test_lint_passes_lists_the_pass_dumps_in_order():
    result = runner.invoke(app, ["lint", str(PASSES), "--passes"])
    assert result.exit_code == 0, result.output
    listed = [line.strip() for line in result.stdout.splitlines()[1:]]
    seqs = [int(x.split()[0]) for x in listed if x[:4].isdigit()]
    assert seqs == sorted(seqs) and len(seqs) == len(list(PASSES.glob("*.jit_f.0*.txt")))
    assert listed[0] == "before_optimizations" and listed[-1] == "after_optimizations"


def test_modules_of_two_backends_with_one_id_stay_apart(tmp_path):
    """XLA numbers each backend's modules from 0: a TPU program and a CPU helper compiled in
    one process are both module_0000 (seen in hloscope compile's folders). File names as XLA
    writes them (contents irrelevant here)."""
    from hloscope.dumpdir import scan

    for name in ("module_0000.jit_stage.cpu_after_optimizations.txt",
                 "module_0000.jit_stage.before_optimizations.txt",
                 "module_0000.jit_step.cl_1.after_optimizations.txt",
                 "module_0000.jit_step.cl_1.before_optimizations.txt",
                 "module_0004.jit__normal.obj-file.xor_fusion_kernel_module.o"):
        (tmp_path / name).write_text("HloModule x\n")
    found = {m.name: m for m in scan(tmp_path)}
    assert set(found) == {"jit_stage", "jit_step.cl_1"}
    assert found["jit_step.cl_1"].text().name == "module_0000.jit_step.cl_1.after_optimizations.txt"
    assert found["jit_stage"].text().name == "module_0000.jit_stage.cpu_after_optimizations.txt"
