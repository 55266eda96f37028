"""The trace rules (T001-T004) part by part, on real compiled modules with measured times
set by hand: each threshold, severity, figure and help branch against a bound worked out
from the op's shapes and the chip table's published rates (not from the rule's own output).

The modules are real compiler output (fixtures/); the measured statistics are written here,
so each test puts an op exactly on either side of a threshold.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES, make_rule

from hloscope.cost.chips import get_chip
from hloscope.cost.ops import CostModel
from hloscope.cost.roofline import op_times
from hloscope.parser import load
from hloscope.rules.base import RuleContext, Severity
from hloscope.trace.join import InstructionStats, TraceIndex
from hloscope.trace.kernels import KernelView

V5E = get_chip("v5e")
# %fusion of fixtures/precision/bf16_v5e: bf16 [2048,2048] @ [2048,2048]; 2 * 2048^3 FLOPs at
# v5e's 197 TFLOP/s bf16 peak is its bound (its 24 MiB of HBM traffic take 30.7 us)
MATMUL_FLOPS = 2 * 2048 ** 3
MATMUL_BOUND = MATMUL_FLOPS / 197e12  # 87.2 us


def _module(rel: str):
    (m,) = load(FIXTURES / rel)
    return m


def _stats(module, name: str, mean_s: float, count: int = 4, category: str = "convolution fusion",
           opcode: str = "fusion") -> InstructionStats:
    s = InstructionStats(module.name, name, module.entry.name, opcode, category)
    for k in range(count):
        s.add(start=k * 1e6, duration=mean_s * 1e9, device="/device:TPU:0")
    s.executions = count
    return s


def _index(module, *stats: InstructionStats, **kw) -> TraceIndex:
    return TraceIndex(stats={(module.name, s.instruction): s for s in stats}, **kw)


def _check(code: str, module, index, chip=V5E, **options):
    rule = make_rule(code, **options)
    return list(rule.check_module(RuleContext(module, chip, trace=index)))


@pytest.fixture(scope="module")
def matmul():
    return _module("precision/bf16_v5e.hlo.txt")


# ----------------------------------------------------------------- T001 roofline-gap

def test_t001_thresholds_follow_the_guides_warning_over_30_percent_error_at_2x(matmul):
    def found(ratio):
        return _check("T001", matmul, _index(matmul, _stats(matmul, "fusion", ratio * MATMUL_BOUND)))

    assert found(1.29) == []
    (warn,) = found(1.31)
    assert warn.severity is Severity.WARNING
    (still_warn,) = found(1.99)
    assert still_warn.severity is Severity.WARNING
    (err,) = found(2.0)
    assert err.severity is Severity.ERROR


def test_t001_figures_are_the_compute_bound_of_the_matmul_and_the_time_over_it(matmul):
    mean = 3 * MATMUL_BOUND
    (f,) = _check("T001", matmul, _index(matmul, _stats(matmul, "fusion", mean, count=5)))
    assert f.evidence["roofline_seconds"] == pytest.approx(MATMUL_BOUND, rel=1e-6)
    assert f.evidence["mean_seconds"] == pytest.approx(mean)
    assert f.evidence["flops"] == MATMUL_FLOPS
    assert f.cost["est_seconds"] == pytest.approx((mean - MATMUL_BOUND) * 5)
    assert "3.0x its roofline bound of 87.2" in f.message and "TPU v5e" in f.message
    assert "H005" in f.help and "tensor" not in f.help  # (TPU words on a TPU module)


def test_t001_options_move_the_thresholds_and_the_minimum_time(matmul):
    idx = _index(matmul, _stats(matmul, "fusion", 1.5 * MATMUL_BOUND))
    assert _check("T001", matmul, idx, warning_ratio=1.6) == []
    (f,) = _check("T001", matmul, idx, error_ratio=1.5)
    assert f.severity is Severity.ERROR
    # under min_seconds nothing is reported, however far over its bound
    slow = _index(matmul, _stats(matmul, "fusion", 5 * MATMUL_BOUND))
    assert _check("T001", matmul, slow, min_seconds=5 * MATMUL_BOUND + 1e-6) == []
    assert len(_check("T001", matmul, slow, min_seconds=5 * MATMUL_BOUND - 1e-6)) == 1


def test_t001_skips_control_flow_and_ops_not_measured(matmul):
    idx = _index(matmul, _stats(matmul, "fusion", 10 * MATMUL_BOUND, category="control flow"))
    assert _check("T001", matmul, idx) == []
    assert _check("T001", matmul, _index(matmul)) == []
    assert _check("T001", matmul, _index(matmul, _stats(matmul, "fusion", 10 * MATMUL_BOUND)), chip=None) == []


def test_t001_an_approximate_chip_warns_only_from_3x_and_never_errs():
    cpu = get_chip("cpu")
    assert cpu.approximate
    m = _module("precision/bf16_v5e.hlo.txt")
    bound = max(op_times(CostModel(m), cpu, m.entry.by_name["fusion"]))
    assert bound > 0
    assert _check("T001", m, _index(m, _stats(m, "fusion", 2.9 * bound)), chip=cpu) == []
    (f,) = _check("T001", m, _index(m, _stats(m, "fusion", 10 * bound)), chip=cpu)
    assert f.severity is Severity.WARNING
    assert "cache misses" in f.help  # (the CPU's words)


def _under_launch_floor(module, chip) -> list[tuple[float, object]]:
    """(bound, op) of the entry's kernels whose roofline bound is under T001's 5 us floor."""
    model = CostModel(module)
    bounds = [(max(op_times(model, chip, i)), i) for i in module.entry.instructions
              if i.opcode in ("fusion", "custom-call")]
    return [(b, i) for b, i in bounds if 0 < b < 5e-6]


def test_t001_a_short_gpu_op_under_the_launch_floor_is_called_launch_bound():
    m = _module("rules/H010/f32_default_h100.hlo.txt")
    h100 = get_chip("h100")
    small = _under_launch_floor(m, h100)
    assert small, "the H100 matmul module has an op under the 5 us launch floor"
    bound, instr = small[0]
    # 12 us: over 2x its bound, under 4x the floor: launch-bound, costed from the floor
    s = _stats(m, instr.name, 12e-6, count=3, category="matmul", opcode=instr.opcode)
    (f,) = _check("T001", m, _index(m, s), chip=h100)
    assert "launch-bound" in f.message
    assert f.cost["est_seconds"] == pytest.approx((12e-6 - max(bound, 5e-6)) * 3)
    assert f.evidence["launch_floor_seconds"] == 5e-6
    assert "command buffers" in f.help
    # exactly 4x the floor, 20 us, is no longer launch-bound
    s = _stats(m, instr.name, 20e-6, count=3, category="matmul", opcode=instr.opcode)
    (f,) = _check("T001", m, _index(m, s), chip=h100)
    assert "launch-bound" not in f.message
    # 22 us is over 4x the floor: a roofline gap again, with the GPU's words
    s = _stats(m, instr.name, 22e-6, count=3, category="matmul", opcode=instr.opcode)
    (f,) = _check("T001", m, _index(m, s), chip=h100)
    assert "launch-bound" not in f.message and f.severity is Severity.ERROR
    assert "tensor-core" in f.help and "MXU" not in f.help


def test_t001_a_collective_is_bound_by_its_link_time_not_hbm():
    m = _module("rules/H008/exposed_permute_v5p.hlo.txt")
    v5p = get_chip("v5p")
    done = next(i for i in m.entry.instructions if i.opcode == "collective-permute-done")
    # 1 MiB (bf16[512,1024]) over a bidirectional ring of v5p's 90 GB/s one-way links:
    # 5.83 us, where HBM's 2.765 TB/s would bound it at 0.76 us (#33's example)
    link_time = 512 * 1024 * 2 / (2 * 9e10)
    ctx = RuleContext(m, v5p, trace=_index(m))
    link = next(c for c in ctx.collectives if done.name in (c.instruction, c.done))
    assert link.est_seconds == pytest.approx(link_time)
    s = _stats(m, done.name, 2.5 * link.est_seconds, category="collective", opcode=done.opcode)
    (f,) = _check("T001", m, _index(m, s), chip=v5p)
    assert f.evidence["roofline_seconds"] == pytest.approx(link.est_seconds)
    assert "2.5x its ICI bound of 5.83 us" in f.message and f.severity is Severity.ERROR
    assert f.evidence["moved_bytes"] == link.moved_bytes
    assert "links allow" in f.help
    # 7.3 us is 9.6x what HBM would allow but under 1.3x the links' time: no gap
    under = _stats(m, done.name, 1.25 * link.est_seconds, category="collective", opcode=done.opcode)
    assert _check("T001", m, _index(m, under), chip=v5p, min_seconds=1e-6) == []


# ----------------------------------------------------------------- T002 pipeline-bubbles

def test_t002_fires_over_the_idle_share_with_the_idle_time_per_step(matmul):
    s = _stats(matmul, "fusion", MATMUL_BOUND)

    def found(busy, **opts):
        idx = _index(matmul, s, steps=4, step_ns=4e6, busy_ns=busy)
        return _check("T002", matmul, idx, **opts)

    assert found(3.6e6) == []  # idle exactly 10%: not over
    (f,) = found(3.0e6)  # idle 25%
    assert f.evidence["idle_fraction"] == pytest.approx(0.25)
    assert f.cost["measured_seconds"] == pytest.approx(1e6 * 1e-9 / 4)
    assert "idle 25% of 4 step(s)" in f.message
    assert f.instruction == "fusion"  # (reported on the entry's root)
    assert found(3.0e6, max_idle=0.3) == []
    # a trace with nothing of this module says nothing about it
    other = TraceIndex(stats={("another_module", "fusion"): s}, steps=4, step_ns=4e6, busy_ns=1e6)
    assert _check("T002", matmul, other) == []


# ----------------------------------------------------------------- T003 exposed-communication

def test_t003_reports_a_collective_done_that_takes_time_and_nothing_else():
    m = _module("rules/H008/exposed_permute_v5p.hlo.txt")
    done = next(i for i in m.entry.instructions if i.opcode == "collective-permute-done")
    start = next(i for i in m.entry.instructions if i.opcode == "collective-permute-start")
    stats = [_stats(m, done.name, 5e-6, count=2, category="collective", opcode=done.opcode),
             _stats(m, start.name, 50e-6, count=2, category="collective", opcode=start.opcode),
             _stats(m, "fusion", 500e-6, count=2)]
    (f,) = _check("T003", m, _index(m, *stats), chip=get_chip("v5p"))
    assert f.instruction == done.name
    assert f.evidence == {"mean_seconds": pytest.approx(5e-6), "count": 2}
    assert "waits 5.00 us per run (10.00 us over 2)" in f.message
    # under min_seconds: hidden enough
    quick = _stats(m, done.name, 0.9e-6, category="collective", opcode=done.opcode)
    assert _check("T003", m, _index(m, quick), chip=get_chip("v5p")) == []
    assert len(_check("T003", m, _index(m, stats[0]), chip=get_chip("v5p"), min_seconds=4e-6)) == 1
    assert _check("T003", m, _index(m, stats[0]), chip=get_chip("v5p"), min_seconds=6e-6) == []


def test_t003_a_copy_done_is_not_communication(matmul):
    s = _stats(matmul, "copy-done", 50e-6, category="data formatting", opcode="copy-done")
    assert _check("T003", matmul, _index(matmul, s)) == []


# ----------------------------------------------------------------- T004 hot-copy

def test_t004_reports_data_formatting_over_its_share_of_the_step(matmul):
    copy = _stats(matmul, "copy-done", 100e-6, count=4, category="data formatting", opcode="copy-done")
    fusion = _stats(matmul, "fusion", 100e-6, count=4)
    # 4 runs of 100 us in 4 steps of 1 ms on one device: 10% of the step
    (f,) = _check("T004", matmul, _index(matmul, copy, fusion, steps=4, step_ns=4e6))
    assert f.instruction == "copy-done" and f.evidence["share"] == pytest.approx(0.1)
    assert f.evidence["total_seconds"] == pytest.approx(400e-6) and f.evidence["count"] == 4
    assert "takes 10.0% of step time" in f.message
    # the same time on two devices is 5% of each one's step: at the threshold, reported
    two = _index(matmul, copy, steps=4, step_ns=4e6, devices=2)
    assert len(_check("T004", matmul, two)) == 1
    assert _check("T004", matmul, two, min_share=0.051) == []
    # 4% of the step: under the default 5%
    assert _check("T004", matmul, _index(matmul, copy, steps=4, step_ns=10e6)) == []


# ----------------------------------------------------------------- T005-T007: measured kernels
# fixtures/zoo/pallas_matmul_v5e: a Pallas bf16 [2048,2048] @ [2048,2048] kernel (tpu_custom_call)

KERNEL_BOUND = MATMUL_BOUND  # its body: 2 * 2048^3 FLOPs at v5e's bf16 peak, compute-bound


@pytest.fixture(scope="module")
def kernel_module():
    return _module("zoo/pallas_matmul_v5e.hlo.txt")


def _kernels(module, *views: dict) -> TraceIndex:
    """A trace with one measured KernelView (keyword fields) per custom call, in order."""
    names = [i.name for i in module.entry.instructions if i.opcode == "custom-call"]
    assert len(names) == len(views)
    return TraceIndex(kernels={(module.name, n): KernelView(module.name, n, **kw)
                               for n, kw in zip(names, views)})


def _kernel_index(module, runs: int, seconds: float, kinds=None, counters=None) -> TraceIndex:
    return _kernels(module, {"runs": runs, "seconds": seconds, "kinds": dict(kinds or {}),
                             "counters": dict(counters or {})})


def test_t005_reports_a_kernel_waiting_on_dma_for_its_share(kernel_module):
    m = kernel_module
    (f,) = _check("T005", m, _kernel_index(m, 4, 400e-6, {"dma wait": 160e-6, "compute": 200e-6}))
    assert f.evidence["dma_wait_share"] == pytest.approx(0.4)
    assert f.evidence["compute_share"] == pytest.approx(0.5)
    assert f.cost["measured_seconds"] == pytest.approx(160e-6)
    assert "waits on DMA for 40% of its measured time (160.00 us of 400.00 us over 4 run(s))" in f.message
    # 30% is the threshold (reported), 29% is not; a kernel under 10 us in all is left alone
    assert len(_check("T005", m, _kernel_index(m, 4, 400e-6, {"dma wait": 120e-6}))) == 1
    assert _check("T005", m, _kernel_index(m, 4, 400e-6, {"dma wait": 116e-6})) == []
    assert _check("T005", m, _kernel_index(m, 4, 9e-6, {"dma wait": 8e-6})) == []
    assert len(_check("T005", m, _kernel_index(m, 4, 9e-6, {"dma wait": 8e-6}), min_seconds=8e-6)) == 1
    assert _check("T005", m, _kernel_index(m, 0, 400e-6, {"dma wait": 300e-6})) == []  # (no runs)


def test_t006_reports_a_matmul_kernel_whose_mxu_counter_is_low(kernel_module):
    m = kernel_module
    (f,) = _check("T006", m, _kernel_index(m, 2, 300e-6, {"dma wait": 30e-6}, {"MXU": 10.0}))
    assert f.evidence["mxu_percent"] == 10.0
    assert f.evidence["dma_wait_share"] == pytest.approx(0.1)
    assert f.cost["measured_seconds"] == pytest.approx(300e-6 * 0.9)
    assert "MXU averaged 10.0% utilization over its 2 measured run(s)" in f.message
    assert f.evidence["matmul_ops"] and all("matmul" in op or "contract" in op for op in f.evidence["matmul_ops"])
    # the counter's name in any case; 25% is the threshold (not reported), nor is no counter
    assert len(_check("T006", m, _kernel_index(m, 2, 300e-6, counters={"mxu": 24.9}))) == 1
    assert _check("T006", m, _kernel_index(m, 2, 300e-6, counters={"MXU": 25.0})) == []
    assert _check("T006", m, _kernel_index(m, 2, 300e-6, counters={"VPU": 5.0})) == []
    assert _check("T006", m, _kernel_index(m, 2, 300e-6, counters={"MXU": 40.0}), max_mxu_percent=50) != []


def test_t007_bounds_a_kernel_by_the_roofline_of_its_own_body(kernel_module):
    m = kernel_module
    mean = 3 * KERNEL_BOUND
    (f,) = _check("T007", m, _kernel_index(m, 2, 2 * mean))
    assert f.evidence["flops"] == MATMUL_FLOPS
    assert f.evidence["roofline_seconds"] == pytest.approx(KERNEL_BOUND, rel=1e-6)
    assert f.evidence["mean_seconds"] == pytest.approx(mean)
    assert f.cost["measured_seconds"] == pytest.approx((mean - KERNEL_BOUND) * 2)
    assert "3.0x the roofline of its body on TPU v5e (87.21 us" in f.message
    assert "compute-bound" in f.message
    # 2x is the threshold (reported), under it nothing; nor without a chip
    assert len(_check("T007", m, _kernel_index(m, 1, 2.0 * KERNEL_BOUND))) == 1
    assert _check("T007", m, _kernel_index(m, 1, 1.99 * KERNEL_BOUND)) == []
    assert _check("T007", m, _kernel_index(m, 1, 1.5 * KERNEL_BOUND), ratio=1.4) != []
    assert _check("T007", m, _kernel_index(m, 1, 3 * KERNEL_BOUND), min_seconds=1e-3) == []
    assert _check("T007", m, _kernel_index(m, 1, 3 * KERNEL_BOUND), chip=None) == []


# ----------------------------------------------------------------- several ops: one skipped, the next judged
# (a rule that stopped at the first op it skips would miss the second)

@pytest.fixture(scope="module")
def two_kernels():
    # fixtures/zoo/pallas_matmul_twice_v5e: the same Pallas bf16 2048^3 matmul kernel called twice
    return _module("zoo/pallas_matmul_twice_v5e.hlo.txt")


def test_kernel_rules_judge_every_kernel_after_one_they_skip(two_kernels):
    m = two_kernels
    second = [i.name for i in m.entry.instructions if i.opcode == "custom-call"][1]
    quiet = {"runs": 1, "seconds": 1.5 * KERNEL_BOUND, "kinds": {"dma wait": 0.1 * KERNEL_BOUND},
             "counters": {"MXU": 90.0}}
    loud = {"runs": 1, "seconds": 3 * KERNEL_BOUND, "kinds": {"dma wait": 2 * KERNEL_BOUND},
            "counters": {"MXU": 5.0}}
    for code in ("T005", "T006", "T007"):
        (f,) = _check(code, m, _kernels(m, quiet, loud))
        assert f.instruction == second, code
        # and the first kernel is judged too, when it is the one over the line
        (g,) = _check(code, m, _kernels(m, loud, quiet))
        assert g.instruction != second, code
    # a kernel with no runs is skipped, the next one still judged
    (f,) = _check("T007", m, _kernels(m, {"runs": 0, "seconds": 0.0}, loud))
    assert f.instruction == second
    # under min_seconds in all: skipped, the next one still judged
    short = {"runs": 1, "seconds": 5e-6, "kinds": {"dma wait": 4e-6}}
    for code in ("T005", "T007"):
        (f,) = _check(code, m, _kernels(m, short, loud))
        assert f.instruction == second, code


def test_t001_and_t004_judge_every_op_after_one_they_skip(matmul):
    # entry order: copy-start, copy-done, fusion
    start = _stats(matmul, "copy-start", 50e-6, category="control flow", opcode="copy-start")
    done = _stats(matmul, "copy-done", 1e-6, category="data formatting", opcode="copy-done")
    slow = _stats(matmul, "fusion", 3 * MATMUL_BOUND)
    (f,) = _check("T001", matmul, _index(matmul, start, done, slow))
    assert f.instruction == "fusion"
    # T004: an op of another category first, then a copy over its share
    other = _stats(matmul, "copy-start", 50e-6, category="convolution fusion", opcode="copy-start")
    copy = _stats(matmul, "copy-done", 200e-6, category="data formatting", opcode="copy-done")
    (f,) = _check("T004", matmul, _index(matmul, other, copy, steps=1, step_ns=1e6))
    assert f.instruction == "copy-done"
    # a copy under its share first, then one over it
    small = _stats(matmul, "copy-start", 1e-6, category="data formatting", opcode="copy-start")
    (f,) = _check("T004", matmul, _index(matmul, small, copy, steps=1, step_ns=1e6))
    assert f.instruction == "copy-done"


def test_t003_judges_every_done_after_one_it_skips():
    m = _module("rules/H008/exposed_permute_v5p.hlo.txt")
    order = [i for i in m.entry.instructions if i.opcode in ("copy-done", "collective-permute-done")]
    done = next(i for i in order if i.opcode == "collective-permute-done")
    earlier = [i for i in m.entry.instructions[:m.entry.instructions.index(done)]
               if i.opcode.endswith("-done") or i.opcode.endswith("-start")]
    assert earlier, "an async op before the permute's done"
    skipped = [_stats(m, i.name, 50e-6, category="collective", opcode=i.opcode) for i in earlier]
    stats = [*skipped, _stats(m, done.name, 5e-6, category="collective", opcode=done.opcode)]
    (f,) = _check("T003", m, _index(m, *stats), chip=get_chip("v5p"))
    assert f.instruction == done.name
    # a quick done first (under min_seconds): skipped, the slow one after it still reported
    quick = [_stats(m, i.name, 0.5e-6, category="collective", opcode=i.opcode) for i in earlier]
    (f,) = _check("T003", m, _index(m, *quick, stats[-1]), chip=get_chip("v5p"))
    assert f.instruction == done.name


# ----------------------------------------------------------------- what each finding says

def test_t001_leaves_kernels_to_t007_and_ops_with_no_bound_alone(kernel_module, matmul):
    m = kernel_module
    kernel, fusion = [i for i in m.entry.instructions if i.opcode in ("custom-call", "fusion")]
    bound = max(op_times(CostModel(m), V5E, fusion))
    stats = [_stats(m, kernel.name, 10 * KERNEL_BOUND, category="custom-call", opcode="custom-call"),
             _stats(m, fusion.name, 10 * bound)]
    with_view = _kernel_index(m, 1, 10 * KERNEL_BOUND)
    with_view.stats = {(m.name, s.instruction): s for s in stats}
    (f,) = _check("T001", m, with_view)  # (the kernel, first in the schedule, is T007's)
    assert f.instruction == fusion.name
    assert {g.instruction for g in _check("T001", m, _index(m, *stats))} == {kernel.name, fusion.name}
    # copy-done's bound is 0 (its copy is copy-start's): however long it takes, no ratio
    done = _stats(matmul, "copy-done", 50e-6, category="data formatting", opcode="copy-done")
    assert _check("T001", matmul, _index(matmul, done)) == []


def test_t001_every_launch_bound_op_is_reported_not_only_the_first():
    # fixtures/zoo/convnet_train_h100: six cuDNN-layout transposes, each under the 5 us floor
    m = _module("zoo/convnet_train_h100.hlo.txt")
    h100 = get_chip("h100")
    small = [i for _, i in _under_launch_floor(m, h100)]
    assert len(small) >= 2
    stats = [_stats(m, i.name, 12e-6, category="data formatting", opcode=i.opcode) for i in small]
    found = _check("T001", m, _index(m, *stats), chip=h100)
    assert [f.instruction for f in found] == [i.name for i in small]
    assert all("launch-bound" in f.message for f in found)


def test_trace_findings_state_their_figures_and_advice(matmul, kernel_module):
    # T002: 75% idle of one 4 ms step
    idx = _index(matmul, _stats(matmul, "fusion", MATMUL_BOUND), steps=1, step_ns=4e6, busy_ns=1e6)
    (f,) = _check("T002", matmul, idx)
    assert "idle 75% of 1 step(s) (4.00 ms)" in f.message
    assert f.evidence["step_seconds"] == pytest.approx(4e-3)
    assert f.cost["measured_seconds"] == pytest.approx(3e-3)
    assert "host callbacks" in f.help
    # idle exactly at max_idle (0.25 = 1 - 3/4, exact in binary) is not over it
    at = _index(matmul, _stats(matmul, "fusion", MATMUL_BOUND), steps=4, step_ns=4e6, busy_ns=3e6)
    assert _check("T002", matmul, at, max_idle=0.25) == []
    # T004: the copy's own time, and where to look
    copy = _stats(matmul, "copy-done", 100e-6, count=4, category="data formatting", opcode="copy-done")
    (f,) = _check("T004", matmul, _index(matmul, copy, steps=4, step_ns=4e6))
    assert "(copy-done) takes 10.0% of step time: 400.00 us over 4 run(s)" in f.message
    assert "H001/H002" in f.help and "donation" in f.help
    # T005-T007: the kernel's figures and advice (48 MiB: x's 2 MiB row block fetched once
    # per row of the 4x4 grid, y's 2 MiB column block every step, the 512 KiB output block
    # written every step: 4 x 2 + 16 x 2 + 16 x 0.5 MiB)
    m = kernel_module
    idx = _kernel_index(m, 2, 6 * KERNEL_BOUND, {"dma wait": 3 * KERNEL_BOUND}, {"MXU": 10.0})
    (t5,) = _check("T005", m, idx)
    assert "Buffered(3)" in t5.help and t5.evidence["dma_wait_seconds"] == pytest.approx(3 * KERNEL_BOUND)
    (t6,) = _check("T006", m, idx)
    assert "MXU size" in t6.help
    (t7,) = _check("T007", m, idx)
    assert t7.evidence["hbm_bytes"] == 48 * 2**20 and ", 48.0 MiB of HBM traffic" in t7.message
    assert t7.evidence["dma_wait_share"] == pytest.approx(0.5)
    assert "T005" in t7.help and "T006" in t7.help
    # a kernel with no DMA-wait region, judged at a zero threshold: it waited 0 s
    (t5,) = _check("T005", m, _kernel_index(m, 2, 6 * KERNEL_BOUND), min_wait_share=0.0)
    assert t5.evidence["dma_wait_seconds"] == 0.0 and "waits on DMA for 0%" in t5.message


def test_t003_help_points_at_h008():
    m = _module("rules/H008/exposed_permute_v5p.hlo.txt")
    done = next(i for i in m.entry.instructions if i.opcode == "collective-permute-done")
    (f,) = _check("T003", m, _index(m, _stats(m, done.name, 5e-6, category="collective",
                                                 opcode=done.opcode)), chip=get_chip("v5p"))
    assert "H008" in f.help and "start and done" in f.help


def test_t002_measures_idle_time_per_step_on_a_one_step_trace(matmul):
    idx = _index(matmul, _stats(matmul, "fusion", MATMUL_BOUND), steps=1, step_ns=2e6, busy_ns=1e6)
    (f,) = _check("T002", matmul, idx)
    assert f.cost["measured_seconds"] == pytest.approx(1e-3)


def test_t007_says_when_a_kernel_is_memory_bound(kernel_module):
    from dataclasses import replace

    # the same kernel on a chip with 1 GB/s of HBM: its 48 MiB take 50 ms, its FLOPs 87 us
    slow_hbm = replace(V5E, hbm_bandwidth=1e9)
    bound = 48 * 2**20 / 1e9
    (f,) = _check("T007", kernel_module, _kernel_index(kernel_module, 1, 3 * bound), chip=slow_hbm)
    assert "memory-bound)" in f.message
    assert f.evidence["roofline_seconds"] == pytest.approx(bound)


def test_t001_reads_a_trace_without_kernel_views(matmul):
    from types import SimpleNamespace

    index = _index(matmul, _stats(matmul, "fusion", 3 * MATMUL_BOUND))
    bare = SimpleNamespace(get=index.get, stats=index.stats)  # (a trace with no TPU kernel views)
    (f,) = _check("T001", matmul, bare)
    assert f.instruction == "fusion"


# ----------------------------------------------------------------- thresholds at equality, as the docs word them
# (T001: a ratio "from which" a warning is given, ops "faster than" min_seconds ignored, a
# launch floor an op's bound is "under"; T003: durations "at or above" min_seconds; T005/T007:
# runs "shorter"/"less" than min_seconds left alone). Each option is set to the exact figure the
# rule compares it with, read from the stats as the rule reads them.

def test_t001_at_exactly_its_ratio_and_minimum_time_an_op_is_reported(matmul):
    s = _stats(matmul, "fusion", 1.5 * MATMUL_BOUND)
    mean = s.mean_ns * 1e-9
    bound = max(op_times(CostModel(matmul), V5E, matmul.entry.by_name["fusion"]))
    (f,) = _check("T001", matmul, _index(matmul, s), warning_ratio=mean / bound)
    assert f.severity is Severity.WARNING
    assert len(_check("T001", matmul, _index(matmul, s), min_seconds=mean)) == 1
    assert _check("T001", matmul, _index(matmul, s), min_seconds=mean * (1 + 1e-9)) == []


def test_t001_an_op_at_the_launch_floor_or_at_four_times_it_is_not_launch_bound():
    m = _module("rules/H010/f32_default_h100.hlo.txt")
    h100 = get_chip("h100")
    bound, instr = _under_launch_floor(m, h100)[0]
    s = _stats(m, instr.name, 12e-6, count=3, category="matmul", opcode=instr.opcode)
    mean = s.mean_ns * 1e-9
    (under,) = _check("T001", m, _index(m, s), chip=h100, launch_floor_seconds=bound * (1 + 1e-9))
    assert "launch-bound" in under.message
    (at_floor,) = _check("T001", m, _index(m, s), chip=h100, launch_floor_seconds=bound)
    assert "launch-bound" not in at_floor.message
    (at_four,) = _check("T001", m, _index(m, s), chip=h100, launch_floor_seconds=mean / 4)
    assert "launch-bound" not in at_four.message


def test_t003_a_done_at_exactly_min_seconds_is_reported():
    m = _module("rules/H008/exposed_permute_v5p.hlo.txt")
    done = next(i for i in m.entry.instructions if i.opcode == "collective-permute-done")
    s = _stats(m, done.name, 3e-6, category="collective", opcode=done.opcode)
    assert len(_check("T003", m, _index(m, s), chip=get_chip("v5p"), min_seconds=s.mean_ns * 1e-9)) == 1


def test_t005_and_t007_keep_a_kernel_whose_time_is_exactly_min_seconds(kernel_module):
    m = kernel_module
    assert len(_check("T005", m, _kernel_index(m, 4, 40e-6, {"dma wait": 20e-6}), min_seconds=40e-6)) == 1
    idx = _kernel_index(m, 2, 6 * KERNEL_BOUND)  # (3x its bound per run)
    assert len(_check("T007", m, idx, min_seconds=6 * KERNEL_BOUND / 2)) == 1


def _t006_on(module, index, ops_of):
    """T006 over a context whose decoded kernels' op counts are `ops_of(kernel)`."""
    from dataclasses import replace

    ctx = RuleContext(module, V5E, trace=index)
    ctx.kernels = [replace(k, summary=replace(k.summary, ops=ops_of(k))) for k in ctx.kernels]
    return list(make_rule("T006").check_module(ctx))


