"""`hloscope compile`: a real deviceless TPU compile of examples/mlp.py (libtpu, which the
test extra installs), its dump read by lint and memory, and memory equal to XLA's own
memory_analysis() written beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.compile import CompileError, have_libtpu, parse_arg, parse_mesh

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
MLP = ROOT / "examples" / "mlp.py"
needs_libtpu = pytest.mark.skipif(not have_libtpu(), reason="libtpu not installed (pip install 'hloscope[tpu]')")


@needs_libtpu
def test_compile_an_example_and_lint_and_measure_the_dump(tmp_path):
    out = tmp_path / "dump"
    result = runner.invoke(app, ["compile", f"{MLP}:train_step", "--topology", "v5e:2x2",
                                 "--mesh", "data:4", "--args-from", f"{MLP}:example_args", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert "HloModule jit_train_step, after_optimizations" in result.output  # linted
    xla = json.loads((out / "memory_analysis.json").read_text())
    cost = json.loads((out / "cost_analysis.json").read_text())
    assert cost["flops"] > 0
    mem = runner.invoke(app, ["memory", str(out), "--format", "json"])
    (rec,) = json.loads(mem.stdout)["modules"]
    hbm = xla["argument_size_in_bytes"] + xla["output_size_in_bytes"] - xla["alias_size_in_bytes"] + xla["temp_size_in_bytes"]
    assert rec["hbm_bytes"] == pytest.approx(hbm, rel=0.01)
    # XLA's own figures of the compile, read back from the folder and shown beside ours
    assert rec["xla_memory_analysis"] == {k: int(v) for k, v in xla.items()}
    text = runner.invoke(app, ["memory", str(out)]).stdout
    assert "beside XLA's memory_analysis() of this compile" in text and "peak_memory_in_bytes" in text
    lint = runner.invoke(app, ["lint", str(out), "--format", "json", "--exit-zero"])
    assert [m["name"] for m in json.loads(lint.stdout)["modules"]] == ["jit_train_step"]


@needs_libtpu
def test_a_v5p_compile_is_costed_as_v5p_by_every_command(tmp_path):
    """The folder records the topology's chip; roofline, memory, sharding and lint read it
    back without --chip (they used to cost it as v5e)."""
    out = tmp_path / "v5p"
    result = runner.invoke(app, ["compile", f"{MLP}:train_step", "--topology", "v5p:2x2x1", "--no-lint",
                                 "--mesh", "data:4", "--args-from", f"{MLP}:example_args", "-o", str(out)])
    assert result.exit_code == 0, result.output
    record = json.loads((out / "hloscope.json").read_text())
    assert record["chip"] == "tpu-v5p" and record["topology"] == "v5p:2x2x1"
    dump = next(out.glob("*after_optimizations.txt"))
    for command in ("roofline", "memory"):
        (rec,) = json.loads(runner.invoke(app, [command, str(dump), "--format", "json"]).stdout)["modules"]
        assert rec["chip"]["key"] == "tpu-v5p", command
    (rec,) = json.loads(runner.invoke(app, ["sharding", str(dump), "--format", "json"]).stdout)["modules"]
    assert rec["chip"]["chip"] == "tpu-v5p" and not rec["chip"]["assumed"]
    lint = json.loads(runner.invoke(app, ["lint", str(out), "--format", "json", "--exit-zero"]).stdout)
    assert any("chip TPU v5p: recorded by hloscope compile" in n for n in lint["summary"]["notes"])


@needs_libtpu
def test_compile_with_args_on_the_command_line_shards_them(tmp_path):
    out = tmp_path / "d"
    result = runner.invoke(app, ["compile", f"{MLP}:train_step", "--mesh", "data:4", "--no-lint",
                                 "--args", "bf16[1024,4096]", "--args", "bf16[4096,1024]",
                                 "--args", "bf16[256,1024]@data", "--args", "bf16[256,1024]@data,_",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = next(out.glob("*after_optimizations.txt")).read_text()
    assert "bf16[64,1024]" in text  # the batch of 256 split over 4 devices
    bad = runner.invoke(app, ["compile", f"{MLP}:train_step", "--mesh", "data:4", "--no-lint",
                              "--args", "bf16[8]@model", "-o", str(out)])
    assert bad.exit_code == 2 and "no mesh axis 'model'" in bad.output


def test_bad_requests_are_said_plainly(tmp_path, monkeypatch):
    assert parse_arg("bf16[8,128]@data,_") == ("bfloat16", (8, 128), ("data", None))
    assert parse_mesh("data:2,model:2", 4) == ((2, 2), ("data", "model"))
    for bad in ("bf17[8]", "f32[8]@a,b"):
        with pytest.raises(CompileError):
            parse_arg(bad)
    with pytest.raises(CompileError, match="needs 8 devices"):
        parse_mesh("data:8", 4)
    result = runner.invoke(app, ["compile", f"{MLP}:train_step", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "--args" in result.output
    if have_libtpu():
        result = runner.invoke(app, ["compile", f"{MLP}:no_such", "--args", "f32[8]", "-o", str(tmp_path)])
        assert result.exit_code == 2 and "has no 'no_such'" in result.output
    monkeypatch.setattr("hloscope.compile.have_libtpu", lambda: False)
    result = runner.invoke(app, ["compile", f"{MLP}:train_step", "--args", "f32[8]", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "pip install 'hloscope[tpu]'" in result.output


_WITH_HELPERS = '''
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

def step(w, x):
    return jnp.tanh(x @ w)

def args(mesh):
    key = jax.random.key(0)                                  # compiles PRNG helpers
    w = jax.random.normal(key, (512, 512), jnp.bfloat16)     # and an initialiser
    rep = NamedSharding(mesh, P())
    return (jax.ShapeDtypeStruct(w.shape, w.dtype, sharding=rep),
            jax.ShapeDtypeStruct((128, 512), jnp.bfloat16, sharding=rep))
'''


@needs_libtpu
def test_compile_lints_only_the_function_named(tmp_path):
    """The args function compiles helper programs (PRNG, initialiser) into the same dump
    folder: lint reports on jit_step alone and says which others were compiled."""
    prog = tmp_path / "prog.py"
    prog.write_text(_WITH_HELPERS)
    out = tmp_path / "dump"
    result = runner.invoke(app, ["compile", f"{prog}:step", "--topology", "v5e:2x2", "--mesh", "x:4",
                                 "--args-from", f"{prog}:args", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    linted = [line for line in result.output.splitlines() if ": HloModule " in line]
    assert linted and all("HloModule jit_step," in line for line in linted), linted
    assert "also compiled (not linted):" in result.output
    whole = json.loads(runner.invoke(app, ["lint", str(out), "--format", "json", "--exit-zero"]).stdout)
    assert len(whole["modules"]) > 1  # the helpers' dumps stay in the folder


def _help_examples() -> list[list[str]]:
    import shlex

    text = runner.invoke(app, ["compile", "--help"], terminal_width=1000).stdout
    return [shlex.split(line.strip())[1:] for line in text.splitlines()
            if line.strip().startswith("hloscope compile ")]


@needs_libtpu
@pytest.mark.parametrize("n", [0, 1])
def test_the_help_examples_run(tmp_path, n, monkeypatch):
    monkeypatch.chdir(ROOT)
    example = _help_examples()[n]
    example[example.index("-o") + 1] = str(tmp_path / "out")
    result = runner.invoke(app, example)
    assert result.exit_code in (0, 1), result.output
    assert "HloModule jit_train_step, after_optimizations" in result.output


_UNSHARDED = '''
import jax, jax.numpy as jnp

def block(w, x):
    return jnp.tanh(x @ w)

def example_args():
    return (jax.ShapeDtypeStruct((512, 512), jnp.bfloat16), jax.ShapeDtypeStruct((128, 512), jnp.bfloat16))
'''


@needs_libtpu
def test_unsharded_arguments_compile_for_the_tpu_not_the_cpu(tmp_path):
    """An args function returning plain ShapeDtypeStructs: placed on the mesh, replicated; the
    dump is a TPU one (no *.cpu_after_optimizations.txt), costed on the topology's chip."""
    prog = tmp_path / "prog.py"
    prog.write_text(_UNSHARDED)
    out = tmp_path / "dump"
    result = runner.invoke(app, ["compile", f"{prog}:block", "--args-from", f"{prog}:example_args",
                                 "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert not list(out.glob("*cpu_after_optimizations*"))
    assert list(out.glob("*.after_optimizations.txt"))
    assert "chip TPU v5e: recorded by hloscope compile" in result.output


@needs_libtpu
@pytest.mark.parametrize(("args", "says"), [
    (["--topology", "v5x:2x2", "--args", "bf16[512,512]", "--args", "bf16[128,512]"],
     "error: bad --topology 'v5x:2x2': Invalid TPU external name"),
    (["--args", "bf16[512,512]"], "TypeError: block() missing 1 required positional argument"),
    (["--args", "bf16[512,512]", "--args", "bf16[128,256]"], "prog.py:5 in block: return jnp.tanh(x @ w)"),
])
def test_a_failed_compile_is_one_line_and_the_users_frames(tmp_path, args, says):
    prog = tmp_path / "prog.py"
    prog.write_text(_UNSHARDED)
    result = runner.invoke(app, ["compile", f"{prog}:block", *args, "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert says in result.output
    assert "Traceback" not in result.output and "libtpu" not in result.output
    assert "site-packages" not in result.output
