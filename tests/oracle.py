"""XLA's own HLO parser (jaxlib._hlo) as the test oracle.

XLA's parser aborts the whole process (CHECK failure) on some malformed input,
so `xla_views` runs it in a child process and reports per text: the module's
computations with instruction names, opcodes, shapes and operand names, or the
error XLA gave.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

_CHILD = r'''
import json, re, sys
from jaxlib import _hlo

def shape_and_opcode(line):
    rhs = line.split(" = ", 1)[1]
    if rhs.startswith("("):
        depth = 0
        for i, c in enumerate(rhs):
            depth += (c == "(") - (c == ")")
            if depth == 0:
                break
        shape, rest = rhs[: i + 1], rhs[i + 1 :]
    else:
        shape, _, rest = rhs.partition(" ")
    opcode = re.match(r"\s*([\w\-]+)\(", rest).group(1)
    return shape, opcode

for text in json.load(sys.stdin):
    try:
        m = _hlo.hlo_module_from_text(text)
    except Exception as e:
        print(json.dumps({"error": str(e).splitlines()[0]}), flush=True)
        continue
    comps = []
    for c in m.computations():
        instrs = []
        for i in c.instructions():
            shape, opcode = shape_and_opcode(i.to_string())
            instrs.append([i.name, opcode, shape, [o.name for o in i.operands()], str(i.opcode)])
        comps.append({"name": c.name, "instructions": instrs})
    print(json.dumps({"name": m.name, "computations": comps}), flush=True)
'''

_LAYOUT = re.compile(r"\{[^{}]*\}")
_COMMENT = re.compile(r"/\*.*?\*/")


def xla_views(texts: list[str]) -> list[dict]:
    """One view (or {"error": ...}) per text; a crash marks the rest as crashed."""
    out: list[dict] = []
    pending = list(texts)
    while pending:
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(pending),
                              capture_output=True, text=True, timeout=600)
        lines = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
        out.extend(lines)
        pending = pending[len(lines):]
        if pending:  # the child died on pending[0]: XLA aborted on that input
            out.append({"error": "XLA parser crashed", "crashed": True})
            pending = pending[1:]
    return out


def strip_layout(shape: str) -> str:
    return _LAYOUT.sub("", _COMMENT.sub("", shape)).replace(" ", "")


_DERIVED_BY_XLA = {"recv-done", "send-done"}


def _all_laid_out(shape: str) -> bool:
    """Every non-scalar array in the shape text has an explicit layout."""
    return len(re.findall(r"\[[^\]]+\]", shape)) == len(re.findall(r"\[[^\]]+\]\{", shape)) > 0


def _squash(shape: str) -> str:
    return _COMMENT.sub("", shape).replace(" ", "")


def our_view(module) -> dict:
    return {
        "name": module.name,
        "computations": [
            {
                "name": c.name,
                "instructions": [
                    [i.name, i.opcode, i.shape.text(layout=True), list(i.operands)]
                    for i in c.instructions
                ],
            }
            for c in module.computations
        ],
    }


def compare(ours: dict, xla: dict) -> list[str]:
    """Differences between our view and XLA's, as readable lines (empty: equal)."""
    problems: list[str] = []
    if ours["name"] != xla["name"]:
        problems.append(f"module name {ours['name']!r} != {xla['name']!r}")
    o_comps = {c["name"]: c for c in ours["computations"]}
    x_comps = {c["name"]: c for c in xla["computations"]}
    if set(o_comps) != set(x_comps):
        problems.append(f"computations differ: only ours {sorted(set(o_comps) - set(x_comps))}, "
                        f"only XLA {sorted(set(x_comps) - set(o_comps))}")
    for name in sorted(set(o_comps) & set(x_comps)):
        o_list, x_list = o_comps[name]["instructions"], x_comps[name]["instructions"]
        if len(o_list) != len(x_list):
            problems.append(f"{name}: {len(o_list)} instructions != {len(x_list)}")
            continue
        # XLA makes names unique module-wide and may rename; pair by position.
        rename = {x[0]: o[0] for o, x in zip(o_list, x_list)}
        for o, x in zip(o_list, x_list):
            where = f"{name}/{o[0]}"
            if o[0] != x[0] and not x[0].startswith(o[0].rsplit(".", 1)[0]):
                problems.append(f"{where}: name {o[0]} != {x[0]}")
            # XLA prints async-start wrapping op X as "X-start"; the enum still says async.
            async_sugar = o[1].startswith("async-") and x[4].startswith("HloOpcode.kAsync")
            if o[1] != x[1] and not async_sugar:
                problems.append(f"{where}: opcode {o[1]} != {x[1]}")
            if o[1] in _DERIVED_BY_XLA:
                pass  # XLA replaces the printed shape with its recv/send's; we keep the text's
            elif strip_layout(o[2]) != strip_layout(x[2]):
                problems.append(f"{where}: shape {o[2]} != {x[2]}")
            elif _all_laid_out(o[2]) and _squash(o[2]) != _squash(x[2]):
                problems.append(f"{where}: layout {o[2]} != {x[2]}")
            if o[3] != [rename.get(n, n) for n in x[3]]:
                problems.append(f"{where}: operands {o[3]} != {x[3]}")
    return problems


def xla_cost_analysis(text: str) -> dict:
    """XLA's HloCostAnalysis of an HLO module text (as the CPU client runs it: the analysis
    whose figures `compiled.cost_analysis()` reports), in this process: for well-formed
    (hand-written) modules only, as XLA's parser aborts on some malformed ones."""
    import jax
    from jax._src.lib import xla_client
    from jaxlib import _hlo

    client = jax.devices("cpu")[0].client
    return dict(xla_client._xla.hlo_module_cost_analysis(client, _hlo.hlo_module_from_text(text)))
