"""Step time with collectives (#19): every op at its roofline time plus the ICI time that
compute scheduled between an async start and its done does not hide; MFU."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, manifest
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.cost.chips import get_chip
from hloscope.cost.roofline import roofline
from hloscope.parser import load, parse
from hloscope.sharding.step import estimate

V5P = get_chip("v5p")
GATHERED = 4096 * 4096 * 2  # each layer's bf16[4096,4096] weight, gathered whole


def _step(name: str):
    (m,) = load(FIXTURES / "tpu" / f"{name}.hlo.txt")
    return estimate(m, V5P, roofline(m, V5P))


def test_fsdp_default_flags_four_sync_gathers_all_exposed():
    s = _step("fsdp_default_v5p")
    assert [c.opcode for c in s.collectives] == ["all-gather"] * 4
    assert not any(c.is_async for c in s.collectives)
    # hand-derived: a ring of 8 moves 7/8 of the gathered array, over 2 one-way links
    one = 7 / 8 * GATHERED / (2 * V5P.ici_bandwidth)
    assert s.exposed_seconds == pytest.approx(4 * one) == pytest.approx(s.collective_seconds)
    assert s.hidden_seconds == 0
    assert s.step_seconds == pytest.approx(s.ops_seconds + 4 * one + s.copies_exposed_seconds)


def test_fsdp_async_collective_fusion_overlaps_three_of_four():
    plain, fused = _step("fsdp_default_v5p"), _step("fsdp_async_fusion_v5p")
    assert len(fused.collectives) == 4
    overlapped = [c for c in fused.collectives if c.hidden_seconds > 0]
    assert len(overlapped) == 3 and all(c.is_async for c in overlapped)
    for c in overlapped:  # hidden by the layer's matmul fusion scheduled inside the chain
        assert c.hidden_seconds == pytest.approx(min(c.seconds, c.overlap_seconds))
        assert any(n.startswith("fusion") for n in c.overlapped_by)
    assert fused.exposed_seconds < plain.exposed_seconds
    assert fused.collective_seconds == pytest.approx(plain.collective_seconds)
    assert fused.step_seconds < plain.step_seconds


def test_async_chains_followed_by_data_flow_not_channel_id():
    """A real 6-layer FSDP compile under MaxText's flags, every channel_id set to 1 (stated
    in the file): each of the 6 layers gathers its weight once (6 logical all-gathers, moving
    7/8 of bf16[4096,4096] each), the first synchronous, the other 5 each its own
    start -> continuation -> done chain with the layer's matmul in it. Grouping the clones by
    channel id gave 2 gathers, 1 overlapped."""
    from hloscope.sharding import analyze

    s = _step("fsdp_async_fusion_one_channel_v5p")
    assert [c.opcode for c in s.collectives] == ["all-gather"] * 6
    assert all(c.moved_bytes == 7 / 8 * GATHERED for c in s.collectives)
    (m,) = load(FIXTURES / "tpu" / "fsdp_async_fusion_one_channel_v5p.hlo.txt")
    chains = [c for c in analyze(m, V5P)[1] if c.is_async]
    assert len(chains) == 5 and len({c.done for c in chains}) == 5
    assert all(len(c.continuations) == 1 and len(c.clones) == 3 for c in chains)
    assert len([c for c in s.collectives if c.hidden_seconds > 0]) == 5
    assert s.collective_seconds == pytest.approx(6 * 7 / 8 * GATHERED / (2 * V5P.ici_bandwidth))


def test_mfu_is_flops_over_step_times_peak():
    s = _step("fsdp_default_v5p")
    xla_flops = manifest()["fsdp_default_v5p"]["cost_analysis"]["flops"]
    assert s.flops == pytest.approx(xla_flops, rel=0.01)  # the numerator is XLA's count
    assert s.mfu == pytest.approx(s.flops / (s.step_seconds * V5P.peak_bf16_flops))
    assert 0 < s.mfu < 1


# Hand-written minimal module (labelled as such): one async all-gather over 4 devices with
# a 2048^3 bf16 dot scheduled between its start and its done, then the same without overlap.
_OVERLAP = """HloModule overlap, is_scheduled=true

