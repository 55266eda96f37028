"""Custom-call MLIR: decoding real Pallas kernels, their summaries, and bad bodies."""

from __future__ import annotations

import base64
import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.mlir import DecodeError, decode_custom_call
from hloscope.mlir.kernels import kernels
from hloscope.parser import load, parse

runner = CliRunner()
MATMUL = FIXTURES / "tpu" / "pallas_matmul_v5e.hlo.txt"
FLASH = FIXTURES / "tpu" / "flash_attention_v5e.hlo.txt"


def only_kernel(path):
    (m,) = load(path)
    (k,) = kernels(m)
    return k


def test_decoded_mlir_holds_the_matmul_and_its_memrefs():
    k = only_kernel(MATMUL)
    text = k.body.text
    assert not k.body.generic and k.error is None
    assert "tpu.matmul" in text
    assert "memref<256x512xbf16, #tpu.memory_space<vmem>>" in text
    assert "memref<256x256xf32, #tpu.memory_space<vmem>>" in text  # the scratch accumulator


def test_summary_equals_what_the_pallas_code_declared():
    # generate.py: grid (m//bm, n//bn, k//bk) = (4, 4, 2); blocks (256,512), (512,256) -> (256,256)
    s = only_kernel(MATMUL).summary
    assert s.grid == [4, 4, 2] and s.grid_steps == 32
    assert s.dimension_semantics == ["parallel", "parallel", "arbitrary"]
    assert [b.block for b in s.operands] == [[256, 512], [512, 256], [256, 256]]
    assert [b.role for b in s.operands] == ["input", "input", "output"]
    assert [b.shape for b in s.operands] == [[1024, 1024]] * 3
    assert {b.memory_space for b in s.operands} == {"vmem"}
    assert [(b.shape, b.dtype) for b in s.scratch] == [([256, 256], "f32")]
    assert s.ops["tpu.matmul"] == 1
    assert s.vmem_bytes == 2 * (256 * 512 * 2 + 512 * 256 * 2 + 256 * 256 * 2) + 256 * 256 * 4


def test_jax_flash_attention_kernel():
    k = only_kernel(FLASH)
    s = k.summary
    assert s.name == "_flash_attention_kernel"
    # block_q = block_k_major = 512 over a 1024 sequence, 4 heads, batch 1
    assert s.grid == [1, 4, 2, 2]
    assert [b.block for b in s.operands] == [[1, 1, 512, 128]] * 4
    assert s.dimension_semantics[-1] == "arbitrary" and len(s.scratch) == 3
    assert k.body.config["cost_estimate"]["flops"] == "2160066560"
    assert "math.exp" in s.ops


def test_kernel_json_contract():
    res = runner.invoke(app, ["kernel", str(MATMUL), "--format", "json"])
    assert res.exit_code == 0, res.output
    (kern,) = json.loads(res.stdout)["kernels"]
    keys = {"instruction", "computation", "target", "name", "grid", "operands", "scratch",
            "dimension_semantics", "ops", "vmem_bytes", "mlir"}
    assert keys <= set(kern)
    assert kern["target"] == "tpu_custom_call" and kern["grid"] == [4, 4, 2]
    assert all({"shape", "memory_space"} <= set(o) for o in kern["operands"])
    assert "tpu.matmul" in kern["mlir"]


def test_kernel_text_and_instruction_filter():
    res = runner.invoke(app, ["kernel", str(MATMUL), "--mlir", "-i", "matmul.1"])
    assert "kernel kernel: grid [4, 4, 2] (32 steps)" in res.stdout and "func.func @kernel" in res.stdout
    res = runner.invoke(app, ["kernel", str(MATMUL), "-i", "nope"])
    assert res.exit_code == 2 and "no custom-call named %nope" in res.output


def _with_body(body: str, target: str = "tpu_custom_call") -> str:
    # HAND-WRITTEN minimal module: a custom call with the given kernel body
    config = json.dumps({"custom_call_config": {"body": body}})
    return (f'HloModule m\nENTRY e {{\n  p = f32[8,128]{{1,0}} parameter(0)\n'
            f'  ROOT c = f32[8,128]{{1,0}} custom-call(p), custom_call_target="{target}", '
            f"backend_config={config}\n}}\n")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("not base64!!", "not valid base64"),
        (base64.b64encode(b"hello world").decode(), "bad magic"),
        (base64.b64encode(b"ML\xefR" + b"\x00garbage" * 20).decode(), "cannot read kernel bytecode"),
    ],
    ids=["base64", "magic", "bytecode"],
)
def test_bad_kernel_bodies_are_reported_not_raised(body, reason):
    (m,) = parse(_with_body(body))
    (k,) = kernels(m)
    assert k.summary is None and reason in k.error
    res = runner.invoke(app, ["kernel", "-", "--format", "json"])  # '-' is not a file
    assert res.exit_code == 2


def test_truncated_real_body_is_reported(tmp_path):
    (m,) = load(MATMUL)
    text = MATMUL.read_text()
    body = json.loads(m.entry.root.attrs["backend_config"])["custom_call_config"]["body"]
    cut = body[: len(body) // 2]
    cut = cut[: len(cut) // 4 * 4]
    f = tmp_path / "cut.hlo.txt"
    f.write_text(text.replace(body, cut))
    res = runner.invoke(app, ["kernel", str(f)])
    assert res.exit_code == 0 and "body: not decoded: cannot read kernel bytecode" in res.stdout


def test_other_custom_calls_say_what_they_are():
    (m,) = parse('HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n'
                 '  ROOT c = f32[4]{0} custom-call(p), custom_call_target="my_op"\n}\n')
    (k,) = kernels(m)
    assert k.target == "my_op" and "carries no kernel body" in k.error
    with pytest.raises(DecodeError):
        decode_custom_call(m.entry.root)


def test_triton_style_textual_ir_is_shown():
    config = json.dumps({"name": "kern", "ir": "tt.func @kern() { tt.return }"})
    text = ('HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n'
            f'  ROOT c = f32[4]{{0}} custom-call(p), custom_call_target="__triton", backend_config={config}\n}}\n')
    (m,) = parse(text)
    body = decode_custom_call(m.entry.root)
    assert body.text.startswith("tt.func @kern") and body.config == {"name": "kern"}


def test_only_mosaic_bodies_give_the_rules_a_kernel():
    """The rules' kernels (RuleContext.kernels) are those with a summary, which only a
    decoded Mosaic body gives: on every fixture and the corpus's GPU dumps (cuDNN,
    TransformerEngine, TopK custom calls), each kernel with a summary is a tpu_custom_call,
    and the rules' list equals the summarized ones (the rules skip decoding where no
    tpu_custom_call is)."""
    from conftest import corpus_files, fixture_files

    from hloscope.parser.errors import ParseError
    from hloscope.rules.base import RuleContext

    summarized = calls = 0
    for path in fixture_files() + [p for p in corpus_files() if "benchmark" in str(p)]:
        try:
            modules = load(path)
        except ParseError:
            continue
        for m in modules:
            if not any(i.opcode == "custom-call" for i in m.instructions()):
                continue
            every = kernels(m)
            calls += len(every)
            mine = [k for k in every if k.summary is not None]
            assert all(k.target == "tpu_custom_call" for k in mine), path
            rules = RuleContext(m).kernels
            assert [k.instruction.name for k in rules] == [k.instruction.name for k in mine], path
            summarized += len(mine)
    assert summarized >= 5 and calls > summarized + 100, (summarized, calls)
