"""Decode a custom call's body into MLIR, through jaxlib's own MLIR bindings.

`tpu_custom_call` keeps its kernel in backend_config.custom_call_config.body:
base64 of MLIR bytecode in the versioned `stable_mosaic` form. We parse it with
the Mosaic TPU dialect registered and run Mosaic's deserialization pass
(`mosaic-serde{serialize=false}`), as jax does when it upgrades a kernel. Without
the dialect we fall back to the generic form with unregistered dialects allowed.
Every failure is a DecodeError with a reason, never a crash.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from hloscope.ir import Instruction
from hloscope.parser.fast.compact import accepted

MAX_BODY_BYTES = 64 << 20  # decoded kernel size we accept (a bound on base64 input)
TEXT_IR_KEYS = ("ir", "mlir", "ttir", "triton_ir", "module")


class DecodeError(ValueError):
    pass


@dataclass
class KernelBody:
    target: str
    config: dict[str, Any]  # custom_call_config without the body
    text: str | None  # MLIR (or other IR) text
    module: Any = None  # jaxlib.mlir.ir.Module when decoded through the bindings
    context: Any = None
    generic: bool = False  # printed without the Mosaic dialect registered
    notes: list[str] = field(default_factory=list)


def _backend_config(instr: Instruction) -> dict[str, Any]:
    raw = instr.raw_attr("backend_config")
    if raw is None or (not raw[1:].lstrip().startswith(('"', "}")) and accepted("backend_config", raw)):
        return {}  # none, or an MLIR attribute dictionary (a GPU custom call's): no JSON config
    config = instr.attr("backend_config")
    if isinstance(config, dict):
        return config
    if isinstance(config, str) and config.strip().startswith("{"):
        import json

        try:
            return json.loads(config)
        except ValueError:
            return {}
    return {}


def decode_custom_call(instr: Instruction, max_bytes: int = MAX_BODY_BYTES) -> KernelBody:
    """Decode in this process (see hloscope.mlir.worker for the isolated route)."""
    return decode_config(str(instr.attr("custom_call_target", "")), _backend_config(instr), max_bytes)


def decode_config(target: str, config: dict[str, Any], max_bytes: int = MAX_BODY_BYTES) -> KernelBody:
    if target == "tpu_custom_call":
        ccc = config.get("custom_call_config")
        if not isinstance(ccc, dict) or "body" not in ccc:
            raise DecodeError("tpu_custom_call without custom_call_config.body")
        meta = {k: v for k, v in ccc.items() if k != "body"}
        body = ccc["body"]
        if not isinstance(body, str):
            raise DecodeError("custom_call_config.body is not a string")
        if len(body) * 3 // 4 > max_bytes:
            raise DecodeError(f"kernel body larger than {max_bytes} bytes")
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as e:
            raise DecodeError(f"custom_call_config.body is not valid base64 ({e})") from None
        return _decode_mosaic(raw, target, meta)
    for key in TEXT_IR_KEYS:  # Triton and other textual IR carried in backend_config
        value = config.get(key)
        if isinstance(value, str) and value.strip():
            return KernelBody(target, {k: v for k, v in config.items() if k != key}, value)
    raise DecodeError(f"custom call target {target!r} carries no kernel body hloscope can decode")


def _decode_mosaic(raw: bytes, target: str, meta: dict[str, Any]) -> KernelBody:
    if not raw.startswith(b"ML\xefR"):
        raise DecodeError("kernel body is not MLIR bytecode (bad magic)")
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir.passmanager import PassManager
    except ImportError:
        raise DecodeError("decoding a Mosaic kernel needs jax and jaxlib: pip install "
                          "'hloscope[jax]'") from None
    notes: list[str] = []
    ctx = _context(notes)
    try:
        with ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            module = ir.Module.parse(raw)
            generic = True
            if not notes:
                try:
                    PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(module.operation)
                    generic = False
                except Exception as e:  # noqa: BLE001 - an old or future kernel version
                    notes.append(_too_new(module, e))
            # Printed as bytes: a corrupt body can hold invalid UTF-8, and the bindings'
            # str() would abort the process on it (a C++ exception, not a Python one).
            raw_asm = module.operation.get_asm(binary=True, print_generic_op_form=generic)
    except Exception as e:  # noqa: BLE001 - bytecode from a newer MLIR, truncated body, ...
        raise DecodeError(f"cannot read kernel bytecode: {str(e).splitlines()[0]}") from None
    try:
        text = raw_asm.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("kernel bytecode holds text that is not UTF-8 (corrupt body)") from None
    return KernelBody(target, meta, text, module=module, context=ctx, generic=generic, notes=notes)


def _too_new(module, e: Exception) -> str:
    """Why a stored Mosaic kernel did not deserialize: its IR version and the jaxlib here."""
    try:
        import jaxlib

        here = f"jaxlib {jaxlib.__version__}"
    except Exception:  # noqa: BLE001
        here = "the jaxlib here"
    try:
        version = f"Mosaic IR version {module.operation.attributes['stable_mosaic.version'].value}"
    except Exception:  # noqa: BLE001 - no version attribute: say so plainly
        version = "Mosaic IR"
    return (f"Mosaic deserialization failed: the kernel's {version} is more than {here} can read "
            f"(a newer jax compiled it; decode it with that jax) ({str(e).splitlines()[0]}); "
            "showing the stored (stable_mosaic) form")


def _context(notes: list[str]):
    from jaxlib.mlir import ir

    try:
        from jax._src.interpreters import mlir as jax_mlir
        from jax._src.lib import tpu

        ctx = jax_mlir.make_ir_context()
        tpu.register_dialect(ctx)
        return ctx
    except Exception as e:  # noqa: BLE001 - fall back to generic printing
        notes.append(f"Mosaic TPU dialect not available ({e}); printing the generic form")
        return ir.Context()
