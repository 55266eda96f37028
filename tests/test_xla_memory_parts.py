"""XLA's own memory reports read part by part (cost/xla_memory.py): each kind of allocation
summed into its place, the located errors, and the memory_analysis() figures `hloscope
compile` writes beside a dump. The report texts here are HAND-WRITTEN (labelled as such) in
the line forms of the real dumps under fixtures/dumps and fixtures/h100*/dump, with sizes
that are powers of two apart, so that each sum tells which allocations went into it."""

from __future__ import annotations

import json

import pytest

from hloscope.cost import xla_memory
from hloscope.cost.xla_memory import ReportError, analysis_beside

# HAND-WRITTEN buffer assignment: every kind of allocation, most of them twice.
_ASSIGNMENT = """BufferAssignment:
allocation 0: size 1, output shape is |(f32[2], f32[2])|, maybe-live-out:
allocation 1: size 2, maybe-live-out:
allocation 2: size 4, parameter 0, shape |f32[1]| at ShapeIndex {}:
allocation 3: size 8, parameter 1, shape |f32[2]| at ShapeIndex {}:
allocation 4: size 16, parameter 2, shape |f32[4]| at ShapeIndex {}, maybe-live-out:
allocation 5: size 32, parameter 3, shape |f32[8]| at ShapeIndex {}, maybe-live-out:
allocation 6: size 64, constant:
allocation 7: size 128, constant:
allocation 8: size 256, thread-local:
allocation 9: size 512, thread-local:
allocation 10: size 1024, preallocated-temp:
allocation 11: size 2048:
allocation 12: size 4096, color 1, preallocated-temp:
allocation 13: size 8192, color 1, parameter 4, shape |f32[2048]| at ShapeIndex {}:
allocation 14: size 16384, color 1, thread-local:
  value: <1 x @0> (size=1,offset=0): (f32[2], f32[2]){}
"""


def _read(tmp_path, kind: str, text: str) -> xla_memory.XlaMemory:
    path = tmp_path / f"m.after_optimizations{xla_memory.SUFFIXES[kind]}"
    path.write_text(text)
    return xla_memory.read([path])


def test_each_allocation_is_summed_into_its_kind(tmp_path):
    x = _read(tmp_path, "buffer_assignment", _ASSIGNMENT)
    hbm, other = x.spaces[0], x.spaces[1]
    assert hbm.arguments == 4 + 8 + 16 + 32
    assert hbm.outputs == 1 + 2 + 16 + 32  # a donated parameter is an output too
    assert hbm.aliased == 16 + 32
    assert hbm.constants == 64 + 128
    assert hbm.thread_local == 256 + 512
    assert hbm.temporaries == 1024 + 2048
    assert hbm.hbm_figure == 60 + 51 - 48 + 3072
    assert (other.arguments, other.temporaries, other.thread_local, other.outputs) == (8192, 4096, 16384, 0)
    assert set(x.spaces) == {0, 1}


def test_a_shape_naming_a_kind_is_not_taken_for_it(tmp_path):
    # (the words between |..| are a shape's, not the allocation's: a tuple shape may hold any text)
    x = _read(tmp_path, "buffer_assignment",
              "allocation 0: size 4, shape |f32[1] thread-local, constant, color 7|, preallocated-temp:\n")
    assert x.spaces[0].temporaries == 4 and 7 not in x.spaces


def test_buffer_assignment_errors_are_located(tmp_path):
    long = "allocation 3: " + "x" * 100
    with pytest.raises(ReportError) as e:
        _read(tmp_path, "buffer_assignment", "allocation 0: size 4, constant:\n" + long + "\n")
    assert e.value.line == 2 and e.value.message == f"unreadable allocation header: {long[:80]!r}"
    assert str(e.value).endswith(f"-buffer-assignment.txt:2:1: unreadable allocation header: {long[:80]!r}")
    with pytest.raises(ReportError) as e:
        _read(tmp_path, "buffer_assignment", "BufferAssignment:\n  nothing\n")
    assert e.value.line == 1 and str(e.value).endswith(
        "-buffer-assignment.txt:1:1: no `allocation N: size S...:` lines: not a buffer-assignment dump")