ENTRY main {
  p0 = bf16[256,2048]{1,0} parameter(0)
  a = bf16[2048,2048]{1,0} parameter(1)
  b = bf16[2048,2048]{1,0} parameter(2)
  ags = (bf16[256,2048]{1,0}, bf16[1024,2048]{1,0}) all-gather-start(p0), replica_groups={{0,1,2,3}}, dimensions={0}
  d = bf16[2048,2048]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  agd = bf16[1024,2048]{1,0} all-gather-done(ags)
  ROOT t = (bf16[2048,2048]{1,0}, bf16[1024,2048]{1,0}) tuple(d, agd)
}
"""


def test_overlap_hides_the_collective_up_to_the_compute_between():
    (m,) = parse(_OVERLAP)
    s = estimate(m, V5P, roofline(m, V5P))
    (c,) = s.collectives
    gather = 3 / 4 * (1024 * 2048 * 2) / (2 * V5P.ici_bandwidth)  # 4 MiB gathered by 4
    dot = max(2 * 2048 ** 3 / V5P.peak_bf16_flops, 3 * 2048 * 2048 * 2 / V5P.hbm_bandwidth)
    assert c.seconds == pytest.approx(gather)
    assert c.overlapped_by == ["d"] and c.overlap_seconds == pytest.approx(dot)
    assert c.hidden_seconds == pytest.approx(min(gather, dot))
    assert c.exposed_seconds == pytest.approx(max(0.0, gather - dot))
    # the same ops with the dot after the done: nothing hides the gather
    (late,) = parse(_OVERLAP.replace("  d = bf16[2048,2048]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", "")
                 .replace("  ROOT", "  d = bf16[2048,2048]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT"))
    (c2,) = estimate(late, V5P, roofline(late, V5P)).collectives
    assert c2.overlapped_by == [] and c2.exposed_seconds == pytest.approx(gather)


def test_roofline_cli_reports_the_step():
    out = CliRunner().invoke(app, ["roofline", str(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"),
                                   "--chip", "v5p", "--top", "3"]).output
    assert "collectives: 4 logical (4 all-gather)" in out and "3 overlapped" in out
    assert "step (estimate):" in out and "MFU" in out
    payload = json.loads(CliRunner().invoke(app, ["roofline", str(FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt"),
                                                  "--chip", "v5p", "-f", "json"]).output)
    step = payload["modules"][0]["step"]
    assert step["step_seconds"] == pytest.approx(step["ops_seconds"] + step["exposed_seconds"]
                                                 + step["copies_exposed_seconds"])
    assert len(step["collectives"]) == 4


def test_api_step_time():
    import hloscope

    s = hloscope.load(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt").step_time("v5p")
    assert sum(1 for c in s.collectives if c.hidden_seconds) == 3


# ---------------------------------------------------------------- chips and platforms
def test_cpu_module_is_costed_on_the_cpu_entry_and_says_so():
    out = CliRunner().invoke(app, ["roofline", str(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")]).output
    assert "on generic CPU" in out and "a CPU module: the generic CPU entry" in out
    asked = CliRunner().invoke(app, ["roofline", str(FIXTURES / "cpu" / "mlp_cpu.hlo.txt"), "--chip", "v5e"]).output
    assert "on TPU v5e" in asked and "a CPU module costed on TPU v5e as asked" in asked
    tpu = CliRunner().invoke(app, ["roofline", str(FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt")]).output
    # nothing states the generation; its megacore fusions point at v5p, assumed and said so
    assert "on TPU v5p" in tpu and "note: chip assumed: TPU v5p" in tpu
    v5e = CliRunner().invoke(app, ["roofline", str(FIXTURES / "tpu" / "mlp_v5e.hlo.txt")]).output
    assert "on TPU v5e" in v5e and "note: chip assumed: TPU v5e" in v5e
    mem = CliRunner().invoke(app, ["memory", str(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")]).output
    assert "a CPU module" in mem and "headroom" not in mem  # no HBM verdict for host RAM


def test_platform_of_real_modules():
    from hloscope.cost.chips import platform_of

    assert platform_of(load(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")[0]) == "cpu"
    assert platform_of(load(FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt")[0]) == "tpu"
    assert platform_of(load(FIXTURES / "conformance" / "scan_rnn.before_optimizations.hlo.txt")[0]) is None


def test_measured_time_beating_the_bound_warns():
    """A real CPU trace against a chip whose numbers are wrong (10x too slow): every op
    'beats' its bound, which can only mean the bound is wrong; the real v5p bound is not beaten."""
    from dataclasses import replace

    from hloscope.trace import join, load_profile
    from hloscope.trace.report import profile_report

    base = FIXTURES / "rules" / "T001" / "matmul_cpu"
    prof = load_profile(base.with_suffix(".trace.json.gz"))
    modules = load(base.with_suffix(".hlo.txt"))
    cpu = get_chip("cpu")
    index = join(prof, modules)
    honest = profile_report(prof, index, modules, get_chip("v5p"))
    assert not [w for w in honest["warnings"] if "faster than their static bound" in w]
    slow = replace(cpu, peak_bf16_flops=cpu.peak_bf16_flops / 1000, peak_f32_flops=cpu.peak_f32_flops / 1000,
                   hbm_bandwidth=cpu.hbm_bandwidth / 1000)
    wrong = profile_report(prof, index, modules, slow)
    (warning,) = [w for w in wrong["warnings"] if "faster than their static bound" in w]
    fast = [r for r in wrong["instructions"] if r["mean_seconds"] < 0.9 * r["roofline_seconds"]]
    assert warning.startswith(f"{len(fast)} op(s) ran more than 10% faster") and fast


def test_profile_bound_is_the_roofline_bound():
    """The profile's 'roofline' column is the roofline command's bound of the same op."""
    from hloscope.trace import join, load_profile
    from hloscope.trace.report import profile_report

    base = FIXTURES / "rules" / "T001" / "matmul_cpu"
    prof, modules = load_profile(base.with_suffix(".trace.json.gz")), load(base.with_suffix(".hlo.txt"))
    report = profile_report(prof, join(prof, modules), modules, V5P)
    bounds = {r.instruction: r.t_bound for r in roofline(modules[0], V5P).rows}
    assert report["instructions"]
    for row in report["instructions"]:
        assert row["roofline_seconds"] == pytest.approx(bounds[row["instruction"]])


def test_roofline_top_limits_the_collective_rows_too():
    """The 6-gather FSDP compile: --top 2 lists the two most exposed collectives and says how
    many more there are; --top 0 lists all six."""
    path = str(FIXTURES / "tpu" / "fsdp_async_fusion_one_channel_v5p.hlo.txt")
    some = CliRunner().invoke(app, ["roofline", path, "--chip", "v5p", "--top", "2"]).stdout
    rows = [line for line in some.splitlines() if line.startswith("    ") and " all-gather " in line]
    assert len(rows) == 2 and "and 4 more, less exposed (--top 0 lists all)" in some
    assert "on ICI" in some
    every = CliRunner().invoke(app, ["roofline", path, "--chip", "v5p", "--top", "0"]).stdout
    assert len([line for line in every.splitlines() if line.startswith("    ") and " all-gather " in line]) == 6


def test_async_copies_overlap_the_compute_scheduled_inside_them():
    """A donated MLP train step on v5e: XLA keeps the updated weights in on-chip memory and
    writes them back with copy-start/copy-done pairs. XLA's own per-op estimates of the two
    compiles (donated or not) agree within 0.3% (470.66 vs 469.24 us of estimated_cycles at
    1.5 GHz); counted serially the copies made the donated step 13% slower."""
    from hloscope.cost.resolve import resolve_chip
    from hloscope.cost.roofline import estimated_cycles, roofline
    from hloscope.sharding.step import estimate

    steps, xla = {}, {}
    for name in ("mlp_train_v5e", "mlp_train_donated_v5e"):
        (m,) = load(FIXTURES / "zoo" / f"{name}.hlo.txt")
        chip = resolve_chip(m, "v5e").chip
        report = roofline(m, chip)
        steps[name] = estimate(m, chip, report)
        xla[name] = sum(estimated_cycles(i) or 0 for i in m.entry.instructions) / chip.clock_hz
    plain, donated = steps["mlp_train_v5e"], steps["mlp_train_donated_v5e"]
    assert xla["mlp_train_donated_v5e"] == pytest.approx(xla["mlp_train_v5e"], rel=0.01)
    assert donated.step_seconds == pytest.approx(plain.step_seconds, rel=0.05)
    # hand-derived: the 8 MiB write-back of the first updated weight (copy-start.3) is under
    # fusion.25's matmul; only the last write-back (copy-start.2, nothing scheduled inside
    # it: 8 MiB / 819 GB/s) and the small input prefetches stay exposed
    assert donated.copies_seconds > donated.copies_exposed_seconds > 0
    assert donated.copies_exposed_seconds >= 8 * 2**20 / get_chip("tpu-v5e").hbm_bandwidth
    assert donated.step_seconds == pytest.approx(donated.ops_seconds + donated.exposed_seconds
                                                 + donated.copies_exposed_seconds)
