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


def test_computation_users_and_positions_agree_with_the_graph_and_survive_no_pickle():
    """Computation.users() (the index rules and analyses share) lists each user once per
    operand it reads the value as, equal to the networkx view's edges on a real module;
    positions() are the list's; both are rebuilt after instructions are added, and the
    cache's pickles leave them (and by_name) out."""
    import pickle

    (m,) = load(FIXTURES / "tpu" / "llm_v5p_big.hlo.txt")
    g = build_graph(m)
    comp = m.entry
    index = comp.users()
    assert comp.users() is index  # (kept)
    for instr in comp.instructions:
        mine = sorted({(u.computation, u.name) for u in index.get(instr.name, [])})
        assert mine == sorted(n for n in users(g, node_id(instr)) if n[0] == comp.name), instr.name
        assert sum(len(u.operands) - len([o for o in u.operands if o != instr.name])
                   for u in {id(u): u for u in index.get(instr.name, [])}.values()) \
            == len(index.get(instr.name, []))  # once per operand read
    assert [comp.positions()[i.name] for i in comp.instructions] == list(range(len(comp)))
    copy = pickle.loads(pickle.dumps(comp))
    assert (copy._users, copy._positions, copy._by_name) == (None, None, None)
    assert [i.name for i in copy.instructions] == [i.name for i in comp.instructions]
    extra = copy.instructions[0].__class__("extra.1", "negate", copy.root.shape_text,
                                           (copy.root.name,), computation=copy.name)
    copy.users()
    copy.instructions.append(extra)
    assert copy.users()[copy.root.name][-1] is extra and copy.positions()["extra.1"] == len(copy) - 1


def test_users_of_some_instructions_are_users_lists_with_or_without_the_index():
    """Computation.users_of(names): the same lists users() holds for those names, whether
    the index was built (read from it) or not (one pass that builds no index); a name
    nothing reads is absent, as in users()."""
    (m,) = load(FIXTURES / "tpu" / "llm_v5p_big.hlo.txt")
    comp = m.entry
    names = [i.name for i in comp.instructions[::7]] + ["no.such"]
    fresh = comp.users_of(names)
    assert comp._users is None  # (no index made)
    index = comp.users()
    expected = {n: index[n] for n in names if n in index}
    assert fresh == expected and comp.users_of(names) == expected
    assert comp.users_of([]) == {} and set(expected) < set(names)
