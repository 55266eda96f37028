"""FLOPs of GPU library calls, from what their custom calls state.

XLA's GPU backend rewrites matmuls, convolutions and attention into calls of cuBLAS, cuDNN and
TransformerEngine; their FLOPs are not in any cost_estimate, but their configs say what they
compute:

- cuBLAS / cuBLASLt gemm (`__cublas$gemm`, `__cublas$lt$matmul[$f8]`): the backend config's
  `dot_dimension_numbers` (inside `gemm_backend_config` in newer XLA): 2 x output elements x
  the contracted size of the lhs, as for a dot. With no config (hand-written test modules),
  only a plain [M,K] x [K,N] -> [M,N] is read from its shapes.
- cuDNN convolutions (`__cudnn$conv*`): printed with `window` and `dim_labels` like a
  convolution: 2 x output elements x (input features per group x the filter's spatial size).
- cuDNN fused attention (`__cudnn$fmha*`): the config's `intermediate_tensor_shape` is the
  score tensor [B, H, Sq, Skv]; with head dims Dqk (of q) and Dv (of v), forward is
  2·B·H·Sq·Skv·(Dqk + Dv) (QK^T and PV; 4·B·H·S²·D for one D), backward
  2·B·H·Sq·Skv·(3·Dqk + 2·Dv) (S recomputed, dP, dV, dQ, dK); one exponential per score;
  half of each with a causal `mask_type` (the kernel skips the masked tiles).
- TransformerEngine attention (`te_fused_attn_{forward,backward}_ffi`): the same, from the
  config's input_batch, attn_heads, q_max_seqlen, kv_max_seqlen, qk_head_dim, v_head_dim.

A library call's trailing u8/s8 result is its workspace: memory, not traffic (ops.py).
"""

from __future__ import annotations

import re
from math import prod

from hloscope._speed import regex_cache
from hloscope.ir import Instruction, Shape

GEMM = ("__cublas$gemm", "__cublas$lt$matmul")
_LABELS = regex_cache.compile(r"^(\w+)_(\w+)->(\w+)$")


def is_library_call(instr: Instruction) -> bool:
    return str(instr.attr("custom_call_target") or "").startswith(("__cublas", "__cudnn", "te_fused_attn"))


def library_flops(instr: Instruction, operands: list[Shape]) -> tuple[float, float] | None:
    """(FLOPs, transcendentals) of a GPU library call, or None when it is not one (or its
    config does not say enough: then the caller reports the cost as unknown)."""
    target = str(instr.attr("custom_call_target") or "")
    out = result(instr)
    if target.startswith(GEMM):
        return _gemm(instr, operands, out)
    if target.startswith("__cudnn$conv"):
        return _conv(instr, operands, out)
    if target.startswith("__cudnn$fmha"):
        return _fmha(instr, operands, backward="Backward" in target)
    if target.startswith("te_fused_attn"):
        return _te(instr, backward="backward" in target)
    return None


def result(instr: Instruction) -> Shape:
    """The call's output: its result, or the first element of its (output, ..., workspace)."""
    shape = instr.shape
    return shape.elements[0] if shape.is_tuple and shape.elements else shape


def workspace(instr: Instruction) -> list[int]:
    """Indices of the result tuple's workspace elements (trailing u8/s8 buffers)."""
    shape = instr.shape
    if not shape.is_tuple or not is_library_call(instr) or len(shape.elements) < 2:
        return []
    last = len(shape.elements) - 1
    return [last] if shape.elements[last].element_type in ("u8", "s8") else []


def _config(instr: Instruction, key: str) -> dict | None:
    """The backend config as a dict: typed by the reader, or decoded when XLA printed it as a
    quoted JSON string (older dumps)."""
    config = instr.config_with(key)
    if isinstance(config, str):
        import json

        try:
            config = json.loads(config)
        except ValueError:
            return None
    return config if isinstance(config, dict) else None


