"""`hloscope profile`: measured time per instruction and category, vs. the roofline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import (
    Format,
    FormatOpt,
    GpusPerNodeOpt,
    NoCacheOpt,
    emit,
    fail,
    guard,
    load_file,
    use_cache,
)


def profile(
    trace: Annotated[Path, typer.Argument(help="A profile: directory, *.xplane.pb, *.trace.json.gz, or XProf hlo_stats JSON.")],
    hlo: Annotated[list[Path] | None, typer.Option("--hlo", help="HLO file(s) of the profiled program (repeatable).")] = None,
    chip_name: Annotated[str | None, typer.Option("--chip", "-c", help="Chip for the roofline (default: detected from the trace).")] = None,
    format: FormatOpt = Format.text,
    top: Annotated[int, typer.Option("--top", help="Rows to show in text format (0: all).")] = 25,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help="Largest (decompressed) profile to read.")] = 2 << 30,
    max_events: Annotated[int, typer.Option("--max-events", help="Most op events to read.")] = 50_000_000,
    allow_mismatch: Annotated[bool, typer.Option("--allow-mismatch", help="Report even when the trace links fewer than half of a --hlo module's ops (by default an error: the trace is of another program).")] = False,
    gpus_per_node: GpusPerNodeOpt = None,
    by: Annotated[str | None, typer.Option("--by", help=(
        "Add the measured time up per step by JAX named scope, layer, source line or "
        "forward/backward pass (scope, layer, source, pass); needs --hlo."))] = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """The HLO op profile: measured time per instruction and category, vs. the roofline.

    Example: hloscope profile /tmp/jax-trace --hlo module.hlo.txt
    """
    use_cache(no_cache)
    from hloscope.cost.chips import set_link_domain

    set_link_domain(gpus_per_node)
    from hloscope.trace import TraceError, join, load_profile, mismatch
    from hloscope.trace.report import detect_chip, profile_report

    try:
        prof = load_profile(trace, max_bytes=max_bytes, max_events=max_events)
    except TraceError as e:
        fail(str(e) if e.path else f"{trace}: error: {e}")
    modules = [m for path in (hlo or []) for m in load_file(path)]

    def run() -> None:
        from hloscope.cost.chips import get_chip
        from hloscope.report.profile import profile_text

        spec = get_chip(chip_name) if chip_name else detect_chip(prof.device_kind)
        index = join(prof, modules)
        why = mismatch(prof, index, modules)
        if why is not None and not allow_mismatch:
            fail(f"{trace}: error: {why}")
        report = profile_report(prof, index, modules, spec)
        if by is not None:
            from hloscope.cost.aggregate import BY
            from hloscope.trace.report import measured_breakdown

            if by not in BY:
                fail(f"error: --by {by!r}: one of {', '.join(BY)}")
            if modules:
                report["breakdown"] = measured_breakdown(report, modules, index, by)
            elif any(r["op_name"] for r in report["ops"]):  # (an XProf table's framework ops)
                from hloscope.cost.aggregate import group

                report["breakdown"] = group([{"op_name": r["op_name"], "source": "", "seconds": r["self_seconds"],
                                              "flops": 0.0, "bytes": 0.0} for r in report["ops"]], by)
            else:
                fail(f"error: --by needs --hlo (the events of {trace} name no framework op)")
        emit(format, lambda: report,
             lambda: profile_text(str(trace), prof, report, spec, bool(modules), top))

    guard(run)
