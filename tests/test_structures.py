"""Computations' structure digests (native/src/structure.rs, set by the parse's compiled
checks) and the costs shared by them (CostModel.computation_compute and the fusions'
traffic, once per structure): each shared cost equals the cost worked out for that
computation or fusion alone, on real compiles whose layers repeat their fusions; the
roofline and step estimate equal those of the same module with no digests; digests group
computations (the test cannot pass by never sharing); and names and metadata apart, a change
in what a computation does changes its digest."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from hloscope.cost.fused import fusion_traffic
from hloscope.cost.ops import CostModel
from hloscope.parser import load, parse

pytestmark = pytest.mark.skipif(
    __import__("hloscope.parser.fast.native", fromlist=["available"]).available() is None,
    reason="the compiled extension is not in use (HLOSCOPE_PLAIN=1 or not built)")


@pytest.fixture(autouse=True)
def _digests():
    """Parses with digests (as roofline asks), then as the other commands parse."""
    from hloscope.parser.load import digest_structures

    digest_structures()
    yield
    digest_structures(False)

_FIELDS = ("flops", "transcendentals", "bytes_read", "bytes_written", "padded_read",
           "padded_written", "hbm_bytes", "unknown", "unknown_trip_counts")

# real compiles (fixtures/generate.py): unrolled layers whose fusions repeat
_MODULES = [FIXTURES / "tpu" / "llm_v5p_big.hlo.txt",
            FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt"]


def _values(cost) -> list:
    return [getattr(cost, f) for f in _FIELDS]


@pytest.mark.parametrize("path", _MODULES, ids=lambda p: p.name)
def test_a_cost_shared_by_structure_is_the_computations_own(path):
    (module,) = load(path)
    fused = module.fusion_computations()
    digests = [module.by_name[name].structure for name in fused]
    assert all(d is not None for d in digests)
    assert len(set(digests)) * 4 < len(digests)  # (layers repeat: few structures)
    model = CostModel(module)
    shared = 0
    for comp in module.computations:
        got = model.computation_compute(comp.name)
        alone = CostModel(module)  # (a model that has costed nothing: this computation's own)
        comp_digest, comp.structure = comp.structure, None
        try:
            want = alone.computation_compute(comp.name)
        finally:
            comp.structure = comp_digest
        assert _values(got) == _values(want), comp.name
        shared += got is model._structures.get(comp.structure)
    for instr in module.instructions():
        if instr.opcode == "fusion":
            shapes = model.operand_shapes(instr)
            assert model._fusion_traffic(instr, shapes) == fusion_traffic(module, instr, shapes)
    assert shared > len(set(digests))  # (shared, not only computed)


def test_roofline_and_step_equal_without_digests():
    from hloscope.cost.resolve import chip_for
    from hloscope.cost.roofline import roofline
    from hloscope.sharding.step import estimate

    def report(digests: bool):
        (module,) = load(FIXTURES / "tpu" / "llm_v5p_big.hlo.txt")
        if not digests:
            for comp in module.computations:
                comp.structure = None
        spec, _ = chip_for(module, None)
        r = roofline(module, spec)
        return r.to_dict(0), [row.to_dict() for row in r.rows], estimate(module, spec, r).to_dict()

    assert report(True) == report(False)


# hand-written (the digest's rules on small cases): two fused computations alike but for
# their names and metadata, and variants that each change one thing they do
_TEXT = """HloModule m

%fused_a (p.1: f32[8]) -> f32[8] {
  %p.1 = f32[8]{0} parameter(0)
  ROOT %e.1 = f32[8]{0} exponential(%p.1), metadata={op_name="layer_0/exp"}
}

%fused_b (q: f32[8]) -> f32[8] {
  %q = f32[8]{0} parameter(0)
  ROOT %x = f32[8]{0} exponential(%q), metadata={op_name="layer_1/exp" source_line=7}
}

%fused_c (q: f32[8]) -> f32[8] {
  %q = f32[8]{0} parameter(0)
  ROOT %x = f32[8]{0} OP(%q)
}

ENTRY %main (a: f32[8]) -> (f32[8], f32[8], f32[8]) {
  %a = f32[8]{0} parameter(0)
  %f1 = f32[8]{0} fusion(%a), kind=kLoop, calls=%fused_a
  %f2 = f32[8]{0} fusion(%a), kind=kLoop, calls=%fused_b
  %f3 = f32[8]{0} fusion(%a), kind=kLoop, calls=%fused_c
  ROOT %t = (f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(%f1, %f2, %f3)
}
"""


def test_names_and_metadata_apart_a_digest_is_what_the_computation_does():
    (module,) = parse(_TEXT.replace("OP", "exponential"), "<structures>")
    a, b, c = (module.by_name[n].structure for n in ("fused_a", "fused_b", "fused_c"))
    assert a is not None and a == b == c
    (module,) = parse(_TEXT.replace("OP", "log"), "<structures>")
    a, b, c = (module.by_name[n].structure for n in ("fused_a", "fused_b", "fused_c"))
    assert a == b != c
    # the entry calls them: its digest holds its callees' structures
    (other,) = parse(_TEXT.replace("OP", "exponential"), "<structures>")
    assert None is not module.entry.structure != other.entry.structure is not None


def test_only_the_commands_that_cost_fusions_ask_for_digests():
    from hloscope.parser.load import digest_structures

    digest_structures(False)
    (module,) = parse(_TEXT.replace("OP", "log"), "<structures>")
    assert all(c.structure is None for c in module.computations)


def test_modules_kept_without_digests_get_them_when_asked():
    """A module the cache kept from a command that asked for no digests (lint) gets them
    from the compiled pass over its text when roofline asks, the same as a parse's."""
    import importlib

    parsing = importlib.import_module("hloscope.parser.load")
    path = FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"
    data = path.read_bytes()
    parsing.digest_structures(False)
    (kept,) = parse(data.decode(), str(path))
    assert all(c.structure is None for c in kept.computations)
    parsing.digest_structures()
    parsing._digested([kept], data, None, str(path))
    (fresh,) = parse(data.decode(), str(path))
    assert [c.structure for c in kept.computations] == [c.structure for c in fresh.computations]
    assert sum(c.structure is not None for c in kept.computations) > 3000


def test_a_parse_with_no_thread_beside_digests_too():
    """Where the checks run after the scan (`-j 1`, one core: no thread beside it), the
    pass asked for then digests as well."""
    from hloscope._speed import process

    text = _TEXT.replace("OP", "exponential")
    allowed = process._helpers["allowed"]
    process._helpers["allowed"] = False  # (as no_helpers() says: no thread beside the scan)
    try:
        (module,) = parse(text, "<structures>")
    finally:
        process._helpers["allowed"] = allowed
    (beside,) = parse(text, "<structures>")
    assert [c.structure for c in module.computations] == [c.structure for c in beside.computations]
    assert module.by_name["fused_a"].structure is not None
