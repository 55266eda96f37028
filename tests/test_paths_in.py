"""Every command takes what users have (#35 point 1): a file, a .gz, `-` for standard input,
a directory or --xla_dump_to folder; `--module NAME|ID` picks; a one-module command told of
several says which there are and how to pick. Real dump folders (fixtures/dumps/)."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

import hloscope
from hloscope.cli.app import app
from hloscope.parser.files import _stdin

runner = CliRunner()
DUMPS = FIXTURES / "dumps"
ONE = DUMPS / "fsdp_async_fusion_v5p"  # one module (module_0000.jit_model...)
MLP = FIXTURES / "cpu" / "mlp_cpu.hlo.txt"


@pytest.fixture(autouse=True)
def _fresh_stdin():
    _stdin.clear()
    yield
    _stdin.clear()


def _json(*args, stdin=None):
    res = runner.invoke(app, [*map(str, args), "--format", "json"], input=stdin)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("command", ["roofline", "sharding", "parse", "kernel"])
def test_a_dump_folder_is_read_by_every_analysis_command(command):
    """The folder's one module, from its after-optimizations text (not its before, not
    XLA's reports), as the file itself gives it."""
    text = next(ONE.glob("*after_optimizations.txt"))
    assert _json(command, ONE) == _json(command, text)


@pytest.mark.parametrize("command", ["roofline", "sharding", "parse", "stats", "memory", "lint"])
def test_standard_input_and_gzip_read_as_the_file(command, tmp_path):
    packed = tmp_path / "mlp.hlo.txt.gz"
    packed.write_bytes(gzip.compress(MLP.read_bytes()))
    from_file = runner.invoke(app, [command, str(MLP)]).stdout
    from_stdin = runner.invoke(app, [command, "-"], input=MLP.read_text()).stdout
    _stdin.clear()
    from_gz = runner.invoke(app, [command, str(packed)]).stdout
    assert from_file.strip()
    assert from_stdin.replace("<stdin>", str(MLP)) == from_file
    assert from_gz.replace(str(packed), str(MLP)) == from_file


def test_module_picks_by_name_or_id_and_one_module_commands_say_how():
    res = runner.invoke(app, ["graph", str(DUMPS), "-o", "unused.svg"])
    assert res.exit_code == 2
    assert "5 modules (jit_model (id 0)" in res.output and "--module NAME or ID" in res.output
    names = [m["name"] for m in _json("roofline", DUMPS, "--module", "jit_step")["modules"]]
    assert names == ["jit_step"]
    missing = runner.invoke(app, ["roofline", str(DUMPS), "--module", "jit_nope"])
    assert missing.exit_code == 2 and "no module 'jit_nope'; it holds jit_model" in missing.output


def test_the_api_loads_folders_and_picks():
    assert [p.name for p in hloscope.load_all(DUMPS)] == ["jit_model", "jit_model", "jit_step",
                                                          "jit_grads", "jit_f"]
    assert hloscope.load(ONE).name == "jit_model"
    assert hloscope.load(DUMPS, module="jit_grads").name == "jit_grads"
    with pytest.raises(ValueError, match="5 modules in the input"):
        hloscope.load(DUMPS)
