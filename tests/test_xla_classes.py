"""What XLA's own tests write and XLA accepts (#38), class by class: HAND-WRITTEN minimal
modules, each held to jaxlib's parser (the oracle): the same verdict, and on acceptance the
same root shape (XLA prints what it inferred)."""

from __future__ import annotations

import re

import pytest

from hloscope.parser import ParseError, parse

CASES = {
    # a scalar literal for an array: XLA sets the first element, zeros the rest
    "scalar_literal_for_array": ("ROOT c = f32[3,3] constant(1)", True),
    "scalar_literal_for_s32_vector": ("ROOT c = s32[5] constant(7)", True),
    "scalar_literal_for_empty_array": ("ROOT c = f32[0] constant(1)", False),
    "too_few_elements": ("ROOT c = s32[2,2] constant({1,2})", False),
    # u64 takes a negative value and wraps; other unsigned types do not
    "u64_minus_one": ("ROOT c = u64[] constant(-1)", True),
    "u64_vector_minus_one": ("ROOT c = u64[2] constant({-1, 2})", True),
    "u8_minus_one": ("ROOT c = u8[2] constant({-1, 255})", False),
    "u32_minus_one": ("ROOT c = u32[] constant(-1)", False),
    # NaN payloads
    "bf16_nan_payload": ("ROOT c = bf16[2] constant({-nan(0x7f), 1})", True),
    "f32_nan_payload": ("ROOT c = f32[2] constant({nan(0x7fff), 1})", True),
    "f16_nan_payload": ("ROOT c = f16[2] constant({-nan(0x1), 1})", True),
    # a pad without its shape: XLA infers lo + hi + d + (d - 1) x interior
    "pad_inferred": ("p = f32[4,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = pad(p, z), padding=1_2x0_0_1", True),
    # a comparison's direction and type are enums: XLA refuses others
    "compare_bad_direction": ("a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=FOO", False),
    "compare_bad_type": ("a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=GT, type=BOGUS", False),
    "compare_total_order": ("a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=GT, type=TOTALORDER", True),
    "pad_negative": ("p = f32[6] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = pad(p, z), padding=-1_-2", True),
}


def _module(body: str) -> str:
    return f"HloModule m\nENTRY e {{\n  {body}\n}}\n"


def _xla(text: str):
    from jaxlib import _hlo

    try:
        return _hlo.hlo_module_from_text(text)
    except Exception:  # noqa: BLE001 - XLA's verdict: rejected
        return None


def _root_shape(printed: str) -> str:
    m = re.search(r"ROOT \S+ = (\S+)", printed)
    return re.sub(r"\{[^}]*\}$", "", m.group(1))  # (without the layout)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("strict", [False, True])
def test_the_verdict_and_shape_are_xlas(name, strict):
    body, accepted = CASES[name]
    text = _module(body)
    xla = _xla(text)
    assert (xla is not None) == accepted, "the case's label disagrees with XLA"
    if not accepted:
        with pytest.raises(ParseError):
            parse(text, name, strict=strict)
        return
    (m,) = parse(text, name, strict=strict)
    assert str(m.entry.root.shape) == _root_shape(xla.to_string())
    assert len(m.entry.instructions) == len(re.findall(r"(?m)^\s+(?:ROOT )?%\S+ = ", xla.to_string()))
