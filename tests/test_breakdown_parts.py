"""The breakdown's parts (hloscope.cost.aggregate), each against what its docstring promises,
with values derived by hand: how an op_name reads (pass, scope, layer), how rows add up per
group and in what order groups come, loop bodies with their trip counts, and a combined
collective split over its operands in proportion to their bytes.

The rows here are HAND-WRITTEN (their numbers chosen to be told apart); the real programs
are the fixtures' 16-layer train step and layer scan, whose trip count and body name are read
from the HLO text itself."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES

import hloscope
from hloscope.cost.aggregate import (NO_LAYER, NO_OP_NAME, NO_SCOPE, NO_SOURCE, breakdown, group,
                                     layer_of, loop_bodies, parse_op_name, roofline_rows,
                                     split_combined)


def _row(op_name="", source="", seconds=1.0, flops=0.0, bytes_=0.0, computation="main", **extra):
    return {"op_name": op_name, "source": source, "seconds": seconds, "flops": flops, "bytes": bytes_,
            "computation": computation, **extra}


# -- op names


@pytest.mark.parametrize("op_name, expected", [
    ("jit(f)/layer_2/dot_general", ("", ["layer_2"])),  # no jvp/transpose: neither pass
    ("pjit(f)/layer_1/mlp/dot_general", ("", ["layer_1", "mlp"])),
    ("jit(f)/jit(main)/layer_2/dot_general", ("", ["layer_2"])),  # JAX's jit(main): not a scope
    ("jit(f)/jit(inner)/dot_general", ("", ["inner"])),  # a nested jit is a scope
    ("transpose(jvp(layer_0))/mul", ("backward", ["layer_0"])),  # (no jit around it)
    ("jit(f)/jvp(layer_0)/a;jit(f)/transpose(jvp(layer_9))/b;jit(f)/c/d", ("forward", ["layer_0"])),
    ("jit(f)/remat(block3)/add", ("", ["block3"])),
    ("jit(f(x))/layer_1/add", ("", ["layer_1"])),  # (the jitted function's name, parentheses and all)
    ("jit(f)/vmap(jvp(h.4))/attn(x/y)/dot", ("forward", ["h.4", "attn(x/y)"])),
    ("dot.12", ("", [])),
    ("", ("", [])),
])
def test_an_op_name_reads_as_jax_writes_it(op_name, expected):
    assert parse_op_name(op_name) == expected


@pytest.mark.parametrize("scope, layer", [
    ("layer_3", "3"), ("layers.12", "12"), ("block3", "3"), ("blocks-7", "7"), ("h.4", "4"),
    ("Block_5", "5"), ("attn", None), ("player1", None),
])
def test_the_layer_is_the_number_of_the_first_scope_that_names_one(scope, layer):
    assert layer_of(["attn", scope, "layer_99"] if layer else [scope]) == (layer or None)


# -- group


def test_rows_add_up_per_scope_and_the_heaviest_group_comes_first():
    rows = [_row("jit(f)/jvp(layer_0)/dot_general", seconds=1.0, flops=10.0, bytes_=100.0),
            _row("jit(f)/transpose(jvp(layer_0))/dot_general", seconds=2.0, flops=20.0, bytes_=200.0),
            _row("jit(f)/jvp(layer_1)/dot_general", seconds=4.0, flops=40.0, bytes_=400.0),
            _row("jit(f)/optimizer/adam/mul", seconds=0.5, flops=5.0, bytes_=50.0),
            _row("broadcast.3", seconds=0.25)]
    b = group(rows, "scope")
    assert b["by"] == "scope" and "note" not in b
    assert b["total"] == {"seconds": 7.75, "flops": 75.0, "bytes": 750.0, "ops": 5}
    by_key = {g["key"]: g for g in b["groups"]}
    assert [g["key"] for g in b["groups"]] == ["layer_1", "layer_0", "optimizer/adam", NO_SCOPE]
    assert by_key["layer_0"] == {"key": "layer_0", "seconds": 3.0, "flops": 30.0, "bytes": 300.0, "ops": 2,
                                 "forward_seconds": 1.0, "backward_seconds": 2.0, "share": 3.0 / 7.75}
    # the optimizer is neither pass in a module that has both
    assert by_key["optimizer/adam"]["forward_seconds"] == by_key["optimizer/adam"]["backward_seconds"] == 0.0


def test_equal_groups_come_in_key_order():
    rows = [_row("jit(f)/b/x", seconds=1.0), _row("jit(f)/a/x", seconds=1.0), _row("jit(f)/c/x", seconds=3.0)]
    assert [g["key"] for g in group(rows, "scope")["groups"]] == ["c", "a", "b"]


def test_by_source_the_line_is_the_key():
    rows = [_row(source="model.py:10", seconds=1.0), _row(source="model.py:10", seconds=2.0),
            _row(source="", seconds=4.0), _row(source="model.py:20", seconds=0.5)]
    b = group(rows, "source")
    assert [(g["key"], g["seconds"], g["ops"]) for g in b["groups"]] == [
        (NO_SOURCE, 4.0, 1), ("model.py:10", 3.0, 2), ("model.py:20", 0.5, 1)]
    assert "note" not in b


def test_layers_come_in_number_order_then_the_rest_heaviest_first():
    rows = [_row("jit(f)/layer_10/x", seconds=1.0), _row("jit(f)/layer_2/x", seconds=2.0),
            _row("jit(f)/other/x", seconds=0.5), _row("jit(f)/head/x", seconds=9.0)]
    keys = [g["key"] for g in group(rows, "layer")["groups"]]
    assert keys == ["layer 2", "layer 10", NO_LAYER]
    assert group(rows, "layer")["groups"][-1]["seconds"] == 9.5
    # after the layers, the other groups heaviest first
    rows += [_row("jit(f)/x", seconds=20.0, computation="body"), _row("jit(f)/y", seconds=1.0, computation="b2")]
    loops = {"body": ("while.1", 4), "b2": ("while.2", 2)}
    keys = [g["key"] for g in group(rows, "layer", loops)["groups"]]
    assert keys == ["layer 2", "layer 10", "loop body %while.1 (x4)", NO_LAYER, "loop body %while.2 (x2)"]


def test_a_loop_body_is_named_by_its_while_and_trip_count():
    rows = [_row("jit(f)/while/body/dot", seconds=1.0, computation="body.1"),
            _row("jit(f)/while/body/add", seconds=2.0, computation="body.1"),
            _row("jit(f)/while/body/mul", seconds=0.5, computation="body.2"),
            _row("jit(f)/head/x", seconds=0.25, computation="main")]
    keys = {g["key"]: g["seconds"] for g in group(rows, "layer", {"body.1": ("while.3", 12),
                                                                   "body.2": ("while.4", 0)})["groups"]}
    assert keys == {"loop body %while.3 (x12)": 3.0, "loop body %while.4": 0.5, NO_LAYER: 0.25}
    # without the module's loops, the name stack still says it is a scan's body
    keys = {g["key"] for g in group(rows, "layer")["groups"]}
    assert keys == {"loop body (a scan: its iterations together)", NO_LAYER}
    # a scope that only contains "while" or "body" is not one
    assert group([_row("jit(f)/body/while/x")], "layer")["groups"][0]["key"] == NO_LAYER
    assert group([_row("jit(f)/my_while/body/x")], "layer")["groups"][0]["key"] == NO_LAYER


def test_passes_come_forward_backward_other():
    rows = [_row("jit(f)/opt/x", seconds=5.0), _row("jit(f)/transpose(jvp(a))/x", seconds=2.0),
            _row("jit(f)/jvp(a)/x", seconds=1.0)]
    b = group(rows, "pass")
    assert [(g["key"], g["seconds"]) for g in b["groups"]] == [("forward", 1.0), ("backward", 2.0), ("other", 5.0)]
    assert [(g["forward_seconds"], g["backward_seconds"]) for g in b["groups"]] == [(1.0, 0.0), (0.0, 2.0),
                                                                                  (0.0, 0.0)]
    twice = group(rows + [_row("jit(f)/jvp(a)/y", seconds=0.5)], "scope")["groups"]
    assert {g["key"]: g["forward_seconds"] for g in twice}["a"] == 1.5  # (each forward op added)
    plain = group([_row("", seconds=1.0), _row("jit(f)/x/y", seconds=3.0)], "pass")
    assert [g["key"] for g in plain["groups"]] == ["forward", NO_OP_NAME]


def test_the_parts_of_one_combined_collective_are_one_op_of_the_total():
    rows = [_row("jit(f)/layer_0/x", seconds=1.0, part=0), _row("jit(f)/layer_1/x", seconds=1.0, part=1),
            _row("jit(f)/layer_1/y", seconds=1.0)]
    b = group(rows, "layer")
    assert b["total"]["ops"] == 2  # (part 0 is falsy: the first part counts for the op)
    assert {g["key"]: g["ops"] for g in b["groups"]} == {"layer 0": 1, "layer 1": 2}


def test_an_empty_breakdown_has_zero_shares_and_no_note():
    b = group([], "layer")
    assert b["groups"] == [] and b["total"] == {"seconds": 0.0, "flops": 0.0, "bytes": 0.0, "ops": 0}
    assert "note" not in b
    zero = group([_row("jit(f)/a/x", seconds=0.0)], "scope")
    assert zero["groups"][0]["share"] == 0.0


def test_the_note_names_what_is_missing_for_source_only():
    rows = [_row("jit(f)/layer_0/x", source="")]
    assert "source line" in group(rows, "source")["note"] and "by source" in group(rows, "source")["note"]
    assert "note" not in group(rows, "scope")
    with_source = [_row("", source="m.py:1")]
    assert "note" not in group(with_source, "source")
    assert "its op_name" in group(with_source, "scope")["note"]


def test_an_unknown_grouping_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match=r"--by 'lines': one of scope, layer, source, pass"):
        group([], "lines")


# -- on real programs

SCAN = FIXTURES / "memory" / "scan_layers_v5e.hlo.txt"


def test_a_scan_over_layers_is_one_loop_body_with_its_trip_count():
    """The layer scan's body is named after its while and the trip count its backend_config
    states (read here from the text, not from hloscope)."""
    text = SCAN.read_text()
    line = next(ln for ln in text.splitlines() if " while(" in ln)
    name = re.search(r"%([\w.\-]+) = ", line).group(1)
    body = re.search(r"body=%([\w.\-]+)", line).group(1)
    trips = int(re.search(r'"known_trip_count":\{"n":"(\d+)"', line).group(1)) if "known_trip_count" in line \
        else None
    program = hloscope.load(SCAN)
    assert loop_bodies(program.module) == {body: (name, 0)}
    report = program.roofline("v5e")
    b = breakdown(program.module, report, "layer")
    loop = [g for g in b["groups"] if g["key"].startswith("loop body")]
    times = {r.times for r in report.rows if r.computation == body}
    assert len(times) == 1 and (trips is None or times == {trips})
    assert [g["key"] for g in loop] == [f"loop body %{name} (x{times.pop()})"]
    in_body = [r for r in report.rows if r.computation == body]
    assert loop[0]["ops"] == len(in_body)
    assert loop[0]["seconds"] == pytest.approx(sum(r.t_bound * r.times for r in in_body))


def test_roofline_rows_are_per_step():
    program = hloscope.load(SCAN)
    report = program.roofline("v5e")
    rows = roofline_rows(report)
    assert len(rows) == len(report.rows)
    for r, row in zip(report.rows, rows):
        assert row == {"op_name": r.op_name, "source": r.source, "computation": r.computation,
                       "instruction": r.instruction, "seconds": r.t_bound * r.times,
                       "flops": r.flops * r.times, "bytes": float(r.bytes * r.times), "times": r.times}
    assert any(r.times > 1 for r in report.rows)


TRAIN = FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt"


def test_a_combined_all_reduce_is_split_by_operand_bytes():
    """XLA's combiner made one all-reduce of every layer's gradients: each operand becomes a
    part with the op_name of the op that made it and its share of the bytes (sizes read from
    the operands' shapes)."""
    program = hloscope.load(TRAIN)
    module = program.module
    combined = [i for i in module.instructions() if i.opcode in ("all-reduce", "all-reduce-start")
                and len(i.operands) >= 2]
    assert combined
    instr = combined[0]
    comp = module.by_name[instr.computation]
    sizes = [comp.by_name[n].shape.logical_bytes for n in instr.operands]
    row = _row("jit(f)/layer_0/all-reduce", source="s.py:1", seconds=2.0, flops=4.0, bytes_=8.0,
               computation=instr.computation, instruction=instr.name)
    other = _row("jit(f)/x/y", computation=instr.computation, instruction="no-such-op")
    out = split_combined(module, [row, other])
    assert out[-1] is other
    parts = out[:-1]
    assert [p["part"] for p in parts] == list(range(len(sizes)))
    for p, size in zip(parts, sizes):
        share = size / sum(sizes)
        assert (p["seconds"], p["flops"], p["bytes"]) == pytest.approx((2.0 * share, 4.0 * share, 8.0 * share))
        assert p["instruction"] == instr.name and p["computation"] == instr.computation
    op_names = dict(re.findall(r'^\s*(?:ROOT )?%([\w.\-]+) = .*?metadata=\{op_name="([^"]*)"',
                               TRAIN.read_text(), re.M))
    made_by = [op_names.get(n) for n in instr.operands]
    assert [p["op_name"] for p in parts] == [m or row["op_name"] for m in made_by]
    assert len({p["op_name"] for p in parts}) > 1
    # a one-operand collective, an unknown computation, an op that is no collective: as they were
    single = next(i for i in module.instructions() if i.opcode not in ("all-reduce", "all-reduce-start"))
    for r in (_row(computation="nowhere", instruction=instr.name),
              _row(computation=single.computation, instruction=single.name),
              _row(computation=instr.computation)):
        assert split_combined(module, [r]) == [r]


# HAND-WRITTEN: a two-operand all-reduce (as XLA's combiner makes) of a 3 KiB and a 1 KiB
# gradient, the first with its op_name and source line, the second with none
COMBINED = """HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[768] parameter(0)
  q = f32[256] parameter(1)
  g1 = f32[768] multiply(p, p), metadata={op_name="jit(f)/transpose(jvp(layer_1))/mul" source_file="m.py" source_line=3}
  g2 = f32[256] add(q, q)
  one = f32[256] all-reduce(q), replica_groups={}, to_apply=add
  ROOT ar = (f32[768], f32[256]) all-reduce(g1, g2), replica_groups={}, to_apply=add
}
"""


def test_each_part_of_a_combined_collective_takes_its_operands_name_or_the_rows():
    from hloscope.parser import parse

    (m,) = parse(COMBINED)
    base = dict(op_name="jit(f)/layer_0/all-reduce", source="s.py:9", seconds=4.0, flops=8.0, bytes_=16.0,
                computation="e")
    before, after = _row("jit(f)/x/y", computation="e", instruction="g2"), _row(computation="e", instruction="p")
    single = _row(computation="e", instruction="one")
    out = split_combined(m, [before, _row(**base, instruction="ar"), single, after])
    assert out[0] is before and out[-2] is single and out[-1] is after
    first, second = out[1:3]
    assert (first["part"], second["part"]) == (0, 1)
    assert (first["seconds"], first["flops"], first["bytes"]) == (3.0, 6.0, 12.0)  # 3 KiB of 4
    assert (second["seconds"], second["flops"], second["bytes"]) == (1.0, 2.0, 4.0)
    assert (first["op_name"], first["source"]) == ("jit(f)/transpose(jvp(layer_1))/mul", "m.py:3")
    assert (second["op_name"], second["source"]) == (base["op_name"], base["source"])  # (none of its own)
    b = group(out, "layer")
    assert b["total"]["ops"] == 4  # 5 rows, the two parts of the all-reduce one op
    assert {g["key"]: g["seconds"] for g in b["groups"]}["layer 1"] == 3.0
