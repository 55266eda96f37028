"""hloscope.dumpdir on the edges of a dump folder (the mutation run of bench/mutation.py found
them uncovered): what is and is not a dump folder, files that are not a module's, the notes
for modules without the asked stage, program ids from file and program names. The folders are
real XLA dumps (fixtures/dumps/) copied into a temporary folder, with the odd entry added."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from hloscope.dumpdir import is_dump_dir, module_files, program_id, scan

REAL = FIXTURES / "dumps" / "memory_mlp_train_v5e"
STEM = "module_0000.jit_step.cl_933746096"


@pytest.fixture
def dump(tmp_path):
    out = tmp_path / "dump"
    shutil.copytree(REAL, out)
    return out


def test_what_is_a_dump_folder(dump, tmp_path):
    assert is_dump_dir(dump)
    assert not is_dump_dir(dump / f"{STEM}.after_optimizations.txt")  # a file, not a folder
    assert not is_dump_dir(tmp_path / "missing")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("not XLA's")
    assert not is_dump_dir(plain)  # a folder without module files
    (plain / "module_0001.jit_f").mkdir()  # named like a module's file, but a folder
    assert not is_dump_dir(plain)


def test_a_folder_that_cannot_be_listed_is_not_a_dump(dump, monkeypatch):
    """(as root here, permissions do not stop a listing: the error is raised as the OS would)"""
    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "iterdir", refuse)
    assert not is_dump_dir(dump)


def test_scan_skips_what_is_not_a_modules_file_and_keeps_going(dump):
    (dump / "README").write_text("sorted before the module files")
    (dump / "module_0007.jit_g.ll").mkdir()  # a folder named like a module's file
    (dump / "module_0007.jit_g.ir-no-opt.ll").write_text("LLVM IR: no module text")
    (mod,) = scan(dump)
    assert (mod.id, mod.name) == ("module_0000", "jit_step.cl_933746096")
    assert mod.options == {name: dump / f"{STEM}.{name}"
                           for name in ("debug_options", "execution_options.txt", "tpu_comp_env.txt")}
    assert set(mod.stages) == {"after_optimizations", "before_optimizations"}
    assert len(mod.reports) == 3


def test_module_files_default_to_the_optimized_stage_and_note_the_others(dump):
    files, notes = module_files(dump)
    assert files == [dump / f"{STEM}.after_optimizations.txt"] and notes == []
    files, _ = module_files(dump, "before_optimizations")
    assert files == [dump / f"{STEM}.before_optimizations.txt"]
    (dump / "module_0003.jit_h.before_optimizations.txt").write_text("HloModule jit_h\n")
    (dump / "module_0004.jit_k.debug_options").write_text("")
    files, notes = module_files(dump)
    assert files == [dump / f"{STEM}.after_optimizations.txt"]
    assert notes == [f"{dump}/module_0003.jit_h: no after_optimizations dump (before_optimizations)",
                     f"{dump}/module_0004.jit_k: no after_optimizations dump (no module text)"]
    (dump / "module_0003.jit_h.after_optimizations.txt").write_text("HloModule jit_h\n")
    _, notes = module_files(dump, "before_optimizations")
    assert notes == [f"{dump}/module_0004.jit_k: no before_optimizations dump (no module text)"]


@pytest.mark.parametrize(("path", "name", "want"), [
    ("module_0021.jit_dot.cl_1.after_optimizations.txt", "jit_dot", 21),
    ("out/module_0000.jit_step.after_optimizations.txt", "jit_step", 0),
    ("jit_dot.49.hlo.txt", "jit_dot", 49),
    ("captures/jit_dot(21)", "jit_dot", 21),
    ("jit_dot.hlo.txt", "jit_dot", None),  # no number where the id would be
    ("jit_other.21.hlo.txt", "jit_dot", None),  # another program's file
    ("jit_dotx.21.hlo.txt", "jit_dot", None),
    ("jit_f(x).7.hlo.txt", "jit_f(x)", 7),  # a name with regex characters, matched literally
    ("jit_fax.7.hlo.txt", "jit_f.x", None),
    ("", "jit_dot", None),
    (None, "jit_dot", None),
])
def test_program_ids_from_file_names(path, name, want):
    assert program_id(path, name) == want
