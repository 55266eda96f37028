"""GPU library calls part by part (cost/library.py): FLOPs of cuBLAS gemms, cuDNN attention
and what a gemm states of its precision, on HAND-WRITTEN minimal custom calls (labelled as
such: each states one thing the real calls of fixtures/h100 state, with sizes chosen so that
every dimension is told apart). Expected values are worked out by hand from the formulas in
the module's docstring: 2 x output elements x contracted size for a gemm; 2·B·H·Sq·Skv·(Dqk +
Dv) forward, 2·B·H·Sq·Skv·(3·Dqk + 2·Dv) backward, one exponential per score, half of each
when causal."""

from __future__ import annotations

import pytest

from hloscope.cost.library import gemm_precision, library_flops
from hloscope.parser import parse


def _call(shape: str, operands: list[str], target: str, config: str = "") -> tuple:
    params = ", ".join(f"p{i}: {s}" for i, s in enumerate(operands))
    lines = "\n".join(f"  %p{i} = {s} parameter({i})" for i, s in enumerate(operands))
    names = ", ".join(f"%p{i}" for i in range(len(operands)))
    cfg = f", backend_config={config}" if config else ""
    text = (f"HloModule m\n\nENTRY %e ({params}) -> {shape} {{\n{lines}\n"
            f"  ROOT %c = {shape} custom-call({names}), custom_call_target=\"{target}\"{cfg}\n}}\n")
    (m,) = parse(text)
    call = m.entry.by_name["c"]
    return call, [m.entry.by_name[f"p{i}"].shape for i in range(len(operands))]


def _flops(shape, operands, target, config=""):
    call, shapes = _call(shape, operands, target, config)
    return library_flops(call, shapes)


# ------------------------------------------------------------------ cuBLAS gemms

def test_a_plain_gemm_without_a_config_is_read_from_its_shapes():
    # [M,K] x [K,N] -> [M,N], M=3, K=5, N=7
    assert _flops("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm") == (2.0 * 3 * 7 * 5, 0.0)
    # with a workspace beside the output
    assert _flops("(f32[3,7], s8[64])", ["f32[3,5]", "f32[5,7]"], "__cublas$lt$matmul") == (210.0, 0.0)


@pytest.mark.parametrize(("out", "lhs", "rhs"), [
    ("f32[3,7]", "f32[3,5]", "f32[4,7]"),      # K of the lhs is not K of the rhs
    ("f32[7,3]", "f32[3,5]", "f32[5,7]"),      # the output is not [M, N]
    ("f32[5,7]", "f32[3,5]", "f32[5,7]"),      # nor [K, N]
    ("f32[3,5]", "f32[3,5]", "f32[5,7]"),      # nor [M, K]
    ("f32[2,3,7]", "f32[2,3,5]", "f32[2,5,7]"),  # batched: the config must say how
    ("f32[3,7]", "f32[3,5]", "f32[2,5,7]"),    # ranks apart
])
def test_without_a_config_nothing_but_a_plain_gemm_is_guessed(out, lhs, rhs):
    assert _flops(out, [lhs, rhs], "__cublas$gemm") is None


def _dims(contracting: list[int], batch: list[int] = ()) -> str:
    c = ",".join(f'"{d}"' for d in contracting)
    b = ",".join(f'"{d}"' for d in batch)
    return ('{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":[' + c
            + '],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[' + b
            + '],"rhs_batch_dimensions":[]}}}')


def test_a_gemm_config_names_the_contracted_dims():
    # batched [2,3,5] x [2,5,7] -> [2,3,7]: contracted 5 -> 2*42*5
    assert _flops("f32[2,3,7]", ["f32[2,3,5]", "f32[2,5,7]"], "__cublas$gemm",
                  _dims([2], [0])) == (2.0 * 42 * 5, 0.0)
    # the lhs's dim 1 contracted (a transposed lhs [K, M]): K = 5
    assert _flops("f32[3,7]", ["f32[5,3]", "f32[5,7]"], "__cublas$gemm", _dims([0])) == (2.0 * 21 * 5, 0.0)
    # two contracted dims: K = 4 x 5
    assert _flops("f32[3,7]", ["f32[3,4,5]", "f32[4,5,7]"], "__cublas$gemm", _dims([1, 2])) == (2.0 * 21 * 20, 0.0)
    # none contracted: an outer product, 1 multiply-add per output
    assert _flops("f32[3,7]", ["f32[3]", "f32[7]"], "__cublas$gemm", _dims([])) == (2.0 * 21, 0.0)


