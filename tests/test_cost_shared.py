"""Costs shared by ops of the same opcode and shapes (CostModel._by_shapes): each equals the
cost worked out for that instruction alone (`_own`: compute, then _memory_into, the model's
general route), on real compiles whose layers repeat the same shapes, and on the corpus's
Llama step; and they are shared, so the test cannot pass by never taking that route."""

from __future__ import annotations

import pytest
from conftest import CORPUS, FIXTURES

from hloscope.cost.ops import _BY_SHAPES, CostModel
from hloscope.parser import load

_FIELDS = ("flops", "transcendentals", "bytes_read", "bytes_written", "padded_read",
           "padded_written", "hbm_bytes", "unknown", "unknown_trip_counts")

_MODULES = [FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt",
            FIXTURES / "tpu" / "transformer_v5p.hlo.txt",
            FIXTURES / "cpu" / "scan_cpu.hlo.txt"]


def _check(path) -> int:
    module = load(path)[0]
    model = CostModel(module)
    shared = 0
    seen: dict[int, str] = {}
    for comp in module.computations:
        for instr in comp.instructions:
            got = model.cost(instr)
            want = model._own(instr)
            assert [getattr(got, f) for f in _FIELDS] == [getattr(want, f) for f in _FIELDS], instr.name
            if instr.opcode in _BY_SHAPES:
                shared += id(got) in seen
                seen.setdefault(id(got), instr.name)
    return shared


@pytest.mark.parametrize("path", _MODULES, ids=lambda p: p.name)
def test_a_shared_cost_is_the_instructions_own(path):
    assert _check(path) > 0


def test_on_the_corpus_llama_step():
    path = CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo"
    if not path.exists():
        pytest.skip("../shared/corpus is not at hand")
    assert _check(path) > 10_000
