"""Inputs that are not HLO text: recognised by their content, converted to HLO text
through jaxlib where it can (StableHLO/MHLO text, binary HloProto), else refused with a
message that says what the file is and how to get HLO text."""

from __future__ import annotations

import gzip
import json
import re

from hloscope.parser.errors import ParseError

HOW_TO_GET_HLO = ("get HLO text with jax.jit(f).lower(...).compile().as_text(), or "
                  "XLA_FLAGS=--xla_dump_to=DIR (its *after_optimizations.txt files)")
_MLIR = re.compile(r"^\s*(?://[^\n]*\n\s*)*(?:#loc\w*\s*=[^\n]*\n\s*)*module\b(?:\s+@[\w.$-]+)?[^\n]*\{",
                   re.M)


def proto_fields(data: bytes) -> dict[int, bytes]:
    """The length-delimited top-level fields of a protobuf message (the last of each
    number); ValueError (protowire.WireError) when the bytes are not a well-formed message."""
    from hloscope.protowire import fields

    return {number: data[v[0]:v[1]] for number, wire, v in fields(data) if wire == 2}


def hlo_proto_text(data: bytes) -> str | None:
    """HLO text of a serialized HloModuleProto, or of an HloProto (XLA's
    --xla_dump_hlo_as_proto files, XProf's *.hlo_proto.pb: field 1 holds the module), read
    by jaxlib; None when it is neither."""
    try:
        from jaxlib import _hlo  # (jaxlib 0.10)
    except ImportError:
        try:
            from jaxlib.xla_client import _xla as _hlo  # (jaxlib 0.8, 0.9)
        except ImportError:
            raise MissingExtra("reading a binary HloProto") from None

    candidates = [data]
    try:
        inner = proto_fields(data).get(1)
        if inner:
            candidates.append(inner)
    except ValueError:
        pass
    for blob in candidates:
        try:
            return _hlo.HloModule.from_serialized_hlo_module_proto(blob).to_string()
        except Exception:  # noqa: BLE001 - jaxlib says no: try the next reading
            continue
    return None


def stablehlo_text(text: str, path: str) -> str:
    """HLO text of a StableHLO/MHLO module, through jaxlib's own converter."""
    try:
        from jaxlib._jax import mlir
    except ImportError:
        raise ParseError(f"this is a StableHLO/MHLO module; {needs_jax('converting it to HLO')}",
                         path, 1, 1) from None

    try:
        computation = mlir.mlir_module_to_xla_computation(text, use_tuple_args=False,
                                                          return_tuple=False)
    except Exception as e:  # noqa: BLE001 - jaxlib's message says what failed
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ParseError(f"StableHLO/MHLO module that jaxlib cannot convert to HLO ({detail}); "
                         f"{HOW_TO_GET_HLO}", path, 1, 1) from None
    return computation.as_hlo_text()


def needs_jax(what: str) -> str:
    """The message of a feature that needs the `jax` extra."""
    return f"{what} needs jax and jaxlib: pip install 'hloscope[jax]'"


class MissingExtra(ImportError):
    """A feature whose extra is not installed (the message names the extra)."""

    def __init__(self, what: str) -> None:
        super().__init__(needs_jax(what))


def _refuse(kind: str, advice: str, path: str) -> ParseError:
    return ParseError(f"this is {kind}, not HLO text; {advice}", path, 1, 1)


def classify_binary(data: bytes, path: str) -> str:
    """HLO text for binary input jaxlib reads (an HloProto), else a ParseError that says
    what the bytes are."""
    if data[:2] == b"\x1f\x8b":
        try:
            inner = gzip.decompress(data[: 64 << 20])
        except (OSError, EOFError):
            raise _refuse("a damaged gzip file", HOW_TO_GET_HLO, path) from None
        return classify_text_or_binary(inner, path)
    if path.endswith(".xplane.pb"):
        raise _refuse("a profile (XSpace)", "read it with `hloscope profile FILE --hlo MODULE.txt`", path)
    if "memory-usage-report" in path:
        raise _refuse("XLA's memory-usage report (protobuf)",
                      "the memory command reads XLA's memory reports; lint the module's "
                      "*after_optimizations.txt", path)
    try:
        text = hlo_proto_text(data)
    except MissingExtra as e:
        raise ParseError(f"a binary file (a serialized HloProto?): {e}", path, 1, 1) from None
    if text is not None:
        return text
    raise _refuse("a binary file that jaxlib cannot read as an HloProto", HOW_TO_GET_HLO, path)


def classify_text_or_binary(data: bytes, path: str) -> str:
    if b"\0" in data[: 1 << 16] or data[:2] == b"\x1f\x8b":
        return classify_binary(data, path)
    return classify_text(data.decode("utf-8", errors="replace"), path)


def classify_text(text: str, path: str) -> str:
    """The text itself when it may be HLO; HLO text converted from StableHLO; else a
    ParseError naming what the file is (buffer assignment, memory report, XProf JSON)."""
    head = text[:4096].lstrip()
    if head.startswith("HloModule") or head.startswith("ENTRY"):
        return text
    if head.startswith("BufferAssignment:"):
        raise _refuse("XLA's buffer-assignment dump",
                      "the memory command will read it beside its module; lint the module's "
                      "*after_optimizations.txt", path)
    if head.startswith("Memory Space:") or "Total bytes:" in head[:200]:
        raise _refuse("XLA's memory-usage report",
                      "the memory command will read it beside its module; lint the module's "
                      "*after_optimizations.txt", path)
    if head.startswith("{") and _xprof_json(text) is not None:
        raise _refuse(_xprof_json(text), "XProf's tool output holds no HLO program; "
                      f"{HOW_TO_GET_HLO} (`hloscope profile` reads the profile itself)", path)
    if _MLIR.match(text[:65536]):
        return stablehlo_text(text, path)
    if _is_python(head, path):
        raise _refuse("Python source", "an HLO module starts with 'HloModule NAME' (dump one with "
                      "XLA_FLAGS=--xla_dump_to=DIR, or jax.jit(f).lower(...).compile().as_text())", path)
    return text


_PYTHON_START = ("import ", "from ", "def ", "class ", "#!", "# ", "@")


def _is_python(head: str, path: str) -> bool:
    """A Python file given in place of HLO (any other text goes to the parser: XLA also
    accepts a bare computation, with no HloModule or ENTRY)."""
    first = head.split("\n", 1)[0]
    return path.endswith(".py") or first.startswith(_PYTHON_START) or first[:3] in ('"""', "'''")


def _xprof_json(text: str) -> str | None:
    """What XProf tool output a JSON text is (op_profile, hlo_stats, ...), or None."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if isinstance(doc, dict) and ("byProgram" in doc or "byCategory" in doc):
        return "XProf op_profile JSON"
    if isinstance(doc, dict) and "cols" in doc and "rows" in doc:
        return "an XProf table (JSON)"
    if isinstance(doc, dict) and "traceEvents" in doc:
        return "a trace (Trace Event JSON)"
    return "a JSON file" if isinstance(doc, (dict, list)) else None
