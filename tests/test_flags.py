"""The flag audit (F001) on real deviceless v5p dumps (fixtures/dumps/, generate.py --dumps):
the flags read from libtpu's tpu_comp_env.txt beside the module, and --flags over them."""

from __future__ import annotations

import json

from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.flags import parse_flags, state

runner = CliRunner()
DEFAULT = FIXTURES / "dumps" / "fsdp_default_v5p"  # 4 synchronous all-gathers, fuse AUTO
FUSED = FIXTURES / "dumps" / "fsdp_async_fusion_v5p"  # MaxText's flags: 3 of 4 overlapped
FUSE_ON = ("--xla_tpu_enable_async_collective_fusion=true "
           "--xla_tpu_enable_async_collective_fusion_fuse_all_gather=true --xla_enable_async_all_gather=true")


def _f001(path, *extra) -> list[dict]:
    result = runner.invoke(app, ["lint", str(path), "--select", "F001", "--chip", "v5p",
                                 "--format", "json", "--exit-zero", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["findings"]


def test_parsing_both_forms_and_states():
    assert parse_flags("--a=true --b=kAuto --c") == {"a": "true", "b": "kAuto", "c": "true"}
    env = parse_flags("# comment\nxla_x: ENABLED\nxla_y: \"\"\nxla_z: 3\n")
    assert env == {"xla_x": "ENABLED", "xla_y": "", "xla_z": "3"}
    assert [state(v) for v in ("true", "ENABLED", "kAuto", "false", "DISABLED", None)] == \
        ["on", "on", "auto", "off", "off", "unset"]


def test_fires_on_a_real_dump_with_exposed_gathers_and_the_fuse_flag_unset():
    env = next(DEFAULT.glob("*tpu_comp_env.txt")).read_text()
    assert "xla_tpu_enable_async_collective_fusion_fuse_all_gather: AUTO" in env  # the oracle
    (f,) = _f001(DEFAULT)
    assert f["code"] == "F001" and f["instruction"].startswith("all-gather")
    assert "fuse_all_gather is auto" in f["message"] and "4 all-gather(s)" in f["message"]
    assert f["evidence"]["flags"]["xla_tpu_enable_async_collective_fusion_fuse_all_gather"] == "auto"


def test_silent_when_the_flags_are_set_in_the_dump_or_given():
    env = next(FUSED.glob("*tpu_comp_env.txt")).read_text()
    assert "xla_tpu_enable_async_collective_fusion_fuse_all_gather: ENABLED" in env
    assert _f001(FUSED) == []
    assert _f001(DEFAULT, "--flags", FUSE_ON) == []  # --flags over the dump's own


def test_contradictory_flags_and_no_flags_at_all(tmp_path):
    both = _f001(FUSED, "--flags", "--xla_tpu_enable_async_collective_fusion=false")
    (contradiction,) = [f for f in both if "contradictory" in f["message"]]
    # (a module-wide finding, placed at the entry's first instruction)
    from hloscope.parser import load

    (module,) = load(next(FUSED.glob("*after_optimizations.txt")))
    assert contradiction["instruction"] == module.entry.instructions[0].name
    bare = tmp_path / "m.hlo.txt"  # the same module with no flag file beside it
    bare.write_text(next(DEFAULT.glob("*after_optimizations.txt")).read_text())
    assert _f001(bare) == []


def test_the_flags_named_and_where_they_came_from_in_a_folder_named_relatively(tmp_path, monkeypatch):
    """The dump copied into the working folder and linted by its bare file name: its flag
    files are named as they are, and two flags off are both said, one after the other."""
    import shutil

    for f in DEFAULT.iterdir():
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    module = next(p.name for p in tmp_path.glob("*after_optimizations.txt"))
    (f,) = _f001(module, "--flags", "--xla_enable_async_all_gather=false")
    assert f["message"].endswith("(flags from module_0000.jit_model.cl_933746096.tpu_comp_env.txt, "
                                 "module_0000.jit_model.cl_933746096.debug_options, --flags)")
    assert ("xla_tpu_enable_async_collective_fusion_fuse_all_gather is auto (want on); "
            "xla_enable_async_all_gather is off (want auto or on): XLA was not asked") in f["message"]
