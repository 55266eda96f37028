"""`hloscope diff` as text."""

from __future__ import annotations

from hloscope.units import human_bytes, human_seconds

METRIC_FORMAT = {  # a diff total as its kind reads (the HTML report's A/B table too)
    "step_time": human_seconds, "exposed": human_seconds, "bytes": human_bytes,
    "hbm_peak": human_bytes, "flops": lambda v: f"{v:.4g}", "mfu": lambda v: f"{v:.1%}",
    "findings": lambda v: f"{v:.0f}", "donated": human_bytes,
}


def _change(a: float, b: float) -> str:
    if a == b:
        return "="
    if not a:
        return "new"
    return f"{(b - a) / abs(a):+.1%}"


def diff_text(record: dict) -> str:
    out = [f"A: {record['a']}", f"B: {record['b']}"]
    for p in record["pairs"]:
        out.append("")
        out.append(f"HloModule {p['a']}" + (f" -> {p['b']}" if p["b"] != p["a"] else ""))
        for k, t in p["totals"].items():
            fmt = METRIC_FORMAT[k]
            out.append(f"  {k:10} {fmt(t['a']):>14} -> {fmt(t['b']):>14}  {_change(t['a'], t['b'])}")
        out.append("  by category (static time; FLOPs; HBM bytes):")
        for k, c in p["categories"].items():
            if c["seconds"]["delta"] or c["flops"]["delta"] or c["bytes"]["delta"]:
                out.append(f"    {k:18} {human_seconds(c['seconds']['a'])} -> {human_seconds(c['seconds']['b'])}"
                           f"; {c['flops']['a']:.3g} -> {c['flops']['b']:.3g}"
                           f"; {human_bytes(c['bytes']['a'])} -> {human_bytes(c['bytes']['b'])}")
        for label, key in (("added", "ops_added"), ("removed", "ops_removed")):
            for o in p[key][:20]:
                forms = ", ".join(f"{form} x{n}" for form, n in o["forms"].items())
                out.append(f"  op {label}: {o['opcode']} [{o['op']}] {forms}")
        for o in p["ops_changed"][:20]:
            before = ", ".join(f"{f} x{n}" for f, n in o["a"].items()) or "-"
            after = ", ".join(f"{f} x{n}" for f, n in o["b"].items()) or "-"
            out.append(f"  op changed: {o['opcode']} [{o['op']}] {before} -> {after}")
        for c in p["collectives"]:
            out.append(f"  collective {c['opcode']} {human_bytes(c['moved_bytes'])}"
                       f"{' async' if c['async'] else ''}: x{c['a']} -> x{c['b']}")
        for f in p["findings_new"]:
            out.append(f"  new finding: {f['code']} x{f['count']}: {f['message']}")
        for f in p["findings_fixed"]:
            out.append(f"  fixed finding: {f['code']} x{f['count']}: {f['message']}")
        out.extend(f"  {v}" for v in p.get("verdicts", ()))
        for g in p["gates"]:
            out.append(f"  gate {g['gate']}: {'TRIPPED' if g['tripped'] else 'ok'}")
    out.extend(f"note: {n}" for n in record["notes"])
    out.extend(f"regression: {t}" for t in record["tripped"])
    return "\n".join(out)


def profile_diff_text(record: dict) -> str:
    out = [f"A: {record['a']}", f"B: {record['b']}"]
    for name, m in record["modules"].items():
        out.append(f"  module {name or '(none)'}: {human_seconds(m['a'])} -> {human_seconds(m['b'])}"
                   f"  {_change(m['a'], m['b'])}")
    out.append("  ops by change in measured time:")
    for r in record["ops"][:25]:
        out.append(f"    {r['hlo_op'][:40]:40} {human_seconds(r['a']):>11} -> {human_seconds(r['b']):>11}"
                   f"  x{r['count_a']} -> x{r['count_b']}")
    return "\n".join(out)
