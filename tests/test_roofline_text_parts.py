"""The roofline text's parts, line by line: `roofline_text`, `_step_lines`, `breakdown_lines`
and `clip` on records written by hand (labelled as such), each expected line worked out by
hand from the record. The end-to-end tests (test_roofline_text.py) hold real modules' text to
their JSON; these pin what each branch prints."""

from __future__ import annotations

from hloscope.report.roofline import _step_lines, breakdown_lines, clip, roofline_text


def _row(name, flops=1e9, t_compute=1e-3, t_memory=2e-3, times=1, **more):
    row = {"instruction": name, "opcode": "fusion", "flops": flops, "bytes": 2 * 2**20,
           "intensity": 476.8, "t_compute": t_compute, "t_memory": t_memory, "bound": "memory",
           "estimated_seconds": None, "times": times, "unknown_cost": False}
    row.update(more)
    return row


def _record(rows, **more):
    """A hand-written roofline JSON record."""
    record = {"name": "m", "chip": {"name": "TPU v5e", "ridge": 240.4},
              "totals": {"flops": 123456789.0, "bytes": 3 * 2**30, "hbm_bytes": 2 * 2**30,
                         "transcendentals": 0.0, "t_compute": 1.5e-3, "t_memory": 2.25e-3,
                         "t_roofline": 2.25e-3, "unknown_trip_counts": [], "unknown_cost": []},
              "instructions": rows}
    record.update(more)
    return record


def test_header_totals_and_time():
    lines = roofline_text([_record([])], 0).splitlines()
    assert lines[0] == "HloModule m on TPU v5e (ridge 240 FLOPs/byte)"
    assert lines[1] == "  total: 1.235e+08 FLOPs, 3.00 GiB accessed (2.00 GiB in HBM), 0 transcendentals"
    assert lines[2] == "  time: compute 1.500 ms, memory 2.250 ms, roofline 2.250 ms"
    assert lines[3].split() == ["instruction", "opcode", "FLOPs", "bytes", "AI", "t_roofline", "bound", "xla_est"]
    assert len(lines) == 4


def test_a_chip_note_and_the_unknowns():
    rec = _record([])
    rec["chip"]["note"] = "chip assumed: TPU v5e"
    rec["totals"]["unknown_trip_counts"] = ["while.1", "while.2"]
    rec["totals"]["unknown_cost"] = [{"instruction": f"cc.{k}", "reason": "no estimate"} for k in range(7)]
    lines = roofline_text([rec], 0).splitlines()
    assert lines[1] == "  note: chip assumed: TPU v5e"
    assert lines[4] == "  note: loops with unknown trip count (counted once): while.1, while.2"
    assert lines[5] == ("  note: 7 op(s) of unknown cost, counted as 0 in the totals: %cc.0: no estimate; "
                        "%cc.1: no estimate; %cc.2: no estimate; %cc.3: no estimate; %cc.4: no estimate (+2 more)")


def test_five_unknowns_name_all_five():
    rec = _record([])
    rec["totals"]["unknown_cost"] = [{"instruction": f"cc.{k}", "reason": "r"} for k in range(5)]
    (line,) = [ln for ln in roofline_text([rec], 0).splitlines() if "unknown cost" in ln]
    assert line.endswith("%cc.4: r")


def test_rows_sorted_by_time_times_trips_and_cut_at_top():
    """a: 2 ms once; b: 1.5 ms x3 = 4.5 ms; c: 3 ms once (its compute time): b, c, a."""
    rows = [_row("a"), _row("b", t_memory=1.5e-3, times=3), _row("c", t_compute=3e-3)]
    lines = roofline_text([_record(rows)], 2).splitlines()
    body = lines[4:]
    assert [ln.split()[0] for ln in body[:2]] == ["b", "c"]
    assert body[0].split()[-1] == "x3" and "x1" not in body[1]
    assert body[2] == "  ... 1 more (--top 0 shows all)"
    assert len(roofline_text([_record(rows)], 0).splitlines()) == 7