def test_t006_counts_a_vector_contraction_as_a_matmul_and_judges_every_kernel(kernel_module, two_kernels):
    """Older Mosaic lowers jnp.dot in a kernel to vector.contract, not tpu.matmul: the kernel
    still multiplies matrices. And a kernel with no matmul is skipped, the next one judged."""
    low = {"runs": 2, "seconds": 300e-6, "counters": {"MXU": 10.0}}
    idx = _kernel_index(kernel_module, 2, 300e-6, counters={"MXU": 10.0})
    (f,) = _t006_on(kernel_module, idx, lambda k: {"vector.contract": 1, "vector.load": 3})
    assert f.evidence["matmul_ops"] == {"vector.contract": 1}
    assert _t006_on(kernel_module, idx, lambda k: {"vector.load": 3, "arith.addf": 1}) == []
    m = two_kernels
    first, second = [i.name for i in m.entry.instructions if i.opcode == "custom-call"]
    (g,) = _t006_on(m, _kernels(m, low, low),
                    lambda k: {"tpu.matmul": 1} if k.instruction.name == second else {"vector.load": 3})
    assert g.instruction == second


def test_t003_reports_a_generic_async_done_and_not_other_dones():
    """The generic async form (async-start/async-done wrapping a collective, as XLA prints
    some async collectives) is communication too; a copy-done is not. HAND-WRITTEN module."""
    from hloscope.parser import parse

    (m,) = parse("""HloModule m
ag {
  q = f32[8] parameter(0)
  ROOT g = f32[32] all-gather(q), replica_groups={{0,1,2,3}}, dimensions={0}
}
ENTRY e {
  p = f32[8] parameter(0)
  s = ((f32[8]), f32[32], u32[]) async-start(p), calls=ag
  ROOT d = f32[32] async-done(s), calls=ag
}
""", "generic_async")
    done = _stats(m, "d", 5e-6, category="collective", opcode="async-done")
    (f,) = _check("T003", m, _index(m, done), chip=get_chip("v5p"))
    assert f.instruction == "d"
    start = _stats(m, "s", 5e-6, category="collective", opcode="async-start")
    assert _check("T003", m, _index(m, start), chip=get_chip("v5p")) == []


