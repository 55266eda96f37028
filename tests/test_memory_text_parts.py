"""The memory text's parts, branch by branch, on records written by hand (labelled as such):
each expected line worked out by hand from the record. test_memory_text.py holds real
modules' text to XLA's own reports; these pin what each branch prints."""

from __future__ import annotations

from hloscope.report.memory import _timeline, memory_text

MiB = 2**20


def _record(**more):
    """A hand-written memory JSON record: 64 + 32 - 0 + 16 = 112 MiB."""
    r = {"module": "m", "scheduled": True, "chip": {"key": "v5e", "name": "TPU v5e", "hbm_bytes": 16 * 2**30},
         "argument_bytes": 64 * MiB, "output_bytes": 32 * MiB, "alias_bytes": 0, "temp_peak_bytes": 16 * MiB,
         "hbm_bytes": 112 * MiB, "other_spaces": {}, "constant_bytes": 0, "peak_step": -1,
         "peak_instruction": "", "peak_live": [], "timeline": []}
    r.update(more)
    return r


def test_the_hbm_line_and_the_headroom():
    lines = memory_text([_record()]).splitlines()
    assert lines[0] == "HloModule m: static liveness over its schedule"
    assert lines[1] == "  HBM: arguments 64.00 MiB + outputs 32.00 MiB - aliased 0 B + peak temporaries 16.00 MiB = 112.00 MiB"
    # 16 GiB - 112 MiB = 16,272 MiB = 15.89 GiB, 99.3% of 16 GiB
    assert lines[2] == "  TPU v5e HBM 16.00 GiB: headroom 15.89 GiB (99.3%)"
    assert len(lines) == 3


def test_over_the_chips_hbm():
    r = _record(hbm_bytes=17 * 2**30)
    assert memory_text([r]).splitlines()[2] == "  TPU v5e HBM 16.00 GiB: over by 1.00 GiB: it does not fit"
    exact = _record(hbm_bytes=16 * 2**30)  # (no byte over: it fits, with no headroom)
    assert memory_text([exact]).splitlines()[2] == "  TPU v5e HBM 16.00 GiB: headroom 0 B (0.0%)"


def test_no_verdict_on_the_cpu_before_scheduling_or_on_an_assumed_chip():
    cpu = _record(chip={"key": "cpu", "name": "CPU", "hbm_bytes": 64 * 2**30})
    assert len(memory_text([cpu]).splitlines()) == 2
    early = memory_text([_record(scheduled=False)]).splitlines()
    assert early[0] == ("HloModule m: static liveness over the text's order (not a scheduled module: "
                        "the peak is indicative)")
    assert early[2] == ("  TPU v5e HBM 16.00 GiB: no verdict before scheduling (unfused values all look "
                        "live); run memory on the after_optimizations dump")
    assumed = _record(chip={"key": "h100", "name": "NVIDIA H100 SXM", "hbm_bytes": 80 * 2**30,
                            "assumed": True, "note": "chip assumed"})
    lines = memory_text([assumed]).splitlines()
    assert lines[1] == "  note: chip assumed"
    # 112 MiB of 80 GiB: 0.137%
    assert lines[3] == "  0.1% of the 80.00 GiB of an assumed NVIDIA H100 SXM: no verdict (--chip names the chip)"
    none = _record(chip={"key": "x", "name": "X"})
    assert len(memory_text([none]).splitlines()) == 2


def test_other_spaces_and_constants():
    r = _record(other_spaces={"VMEM (S(1))": 3 * MiB, "SMEM": 512}, constant_bytes=2048)
    lines = memory_text([r]).splitlines()
    assert lines[3] == "  other memory spaces (peak, not HBM): VMEM (S(1)) 3.00 MiB, SMEM 512 B"
    assert lines[4] == "  constants: 2.00 KiB (XLA's own allocations, not counted above)"