def test_a_gemm_config_naming_a_dim_the_lhs_lacks_is_unknown():
    assert _flops("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm", _dims([2])) is None
    assert _flops("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm", _dims([-1])) is None
    # an older dump's config at the top level (no gemm_backend_config around it)
    top = '{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"]}}'
    assert _flops("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm", top) == (210.0, 0.0)
    assert _flops("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm", '{"dot_dimension_numbers":"x"}') is None


# ------------------------------------------------------------------ a gemm's precision

def _precision(inner: str, wrapped: bool = True) -> tuple | None:
    config = ('{"gemm_backend_config":{"precision_config":' + inner + '}}' if wrapped
              else '{"precision_config":' + inner + '}')
    call, _ = _call("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm", config)
    return gemm_precision(call)


def test_gemm_precision_reads_the_operands_level_and_the_algorithm():
    assert _precision('{"operand_precision":["HIGHEST","HIGHEST"],"algorithm":"ALG_UNSET"}') == ("highest", None)
    assert _precision('{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"}') == ("default", None)
    assert _precision('{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_DOT_TF32_TF32_F32"}') \
        == ("default", "dot_tf32_tf32_f32")
    assert _precision('{"operand_precision":["HIGHEST","HIGHEST"]}') == ("highest", None)  # no algorithm
    assert _precision('{"algorithm":"ALG_DOT_BF16_BF16_F32_X3"}') == ("default", "dot_bf16_bf16_f32_x3")
    assert _precision('{"algorithm":"DOT_F32"}') == ("default", None)  # not XLA's ALG_ form: not read
    assert _precision('{"operand_precision":["HIGHEST","HIGHEST"]}', wrapped=False) == ("highest", None)


