"""Parse errors with a location: `FILE:LINE:COL: error: message` plus a caret line."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Lark is imported only when the grammar runs
    from lark.exceptions import UnexpectedInput

# Human names for terminals in "expected ..." messages.
TERMINAL_NAMES = {
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "STRING": "a string",
    "SQSTRING": "a string", "TYPE_LB": "a shape", "LAYOUT_OPEN": "'{'", "LBRACE": "'{'",
    "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "ARROW": "'->'", "LEQ": "'<='",
    "ROOT": "'ROOT'", "ENTRY": "'ENTRY'", "HLOMODULE": "'HloModule'", "$END": "end of input",
    "DIM_LABELS": "dim labels", "DXD": "a size like 3x3", "PAD": "a padding like 0_1x0_1",
    # whole-value tokens (grammar/hlo.lark, any_shape): named as what they start with
    "SHAPE_TOKEN": "a shape", "TUPLE_TOKEN": "a shape", "BRACED_TOKEN": "'{'",
    "IOTA_TOKEN": "'['", "MESH_TOKEN": "a name", "CALL_TOKEN": "a name",
}


class ParseError(Exception):
    """A syntax or semantic error at a location in an HLO file."""

    def __init__(self, message: str, path: str = "<string>", line: int = 0, column: int = 0,
                 source_line: str | None = None, attr_key: str | None = None,
                 value_column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.source_line = None
        # an attribute value's error: its key, and the column inside the value text
        self.attr_key = attr_key
        self.value_column = value_column
        if source_line is not None:
            self.attach_source(source_line)

    def attach_source(self, source_line: str) -> None:
        """The offending line; an attribute value's error then points into it."""
        self.source_line = source_line
        if self.attr_key is None:
            return
        m = re.search(rf"(?:,|^)\s*({re.escape(self.attr_key)})\s*=\s*", source_line)
        if m is not None:
            self.column = m.end() + self.value_column if self.value_column else m.start(1) + 1

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.path}: error: {self.message}"
        return f"{self.path}:{self.line}:{self.column}: error: {self.message}"

    def render(self) -> str:
        """The one-line error, then the offending line with a caret under the column."""
        out = str(self)
        if self.source_line is not None and self.column > 0:
            src = self.source_line.rstrip("\n")
            if len(src) > 200:  # keep a window around the column on huge lines
                start = max(0, self.column - 100)
                src, col = src[start : start + 200], self.column - start
            else:
                col = self.column
            out += "\n  " + src.replace("\t", " ") + "\n  " + " " * (col - 1) + "^"
        return out


def _describe(names: set[str] | frozenset[str]) -> str:
    words = sorted({TERMINAL_NAMES.get(n, n.lower()) for n in names})
    if len(words) > 6:
        words = words[:6] + ["..."]
    return ", ".join(words)


def from_lark(err: UnexpectedInput, text: str, path: str, line_offset: int = 0,
              col_offset: int = 0) -> ParseError:
    """Convert a lark exception into a ParseError with our wording."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    line = getattr(err, "line", 0) or 0
    column = getattr(err, "column", 0) or 0
    if isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            msg = f"unexpected end of input; expected {_describe(err.expected)}"
            line, column = _end_position(text)
        else:
            wanted = _describe(err.expected)  # (empty where the lexer's context had no rule)
            msg = f"unexpected {_token(tok)}" + (f"; expected {wanted}" if wanted else "")
    elif isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
        if ch in "\"'":
            msg = "unterminated string"
        elif text.startswith("/*", err.pos_in_stream):
            msg = "unterminated /* comment"
        else:
            msg = f"unexpected character {ch!r}"
    elif isinstance(err, UnexpectedEOF):
        msg = "unexpected end of input"
        line, column = _end_position(text)
    else:
        msg = str(err).splitlines()[0]
    lines = text.splitlines()
    src = lines[line - 1] if 0 < line <= len(lines) else None
    if line == 1:
        column += col_offset
    return ParseError(msg, path, line + line_offset, column, src)


# A whole-value token (grammar/hlo.lark) is named by the token the rules would see first.
_FIRST_OF = {"CALL_TOKEN": "(", "MESH_TOKEN": "[", "SHAPE_TOKEN": "[", "TUPLE_TOKEN": "(",
             "BRACED_TOKEN": "{", "IOTA_TOKEN": "["}


def _token(tok) -> str:
    value = str(tok)
    stop = _FIRST_OF.get(tok.type)
    if stop is not None:
        head = value[: value.index(stop)]
        if tok.type in ("CALL_TOKEN", "MESH_TOKEN"):
            return f"name '{head}'"
        return f"'{head + stop}'"
    shown = value if len(value) <= 40 else value[:37] + "..."
    if tok.type == "NAME":
        return f"name '{shown}'"
    if tok.type in ("INT", "FLOAT"):
        return f"number {shown}"
    if tok.type in ("STRING", "SQSTRING"):
        return f"string {shown}"
    return f"'{shown}'"


def _end_position(text: str) -> tuple[int, int]:
    """Line and column just past the last character."""
    return text.count("\n") + 1, len(text) - (text.rfind("\n") + 1) + 1


def attribute_error(key: str, value: str | None, cause: Exception, path: str, line: int,
                    column: int, src: str | None) -> ParseError:
    """The error of attribute `key`'s value, pointing at the offending character when
    the grammar says where in the value it stopped."""
    cause = getattr(cause, "orig_exc", cause)  # a Lark VisitError: the error inside it
    inner = None
    detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    if value is not None and hasattr(cause, "pos_in_stream"):  # a Lark error inside the value
        located = from_lark(cause, value, path)  # type: ignore[arg-type]
        detail = located.message
        inner = located.column if located.line == 1 and located.column > 0 else None
    return ParseError(f"malformed {key}= value: {detail}", path, line, column, src,
                      attr_key=key, value_column=inner)
