"""GPU library calls costed from what they state (hloscope.cost.library): cuBLAS/cuBLASLt
gemms, cuDNN convolutions and fused attention, TransformerEngine attention. Oracles: FLOPs
derived by hand from the shapes (2·M·N·K, the convolution formula, 4·B·H·S²·D for attention
forward) and XLA's own cost_analysis of the same matmul compiled as a plain dot on CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS

from hloscope.cost.library import is_library_call
from hloscope.cost.ops import CostModel
from hloscope.parser import load

GPU = CORPUS / "gpu" / "xla-tests"
needs_gpu_corpus = pytest.mark.skipif(not GPU.is_dir(), reason="corpus not present")


def _calls(path: Path, target: str | None = None):
    for m in load(path):
        model = CostModel(m)
        for i in m.instructions():
            if i.opcode == "custom-call" and is_library_call(i) and (target is None or i.attr("custom_call_target") == target):
                yield i, model.cost(i), model


@needs_gpu_corpus
def test_every_library_call_in_the_corpus_has_flops():
    paths = [p for p in sorted(GPU.glob("*.hlo")) if p.name != "xla_pdl.hlo"]  # (two modules in one file)
    paths += sorted((CORPUS / "alpa-gpu-dumps").glob("*after_optimizations.txt"))
    paths += sorted((CORPUS / "xla-benchmark-hlo").glob("*.hlo"))
    seen = 0
    for path in paths:
        for instr, cost, _ in _calls(path):
            seen += 1
            assert cost.flops > 0 and not cost.unknown, (path.name, instr.name, cost.unknown)
    assert seen >= 200


@needs_gpu_corpus
def test_gemm_flops_equal_xla_counting_the_same_dot():
    """Alpa's cuBLAS gemm f32[64,1024] x f32[1024,16] (its backend config a quoted JSON
    string): 2 x 64 x 16 x 1024, which is what XLA's cost_analysis counts for that dot
    compiled on CPU."""
    import jax
    import jax.numpy as jnp

    path = CORPUS / "alpa-gpu-dumps" / "module_0022.func_shard_parallel.10.sm_7.0_gpu_after_optimizations.txt"
    instr, cost, _ = next(_calls(path, "__cublas$gemm"))
    xla = jax.jit(jnp.dot).lower(jnp.ones((64, 1024)), jnp.ones((1024, 16))).compile().cost_analysis()
    assert cost.flops == 2 * 64 * 16 * 1024 == xla["flops"]


@needs_gpu_corpus
def test_cublaslt_workspace_is_not_traffic():
    """f32[2,512] x f32[512,512] with a bias epilogue; the s8[4194304] workspace is scratch."""
    instr, cost, _ = next(_calls(GPU / "xla_cublaslt_epilogue.hlo", "__cublas$lt$matmul"))
    assert cost.flops == 2 * 2 * 512 * 512
    assert cost.bytes < 4194304 and cost.bytes_written == 2 * (2 * 512 * 4)


@needs_gpu_corpus
def test_cudnn_conv_flops_by_the_convolution_formula():
    """int8 conv, NCHW_VECT_C: input s8[4,2,48,48,32] (64 channels as 2 x 32), filter
    s8[64,2,3,3,32], output 64 channels at 48x48, 'same' padding: 2 * N*H*W*Cout * Cin*KH*KW."""
    instr, cost, _ = next(_calls(GPU / "xla_cudnn_conv.hlo"))
    assert cost.flops == 2 * 4 * 48 * 48 * 64 * (64 * 3 * 3)


@needs_gpu_corpus
def test_cudnn_attention_forward_and_backward():
    """B=2, H=2, S=512, D=64: forward 4·B·H·S²·D, backward 10·B·H·S²·D (five matmuls of one
    size), one exponential per score."""
    found = {str(i.attr("custom_call_target")): c for i, c, _ in _calls(GPU / "xla_cudnn_fmha_fwd_bwd_bias.hlo")}
    scores = 2 * 2 * 512 * 512
    assert found["__cudnn$fmhaScaleBiasSoftmax"].flops == 4 * scores * 64
    assert found["__cudnn$fmhaScaleBiasSoftmaxBackward"].flops == 10 * scores * 64
    assert found["__cudnn$fmhaScaleBiasSoftmax"].transcendentals == scores


def test_transformer_engine_attention_from_its_config():
    """A TE forward call as MaxText prints it (B=1, 32 heads, GQA, S=8192, D=128; reduced by
    hand to one call): 2·B·H·Sq·Skv·(Dqk + Dv) = 4·B·H·S²·D."""
    text = """HloModule m, is_scheduled=true