def test_a_gemm_stating_no_precision_has_none():
    assert _precision('"x"') is None
    call, _ = _call("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "__cublas$gemm")
    assert gemm_precision(call) is None


# ------------------------------------------------------------------ cuDNN attention

def _fmha_config(dims: list[int], mask: str | None = None) -> str:
    d = ",".join(f'"{x}"' for x in dims)
    m = f',"mask_type":"{mask}"' if mask else ""
    return ('{"cudnn_fmha_backend_config":{"intermediate_tensor_shape":{"element_type":"BF16","dimensions":['
            + d + ']}' + m + '}}')


B, H, SQ, SKV, DQK, DV = 2, 3, 16, 32, 8, 4
_Q, _K, _V = (f"bf16[{B},{SQ},{H},{DQK}]", f"bf16[{B},{SKV},{H},{DQK}]", f"bf16[{B},{SKV},{H},{DV}]")
_OUT = f"(bf16[{B},{SQ},{H},{DV}], u8[0])"
SCORES = B * H * SQ * SKV


def test_attention_forward_and_backward_flops():
    fwd = _flops(_OUT, [_Q, _K, _V], "__cudnn$fmhaSoftmax", _fmha_config([B, H, SQ, SKV]))
    assert fwd == (2.0 * SCORES * (DQK + DV), float(SCORES))
    bwd = _flops(_OUT, [_Q, _K, _V], "__cudnn$fmhaSoftmaxBackward", _fmha_config([B, H, SQ, SKV]))
    assert bwd == (2.0 * SCORES * (3 * DQK + 2 * DV), float(SCORES))


def test_a_causal_mask_halves_the_work():
    causal = _flops(_OUT, [_Q, _K, _V], "__cudnn$fmhaSoftmax", _fmha_config([B, H, SQ, SKV], "CAUSAL"))
    assert causal == (SCORES * (DQK + DV), SCORES / 2)
    padding = _flops(_OUT, [_Q, _K, _V], "__cudnn$fmhaSoftmax", _fmha_config([B, H, SQ, SKV], "PADDING"))
    assert padding == (2.0 * SCORES * (DQK + DV), float(SCORES))


def test_attention_without_its_score_shape_is_unknown():
    for config in ("", '{"cudnn_fmha_backend_config":"x"}', '{"cudnn_fmha_backend_config":{}}',
                   '{"cudnn_fmha_backend_config":{"intermediate_tensor_shape":"x"}}',
                   _fmha_config([B, H, SQ])):
        assert _flops(_OUT, [_Q, _K, _V], "__cudnn$fmhaSoftmax", config) is None, config
    assert _flops(_OUT, [_Q, _K], "__cudnn$fmhaSoftmax", _fmha_config([B, H, SQ, SKV])) is None


def test_not_a_library_call():
    assert _flops("f32[3,7]", ["f32[3,5]", "f32[5,7]"], "my_kernel") is None


# ------------------------------------------------------------------ cuDNN convolutions

def _conv(rhs: str, labels: str = "bf01_oi01->bf01", operands: int = 2):
    shapes = ["bf16[2,4,8,8]", rhs][:operands]
    params = ", ".join(f"p{i}: {s}" for i, s in enumerate(shapes))
    lines = "\n".join(f"  %p{i} = {s} parameter({i})" for i, s in enumerate(shapes))
    names = ", ".join(f"%p{i}" for i in range(len(shapes)))
    lab = f", dim_labels={labels}" if labels else ""
    text = (f"HloModule m\n\nENTRY %e ({params}) -> (bf16[2,16,6,6], u8[0]) {{\n{lines}\n"
            f"  ROOT %c = (bf16[2,16,6,6], u8[0]) custom-call({names}), window={{size=3x3}}{lab}, "
            f'custom_call_target="__cudnn$convForward"\n}}\n')
    (m,) = parse(text)
    return library_flops(m.entry.root, [m.entry.by_name[f"p{i}"].shape for i in range(len(shapes))])


def test_a_cudnn_convolution_is_2_x_outputs_x_input_features_x_window():
    out = 2 * 16 * 6 * 6
    assert _conv("bf16[16,4,3,3]") == (2.0 * out * 4 * 9, 0.0)
    # int8 NCHW_VECT_C: the input features split in 4, the 4 last in the filter too
    assert _conv("bf16[16,1,3,3,4]") == (2.0 * out * 1 * 9 * 4, 0.0)


@pytest.mark.parametrize(("rhs", "labels", "operands"), [
    ("bf16[16,4,3,3]", "", 2),                    # no dim_labels
    ("bf16[16,4,3,3]", "bf01_oi01->bf01", 1),     # no filter
    ("bf16[16,4,3,3]", "bf01_o01->bf01", 2),      # no input-feature label
    ("bf16[16,4,3]", "bf01_oi01->bf01", 2),       # the filter's rank fits not its labels
    ("bf16[16,4,3,3,4,1]", "bf01_oi01->bf01", 2),
])
def test_a_cudnn_convolution_that_says_too_little_is_unknown(rhs, labels, operands):
    assert _conv(rhs, labels, operands) is None


# ------------------------------------------------------------------ TransformerEngine attention

def _te(target: str, drop: str = "") -> tuple | None:
    keys = {"input_batch": B, "attn_heads": H, "q_max_seqlen": SQ, "kv_max_seqlen": SKV,
            "qk_head_dim": DQK, "v_head_dim": DV, "mask_type": 3}
    cfg = ", ".join(f"{k} = {v} : i64" for k, v in sorted(keys.items()) if k != drop)
    text = (f"HloModule m\n\nENTRY %e (q: {_Q}) -> {_Q} {{\n  %q = {_Q} parameter(0)\n"
            f'  ROOT %a = {_Q} custom-call(%q), custom_call_target="{target}", '
            f"api_version=API_VERSION_TYPED_FFI, backend_config={{{cfg}, is_training = true}}\n}}\n")
    (m,) = parse(text)
    return library_flops(m.entry.root, [m.entry.by_name["q"].shape])


def test_transformer_engine_attention_from_its_config():
    assert _te("te_fused_attn_forward_ffi") == (2.0 * SCORES * (DQK + DV), float(SCORES))
    assert _te("te_fused_attn_backward_ffi") == (2.0 * SCORES * (3 * DQK + 2 * DV), float(SCORES))
    assert _te("te_fused_attn_forward_ffi", drop="v_head_dim") is None


# ------------------------------------------------------------------ workspaces

@pytest.mark.parametrize(("shape", "target", "expected"), [
    ("(f32[3,7], s8[64])", "__cublas$lt$matmul", [1]),           # a gemm's output and its workspace
    ("(bf16[2,4,8,16], f32[2,4,8], u8[32])", "__cudnn$fmhaSoftmax", [2]),  # with the softmax stats
    ("(bf16[2,4,8,16], f32[2,4,8])", "__cudnn$fmhaSoftmax", []),  # stats, no workspace
    ("(f32[3,7], s8[64])", "tpu_custom_call", []),               # a kernel's s8 result is its output
    ("(s8[64])", "__cublas$lt$matmul", []),                       # nothing beside it: no workspace
    ("f32[3,7]", "__cublas$gemm", []),
])
def test_the_workspace_is_a_library_calls_trailing_byte_buffer(shape, target, expected):
    from hloscope.cost.library import workspace

    call, _ = _call(shape, ["f32[3,5]", "f32[5,7]"], target)
    assert workspace(call) == expected
