"""Real H100 compiles and captures (fixtures/h100*, made by fixtures/h100_capture.py on an
NVIDIA H100 80GB HBM3 with jax 0.11.2): hloscope's figures against XLA's own and against the
measured kernels.

Oracles: XLA's `cost_analysis()` and `memory_analysis()` of each executable; the same
programs captured with command buffers off (XLA then names each kernel's op itself); the
measured kernel times (a roofline is a lower bound: no op may beat it, and a large gemm runs
near it); the kernels cuBLAS chose (an `sm80_xmma_gemm_f32f32_f32f32` kernel for HIGHEST, a
`tf32` one for DEFAULT).
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, xprof_hlo_stats

from hloscope.cost.chips import get_chip
from hloscope.cost.library import gemm_precision, is_library_call
from hloscope.cost.ops import CostModel
from hloscope.cost.roofline import roofline
from hloscope.parser import load
from hloscope.trace import join, load_profile
from hloscope.trace.join import executed

H100 = FIXTURES / "h100"
OFF = FIXTURES / "h100_no_command_buffers"
DTYPES = FIXTURES / "h100_dtypes"  # fp8, int8, f16 gemms, f32 by the X3 and TF32 algorithms, attention's backward
MANIFEST = json.loads((H100 / "manifest.json").read_text())["programs"]
SHARED = ("jit_mlp_train", "jit_attention_xla", "jit_scan_layers")  # names no other program has


def _module(name: str):
    (m,) = load(H100 / f"{name}.hlo.txt")
    return m


def _dumps(folder, names=None):
    return [m for p in sorted((folder / "dump").glob("*after_optimizations.txt")) for m in load(p)
            if names is None or m.name in names]


def test_the_captures_are_of_an_h100():
    for folder in (H100, OFF, DTYPES):
        device = json.loads((folder / "manifest.json").read_text())["device"]
        assert device["device_kind"] == "NVIDIA H100 80GB HBM3" and device["backend"] == "gpu"


def test_xla_costs_no_library_call():
    for name in ("gemm_bf16", "gemm_f32_highest", "attention_cudnn_bf16"):
        assert MANIFEST[name]["cost_analysis"]["flops"] == -1
        m = _module(name)
        (call,) = [i for i in m.instructions() if i.opcode == "custom-call"]
        assert CostModel(m).cost(call).flops > 0


ADVICE = FIXTURES / "h100_advice"  # pairs a finding flags and its advice asks for (test_h100_advice.py)
# (and the same programs compiled on an H200: fixtures/h200*, tests/test_h200_capture.py)
ALL = [(folder, n, e) for folder in (H100, DTYPES, ADVICE, FIXTURES / "h100_unroll", FIXTURES / "h200",
                                     FIXTURES / "h200_no_command_buffers", FIXTURES / "h200_dtypes")
       for n, e in json.loads((folder / "manifest.json").read_text())["programs"].items()]


@pytest.mark.parametrize("folder,name,entry", ALL, ids=[f"{f.name}/{n}" for f, n, _ in ALL])
def test_memory_equals_xla(folder, name, entry):
    """arguments + outputs - aliased + temporaries: XLA's, less only its pointer tables of
    tuple results (16 bytes at 256-byte offsets in its temp allocation), on all 23 programs
    and the 27 compiled on the H200.
    The training step and the X3 gemm need XLA's rule that an output's allocation takes a
    value written over another where that one dies, through a get-tuple-element too
    (%loop_add_fusion over %custom-call.2's result: allocation 0 of its buffer assignment);
    without it they were 64 and 32 MiB over."""
    from hloscope.cost.liveness import memory

    xla = entry["memory_analysis"]
    want = (xla["argument_size_in_bytes"] + xla["output_size_in_bytes"] - xla["alias_size_in_bytes"]
            + xla["temp_size_in_bytes"])
    (m,) = load(folder / f"{name}.hlo.txt")
    tuples = 256 * sum(1 for i in m.instructions() if i.shape.is_tuple and i.opcode != "parameter")
    assert want - tuples <= memory(m).hbm_bytes <= want


@pytest.mark.parametrize("folder,name,entry", [a for a in ALL if a[2]["cost_analysis"].get("flops", -1) > 0],
                         ids=lambda a: a if isinstance(a, str) else "")
def test_flops_equal_xla_outside_library_calls(folder, name, entry):
    """XLA's GPU cost_analysis leaves library calls out (a program of only a cuBLAS or cuDNN
    call reports -1) and counts a loop body once; every other op's FLOPs add up to XLA's
    figure: the X3 algorithm's splitting fusions count a bitcast-convert as XLA does."""
    (m,) = load(folder / f"{name}.hlo.txt")
    model = CostModel(m, trip_counts=False)
    flops = sum(model.cost(i).flops for i in executed(m) if not (i.opcode == "custom-call" and is_library_call(i)))
    assert flops == pytest.approx(entry["cost_analysis"]["flops"], abs=2)  # (the scan's loop counter and compare)


