"""Where the time goes, added up: roofline (or measured) rows grouped by the JAX named scope,
the layer, the source line, or the pass (forward / backward) their op came from.

Everything is read from an op's `op_name` (XLA keeps JAX's name stack there):
`jit(loss)/transpose(jvp(layer_3))/attention/dot_general` is
- the backward pass (`transpose(...)` is JAX's transpose of the forward, `jvp(...)` the
  forward of a gradient; neither, in a module that has both, is `other`: the loss, the
  optimizer update; a module without gradients is all forward, but for ops with no op_name
  at all, `(no op_name)`);
- scope `layer_3/attention` (the path without the jit/jvp/transpose/remat wrappers and
  without the last part, the primitive);
- layer 3 (the first scope part that names a layer: `layer_3`, `layers_3`, `block3`,
  `h.3`, `Block_3`...); ops in a loop body (a `lax.scan` over layers) are `loop body %name`
  with their trip count, and ops of no layer `(no layer)`.
An op_name XLA joined for a fused op (`a;b`) counts for its first part.
"""

from __future__ import annotations

import re
from collections import defaultdict

BY = ("scope", "layer", "source", "pass")
_WRAPPERS = re.compile(r"^(?:jvp|transpose|remat|checkpoint|vmap|pmap|jit|pjit|shard_map|custom_vjp_call|"
                       r"custom_jvp_call|remat2|checkpoint_name)\((.*)\)$")
_LAYER = re.compile(r"(?i)(?:^|[^a-z])(?:layers?|blocks?|h)[_.\-]?(\d+)$")
NO_SCOPE, NO_LAYER, NO_SOURCE = "(no scope)", "(no layer)", "(no source)"
NO_OP_NAME = "(no op_name)"


def _split(path: str) -> list[str]:
    """`a/b(c/d)/e` -> [a, b(c/d), e]: slashes inside parentheses do not split."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(path):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "/" and depth == 0:
            out.append(path[start:i])
            start = i + 1
    out.append(path[start:])
    return [p for p in out if p]


def parse_op_name(op_name: str) -> tuple[str, list[str]]:
    """(pass, scope parts) of an op_name: pass is "backward", "forward" or "" (neither)."""
    first = op_name.split(";", 1)[0]
    parts = _split(first)
    if not parts or not any(ch in first for ch in "/("):
        return "", []  # an XLA-made name (`broadcast.12`): no JAX scope
    kind = ""
    scopes: list[str] = []
    for i, part in enumerate(parts[:-1]):  # (the last part is the primitive)
        inner = part
        while (m := _WRAPPERS.match(inner)) is not None:
            head = inner.split("(", 1)[0]
            if head == "transpose":
                kind = "backward"
            elif head == "jvp" and kind != "backward":
                kind = "forward"
            inner = m.group(1)
        if part.startswith(("jit(", "pjit(")) and inner == part[part.index("(") + 1:-1] and \
                (i == 0 or inner == "main"):
            continue  # the jitted function's own name (and JAX's jit(main)): not a scope
        scopes.extend(_split(inner))
    return kind, [s for s in scopes if s]


def layer_of(scopes: list[str]) -> str | None:
    for s in scopes:
        m = _LAYER.search(s)
        if m:
            return m.group(1)
    return None


def group(rows: list[dict], by: str, loops: dict[str, tuple[str, int]] | None = None) -> dict:
    """Rows (each with op_name, source, seconds, flops, bytes; and computation) summed per
    group: {"by", "total": {...}, "groups": [{"key", "seconds", "share", "flops", "bytes",
    "ops", "forward_seconds", "backward_seconds"}]}; `loops`: computation -> (the while
    instruction, trip count) for loop bodies."""
    if by not in BY:
        raise ValueError(f"--by {by!r}: one of {', '.join(BY)}")
    parsed = [(r, *parse_op_name(r.get("op_name") or "")) for r in rows]
    has_grad = any(kind for _, kind, _ in parsed)
    sums: dict[str, dict] = defaultdict(lambda: {"seconds": 0.0, "flops": 0.0, "bytes": 0.0, "ops": 0,
                                                 "forward_seconds": 0.0, "backward_seconds": 0.0})
    total = {"seconds": 0.0, "flops": 0.0, "bytes": 0.0, "ops": 0}
    for r, kind, scopes in parsed:
        # (outside a gradient, an op with no op_name at all, as in a dump stripped of its
        # metadata, says nothing of its pass: not called forward)
        step = kind or ("other" if has_grad else "forward" if r.get("op_name") else NO_OP_NAME)
        key = _key(by, r, step, scopes, loops or {})
        g = sums[key]
        for field in ("seconds", "flops", "bytes"):
            g[field] += r[field]
            total[field] += r[field]
        if not r.get("part"):  # (the parts of one combined collective are one op)
            total["ops"] += 1
        g["ops"] += 1
        if step in ("forward", "backward"):
            g[f"{step}_seconds"] += r["seconds"]
    groups = [{"key": k, **v, "share": v["seconds"] / total["seconds"] if total["seconds"] else 0.0}
              for k, v in sums.items()]
    groups.sort(key=_order(by))
    out = {"by": by, "total": total, "groups": groups}
    field = "source" if by == "source" else "op_name"
    if rows and not any(r.get(field) for r in rows):
        out["note"] = (f"no op carries its {'source line' if by == 'source' else 'op_name'} "
                       "(the dump was written without metadata): the ops cannot be told apart "
                       f"by {by}; dump the module with its metadata (XLA keeps it by default)")
    return out


def _key(by: str, r: dict, step: str, scopes: list[str], loops: dict) -> str:
    if by == "pass":
        return step
    if by == "source":
        return r.get("source") or NO_SOURCE
    if by == "scope":
        return "/".join(scopes) or NO_SCOPE
    layer = layer_of(scopes)
    if layer is not None:
        return f"layer {layer}"
    loop = loops.get(r.get("computation", ""))
    if loop is not None:  # (its trip count when the rows give it: the roofline's, not a trace's)
        return f"loop body %{loop[0]}" + (f" (x{loop[1]})" if loop[1] else "")
    if any(a == "while" and b == "body" for a, b in zip(scopes, scopes[1:])):
        return "loop body (a scan: its iterations together)"
    return NO_LAYER


def _order(by: str):
    def key(g: dict):
        m = re.match(r"layer (\d+)$", g["key"])
        if by == "layer":
            return (0, int(m.group(1)), "") if m else (1, -g["seconds"], g["key"])
        if by == "pass":
            order = ("forward", "backward", "other", NO_OP_NAME)
            return (order.index(g["key"]) if g["key"] in order else len(order), 0, "")
        return (0, -g["seconds"], g["key"])
    return key


def loop_bodies(module) -> dict[str, tuple[str, int]]:
    """Loop body computation -> (its while instruction, 0): the count is the row's own."""
    return {i.attr("body"): (i.name, 0) for i in module.of_opcode("while") if i.attr("body")}


