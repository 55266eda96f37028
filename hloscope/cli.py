"""The `hloscope` command line. Typer only: parse arguments, call the API, format, exit.

Exit codes: 0 success (lint: nothing at or above --fail-on), 1 findings,
2 usage or input error (printed as FILE:LINE:COL: error: ...).
"""

from __future__ import annotations

import json
import signal
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from hloscope import __version__

app = typer.Typer(
    name="hloscope",
    help="Static analysis of XLA HLO dumps: parse, count, lint.\n\n"
    "Examples:\n\n"
    "  hloscope stats fixtures/tpu/mlp_v5e.hlo.txt\n\n"
    "  hloscope parse --format json module.hlo.txt | jq '.modules[0].computations[0]'\n\n"
    "  hloscope lint kernel.hlo.txt",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


class Format(str, Enum):
    text = "text"
    json = "json"


FileArg = Annotated[Path, typer.Argument(help="An HLO text file (as XLA dumps or prints it).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Parse everything through the full grammar now.")
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help=(
        "Do not read or write the on-disk cache of parsed modules and findings."))
]


def _cache(no_cache: bool) -> None:
    from hloscope import cache

    cache.enabled = not no_cache


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hloscope {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show Python tracebacks on errors.")] = False,
) -> None:
    _state["debug"] = debug
    if hasattr(signal, "SIGPIPE"):  # `hloscope ... | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def fail(message: str) -> NoReturn:
    typer.echo(message, err=True)
    raise typer.Exit(2)


def _load(path: Path, strict: bool = False, read: tuple[bytes, str] | None = None):
    """The file's modules, or exit 2 with the located error; `read`: (bytes, text) of
    the file when the caller has read it."""
    from hloscope.parser import ParseError, load

    _state["file"] = str(path)
    try:
        with _parsing_notice(path, strict):
            if read is not None:
                return load(path, strict=strict, data=read[0], text=read[1])
            return load(path, strict=strict)
    except ParseError as e:
        _fail_located(e)


def _fail_located(e) -> NoReturn:
    """Exit 2 with a ParseError's located line (--debug: the traceback instead)."""
    if _state["debug"]:
        raise e
    fail(e.render())


# Parses expected to take a second or more (~30 MB/s fast, ~3 MB/s strict) say so on a
# terminal while they run.
NOTICE_BYTES = {False: 32 << 20, True: 3 << 20}


