"""hloscope.cost.chips, piece by piece: names a user may give, chip files and their errors,
the GPU link domain, platform detection; expected answers from chips.toml's own rows and the
rules the docstrings state (the mutation run found many of these untested)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from hloscope.cost.chips import (
    ChipFileError,
    add_chips,
    get_chip,
    load_chip_file,
    platform_of,
    set_link_domain,
    user_chips,
)
from hloscope.parser import parse


@pytest.fixture(autouse=True)
def _no_chips_left_behind():
    """The chips these tests register are taken back (a later test's cache keys read them)."""
    from hloscope.cost import chips

    before = dict(chips._USER)
    yield
    chips._USER.clear()
    chips._USER.update(before)


@pytest.mark.parametrize("name,key", [
    ("tpu-v5e", "tpu-v5e"), ("v5e", "tpu-v5e"), ("  V5E ", "tpu-v5e"), ("TPU v5 lite", "tpu-v5e"),
    ("TPU v5", "tpu-v5p"), ("tpu v5p", "tpu-v5p"), ("TPU v4", "tpu-v4"), ("TPU v6 lite", "tpu-v6e"),
    ("tpu v6e", "tpu-v6e"), ("h100", "h100"), ("MI300X", "mi300x"),
])
def test_names_a_user_may_give(name, key):
    assert get_chip(name).key == key


def test_an_unknown_name_says_which_are_known():
    with pytest.raises(KeyError) as e:
        get_chip("tpu-v99")
    msg = str(e.value)
    assert "unknown chip 'tpu-v99'" in msg and "tpu-v5e" in msg and "h100" in msg and "--chip-file" in msg
    from hloscope.cost.chips import chips

    # every table key, in order, each once (any chips the user added come after them)
    assert f"known: {', '.join(sorted(chips()))}" in msg


def test_derived_figures_of_a_row():
    v5e = get_chip("v5e")
    assert v5e.ridge == pytest.approx(197e12 / 8.19e11)
    assert v5e.peak_flops("f32") == v5e.peak_f32_flops and v5e.peak_flops("f64") == v5e.peak_f32_flops
    assert v5e.peak_flops("bf16") == v5e.peak_bf16_flops and v5e.peak_flops("s8") == v5e.peak_bf16_flops
    assert (v5e.platform, get_chip("h100").platform, get_chip("cpu").platform) == ("tpu", "gpu", "cpu")


ROW = {"name": "My Chip", "peak_bf16_flops": 1e15, "peak_f32_flops": 1e14,
       "hbm_bandwidth": 2e12, "hbm_bytes": 2**36}


def test_a_chip_table_registers_chips_by_lowercase_key():
    (chip,) = add_chips({"My-Accel": dict(ROW, mxu=[128, 128], sources=["datasheet"])}, "hloscope.toml")
    assert chip.key == "my-accel" and chip.mxu == (128, 128) and chip.sources == ("datasheet",)
    assert get_chip("MY-ACCEL") is chip and chip in user_chips()


@pytest.mark.parametrize("row,words", [
    ("not a table", "is not a table of chip fields"),
    (dict(ROW, warp=32), "unknown field(s) warp; fields:"),
    ({"name": "x", "peak_bf16_flops": 1.0}, "lacks peak_f32_flops, hbm_bandwidth, hbm_bytes"),
])
def test_a_bad_chip_table_is_refused_saying_where_and_why(row, words):
    with pytest.raises(ChipFileError) as e:
        add_chips({"bad": row}, "my.toml")
    assert str(e.value).startswith("my.toml: [bad]") and words in str(e.value)


@pytest.mark.parametrize("field,value,words", [
    ("peak_bf16_flops", "fast", "peak_bf16_flops = 'fast': must be a positive number"),
    ("peak_f32_flops", 0, "peak_f32_flops = 0: must be a positive number"),  # (a peak of 0 divides by 0)
    ("hbm_bytes", [1], "hbm_bytes = [1]: must be a positive whole number"),
    ("hbm_bytes", 1.5, "hbm_bytes = 1.5: must be a positive whole number"),
    ("mxu", 5, "mxu = 5: must be two positive whole numbers, as [128, 128]"),
    ("approximate", 1, "approximate = 1: must be true or false"),
    ("sources", "datasheet", "sources = 'datasheet': must be a list of texts"),
    ("name", 7, "name = 7: must be a text in quotes"),
    ("link_latency_s", -1e-6, "link_latency_s = -1e-06: must be a number of 0 or more"),
    ("mxu", [0, 128], "mxu = [0, 128]: must be two positive whole numbers, as [128, 128]"),
    ("mxu", [128.0, 128], "mxu = [128.0, 128]: must be two positive whole numbers, as [128, 128]"),
    ("mxu", [True, 128], "mxu = [True, 128]: must be two positive whole numbers, as [128, 128]"),
    ("vmem_bytes", 0, "vmem_bytes = 0: must be a positive whole number"),  # (optional, yet never 0)
])
def test_a_chip_fields_value_of_the_wrong_kind_is_refused_naming_it(field, value, words):
    """(each of these was taken as given, to fail later inside a cost, or raised a TypeError
    the user saw as a traceback)"""
    with pytest.raises(ChipFileError) as e:
        add_chips({"bad": dict(ROW, **{field: value})}, "my.toml")
    assert str(e.value) == f"my.toml: [bad] {words}"


def test_whole_numbers_may_be_written_as_floats_and_a_latency_may_be_zero():
    (chip,) = add_chips({"ok-chip": dict(ROW, hbm_bytes=6.4e10, link_latency_s=0.0, mxu=[256, 256],
                                         tensorcores=1)}, "my.toml")
    assert (chip.hbm_bytes, type(chip.hbm_bytes), chip.link_latency_s, chip.mxu) == (64_000_000_000, int, 0.0, (256, 256))
    assert chip.tensorcores == 1  # (one is positive)


def test_complex_types_run_at_the_f32_peak():
    chip = get_chip("v5e")
    assert [chip.peak_flops(t) for t in ("c64", "c128", "f64", "f32")] == [chip.peak_f32_flops] * 4
    assert chip.peak_flops("bf16") == chip.peak_flops("s32") == chip.peak_bf16_flops


def test_chip_files(tmp_path):
    one = tmp_path / "one.toml"
    one.write_text('[chips.lab-gpu]\nname = "Lab GPU"\nplatform_name = "gpu"\npeak_bf16_flops = 1e15\n'
                   'peak_f32_flops = 1e14\nhbm_bandwidth = 3e12\nhbm_bytes = 68719476736\n')
    (chip,) = load_chip_file(one)
    assert chip.key == "lab-gpu" and chip.platform == "gpu"
    assert get_chip(str(one)).key == "lab-gpu"  # (a file of one chip names it)
    two = tmp_path / "two.toml"
    two.write_text(one.read_text().replace("lab-gpu", "a") + one.read_text().replace("lab-gpu", "b"))
    with pytest.raises(KeyError, match=r"holds 2 chips \(a, b\)"):
        get_chip(str(two))
    with pytest.raises(ChipFileError, match="cannot read chip file"):
        load_chip_file(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("[x\n")
    with pytest.raises(ChipFileError, match="not TOML"):
        load_chip_file(tmp_path / "bad.toml")
    (tmp_path / "empty.toml").write_text("")
    with pytest.raises(ChipFileError, match="no chip table"):
        load_chip_file(tmp_path / "empty.toml")
    # each error names the file; a table with a field chips.toml lacks names the table too
    with pytest.raises(ChipFileError) as e:
        load_chip_file(tmp_path / "missing.toml")
    assert str(e.value) == f"{tmp_path / 'missing.toml'}: cannot read chip file: No such file or directory"
    odd = tmp_path / "odd.toml"
    odd.write_text(one.read_text().replace("[chips.lab-gpu]", "[lab-gpu]") + "warp_size = 32\n")
    with pytest.raises(ChipFileError) as e:
        load_chip_file(odd)
    assert str(e.value).startswith(f"{odd}: [lab-gpu] has unknown field(s) warp_size; ")


def test_gpus_per_node_sets_every_gpus_link_domain_and_no_tpus():
    try:
        set_link_domain(16)
        assert get_chip("h100").link_domain == 16 and get_chip("mi300x").link_domain == 16
        assert get_chip("v5p").link_domain is None
    finally:
        set_link_domain(None)
    assert get_chip("h100").link_domain == 8  # (its table's NVLink domain again)


def _module(body: str, header: str = "") -> object:
    (m,) = parse(f"// HAND-WRITTEN minimal module\nHloModule m{header}\n\nENTRY e {{\n{body}\n}}\n", "m")
    return m


@pytest.mark.parametrize("body,header,platform", [
    ("  ROOT p = f32[8,128]{1,0:T(8,128)} parameter(0)", "", "tpu"),
    ('  p = f32[8,8]{1,0} parameter(0)\n  ROOT c = f32[8,8]{1,0} custom-call(p), custom_call_target="__cublas$gemm"', "", "gpu"),
    ('  p = f32[8,8]{1,0} parameter(0)\n  ROOT c = f32[8,8]{1,0} custom-call(p), custom_call_target="te_fused_attn_forward"', "", "gpu"),
    ('  p = f32[8,8]{1,0} parameter(0)\n  ROOT n = f32[8,8]{1,0} negate(p), backend_config={"operation_queue_id":"0"}', "", "gpu"),
    ("  ROOT p = f32[8,8]{1,0} parameter(0)", ", is_scheduled=true", "cpu"),
    ("  ROOT p = f32[8,8]{1,0} parameter(0)", "", None),
    # XLA's GPU scheduler's stamp on the module it scheduled
    ("  ROOT p = f32[8,8]{1,0} parameter(0)",
     ', is_scheduled=true, frontend_attributes={fingerprint_before_lhs="3d1f"}', "gpu"),
    ("  ROOT p = f32[8,8]{1,0} parameter(0)", ', is_scheduled=true, frontend_attributes={other="3d1f"}', "cpu"),
    # an op that is no custom call names no library by its attributes' text
    ('  p = f32[8,8]{1,0} parameter(0)\n  ROOT n = f32[8,8]{1,0} negate(p), metadata={op_name="__cublas$gemm"}',
     ", is_scheduled=true", "cpu"),
    # a custom call with no target, or another's, on a scheduled module: the CPU's
    ('  p = f32[8,8]{1,0} parameter(0)\n  ROOT c = f32[8,8]{1,0} custom-call(p), custom_call_target="my_kernel"',
     ", is_scheduled=true", "cpu"),
])
def test_the_platform_a_module_shows(body, header, platform):
    assert platform_of(_module(body, header)) == platform


def test_a_module_with_gpu_command_buffers_is_a_gpus():
    # HAND-WRITTEN minimal module: XLA's GPU backend wraps runs of ops in command_buffer computations
    text = ("HloModule m, is_scheduled=true\n\n%command_buffer (a: f32[8]) -> f32[8] {\n"
            "  %a = f32[8]{0} parameter(0)\n  ROOT %n = f32[8]{0} negate(%a)\n}\n\n"
            "ENTRY %e (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n"
            "  ROOT %c = f32[8]{0} call(%p), to_apply=%command_buffer\n}\n")
    (m,) = parse(text, "m")
    assert platform_of(m) == "gpu"
    (m,) = parse(text.replace("command_buffer", "commands"), "m")
    assert platform_of(m) == "cpu"


def test_the_resolution_of_modules_that_state_little():
    """A HAND-WRITTEN module with no layouts states no platform: v5e, assumed, said why. A
    real H100 compile under a name with no sm_XX: the H100 entry, assumed. Each choice's
    record for JSON output holds all four fields."""
    from hloscope.cost.resolve import resolve_chip
    from hloscope.parser import load, parse

    (m,) = parse("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n", "m")
    assert resolve_chip(m).to_dict() == {"chip": "tpu-v5e", "name": "TPU v5e", "assumed": True,
                                         "source": "a module that states no platform (before optimization?)"}
    (g,) = load(FIXTURES / "zoo" / "mlp_train_h100.hlo.txt")
    choice = resolve_chip(g)
    assert (choice.chip.key, choice.assumed, choice.source) == ("h100", True, "a GPU module whose generation nothing states")


def test_a_chip_of_another_platform_asked_for_is_said_so():
    from hloscope.cost.resolve import chip_for
    from hloscope.parser import load

    (cpu,) = load(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")
    chip, note = chip_for(cpu, "v5e")
    assert chip.key == "tpu-v5e"
    assert note == ("a CPU module costed on TPU v5e as asked; its numbers are that chip's, not "
                    "the machine's that compiled it")
    assert chip_for(cpu, "cpu")[1] is None  # (its own platform: nothing to say)


def test_the_chip_recorded_beside_a_dump_names_its_topology(tmp_path):
    """`hloscope compile` records the chip and the topology it compiled for; the note names
    the topology, or the chip when no topology was recorded."""
    import json
    import shutil

    from hloscope.cost.resolve import RECORD, resolve_chip
    from hloscope.parser import load

    path = tmp_path / "module.hlo.txt"
    shutil.copy(FIXTURES / "tpu" / "mlp_v5e.hlo.txt", path)
    for record, said in (({"chip": "v5p", "topology": "v5p:2x2x1"}, "v5p:2x2x1"), ({"chip": "v5p"}, "v5p")):
        (tmp_path / RECORD).write_text(json.dumps(record))
        (m,) = load(path)
        choice = resolve_chip(m)
        assert (choice.chip.key, choice.assumed) == ("tpu-v5p", False)
        assert choice.source == f"recorded by hloscope compile ({said})"


def test_the_kept_table_is_chips_toml_as_parsed(monkeypatch):
    """hloscope.cost.chips_data holds chips.toml's tables as Python (a command costing a
    module reads them without the TOML reader): it must be what `python3 -m
    hloscope.cost.chips` writes for the chips.toml at hand, and a chips.toml it was not
    written from is parsed instead."""
    import tomllib
    from pathlib import Path

    from hloscope.cost import chips as chips_module
    from hloscope.cost import chips_data

    toml = Path(chips_module.__file__).with_name("chips.toml")
    kept = Path(chips_data.__file__).read_text(encoding="utf-8")
    assert kept == chips_module.data_module(), "chips.toml changed: run python3 -m hloscope.cost.chips"
    assert chips_data.ROWS == tomllib.loads(toml.read_text(encoding="utf-8"))
    parsed = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(1) or real(text))
    assert chips_module._rows() is chips_data.ROWS and not parsed
    monkeypatch.setattr(chips_data, "TOML_DIGEST", "another text's")
    assert chips_module._rows() == chips_data.ROWS and parsed
