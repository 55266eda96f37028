"""One HLO instruction. Shape and attribute values are read from their text on first use,
by the `ValueReader` the parser hands each instruction it builds (the IR never imports
the parser)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

from hloscope._speed import regex_cache
from hloscope.ir.records import replaced
from hloscope.ir.shape import Shape


class ValueReader(Protocol):
    """Reads values from their text: what a parser gives the instructions it builds.
    Its reads are memoized by text, so the 100k instructions of a large dump share a
    few hundred shapes."""

    def shape(self, text: str) -> Shape:
        """The Shape of a shape's text."""

    def attr(self, instr: Instruction, key: str, text: str) -> Any:
        """The typed value of attribute `key` of `instr`, whose value text is `text`."""

    def split(self, attr_text: str) -> dict[str, str]:
        """{key: value text} of an attribute list the scanner has checked (`, k=v, ...`)."""

    def seek(self, attr_text: str, keys: Collection[str], n: int, start: int = 0) -> dict[str, str]:
        """The values of `keys` in an attribute list, reading no further than the n-th found
        (from `start`, a separating comma, on)."""

    def item(self, attr_text: str, key: str) -> str | None | bool:
        """The value of `key` in an attribute list (None: not given), or False when it is
        for `seek` to read."""


# Attribute keys whose values name computations this instruction calls.
CALL_KEYS = (
    "to_apply", "calls", "condition", "body", "branch_computations",
    "called_computations", "true_computation", "false_computation", "select", "scatter",
)

_CALL_KEY_SET = frozenset(CALL_KEYS)
# The grammar's NAME terminal without its optional `%` (the parser builds its patterns on it).
NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_NAME = regex_cache.compile(rf"%?({NAME})")
# An attribute list as the fast scanner keeps it: `, key=value, ...` (comma first).
CALL_ATTR = regex_cache.compile(",[ \t]*(" + "|".join(CALL_KEYS) + ")=")
# The usual case, read without walking the list: one call key naming one computation, at
# the list's top level (see _top_level).
_PLAIN_CALL = regex_cache.compile(CALL_ATTR.pattern + rf"%?({NAME})[ \t]*(?:,|$)")
# A metadata attribute as the printer writes it (after the previous attribute's comma).
_METADATA = ", metadata={"
_METADATA_VALUE = len(", metadata=")  # where the value starts, after its key


# What opens a value that may hold a separator: a bracket or a string's quote.
_OPENER = regex_cache.compile("[{[('\"]")
# A string as the scanner takes it: double quotes, backslash escapes, closed on the line.
_STRING = regex_cache.compile(r'"(?:[^"\\\n]|\\.)*"')


def _top_level(text: str, at: int) -> bool:
    """Whether position `at` of a checked attribute list (brackets paired and nested as
    the scanner requires, strings closed) lies outside every value: outside every string,
    and, strings left out, as many brackets opened as closed before it (in a well-nested
    text, depth 0 there). (Before its strings were skipped, a TPU op's backend_config,
    printed after a metadata string, was sought by a walk over every item before it.)"""
    if _OPENER.search(text, 0, at) is None:  # (no string or bracket opens before it)
        return True
    head = text[:at]
    if "'" in head:
        return False
    if '"' in head:
        head = _STRING.sub("", head)
        if '"' in head:  # (a string opened before `at` and not closed: `at` is inside it)
            return False
    c = head.count
    return c("{") + c("[") + c("(") == c("}") + c("]") + c(")")


