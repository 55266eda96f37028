"""A complete, comparable dump of the IR (every field, every typed attribute)."""

from __future__ import annotations

from hloscope.parser import parse_attr


def dump_module(module) -> dict:
    return {
        "name": module.name,
        "attrs": {k: (v, parse_attr(k, v)) for k, v in module.attrs.items()},
        "file_names": module.file_names,
        "function_names": module.function_names,
        "file_locations": module.file_locations,
        "stack_frames": module.stack_frames,
        "computations": [
            {
                "name": c.name,
                "is_entry": c.is_entry,
                "params": c.params,
                "result": c.result_shape_text,
                "attrs": c.attrs,
                "line": c.line,
                "instructions": [
                    {
                        "name": i.name, "opcode": i.opcode, "shape_text": i.shape_text,
                        "shape": i.shape, "operands": i.operands,
                        "operand_shapes": i.operand_shapes, "literal": i.literal,
                        "is_root": i.is_root, "line": i.line, "column": i.column,
                        "attrs": {k: (v, parse_attr(k, v)) for k, v in i.attrs.items()},
                        "calls": list(i.calls()),
                    }
                    for i in c.instructions
                ],
            }
            for c in module.computations
        ],
    }