def gemm_precision(instr: Instruction) -> tuple[str, str | None] | None:
    """(precision, algorithm or None) a library gemm states in gemm_backend_config's
    precision_config (`operand_precision: ["HIGHEST","HIGHEST"]`, `algorithm:
    "ALG_DOT_TF32_TF32_F32"`); None when it states none. On an H100, XLA's cuBLAS gemm of
    f32 at DEFAULT runs a TF32 kernel and at HIGHEST an f32 one, 7.8x slower (fixtures/h100)."""
    config = _config(instr, "precision_config")
    if config is None:
        return None
    precision = config.get("gemm_backend_config", config).get("precision_config")
    if not isinstance(precision, dict):
        return None
    from hloscope.cost.precision import precision_of

    operands = precision.get("operand_precision")
    level = precision_of(",".join(str(p) for p in operands) if isinstance(operands, list) else None)
    algorithm = str(precision.get("algorithm") or "")
    algorithm = algorithm[4:].lower() if algorithm.startswith("ALG_") and algorithm != "ALG_UNSET" else None
    return level, algorithm


def _ints(values) -> list[int]:
    return [int(v) for v in values or []]


def _gemm(instr: Instruction, operands: list[Shape], out: Shape) -> tuple[float, float] | None:
    config = _config(instr, "dot_dimension_numbers")
    if config is None:  # (none stated: only a plain [M,K] x [K,N] -> [M,N] tells itself)
        if len(operands) >= 2 and operands[0].rank == operands[1].rank == out.rank == 2 \
                and operands[0].dims[1] == operands[1].dims[0] \
                and out.dims == (operands[0].dims[0], operands[1].dims[1]):
            return 2.0 * out.num_elements * operands[0].dims[1], 0.0
        return None
    dims = config.get("gemm_backend_config", config).get("dot_dimension_numbers")
    if not isinstance(dims, dict):
        return None
    lhs = operands[0]
    contracting = _ints(dims.get("lhs_contracting_dimensions"))
    if any(not 0 <= d < lhs.rank for d in contracting):
        return None
    k = prod(lhs.dims[d] for d in contracting) if contracting else 1
    return 2.0 * out.num_elements * k, 0.0


def _conv(instr: Instruction, operands: list[Shape], out: Shape) -> tuple[float, float] | None:
    labels = _LABELS.match(str(instr.attrs.get("dim_labels", "")))
    if labels is None or len(operands) < 2:
        return None
    kernel_labels, rhs = labels.group(2), operands[1]
    if "i" not in kernel_labels or rhs.rank not in (len(kernel_labels), len(kernel_labels) + 1):
        return None
    per_output = prod(size for label, size in zip(kernel_labels, rhs.dims) if label not in "o")
    if rhs.rank == len(kernel_labels) + 1:  # (int8 NCHW_VECT_C: input features split, the rest last)
        per_output *= rhs.dims[-1]
    return 2.0 * out.num_elements * per_output, 0.0


def _attention(b: int, h: int, sq: int, skv: int, dqk: int, dv: int, backward: bool) -> tuple[float, float]:
    scores = b * h * sq * skv
    if backward:
        return 2.0 * scores * (3 * dqk + 2 * dv), float(scores)
    return 2.0 * scores * (dqk + dv), float(scores)


def _fmha(instr: Instruction, operands: list[Shape], backward: bool) -> tuple[float, float] | None:
    config = _config(instr, "cudnn_fmha_backend_config")
    inner = config.get("cudnn_fmha_backend_config") if config is not None else None
    shape = inner.get("intermediate_tensor_shape", {}) if isinstance(inner, dict) else {}
    dims = _ints(shape.get("dimensions")) if isinstance(shape, dict) else []
    if len(dims) != 4 or len(operands) < 3:
        return None
    b, h, sq, skv = dims
    dqk, dv = operands[0].dims[-1], operands[2].dims[-1]
    flops, exps = _attention(b, h, sq, skv, dqk, dv, backward)
    if isinstance(inner, dict) and str(inner.get("mask_type", "")).upper().startswith("CAUSAL"):
        # (a causal mask: the kernel skips the tiles above the diagonal, half the scores)
        return flops / 2, exps / 2
    return flops, exps


def _te(instr: Instruction, backward: bool) -> tuple[float, float] | None:
    text = instr.raw_attr("backend_config") or ""
    found = {k: int(v) for k, v in re.findall(r"(\w+) = (-?\d+) : i64", text)}
    keys = ("input_batch", "attn_heads", "q_max_seqlen", "kv_max_seqlen", "qk_head_dim", "v_head_dim")
    if not all(k in found for k in keys):
        return None
    return _attention(*(found[k] for k in keys), backward)
