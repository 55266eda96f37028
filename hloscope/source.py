"""Where an instruction came from in the user's program: its op_name and file:line
(function), from either metadata style XLA prints: `metadata={op_name=... source_file=...
source_line=...}`, or `stack_frame_id=N` into the module's FileNames / FunctionNames /
FileLocations / StackFrames tables (newer dumps)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hloscope._speed import regex_cache
from hloscope.ir.records import Frozen, set_field

if TYPE_CHECKING:  # (the text report maps source roots without loading the IR)
    from hloscope.ir import Instruction, Module

# Layer and instance numbers in op_names and names: `layers_3/attn`, `while/body/dot.7`.
_NUMBER = regex_cache.compile(r"\d+")


class Source(Frozen):
    __slots__ = ("op_name", "file", "line", "function")
    op_name: str
    file: str
    line: int
    function: str

    def __init__(self, op_name: str = "", file: str = "", line: int = 0, function: str = "") -> None:
        set_field(self, "op_name", op_name)
        set_field(self, "file", file)
        set_field(self, "line", line)
        set_field(self, "function", function)

    @property
    def location(self) -> str:
        """`file:line (function)`, or '' when the dump says nothing of it."""
        if not self.file:
            return ""
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where} ({self.function})" if self.function else where

    def to_dict(self) -> dict:
        return {"op_name": self.op_name, "file": self.file, "line": self.line,
                "function": self.function}

    def pattern(self) -> str:
        """What identifies the code across layers and re-dumps: the source line, or the
        op_name with its numbers taken out."""
        if self.file:
            return f"{self.file}:{self.line}"
        return _NUMBER.sub("#", self.op_name)


_NONE = Source()  # (a pre-optimization dump's ops carry no metadata: 42k rows of Mixtral's)


def bracketed(record: dict) -> str:
    """`  [file:line (function)]`, else `  [op_name]`, of a report record carrying "source"
    and "op_name" (roofline rows, largest buffers, live buffers); '' without either."""
    where = record.get("source") or record.get("op_name")
    return f"  [{where}]" if where else ""


def source_of(instr: Instruction, module: Module) -> Source:
    """The instruction's Source (empty when it carries no metadata: one shared, frozen)."""
    if not instr.may_have("metadata"):
        return _NONE
    meta = instr.attr("metadata")
    if not isinstance(meta, dict):
        return _NONE
    op_name = str(meta.get("op_name", ""))
    frame_id = meta.get("stack_frame_id")
    if frame_id is not None and module.stack_frames:
        found = _frame(module, int(frame_id))
        if found is not None:
            return Source(op_name, *found)
    file = str(meta.get("source_file", ""))
    line = meta.get("source_line", 0)
    return Source(op_name, file, int(line) if isinstance(line, int) else 0, "")


def _frame(module: Module, frame_id: int) -> tuple[str, int, str] | None:
    return frame_location(tables_of(module), frame_id)


def tables_of(module: Module) -> tuple[dict, dict, dict, dict]:
    """The module's (FileNames, FunctionNames, FileLocations, StackFrames) tables, as plain
    data (they may travel to another process)."""
    return (module.file_names, module.function_names, module.file_locations, module.stack_frames)


def frame_location(tables: tuple[dict, dict, dict, dict], frame_id: int) -> tuple[str, int, str] | None:
    """(file, line, function) of a stack frame: its FileLocations entry."""
    file_names, function_names, file_locations, stack_frames = tables
    frame = stack_frames.get(frame_id)
    if not isinstance(frame, dict):
        return None
    loc = file_locations.get(frame.get("file_location_id", -1))
    if not isinstance(loc, dict):
        return None
    file = file_names.get(loc.get("file_name_id", -1), "")
    function = function_names.get(loc.get("function_name_id", -1), "")
    return str(file), int(loc.get("line", 0) or 0), str(function)


def unresolved_source(instr: Instruction) -> tuple[str, str, int, int | None]:
    """(op_name, source_file, source_line, stack_frame_id) as the instruction's metadata
    says them, for a module split in parts whose tables sit in another part."""
    meta = instr.attr("metadata") if instr.may_have("metadata") else None
    if not isinstance(meta, dict):
        return ("", "", 0, None)
    line = meta.get("source_line", 0)
    frame = meta.get("stack_frame_id")
    return (str(meta.get("op_name", "")), str(meta.get("source_file", "")),
            int(line) if isinstance(line, int) else 0, int(frame) if frame is not None else None)


def resolve(raw: tuple[str, str, int, int | None], tables: tuple[dict, dict, dict, dict]) -> Source:
    """The Source of an unresolved_source() tuple, given the module's tables."""
    op_name, file, line, frame = raw
    if frame is not None:
        found = frame_location(tables, frame)
        if found is not None:
            return Source(op_name, *found)
    return Source(op_name, file, line, "")


def map_root(file: str, root: str | None) -> str:
    """The file under `root` (--source-root), for an editor on another machine: the
    longest tail of the dump's path that exists under root, else root/name."""
    if not root or not file:
        return file
    parts = Path(file).parts
    base = Path(root)
    for k in range(len(parts)):
        candidate = base.joinpath(*parts[k:]) if not Path(*parts[k:]).is_absolute() else None
        if candidate is not None and candidate.exists():
            return str(candidate)
    return str(base / Path(file).name)