def test_gemm_precision_read_from_the_cublas_config():
    assert gemm_precision(_call("gemm_f32_highest")) == ("highest", None)
    assert gemm_precision(_call("gemm_f32_default")) == ("default", None)


def _call(name):
    return next(i for i in _module(name).instructions() if i.opcode == "custom-call")


@pytest.fixture(scope="module")
def captured():
    out = {}
    for folder in (H100, OFF, DTYPES):
        modules = _dumps(folder)
        out[folder.name] = (load_profile(folder / "capture.xplane.pb"), modules)
    return out


def test_cublas_ran_f32_kernels_at_highest_and_tf32_at_default(captured):
    """The precision hloscope reads from each gemm's config is the one cuBLAS ran: the
    program whose gemm states HIGHEST ran an f32 kernel, the DEFAULT one a TF32 kernel."""
    from hloscope.dumpdir import program_id

    profile, modules = captured["h100_no_command_buffers"]
    ran = {}
    for m in modules:
        calls = [i for i in m.instructions() if i.opcode == "custom-call" and is_library_call(i)
                 and i.operand_shapes and "f32" in i.shape_text and "bf16" not in i.shape_text]
        if len(calls) == 1:
            pid = program_id(m.path, m.name)
            ran[gemm_precision(calls[0])[0]] = {ev.kernel for ev in profile.events if ev.program_id == pid}
    assert any(k.startswith("sm80_xmma_gemm_f32f32_f32f32") for k in ran["highest"])
    assert any("tf32" in k for k in ran["default"]) and not any("tf32" in k for k in ran["highest"])


def test_command_buffer_kernels_go_to_the_ops_xla_names_without_them(captured):
    """With command buffers on, the capture names `command_buffer_N` for 195 kernels; given
    back by kernel name and schedule order, each op has the runs and kernels of the capture
    taken with them off, and its time within 3% (two runs of the program)."""
    on_profile, on_modules = captured["h100"]
    off_profile, off_modules = captured["h100_no_command_buffers"]
    assert sum(ev.hlo_op.startswith("command_buffer") for ev in on_profile.events) == 195
    on = join(on_profile, [m for m in on_modules if m.name in SHARED])
    off = join(off_profile, [m for m in off_modules if m.name in SHARED])
    assert any("command buffers" in w for w in on.warnings)
    assert not any("command buffers" in w for w in off.warnings)
    assert set(on.stats) == set(off.stats) and len(on.stats) == 22
    for key, s in on.stats.items():
        o = off.stats[key]
        assert s.count == o.count, key
        assert s.total_ns == pytest.approx(o.total_ns, rel=0.03, abs=10e3), key
    assert not [u for u in on.unmatched if u["module"] in SHARED]


def _measured(captured, folder):
    """(module, op) -> (mean seconds per run, roofline bound seconds) over every program."""
    profile, modules = captured[folder]
    index = join(profile, modules)
    chip = get_chip("h100")
    out = {}
    for m in modules:
        bounds = {r.instruction: r.t_bound for r in roofline(m, chip).rows}
        for i in m.instructions():
            s = index.get(i, m)
            if s is not None and bounds.get(i.name):
                out[(index.label(m), i.name)] = (s.mean_ns * 1e-9, bounds[i.name])
    return out


@pytest.mark.parametrize("folder", ["h100", "h100_no_command_buffers", "h100_dtypes"])
def test_no_op_beats_its_roofline(captured, folder):
    """fp8 and int8 gemms priced at bf16's peak (1,112 us) would beat it (706 and 690 us)."""
    rows = _measured(captured, folder)
    assert len(rows) >= (14 if folder == "h100_dtypes" else 25)
    for key, (measured, bound) in rows.items():
        assert measured >= 0.97 * bound, (key, measured, bound)