def test_the_peak_and_what_is_live_there():
    live = [{"instruction": "fusion.3", "shape": "f32[1024,1024]{1,0}", "bytes": 4 * MiB, "defined": 2,
             "last_use": 5, "source": "model.py:7", "op_name": "jit(f)/mul"}]
    points = [[s, f"i{s}", v * MiB] for s, v in enumerate([0, 4, 8, 8, 4, 0])]
    r = _record(peak_step=2, peak_instruction="fusion.3", peak_live=live, timeline=points)
    lines = memory_text([r]).splitlines()
    assert lines[3] == "  peak at step 2 (%fusion.3); live there:"
    assert lines[4].startswith("       4.00 MiB  %fusion.3 f32[1024,1024]{1,0}  steps 2-5")
    assert "model.py:7" in lines[4]
    assert lines[5] == "  temporaries over the schedule: | ▄██▄ |"
    assert len(memory_text([_record(peak_step=2, temp_peak_bytes=0, timeline=points)]).splitlines()) == 3
    assert len(memory_text([_record(peak_step=-1, timeline=points)]).splitlines()) == 3


def test_the_timeline_takes_each_slices_maximum():
    assert _timeline([]) == ""
    assert _timeline([[0, "a", 0], [1, "b", 0]]) == "  "  # (nothing live: blank, no division by 0)
    # 5 points in width 2: slices of 3 -> max(1, 8, 2) = 8, max(4, 6) = 6 of top 8 -> █, ▆
    points = [[k, "i", v] for k, v in enumerate([1, 8, 2, 4, 6])]
    assert _timeline(points, width=2) == "█▆"
    # 1 of 8 rounds to bar 1; 3 of 16 (1.5) rounds to 2
    assert _timeline([[0, "i", 1], [1, "i", 8]]) == "▁█"
    assert _timeline([[0, "i", 3], [1, "i", 16]]) == "▂█"


def test_beside_xlas_memory_analysis():
    xla = {"argument_size_in_bytes": 64 * MiB, "output_size_in_bytes": 32 * MiB, "alias_size_in_bytes": 8 * MiB,
           "temp_size_in_bytes": 20 * MiB, "peak_memory_in_bytes": 110 * MiB}
    lines = memory_text([_record(xla_memory_analysis=xla)]).splitlines()[3:]
    assert lines[0] == "  beside XLA's memory_analysis() of this compile (memory_analysis.json):"
    assert lines[1].split() == ["hloscope", "XLA"]
    assert lines[2].split() == ["arguments", "64.00", "MiB", "64.00", "MiB"]
    assert lines[4].split() == ["aliased", "(donated)", "0", "B", "8.00", "MiB"]
    assert lines[5].split()[:5] == ["temporaries", "16.00", "MiB", "20.00", "MiB"]
    # 64 + 32 - 8 + 20 = 108 MiB
    assert lines[6].split()[:5] == ["total", "112.00", "MiB", "108.00", "MiB"]
    assert lines[7].split()[:6] == ["peak", "live", "112.00", "MiB", "110.00", "MiB"]
    missing = memory_text([_record(xla_memory_analysis={"argument_size_in_bytes": 1})]).splitlines()
    assert missing[5].split() == ["arguments", "64.00", "MiB", "1", "B"]
    assert missing[6].split() == ["outputs", "32.00", "MiB", "-"]


