"""The API's objects behave as Python users expect (#35 point 7): a memory method, an
iterable LintReport, readable reprs, a named Sharding, and `_repr_html_` tables that a
notebook renders (parsed here as a notebook front end would)."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from conftest import FIXTURES

import hloscope

FSDP = FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"


class _Cells(HTMLParser):
    """The text of every table cell and the tags, as a browser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.tags: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in = tag in ("td", "th")
        if self._in:
            self.cells.append("")

    def handle_endtag(self, tag):
        self._in = False

    def handle_data(self, data):
        if self._in:
            self.cells[-1] += data


def _render(obj) -> _Cells:
    parser = _Cells()
    parser.feed(obj._repr_html_())
    assert parser.tags.count("table") == 1
    return parser


def test_memory_equals_xla_memory_analysis():
    entry = json.loads((FIXTURES / "manifest.json").read_text())["fsdp_async_fusion_v5p"]
    xla = entry["memory_analysis"]
    r = hloscope.load(FSDP).memory("v5p")
    assert (r.argument_bytes, r.output_bytes) == (xla["argument_size_in_bytes"], xla["output_size_in_bytes"])
    assert "HBM 108.00 MiB" in repr(r)


def test_a_lint_report_is_a_sequence_of_findings():
    report = hloscope.load(FSDP).lint(chip="v5p")
    assert len(report) == len(report.findings) > 0
    assert [f.code for f in report] == [f.code for f in report.findings]
    assert report[0] is report.findings[0]
    assert repr(report).startswith(f"<LintReport: {len(report)} finding(s) (")
    cells = _render(report).cells
    assert cells[:5] == ["code", "severity", "line", "instruction", "message"]
    assert report[0].message in cells


def test_reprs_are_readable_and_sharding_is_named():
    program = hloscope.load(FSDP)
    sharding = program.sharding("v5p")
    mesh, collectives = sharding  # (still unpacks)
    assert sharding.mesh is mesh and sharding.collectives is collectives
    assert repr(sharding).startswith("<Sharding: 8 devices")
    shape = program.module.entry.root.shape
    assert repr(shape) == f"Shape({shape.text()!r})"
    roof = program.roofline("v5p")
    assert repr(roof).startswith("<Roofline jit_model on TPU v5p: ")
    k001 = hloscope.load(FIXTURES / "rules" / "K001" / "output_accumulator_v5e.hlo.txt").kernels()
    assert repr(k001[0]).startswith("<Kernel %") and len(repr(k001[0])) < 300


def test_notebook_tables_render_with_the_numbers_and_escape_the_input():
    program = hloscope.load(FSDP)
    cells = _render(program).cells
    assert "jit_model" in program._repr_html_() and "411" in cells
    roof = _render(program.roofline("v5p")).cells
    assert roof[:3] == ["instruction", "opcode", "FLOPs"] and len(roof) > 7 * 5
    shard = _render(program.sharding("v5p")).cells
    assert "all-gather" in shard
    # an op name with markup in it is text, not markup
    hostile = program.lint(chip="v5p")
    hostile.findings[0] = type(hostile.findings[0])(**{**hostile.findings[0].__dict__,
                                                     "message": "<script>x</script>"})
    page = hostile._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_memory_repr_states_xla_figures_to_two_decimals():
    """H004's train step donates its parameters: every term of the sum is non-zero. The
    arguments, outputs and aliased bytes are XLA's own (memory_analysis, in the manifest)."""
    import dataclasses

    from hloscope.units import human_bytes

    entry = json.loads((FIXTURES / "manifest.json").read_text())["H004_swiglu_train_v5p"]
    xla = entry["memory_analysis"]
    r = hloscope.load(FIXTURES / entry["file"]).memory("v5p")
    args, outs, alias = (xla["argument_size_in_bytes"], xla["output_size_in_bytes"], xla["alias_size_in_bytes"])
    assert (args, outs, alias) == (85983232, 69206048, 69206016)  # 82 MiB, 66 MiB + 32 B, 66 MiB
    hbm = args + outs - alias + r.temp_peak_bytes
    assert repr(r) == (f"<MemoryReport jit_step: HBM {hbm / 2**20:.2f} MiB = arguments 82.00 MiB + outputs "
                       f"66.00 MiB - aliased 66.00 MiB + peak temporaries {r.temp_peak_bytes / 2**20:.2f} MiB "
                       f"(at %{r.peak_instruction})>")
    assert r.temp_peak_bytes > 2**20 and r.peak_instruction
    bare = dataclasses.replace(r, peak_instruction=None, temp_peak_bytes=0)
    assert repr(bare).endswith(f"peak temporaries {human_bytes(0)} (at %-)>")


def test_the_roofline_table_is_per_step_heaviest_first():
    """A layer scan (8 trips): each row's FLOPs, bytes and time are per step (times its trip
    count), and the rows come heaviest per step first; past 25 rows, the rest are counted."""
    import dataclasses

    report = hloscope.load(FIXTURES / "memory" / "scan_layers_v5e.hlo.txt").roofline("v5e")
    assert len(report.rows) == 18
    dot = next(r for r in report.rows if r.instruction == "fusion.13")
    assert dot.times == 8 and dot.flops == 2 * 256 * 2048 * 2048  # [256,2048] x [2048,2048]
    cells = _render(report).cells
    headers = ["instruction", "opcode", "FLOPs", "bytes", "time", "bound", "source"]
    assert cells[:7] == headers
    table = [cells[k:k + 7] for k in range(7, len(cells), 7)]
    assert len(table) == 18
    by_name = {row[0]: row for row in table}
    assert by_name["fusion.13"][1:6] == ["fusion", f"{8 * dot.flops:.3g}", human(8 * dot.bytes),
                                         seconds(8 * dot.t_bound), "compute"]
    assert by_name["fusion.13"][6] == dot.source and "generate.py" in dot.source
    per_step = {r.instruction: r.t_bound * r.times for r in report.rows}
    order = [row[0] for row in table]
    assert [per_step[n] for n in order] == sorted(per_step.values(), reverse=True)
    assert order.index("copy.2") < order.index("copy.10")  # 8 x 0.6 ns before 1 x 1.3 ns
    assert "and" not in report._repr_html_().split("</table>")[1]
    t = sum(per_step.values())
    assert repr(report) == (f"<Roofline jit_forward on TPU v5e: 18 ops, {report.totals.flops:.4g} FLOPs, "
                            f"roofline {t * 1e6:.2f} us>")
    assert report._repr_html_().startswith(f'<div class="hloscope"><b>{repr(report)[1:-1]}</b><table>')
    longer = dataclasses.replace(report, rows=report.rows * 2)
    page = longer._repr_html_()
    assert page.count("<tr>") == 1 + 25 and "<p>and 11 more</p>" in page


def human(n):
    from hloscope.units import human_bytes

    return human_bytes(n, 2)


def seconds(t):
    from hloscope.units import human_seconds

    return human_seconds(t, 3)