def test_usage_report_totals_per_space_and_its_errors(tmp_path):
    x = _read(tmp_path, "memory_usage_report",
              "Memory Space: default (color=0)\nTotal bytes: 1024 (1KiB)\n\nMemory Space: vmem (color=1)\n"
              "Total bytes: 64\n")
    assert (x.spaces[0].name, x.spaces[0].report_total) == ("default", 1024)
    assert (x.spaces[1].name, x.spaces[1].report_total) == ("vmem", 64)
    with pytest.raises(ReportError) as e:
        _read(tmp_path, "memory_usage_report", "header\n\nTotal bytes: 5\n")
    assert e.value.line == 3 and str(e.value).endswith(
        "-memory-usage-report.txt:3:1: `Total bytes` before any `Memory Space:` line")
    with pytest.raises(ReportError) as e:
        _read(tmp_path, "memory_usage_report", "nothing here\n")
    assert e.value.line == 1 and str(e.value).endswith(
        "-memory-usage-report.txt:1:1: no `Memory Space: NAME (color=N)` line: not a memory-usage report")


def test_live_range_peak_and_its_error(tmp_path):
    x = _read(tmp_path, "live_range", "HloLiveRange (max 32):\n  Live ranges at 30 (peak):\n"
              "  Stack trace breakdown for peak usage: 116 391 936 bytes\n")
    assert (x.peak_step, x.peak_bytes) == (30, 116_391_936)
    with pytest.raises(ReportError) as e:
        _read(tmp_path, "live_range", "Live ranges at 30 (peak):\n")
    assert e.value.line == 1 and "does not start with `HloLiveRange`" in str(e.value)


def test_a_file_of_no_known_kind_is_an_error_without_a_line(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("allocation 0: size 4, constant:\n")
    with pytest.raises(ReportError) as e:
        xla_memory.read([path])
    assert e.value.line == 0 and str(e.value).startswith(f"{path}: not an XLA memory report (expected")


# ------------------------------------------------------------------ memory_analysis beside a dump

def _compiled(tmp_path, record, figures) -> str:
    module = tmp_path / "module_0001.jit_f.after_optimizations.txt"
    module.write_text("HloModule jit_f\n")
    if record is not None:
        (tmp_path / "hloscope.json").write_text(record if isinstance(record, str) else json.dumps(record))
    if figures is not None:
        (tmp_path / xla_memory.ANALYSIS).write_text(figures if isinstance(figures, str) else json.dumps(figures))
    return str(module)


def test_analysis_beside_reads_the_named_modules_figures(tmp_path):
    module = _compiled(tmp_path, {"module": "jit_f"},
                       {"temp_size_in_bytes": 1024, "argument_size_in_bytes": 2048.0, "serialized": "x"})
    assert analysis_beside(module, "jit_f") == {"temp_size_in_bytes": 1024, "argument_size_in_bytes": 2048}


@pytest.mark.parametrize(("record", "figures"), [
    ({"module": "jit_g"}, {"temp_size_in_bytes": 1}),  # another module's figures (a helper's dump)
    ({"name": "jit_f"}, {"temp_size_in_bytes": 1}),
    (["jit_f"], {"temp_size_in_bytes": 1}),             # not a record
    ({"module": "jit_f"}, [1]),                         # not figures
    ({"module": "jit_f"}, "{not json"),
    ("{not json", {"temp_size_in_bytes": 1}),
    (None, {"temp_size_in_bytes": 1}),                  # no hloscope.json
    ({"module": "jit_f"}, None),                        # no memory_analysis.json
])
def test_analysis_beside_takes_nothing_it_cannot_vouch_for(tmp_path, record, figures):
    assert analysis_beside(_compiled(tmp_path, record, figures), "jit_f") is None


def test_analysis_beside_a_module_read_from_a_string(tmp_path):
    _compiled(tmp_path, {"module": "jit_f"}, {"temp_size_in_bytes": 1})
    assert analysis_beside(tmp_path / "absent.txt", "jit_f") is None


def test_a_report_with_a_byte_that_is_not_utf8_is_still_read(tmp_path):
    """(an op_name or path in a comment line may hold any bytes: the report is read, the byte
    replaced, not refused)"""
    path = tmp_path / f"m.after_optimizations{xla_memory.SUFFIXES['buffer_assignment']}"
    path.write_bytes(b"BufferAssignment: // \xff\xfe op\nallocation 0: size 4, constant:\n")
    assert xla_memory.read([path]).spaces[0].constants == 4


def test_a_live_range_error_names_its_file(tmp_path):
    path = tmp_path / f"m.after_optimizations{xla_memory.SUFFIXES['live_range']}"
    path.write_text("BufferAssignment:\n")
    with pytest.raises(ReportError) as e:
        xla_memory.read([path])
    assert str(e.value).startswith(f"{path}:1:1: ")
