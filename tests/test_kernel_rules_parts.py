"""The kernel rules (K001-K006, X002) and X001 part by part, on real decoded Pallas kernels with
their summaries varied by hand: each threshold at equality, each skip, each figure, against
values worked out here from the block shapes and the chip table (not from the rules' output).

The kernels are real compiler output (fixtures/rules/K00x: deviceless v5e/v5p compiles of
Pallas kernels); what a test changes is the decoded summary, so one kernel can sit on either
side of a limit.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import FIXTURES, make_rule

from hloscope.cost.chips import get_chip
from hloscope.mlir.summary import Buffer
from hloscope.parser import load, parse
from hloscope.rules.base import RuleContext

V5E, V5P = get_chip("v5e"), get_chip("v5p")


def _real(rel: str, chip=V5E):
    """(module, its decoded kernels) of a rule fixture."""
    (m,) = load(FIXTURES / "rules" / f"{rel}.hlo.txt")
    return m, RuleContext(m, chip).kernels


def _check(code: str, module, kernels, chip=V5E, **options):
    rule = make_rule(code, **options)
    ctx = RuleContext(module, chip)
    ctx.kernels = kernels  # (the varied kernels, over the cached property)
    return list(rule.check_module(ctx))


def _vary(kernel, **summary):
    return replace(kernel, summary=replace(kernel.summary, **summary))


def _buf(role: str, block, dtype="f32", space="vmem", index=0):
    return Buffer(index, role, list(block or [1]), dtype, space, list(block) if block else None)


@pytest.fixture(scope="module")
def unaligned():  # K002's positive: f32 blocks [1000, 100] in and out, grid (1, 1)
    return _real("K002/unaligned_block_v5e")


# ----------------------------------------------------------------- K002 block-misaligned

def test_k002_ratio_is_the_padded_tile_area_over_the_block(unaligned):
    m, (k,) = unaligned
    # f32 [1001, 100]: (8-row, 128-lane) tiles pad it to 1008 x 128
    (f,) = _check("K002", m, [_vary(k, operands=[_buf("input", [1001, 100])])])
    assert f"{1008 * 128 / (1001 * 100):.2f}x" in f.message  # 1.29x
    assert f.evidence == {"block": [1001, 100], "dtype": "f32", "tile": [8, 128], "role": "input"}
    # rows a multiple of 8 but not of 16: the 16-bit types' sublanes
    (g,) = _check("K002", m, [_vary(k, operands=[_buf("output", [1000, 256], "bf16")])])
    assert g.evidence["tile"] == [16, 128] and f"{1008 / 1000:.2f}x" in g.message
    (h,) = _check("K002", m, [_vary(k, operands=[_buf("input", [48, 128], "s8")])])
    assert h.evidence["tile"] == [32, 128] and f"{64 / 48:.2f}x" in h.message


def test_k002_aligned_blocks_and_the_leading_dims_pass(unaligned):
    m, (k,) = unaligned
    for block, dtype in (([8, 128], "f32"), ([16, 256], "bf16"), ([32, 128], "s8"), ([3, 8, 128], "f32"),
                         ([5, 24, 384], "f32")):
        assert _check("K002", m, [_vary(k, operands=[_buf("input", block, dtype)])]) == [], block


def test_k002_reads_the_last_two_dims_of_a_3d_block(unaligned):
    m, (k,) = unaligned
    (f,) = _check("K002", m, [_vary(k, operands=[_buf("input", [256, 8, 100])])])
    assert f.evidence["block"] == [256, 8, 100] and f"{128 / 100:.2f}x" in f.message


def test_k002_skips_unblocked_one_dim_and_smem_operands_but_not_any(unaligned):
    m, (k,) = unaligned
    skipped = [_buf("input", None), _buf("input", [1000]), _buf("input", [1000, 100], space="smem"),
               _buf("input", [1000, 100], space="hbm")]
    for b in skipped:
        assert _check("K002", m, [_vary(k, operands=[b])]) == [], b
    (f,) = _check("K002", m, [_vary(k, operands=[_buf("input", [1000, 100], space="any")])])
    assert f.evidence["role"] == "input"


def test_k002_goes_on_past_a_skipped_or_aligned_operand(unaligned):
    m, (k,) = unaligned
    ops = [_buf("input", [1000, 100], space="smem"), _buf("input", [8, 128]), _buf("output", [1000, 100])]
    (f,) = _check("K002", m, [_vary(k, operands=ops)])
    assert f.evidence["role"] == "output"


# ----------------------------------------------------------------- K001 output-ref-accumulator

@pytest.fixture(scope="module")
def accumulating():  # K001's positive: bf16 [256, 256] output read back (output_reads [0])
    return _real("K001/output_accumulator_v5e")


def test_k001_flags_a_narrow_output_read_back_not_an_accumulator_type(accumulating):
    m, (k,) = accumulating
    (f,) = _check("K001", m, [k])
    assert f.evidence["output"] == 0 and "(bf16[256, 256])" in f.message and "rounded to bf16" in f.message
    for dtype in ("f32", "i32", "f64", "i64"):
        outs = [_buf("output", [256, 256], dtype)]
        assert _check("K001", m, [_vary(k, operands=outs, output_reads=[0])]) == [], dtype


def test_k001_reads_each_output_by_its_index_among_the_outputs(accumulating):
    m, (k,) = accumulating
    ops = [_buf("input", [256, 128], "bf16"), _buf("output", [256, 256], "f32"),
           _buf("output", [128, 256], "bf16")]
    (f,) = _check("K001", m, [_vary(k, operands=ops, output_reads=[0, 1])])
    assert f.evidence["output"] == 1 and "(bf16[128, 256])" in f.message
    assert _check("K001", m, [_vary(k, operands=ops, output_reads=[])]) == []


def test_k001_an_output_index_past_the_outputs_is_still_reported_without_a_type(accumulating):
    m, (k,) = accumulating
    (f,) = _check("K001", m, [_vary(k, output_reads=[3])])
    assert f.evidence["output"] == 3 and "rounded to its type" in f.message
    assert f"(%{k.instruction.name}) reads output 3 back, accumulating" in f.message
    # (the kernel has one output: index 1 is the first past it)
    (g,) = _check("K001", m, [_vary(k, output_reads=[1])])
    assert f"(%{k.instruction.name}) reads output 1 back, accumulating" in g.message


# ----------------------------------------------------------------- K003 vmem-over-budget

@pytest.fixture(scope="module")
def vmem():  # K003's positive: 64 MiB of double-buffered f32 blocks, granted 100 MiB
    return _real("K003/vmem_over_scoped_v5e")


def test_k003_limit_is_the_chips_scoped_default_at_equality(vmem):
    m, (k,) = vmem
    scoped = V5E.scoped_vmem_bytes  # 16 MiB
    assert _check("K003", m, [_vary(k, vmem_bytes=scoped)]) == []
    (f,) = _check("K003", m, [_vary(k, vmem_bytes=scoped + 1)])
    assert f.evidence == {"vmem_bytes": scoped + 1, "scoped_default": scoped, "granted": 100 << 20,
                          "physical": V5E.vmem_bytes}
    assert "the default scoped limit of 16.0 MiB" in f.message and "granted 100.0 MiB" in f.message


def test_k003_above_the_chips_vmem_names_the_chip(vmem):
    m, (k,) = vmem
    physical = V5E.vmem_bytes  # 128 MiB
    (f,) = _check("K003", m, [_vary(k, vmem_bytes=physical + 1)])
    assert "the chip's 128.0 MiB of VMEM" in f.message
    (g,) = _check("K003", m, [_vary(k, vmem_bytes=physical)])
    assert "default scoped limit" in g.message


def test_k003_a_chip_whose_vmem_is_under_its_scoped_default_is_full_at_equality(vmem):
    m, (k,) = vmem
    physical = V5E.vmem_bytes
    roomy = replace(V5E, scoped_vmem_bytes=2 * physical)  # (the chip's VMEM then binds first)
    assert _check("K003", m, [_vary(k, vmem_bytes=physical)], chip=roomy) == []
    (f,) = _check("K003", m, [_vary(k, vmem_bytes=physical + 1)], chip=roomy)
    assert "the chip's 128.0 MiB of VMEM" in f.message


def test_k003_without_a_chip_uses_the_16_mib_default_and_no_physical_limit(vmem):
    m, (k,) = vmem
    assert _check("K003", m, [_vary(k, vmem_bytes=16 << 20)], chip=None) == []
    (f,) = _check("K003", m, [_vary(k, vmem_bytes=1 << 30)], chip=None)
    assert f.evidence["physical"] is None and f.evidence["scoped_default"] == 16 << 20
    # a chip whose default is larger (v6e: 32 MiB)
    assert _check("K003", m, [_vary(k, vmem_bytes=32 << 20)], chip=get_chip("v6e")) == []


def test_k003_a_call_granted_nothing_says_nothing_of_a_grant():
    m, (k,) = _real("K004/huge_vector_v5e")  # (no scoped_memory_configs on this call)
    assert k.scoped_vmem_bytes is None
    (f,) = _check("K003", m, [_vary(k, vmem_bytes=20 << 20)])
    assert f.evidence["granted"] is None and "granted" not in f.message
    assert f.message.endswith("above the default scoped limit of 16.0 MiB")


# ----------------------------------------------------------------- K004 vreg-spill-risk

@pytest.fixture(scope="module")
def vector():  # K004's positive: a vector<1024x512xf32> value, 2 MiB
    return _real("K004/huge_vector_v5e")


def test_k004_limit_is_one_mib_at_equality_and_an_option(vector):
    m, (k,) = vector
    assert _check("K004", m, [_vary(k, largest_vector_bytes=1 << 20)]) == []
    (f,) = _check("K004", m, [_vary(k, largest_vector_bytes=(1 << 20) + 1)])
    assert f.evidence == {"vector": "vector<1024x512xf32>", "bytes": (1 << 20) + 1}
    assert _check("K004", m, [k], max_bytes=2 << 20) == []
    assert len(_check("K004", m, [k], max_bytes=(2 << 20) - 1)) == 1


# ----------------------------------------------------------------- K005 short-pipeline

@pytest.fixture(scope="module")
def short():  # K005's positive: grid (2, 1), f32 [512, 2048] blocks in and out (4 MiB each)
    return _real("K005/two_step_grid_v5e")


def test_k005_steps_and_bytes_at_their_limits(short):
    m, (k,) = short
    (f,) = _check("K005", m, [k])
    assert f.evidence == {"grid": [2, 1], "steps": 2, "block_bytes": 2 * 512 * 2048 * 4}
    assert _check("K005", m, [_vary(k, grid=[4, 1])]) == []  # 4 steps: the limit
    assert len(_check("K005", m, [_vary(k, grid=[3, 1])])) == 1
    assert _check("K005", m, [k], min_steps=2) == []
    # 1 MiB of blocks exactly is reported, a byte less is not
    one_mib = [_buf("input", [256, 1024])]  # f32: 1 MiB
    assert len(_check("K005", m, [_vary(k, operands=one_mib)])) == 1
    assert _check("K005", m, [_vary(k, operands=one_mib)], min_block_bytes=(1 << 20) + 1) == []


def test_k005_counts_only_blocked_operands(short):
    m, (k,) = short
    ops = [_buf("input", [512, 2048]), replace(_buf("scalar_prefetch", [1 << 20]), block=None)]
    (f,) = _check("K005", m, [_vary(k, operands=ops)])
    assert f.evidence["block_bytes"] == 512 * 2048 * 4
    no_grid = _check("K005", m, [_vary(k, grid=[])])  # no grid: one step
    assert no_grid[0].evidence["steps"] == 1


# ----------------------------------------------------------------- K006 no-parallel-axis

@pytest.fixture(scope="module")
def arbitrary():  # K006's positive: grid (4, 4, 2), all axes arbitrary, on v5p
    return _real("K006/arbitrary_only_v5p", V5P)


def test_k006_only_on_megacore_chips(arbitrary):
    m, (k,) = arbitrary
    (f,) = _check("K006", m, [k], chip=V5P)
    assert "TPU v5p" in f.message and "2 TensorCores" in f.message
    assert f.evidence == {"semantics": ["arbitrary"] * 3, "grid": [4, 4, 2]}
    assert len(_check("K006", m, [k], chip=get_chip("v4"))) == 1
    assert _check("K006", m, [k], chip=V5E) == []
    assert _check("K006", m, [k], chip=None) == []


def test_k006_a_parallel_axis_or_a_single_step_is_fine(arbitrary):
    m, (k,) = arbitrary
    assert _check("K006", m, [_vary(k, dimension_semantics=["arbitrary", "parallel", "arbitrary"])],
                  chip=V5P) == []
    assert _check("K006", m, [_vary(k, grid=[1, 1, 1])], chip=V5P) == []
    assert len(_check("K006", m, [_vary(k, grid=[2, 1, 1])], chip=V5P)) == 1
    (f,) = _check("K006", m, [_vary(k, dimension_semantics=[])], chip=V5P)
    assert "(none)" in f.message


def test_k006_reports_each_kernel_on_its_own(arbitrary):
    m, (k,) = arbitrary
    fine = _vary(k, dimension_semantics=["parallel", "arbitrary", "arbitrary"])
    found = _check("K006", m, [fine, k], chip=V5P)
    assert [f.evidence["semantics"] for f in found] == [["arbitrary"] * 3]


# ----------------------------------------------------------------- X002 kernel-not-decoded

@pytest.fixture(scope="module")
def future():  # X002's positive: a kernel of Mosaic IR version 99
    (m,) = load(FIXTURES / "rules" / "X002" / "future_kernel_v5e.hlo.txt")
    return m


def _undecoded(module):
    ctx = RuleContext(module, V5E)
    assert ctx.kernels == []  # (decoding sets ctx.undecoded)
    (k,) = ctx.undecoded
    return k


def _x002(module, undecoded):
    rule = make_rule("X002")
    ctx = RuleContext(module, V5E)
    ctx.kernels = []
    ctx.undecoded = undecoded
    return list(rule.check_module(ctx))


def test_x002_without_jax_one_finding_for_the_module_naming_the_count(future):
    k = _undecoded(future)
    why = "decoding Mosaic kernels needs jax and jaxlib (pip install 'hloscope[jax]')"
    other = replace(k, instruction=k.instruction.replace(name="f.2"), error=why)
    (f,) = _x002(future, [replace(k, error=why), other,
                          replace(other, instruction=k.instruction.replace(name="f.3"))])
    assert f.message.startswith(f"3 Pallas kernel(s) not decoded (%{k.instruction.name} and 2 more)")
    assert f.evidence == {"kernels": [k.instruction.name, "f.2", "f.3"], "why": why}
    assert f.instruction == k.instruction.name
    (two,) = _x002(future, [replace(k, error=why), other])
    assert two.message.startswith(f"2 Pallas kernel(s) not decoded (%{k.instruction.name} and 1 more)")
    (one,) = _x002(future, [replace(k, error=why)])
    assert one.message.startswith(f"1 Pallas kernel(s) not decoded (%{k.instruction.name}): ")


def test_x002_other_reasons_one_finding_per_kernel(future):
    k = _undecoded(future)
    jaxless = "decoding Mosaic kernels needs jax and jaxlib (pip install 'hloscope[jax]')"
    second = replace(k, instruction=k.instruction.replace(name="f.2"), error=jaxless)
    found = _x002(future, [k, second])  # two reasons: each kernel on its own
    assert [f.evidence for f in found] == [{"kernel": k.instruction.name, "why": k.error},
                                           {"kernel": "f.2", "why": jaxless}]
    assert "version 99" in found[0].message
    assert _x002(future, []) == []
    (none_said,) = _x002(future, [replace(k, error=None)])
    assert none_said.evidence["why"] is None


# ----------------------------------------------------------------- X001 unknown-opcode

# HAND-WRITTEN: two instructions of one opcode XLA does not know, one of another
UNKNOWN = """HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  a = f32[8] frobnicate(p)
  b = f32[8] frobnicate(a)
  c = f32[8] twiddle(b)
  ROOT d = f32[8] add(c, p)
}
"""


def test_x001_one_finding_per_opcode_at_its_first_use_counting_the_rest():
    (m,) = parse(UNKNOWN)
    rule = make_rule("X001")
    found = list(rule.check_module(RuleContext(m, None)))
    assert [(f.instruction, f.evidence) for f in found] == [
        ("a", {"opcode": "frobnicate", "instructions": ["a", "b"]}),
        ("c", {"opcode": "twiddle", "instructions": ["c"]})]
    assert "%a and 1 more kept" in found[0].message
    assert "%c kept" in found[1].message


# ----------------------------------------------------------------- every kernel judged on its own

@pytest.mark.parametrize("code, fixture, fine", [
    ("K003", "K003/vmem_over_scoped_v5e", {"vmem_bytes": 1 << 20}),
    ("K004", "K004/huge_vector_v5e", {"largest_vector_bytes": 1 << 10}),
    ("K005", "K005/two_step_grid_v5e", {"grid": [8, 1]}),
    ("K001", "K001/output_accumulator_v5e", {"output_reads": []}),
    ("K002", "K002/unaligned_block_v5e", {"operands": [_buf("input", [8, 128])]}),
])
def test_a_kernel_the_rule_passes_does_not_stop_it_on_the_next(code, fixture, fine):
    m, (k,) = _real(fixture)
    clean = _vary(k, **fine)
    alone = _check(code, m, [k])
    assert alone and _check(code, m, [clean]) == []
    assert len(_check(code, m, [clean, k])) == len(alone)