def test_a_row_column_by_column():
    row = _row("fusion.1", flops=2.5e9, estimated_seconds=4e-6, source="model.py:12")
    (line,) = roofline_text([_record([row])], 0).splitlines()[4:]
    assert line.startswith("  fusion.1" + " " * 24 + " fusion" + " " * 10)
    fields = line.split()
    assert fields[:10] == ["fusion.1", "fusion", "2.5e+09", "2.00", "MiB", "476.8", "2.000", "ms", "memory", "4.00"]
    assert fields[10] == "us"


def test_unknown_and_kernel_body_flops():
    rows = [_row("k", unknown_cost=True), _row("p", cost_source="kernel body", t_memory=1e-3)]
    lines = roofline_text([_record(rows)], 0).splitlines()
    assert lines[4].split()[2] == "unknown"
    assert lines[5].split()[2] == "1e+09*"
    assert lines[6] == ("  * derived from the kernel's body (grid x per-step ops; bytes from its "
                        "BlockSpecs): it states no cost_estimate")


def test_long_names_are_cut_to_their_columns():
    row = _row("n" * 40, opcode="custom-call-with-a-long-name")
    line = roofline_text([_record([row])], 0).splitlines()[4]
    assert line[2:35] == "n" * 32 + " "
    assert line[35:52] == "custom-call-with "  # (16 characters, then the column's blank)


def _step(**more):
    step = {"step_seconds": 3e-3, "ops_seconds": 2.5e-3, "exposed_seconds": 5e-4, "mfu": 0.4125,
            "peak_flops": 197e12, "collectives": [], "collective_seconds": 0.0, "hidden_seconds": 0.0}
    step.update(more)
    return step


def test_the_step_line():
    assert _step_lines(_step(), 0) == [
        "  step (estimate): 3.000 ms = ops 2.500 ms + exposed communication 500.00 us; MFU 41.2% of 197 TFLOP/s"]
    assert _step_lines(_step(mfu=0.0), 0) == [
        "  step (estimate): 3.000 ms = ops 2.500 ms + exposed communication 500.00 us"]
    assert _step_lines(_step(copies_exposed_seconds=1e-4), 0)[0].endswith(
        "exposed communication 500.00 us + exposed async copies 100.00 us; MFU 41.2% of 197 TFLOP/s")


def test_the_floor_and_caveat_lines():
    lines = _step_lines(_step(floor_seconds=2e-5, op_floor_seconds=1e-6, caveat="not scheduled"), 0)
    assert lines[1] == ("  ops include 20.00 us of per-op floor: ops whose roofline is under the "
                        "1.00 us an op of this chip measures however small")
    assert lines[2] == "  caveat: not scheduled"


def _collective(name, exposed, times=1, is_async=True, hidden=1e-4):
    return {"instruction": name, "opcode": "all-reduce-start" if is_async else "all-gather",
            "axis": "data", "group_size": 4, "moved_bytes": 3 * 2**20, "seconds": 2e-4,
            "hidden_seconds": hidden, "overlapped_by": ["f.1", "f.2"], "is_async": is_async,
            "exposed_seconds": exposed, "times": times}


def test_collectives_ranked_by_exposed_time_and_cut_at_top():
    """c1: 50 us x1; c2: 40 us x2 = 80 us; c3: sync, 0 hidden, 200 us: c3, c2, c1."""
    cs = [_collective("c1", 5e-5), _collective("c2", 4e-5, times=2),
          _collective("c3", 2e-4, is_async=False, hidden=0.0)]
    lines = _step_lines(_step(collectives=cs, collective_seconds=6e-4, hidden_seconds=3e-4, links="ICI"), top=2)
    assert lines[1] == ("  collectives: 3 logical (2 all-reduce-start, 1 all-gather), 600.00 us on ICI, "
                        "2 overlapped hiding 300.00 us")
    assert lines[2].split()[0] == "c3" and ", sync, exposed 200.00 us" in lines[2]
    assert lines[3].split()[:5] == ["c2", "all-reduce-start", "data", "x4", "3.00"]
    assert lines[3].endswith("hidden 100.00 us by 2 op(s), exposed 40.00 us x2")
    assert lines[4] == "    and 1 more, less exposed (--top 0 lists all)"
    assert len(_step_lines(_step(collectives=cs), top=0)) == 5
    assert "on the links" in _step_lines(_step(collectives=cs), 0)[1]


