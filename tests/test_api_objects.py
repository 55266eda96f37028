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
