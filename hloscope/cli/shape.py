"""`hloscope shape`: logical vs padded size of one shape under its tiled layout."""

from __future__ import annotations

from typing import Annotated

import typer

from hloscope.cli.common import Format, FormatOpt, emit, fail


def shape(
    text: Annotated[str, typer.Argument(help="A shape as HLO prints it, e.g. 'bf16[3,5]{1,0:T(8,128)(2,1)}'.")],
    format: FormatOpt = Format.text,
) -> None:
    """Logical vs padded size of a shape under its tiled layout (the scaling-book exercise).

    Example: hloscope shape 'bf16[3,5]{1,0:T(8,128)(2,1)}'
    """
    from lark.exceptions import UnexpectedInput

    from hloscope.cost.layout import shape_facts
    from hloscope.parser import parse_shape
    from hloscope.report.shape import shape_text

    try:
        parsed = parse_shape(text.strip())
    except UnexpectedInput as e:
        col = getattr(e, "column", 1)
        fail(f"<shape>:1:{col}: error: not a valid HLO shape\n  {text}\n  {' ' * (col - 1)}^")
    result = shape_facts(parsed)
    if result is None:
        fail(f"error: {text} has no array data")
    emit(format, lambda: result,
         lambda: shape_text(result))
