"""Which attributes XLA's parser allows, per opcode and on the module header: the table
strict mode checks (hloscope/parser/xla_attributes.json), taken from XLA's own words.

jaxlib's parser (XLA's, 0.10.2) refuses an attribute an opcode does not take with
`unexpected attribute "X". Allowed attributes: a, b, ...`. Each opcode is given one
instruction that XLA would take but for a made-up attribute, and the list in XLA's
answer is kept. A conditional allows true/false computations with a pred selector and
branch_computations with an s32 one: both forms are asked and the lists joined.

    python3 bench/xla_attributes.py           # rewrite the table
    python3 bench/xla_attributes.py --check   # compare it with jaxlib's answers (exit 1 if not equal)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TABLE = ROOT / "hloscope" / "parser" / "xla_attributes.json"
_BOGUS = "bogus_zz"
_ALLOWED = re.compile(rf'unexpected attribute "{_BOGUS}"\. Allowed attributes: ([^\n]*)')
_NEG = "neg {\n  q = f32[4] parameter(0)\n  ROOT n = f32[4] negate(q)\n}\n"
_START = "  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=neg\n"
# instructions XLA takes (but for the made-up attribute) where one plain f32[4] operand
# list does not do: the opcode's own wiring, shapes or literal first
_SPECIAL = {
    "async-start": (_NEG, "ROOT s = ((f32[4]), f32[4], s32[]) async-start(p), calls=neg"),
    "async-update": (_NEG, _START + "  ROOT u = ((f32[4]), f32[4], s32[]) async-update(s)"),
    "async-done": (_NEG, _START + "  ROOT d = f32[4] async-done(s)"),
    "batch-norm-grad": ("", "s = f32[4] parameter(1)\n  ROOT b = (f32[2,4], f32[4], f32[4]) "
                            "batch-norm-grad(q, s, s, s, q), epsilon=0.1, feature_index=1"),
    "batch-norm-inference": ("", "s = f32[4] parameter(1)\n  ROOT b = f32[2,4] "
                                 "batch-norm-inference(q, s, s, s, s), epsilon=0.1, feature_index=1"),
    "conditional": (_NEG, "b = pred[] parameter(1)\n  ROOT c = f32[4] conditional(b, p, p), "
                          "true_computation=neg, false_computation=neg"),
    "conditional/s32": (_NEG, "b = s32[] parameter(1)\n  ROOT c = f32[4] conditional(b, p, p), "
                              "branch_computations={neg, neg}"),
    "constant": ("", "ROOT c = f32[] constant(1)"),
    "parameter": ("", "ROOT r = f32[] parameter(1)"),
    "tuple": ("", "ROOT t = (f32[4], f32[4]) tuple(p, p)"),
}
_OPERANDS = ("p", "p, p", "", "p, p, p")


def _probe(opcode: str, operands: str) -> str:
    before, body = _SPECIAL.get(opcode, ("", f"ROOT x = f32[4] {opcode}({operands})"))
    return (f"HloModule m\n{before}ENTRY e {{\n  p = f32[4] parameter(0)\n  q = f32[2,4] parameter(2)\n"
            f"  {body}, {_BOGUS}=1\n}}\n")


def _allowed(text: str) -> list[str] | None:
    from jaxlib import _hlo

    try:
        _hlo.hlo_module_from_text(text)
    except Exception as e:  # noqa: BLE001 - XLA's answer is the message
        m = _ALLOWED.search(str(e))
        return sorted(a.strip() for a in m.group(1).split(",")) if m else None
    return None


def derive(opcodes) -> dict:
    """{"module": [...], "opcodes": {opcode: [...]}} from jaxlib's answers."""
    table: dict[str, list[str]] = {}
    for opcode in sorted(opcodes):
        forms = [opcode, f"{opcode}/s32"] if opcode == "conditional" else [opcode]
        found: set[str] = set()
        for form in forms:
            for operands in ((None,) if form in _SPECIAL else _OPERANDS):
                names = _allowed(_probe(form, operands or ""))
                if names is not None:
                    found.update(names)
                    break
        if found:
            table[opcode] = sorted(found)
    module = _allowed(f"HloModule m, {_BOGUS}=1\nENTRY e {{\n  ROOT p = f32[] parameter(0)\n}}\n")
    return {"module": module or [], "opcodes": table}


def main(argv: list[str]) -> int:
    from hloscope.ir.opcodes import OPCODES

    table = derive(OPCODES)
    if "--check" in argv:
        same = json.loads(TABLE.read_text()) == table
        print("the table is jaxlib's" if same else "the table differs from jaxlib's answers")
        return 0 if same else 1
    TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{TABLE.relative_to(ROOT)}: {len(table['opcodes'])} opcodes, "
          f"{len(table['module'])} module attributes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
