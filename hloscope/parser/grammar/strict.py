"""Strict mode: the whole file through grammar/hlo.lark, every value typed eagerly.

The grammar lexes the usual forms of shapes, braced values, iota lists and operand
lists as one token each (see `any_shape` in the grammar); each distinct token text is
then parsed by the rule it stands for, once. The tree is built without node positions
(a third of the time): tokens carry theirs. A part printed in another form, whose
text only node positions give, sends the file through the grammar again with them.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedInput, VisitError

from hloscope._speed.nogc import no_cyclic_gc
from hloscope.ir import Computation, Instruction, Module
from hloscope.ir.instruction import CALL_KEYS
from hloscope.ir.opcodes import LITERAL_OPCODES
from hloscope.parser.asyncs import NameUniquer
from hloscope.parser.errors import ParseError, from_lark
from hloscope.parser.grammar.infer import CannotInfer, infer
from hloscope.parser.grammar.names import refused
from hloscope.parser.grammar.source import lark_parser
from hloscope.parser.grammar.transform import ValueBuilder, scalar
from hloscope.parser.reader import READER
from hloscope.parser.text import match_close, normalize

_builder = ValueBuilder()
_SHAPE_TOKENS = frozenset({"SHAPE_TOKEN", "TUPLE_TOKEN"})
_VALUE_TOKENS = frozenset({"BRACED_TOKEN", "IOTA_TOKEN", "MESH_TOKEN"})
_WRAPPERS = frozenset({"attr_value", "name"})  # rules whose one child is their whole text
# A number among a CALL_TOKEN's operands (the rules take it as a literal).
_NUMBER_ITEM = re.compile(r"[(,][ \t]*(?:/\*.*?\*/[ \t]*)?(-?[0-9])")


class _NeedPositions(Exception):
    """A part whose text only node positions give (the tree was built without them)."""


class _Builder:
    """Modules from a tree of hlo_file; `positions`: whether its nodes carry theirs."""

    def __init__(self, text: str, path: str, positions: bool) -> None:
        self.text, self.path, self.positions = text, path, positions
        self.shapes: dict[str, Any] = {}  # token text -> Shape, through the shape rule
        self.values: set[str] = set()  # token texts the generic rule has accepted
        self.nested: list[Instruction] = []  # nested operands, to go before their user
        self.names = NameUniquer()  # instruction and computation names of the module
        self.inline: list[Computation] = []  # computations written inside an attribute
        self.by_name: dict[str, Computation] = {}  # computations built so far (shape inference)

    # ------------------------------------------------------------ texts and tokens
    def span(self, node: Tree | Token) -> str:
        if isinstance(node, Token):  # (whole-value tokens may hold /*index=N*/ comments)
            return normalize(node.value) if "/" in node.value else node.value
        if self.positions:
            return normalize(self.text[node.meta.start_pos : node.meta.end_pos])
        if node.data in _WRAPPERS and len(node.children) == 1:
            return self.span(node.children[0])
        raise _NeedPositions

    def _subparse(self, rule: str, token: Token) -> Tree:
        """Parse a whole-value token's text by its rule; errors located in the file."""
        try:
            return lark_parser().parse(token.value, start=rule)
        except UnexpectedInput as e:
            err = from_lark(e, token.value, self.path, token.line - 1, token.column - 1)
            raise self._located(err.message, err.line, err.column) from None

    def shape(self, node: Tree | Token) -> Any:
        if isinstance(node, Tree):
            return _builder.transform(node)
        shape = self.shapes.get(node.value)
        if shape is None:
            tree = self._subparse("shape", node)
            try:
                shape = self.shapes[node.value] = _builder.transform(tree)
            except VisitError as e:  # a form the grammar takes but that means nothing: T(x)
                meta = getattr(e.obj, "meta", None)
                col = getattr(meta, "column", 1) if meta is not None and not meta.empty else 1
                raise self._located(str(e.orig_exc), node.line, node.column + col - 1) from None
        return shape

    def _located(self, message: str, line: int, column: int) -> ParseError:
        lines = self.text.split("\n")
        return ParseError(message, self.path, line, column,
                          lines[line - 1] if 0 < line <= len(lines) else None)

    def value(self, node: Tree | Token) -> str:
        """An attribute value's text, a whole-value token checked by the generic rule."""
        if isinstance(node, Token) and node.type in _VALUE_TOKENS and node.value not in self.values:
            self._subparse("generic", node)
            self.values.add(node.value)
        return self.span(node)

    def shape_text(self, node: Tree | Token) -> str:
        """A shape's text, a whole-value token checked by the shape rule."""
        if isinstance(node, Token) and node.type in _SHAPE_TOKENS:
            self.shape(node)
        return self.span(node)

    # ------------------------------------------------------------ the IR
    def attributes(self, nodes: list[Any], line: int = 0) -> dict[str, str]:
        out: dict[str, str] = {}
        for node in nodes:
            if isinstance(node, Tree) and node.data == "attribute":
                key = _name(node.children[0])
                value = node.children[1]
                if key in CALL_KEYS and _inline_computation(value):
                    out[key] = self._inline(value)
                elif key in CALL_KEYS and _inline_list(value):  # branch_computations={ {..}, {..} }
                    out[key] = "{" + ", ".join(self._inline(c) for c in _braces(value)) + "}"
                else:
                    out[key] = self.value(value)
        return out

    def _inline(self, node: Any) -> str:
        """A computation written inside an attribute (`to_apply={ x = ... }`): built, kept
        for the module, and named as XLA names it (`_`, `_.1`, ...)."""
        if not self.positions:
            raise _NeedPositions
        start, end = node.meta.start_pos, node.meta.end_pos
        # the same offsets, lines and columns as in the file (the builder slices attribute
        # values out of the file's text by offset): blanks for all before it but newlines
        # (an attribute value starts after `key=`, so there are always two characters to
        # put the computation's stand-in name `_` in)
        padded = _BLANK.sub(" ", self.text[:start - 2]) + "_ " + self.text[start:end]
        tree = lark_parser().parse(padded, start="computation")
        comp = self.computation(tree)
        comp.name = self.unique("_")
        for instr in comp.instructions:
            instr.computation = comp.name
        self.inline.append(comp)
        return comp.name

    def literal(self, opcode: Tree, operands: list[Tree]) -> str:
        """The text inside constant(...) / parameter(...) read by the rules (a CALL_TOKEN's
        is read in `instruction`)."""
        if not operands:
            return ""
        if self.positions:
            return normalize(self.text[operands[0].meta.start_pos : operands[-1].meta.end_pos])
        # the parenthesis after the opcode's name token, when nothing stands between
        end = opcode.children[0].end_pos
        rest = self.text[end : end + 64]
        if not rest.lstrip(" \t").startswith("("):
            raise _NeedPositions
        start = end + rest.index("(")
        inner = self.text[start + 1 : match_close(self.text, start)]
        if "/" in inner or "\n" in inner:
            raise _NeedPositions  # comments or lines: positions say what the grammar took
        return inner.strip()

    def _bare(self, token: Token, word: str | None = None, column: int | None = None,
              defines: bool = False) -> None:
        """A name XLA's parser refuses (names.refused), located."""
        message = refused(token.value if word is None else word, defines)
        if message is not None:
            raise self._located(message, token.line, token.column if column is None else column)

    def instruction(self, node: Tree, computation: str) -> Instruction:
        root, name, shape, opcode, *rest = node.children
        self._bare(name.children[0], defines=True)
        first = root if root is not None else name.children[0]
        return self._build(_name(name), shape, opcode, rest, computation, root is not None,
                           first.line, first.column)

    def _build(self, name: str, shape: Any, opcode: Any, rest: list[Any], computation: str,
               is_root: bool, line: int, column: int) -> Instruction:
        """An instruction from its parts (nested operands become instructions of their own,
        in self.nested, named as XLA names them: `multiply.anon`)."""
        names: list[str] = []
        shapes: list[str | None] = []
        literal = None
        if isinstance(opcode, Token):  # CALL_TOKEN: the opcode and its operand names
            head, _, tail = opcode.value.partition("(")
            opcode_name, inner = head.lstrip("%"), normalize(tail[:-1])
            if opcode_name in LITERAL_OPCODES:
                literal = inner
            elif inner:
                number = _NUMBER_ITEM.search(opcode.value)
                if number is not None:
                    raise self._located(f"a literal is not an operand of {opcode_name}",
                                        opcode.line, opcode.column + number.start(1))
                names = [n.strip().lstrip("%") for n in inner.split(",")]
                shapes = [None] * len(names)
                offset = len(head) + 1
                for item in tail[:-1].split(","):
                    self._bare(opcode, item.strip(), opcode.column + offset + len(item) - len(item.lstrip()))
                    offset += len(item) + 1
        else:
            opcode_name = _name(opcode)
            operands = [c for c in rest if isinstance(c, Tree) and c.data != "attribute"]
            if opcode_name in LITERAL_OPCODES:
                literal = self.literal(opcode, operands)
            else:
                for op in operands:
                    if op.data == "typed_operand":
                        shapes.append(self.shape_text(op.children[0]))
                        self._bare(op.children[1].children[0])
                        names.append(_name(op.children[1]))
                    elif op.data == "plain_operand":
                        shapes.append(None)
                        self._bare(op.children[0].children[0])
                        names.append(_name(op.children[0]))
                    elif op.data == "element_operand":  # `%x#0` (parser.tuple_refs)
                        shapes.append(None)
                        names.append(op.children[0].value.lstrip("%"))
                    elif op.data == "shape_operand":
                        shapes.append(self.shape_text(op.children[0]))
                        names.append("")  # (a single instruction's parameter, named later)
                    elif op.data == "nested_operand":
                        nested = self._nested(op, computation)
                        shapes.append(None)
                        names.append(nested.name)
                    else:
                        self._not_operand(op, opcode_name)
        instr = Instruction(
            name=name,
            opcode=opcode_name,
            shape_text=self.shape_text(shape) if shape is not None else "",
            operands=tuple(names),
            operand_shapes=tuple(shapes),
            _attrs=self.attributes(rest, line),
            literal=literal,
            is_root=is_root,
            line=line,
            column=column,
            computation=computation,
            reader=READER,
        )
        if shape is not None:
            instr._shape = self.shape(shape)
        return instr

    def _nested(self, op: Tree, computation: str) -> Instruction:
        """A nested operand (`multiply(a, b)` inside another's operands) as an instruction."""
        shape, opcode, *rest = op.children
        token = opcode if isinstance(opcode, Token) else opcode.children[0]
        head = token.value.partition("(")[0].lstrip("%")
        instr = self._build(self.unique(f"{head}.anon"), shape, opcode, rest, computation,
                            False, token.line, token.column)
        self.nested.append(instr)
        return instr

    def unique(self, base: str) -> str:
        """XLA's name uniquer: `base`, then `base.1`, `base.2`, ... among names seen."""
        return self.names.unique(base)

    def _not_operand(self, op: Tree, opcode_name: str) -> None:
        if not self.positions:
            raise _NeedPositions
        lines = self.text.split("\n")
        line = op.meta.line
        raise ParseError(f"a literal is not an operand of {opcode_name}", "", line,
                         op.meta.column, lines[line - 1] if 0 < line <= len(lines) else None)

    def section(self, module: Module, node: Tree) -> None:
        if node.data in ("file_names", "function_names"):
            table = module.file_names if node.data == "file_names" else module.function_names
            for entry in node.children:
                table[int(entry.children[0])] = scalar(entry.children[1])
        else:
            table = module.file_locations if node.data == "file_locations" else module.stack_frames
            for entry in node.children:
                table[int(entry.children[0])] = _builder.transform(entry.children[1])

    def computation(self, node: Tree) -> Computation:
        entry, name, signature, *rest = node.children
        self._bare(name.children[0])
        first = entry if entry is not None else name.children[0]
        comp = Computation(_name(name), is_entry=entry is not None, line=first.line)
        if signature is not None:
            *params, result = signature.children
            for p in params:
                if p is not None:
                    comp.params.append((_name(p.children[0]), self.shape_text(p.children[1])))
            comp.result_shape_text = self.shape_text(result)
        for child in rest:
            if isinstance(child, Tree) and child.data == "instruction":
                self.names.take(_name(child.children[1]))
        for child in rest:
            if isinstance(child, Tree) and child.data == "instruction":
                instr = self.instruction(child, comp.name)
                for made in [*self.nested, instr]:
                    self.add(comp, made)
                self.nested.clear()
        comp.attrs = self.attributes(rest)
        self.by_name[comp.name] = comp
        return comp

    def add(self, comp: Computation, instr: Instruction) -> None:
        """Append an instruction, its shape inferred when printed without one (as XLA does)."""
        if not instr.shape_text:
            try:
                instr._shape = infer(instr, comp, self)
            except CannotInfer as e:
                raise ParseError(str(e), self.path, instr.line, instr.column) from None
            instr.shape_text = instr._shape.text()
        comp.instructions.append(instr)
        comp._by_name = None

    def single(self, node: Tree) -> Module:
        """A file holding one instruction: module and entry computation `_`, its operands
        parameters in the order they appear (each must give its shape), as XLA builds it."""
        inner = node.children[0] if node.data == "single_instruction" else node
        comp = Computation("_", is_entry=True, line=1)
        self.names.take(comp.name)  # (its inline computations are `_.1`, `_.2`, ...)
        if inner.data == "instruction":
            instr = self.instruction(inner, comp.name)
        else:  # unnamed_instruction: `f32[4] add(...)`, named after the module
            shape, opcode, *rest = inner.children
            token = opcode if isinstance(opcode, Token) else opcode.children[0]
            instr = self._build("_", shape, opcode, rest, comp.name, False, token.line, token.column)
        made = [*self.nested, instr]
        defined = {i.name for i in made}
        params: dict[str, Instruction] = {}
        for user in made:
            renamed = []
            for k, (name, shape) in enumerate(zip(user.operands, user.operand_shapes)):
                if name in defined and name:
                    renamed.append(name)
                    continue
                if shape is None:
                    raise ParseError("Operand had no shape in HLO text; cannot create parameter "
                                     "for single-instruction module.", self.path, user.line, user.column)
                key = name or f"_{len(params)}"
                if key not in params:
                    params[key] = Instruction(key, "parameter", shape, literal=str(len(params)),
                                              line=user.line, column=user.column,
                                              computation=comp.name, reader=READER)
                renamed.append(key)
            user.operands = tuple(renamed)
        for made_instr in [*params.values(), *made]:
            self.add(comp, made_instr)
        comp.instructions[-1].is_root = True
        module = Module("_", path=self.path, line=1)
        module.computations = [*self.inline, comp]
        return module

    def module_line(self, mnode: Tree) -> int:
        if self.positions:
            return mnode.meta.line
        at = mnode.children[0].children[0].start_pos  # the name after `HloModule`
        return self.text.count("\n", 0, self.text.rfind("HloModule", 0, at)) + 1

    def modules(self, tree: Tree) -> list[Module]:
        modules: list[Module] = []
        if tree.data == "instruction_only":
            return [self.single(tree.children[0])]
        if tree.data == "headerless_module":
            module = Module("", path=self.path, line=1)
            for c in tree.children:
                comp = self.computation(c)
                module.computations.extend([*self.inline, comp])
                self.inline.clear()
            module.name = "module_" + module.entry.name  # type: ignore[union-attr]
            return [module]
        for mnode in tree.children:
            module = Module(_name(mnode.children[0]), path=self.path, line=self.module_line(mnode))
            module.attrs = self.attributes(mnode.children[1:])
            for child in mnode.children[1:]:
                if not isinstance(child, Tree) or child.data == "attribute":
                    continue
                if child.data == "computation":
                    comp = self.computation(child)
                    module.computations.extend([*self.inline, comp])  # (as XLA prints them)
                    self.inline.clear()
                else:
                    self.section(module, child)
            modules.append(module)
        return modules


