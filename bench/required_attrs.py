"""Which attributes XLA's parser requires, per opcode (the table in hloscope/parser/wiring.py).

For each (opcode, attribute) seen on a real instruction of fixtures/ and ../shared/corpus,
the attribute is deleted from that one line of the real module and jaxlib's parser (XLA's,
0.10.2) is asked again: an attribute is required when the module is then refused.

    python3 bench/required_attrs.py        # the table as JSON, then the optional pairs

A deletion can break a module for a reason other than the attribute being required
(channel_id is required only beside use_global_device_ids; a conditional takes
branch_computations or true/false computations): wiring.py leaves those out by hand.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from conformance import collect  # noqa: E402

from hloscope.parser import parse  # noqa: E402

_SKIP = ("metadata", "backend_config", "sharding", "frontend_attributes")


def _accepts(text: str) -> bool:
    from jaxlib import _hlo

    try:
        _hlo.hlo_module_from_text(text)
    except Exception:  # noqa: BLE001 - XLA's verdict
        return False
    return True


def _without(line: str, key: str) -> str | None:
    """The line with `, key=value` removed (value up to the next top-level comma)."""
    i = line.find(f", {key}=")
    if i < 0:
        return None
    k, depth, quoted = i + len(key) + 3, 0, False
    while k < len(line):
        c = line[k]
        if c == '"':
            quoted = not quoted
        elif not quoted:
            if c in "{([":
                depth += 1
            elif c in "})]":
                if depth == 0:
                    break
                depth -= 1
            elif c == "," and depth == 0:
                break
        k += 1
    return line[:i] + line[k:]


def derive() -> dict[tuple[str, str], bool]:
    required: dict[tuple[str, str], bool] = {}
    for label, text in collect():
        if len(text) > 400_000 or not _accepts(text):
            continue
        try:
            modules = parse(text, label)
        except Exception:  # noqa: BLE001 - not ours to judge here
            continue
        lines = text.split("\n")
        for module in modules:
            for instr in module.instructions():
                for key in instr.attrs:
                    pair = (instr.opcode, key)
                    if pair in required or key in _SKIP or not 0 < instr.line <= len(lines):
                        continue
                    cut = _without(lines[instr.line - 1], key)
                    if cut is None:
                        continue
                    trial = lines[:instr.line - 1] + [cut] + lines[instr.line:]
                    required[pair] = not _accepts("\n".join(trial))
    return required


def main() -> int:
    found = derive()
    table: dict[str, list[str]] = defaultdict(list)
    for (opcode, key), needed in sorted(found.items()):
        if needed:
            table[opcode].append(key)
    print(json.dumps(table, indent=1))
    print("optional:", ", ".join(f"{o}:{k}" for (o, k), needed in sorted(found.items()) if not needed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
