"""H014 partial-tile-update and H002's pointer to it, one part each (the mutation run found
these paths untested): the TPU compiler's own cycle estimate as the cost, the copy that is a
dynamic-update-slice's buffer rather than its update, a transpose printed without its
permutation. Modules are HAND-WRITTEN minimal ones; the answers are worked by hand."""

from __future__ import annotations

from conftest import make_rule

from hloscope.cost.chips import get_chip
from hloscope.parser import parse
from hloscope.rules.engine import run
from hloscope.stage import AFTER

# one bf16 row written into each of 64 [8, 128]-tiled [64, 4096] slabs' tiles: a 1/8 slice
# of every tile it meets, at a TPU-estimated 5,000 cycles
ROW_UPDATE = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  buf = bf16[64,64,4096]{2,1,0:T(8,128)(2,1)} parameter(0)
  row = bf16[64,1,4096]{2,1,0:T(8,128)(2,1)} parameter(1)
  k = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = bf16[64,64,4096]{2,1,0:T(8,128)(2,1)} dynamic-update-slice(buf, row, z, k, z), backend_config={"estimated_cycles":"5000"}
}
"""

def _copied(copy_of: str) -> str:
    """HAND-WRITTEN minimal module: the same write, with a copy that relayouts `copy_of`
    first: the row (H002's pointer to H014), or the buffer written into (H002's own case)."""
    layouts = {"row": "{0,2,1:T(8,128)(2,1)}", "buf": "{1,2,0:T(8,128)(2,1)}"}
    tiled = "{2,1,0:T(8,128)(2,1)}"
    shape = {"row": "bf16[64,1,4096]", "buf": "bf16[64,64,4096]"}
    buf, row = (("c" if copy_of == w else w) for w in ("buf", "row"))
    return f"""HloModule m
ENTRY e {{
  buf = bf16[64,64,4096]{layouts["buf"] if copy_of == "buf" else tiled} parameter(0)
  row = bf16[64,1,4096]{layouts["row"] if copy_of == "row" else tiled} parameter(1)
  k = s32[] parameter(2)
  z = s32[] constant(0)
  c = {shape[copy_of]}{tiled} copy({copy_of})
  ROOT d = bf16[64,64,4096]{tiled} dynamic-update-slice({buf}, {row}, z, k, z)
}}
"""


def _found(text: str, code: str, chip: str = "v5p") -> list:
    # (the layouts are the TPU compiler's, as after its optimizations)
    return run(parse(text, "m"), [make_rule(code, min_bytes=0)], chip=get_chip(chip), stage=AFTER).findings


def test_the_compilers_own_cycle_estimate_is_the_cost():
    """The write's tiles: 64 slabs x 4096/128 tiles of [8, 128] bf16 (2 KiB) each: 4 MiB
    read and written back, 8 MiB moved. The TPU compiler priced the op at 5,000 cycles:
    that over the v5p's clock is the cost's time."""
    (f,) = _found(ROW_UPDATE, "H014")
    chip = get_chip("v5p")
    assert f.evidence["tile_bytes"] == 64 * 32 * 8 * 128 * 2
    assert f.cost["bytes_wasted"] == 2 * 64 * 32 * 8 * 128 * 2
    assert f.cost["xla_est_seconds"] == 5000 / chip.clock_hz == f.cost["est_seconds"]
    # outside a loop, once: no trips named; 64 x 4096 bf16 rows written are 512 KiB
    assert f.message.startswith("%d writes 1 of every 8 rows of the tiles of ")
    assert f.message.endswith(" along dimension 1: 4.0 MiB of whole tiles read and rewritten for a "
                              "512.0 KiB update")


def test_h002_points_to_h014_only_for_the_copy_that_makes_the_update():
    """A copy that relayouts the row written: H002's finding names the update (H014's case).
    A copy that relayouts the buffer written into is H002's own case."""
    (update,) = _found(_copied("row"), "H002")
    assert update.evidence["partial_tile_update"] == "d"
    (buffer,) = _found(_copied("buf"), "H002")
    assert "partial_tile_update" not in buffer.evidence
    assert "transpose weights" in buffer.help


def test_a_transpose_printed_without_its_permutation_is_judged_by_its_layouts():
    """The lenient parser takes a transpose with no `dimensions=`: it is then judged by its
    layouts alone, as the identity permutation. The same layout is no relayout; a minor
    dimension moved is one."""
    same = """// HAND-WRITTEN minimal module
HloModule m
ENTRY e {
  p = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  ROOT t = f32[1024,1024]{1,0:T(8,128)} transpose(p)
}
"""
    assert _found(same, "H002") == []
    (moved,) = _found(same.replace("ROOT t = f32[1024,1024]{1,0:", "ROOT t = f32[1024,1024]{0,1:"), "H002")
    assert moved.evidence["bytes"] == 2 * 1024 * 1024 * 4
