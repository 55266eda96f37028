"""The report package's smaller parts, branch by branch: `stats`'s text on a record written
by hand, the `parse --format json` record of a real H100 instruction (its fields read off the
text by hand), and a file error's source line from each kind of parse error (the other kinds
of failure: test_report_parts.py)."""

from __future__ import annotations

from conftest import FIXTURES

from hloscope.parser import ParseError, load
from hloscope.report.common import FileError
from hloscope.report.parse import instruction_json, module_json
from hloscope.report.stats import stats_text


def _stats(**more):
    """A hand-written stats JSON record."""
    s = {"name": "m", "instructions": 12, "computations": 3, "fusion_computations": 1,
         "opcodes": {"add": 4, "fusion": 1}, "fusion_kinds": {}, "custom_call_targets": {}, "unknown_cost": {},
         "memory": {"bytes_per_memory_space": {"device (HBM)": 3 * 2**20}, "padding_waste_bytes": 1536,
                    "largest_buffers": []},
         "per_computation": []}
    s.update(more)
    return s


def test_stats_text_lines():
    lines = stats_text([_stats()], False).split("\n")
    assert lines == ["HloModule m: 12 instructions in 3 computations (1 fused)",
                     "  opcodes: add 4, fusion 1",
                     "  all buffers added up (not memory in use: `hloscope memory` gives the peak): "
                     "device (HBM) 3.00 MiB; padding waste 1.50 KiB",
                     "  largest buffers:"]


def test_stats_text_kinds_targets_unknowns_buffers_and_computations():
    buffers = [{"padded_bytes": 2**20, "instruction": "p", "shape": "f32[2,128]", "ratio": 4.0},
               {"padded_bytes": 2**10, "instruction": "q", "shape": "f32[256]", "ratio": 1.0}]
    comps = [{"name": "main", "is_entry": True, "is_fusion": False, "instructions": 9, "opcodes": {"add": 4},
              "fusion_kinds": {}, "custom_call_targets": {}},
             {"name": "fused", "is_entry": False, "is_fusion": True, "instructions": 2, "opcodes": {"mul": 2},
              "fusion_kinds": {}, "custom_call_targets": {}},
             {"name": "cond", "is_entry": False, "is_fusion": False, "instructions": 1, "opcodes": {"lt": 1},
              "fusion_kinds": {"kLoop": 1}, "custom_call_targets": {"tpu_custom_call": 2}}]
    s = _stats(fusion_kinds={"kLoop": 1}, custom_call_targets={"__cublas$gemm": 2},
               unknown_cost={"custom-call without cost_estimate": 1},
               memory={"bytes_per_memory_space": {"device (HBM)": 2**20, "VMEM (on-chip)": 512},
                       "padding_waste_bytes": 0, "largest_buffers": buffers},
               per_computation=comps)
    lines = stats_text([s], True).split("\n")
    assert lines[2] == "  fusion kinds: kLoop 1"
    assert lines[3] == "  custom-call targets: __cublas$gemm 2"
    assert lines[4] == ("  ops the cost model cannot cost (roofline shows them as unknown): "
                        "custom-call without cost_estimate 1")
    assert lines[5].endswith("device (HBM) 1.00 MiB, VMEM (on-chip) 512 B; padding waste 0 B")
    assert lines[7] == "       1.00 MiB  p f32[2,128] (padded 4.00x)"
    assert lines[8] == "       1.00 KiB  q f32[256]"
    assert lines[9:] == ["  main [entry]: 9 instructions", "    opcodes: add 4",
                         "  fused [fusion]: 2 instructions", "    opcodes: mul 2",
                         "  cond: 1 instructions", "    opcodes: lt 1", "    fusion kinds: kLoop 1",
                         "    custom-call targets: tpu_custom_call 2"]
    assert len(stats_text([s], False).split("\n")) == 9


def test_parse_json_of_a_real_instruction():
    """fixtures/h100/gemm_bf16.hlo.txt line 25: %custom-call.1 = (bf16[8192,8192]{1,0},
    s8[33554432]{0}) custom-call(%x.1, %w.1), custom_call_target="__cublas$lt$matmul", ..."""
    path = FIXTURES / "h100" / "gemm_bf16.hlo.txt"
    (m,) = load(path)
    call = m.entry.by_name["custom-call.1"]
    record = instruction_json(call)
    assert record["name"] == "custom-call.1" and record["opcode"] == "custom-call"
    assert record["shape"] == "(bf16[8192,8192], s8[33554432])"
    assert record["layout_shape"] == "(bf16[8192,8192]{1,0}, s8[33554432]{0})"
    assert record["operands"] == ["x.1", "w.1"]
    assert record["line"] == 25
    assert record["attributes"]["custom_call_target"] == '"__cublas$lt$matmul"'  # (as printed)
    doc = module_json(m)
    assert doc["name"] == "jit__lambda" and doc["path"] == str(path)
    assert doc["attributes"]["is_scheduled"] == "true"
    assert [c["is_entry"] for c in doc["computations"]] == [c is m.entry for c in m.computations]
    assert doc["computations"][-1]["instructions"][-1]["name"] == m.entry.instructions[-1].name


def test_file_error_of_a_parse_error_reads_its_line(tmp_path):
    f = tmp_path / "m.hlo.txt"
    f.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} paramter(0)\n}\n")
    first = FileError.of(str(f), ParseError("bad", str(f), 1, 1))
    assert first.source_line == "HloModule m"  # (line 1 read back: the first line counts)
    nowhere = FileError.of(str(f), ParseError("bad", str(f), 0, 0))
    assert nowhere.source_line is None
    given = FileError.of(str(f), ParseError("bad", str(f), 3, 5, source_line="  kept as given"))
    assert given.source_line == "  kept as given"
    spaced = tmp_path / "s.hlo.txt"
    spaced.write_text("HloModule m   \n")
    assert FileError.of(str(spaced), ParseError("bad", str(spaced), 1, 1)).source_line == "HloModule m   "
    unnamed = FileError.of(str(f), ParseError("bad", "<string>", 3, 5))
    assert unnamed.file == str(f) and unnamed.source_line == "  ROOT p = f32[4]{0} paramter(0)"



def test_a_parse_error_in_another_file_names_that_file_and_its_line(tmp_path):
    """(a file that includes another, as a flag file names its module: the error is where the
    parser was, not in the file the run was given)"""
    given, other = tmp_path / "run.txt", tmp_path / "other.hlo.txt"
    given.write_text("first\n")
    other.write_text("HloModule m\nENTRY e {\n")
    e = FileError.of(str(given), ParseError("bad", str(other), 2, 3))
    assert (e.file, e.line, e.column, e.source_line) == (str(other), 2, 3, "ENTRY e {")


def test_a_buffer_padded_by_half_says_so():
    buffers = [{"padded_bytes": 3 * 2**10, "instruction": "p", "shape": "f32[2,192]", "ratio": 1.5}]
    s = _stats(memory={"bytes_per_memory_space": {"device (HBM)": 3 * 2**10}, "padding_waste_bytes": 1024,
                       "largest_buffers": buffers})
    assert "       3.00 KiB  p f32[2,192] (padded 1.50x)" in stats_text([s], False).split("\n")
