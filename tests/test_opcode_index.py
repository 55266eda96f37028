"""The module's opcode index (Module.of_opcode, of_opcodes, opcodes) against its definition:
a walk over every computation's instructions in order, on real compiler output.

The files: a TPU training step (async shorthand `slice-start`, which the parse wraps in
computations of its own whose parameters and root share their start's line), a TPU
compile with fusions, an H100 dump printed with `%x#i` tuple operands (get-tuple-elements
the parse inserts), the corpus's Llama pre-optimization step and a cuBLAS GPU module."""

from __future__ import annotations

import pytest
from conftest import CORPUS, FIXTURES

from hloscope.ir.opcodes import MAY_BE_COLLECTIVE
from hloscope.lint import LintOptions, build_rules
from hloscope.parser import load
from hloscope.rules.engine import run

FILES = [FIXTURES / "zoo" / "cumsum_v5e.hlo.txt", FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt",
         FIXTURES / "tpu" / "llm_v5p_big.hlo.txt", FIXTURES / "h100" / "gemm_bf16.hlo.txt",
         CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo"]
# one opcode; several; ones whose instructions share a line (a wrapped start's parameters and
# root); ones absent
QUERIES = [{"fusion"}, set(MAY_BE_COLLECTIVE), {"dot", "convolution", "custom-call"},
           {"parameter", "slice", "slice-start", "slice-done"}, {"parameter", "tuple", "get-tuple-element"},
           {"no-such-op"}, set()]


def _walk(module, opcodes) -> list:
    return [i for c in module.computations for i in c.instructions if i.opcode in opcodes]


@pytest.fixture(scope="module", params=FILES, ids=lambda p: p.name)
def module(request):
    if not request.param.exists():
        pytest.skip(f"{request.param} not at hand")
    (m,) = load(request.param)
    return m


@pytest.mark.parametrize("opcodes", QUERIES, ids=lambda q: ",".join(sorted(q))[:40] or "none")
def test_of_opcodes_is_the_walk(module, opcodes):
    got = module.of_opcodes(opcodes)
    want = _walk(module, opcodes)
    assert [id(i) for i in got] == [id(i) for i in want]
    for op in opcodes:
        assert [id(i) for i in module.of_opcode(op)] == [id(i) for i in _walk(module, {op})]


def test_opcodes_are_the_walks(module):
    assert module.opcodes() == {i.opcode for c in module.computations for i in c.instructions}


def test_shared_lines_take_the_walk():
    """The wrapped computations of `slice-start` hold parameters and a root on one line: the
    merge by line cannot order them, and the walk does (the wrapped ones exist: asserted)."""
    (m,) = load(FIXTURES / "zoo" / "cumsum_v5e.hlo.txt")
    wrapped = [c for c in m.computations if c.name.startswith("async_wrapped")]
    assert wrapped and len({i.line for i in wrapped[0].instructions}) == 1
    got = m.of_opcodes({"parameter", "slice"})
    assert [id(i) for i in got] == [id(i) for i in _walk(m, {"parameter", "slice"})]


def test_index_follows_added_computations():
    """A computation added after the index was built (as the parse's wrapping adds them) is
    in the next answer."""
    (m,) = load(FIXTURES / "zoo" / "cumsum_v5e.hlo.txt")
    before = len(m.of_opcode("parameter"))
    from hloscope.ir import Computation, Instruction

    extra = Computation("extra", instructions=[Instruction("p", "parameter", "f32[2]{0}", literal="0",
                                                           computation="extra")])
    m.computations.append(extra)
    assert len(m.of_opcode("parameter")) == before + 1


def test_instruction_rules_see_every_targeted_instruction(module):
    """The engine walks the opcode index for the instruction rules' targets: a rule that
    counts what it is shown sees every instruction of its opcodes, fused ones included."""
    from hloscope.rules.base import InstructionRule

    seen: list = []

    class Counting(InstructionRule):
        code, name, summary = "Z999", "counting", "counts"
        targets = frozenset({"fusion", "copy", "parameter", "dot"})
        include_fused = True

        def check(self, instr, ctx):
            seen.append(instr)
            return iter(())

    result = run([module], [Counting()])
    assert sorted(map(id, seen)) == sorted(map(id, _walk(module, Counting.targets)))
    assert result.instructions == sum(len(c.instructions) for c in module.computations)
    # (and the real rules run over it as before: no internal error)
    real = run([module], build_rules(LintOptions()))
    assert not [f for f in real.findings if f.code == "X000"]