@pytest.mark.parametrize("folder", ["h100", "h100_no_command_buffers", "h100_dtypes"])
def test_large_library_calls_run_near_their_roofline(captured, folder):
    """bf16, TF32 and f32 gemms and cuDNN attention run at 50-100% of the bound the chip's
    peaks give: pricing the HIGHEST gemm at TF32 (278 us for 2.66 ms measured) fails here."""
    rows = _measured(captured, folder)
    profile, modules = captured[folder]
    big = [(k, v) for k, v in rows.items() if v[1] > 250e-6 and _is_library(modules, k)]
    assert len(big) >= 7
    for key, (measured, bound) in big:
        assert 0.5 <= bound / measured <= 1.0, (key, measured, bound)


def _is_library(modules, key):
    label, name = key
    for m in modules:
        if label.startswith(m.name):
            i = next((i for i in m.instructions() if i.name == name), None)
            if i is not None and i.opcode == "custom-call":
                return is_library_call(i)
    return False


def test_profile_command_links_every_program():
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    args = ["profile", str(H100 / "capture.xplane.pb"), "--no-cache", "--top", "0", "--format", "json"]
    for p in sorted((H100 / "dump").glob("*after_optimizations.txt")):
        args += ["--hlo", str(p)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{"):])
    assert doc["unmatched_events"] == [] and doc["chip"] == "h100"
    assert any("command buffers" in w for w in doc["warnings"])
    linked = {(r["module"], r["instruction"]) for r in doc["instructions"]}
    assert ("jit_mlp_train", "custom-call.2") in linked and len(linked) == 30


def test_h011_advice_is_faster_on_the_h100():
    """H011 flags XLA's attention (2 GiB of scores in HBM) and advises cuDNN's flash
    attention; the advised program, run on the same H100, is over 3x faster and H011 is
    silent on it."""
    import hloscope

    flagged = {f.code for f in hloscope.load(H100 / "attention_xla_bf16.hlo.txt").lint().findings}
    advised = {f.code for f in hloscope.load(H100 / "attention_cudnn_bf16.hlo.txt").lint().findings}
    assert "H011" in flagged and "H011" not in advised
    before = MANIFEST["attention_xla_bf16"]["wall_seconds_median"]
    after = MANIFEST["attention_cudnn_bf16"]["wall_seconds_median"]
    assert before / after > 3


def test_launches_counted_though_the_host_calls_name_no_op(captured):
    """jax 0.11's host launch calls carry a correlation id but no hlo_op: each is counted under
    the program of the device work it launched. A program in one CUDA graph launches once per
    run (5 runs); the bf16 gemm launches a memset and a kernel per run."""
    from hloscope.dumpdir import program_id

    profile, modules = captured["h100"]
    pid = {m.name: program_id(m.path, m.name) for m in modules if m.name in SHARED}
    assert profile.launches[("jit_mlp_train", pid["jit_mlp_train"])][0] == 5
    assert profile.launches[("jit_attention_xla", pid["jit_attention_xla"])][0] == 5
    gemm = next(m for m in modules if "custom-call.1" in m.entry.by_name and "bf16[8192,8192]" in m.entry.root.shape_text)
    assert profile.launches[("jit__lambda", program_id(gemm.path, gemm.name))][0] == 10


def test_stats_names_no_library_call_uncosted():
    """The cuBLAS calls are costed (test_xla_costs_no_library_call): stats does not list
    them among the ops the cost model cannot cost."""
    from hloscope.stats.counts import module_stats

    stats = module_stats(_module("mlp_train_bf16"))
    assert stats["custom_call_targets"] == {"__cublas$lt$matmul": 4}
    assert stats["unknown_cost"] == {}


def test_h010_flags_the_cublas_gemm_at_highest_and_its_advice_is_faster():
    """XLA GPU makes an f32 dot a cuBLAS call whose config states HIGHEST: H010 flags it, is
    silent at DEFAULT, and the advised program (DEFAULT) measured 7.7x faster on the H100,
    more than the rule's own estimate of the saving."""
    import hloscope

    (flagged,) = [f for f in hloscope.load(H100 / "gemm_f32_highest.hlo.txt").lint().findings if f.code == "H010"]
    assert flagged.instruction == "custom-call.1"
    assert not [f for f in hloscope.load(H100 / "gemm_f32_default.hlo.txt").lint().findings if f.code == "H010"]
    profile, modules = load_profile(H100 / "capture.xplane.pb"), _dumps(H100)
    index = join(profile, modules)
    times = {}
    for m in modules:
        call = m.entry.by_name.get("custom-call.1")
        if call is not None and call.shape_text.startswith("(f32[4096,4096]"):
            times[gemm_precision(call)[0]] = index.get(call, m).mean_ns * 1e-9
    saved = times["highest"] - times["default"]
    assert times["highest"] / times["default"] > 7
    assert saved >= flagged.cost["est_seconds"]


def test_reused_kernels_inside_a_command_buffer(captured):
    """f32 at BF16_BF16_F32_X3: XLA splits each operand in six fusions and runs three bf16
    cuBLAS gemms, all in one command buffer. The six fusions run two kernels, named after the
    first two (`fusion_11`, `fusion_14`). By the schedule (worked out by hand), each of the ten
    ops runs once per call (5 calls), each gemm as a memset and a kernel."""
    profile, modules = captured["h100_dtypes"]
    (m,) = [m for m in modules if "cublas-lt-matmul.5" in m.entry.by_name]
    index = join(profile, [m])
    ops = ["fusion.11", "fusion.14", "custom-call.3", "fusion.10", "fusion.12", "cublas-lt-matmul.4",
           "fusion.1", "fusion.13", "fusion.15", "cublas-lt-matmul.5"]
    assert {name for _, name in index.stats} == set(ops)
    for name in ops:
        s = index.get(m.entry.by_name[name], m)
        assert s.executions == 5
        assert s.count == (10 if "matmul" in name or name == "custom-call.3" else 5)
    pid = int(m.path.split("module_")[1].split(".")[0])
    fusion_kernels = {ev.kernel for ev in profile.events if ev.program_id == pid and ev.kernel.startswith("fusion")}
    assert fusion_kernels == {"fusion_11", "fusion_14", "fusion_1"}


def _xprof(folder) -> dict[tuple[int, str], tuple[int, float]]:
    """XProf's own hlo_stats of the capture (fixtures/gpu_captures.py): (program id, op) ->
    (occurrences, total us)."""
    rows = xprof_hlo_stats(folder / "xprof_hlo_stats.json")
    return {key: (int(v["occurrences"]), float(v["total_time"])) for key, v in rows.items()}


def _ours(captured, folder) -> dict[tuple[int, str], tuple[int, float]]:
    from hloscope.dumpdir import program_id

    profile, modules = captured[folder]
    index = join(profile, modules)
    pid = {index.label(m): program_id(m.path, m.name) for m in modules}
    return {(pid[label], op): (s.count, s.total_ns / 1e3) for (label, op), s in index.stats.items()}


@pytest.mark.parametrize("folder", ["h100_no_command_buffers", "h100_dtypes"])
def test_per_op_events_and_time_equal_xprof(captured, folder):
    """Where XProf sees the ops (command buffers off; the dtypes capture's ops outside its
    buffers), hloscope's events and total time per op are XProf's."""
    xprof, ours = _xprof(FIXTURES / folder), _ours(captured, folder)
    assert len(xprof) >= 10
    for key, (count, total_us) in xprof.items():
        assert ours[key][0] == count, key
        assert ours[key][1] == pytest.approx(total_us, rel=1e-6), key
    if folder == "h100_no_command_buffers":
        assert set(ours) == set(xprof)


def test_xprof_drops_command_buffer_kernels_hloscope_gives_them_back(captured):
    """With command buffers on, XProf's hlo_stats lists 12 ops: the 195 kernels inside the
    buffers are in none of its rows. hloscope has XProf's 12 rows unchanged and 18 more ops
    (30, as the capture without buffers has)."""
    xprof, ours = _xprof(H100), _ours(captured, "h100")
    assert len(xprof) == 12 and len(ours) == 30
    for key, (count, total_us) in xprof.items():
        assert ours[key] == (count, pytest.approx(total_us, rel=1e-6)), key
    off = _xprof(OFF)
    assert {op for _, op in ours} == {op for _, op in off}
