"""memory's walk in the compiled core (native/src/steps.rs: `walk_steps` over a `Store` of
buffer columns) held to the Python steps it stands in for (`_Walk._steps`, the plain route),
on real compiler output (TPU, H100 and CPU compiles, modules before optimization, the
corpus's Mixtral), under each platform's sharing rules: every buffer of the entry and of the
computations it runs, every value's buffer ids, the sharing noted, the GPU pairs, the
outputs held, the callees' peaks. Also the Store's own behaviour as a list of buffers, and
a buffer of 2**63 bytes or more (beyond the core's integers: the walk and the placement
then take the Python route)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hloscope._speed import native
from hloscope.cost.liveness import memory
from hloscope.cost.walk import Buffer, _Walk
from hloscope.parser import load

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
FILES = [ROOT / "fixtures" / p for p in (
    "h100/mlp_train_bf16.hlo.txt", "h100/scan_layers_bf16.hlo.txt", "h100/attention_xla_bf16.hlo.txt",
    "memory/scan_train_v5e.hlo.txt", "tpu/fsdp_default_v5p.hlo.txt", "tpu/fsdp_async_fusion_v5p.hlo.txt",
    "cpu/transformer_cpu.hlo.txt",
    "conformance/rng_uniform.before_optimizations.hlo.txt",
    "conformance/while_loop.before_optimizations.hlo.txt",
    "conformance/scatter_add.before_optimizations.hlo.txt",
    "tpu/shard_map_v5p.before_optimizations.hlo.txt")] + [
    CORPUS / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo",
    CORPUS / "xla-cpu-benchmark-hlo" / "gemma3_1b_flax_call.hlo"]

CORE = native()
needs_core = pytest.mark.skipif(CORE is None or not hasattr(CORE, "walk_steps"),
                                reason="the compiled core is not built (or HLOSCOPE_PLAIN=1)")


def _state(walk: _Walk) -> list:
    """Everything a walk leaves, its callees' walks included."""
    out = [[(b.computation, b.instruction, b.shape, b.bytes, b.space, b.defined, b.last_use, b.kind)
            for b in walk.buffers],
           walk.values, walk.sharing, walk.touching, walk.held_from, walk.inner]
    assert all(type(b) is Buffer for b in walk.buffers)
    for step in sorted(walk.callees):
        out.append([_state(w) for w in walk.callees[step]])
    return out


@needs_core
@pytest.mark.parametrize("platform", [None, "tpu", "gpu", "cpu"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_core_s_steps_leave_what_the_python_steps_leave(path, platform, monkeypatch):
    if not path.exists():
        pytest.skip(f"{path} not at hand")
    (module, *_) = load(path)
    core = _Walk(module, module.entry, platform=platform)
    core.run()
    monkeypatch.setattr("hloscope.cost.walk.native", lambda: None)
    plain = _Walk(module, module.entry, platform=platform)
    plain.run()
    assert _state(core) == _state(plain)
    assert core.peak_per_space() == plain.peak_per_space()


@needs_core
def test_the_core_takes_the_common_steps(monkeypatch):
    """Most of an unfused module's instructions never reach _Walk.value (else the core
    would be the Python loop again): on Mixtral's entry, fewer than a tenth do."""
    path = FILES[-2]
    if not path.exists():
        pytest.skip(f"{path} not at hand")
    (module,) = load(path)
    asked = []
    real = _Walk.value
    monkeypatch.setattr(_Walk, "value", lambda self, i, step: asked.append(i) or real(self, i, step))
    walk = _Walk(module, module.entry)
    walk.run()
    assert 0 < len(asked) < len(module.entry.instructions) / 10


@needs_core
def test_the_store_is_a_list_of_buffers():
    store = CORE.Store()
    a = Buffer("c", "a", "f32[2]", 8, 0, 0, 0)
    store.append(a)
    store.extend([Buffer("c", "b", "f32[4]", 16, 1, 1, 3, "output"), Buffer("c", "d", "s8[1]", 1, 0, 2, 2)])
    assert len(store) == 3
    assert (store[1].instruction, store[1].bytes, store[1].space, store[1].kind) == ("b", 16, 1, "output")
    assert store[-1].instruction == "d"
    view = store[0]
    view.bytes = 0
    view.last_use = 7
    view.kind = "in output"
    assert (store[0].bytes, store[0].last_use, store[0].kind) == (0, 7, "in output")
    with pytest.raises(IndexError):
        store[3]
    with pytest.raises(IndexError):
        store[-4]
    made = store.buffers(Buffer)
    assert made == [Buffer("c", "a", "f32[2]", 0, 0, 0, 7, "in output"),
                    Buffer("c", "b", "f32[4]", 16, 1, 1, 3, "output"),
                    Buffer("c", "d", "s8[1]", 1, 0, 2, 2)]
    assert a.bytes == 8  # (the Buffer appended is read, not kept)


# hand-written (a syntax corner, not compiler output): 1.2e19 bytes an array, more than the
# core's 64-bit integers hold, under XLA's 2**63 elements
HUGE = """HloModule huge

ENTRY main {
  p = f32[3000000000,1000000000]{1,0} parameter(0)
  a = f32[3000000000,1000000000]{1,0} add(p, p)
  ROOT n = f32[3000000000,1000000000]{1,0} negate(a)
}
"""


def test_a_buffer_beyond_64_bits_takes_the_python_route(tmp_path, monkeypatch):
    path = tmp_path / "huge.hlo"
    path.write_text(HUGE)
    (module,) = load(path)
    got = memory(module).to_dict()
    monkeypatch.setattr("hloscope.cost.walk.native", lambda: None)
    monkeypatch.setattr("hloscope.cost.placement.native", lambda: None)
    assert got == memory(module).to_dict()
    assert got["temp_peak_bytes"] > 2 ** 63