@contextmanager
def _parsing_notice(path: Path, strict: bool):
    """`parsing FILE (N MB)...` on stderr while a long parse runs, when it is a terminal."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    shown = size >= NOTICE_BYTES[strict] and sys.stderr.isatty()
    if shown:
        sys.stderr.write(f"parsing {path} ({size / 1e6:.0f} MB{', strict' if strict else ''})...")
        sys.stderr.flush()
    try:
        yield
    finally:
        if shown:
            sys.stderr.write("\r\033[K")  # the line cleared: output follows as usual
            sys.stderr.flush()


def _counted_in_halves(path: Path, every: bool) -> tuple[list[dict] | None, tuple[bytes, str] | None]:
    """(stats counted on two cores or None, the file's bytes and text for _load)."""
    from hloscope.halves import stats_in_halves
    from hloscope.parser import ParseError
    from hloscope.parser.load import decode, read

    _state["file"] = str(path)
    try:
        data = read(path)
        text = decode(data, str(path))
    except ParseError as e:
        _fail_located(e)
    with _parsing_notice(path, False):
        return stats_in_halves(text, str(path), every), (data, text)


def _guard(fn, *args):
    """Run fn; a located error exits 2 with one line, anything else too (unless --debug)."""
    from hloscope.parser import ParseError

    try:
        return fn(*args)
    except ParseError as e:
        if not e.path or e.path == "<string>":  # raised by a value parsed on first use
            e.path = _state.get("file", "")
            if e.source_line is None and e.line > 0 and e.path:
                import linecache

                line = linecache.getline(e.path, e.line)
                if line:
                    e.attach_source(line.rstrip("\n"))
        _fail_located(e)
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - never a traceback for a user's file
        if _state["debug"]:
            raise
        fail(f"error: internal error ({type(e).__name__}: {e}); rerun with --debug for details")


def _chip(name: str):
    """A chip from the table, or a usage error naming the known ones."""
    from hloscope.cost.chips import get_chip

    try:
        return get_chip(name)
    except KeyError as e:
        fail(f"error: {e.args[0]}")


def _emit_json(payload: object) -> None:
    json.dump(payload, sys.stdout, indent=1)
    sys.stdout.write("\n")


@app.command()
def parse(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False,
    no_cache: NoCacheOpt = False) -> None:
    """Parse FILE and print its structure (computations, instructions, shapes, operands).

    Example: hloscope parse --format json fixtures/cpu/mlp_cpu.hlo.txt
    """
    _cache(no_cache)
    modules = _load(file, strict)

    def run() -> None:
        from hloscope.summary import module_json

        if format == Format.json:
            _emit_json({"version": 1, "modules": [module_json(m) for m in modules]})
            return
        for m in modules:
            typer.echo(f"HloModule {m.name} ({len(m.computations)} computations)")
            for c in m.computations:
                mark = "ENTRY " if c is m.entry else ""
                typer.echo(f"  {mark}{c.name}: {len(c.instructions)} instructions")
                for i in c.instructions:
                    ops = ", ".join(i.operands) if i.literal is None else i.literal
                    root = "ROOT " if i.is_root else ""
                    typer.echo(f"    {root}{i.name} = {i.shape} {i.opcode}({ops})")

    _guard(run)


@app.command()
def stats(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False,
          per_computation: Annotated[bool, typer.Option(
              "--per-computation", help="Also list every computation's counts (text format).")] = False,
          no_cache: NoCacheOpt = False,
          jobs: Annotated[int, typer.Option("--jobs", "-j", help=(
              "1: one process. Otherwise, with --no-cache, a single module of 2 MB or more is "
              "counted in two halves on two cores (the same result)."))] = 0) -> None:
    """Count opcodes, fusion kinds and custom-call targets per module and computation.

    Example: hloscope stats fixtures/tpu/transformer_v5p.hlo.txt
    """
    _cache(no_cache)
    every = per_computation or format == Format.json  # JSON always carries the list
    # without the cache, a large module is counted on two cores (hloscope.halves); with
    # it, the parsed module is kept for the next run instead
    halves = no_cache and not strict and jobs != 1
    counted, loaded = _counted_in_halves(file, every) if halves else (None, None)
    modules = _load(file, strict, loaded) if counted is None else []

    def run() -> None:
        from hloscope.cost.memory import memory_facts
        from hloscope.summary import module_stats

        result = counted or [{**module_stats(m, every), "memory": memory_facts(m)} for m in modules]
        if format == Format.json:
            _emit_json({"version": 1, "modules": result})
            return
        for s in result:
            typer.echo(f"HloModule {s['name']}: {s['instructions']} instructions in "
                       f"{s['computations']} computations ({s['fusion_computations']} fused)")
            _print_counts(s, "  ")
            mem = s["memory"]
            typer.echo("  memory: " + ", ".join(f"{k} {_human_bytes(v)}" for k, v in
                                                mem["bytes_per_memory_space"].items())
                       + f"; padding waste {_human_bytes(mem['padding_waste_bytes'])}")
            for b in mem["largest_buffers"]:
                typer.echo(f"    {_human_bytes(b['padded_bytes']):>11}  {b['instruction']} "
                           f"{b['shape']}" + (f" (padded {b['ratio']:.2f}x)" if b["ratio"] > 1 else ""))
            if per_computation:
                for c in s["per_computation"]:
                    tag = " [entry]" if c["is_entry"] else (" [fusion]" if c["is_fusion"] else "")
                    typer.echo(f"  {c['name']}{tag}: {c['instructions']} instructions")
                    _print_counts(c, "    ")

    _guard(run)


def _print_counts(s: dict, indent: str) -> None:
    typer.echo(indent + "opcodes: " + ", ".join(f"{k} {v}" for k, v in s["opcodes"].items()))
    if s["fusion_kinds"]:
        typer.echo(indent + "fusion kinds: " + ", ".join(f"{k} {v}" for k, v in s["fusion_kinds"].items()))
    if s["custom_call_targets"]:
        typer.echo(indent + "custom-call targets: "
                   + ", ".join(f"{k} {v}" for k, v in s["custom_call_targets"].items()))


def _human_bytes(n: float) -> str:
    from hloscope.units import human_bytes

    return human_bytes(n, decimals=2)


def _human_seconds(t: float) -> str:
    from hloscope.units import human_seconds

    return human_seconds(t, decimals=3)


@app.command()
def roofline(
    file: FileArg,
    chip: Annotated[str, typer.Option("--chip", "-c", help="Chip from the table: v4, v5e, v5p, v6e, v7x, h100, h200, cpu.")] = "v5e",
    format: FormatOpt = Format.text,
    top: Annotated[int, typer.Option("--top", help="Rows to show in text format (0: all).")] = 20,
    no_trip_counts: Annotated[bool, typer.Option("--no-trip-counts", help="Count loop bodies once (XLA's cost_analysis convention).")] = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Per-instruction FLOPs, bytes, intensity and compute/memory time on a chip.

    Example: hloscope roofline fixtures/tpu/transformer_v5p.hlo.txt --chip v5p
    """
    _cache(no_cache)
    spec = _chip(chip)
    modules = _load(file)

    def run() -> None:
        from hloscope.cost.roofline import roofline as build

        reports = [build(m, spec, trip_counts=not no_trip_counts) for m in modules]
        if format == Format.json:
            _emit_json({"version": 1, "chip": spec.key, "modules": [
                {"name": r.module, "totals": r.totals_json(),
                 "instructions": [row.to_json() for row in r.rows]} for r in reports]})
            return
        for r in reports:
            t = r.totals_json()
            typer.echo(f"HloModule {r.module} on {spec.name} (ridge {spec.ridge:.0f} FLOPs/byte)")
            typer.echo(f"  total: {t['flops']:.4g} FLOPs, {_human_bytes(t['bytes'])} accessed "
                       f"({_human_bytes(t['hbm_bytes'])} in HBM), {t['transcendentals']:.4g} transcendentals")
            typer.echo(f"  time: compute {_human_seconds(t['t_compute'])}, memory "
                       f"{_human_seconds(t['t_memory'])}, roofline {_human_seconds(t['t_roofline'])}")
            if t["unknown_trip_counts"]:
                typer.echo(f"  note: loops with unknown trip count (counted once): "
                           f"{', '.join(t['unknown_trip_counts'])}")
            rows = sorted(r.rows, key=lambda x: -x.t_bound * x.times)
            shown = rows if top <= 0 else rows[:top]
            typer.echo(f"  {'instruction':32} {'opcode':16} {'FLOPs':>10} {'bytes':>11} "
                       f"{'AI':>7} {'t_roofline':>11} bound    xla_est")
            for row in shown:
                est = _human_seconds(row.estimated_seconds) if row.estimated_seconds else "-"
                times = f" x{row.times}" if row.times > 1 else ""
                typer.echo(f"  {row.instruction[:32]:32} {row.opcode[:16]:16} {row.flops:10.3g} "
                           f"{_human_bytes(row.bytes):>11} {row.intensity:7.1f} "
                           f"{_human_seconds(row.t_bound):>11} {row.bound:8} {est}{times}")
            if len(rows) > len(shown):
                typer.echo(f"  ... {len(rows) - len(shown)} more (--top 0 shows all)")

    _guard(run)


@app.command()
def shape(
    text: Annotated[str, typer.Argument(help="A shape as HLO prints it, e.g. 'bf16[3,5]{1,0:T(8,128)(2,1)}'.")],
    format: FormatOpt = Format.text,
) -> None:
    """Logical vs padded size of a shape under its tiled layout (the scaling-book exercise).

    Example: hloscope shape 'bf16[3,5]{1,0:T(8,128)(2,1)}'
    """
    from lark.exceptions import UnexpectedInput

    from hloscope.cost.layout import memory_leaves, memory_space_name
    from hloscope.parser import parse_shape

    try:
        parsed = parse_shape(text.strip())
    except UnexpectedInput as e:
        col = getattr(e, "column", 1)
        fail(f"<shape>:1:{col}: error: not a valid HLO shape\n  {text}\n  {' ' * (col - 1)}^")
    leaves = memory_leaves(parsed)
    if not leaves:
        fail(f"error: {text} has no array data")
    logical = sum(m.logical_bytes for m in leaves)
    padded = sum(m.padded_bytes for m in leaves)
    first = leaves[0]
    result = {
        "shape": parsed.text(),
        "logical_bytes": logical,
        "padded_bytes": padded,
        "padded_dims": list(first.padded_dims) if len(leaves) == 1 else [list(m.padded_dims) for m in leaves],
        "logical_dims": list(first.logical_dims) if len(leaves) == 1 else [list(m.logical_dims) for m in leaves],
        "ratio": padded / logical if logical else 1.0,
        "memory_space": first.memory_space,
        "memory_space_name": memory_space_name(first.memory_space),
        "tile_levels": [list(t) for t in first.tile_levels],
    }
    if format == Format.json:
        _emit_json(result)
        return
    typer.echo(f"shape        {result['shape']}")
    typer.echo(f"physical     {result['logical_dims']} (major to minor)")
    typer.echo(f"tiles        {' then '.join(str(tuple(t)) for t in result['tile_levels']) or 'none'}")
    typer.echo(f"padded dims  {result['padded_dims']}")
    typer.echo(f"bytes        {logical} logical, {padded} padded ({result['ratio']:.2f}x)")
    typer.echo(f"memory space {result['memory_space']} ({result['memory_space_name']})")


@app.command()
def sharding(
    file: FileArg,
    format: FormatOpt = Format.text,
    chip: Annotated[str, typer.Option("--chip", "-c", help="Chip for ICI time estimates.")] = "v5e",
    groups: Annotated[bool, typer.Option("--groups", help="Print every device group (text format).")] = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Per-collective table: groups, mesh axis, bytes, global shape, async overlap, ICI time.

    Example: hloscope sharding fixtures/tpu/scaling_book_v5p.hlo.txt --chip v5p
    """
    _cache(no_cache)
    spec = _chip(chip)
    modules = _load(file)

    def run() -> None:
        from hloscope.sharding import analyze
        from hloscope.sharding.collectives import bytes_per_axis

        results = [(m, *analyze(m, spec)) for m in modules]
        if format == Format.json:
            _emit_json({"version": 1, "chip": spec.key, "modules": [
                {"name": m.name, "devices": mesh.devices, "mesh": mesh.to_json(),
                 "bytes_per_axis": bytes_per_axis(cs), "collectives": [c.to_json() for c in cs]}
                for m, mesh, cs in results]})
            return
        for m, mesh, cs in results:
            axes = ", ".join(f"{a.name}={a.size} (stride {a.stride})" for a in mesh.axes) or "none"
            typer.echo(f"HloModule {m.name}: {mesh.devices} devices; mesh ({mesh.source}): {axes}")
            per_axis = bytes_per_axis(cs)
            if per_axis:
                typer.echo("  bytes moved per device by axis: " + ", ".join(
                    f"{k} {_human_bytes(v)}" for k, v in per_axis.items()))
            if not cs:
                typer.echo("  no collectives")
            for c in cs:
                mode = (f"async, {c.overlap_instructions} ops overlap" if c.is_async else "sync")
                est = _human_seconds(c.est_seconds) if c.est_seconds else "-"
                typer.echo(f"  {c.instruction}: {c.opcode} over {c.axis}, {c.num_groups} group(s) of "
                           f"{c.group_size}, {_human_bytes(c.bytes)}/device -> "
                           f"{_human_bytes(c.moved_bytes)} moved, ~{est}, {mode}")
                typer.echo(f"      global shape {c.global_shape}; first group {c.groups[0] if c.groups else []}")
                for src in c.sources:
                    if src["local_shape"] != src["global_shape"]:
                        typer.echo(f"      from %{src['parameter']}: {src['local_shape']} of {src['global_shape']}")
                if groups:
                    typer.echo(f"      groups {c.groups}")

    _guard(run)


@app.command()
def kernel(
    file: FileArg,
    instruction: Annotated[str | None, typer.Option("--instruction", "-i", help="Only this custom-call instruction.")] = None,
    mlir: Annotated[bool, typer.Option("--mlir", help="Print the kernel's MLIR (text format).")] = False,
    format: FormatOpt = Format.text,
    no_cache: NoCacheOpt = False,
) -> None:
    """Decode custom-call kernels: Pallas/Mosaic MLIR, grid, blocks, memory spaces, VMEM.

    Examples:

      hloscope kernel fixtures/tpu/flash_attention_v5e.hlo.txt

      hloscope kernel fixtures/tpu/pallas_matmul_v5e.hlo.txt --mlir
    """
    _cache(no_cache)
    modules = _load(file)

    def run() -> None:
        from hloscope.mlir.kernels import kernels

        found = [k for m in modules for k in kernels(m)
                 if instruction is None or k.instruction.name == instruction.lstrip("%")]
        if instruction is not None and not found:
            fail(f"{file}: error: no custom-call named %{instruction.lstrip('%')}")
        if format == Format.json:
            _emit_json({"version": 1, "kernels": [k.to_json(with_mlir=True) for k in found]})
            return
        if not found:
            typer.echo("no custom calls")
        for k in found:
            i = k.instruction
            typer.echo(f"%{i.name} ({i.computation}, line {i.line}): custom-call {k.target} "
                       f"-> {i.shape}")
            if k.error:
                typer.echo(f"  body: not decoded: {k.error}")
            for note in (k.body.notes if k.body else []):
                typer.echo(f"  note: {note}")
            s = k.summary
            if s is not None:
                sem = ", ".join(s.dimension_semantics) or "-"
                typer.echo(f"  kernel {s.name}: grid {s.grid} ({s.grid_steps} steps), semantics [{sem}]")
                for b in s.operands + s.scratch:
                    block = f" block {b.block}" if b.block and b.role != "scratch" else ""
                    typer.echo(f"    {b.role:15} {b.dtype}{b.shape}{block} in {b.memory_space}"
                               f" ({_human_bytes(b.bytes)}{' per block' if block else ''})")
                scoped = k.scoped_vmem_bytes
                typer.echo(f"  VMEM: ~{_human_bytes(s.vmem_bytes)} (double-buffered blocks + scratch)"
                           + (f", {_human_bytes(scoped)} scoped for this call" if scoped else ""))
                typer.echo(f"  largest vector value: {s.largest_vector_type or '-'}")
                top = ", ".join(f"{op} {n}" for op, n in list(s.ops.items())[:12])
                typer.echo(f"  ops: {top}")
            if k.body is not None and k.body.config:
                shown = {key: v for key, v in k.body.config.items() if v not in ([], {}, None, "")}
                typer.echo(f"  config: {json.dumps(shown)}")
            if mlir and k.body is not None and k.body.text:
                typer.echo(k.body.text.rstrip("\n"))
            typer.echo("")

    _guard(run)


@app.command()
def profile(
    trace: Annotated[Path, typer.Argument(help="A profile: directory, *.xplane.pb, *.trace.json.gz, or XProf hlo_stats JSON.")],
    hlo: Annotated[list[Path] | None, typer.Option("--hlo", help="HLO file(s) of the profiled program (repeatable).")] = None,
    chip: Annotated[str | None, typer.Option("--chip", "-c", help="Chip for the roofline (default: detected from the trace).")] = None,
    format: FormatOpt = Format.text,
    top: Annotated[int, typer.Option("--top", help="Rows to show in text format (0: all).")] = 25,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help="Largest (decompressed) profile to read.")] = 2 << 30,
    max_events: Annotated[int, typer.Option("--max-events", help="Most op events to read.")] = 50_000_000,
    no_cache: NoCacheOpt = False,
) -> None:
    """The HLO op profile: measured time per instruction and category, vs. the roofline.

    Example: hloscope profile /tmp/jax-trace --hlo module.hlo.txt
    """
    _cache(no_cache)
    from hloscope.trace import TraceError, join, load_profile
    from hloscope.trace.report import detect_chip, profile_report

    try:
        prof = load_profile(trace, max_bytes=max_bytes, max_events=max_events)
    except TraceError as e:
        fail(str(e) if e.path else f"{trace}: error: {e}")
    modules = [m for path in (hlo or []) for m in _load(path)]

    def run() -> None:
        from hloscope.cost.chips import get_chip

        spec = get_chip(chip) if chip else detect_chip(prof.device_kind)
        index = join(prof, modules)
        report = profile_report(prof, index, modules, spec)
        if format == Format.json:
            _emit_json(report)
            return
        typer.echo(f"{trace}: {len(prof.events)} op events, {report['steps']} step(s), "
                   f"{_human_seconds(report['step_seconds'])} of steps, idle "
                   f"{report['idle_fraction'] * 100:.1f}%; device {prof.device_kind or 'unknown'}"
                   + (f", roofline on {spec.name}" if spec else ""))
        for w in report["warnings"]:
            typer.echo(f"warning: {w}")
        if modules:
            typer.echo("  by category: " + ", ".join(
                f"{k} {_human_seconds(v)}" for k, v in report["categories"].items()))
            rows = report["instructions"] if top <= 0 else report["instructions"][:top]
            typer.echo(f"  {'instruction':34} {'category':20} {'count':>6} {'total':>11} "
                       f"{'mean':>11} {'share':>6} {'roofline':>11}")
            for r in rows:
                roof = _human_seconds(r["roofline_seconds"]) if "roofline_seconds" in r else "-"
                typer.echo(f"  {r['instruction'][:34]:34} {r['category'][:20]:20} {r['count']:6} "
                           f"{_human_seconds(r['total_seconds']):>11} {_human_seconds(r['mean_seconds']):>11} "
                           f"{r['share'] * 100:5.1f}% {roof:>11}")
            typer.echo(f"  unmatched events: {sum(u['count'] for u in report['unmatched_events'])} "
                       f"({len(report['unmatched_events'])} ops); executed instructions never seen: "
                       f"{report['unseen_instructions']}")
        else:
            ops = report["ops"] if top <= 0 else report["ops"][:top]
            typer.echo("  (no --hlo: raw per-op totals)")
            for r in ops:
                typer.echo(f"  {r['module'][:24]:24} {r['hlo_op'][:40]:40} {r['count']:7} "
                           f"{_human_seconds(r['total_seconds']):>11}")

    _guard(run)


