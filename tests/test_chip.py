"""One chip resolution for every command and the API (hloscope.cost.resolve): the chip asked
for, the one `hloscope compile` recorded in the dump folder, what the module shows, else an
assumed chip that outputs name as assumed and no verdict rests on."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import CORPUS, FIXTURES, fixture_files
from typer.testing import CliRunner

import hloscope
from hloscope.cli.app import app
from hloscope.cost.resolve import RECORD, capability, chip_for, resolve_chip
from hloscope.lint import LintOptions, lint_files
from hloscope.parser import load
from hloscope.rules.base import Severity

runner = CliRunner()
BIG_V5P = FIXTURES / "memory" / "big_40gib_v5p.hlo.txt"  # 40 GiB peak: fits v5p's 95 GiB, not v5e's 16


def _h012(path, chip=None):
    return [f for f in lint_files([path], LintOptions(select=["H012"], chip=chip)).findings]


def test_a_v5p_program_without_chip_gets_no_capacity_verdict():
    """Its fusions carry megacore_config (split over a chip's two TensorCores: v5p's, as
    libtpu prints them): assumed v5p, said so, and its 40 GiB fit. A v5e program 95% full,
    whose ops carry none, is judged against an assumed v5e: informational only."""
    assert _h012(BIG_V5P) == [] and _h012(BIG_V5P, chip="v5p") == []
    report = lint_files([BIG_V5P], LintOptions(select=["H012"]))
    assert any(n.startswith("chip assumed: TPU v5p") and "megacore_config" in n for n in report.notes)
    (found,) = _h012(FIXTURES / "rules" / "H012" / "near_full_v5e.hlo.txt")
    assert found.severity == Severity.INFO and "assumed TPU v5e" in found.message


def test_megacore_ops_mark_v5p_compiles_and_no_other():
    """Read off the real compiles in fixtures/ (manifest topologies): nearly every v5p compile
    has a megacore_config; no v5e, v6e or v4 one has."""
    from hloscope.cost.resolve import megacore

    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    seen: dict[str, list[bool]] = {}
    for entry in manifest.values():
        if entry["platform"] == "tpu" and entry.get("stage", "compiled") == "compiled":
            for module in load(FIXTURES / entry["file"]):
                seen.setdefault(entry["topology"].split(":")[0], []).append(megacore(module))
    assert sum(seen["v5p"]) >= 0.9 * len(seen["v5p"])
    assert not any(any(v) for chip, v in seen.items() if chip != "v5p") and len(seen) >= 4


def test_the_chip_recorded_in_the_dump_folder_is_used(tmp_path):
    """What `hloscope compile` writes beside its dump (its topology's chip) is read back by
    lint, roofline, memory, sharding and the API."""
    folder = tmp_path / "dump"
    folder.mkdir()
    shutil.copy(BIG_V5P, folder / "module_0000.jit__lambda.cl_1.after_optimizations.txt")
    (folder / RECORD).write_text(json.dumps({"topology": "v5p:2x2x1", "chip": "tpu-v5p"}))
    path = folder / "module_0000.jit__lambda.cl_1.after_optimizations.txt"
    assert _h012(path) == []
    for command in ("roofline", "memory", "sharding"):
        out = json.loads(runner.invoke(app, [command, str(path), "--format", "json"]).stdout)
        (rec,) = out["modules"]
        assert (rec["chip"]["key"] if "key" in rec["chip"] else rec["chip"]["chip"]) == "tpu-v5p", command
    (m,) = load(path)
    choice = hloscope.Program(m).chip()
    assert choice.chip.key == "tpu-v5p" and not choice.assumed
    assert "hloscope compile" in choice.source


def test_api_and_cli_pick_the_same_chip_for_every_fixture():
    """The API (Program.chip), lint's engine and the commands (chip_for) agree on every
    fixture; the roofline command's JSON names the same chip for the small ones."""
    from hloscope.rules.engine import run

    for path in fixture_files():
        for m in load(path):
            api = hloscope.Program(m).chip()
            cli, _ = chip_for(m, None)
            assert api.chip == cli, path
            engine = run([m], [])  # (no rules: only the chip's note)
            assert (api.note in engine.notes) if api.note and api.assumed else True, path
        if path.stat().st_size < 200_000:
            out = json.loads(runner.invoke(app, ["roofline", str(path), "--format", "json"]).stdout)
            assert [r["chip"]["key"] for r in out["modules"]] == [api.chip.key] * len(out["modules"]), path


def test_a_cpu_module_is_costed_on_the_cpu_entry_by_api_and_cli():
    (m,) = load(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")
    program = hloscope.Program(m)
    assert program.chip().chip.key == "cpu" and not program.chip().assumed
    assert program.step_time().chip == "cpu"
    assert program.roofline().chip.key == "cpu"


@pytest.mark.parametrize(("name", "expected"), [
    ("module_0022.func_shard_parallel.10.sm_7.0_gpu_after_optimizations.txt", (7, 0)),
    ("module_0001.jit_step.sm_9.0_gpu_after_optimizations.txt", (9, 0)),
    ("module_0001.jit_step.sm_80_gpu_after_optimizations.txt", (8, 0)),
    # two-digit majors, dotted: B200's 10.0 was read as "10", i.e. 1.0 (found by mutation tests)
    ("module_0001.jit_step.sm_10.0_gpu_after_optimizations.txt", (10, 0)),
    ("module_0001.jit_step.sm_100_gpu_after_optimizations.txt", (10, 0)),
    # the arch-specific suffix of Hopper and later: a real H100 dump (fixtures/h100/dump)
    ("module_0000.jit__lambda.sm_9.0a_gpu_after_optimizations.txt", (9, 0)),
    ("module_0001.jit_step.sm_100a_gpu_after_optimizations.txt", (10, 0)),
    ("module_0000.jit_model.cl_933746096.after_optimizations.txt", None),
    # three digits undotted: sm_120 (consumer Blackwell) is 12.0, its minor the last digit
    ("module_0001.jit_step.sm_120_gpu_after_optimizations.txt", (12, 0)),
    ("module_0001.jit_step.sm_121_gpu_after_optimizations.txt", (12, 1)),
])
def test_compute_capability_from_dump_names(name, expected):
    assert capability(name) == expected


def test_a_modules_own_capability_comes_before_its_folders(tmp_path):
    """A folder of two processes' dumps (an A100's module_0001, an H100's module_0002): a
    module's before-optimizations file, which names no GPU, takes its own module's."""
    for name in ("module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt",
                 "module_0002.jit_g.sm_9.0_gpu_after_optimizations.txt"):
        (tmp_path / name).write_text("")
    assert capability(tmp_path / "module_0001.jit_f.before_optimizations.txt") == (8, 0)
    assert capability(tmp_path / "module_0002.jit_g.before_optimizations.txt") == (9, 0)
    assert capability(tmp_path / "module_0003.jit_h.before_optimizations.txt") is None  # (two: no guess)


def test_the_compile_record_of_a_folder_and_of_a_file_in_it(tmp_path):
    from hloscope.cost.resolve import compile_record

    (tmp_path / RECORD).write_text('{"chip": "v5p", "topology": "v5p:2x2x1"}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / RECORD).write_text('{"chip": "v6e"}')
    assert compile_record(tmp_path)["chip"] == "v5p"  # (a folder: its own record)
    assert compile_record(tmp_path / "m.hlo.txt")["chip"] == "v5p"
    assert compile_record(tmp_path / "sub")["chip"] == "v6e"
    (tmp_path / "sub" / RECORD).write_text('["not", "a", "record"]')
    assert compile_record(tmp_path / "sub") == {}


@pytest.mark.parametrize(("tag", "chip", "assumed", "source"), [
    # (an H100 and an H200 both are sm_9.0: the first, assumed, when nothing says which)
    ("sm_9.0", "h100", True, "sm_9.0 in the dump's name: NVIDIA H100 SXM or NVIDIA H200 SXM, whose "
                             "memory differs; the dump's gpu_target_config.pbtxt would say which"),
    ("sm_86", "a100", False, "sm_8.6 in the dump's name"),  # (a family's first stands for it)
    ("sm_10.0", "b200", True, "sm_10.0 in the dump's name: NVIDIA B200 or NVIDIA GB200 (one Blackwell "
                              "GPU of an NVL72), whose memory differs; the dump's gpu_target_config.pbtxt "
                              "would say which"),
    ("sm_12.0", "h100", True, "a GPU of compute capability 12.0, not in the table"),
])
def test_a_gpu_dump_is_costed_on_the_chip_its_name_states(tmp_path, tag, chip, assumed, source):
    """A real H100 compile (the memory zoo's) saved under XLA's GPU dump names; which chip,
    and the words every output prints about it."""
    path = tmp_path / f"module_0001.jit_step.{tag}_gpu_after_optimizations.txt"
    shutil.copy(FIXTURES / "zoo" / "mlp_train_h100.hlo.txt", path)
    (m,) = load(path)
    choice = resolve_chip(m)
    assert (choice.chip.key, choice.assumed, choice.source) == (chip, assumed, source)


H200_DUMP = FIXTURES / "h200_target" / "module_1325.jit__lambda.sm_9.0a_gpu_after_optimizations.txt"


def test_the_dumps_target_config_tells_an_h200_from_an_h100(tmp_path):
    """A real H200 compile's --xla_dump_to files (fixtures/h200_target): XLA's
    gpu_target_config.pbtxt beside the module names the device and its memory, so the
    module is costed on the H200, not assumed. The same module alone is an assumed H100;
    beside an H100's target config (XLA's own, from the corpus), an H100."""
    from hloscope.cost.resolve import gpu_chip

    (m,) = load(H200_DUMP)
    choice = resolve_chip(m)
    assert (choice.chip.key, choice.assumed) == ("h200", False)
    assert choice.source == "NVIDIA H200 (140 GiB) in the dump's gpu_target_config.pbtxt"
    alone = tmp_path / "alone" / H200_DUMP.name
    alone.parent.mkdir()
    shutil.copy(H200_DUMP, alone)
    (m,) = load(alone)
    assert (resolve_chip(m).chip.key, resolve_chip(m).assumed) == ("h100", True)
    h100 = CORPUS / "gpu" / "xla-target-configs" / "xla_target_config_h100_sxm.txtpb"
    if h100.exists():
        beside = tmp_path / "h100" / H200_DUMP.name
        beside.parent.mkdir()
        shutil.copy(H200_DUMP, beside)
        shutil.copy(h100, beside.parent / "module_1325.jit__lambda.gpu_target_config.pbtxt")
        (m,) = load(beside)
        choice = resolve_chip(m)
        assert (choice.chip.key, choice.assumed) == ("h100", False)
        assert choice.source.startswith("NVIDIA H100 80GB HBM3 (79 GiB)")
    # by name first, else the nearest memory (a capture's device plane states no model)
    assert gpu_chip("h100", 0, "NVIDIA H200 141GB HBM3e") == "h200"
    assert gpu_chip("h100", 150109880320) == "h200" and gpu_chip("h100", 84942979072) == "h100"
    assert gpu_chip("b200", 0, "NVIDIA GB200") == "gb200" and gpu_chip("a100", 42949672960) == "a100"


def test_the_words_for_each_choice():
    """What each resolution says (printed as the output's chip note)."""
    (cpu,) = load(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")
    assert resolve_chip(cpu).source == "a CPU module: the generic CPU entry, a rough figure"
    assert resolve_chip(cpu, "v5e").source == "asked" and resolve_chip(cpu, "v5e").note is None
    (v5e,) = load(FIXTURES / "tpu" / "mlp_v5e.hlo.txt")
    assert (resolve_chip(v5e).source, resolve_chip(v5e).assumed) == (
        "a TPU module whose generation nothing states", True)
    (v5p,) = load(BIG_V5P)
    assert resolve_chip(v5p).source.startswith("a TPU module whose fusions are split over a chip's two TensorCores")


@pytest.mark.skipif(not (CORPUS / "alpa-gpu-dumps").is_dir(), reason="corpus not present")
def test_gpu_dumps_are_costed_on_the_gpu_their_names_state():
    """Alpa's real GPU dumps (compiled for sm_7.0): every module, before and after
    optimization (the before file's name says nothing; its after sibling does), on V100."""
    for path in sorted((CORPUS / "alpa-gpu-dumps").glob("module_*optimizations.txt")):
        for m in load(path):
            choice = resolve_chip(m)
            assert choice.chip.key == "v100" and not choice.assumed, path.name


def test_chip_file_and_config_table(tmp_path):
    """Chips not in the table (the scaling book's TPU v2 numbers) from a file or a [chips]
    table, with chips.toml's fields."""
    toml = tmp_path / "v2.toml"
    toml.write_text('[tpu-v2]\nname = "TPU v2"\npeak_bf16_flops = 45e12\npeak_f32_flops = 7.5e12\n'
                    'hbm_bandwidth = 7e11\nhbm_bytes = 8589934592\nplatform_name = "tpu"\n')
    out = runner.invoke(app, ["memory", str(BIG_V5P), "--chip-file", str(toml), "--format", "json"])
    (rec,) = json.loads(out.stdout)["modules"]
    assert rec["chip"]["key"] == "tpu-v2" and rec["chip"]["hbm_bytes"] == 8 << 30
    lint = runner.invoke(app, ["lint", str(BIG_V5P), "--chip-file", str(toml), "--select", "H012",
                               "--format", "json"])
    (found,) = json.loads(lint.stdout)["findings"]
    assert found["severity"] == "error"  # 40 GiB on an 8 GiB chip that was named: a verdict
    config = tmp_path / "hloscope.toml"
    config.write_text('chip = "my-v2"\n[chips.my-v2]\nname = "TPU v2"\npeak_bf16_flops = 45e12\n'
                      'peak_f32_flops = 7.5e12\nhbm_bandwidth = 7e11\nhbm_bytes = 8589934592\n')
    lint = runner.invoke(app, ["lint", str(BIG_V5P), "--config", str(config), "--select", "H012",
                               "--format", "json"])
    (found,) = json.loads(lint.stdout)["findings"]
    assert "8.0 GiB" in found["message"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[x]\nname = 1\n")
    result = runner.invoke(app, ["roofline", str(BIG_V5P), "--chip-file", str(bad)])
    assert result.exit_code == 2 and "lacks peak_bf16_flops" in result.output


def test_a_pre_optimization_module_says_its_step_time_is_indicative():
    path = FIXTURES / "tpu" / "shard_map_v5p.before_optimizations.hlo.txt"
    out = json.loads(runner.invoke(app, ["roofline", str(path), "--format", "json"]).stdout)
    (rec,) = out["modules"]
    assert "indicative" in rec["step"]["caveat"]
    text = runner.invoke(app, ["roofline", str(path)]).stdout
    assert "caveat: a before_optimizations module" in text
    after = json.loads(runner.invoke(app, ["roofline", str(FIXTURES / "tpu" / "mlp_v5e.hlo.txt"),
                                           "--format", "json"]).stdout)
    assert after["modules"][0]["step"]["caveat"] is None


_XLA_TYPES = {2: "int8", 11: "tf32", 12: "f64", 16: "bf16", 20: "fp8"}  # (PrimitiveType numbers)


def _xla_target_config(path) -> dict:
    """What an XLA GPU target config (DeviceDescription, text proto) states: SMs, clock, HBM
    bandwidth and size, and each dtype's matrix-unit peak (2 x SMs x units x ops/clock x clock)."""
    import re

    text = path.read_text()
    out = {k: float(re.search(rf"\b{k}: ([\d.e+]+)", text).group(1))
           for k in ("core_count", "memory_bandwidth", "device_memory_size", "shared_memory_per_core")}
    matrix = text.split("matrix_unit_description", 1)[1] if "matrix_unit_description" in text else ""
    for key, clock, units, ops in re.findall(r"key: (\d+)\s+value \{\s+clock_rate_ghz: ([\d.]+)\s+"
                                             r"units_per_core: (\d+)\s+ops_per_clock: (\d+)", matrix):
        if int(key) in _XLA_TYPES:
            out[_XLA_TYPES[int(key)]] = 2 * out["core_count"] * int(units) * int(ops) * float(clock) * 1e9
    return out


@pytest.mark.parametrize(("config", "key"), [("a100_sxm_80", "a100"), ("b200", "b200"), ("h100_sxm", "h100"),
                                             ("h200", "h200"), ("v100", "v100")])
def test_gpu_entries_agree_with_xla_target_configs(config, key):
    from hloscope.cost.chips import get_chip

    path = CORPUS / "gpu" / "xla-target-configs" / f"xla_target_config_{config}.txtpb"
    if not path.exists():
        pytest.skip("corpus not present")
    xla, chip = _xla_target_config(path), get_chip(key)
    assert chip.sm_count == xla["core_count"] and chip.shared_memory_per_sm == xla["shared_memory_per_core"]
    assert chip.hbm_bandwidth == pytest.approx(xla["memory_bandwidth"], rel=0.01)
    assert chip.hbm_bytes == pytest.approx(xla["device_memory_size"], rel=0.02)
    peaks = {"bf16": chip.peak_bf16_flops, "tf32": chip.peak_tf32_flops, "fp8": chip.peak_fp8_flops,
             "int8": chip.peak_int8_flops, "f64": chip.peak_f64_flops}
    for dtype, rate in peaks.items():
        if dtype in xla:  # (A100's and V100's configs state no matrix-unit rates)
            assert rate == pytest.approx(xla[dtype], rel=0.01), dtype


def _gpu_corpus_modules():
    for folder in (CORPUS / "gpu", CORPUS / "alpa-gpu-dumps"):
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".hlo", ".txt") and "-buffer-assignment" not in path.name \
                    and "SOURCES" not in path.name:
                try:
                    modules = load(path)
                except Exception:  # noqa: BLE001 - (XLA's multi-module test files: #38)
                    continue
                yield from ((path, m) for m in modules)


@pytest.mark.skipif(not (CORPUS / "gpu").is_dir(), reason="corpus not present")
def test_no_gpu_module_in_the_corpus_is_costed_on_a_cpu_or_tpu_entry():
    """Every real GPU module that shows anything of its compile (library calls, GPU backend
    configs, the GPU scheduler's fingerprint_before_lhs, command buffers, a dump name's
    sm_XX, its folder's) is costed on a GPU; only XLA test inputs that state no platform at
    all (unoptimized, unscheduled) get an assumed chip, said to be assumed."""
    from hloscope.cost.chips import platform_of

    checked = stateless = 0
    for path, m in _gpu_corpus_modules():
        choice = resolve_chip(m)
        if choice.chip.platform != "gpu":
            assert platform_of(m) is None and capability(m.path) is None, path.name
            assert choice.assumed and m.attrs.get("is_scheduled") != "true", path.name
            stateless += 1
        checked += 1
    assert checked > 50 and stateless <= 4


@pytest.mark.skipif(not (CORPUS / "gpu").is_dir(), reason="corpus not present")
def test_sharding_and_roofline_cost_a_gpu_module_on_the_same_chip():
    path = CORPUS / "gpu" / "xla-tests" / "xla_xplane_profile_module.hlo"
    roof = json.loads(runner.invoke(app, ["roofline", str(path), "--format", "json"]).stdout)
    shard = json.loads(runner.invoke(app, ["sharding", str(path), "--format", "json"]).stdout)
    keys = {r["chip"]["key"] for r in roof["modules"]}
    assert keys == {"h100"}
    assert json.dumps(shard).count('"links": "NVLink"') >= 1
