"""XProf-style op categories, for profiles and graphs."""

from __future__ import annotations

from hloscope.ir import Instruction, Module

COLLECTIVE_PREFIXES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                       "collective-permute", "collective-broadcast", "ragged-all-to-all", "send",
                       "recv")
DATA_FORMATTING = frozenset({"copy", "copy-start", "copy-done", "transpose", "bitcast",
                             "reshape", "broadcast", "pad", "slice", "concatenate",
                             "dynamic-slice", "dynamic-update-slice", "gather", "scatter"})


def category(instr: Instruction, module: Module) -> str:
    """matmul | convolution | elementwise | collective | custom kernel |
    data formatting | control flow | other"""
    op = instr.opcode
    if op.startswith(COLLECTIVE_PREFIXES):
        return "collective"
    if op == "custom-call":
        return "custom kernel"
    if op in ("dot",):
        return "matmul"
    if op == "convolution":
        return "convolution"
    if op in ("while", "conditional", "call"):
        return "control flow"
    if op in DATA_FORMATTING:
        return "data formatting"
    if op in ("fusion", "async-start", "async-done"):
        inner = [i for name in instr.called_computations if name in module.by_name
                 for i in module[name].instructions]
        ops = {i.opcode for i in inner}
        if "dot" in ops:
            return "matmul fusion"
        if "convolution" in ops:
            return "convolution fusion"
        if any(o.startswith(COLLECTIVE_PREFIXES) for o in ops):
            return "collective"
        if ops and ops <= DATA_FORMATTING | {"parameter", "constant", "tuple", "get-tuple-element"}:
            return "data formatting"
        return "elementwise fusion"
    return "elementwise" if op not in ("parameter", "constant") else "other"
