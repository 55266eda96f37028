"""The networkx view: operand edges, called computations, parameter bindings."""

from __future__ import annotations

from conftest import FIXTURES

from hloscope.graph import build_graph, called_instructions, neighbourhood, node_id, users
from hloscope.parser import load


def test_graph_mirrors_operands_of_a_real_module():
    (m,) = load(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    g = build_graph(m)
    assert g.number_of_nodes() == len(m.instructions())
    for instr in m.instructions():
        preds = sorted(
            (d["index"], u[1]) for u, _, d in g.in_edges(node_id(instr), data=True)
            if d["kind"] == "operand"
        )
        assert [name for _, name in preds] == list(instr.operands)


def test_fusions_reach_their_fused_computation():
    (m,) = load(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    g = build_graph(m)
    fusions = [i for i in m.instructions() if i.opcode == "fusion"]
    assert fusions
    for f in fusions:
        (callee,) = f.called_computations
        root = m[callee].root
        assert [d["kind"] for d in g.get_edge_data(node_id(f), node_id(root)).values()] == ["calls"]
        params = {p.parameter_number: p for p in m[callee].parameters}
        for index, operand in enumerate(f.operands):
            edges = g.get_edge_data((f.computation, operand), node_id(params[index])).values()
            assert {"kind": "param", "index": index} in list(edges)


def test_while_loop_binds_its_tuple_to_condition_and_body():
    (m,) = load(FIXTURES / "tpu" / "scan_v4.hlo.txt")
    g = build_graph(m)
    (loop,) = [i for i in m.instructions() if i.opcode == "while"]
    cond, body = loop.attr("condition"), loop.attr("body")
    for comp in (cond, body):
        param = m[comp].parameters[0]
        assert g.has_edge((loop.computation, loop.operands[0]), node_id(param))
    inside = {i.name for i in called_instructions(m, loop)}
    assert {i.name for i in m[body].instructions} <= inside


def test_neighbourhood_and_users():
    (m,) = load(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")
    g = build_graph(m)
    root = m.entry.root
    near = neighbourhood(g, node_id(root), 1)
    assert node_id(root) in near
    assert {(root.computation, o) for o in root.operands} <= near
    for o in root.operands:
        assert node_id(root) in users(g, (root.computation, o))