def roofline_rows(report) -> list[dict]:
    """A roofline report's rows as group() takes them: per step (times its trip count)."""
    return [{"op_name": r.op_name, "source": r.source, "computation": r.computation,
             "instruction": r.instruction, "seconds": r.t_bound * r.times,
             "flops": r.flops * r.times, "bytes": float(r.bytes * r.times), "times": r.times}
            for r in report.rows]


_COMBINABLE = ("all-reduce", "all-gather", "reduce-scatter", "all-reduce-start", "all-gather-start")


def split_combined(module, rows: list[dict]) -> list[dict]:
    """A collective XLA's combiner made of several (one all-reduce of every layer's gradient,
    named after the first) is split over its operands, each part with the op_name and
    source of the op that made that operand, in proportion to its bytes."""
    from hloscope.source import source_of

    out = []
    for r in rows:
        instr = None
        comp = module.by_name.get(r["computation"])
        if comp is not None and r.get("instruction"):
            instr = comp.by_name.get(r["instruction"])
        if instr is None or instr.opcode not in _COMBINABLE or len(instr.operands) < 2:
            out.append(r)
            continue
        parts = [comp.by_name.get(name) for name in instr.operands]
        sizes = [p.shape.logical_bytes if p is not None else 0 for p in parts]
        whole = sum(sizes)
        if not whole or any(p is None for p in parts):
            out.append(r)
            continue
        for k, (p, size) in enumerate(zip(parts, sizes)):
            share = size / whole
            src = source_of(p, module)
            out.append({**r, "op_name": src.op_name or r["op_name"], "source": src.location or r["source"],
                        "seconds": r["seconds"] * share, "flops": r["flops"] * share,
                        "bytes": r["bytes"] * share, "part": k})
    return out


def breakdown(module, report, by: str) -> dict:
    """The roofline report of `module` grouped `by` scope, layer, source or pass."""
    loops = loop_bodies(module)
    rows = split_combined(module, roofline_rows(report))
    for r in rows:  # (a loop body's ops: the body's trip count is their `times`)
        if r["computation"] in loops:
            loops[r["computation"]] = (loops[r["computation"]][0], max(loops[r["computation"]][1], r["times"]))
    return group(rows, by, loops)
