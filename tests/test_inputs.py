"""Inputs that are not HLO text, all real files (fixtures/inputs/ is written by
fixtures/generate.py --inputs from a real CPU compile and its XLA dump; the op_profile JSON
is XProf's, from the corpus): converted through jaxlib where it can, else refused with a
message that says what the file is."""

from __future__ import annotations

import pytest
from conftest import CORPUS, FIXTURES, needs_corpus

from hloscope.parser import ParseError, load

INPUTS = FIXTURES / "inputs"
REFERENCE = INPUTS / "tanh_matmul.hlo.txt"  # XLA's own text dump of the same compile


def _opcodes(modules) -> list[str]:
    return sorted(i.opcode for m in modules for i in m.instructions())


def test_a_binary_hloproto_reads_as_the_module_xla_dumped_as_text():
    (from_proto,) = load(INPUTS / "tanh_matmul.after_optimizations.hlo.pb")
    (from_text,) = load(REFERENCE)
    assert from_proto.name == from_text.name
    assert _opcodes([from_proto]) == _opcodes([from_text])
    assert [c.name for c in from_proto.computations] == [c.name for c in from_text.computations]


def test_stablehlo_text_is_converted_by_jaxlib_and_analysed_as_a_pre_optimization_module():
    from jaxlib._jax import mlir

    (m,) = load(INPUTS / "tanh_matmul.stablehlo.mlir")
    text = (INPUTS / "tanh_matmul.stablehlo.mlir").read_text()
    oracle = mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
    assert m.name == oracle.name()
    assert {"dot", "tanh", "reduce"} <= set(_opcodes([m]))
    assert not any(i.opcode == "fusion" for i in m.instructions())  # not optimized yet


@pytest.mark.parametrize(("name", "says"), [
    ("tanh_matmul.buffer-assignment.txt", "this is XLA's buffer-assignment dump, not HLO text"),
    ("tanh_matmul.memory-usage-report.txt", "this is XLA's memory-usage report, not HLO text"),
])
def test_xla_memory_reports_are_refused_with_a_pointer(name, says):
    with pytest.raises(ParseError) as err:
        load(INPUTS / name)
    assert says in err.value.message and "memory command" in err.value.message
    assert (err.value.line, err.value.column) == (1, 1)


@needs_corpus
def test_xprof_op_profile_json_is_named_for_what_it_is():
    path = CORPUS / "xprof" / "integration_golden" / "data_tpu-training_op_profile_tpu_training.json.gz"
    with pytest.raises(ParseError, match="this is XProf op_profile JSON, not HLO text"):
        load(path)


@needs_corpus
def test_a_profile_is_pointed_at_the_profile_command():
    path = next((CORPUS / "xprof").rglob("*.xplane.pb"))
    with pytest.raises(ParseError, match="hloscope profile"):
        load(path)


def test_the_cli_says_so_in_one_located_line():
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    res = CliRunner().invoke(app, ["lint", str(INPUTS / "tanh_matmul.buffer-assignment.txt"),
                                   str(REFERENCE)])
    assert res.exit_code == 2
    assert f"{INPUTS / 'tanh_matmul.buffer-assignment.txt'}:1:1: error: this is XLA's " \
           "buffer-assignment dump" in res.stderr
    assert "Traceback" not in res.stdout + res.stderr


def test_a_python_file_or_plain_text_is_refused_as_not_hlo(tmp_path):
    """#35: a .py file got "unexpected string"; it is now told for what it is, located, exit 2."""
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    root = FIXTURES.parent
    res = CliRunner().invoke(app, ["stats", str(root / "examples" / "mlp.py")])
    assert res.exit_code == 2 and "mlp.py:1:1: error: this is Python source, not HLO text" in res.output
    plain = tmp_path / "notes.txt"
    plain.write_text("hello world\n")
    res = CliRunner().invoke(app, ["lint", str(plain)])  # (to the parser: XLA takes bare computations)
    assert res.exit_code == 2 and "notes.txt:1:7: error:" in res.output and "Traceback" not in res.output


def test_a_kernel_lowered_by_the_lowest_jax_of_the_range_decodes():
    """fixtures/inputs/scale_kernel_jax080.mlir: a Pallas kernel jax 0.8.0 lowered
    (fixtures/lowest_jax.py): this environment's jaxlib reads its Mosaic bytecode, and the
    summary is the kernel's as written: a 2-step grid of (512, 128) f32 blocks."""
    from hloscope.mlir.kernels import kernels
    from hloscope.parser import load

    path = FIXTURES / "inputs" / "scale_kernel_jax080.mlir"
    assert "TUzvUgFNTElSMjI" in path.read_text()  # the body: MLIR bytecode of MLIR 22 (jax 0.8)
    (m,) = load(path)
    (k,) = [k for k in kernels(m) if k.target == "tpu_custom_call"]
    assert k.summary is not None, k.error
    assert list(k.summary.grid) == [2]
    assert [(b.role, list(b.block)) for b in k.summary.operands] == [("input", [512, 128]), ("output", [512, 128])]
