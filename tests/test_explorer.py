"""Model Explorer (ai-edge-model-explorer 0.1.34, the explorer extra): the adapter's graphs
and the overlays round-trip through Model Explorer's own classes, and its server, started
headless on a localhost port with `--extensions=hloscope.explorer`, converts a module and
serves an overlay."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import FIXTURES

from hloscope.parser import load

model_explorer = pytest.importorskip("model_explorer")

TFM = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"
SCAN = FIXTURES / "tpu" / "scan_v4.hlo.txt"


def _converted(path: Path) -> dict:
    from model_explorer.utils import convert_adapter_response

    from hloscope.explorer.main import HloAdapter

    return convert_adapter_response(HloAdapter().convert(str(path), {}))


def _graphs_from_json(doc: dict) -> list:
    """Model Explorer's own Graph objects back from the JSON its server sends."""
    from dacite import from_dict
    from model_explorer import graph_builder as gb

    return [from_dict(data_class=gb.Graph, data=g) for g in doc["graphs"]]


def test_every_instruction_is_a_node_and_every_operand_an_edge():
    module = load(TFM)[0]
    graphs = _graphs_from_json(json.loads(json.dumps(_converted(TFM))))
    nodes = {n.id: n for g in graphs for n in g.nodes}
    # the entry and every fused computation: fusions are groups, their instructions nodes
    drawn = {module.entry.name} | module.fusion_computations()
    expected = {i.name for c in module.computations if c.name in drawn
                for i in c.instructions if i.opcode != "fusion"}
    assert expected == set(nodes)
    for comp in module.computations:
        if comp.name != module.entry.name:
            continue
        for instr in comp.instructions:
            if instr.opcode == "fusion":
                fused = module.by_name[instr.called_computations[0]]
                params = {int(p.literal): p.name for p in fused.instructions if p.opcode == "parameter"}
                for k, operand in enumerate(instr.operands):
                    edges = [e.sourceNodeId for e in nodes[params[k]].incomingEdges]
                    assert len(edges) == 1
                    assert edges[0] == operand or comp[operand].opcode == "fusion"
                assert all(instr.name in nodes[i.name].namespace.split("/")
                           for i in fused.instructions if i.opcode != "fusion")
            else:
                sources = [e.sourceNodeId for e in nodes[instr.name].incomingEdges]
                assert len(sources) == len(instr.operands)
                for s in sources:
                    assert s in nodes


def test_attributes_carry_shape_layout_and_source():
    graphs = _graphs_from_json(_converted(TFM))
    node = next(n for g in graphs for n in g.nodes if any(
        a.key == "opcode" and a.value == "convolution" for a in n.attrs))
    keys = {a.key: a.value for a in node.attrs}
    assert keys["layout"].startswith("{") and "T(8,128)" in keys["layout"]
    assert keys["op_name"] and keys["source"].startswith("/")
    assert node.namespace  # inside its fusion's group


def test_loop_bodies_are_graphs_reached_from_the_while_node():
    module = load(SCAN)[0]
    graphs = _graphs_from_json(_converted(SCAN))
    ids = [g.id for g in graphs]
    assert ids[0] == module.entry.name
    whiles = [n for g in graphs for n in g.nodes if n.label == "while"]
    assert whiles and all(set(w.subgraphIds) <= set(ids) and w.subgraphIds for w in whiles)


def test_overlays_round_trip_through_node_data_classes(tmp_path):
    from typer.testing import CliRunner

    from hloscope.cli.app import app
    from hloscope.cost.chips import get_chip
    from hloscope.cost.roofline import roofline

    out = tmp_path / "me"
    result = CliRunner().invoke(app, ["explorer", str(TFM), "-o", str(out), "--chip", "v5p"])
    assert result.exit_code == 0, result.output
    module = load(TFM)[0]
    static = json.loads((out / f"{module.name}.static_time_us.json").read_text())
    values = static[module.entry.name]["results"]
    rows = roofline(module, get_chip("v5p")).rows
    top = max((r for r in rows if r.computation == module.entry.name), key=lambda r: r.t_bound)
    from hloscope.explorer.graphs import built

    graph, node = built(module)[1][top.instruction]
    assert values[node]["value"] == pytest.approx(top.t_bound * top.times * 1e6, abs=1e-3)
    severity = json.loads((out / f"{module.name}.severity.json").read_text())
    assert set(v["value"] for v in severity[module.entry.name]["results"].values()) <= {1, 2, 3}
    graphs = json.loads((out / f"{module.name}.graphs.json").read_text())
    assert _graphs_from_json(graphs)[0].id == module.entry.name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, data: dict | None = None) -> str:
    body = json.dumps(data).encode() if data is not None else None
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:  # noqa: S310 - localhost only
        return r.read().decode()


def test_model_explorer_server_serves_the_graph_and_an_overlay(tmp_path):
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    out = tmp_path / "me"
    assert CliRunner().invoke(app, ["explorer", str(TFM), "-o", str(out)]).exit_code == 0
    overlay = out / f"{load(TFM)[0].name}.severity.json"
    port = _free_port()
    script = textwrap.dedent(f"""
        import model_explorer
        from model_explorer import server
        server._check_new_version = lambda print_msg=True: {{}}  # no version check: offline
        config = model_explorer.config().add_model_from_path({str(TFM)!r}).add_node_data_from_path({str(overlay)!r})
        model_explorer.visualize_from_config(config, host="127.0.0.1", port={port},
                                             extensions=["hloscope.explorer"], no_open_in_browser=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if _get(f"{base}/check_health") == "model_explorer_ok":
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "server did not start in 90 s"
            time.sleep(0.5)
        extensions = json.loads(_get(f"{base}/api/v1/get_extensions"))
        ids = {e["id"] for e in extensions}
        assert {"hloscope_hlo", "hloscope_severity", "hloscope_static_time"} <= ids
        converted = json.loads(_get(f"{base}/apipost/v1/send_command", {
            "extensionId": "hloscope_hlo", "cmdId": "convert", "modelPath": str(TFM),
            "settings": {}, "deleteAfterConversion": False}))
        assert "error" not in converted, converted
        graphs = _graphs_from_json(converted)
        assert graphs[0].id == load(TFM)[0].entry.name and len(graphs[0].nodes) > 100
        # the UI reads a --node_data_paths / add_node_data_from_path file through the server
        from urllib.parse import quote

        data = json.loads(_get(f"{base}/api/v1/read_text_file?path={quote(str(overlay))}"))
        assert json.loads(data["content"]) == json.loads(overlay.read_text())
        provided = json.loads(_get(f"{base}/apipost/v1/send_command", {
            "extensionId": "hloscope_static_time", "cmdId": "run", "modelPath": str(TFM),
            "graphId": graphs[0].id, "configValues": {}}))
        assert provided.get("error", "") == "" and provided["result"]["results"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
