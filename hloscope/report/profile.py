"""`hloscope profile` as text: measured time per instruction and category."""

from __future__ import annotations

from hloscope.report.roofline import clip
from hloscope.units import human_seconds


def _t(seconds: float) -> str:
    return human_seconds(seconds, 3)


def profile_text(source: str, prof, report: dict, spec, with_hlo: bool, top: int) -> str:
    if prof.events or not prof.aggregated:
        steps = max(report["steps"], 1)
        head = (f"{source}: {len(prof.events)} op events, {report['steps']} step(s) of "
                f"{_t(report['step_seconds'] / steps)}, idle {report['idle_fraction'] * 100:.1f}%")
    else:
        head = f"{source}: an XProf table of {len(prof.aggregated)} ops (times summed over the profile)"
    out = [head + f"; device {prof.device or prof.device_kind or 'unknown'}"
           + (f", roofline on {spec.name}" if spec else "")]
    launches = report.get("launches") or []
    if launches:
        count = sum(r["count"] for r in launches)
        out.append(f"  host: {count} kernel launch/copy call(s), {_t(sum(r['host_seconds'] for r in launches))} "
                   f"of host time (not device time; counted apart from the kernels)")
    for w in report["warnings"]:
        out.append(f"warning: {w}")
    if with_hlo:
        per = max(report["steps"], 1) * max(report.get("devices", 1), 1)
        out.append("  by category, per step: " + ", ".join(f"{k} {_t(v / per)}" for k, v in report["categories"].items()))
        rows = report["instructions"] if top <= 0 else report["instructions"][:top]
        several = len({r["module"] for r in report["instructions"]}) > 1
        out.append(f"  {'instruction':34} {'category':20} {'runs':>6} {'per step':>11} "
                   f"{'mean':>11} {'share':>6} {'roofline':>11}")
        for r in rows:
            roof = _t(r["roofline_seconds"]) if "roofline_seconds" in r else "-"
            roof += f" ({r['bound']})" if "bound" in r else ""
            name = f"{r['module']}/{r['instruction']}" if several else r["instruction"]
            out.append(f"  {name[:34]:34} {r['category'][:20]:20} {r.get('executions', r['count']):6} "
                       f"{_t(r.get('per_step_seconds', r['total_seconds'])):>11} {_t(r['mean_seconds']):>11} "
                       f"{r['share'] * 100:5.1f}% {roof:>11}")
        for axis, a in report.get("collectives_by_axis", {}).items():
            share = f", {a['share_of_peak'] * 100:.1f}% of the links' peak" if "share_of_peak" in a else ""
            out.append(f"  collectives over {axis}: {a['ops']} op(s), {a['moved_bytes'] / 2**20:.1f} MiB "
                       f"moved per device in {_t(a['seconds'])}: "
                       f"{a['bytes_per_s'] / 1e9:.2f} GB/s{share}")
        devices = sorted({d for r in report["instructions"] for d in r.get("devices", {})})
        if len(devices) > 1:
            out.append("  per device: " + ", ".join(
                f"{d} {_t(sum(r['devices'].get(d, {}).get('total_seconds', 0.0) for r in report['instructions']))}"
                for d in devices))
        out.extend(kernel_lines(report.get("kernels", [])))
        if report.get("breakdown"):
            from hloscope.report.roofline import breakdown_lines

            out.extend(breakdown_lines(report["breakdown"], top, "measured (per step and device)"))
        out.append(f"  unmatched events: {sum(u['count'] for u in report['unmatched_events'])} "
                   f"({len(report['unmatched_events'])} ops); executed instructions never seen: "
                   f"{report['unseen_instructions']}")
    else:
        all_ops = report["ops"]
        ops = all_ops if top <= 0 else all_ops[:top]
        whole = sum(r["self_seconds"] for r in all_ops)
        out.append("  (no --hlo: per-op totals as the profile states them, by self time)")
        cats = report.get("op_categories") or {}
        if cats and whole:
            out.append("  by category (self time): " + ", ".join(
                f"{k} {v / whole * 100:.1f}%" for k, v in list(cats.items())[:10]))
        with_cat = any(r.get("category") for r in all_ops)
        out.append(f"  {'module':24} {'op':40} " + (f"{'category':20} " if with_cat else "")
                   + f"{'count':>7} {'self':>11} {'total':>11} {'self %':>6}")
        for r in ops:
            out.append(f"  {r['module'][:24]:24} {clip(r['hlo_op']):40} "
                       + (f"{r.get('category', '')[:20]:20} " if with_cat else "")
                       + f"{r['count']:7} {_t(r['self_seconds']):>11} {_t(r['total_seconds']):>11} "
                       f"{r['self_seconds'] / whole * 100 if whole else 0:5.1f}%")
        if len(all_ops) > len(ops):
            out.append(f"  and {len(all_ops) - len(ops)} more (--top 0 lists all)")
        if report.get("breakdown"):
            from hloscope.report.roofline import breakdown_lines

            out.extend(breakdown_lines(report["breakdown"], top, "measured"))
    return "\n".join(out)


def kernel_lines(kernels: list[dict]) -> list[str]:
    """The kernel view: TraceMe regions by kind, counter averages, LLO bundles."""
    out = []
    for k in kernels:
        head = f"  kernel %{k['instruction']}: {k['runs']} run(s), {_t(k['seconds'])}"
        if k["kinds"]:
            head += "; " + ", ".join(f"{kind} {share:.0%}" for kind, share in
                                     sorted(k["shares"].items(), key=lambda kv: -kv[1]))
        if k["bundles"]:
            head += f"; {k['bundles']} LLO bundles"
        out.append(head)
        if k["counters"]:
            out.append("    utilization over its runs: " + ", ".join(
                f"{name} {value:.1f}%" for name, value in k["counters"].items()))
        for r in k["regions"][:8]:
            out.append(f"    {r['name'][:32]:32} {r['kind']:9} x{r['count']:<5} {_t(r['seconds']):>11}")
    return out