_BLANK = re.compile(r"[^\n]")


def _name(node: Tree) -> str:
    return node.children[0].lstrip("%")


def _braces(node: Any) -> list[Any]:
    """The braced items directly inside a braced attribute value."""
    if isinstance(node, Tree) and node.data == "attr_value" and len(node.children) == 1:
        node = node.children[0]
    if not (isinstance(node, Tree) and node.data == "braces"):
        return []
    return [c for c in node.children if isinstance(c, Tree) and c.data == "braces"]


def _inline_list(node: Any) -> bool:
    """Whether an attribute value is a list of computations written out: `{ {..}, {..} }`."""
    items = _braces(node)
    return bool(items) and all(_inline_computation(c) for c in items)


def _inline_computation(node: Any) -> bool:
    """Whether an attribute value is a computation written out: braces holding `x = ...`."""
    if isinstance(node, Tree) and node.data == "attr_value" and len(node.children) == 1:
        node = node.children[0]
    return isinstance(node, Tree) and node.data == "braces" and any(
        isinstance(c, Token) and c.type == "EQUAL" for c in node.children)


def parse_strict(text: str, path: str) -> list[Module]:
    """Parse with the full grammar; lark exceptions propagate to the caller. (The cyclic
    collector is paused: it re-traversed the growing tree, 22 s -> 9.5 s on 5.57 MB.)"""
    with no_cyclic_gc():
        tree = lark_parser(positions=False).parse(text, start="hlo_file")
        try:
            return _Builder(text, path, positions=False).modules(tree)
        except _NeedPositions:
            pass
        del tree
        return _Builder(text, path, positions=True).modules(lark_parser().parse(text, start="hlo_file"))
