"""What XLA checks of a constant's literal beyond its syntax (strict mode): as many
elements per dimension as the shape says, and each value within its element type."""

from __future__ import annotations

import re

from hloscope._speed import regex_cache
from hloscope.ir import Shape

_TOKEN = regex_cache.compile(r"\s*(\.\.\.|[{}(),]|[^\s{}(),]+)")
# (largest finite value, spacing of values there): a printed value is in range when it
# rounds to a finite value, below max + spacing / 2 (XLA prints f32's max as 3.40282347e+38,
# a little above it).
_FLOAT_MAX = {"f16": (65504.0, 2.0 ** 5), "bf16": (3.3895313892515355e38, 2.0 ** 120),
              "f32": (3.4028234663852886e38, 2.0 ** 104), "f64": (1.7976931348623157e308, 0.0),
              "f8e4m3fn": (448.0, 32.0), "f8e5m2": (57344.0, 2.0 ** 13), "f8e4m3": (240.0, 16.0),
              "f8e3m4": (15.5, 0.5), "f8e4m3fnuz": (240.0, 16.0),
              "f8e5m2fnuz": (57344.0, 2.0 ** 13), "f8e4m3b11fnuz": (30.0, 2.0)}
_SPECIAL = {"inf", "-inf", "nan", "-nan"}
# mantissa bits of the types whose NaNs carry a payload (1 .. 2^bits - 1); the f8 types
# with "fn"/"fnuz" in their names have one NaN and take no payload
_MANTISSA = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52, "f8e5m2": 2, "f8e4m3": 3, "f8e3m4": 4}
_COMPONENT = {"c64": "f32", "c128": "f64"}


def _int_range(element_type: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"([su])(\d+)", element_type)
    if m is None:  # (pred takes any integer, as XLA's parser does)
        return (-(1 << 63), (1 << 64) - 1) if element_type == "pred" else None
    bits = int(m.group(2))
    if m.group(1) == "u" and bits == 64:  # (XLA reads it as s64 and wraps: -1 is 2^64 - 1)
        return (-(1 << 63), (1 << 64) - 1)
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if m.group(1) == "s" else (0, (1 << bits) - 1)


def _value_problem(token: str, element_type: str) -> str | None:
    if element_type == "pred" and token in ("true", "false"):
        return None
    ints = _int_range(element_type)
    if ints is not None:
        try:
            value = int(token)
        except ValueError:
            return f"expects integer for primitive type {element_type}, not {token}"
        if not ints[0] <= value <= ints[1]:
            return f"value {value} is out of range for literal's primitive type {element_type}"
        return None
    limit = _FLOAT_MAX.get(element_type)
    if limit is not None and "(" in token and token.split("(")[0] in ("nan", "-nan"):
        return _payload_problem(token, element_type)
    if limit is None or token.split("(")[0] in _SPECIAL:
        return None
    try:
        value = float(token)
    except ValueError:
        return f"expects a floating point value for primitive type {element_type}, not {token}"
    largest, spacing = limit
    if abs(value) >= largest + spacing / 2 and abs(value) > largest:
        return f"value {token} is out of range for literal's primitive type {element_type}"
    return None


def _payload_problem(token: str, element_type: str) -> str | None:
    text = token[token.index("(") + 1:].rstrip(")")
    try:
        payload = int(text, 0)
    except ValueError:
        return f"expects a NaN payload like nan(0x7f), not {token}"
    bits = _MANTISSA.get(element_type)
    if bits is None or not 0 < payload < 1 << bits:
        return f"tries to set NaN payload {text} to a literal with type {element_type}"
    return None


def _payloads_joined(tokens: list[str]) -> list[str]:
    """`-nan`, `(`, `0x7f`, `)` -> `-nan(0x7f)`: a NaN with its payload is one value."""
    out: list[str] = []
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        if tok in ("nan", "-nan") and k + 3 < len(tokens) + 1 and tokens[k + 1:k + 2] == ["("] \
                and ")" in tokens[k + 2:k + 4]:
            end = tokens.index(")", k + 2)
            out.append(tok + "(" + "".join(tokens[k + 2:end]) + ")")
            k = end + 1
            continue
        out.append(tok)
        k += 1
    return out


def literal_problem(shape: Shape, text: str) -> str | None:
    """Why XLA would reject `text` as a literal of `shape` (None: it would not)."""
    if shape.is_tuple and shape.elements and not text.lstrip().startswith("("):
        return "expects '(' in front of tuple elements"
    if not shape.is_array or shape.element_type in ("token", "opaque"):
        return None
    tokens = _payloads_joined([t for t in _TOKEN.findall(text) if t != ","])
    component = _COMPONENT.get(shape.element_type)
    if component is not None:  # (each part of each (real, imaginary) pair in its float type)
        return next((problem for tok in tokens if tok not in ("{", "}", "(", ")", "...")
                     for problem in [_value_problem(tok, component)] if problem), None)
    rank = len(shape.dims)
    if rank and len(tokens) == 1 and tokens[0] not in "{}":
        # one value for an array: XLA sets the first element to it and the rest to zero
        if shape.num_elements == 0:
            return f"expects an empty literal {{}} for {shape}, not {text.strip()!r}"
        return _value_problem(tokens[0], shape.element_type)
    if rank == 0:
        if len(tokens) != 1:
            return f"expects one value for a scalar {shape}, not {text.strip()!r}"
        return _value_problem(tokens[0], shape.element_type)
    seen = [0] * rank
    level = 0
    for tok in tokens:
        if tok == "{":
            level += 1
            if level > rank:
                return f"expects nested array in rank {rank}, but sees larger"
            if level > 1:
                seen[level - 2] += 1
                if seen[level - 2] > shape.dims[level - 2]:
                    return f"expects {shape.dims[level - 2]} elements in dimension {level - 2}, but sees more"
        elif tok == "}":
            if level == 0:
                return "unexpected '}' in the literal"
            if seen[level - 1] != shape.dims[level - 1]:
                return (f"expects {shape.dims[level - 1]} elements in dimension {level - 1}, "
                        f"but sees {seen[level - 1]}")
            seen[level - 1] = 0
            level -= 1
        elif tok == "...":
            if level != 1:
                return f"expects `...` at nest level 1, but sees it at nest level {level}"
            seen[0] = shape.dims[0]
        else:
            if level != rank:
                return f"expects nested array in rank {rank}, but sees {level}"
            seen[rank - 1] += 1
            if seen[rank - 1] > shape.dims[rank - 1]:
                return f"expects {shape.dims[rank - 1]} elements on the minor-most dimension, but sees more"
            problem = _value_problem(tok, shape.element_type)
            if problem is not None:
                return problem
    return None if level == 0 else "unclosed '{' in the literal"
