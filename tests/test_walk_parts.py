"""Short cuts of the memory walk held to the general route they stand in for, on real
compiler output (TPU, H100 and CPU compiles, the corpus's Mixtral): an elementwise op's value
(`_Walk._shared`) against `_made`'s questions, each order's HBM peak in placement from one
running sum (`_hbm_peak`) against a pass over every buffer (`live_per_space`), and a
module's platform found once (`Module.fact`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hloscope.cost import chips, placement
from hloscope.cost.chips import platform_of
from hloscope.cost.walk import _Walk
from hloscope.parser import load

ROOT = Path(__file__).resolve().parents[1]
MIXTRAL = ROOT.parent / "shared" / "corpus" / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo"
FILES = [ROOT / "fixtures" / p for p in (
    "h100/mlp_train_bf16.hlo.txt", "h100/scan_layers_bf16.hlo.txt", "h100/attention_xla_bf16.hlo.txt",
    "memory/scan_train_v5e.hlo.txt", "tpu/fsdp_default_v5p.hlo.txt",
    "cpu/transformer_cpu.hlo.txt")]


def _buffers(walk: _Walk) -> list[tuple]:
    out = [(b.computation, b.instruction, b.shape, b.bytes, b.space, b.defined, b.last_use, b.kind)
           for b in walk.buffers]
    for walks in walk.callees.values():
        for w in walks:
            out += _buffers(w)
    return out


# modules whose computations run elementwise ops and all-reduces unfused: before
# optimization (the corpus's Mixtral, jax's dumps); compiled modules fuse them
UNFUSED = [ROOT / "fixtures" / p for p in (
    "conformance/rng_uniform.before_optimizations.hlo.txt",
    "conformance/complex_ops.before_optimizations.hlo.txt",
    "conformance/while_loop.before_optimizations.hlo.txt",
    "conformance/scatter_add.before_optimizations.hlo.txt",
    "tpu/shard_map_v5p.before_optimizations.hlo.txt")] + [MIXTRAL]


@pytest.mark.parametrize("platform", [None, "tpu", "gpu", "cpu"])
@pytest.mark.parametrize("path", UNFUSED, ids=lambda p: p.name)
def test_an_elementwise_value_is_the_one_made_answers(path, platform, monkeypatch):
    """Every buffer (bytes, steps, kind), every value's buffer ids, the sharing noted and
    the peaks are the same when each elementwise op and all-reduce goes through _made's
    questions instead, walked by each platform's rules."""
    if not path.exists():
        pytest.skip(f"{path} not at hand")
    (module, *_) = load(path)
    # (the Python steps: the core's, native/src/steps.rs, are held to them in test_walk_core)
    monkeypatch.setattr("hloscope.cost.walk.native", lambda: None)
    fast = _Walk(module, module.entry, platform=platform)
    fast.run()
    asked = []

    def general(self, instr, step, operands, shape):
        asked.append(instr.opcode)
        return self._made(instr, step, operands)

    monkeypatch.setattr(_Walk, "_shared", general)
    slow = _Walk(module, module.entry, platform=platform)
    slow.run()
    assert asked, "no elementwise op took the short cut"
    assert _buffers(fast) == _buffers(slow)
    assert fast.values == slow.values and fast.sharing == slow.sharing and fast.touching == slow.touching
    assert fast.peak_per_space() == slow.peak_per_space()


@pytest.mark.parametrize("path", FILES + [MIXTRAL], ids=lambda p: p.name)
def test_each_order_s_peak_is_the_pass_over_every_buffer(path):
    """_hbm_peak, with a third of the walk's HBM temporaries taken as in outputs, equals
    live_per_space(0)'s peak with those buffers marked so; and with none taken."""
    if not path.exists():
        pytest.skip(f"{path} not at hand")
    (module, *_) = load(path)
    walk = _walk_unplaced(module)
    temps = [b for b in walk.buffers if b.space == 0 and b.kind == "temp" and b.bytes]
    assert temps
    delta = walk.deltas(0)[0]
    for own in ([], temps[::3], temps[1::2]):
        for b in own:
            b.kind = "in output"
        want = max(walk.live_per_space(0)[0], default=0)
        for b in own:
            b.kind = "temp"
        assert placement._hbm_peak(walk, delta, own) == want


def _walk_unplaced(module) -> _Walk:
    """The entry's walk before place_in_outputs marks anything (its temporaries all temps)."""
    walk = _Walk(module, module.entry, platform=platform_of(module))
    real = placement.place_in_outputs
    try:
        import hloscope.cost.walk as walk_module

        walk_module.place_in_outputs = lambda w: None
        walk.run()
    finally:
        walk_module.place_in_outputs = real
    return walk


def test_a_module_s_platform_is_found_once(monkeypatch):
    (module,) = load(ROOT / "fixtures" / "h100" / "gemm_bf16.hlo.txt")
    found = []
    real = chips._platform
    monkeypatch.setattr(chips, "_platform", lambda m: found.append(m) or real(m))
    assert platform_of(module) == "gpu" and platform_of(module) == "gpu"
    assert len(found) == 1
    module.computations.append(module.computations[0])  # (another set of computations: asked again)
    assert platform_of(module) == "gpu" and len(found) == 2