def test_beside_xlas_own_reports():
    xla = {"files": ["m-buffer-assignment.txt", "m-memory-usage-report.txt", "notes.txt"],
           "spaces": [{"color": 0, "name": "", "arguments": 64 * MiB, "outputs": 32 * MiB, "aliased": 0,
                       "temporaries": 12 * MiB, "hbm_figure": 108 * MiB, "report_total": 109 * MiB},
                      {"color": 1, "name": "", "temporaries": 5 * MiB, "report_total": None}],
           "live_range_peak_bytes": 100 * MiB, "live_range_peak_step": 7}
    r = _record(xla=xla, other_spaces={"VMEM (on-chip)": 4 * MiB})  # (memory space 1's name)
    lines = memory_text([r]).splitlines()
    start = next(k for k, ln in enumerate(lines) if ln.startswith("  beside XLA's own reports"))
    head, columns, *rows = lines[start:]
    assert head == "  beside XLA's own reports (buffer assignment, memory usage report, notes.txt):"
    assert columns.split() == ["hloscope", "XLA"]
    assert rows[0].split() == ["HBM", "arguments", "64.00", "MiB", "64.00", "MiB"]
    assert rows[3].split()[:6] == ["HBM", "temporaries", "16.00", "MiB", "12.00", "MiB"]
    assert rows[4].split()[:6] == ["HBM", "total", "112.00", "MiB", "108.00", "MiB"]
    assert rows[5].split()[:5] == ["memory-usage", "report", "-", "109.00", "MiB"]
    assert rows[6].split()[:7] == ["VMEM", "(on-chip)", "(color", "1)", "4.00", "MiB", "5.00"]
    assert rows[7].split()[:5] == ["live-range", "peak", "-", "100.00", "MiB"]
    assert rows[7].endswith("at step 7 of XLA's schedule (all spaces)")
    assert len(rows) == 8


def test_beside_memory_analysis_row_by_row_with_notes():
    xla = {"argument_size_in_bytes": 64 * MiB, "output_size_in_bytes": 30 * MiB, "alias_size_in_bytes": 8 * MiB,
           "temp_size_in_bytes": 20 * MiB, "peak_memory_in_bytes": 110 * MiB}
    lines = memory_text([_record(xla_memory_analysis=xla)]).splitlines()[6:]
    assert lines[0] == "    outputs                     32.00 MiB    30.00 MiB"  # (no note)
    assert lines[2] == "    temporaries                 16.00 MiB    20.00 MiB  XLA: its heap, as laid out"
    assert lines[3].endswith("106.00 MiB  arguments + outputs - aliased + temporaries")  # 64 + 30 - 8 + 20


def test_a_field_memory_analysis_lacks_counts_as_zero_in_the_total():
    """(a memory_analysis.json written by an older hloscope, or by hand, may lack a field: it
    shows as "-" and adds nothing)"""
    lines = memory_text([_record(xla_memory_analysis={"argument_size_in_bytes": 100})]).splitlines()
    total = next(ln for ln in lines if ln.split()[:1] == ["total"])
    assert total.split()[:5] == ["total", "112.00", "MiB", "100", "B"]  # (to the byte)


def test_a_space_the_memory_report_totals_is_shown_by_that_total():
    xla = {"files": ["m-memory-usage-report.txt"],
           "spaces": [{"color": 1, "name": "", "temporaries": 5 * MiB, "report_total": 6 * MiB}]}
    lines = memory_text([_record(xla=xla, other_spaces={"VMEM (on-chip)": 4 * MiB})]).splitlines()
    row = next(ln for ln in lines if "(color 1)" in ln)
    assert row.split()[:7] == ["VMEM", "(on-chip)", "(color", "1)", "4.00", "MiB", "6.00"]


def test_a_peak_at_the_first_step_and_aliased_bytes_in_mib():
    live = [{"instruction": "p", "shape": "f32[8]{0}", "bytes": 16 * MiB, "defined": 0, "last_use": 0}]
    r = _record(peak_step=0, peak_instruction="p", peak_live=live, timeline=[[0, "p", 16 * MiB]],
                alias_bytes=3 * MiB + MiB // 2, hbm_bytes=108.5 * MiB)
    lines = memory_text([r]).splitlines()
    assert "- aliased 3.50 MiB +" in lines[1]
    assert lines[3] == "  peak at step 0 (%p); live there:"


def test_the_timeline_is_sixty_characters_wide_at_most():
    points = [[k, "i", 8] for k in range(61)]  # 61 steps: slices of 2 -> 31 characters
    assert _timeline(points) == "█" * 31
    assert _timeline(points[:60]) == "█" * 60