def test_a_breakdown_replaces_the_rows_and_keeps_the_step_line():
    rec = _record([_row("a")], step=_step(collectives=[_collective("c1", 5e-5)]),
                  breakdown={"by": "scope", "total": {"seconds": 2e-3, "ops": 3},
                             "groups": [{"key": "attn", "seconds": 2e-3, "share": 1.0, "forward_seconds": 0.0,
                                         "backward_seconds": 0.0, "flops": 1e9, "bytes": 2**20, "ops": 3}]})
    lines = roofline_text([rec], 0).splitlines()
    assert lines[3].startswith("  step (estimate): ")
    assert not any(ln.startswith("  collectives:") for ln in lines)
    assert lines[4] == "  by scope: 2.000 ms of roofline time over 3 op(s)"
    assert not any(ln.split()[:1] == ["instruction"] for ln in lines)


def _group(key, seconds, share, fwd=0.0, bwd=0.0):
    return {"key": key, "seconds": seconds, "share": share, "forward_seconds": fwd,
            "backward_seconds": bwd, "flops": 2e9, "bytes": 2**20, "ops": 2}


def test_breakdown_with_forward_and_backward():
    b = {"by": "scope", "total": {"seconds": 4e-3, "ops": 6}, "note": "scopes from op_name",
         "groups": [_group("mlp", 3e-3, 0.75, 1e-3, 2e-3), _group("attn", 5e-4, 0.125, 5e-4),
                    _group("loss", 5e-4, 0.125)]}
    lines = breakdown_lines(b, 2, "measured")
    assert lines[0] == "  by scope: 4.000 ms of measured time over 6 op(s)"
    assert lines[1] == "  note: scopes from op_name"
    assert lines[2].split() == ["scope", "time", "share", "forward", "backward", "FLOPs", "bytes", "ops"]
    assert lines[3].split() == ["mlp", "3.000", "ms", "75.0%", "1.000", "ms", "2.000", "ms", "2e+09", "1.00", "MiB", "2"]
    assert lines[5] == "  and 1 more (12.5%; --top 0 lists all)"
    assert lines[6] == ("  forward 1.500 ms (37.5%), backward 2.000 ms (50.0%), other 500.00 us "
                        "(loss, optimizer, no scope)")


def test_breakdown_by_pass_or_without_backward_has_no_split():
    groups = [_group("forward", 1e-3, 0.5, 1e-3), _group("backward", 1e-3, 0.5, 0.0, 1e-3)]
    lines = breakdown_lines({"by": "pass", "total": {"seconds": 2e-3, "ops": 4}, "groups": groups}, 0, "roofline")
    assert lines[1].split() == ["pass", "time", "share", "FLOPs", "bytes", "ops"]
    assert len(lines) == 4
    plain = breakdown_lines({"by": "source", "total": {"seconds": 1e-3, "ops": 2},
                             "groups": [_group("a.py:1", 1e-3, 1.0)]}, 0, "roofline")
    assert plain[1].split() == ["source", "time", "share", "FLOPs", "bytes", "ops"]


def test_breakdown_by_layer_shows_every_layer():
    groups = [_group(f"layer {k}", 1e-4, 0.1) for k in range(5)] + [_group("embed", 1e-4, 0.1),
                                                                    _group("head", 1e-4, 0.1)]
    lines = breakdown_lines({"by": "layer", "total": {"seconds": 7e-4, "ops": 14}, "groups": groups}, 2, "roofline")
    keys = [ln.split()[0] + (" " + ln.split()[1] if ln.split()[0] == "layer" else "") for ln in lines[2:-1]]
    assert keys == [f"layer {k}" for k in range(5)] + ["embed"]
    assert lines[-1] == "  and 1 more (10.0%; --top 0 lists all)"