class Instruction:
    """`[ROOT] name = shape opcode(operands), key=value, ...`.

    `attrs` maps each attribute key to its value text exactly as printed (comments
    removed); `attr(key)` returns the typed value. `literal` is the text inside the
    parentheses of constant() and parameter(), whose operands are not names.
    The fast scanner keeps the attribute list as one checked text (`attr_text`,
    `, key=value, ...`) and splits it on first use: most instructions are never asked.
    """

    # (a plain class, not a dataclass: every command imports it; see hloscope.ir.records.
    # Equal only to itself, as a dataclass with eq=False)
    __slots__ = ("name", "opcode", "shape_text", "operands", "operand_shapes", "_attrs", "literal",
                 "is_root", "line", "column", "computation", "_shape", "attr_text", "reader",
                 "_calls")
    name: str
    opcode: str
    shape_text: str
    operands: tuple[str, ...]
    operand_shapes: tuple[str | None, ...]
    _attrs: dict[str, str] | None
    literal: str | None
    is_root: bool
    line: int
    column: int
    computation: str
    _shape: Shape | None
    attr_text: str
    reader: ValueReader | None
    _calls: Sequence[str] | None

    def __init__(self, name: str, opcode: str, shape_text: str, operands: tuple[str, ...] = (),
                 operand_shapes: tuple[str | None, ...] = (), _attrs: dict[str, str] | None = None,
                 literal: str | None = None, is_root: bool = False, line: int = 0, column: int = 0,
                 computation: str = "", _shape: Shape | None = None, attr_text: str = "",
                 reader: ValueReader | None = None, _calls: Sequence[str] | None = None) -> None:
        self.name = name
        self.opcode = opcode
        self.shape_text = shape_text
        self.operands = operands
        self.operand_shapes = operand_shapes
        self._attrs = _attrs
        self.literal = literal
        self.is_root = is_root
        self.line = line
        self.column = column
        self.computation = computation
        self._shape = _shape
        self.attr_text = attr_text
        self.reader = reader
        self._calls = _calls

    def replace(self, **changes: Any) -> Instruction:
        """A copy with some fields changed (as dataclasses.replace)."""
        return replaced(self, changes)

    def _reader(self) -> ValueReader:
        if self.reader is None:
            raise ValueError(f"%{self.name} was built without a ValueReader: "
                             "give it typed values (_shape, _attrs) or a reader")
        return self.reader

    @property
    def attrs(self) -> dict[str, str]:
        if self._attrs is None:
            self._attrs = self._reader().split(self.attr_text) if self.attr_text else {}
        return self._attrs

    def attrs_once(self) -> dict[str, str]:
        """`attrs`, without keeping the split when it was not made yet: for a walk over
        every instruction's attributes (a large dump's dicts cost more than its text)."""
        if self._attrs is not None:
            return self._attrs
        return self._reader().split(self.attr_text) if self.attr_text else {}

    def attrs_but_metadata(self) -> dict[str, str]:
        """`attrs` less `metadata`, without reading its long value when it comes last (most
        instructions of a pre-optimization dump carry nothing else). Not kept."""
        head = self.text_but_metadata()
        if head is not None:
            return self._reader().split(head) if head else {}
        out = dict(self.attrs_once())
        out.pop("metadata", None)
        return out

    def text_but_metadata(self) -> str | None:
        """The attribute text before a `metadata` value that ends it (the whole text when
        there is none), or None when that cannot be told without splitting: two
        instructions whose texts are equal have equal attributes but metadata."""
        text = self.attr_text
        if not text:  # (none, unless the slow scan split them: then they are in _attrs)
            return None if self._attrs else ""
        at = text.find(_METADATA)
        if at < 0:
            return text if self._attrs is None and "metadata=" not in text else None
        if self._attrs is None and text.endswith("}") and text.find("},", at) < 0 \
                and text.find(_METADATA, at + 1) < 0:
            return text[:at]
        return None

    def may_have(self, key: str) -> bool:
        """False when the instruction certainly has no attribute `key`, without splitting."""
        if self._attrs is not None:
            return key in self._attrs
        return f"{key}=" in self.attr_text  # the scanner admits no blank before `=`

    def may_contain(self, fragment: str) -> bool:
        """False when no attribute value certainly holds `fragment`, without splitting."""
        if self._attrs is not None:
            return any(fragment in v for v in self._attrs.values())
        return fragment in self.attr_text

    def raw_attr(self, key: str) -> str | None:
        """`attrs.get(key)`, without splitting the whole list when only one key is asked
        (most instructions carry long metadata and backend_config values)."""
        if self._attrs is not None:
            return self._attrs.get(key)
        text = self.attr_text
        at = text.find(f"{key}=")
        if at < 0:
            return None
        found = self._reader().item(text, key)  # (the compiled core's read, where it has one)
        if found is not False:
            return found
        if text.find(f"{key}=", at + 1) >= 0:  # twice (or inside a string): split it all
            return self.attrs.get(key)
        if key == "metadata":  # (usually last: its value is the rest of the text)
            head = self.text_but_metadata()
            if head is not None and len(head) < len(text):
                return text[len(head) + _METADATA_VALUE:].rstrip()
        # (read from the comma before the key when that one separates items: outside any
        # string or bracket, blanks only between; not every item before it)
        comma = text.rfind(",", 0, at)
        if comma >= 0 and not text[comma + 1:at].strip(" \t") and _top_level(text, comma):
            return self._reader().seek(text, (key,), 1, comma).get(key)
        return self._reader().seek(text, (key,), 1).get(key)

    @property
    def shape(self) -> Shape:
        if self._shape is None:
            self._shape = self._reader().shape(self.shape_text)
        return self._shape

    def attr(self, key: str, default: Any = None) -> Any:
        """The typed value of attribute `key` (see hloscope.parser.attrs)."""
        text = self.raw_attr(key)
        if text is None:
            return default
        return self._reader().attr(self, key, text)

    def attrs_of(self, keys: Sequence[str], default: Any = None) -> list[Any]:
        """[attr(key, default) for key in keys], with the attribute list walked once for them
        all (a dot's four dimension lists read one by one were most of H005's time)."""
        text = self.attr_text
        if self._attrs is not None or not text or "metadata" in keys or any(
                text.count(f"{k}=") > 1 for k in keys):
            return [self.attr(k, default) for k in keys]
        present = [k for k in keys if f"{k}=" in text]  # (each once: at most one item each)
        reader = self._reader()
        found = reader.seek(text, present, len(present)) if present else {}
        return [reader.attr(self, k, found[k]) if k in found else default for k in keys]

    def config_with(self, key: str) -> Any:
        """The typed backend_config when its text may hold `key`, else None: a config
        that cannot hold the key is not built (a GPU custom call's MLIR dictionary goes
        through the grammar, tens of microseconds and Lark's import the first time)."""
        if not self.may_contain(key):  # (nowhere in its attributes: not in its config)
            return None
        text = self.raw_attr("backend_config")
        if text is None or key not in text:
            return None
        return self._reader().attr(self, "backend_config", text)

    @property
    def parameter_number(self) -> int | None:
        if self.opcode != "parameter" or self.literal is None:
            return None
        return int(self.literal)

    @property
    def called_computations(self) -> list[str]:
        """Names of computations this instruction calls (in CALL_KEYS order; computed
        once: the IR is not edited after parsing)."""
        return list(self.calls())

    def calls(self) -> Sequence[str]:
        """`called_computations` as kept, not copied: for walks that only read it."""
        calls = self._calls
        if calls is None:
            calls = self._calls = self._find_calls()
        return calls

    def _find_calls(self) -> Sequence[str]:
        values = self._attrs
        if values is None:
            text = self.attr_text
            first = CALL_ATTR.search(text)
            if first is None:
                return ()
            at = first.start()
            if CALL_ATTR.search(text, first.end()) is None and _top_level(text, at):
                plain = _PLAIN_CALL.match(text, at)
                if plain is not None:
                    return [plain.group(2)]
            found = CALL_ATTR.findall(text)  # (some may lie inside strings)
            values = self._reader().seek(text, _CALL_KEY_SET, len(found))
        out: list[str] = []
        for key in CALL_KEYS:
            text = values.get(key)
            if text is None:
                continue
            plain = _NAME.fullmatch(text)  # the usual `calls=%name`: no typed parse needed
            if plain is not None:
                out.append(plain.group(1))
                continue
            value = self._reader().attr(self, key, text)
            out.extend(value if isinstance(value, (list, tuple)) else [value])
        return out

    def operand_shape(self, index: int) -> Shape | None:
        """The shape printed before operand `index` (`add(f32[2] %a, ...)`), if any."""
        text = self.operand_shapes[index] if index < len(self.operand_shapes) else None
        return self._reader().shape(text) if text else None

    @property
    def control_predecessors(self) -> list[str]:
        return list(self.attr("control-predecessors", []))

    def __repr__(self) -> str:
        return f"<Instruction %{self.name} = {self.shape_text} {self.opcode}>"
