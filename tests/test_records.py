"""The IR's plain classes (hloscope.ir.records) behave as the dataclasses they replaced: the
same construction (positional and keyword, defaults, fresh mutable defaults), equality
(by fields for shapes and layouts, by identity for instructions, computations and modules),
hashing, immutability, pickling and repr; and `hloscope stats`'s records, ordered without
the ModuleStats dataclass, are the dataclass's own."""

from __future__ import annotations

import copy
import pickle

import pytest
from conftest import FIXTURES

from hloscope.ir import Computation, Instruction, Layout, Module, Shape
from hloscope.ir.records import FrozenInstanceError


def test_shapes_and_layouts_are_values():
    tiled = Layout((1, 0), tiles=((8, 128),), memory_space=1)
    a = Shape("f32", (8, 256), (False, False), tiled)
    b = Shape("f32", dims=(8, 256), dynamic=(False, False), layout=Layout((1, 0), (), ((8, 128),), memory_space=1))
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != Shape("f32", (8, 256), (False, False), Layout((1, 0)))
    assert a != "f32[8,256]" and Layout() == Layout((), (), (), 1, None, None, 0, 0, (), None, 0)
    assert {a: 1}[b] == 1
    with pytest.raises(FrozenInstanceError):
        a.dims = (1,)
    with pytest.raises(AttributeError):  # (FrozenInstanceError is one, as dataclasses' is)
        del tiled.tiles
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a
    assert a.replace(layout=None) == Shape("f32", (8, 256), (False, False))
    assert repr(tiled).startswith("Layout(minor_to_major=(1, 0), dim_level_types=(), tiles=((8, 128),)")
    nested = Shape("tuple", elements=(a, Shape("token")))
    assert pickle.loads(pickle.dumps(nested)) == nested and nested.elements[1].dims == ()


def test_ir_containers_are_equal_only_to_themselves():
    one = Instruction("a", "add", "f32[2]", ("x", "y"))
    two = Instruction("a", "add", "f32[2]", ("x", "y"))
    assert one != two and one == one and len({one, two}) == 2
    assert (one.operand_shapes, one._attrs, one.literal, one.is_root, one.line, one.attr_text) == (
        (), None, None, False, 0, "")
    moved = one.replace(name="b", line=7)
    assert (moved.name, moved.line, moved.operands, one.name) == ("b", 7, ("x", "y"), "a")
    c, d = Computation("c"), Computation("d", True)
    c.instructions.append(one)
    assert d.instructions == [] and d.params == [] and d.attrs == {}  # (fresh defaults)
    m, n = Module("m"), Module("n")
    m.computations.append(c)
    assert n.computations == [] and n.path == "<string>" and n.line == 1
    assert m != Module("m")


def test_parsed_modules_pickle_as_before():
    """A parsed module through pickle (the cache) keeps every instruction's fields, and a
    computation leaves its derived indexes out."""
    from hloscope.parser import load

    (m,) = load(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    m.entry.users()
    back = pickle.loads(pickle.dumps(m))
    assert back.entry._users is None
    fields = ("name", "opcode", "shape_text", "operands", "literal", "is_root", "line", "column",
              "computation", "attr_text")
    assert [tuple(getattr(i, f) for f in fields) for i in back.instructions()] == [
        tuple(getattr(i, f) for f in fields) for i in m.instructions()]
    assert [i.shape for i in back.instructions()] == [i.shape for i in m.instructions()]


def test_stats_records_ordered_as_the_dataclass_orders_them():
    from hloscope.parser import load
    from hloscope.stats import ModuleStats, stats
    from hloscope.stats.counts import ordered

    for name in ("tpu/transformer_v5p.hlo.txt", "h100/mlp_train_bf16.hlo.txt"):
        (m,) = load(FIXTURES / name)
        record = stats(m).to_dict()
        shuffled = dict(reversed(list(record.items())))
        assert list(ordered(shuffled).items()) == list(ModuleStats.from_record(shuffled).to_dict().items())
    with pytest.raises(TypeError):
        ordered({"name": "m"})