def test_t004_tells_a_slice_and_the_loops_computations():
    """HAND-WRITTEN: a dynamic slice bare and fused, a fused copy, a call whose computation
    slices (a call is no fusion: not a slice of its own), inside and outside a 4-trip loop."""
    from conftest import counted_loop

    from hloscope.parser import parse
    from hloscope.rules.t004_hot_copy import _slices, loop_computations

    (m,) = parse("HloModule m, is_scheduled=true\n\n%ds (a: f32[8,128]) -> f32[1,128] {\n"
                 "  %a = f32[8,128]{1,0} parameter(0)\n  %z = s32[] constant(0)\n"
                 "  ROOT %s = f32[1,128]{1,0} dynamic-slice(%a, %z, %z), dynamic_slice_sizes={1,128}\n}\n\n"
                 "%cp (a: f32[8,128]) -> f32[8,128] {\n  %a = f32[8,128]{1,0} parameter(0)\n"
                 "  ROOT %c = f32[8,128]{0,1} copy(%a)\n}\n\n"
                 + counted_loop("f32[8,128]{1,0}", "%y = f32[8,128]{0,1} fusion(%x), kind=kLoop, calls=%cp", 4)
                 + """
ENTRY %e (p: f32[8,128]) -> (s32[], f32[8,128]) {
  %p = f32[8,128]{1,0} parameter(0)
  %z = s32[] constant(0)
  %bare = f32[1,128]{1,0} dynamic-slice(%p, %z, %z), dynamic_slice_sizes={1,128}
  %fused = f32[1,128]{1,0} fusion(%p), kind=kLoop, calls=%ds
  %called = f32[1,128]{1,0} call(%p), to_apply=%ds
  %t = (s32[], f32[8,128]{1,0}) tuple(%z, %p)
  ROOT %w = (s32[], f32[8,128]{1,0}) while(%t), condition=%cond, body=%body
}
""")
    entry = m.entry.by_name
    assert [_slices(entry[n], m) for n in ("bare", "fused", "called", "p")] == [True, True, False, False]
    assert not _slices(m.by_name["body"].by_name["y"], m)  # a fused copy
    assert loop_computations(m) == {"body", "cond", "cp"}