ENTRY e {
  q = bf16[1,8192,32,128]{3,2,1,0} parameter(0)
  k = bf16[1,8192,8,128]{3,2,1,0} parameter(1)
  v = bf16[1,8192,8,128]{3,2,1,0} parameter(2)
  ROOT te = (bf16[1,8192,32,128]{3,2,1,0}, f32[1,32,8192,1]{3,2,1,0}, u8[288]{0}) custom-call(q, k, v), custom_call_target="te_fused_attn_forward_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={attn_heads = 32 : i64, input_batch = 1 : i64, is_training = true, kv_max_seqlen = 8192 : i64, num_gqa_groups = 8 : i64, q_max_seqlen = 8192 : i64, qk_head_dim = 128 : i64, v_head_dim = 128 : i64}
}
"""
    from hloscope.parser import parse

    (m,) = parse(text)
    te = m.entry.root
    cost = CostModel(m).cost(te)
    assert cost.flops == 4 * 1 * 32 * 8192 * 8192 * 128
    assert cost.bytes_written == 8192 * 32 * 128 * 2 + 32 * 8192 * 4  # not the u8 workspace


@pytest.mark.parametrize(("shape", "transform"), [((8, 16), "fft"), ((4, 1024), "fft"), ((4, 64, 64), "fft2"),
                                                  ((4, 1024), "rfft"), ((4, 1024), "irfft")])
def test_fft_flops_equal_xla_cost_analysis(shape, transform):
    """XLA's own count of real CPU compiles of each transform (jnp.fft)."""
    import jax
    import jax.numpy as jnp

    import hloscope

    dtype = jnp.float32 if transform == "rfft" else jnp.complex64
    compiled = jax.jit(getattr(jnp.fft, transform)).lower(jnp.ones(shape, dtype)).compile()
    module = hloscope.load(compiled).module
    (fft,) = [i for i in module.instructions() if i.opcode == "fft"]
    assert CostModel(module).cost(fft).flops == compiled.cost_analysis()["flops"] > 0


def test_causal_cudnn_attention_from_a_real_h100_compile():
    """jax.nn.dot_product_attention(implementation="cudnn", is_causal=True), B=1, S=8192, H=8,
    D=128, compiled deviceless for an H100 (fixtures/rules/H011/cudnn_attention_h100): one
    fMHA call whose config says mask_type CAUSAL; the kernel skips the masked tiles, so half
    of 4·B·H·S²·D, and half an exponential per score."""
    from conftest import FIXTURES

    from hloscope.cost.ops import CostModel
    from hloscope.parser import load

    (m,) = load(FIXTURES / "rules" / "H011" / "cudnn_attention_h100.hlo.txt")
    (call,) = [i for i in m.instructions() if i.opcode == "custom-call"]
    assert str(call.attr("custom_call_target")).startswith("__cudnn$fmha")
    assert '"mask_type":"CAUSAL"' in (call.raw_attr("backend_config") or "").replace(" ", "")
    cost = CostModel(m).compute(call)
    b, s, h, d = 1, 8192, 8, 128
    assert cost.flops == 4 * b * h * s * s * d / 2
    assert cost.transcendentals == b * h * s * s / 2
