"""`hloscope parse`: a module's structure as text, and its JSON record (a public contract)."""

from __future__ import annotations

from typing import Any

from hloscope.ir import Instruction, Module


def instruction_json(instr: Instruction) -> dict[str, Any]:
    """The `parse --format json` record of one instruction."""
    return {
        "name": instr.name,
        "opcode": instr.opcode,
        "shape": instr.shape.text(layout=False),
        "operands": list(instr.operands),
        "layout_shape": instr.shape.text(layout=True),
        "line": instr.line,
        "attributes": dict(instr.attrs),
    }


def module_json(module: Module) -> dict[str, Any]:
    return {
        "name": module.name,
        "path": module.path,
        "attributes": dict(module.attrs),
        "computations": [
            {
                "name": comp.name,
                "is_entry": comp is module.entry,
                "instructions": [instruction_json(i) for i in comp.instructions],
            }
            for comp in module.computations
        ],
    }


def parse_text(modules: list[Module]) -> str:
    out = []
    for m in modules:
        out.append(f"HloModule {m.name} ({len(m.computations)} computations)")
        for c in m.computations:
            mark = "ENTRY " if c is m.entry else ""
            out.append(f"  {mark}{c.name}: {len(c.instructions)} instructions")
            for i in c.instructions:
                ops = ", ".join(i.operands) if i.literal is None else i.literal
                root = "ROOT " if i.is_root else ""
                out.append(f"    {root}{i.name} = {i.shape} {i.opcode}({ops})")
    return "\n".join(out)
