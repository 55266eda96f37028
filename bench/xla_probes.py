"""Structured probes of XLA's parser against hloscope's (#38): each takes the corpus's and
the fixtures' modules (tests/conformance.collect) and changes one instruction in one way,
then asks jaxlib's parser (in a forked child: some inputs abort it) and hloscope in both modes.

    python3 bench/xla_probes.py [--seed 0] [--per-module 3]

Probes: `drop-shape` (an instruction printed without its shape: XLA infers it), `swap-shape`
(another shape of the module, or a tuple), `operands` (one operand dropped or repeated),
`opcode` (another opcode). Per probe: cases, and the disagreements by kind: XLA accepts and
hloscope's default mode refuses (a miss), XLA refuses and strict mode accepts (lenient), XLA
aborts the process and hloscope accepts, and any exception out of hloscope's parser (none
allowed). A miss may be deliberate: hloscope refuses, in both modes, shapes XLA's verifier
refuses that its parser takes (an operand that disagrees with its elementwise result, a
dimension past the rank); those are listed by opcode so each can be judged.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

_LINE = re.compile(r"(?m)^(\s*(?:ROOT )?%?[\w.\-]+ = )(\S+) ([a-z][a-z\-]*)\(([^()]*)\)")
_OPCODES = ["add", "negate", "multiply", "copy", "convert", "reshape", "transpose", "broadcast",
            "slice", "reduce", "dot", "select", "compare", "tuple", "get-tuple-element",
            "concatenate", "pad", "iota", "bitcast", "exponential", "maximum", "dynamic-slice",
            "all-reduce", "custom-call", "fusion", "call", "while", "sort", "gather", "scatter",
            "reverse", "clamp"]


def _mutants(kind: str, text: str, rng: random.Random, per_module: int) -> list[tuple[str, str]]:
    """(opcode, mutant text) of one probe over one module."""
    found = list(_LINE.finditer(text))
    shapes = sorted({m.group(2) for m in found})
    out = []
    for m in rng.sample(found, min(per_module, len(found))):
        if kind == "drop-shape":
            new = text[:m.start(2)] + text[m.end(2) + 1:]
        elif kind == "swap-shape":
            shape = rng.choice(shapes + ["f32[7]", "(f32[2], s32[])", "u32[]", "pred[]"])
            if shape == m.group(2):
                continue
            new = text[:m.start(2)] + shape + text[m.end(2):]
        elif kind == "operands":
            ops = [o.strip() for o in m.group(4).split(",") if o.strip()]
            if not ops or "[" in m.group(4):  # (typed operands, `f32[2,2] %a`: not split at commas)
                continue
            if rng.random() < 0.5:
                ops.pop(rng.randrange(len(ops)))
            else:
                ops.append(rng.choice(ops))
            new = text[:m.start(4)] + ", ".join(ops) + text[m.end(4):]
        else:
            opcode = rng.choice(_OPCODES)
            if opcode == m.group(3):
                continue
            new = text[:m.start(3)] + opcode + text[m.end(3):]
        out.append((m.group(3), new))
    return out


def _xla(text: str) -> str:
    """jaxlib's verdict in a forked child: "accepts", "refuses" or "aborts"."""
    from jaxlib import _hlo

    pid = os.fork()
    if pid == 0:
        os.close(2)
        try:
            _hlo.hlo_module_from_text(text)
        except Exception:  # noqa: BLE001 - any refusal
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return {0: "accepts", 3: "refuses"}.get(code, "aborts")


def _ours(text: str, strict: bool) -> str:
    from hloscope.parser import ParseError, parse

    try:
        parse(text, "probe", strict=strict)
    except ParseError:
        return "refuses"
    except Exception as e:  # noqa: BLE001 - the point: reported, never allowed
        return f"raises {type(e).__name__}"
    return "accepts"


def probe(kind: str, seed: int, per_module: int) -> dict:
    from conformance import collect

    rng = random.Random(seed)
    tally = {"cases": 0, "miss": collections.Counter(), "lenient": collections.Counter(),
             "abort accepted": collections.Counter(), "raises": collections.Counter()}
    for _, text in collect():
        if len(text) > 40_000:
            continue
        for opcode, mutant in _mutants(kind, text, rng, per_module):
            tally["cases"] += 1
            xla, default, strict = _xla(mutant), _ours(mutant, False), _ours(mutant, True)
            if "raises" in default + strict:
                tally["raises"][opcode] += 1
            if xla == "accepts" and default != "accepts":
                tally["miss"][opcode] += 1
            if xla == "refuses" and strict == "accepts":
                tally["lenient"][opcode] += 1
            if xla == "aborts" and "accepts" in (default, strict):
                tally["abort accepted"][opcode] += 1
    return tally


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-module", type=int, default=3)
    ns = ap.parse_args()
    print("| probe | cases | XLA accepts, default refuses | XLA refuses, strict accepts "
          "| XLA aborts, hloscope accepts | exceptions |")
    print("| --- | --- | --- | --- | --- | --- |")
    raised = 0
    for kind in ("drop-shape", "swap-shape", "operands", "opcode"):
        t = probe(kind, ns.seed, ns.per_module)
        cells = [", ".join(f"{op} {n}" for op, n in t[k].most_common()) or "0"
                 for k in ("miss", "lenient", "abort accepted", "raises")]
        raised += sum(t["raises"].values())
        print(f"| {kind} | {t['cases']} | " + " | ".join(cells) + " |", flush=True)
    return 1 if raised else 0


if __name__ == "__main__":
    sys.exit(main())