def test_clip_keeps_the_end_of_a_long_path():
    assert clip("a" * 40) == "a" * 40
    # its last 38 characters start with 16 p's, then its first "/": cut there (16 < 20)
    assert clip("p" * 30 + "/q" + "/r" * 10) == "../q" + "/r" * 10
    # where the first "/" of those 38 comes at 20 or later (here 25), they are kept whole
    assert clip("z" * 5 + "/" + "y" * 25 + "/" + "w" * 12) == ".." + "y" * 25 + "/" + "w" * 12
    assert len(clip("y" * 50)) == 40 and clip("y" * 50) == ".." + "y" * 38


def test_a_collective_once_has_no_count_a_long_name_is_cut_and_no_axis_is_a_dash():
    cs = [_collective("c" * 40, 5e-5), dict(_collective("d", 4e-5, times=3), axis=None)]
    lines = _step_lines(_step(collectives=cs), 0)  # (d first: 40 us x3 exposed, over 50 us)
    assert lines[2].split()[:4] == ["d", "all-reduce-start", "-", "x4"]
    assert lines[2].endswith("exposed 40.00 us x3")
    assert lines[3].startswith("    " + "c" * 32 + " all-reduce-start ")
    assert lines[3].endswith("exposed 50.00 us")  # once: no " x1"


def test_clip_cuts_at_a_slash_before_half_the_width_only():
    # the last 38 characters: 19 a's, then "/", then 18 b's: the "/" at 19 (< 20) is cut at
    assert clip("x" * 10 + "a" * 19 + "/" + "b" * 18) == "../" + "b" * 18
    # 20 a's first: the "/" at 20 is not under half the width: the 38 are kept whole
    assert clip("x" * 10 + "a" * 20 + "/" + "b" * 17) == ".." + "a" * 20 + "/" + "b" * 17


def test_every_module_is_shown_when_the_first_has_a_breakdown():
    b = {"by": "scope", "total": {"seconds": 1e-3, "ops": 1},
         "groups": [_group("attn", 1e-3, 1.0)]}
    text = roofline_text([_record([_row("a")], breakdown=b), _record([_row("z")], name="n")], 0)
    assert "HloModule n on TPU v5e (ridge 240 FLOPs/byte)" in text.splitlines()


def test_top_one_keeps_one_row_one_group_and_two_trips_are_counted():
    rows = [_row("a", times=2), _row("b")]
    lines = roofline_text([_record(rows)], 1).splitlines()
    assert lines[4].split()[0] == "a" and lines[4].split()[-1] == "x2"
    assert lines[5] == "  ... 1 more (--top 0 shows all)"
    groups = [_group("mlp", 1e-3, 0.5), _group("attn", 1e-3, 0.5)]
    out = breakdown_lines({"by": "scope", "total": {"seconds": 2e-3, "ops": 4}, "groups": groups}, 1, "roofline")
    assert out[-1] == "  and 1 more (50.0%; --top 0 lists all)"


def test_a_breakdown_with_no_time_says_so():
    """(a backward time, however small, asks for the forward/backward split; a total of 0
    has no shares to give)"""
    b = {"by": "scope", "total": {"seconds": 0.0, "ops": 1}, "groups": [_group("mlp", 0.0, 0.0, 0.0, 1e-30)]}
    assert breakdown_lines(b, 0, "roofline")[-1] == "  (no time)"


def test_six_unknowns_name_five_and_count_one_more():
    rec = _record([])
    rec["totals"]["unknown_cost"] = [{"instruction": f"cc.{k}", "reason": "r"} for k in range(6)]
    (line,) = [ln for ln in roofline_text([rec], 0).splitlines() if "unknown cost" in ln]
    assert line.endswith("%cc.4: r (+1 more)")
