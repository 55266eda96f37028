"""The public Python API: README's example runs as printed; results agree with the CLI's
JSON (one source of truth); load() takes paths, text and jax objects."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

import hloscope
from hloscope.cli.app import app

ROOT = FIXTURES.parent


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Python API", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs_as_printed(tmp_path):
    done = subprocess.run([sys.executable, "-c", _readme_example()], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    (m,) = hloscope.load_all(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    n = sum(len(c.instructions) for c in m.module.computations)
    fusions = sum(i.opcode == "fusion" for i in m.module.instructions())
    assert lines[0] == f"{n} instructions; {fusions} fusions"
    assert lines[1].startswith("slowest op: ")
    assert re.fullmatch(r"\d+ custom-call kernels; \d+ graph nodes", lines[-2]), lines
    measured = re.fullmatch(r"measured: (\d+) instructions; busiest (\S+) ([\d.]+) us", lines[-1])
    assert measured and int(measured.group(1)) > 0, lines[-1]


def test_load_takes_a_path_text_or_a_compiled_jax_object():
    import jax
    import jax.numpy as jnp

    path = FIXTURES / "cpu" / "mlp_cpu.hlo.txt"
    by_path = hloscope.load(path)
    by_str = hloscope.load(str(path))
    by_text = hloscope.load(path.read_text())
    assert by_path.name == by_str.name == by_text.name
    assert by_text.module.path == "<string>"

    compiled = jax.jit(lambda a, b: jnp.tanh(a @ b)).lower(jnp.ones((8, 16)), jnp.ones((16, 4))).compile()
    from_jax = hloscope.load(compiled)
    lowered = hloscope.load(jax.jit(lambda a: a * 2).lower(jnp.ones(4)))  # compiled for us
    # XLA's own parser of the same text is the oracle for what was loaded
    from jaxlib import _hlo

    xla = _hlo.hlo_module_from_text(compiled.as_text())
    assert from_jax.name == xla.name
    assert {i.opcode for i in from_jax.module.instructions()} >= {"dot", "tanh"} or \
        any(i.opcode == "fusion" for i in from_jax.module.instructions())
    assert lowered.module.entry is not None
    with pytest.raises(TypeError, match="takes a path"):
        hloscope.load(42)
    with pytest.raises(hloscope.ParseError):
        hloscope.load("HloModule broken\n\nENTRY e {\n  x = f32[2 parameter(0)\n}\n")


def test_api_results_are_the_cli_json():
    runner = CliRunner()
    path = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"
    m = hloscope.load(path)
    cli_stats = json.loads(runner.invoke(app, ["stats", "--format", "json", str(path)]).stdout)
    assert cli_stats["modules"] == [m.stats().to_dict()]
    cli_roof = json.loads(runner.invoke(app, ["roofline", "--chip", "v5p", "--format", "json",
                                              str(path)]).stdout)
    (record,) = cli_roof["modules"]
    assert record.pop("chip")["key"] == "tpu-v5p"
    assert record.pop("step") == json.loads(json.dumps(m.step_time(chip="v5p").to_dict()))
    assert record == json.loads(json.dumps(m.roofline(chip="v5p").to_dict()))
    cli_lint = json.loads(runner.invoke(app, ["lint", "--chip", "v5p", "--format", "json",
                                              str(path)]).stdout)
    api_lint = m.lint(chip="v5p").to_dict()
    assert [f["code"] + f["instruction"] for f in cli_lint["findings"]] == \
        [f["code"] + f["instruction"] for f in api_lint["findings"]]


def test_import_hloscope_is_lazy():
    code = "import sys, hloscope; print(sorted(m for m in sys.modules if m.startswith('hloscope')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['hloscope', 'hloscope._version']"
    assert "load" in dir(hloscope) and callable(hloscope.load)
    with pytest.raises(AttributeError):
        hloscope.no_such_name  # noqa: B018
