"""Graphviz graphs: rendered to SVG and checked by parsing the SVG and the DOT."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.lint import LintOptions, lint_files
from hloscope.parser import load
from hloscope.render.graphviz import GraphOptions, render_graph, short_shape

runner = CliRunner()
QKV = FIXTURES / "rules" / "H004" / "separate_qkv_v5p.hlo.txt"
SVG = "{http://www.w3.org/2000/svg}"


def svg_groups(path):
    root = ET.parse(path).getroot()
    out = {"node": {}, "edge": {}, "cluster": {}}
    for g in root.iter(f"{SVG}g"):
        kind = g.get("class", "").split()[0] if g.get("class") else ""
        title = g.find(f"{SVG}title")
        if kind in out and title is not None:
            out[kind][title.text] = g
    return out


def texts(g) -> list[str]:
    return [t.text for t in g.iter(f"{SVG}text") if t.text]


def test_neighbourhood_svg_has_nodes_edges_and_the_finding(tmp_path):
    out = tmp_path / "around.svg"
    res = runner.invoke(app, ["graph", str(QKV), "--around", "fusion.24", "--depth", "1",
                              "--chip", "v5p", "-o", str(out)])
    assert res.exit_code == 0, res.output
    groups = svg_groups(out)
    (m,) = load(QKV)
    comp = m.entry.name
    center = m.entry["fusion.24"]
    expected = {f"{comp}/fusion.24", *(f"{comp}/{o}" for o in center.operands)}
    assert expected <= set(groups["node"])
    for o in center.operands:
        assert f"{comp}/{o}&#45;&gt;{comp}/fusion.24" in groups["edge"] or \
            f"{comp}/{o}->{comp}/fusion.24" in groups["edge"]
    node = groups["node"][f"{comp}/fusion.24"]
    assert "H004" in texts(node)  # the finding's code in the label
    assert any(p.get("stroke") == "#d62728" for p in node.iter(f"{SVG}path"))  # red border
    link = node.find(f"{SVG}g/{SVG}a")
    assert link is not None and "split-dot" in link.get("{http://www.w3.org/1999/xlink}title")


def test_expanded_fusions_and_loop_bodies_are_clusters(tmp_path):
    out = tmp_path / "scan.svg"
    res = runner.invoke(app, ["graph", str(FIXTURES / "cpu" / "scan_cpu.hlo.txt"), "-o", str(out),
                              "--expand-fusions", "--no-findings"])
    assert res.exit_code == 0, res.output
    groups = svg_groups(out)
    (m,) = load(FIXTURES / "cpu" / "scan_cpu.hlo.txt")
    (loop,) = [i for i in m.instructions() if i.opcode == "while"]
    clusters = set(groups["cluster"])
    assert f"cluster_{loop.attr('body')}" in clusters and f"cluster_{loop.attr('condition')}" in clusters
    dot = render_graph(m, GraphOptions(expand_fusions=True)).source
    assert re.search(r'lhead="?cluster_' + re.escape(loop.attr("body")), dot)


def test_collapsed_fusion_summarizes_what_it_fuses():
    (m,) = load(FIXTURES / "tpu" / "mlp_v5e.hlo.txt")
    dot = render_graph(m).source
    assert "fuses: " in dot and "convolution" in dot
    assert "cluster_" not in dot


def test_layout_is_abbreviated_in_labels():
    (m,) = load(FIXTURES / "tpu" / "mlp_v5e.hlo.txt")
    fusion = m.entry["fusion"]
    assert short_shape(fusion) == "bf16[128,512]{T(8,128)(2,1)} S(1)"


def test_node_cap_adds_an_elision_node():
    (m,) = load(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    dot = render_graph(m, GraphOptions(max_nodes=10)).source
    assert dot.count("shape=box") + dot.count("shape=ellipse") <= 12
    assert re.search(r"\.\.\. \d+ more instruction\(s\) not drawn", dot)


def test_trace_heat_and_kernel_tooltips(tmp_path):
    case = FIXTURES / "rules" / "T004" / "transpose_copy_cpu"
    out = tmp_path / "heat.svg"
    res = runner.invoke(app, ["graph", f"{case}.hlo.txt", "--trace", f"{case}.trace.json.gz",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    node = svg_groups(out)["node"]["main.1/transpose_copy_fusion"]
    assert any(p.get("fill") == "#ff3737" for p in node.iter(f"{SVG}path"))  # 100% of the step
    assert any("us x3" in t for t in texts(node))
    out2 = tmp_path / "kernel.svg"
    runner.invoke(app, ["graph", str(FIXTURES / "tpu" / "pallas_matmul_v5e.hlo.txt"), "-o", str(out2)])
    assert "kernel kernel, grid [4, 4, 2]" in out2.read_text()


def test_missing_dot_writes_a_dot_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz binaries here
    out = tmp_path / "g.svg"
    res = runner.invoke(app, ["graph", str(FIXTURES / "cpu" / "mlp_cpu.hlo.txt"), "-o", str(out)])
    assert res.exit_code == 0
    assert not out.exists() and (tmp_path / "g.dot").read_text().startswith("digraph")
    assert "`dot` program is not installed" in res.output


def test_bad_requests_are_usage_errors(tmp_path):
    res = runner.invoke(app, ["graph", str(QKV), "--around", "nope", "-o", str(tmp_path / "x.svg")])
    assert res.exit_code == 2 and "no instruction named %nope" in res.output
    res = runner.invoke(app, ["graph", str(QKV), "-o", str(tmp_path / "x.gif")])
    assert res.exit_code == 2


def test_api_returns_a_digraph_and_committed_example_is_current():
    import graphviz

    (m,) = load(QKV)
    report = lint_files([QKV], LintOptions(chip="v5p"))
    g = render_graph(m, GraphOptions(around="fusion.24", depth=2, findings=report.findings))
    assert isinstance(g, graphviz.Digraph)
    svg = (FIXTURES.parent / "docs" / "split_dot_around_fusion24.svg").read_text()
    assert "fusion.24" in svg and "H004" in svg


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".dot"])
def test_other_formats(tmp_path, suffix):
    out = tmp_path / f"g{suffix}"
    res = runner.invoke(app, ["graph", str(FIXTURES / "cpu" / "mlp_cpu.hlo.txt"), "-o", str(out)])
    assert res.exit_code == 0 and out.stat().st_size > 100


BIG = FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"  # 27k instructions: too big to draw whole


def test_big_module_without_around_draws_its_costliest_ops(tmp_path):
    from hloscope.cost.chips import get_chip
    from hloscope.cost.roofline import roofline

    out = tmp_path / "big.svg"
    res = runner.invoke(app, ["graph", str(BIG), "--chip", "v5p", "--max-nodes", "120", "-o", str(out)])
    assert res.exit_code == 0, res.output
    (m,) = load(BIG)
    drawn = {t.split("/", 1)[1] for t in svg_groups(out)["node"] if "/" in t}
    assert 60 <= len(drawn) <= 120
    rows = [r for r in roofline(m, get_chip("v5p")).rows if r.computation == m.entry.name]
    ranked = sorted(rows, key=lambda r: -r.t_bound * r.times)
    top = [r.instruction for r in ranked[:20]]
    assert set(top) <= drawn  # the costliest ops, not the first (parameters) in text order
    params = [i.name for i in m.entry.instructions if i.opcode == "parameter"]
    assert not set(params[:50]) <= drawn
    cheapest_drawn = min(r.t_bound * r.times for r in rows if r.instruction in drawn and r.t_bound)
    assert cheapest_drawn <= ranked[19].t_bound * ranked[19].times


def test_labels_show_relayouts_padding_and_the_fused_root(tmp_path):
    """Real TPU compiles: a transpose written out in another dimension order (H002's
    positive fixture), a lane-narrow kernel operand padded to 128 lanes (H003's), and
    fusions of the v5p transformer whose root is a convolution."""
    def dot_of(path):
        (m,) = load(path)
        return m, render_graph(m, GraphOptions()).source

    m, src = dot_of(FIXTURES / "rules" / "H002" / "transpose_out_v5e.hlo.txt")
    assert re.search(r"layout \{1,0\}\u2192\{0,1\}|layout \{0,1\}\u2192\{1,0\}", src)
    m, src = dot_of(FIXTURES / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt")
    from hloscope.cost.layout import logical_bytes, padded_bytes

    padded = [i for c in m.computations for i in c.instructions
              if padded_bytes(i.shape) and i.opcode not in ("parameter", "constant", "tuple",
                                                            "get-tuple-element", "bitcast")
              and 1 - logical_bytes(i.shape) / padded_bytes(i.shape) >= 0.05
              and c.name == m.entry.name]
    assert padded
    for i in padded:
        share = 1 - logical_bytes(i.shape) / padded_bytes(i.shape)
        assert f"padding {share:.0%}" in src
    m, src = dot_of(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    assert "root: convolution" in src
    assert re.search(r'label="\[1\] 4\.0 MiB"', src)  # a tuple edge names the element used


def test_a_tuple_of_hundreds_of_arrays_still_renders(tmp_path):
    """Graphviz refuses quoted strings of 16 KiB: Mixtral's loop tuple (bench found it)."""
    from conftest import CORPUS

    mixtral = CORPUS / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo"
    if not mixtral.exists():
        pytest.skip("corpus not present")
    out = tmp_path / "t.svg"
    res = runner.invoke(app, ["graph", str(mixtral), "--around", "tuple.351", "--depth", "1",
                              "--no-findings", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "more characters)" in out.read_text()