@app.command()
def graph(
    file: FileArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output file: .svg, .png, .pdf or .dot.")] = Path("graph.svg"),
    computation: Annotated[str | None, typer.Option("--computation", help="Draw this computation (default: the entry).")] = None,
    around: Annotated[str | None, typer.Option("--around", help="Draw the neighbourhood of this instruction.")] = None,
    depth: Annotated[int, typer.Option("--depth", help="Steps around --around.")] = 2,
    trace: Annotated[Path | None, typer.Option("--trace", help="A profile: fill nodes by measured share of step time.")] = None,
    findings: Annotated[bool, typer.Option("--findings/--no-findings", help="Mark lint findings (red border, codes).")] = True,
    expand_fusions: Annotated[bool, typer.Option("--expand-fusions/--collapse-fusions", help="Draw fused computations as clusters.")] = False,
    max_nodes: Annotated[int, typer.Option("--max-nodes", help="Draw at most this many instructions.")] = 200,
    chip: Annotated[str | None, typer.Option("--chip", "-c", help="Chip for the lint findings shown.")] = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Draw a computation or an instruction's neighbourhood with Graphviz.

    Examples:

      hloscope graph fixtures/tpu/transformer_v5p.hlo.txt -o step.svg

      hloscope graph big.hlo.txt --around fusion.3 --depth 2 -o around.png
    """
    _cache(no_cache)
    suffix = output.suffix.lower()
    if suffix not in (".svg", ".png", ".pdf", ".dot"):
        fail(f"error: unsupported output {output}; use .svg, .png, .pdf or .dot")
    modules = _load(file)

    def run() -> None:
        from hloscope.render.graphviz import GraphOptions, render_graph

        module = modules[0]
        opts = GraphOptions(computation=computation, around=around, depth=depth,
                            expand_fusions=expand_fusions, max_nodes=max_nodes)
        if findings or trace is not None:
            from hloscope.lint import LintError, LintOptions, lint_files

            try:
                report = lint_files([file], LintOptions(chip=chip, trace=trace))
            except LintError as e:
                fail(f"error: {e}")
            opts.findings = report.findings if findings else []
        if trace is not None:
            from hloscope.trace import join, load_profile

            opts.trace = join(load_profile(trace), [module])
        opts.kernels = _kernel_tooltips(module)
        try:
            g = render_graph(module, opts)
        except KeyError as e:
            fail(f"{file}: error: {e.args[0]}")
        if suffix == ".dot":
            output.write_text(g.source)
            typer.echo(f"wrote {output}", err=True)
            return
        import graphviz

        try:
            output.write_bytes(g.pipe(format=suffix[1:]))
        except graphviz.ExecutableNotFound:
            dot = output.with_suffix(".dot")
            dot.write_text(g.source)
            typer.echo(f"warning: Graphviz's `dot` program is not installed, so {output} was not "
                       f"rendered; wrote {dot} instead (install it: apt-get install graphviz, then "
                       f"dot -T{suffix[1:]} {dot} -o {output})", err=True)
            return
        typer.echo(f"wrote {output}", err=True)

    _guard(run)


def _kernel_tooltips(module) -> dict[str, str]:
    if not any(i.opcode == "custom-call" for i in module.instructions()):
        return {}
    from hloscope.mlir.kernels import kernels

    out = {}
    for k in kernels(module):
        s = k.summary
        if s is None:
            out[k.instruction.name] = f"{k.target}: {k.error or 'no kernel body'}"
            continue
        blocks = "; ".join(f"{b.role} {b.dtype}{b.block}" for b in s.operands)
        out[k.instruction.name] = (f"kernel {s.name}, grid {s.grid} {s.dimension_semantics}; "
                                   f"{blocks}; VMEM ~{_human_bytes(s.vmem_bytes)}")
    return out


def _progress_bar():
    """A progress callback drawing on stderr when it is a terminal (nothing in CI logs)."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if total < 2:
            return
        width = 30
        filled = width * done // total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


class LintFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


@app.command()
def lint(
    files: Annotated[list[Path], typer.Argument(help="HLO text files, or folders of XLA dumps.")],
    format: Annotated[LintFormat, typer.Option("--format", "-f", help="Output format.")] = LintFormat.text,
    select: Annotated[list[str] | None, typer.Option("--select", help="Rules to run: codes, prefixes (H0), names, ALL. Comma-separated or repeated.")] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Rules to skip, same forms as --select.")] = None,
    fail_on: Annotated[str | None, typer.Option("--fail-on", help="Exit 1 when a finding is at or above: error, warning, info. [default: warning]")] = None,
    chip: Annotated[str | None, typer.Option("--chip", "-c", help="Target chip (v5e, v6e, ...): MXU size and time estimates.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="hloscope.toml or pyproject.toml to use (default: nearest one).")] = None,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Ignore findings recorded in this baseline file.")] = None,
    write_baseline: Annotated[Path | None, typer.Option("--write-baseline", help="Record the current findings as the baseline and exit 0.")] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when there are findings.")] = False,
    trace: Annotated[Path | None, typer.Option("--trace", help="A jax.profiler profile: findings gain measured time; trace rules run.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel processes for many files (0: one per core when there is enough HLO to repay their start-up, else 1).")] = 0,
    strict: StrictOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Check HLO files against hloscope's rules and report findings.

    Examples:

      hloscope lint fixtures/tpu/transformer_v5p.hlo.txt

      hloscope lint --select H001,H002 --fail-on error dump/*.txt

      hloscope lint --format sarif module.hlo.txt > results.sarif

      hloscope lint xla_dump_dir/        (its *after_optimizations.txt, in parallel)
    """
    _cache(no_cache)
    from hloscope.lint import LintError, auto_jobs, exit_code, lint_files, merge
    from hloscope.report import render
    from hloscope.rules.base import Severity
    from hloscope.rules.config import ConfigError, load_config

    try:
        cfg = load_config(config)
        opts = merge(cfg, _split(select), _split(ignore), chip)
        threshold = Severity.parse(fail_on or cfg.fail_on)
    except (ConfigError, ValueError) as e:
        fail(f"error: {e}")
    opts.strict = strict
    opts.baseline = baseline
    opts.trace = trace

    bar = _progress_bar()

    def run():
        try:
            workers = jobs if jobs > 0 else auto_jobs(files)
            return lint_files(files, opts, jobs=workers, progress=bar)
        except LintError as e:
            fail(f"error: {e}")

    report = _guard(run)
    if write_baseline is not None:
        from hloscope.rules.baseline import write_baseline as write

        write(write_baseline, report.findings)
        typer.echo(f"wrote {len(report.findings)} finding(s) to {write_baseline}", err=True)
        raise typer.Exit(0)
    sys.stdout.write(render(format.value, report))
    raise typer.Exit(0 if exit_zero else exit_code(report, threshold))


@app.command("rules")
def list_rules(format: FormatOpt = Format.text) -> None:
    """List the available rules (code, name, default severity, summary)."""
    from hloscope.rules.registry import load_rules

    rules = load_rules()
    if format == Format.json:
        _emit_json({"version": 1, "rules": [
            {"code": r.code, "name": r.name, "severity": str(r.severity), "summary": r.summary}
            for r in rules.values()]})
        return
    for r in rules.values():
        typer.echo(f"{r.code}  {r.name:24} {str(r.severity):8} {r.summary}")


@app.command("rule")
def show_rule(code: Annotated[str, typer.Argument(help="A rule code (H001) or name (defensive-copy).")]) -> None:
    """Print a rule's documentation: what it finds, why it costs, how to fix it."""
    from hloscope.rules.registry import load_rules

    for r in load_rules().values():
        if code.upper() == r.code or code.lower() == r.name:
            typer.echo(r.doc().rstrip("\n"))
            return
    fail(f"error: no rule {code!r}; see `hloscope rules`")


def run() -> NoReturn:
    """The console entry point. After the command it leaves at once, as mypy does: the
    interpreter would otherwise free a large parsed module object by object (~0.04 s
    for a 5 MB dump) before exiting. Output is flushed first; child processes see
    their pipes close. Like mypy, it also makes the cyclic garbage collector run far less
    often: a command allocates a few hundred thousand objects, almost none in cycles.
    """
    import gc
    import os

    import hloscope

    gc.set_threshold(200_000, 30, 30)
    hloscope.spawn_workers = True  # (our main module is guarded: workers may re-import it)
    try:
        app()
        code = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a closed pipe: nothing left to say
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
