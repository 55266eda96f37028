"""Parts of the cost package against hand-derived numbers (the mutation run found them
untested): the module's memory facts that `stats` prints. The module is HAND-WRITTEN, small
enough to work every byte out by hand from the (8,128) tiling rule."""

from __future__ import annotations

from hloscope.cost.memory import memory_facts
from hloscope.parser import parse

MODULE = """// HAND-WRITTEN minimal module: one buffer of each kind memory_facts tells apart
HloModule m, is_scheduled=true

add_one {
  x = f32[1000,100]{1,0:T(8,128)} parameter(0)
  c = f32[1000,100]{1,0:T(8,128)} constant({...})
  ROOT y = f32[1000,100]{1,0:T(8,128)} add(x, c)
}

ENTRY e {
  p = f32[1000,100]{1,0:T(8,128)} parameter(0)
  f = f32[1000,100]{1,0:T(8,128)} fusion(p), kind=kLoop, calls=add_one
  s = f32[3,5]{1,0:T(8,128)} slice(f), slice={[0:3], [0:5]}
  cs = (f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)}, u32[]) copy-start(s)
  cd = f32[3,5]{1,0:T(8,128)S(1)} copy-done(cs)
  b = f32[3,5]{1,0:T(8,128)S(1)} bitcast(cd)
  ROOT t = (f32[1000,100]{1,0:T(8,128)}, f32[3,5]{1,0:T(8,128)S(1)}) tuple(f, b)
}
"""


def test_memory_facts_add_up_every_allocated_buffer():
    (m,) = parse(MODULE, "m")
    facts = memory_facts(m, top=4)
    # f: 1000 rows (a multiple of 8) x 100 columns padded to 128, 4 bytes: 512,000 (400,000
    # logical); s: 3x5 padded to one 8x128 tile: 4,096 (60 logical); the copy-start's new
    # buffers: the S(1) destination (4,096) and its u32 state (4). Not allocated: the
    # parameter, the bitcast, the tuple, the fusion's body, and the copy-done, whose result
    # is the destination its start allocated (XLA's dataflow: a done defines no value).
    assert facts["bytes_per_memory_space"] == {"VMEM (on-chip)": 4096,
                                               "device (HBM)": 512000 + 4096 + 4}
    assert facts["logical_bytes"] == 400000 + 60 + 60 + 4
    assert facts["padding_waste_bytes"] == (512000 - 400000) + 2 * (4096 - 60)
    largest = [(b["instruction"], b["padded_bytes"], b["ratio"]) for b in facts["largest_buffers"]]
    # biggest first, ties by name
    assert largest == [("f", 512000, 1.28), ("cs", 4096, round(4096 / 60, 3)),
                       ("s", 4096, round(4096 / 60, 3)), ("cs", 4, 1.0)]
    assert facts["largest_buffers"][0]["shape"] == "f32[1000,100]{1,0:T(8,128)}"
    assert [b["instruction"] for b in memory_facts(m, top=1)["largest_buffers"]] == ["f"]


def test_a_concat_bitcast_moves_nothing_in_hbm():
    """TPU's ConcatBitcast lays its operands out end to end and bitcasts them (the real v5e
    training step in fixtures/tpu): no HBM traffic, however its bytes are counted."""
    from conftest import FIXTURES

    from hloscope.cost.ops import CostModel
    from hloscope.parser import load

    (m,) = load(FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt")
    model = CostModel(m)
    found = [i for i in m.instructions()
             if i.opcode == "custom-call" and i.attr("custom_call_target") == "ConcatBitcast"]
    assert found and all(model.memory(i).hbm_bytes == 0 for i in found)


def test_the_largest_buffers_are_five_by_default_and_the_five_largest():
    """(stats lists five: the default of memory_facts and of the parts it adds up)"""
    from conftest import FIXTURES

    from hloscope.parser import load

    (m,) = load(FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt")
    five = memory_facts(m)["largest_buffers"]
    every = memory_facts(m, top=10_000)["largest_buffers"]
    assert len(every) > 5 and five == every[:5]
    assert [b["padded_bytes"] for b in every] == sorted((b["padded_bytes"] for b in every), reverse=True)
