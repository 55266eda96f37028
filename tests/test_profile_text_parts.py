"""`hloscope profile`'s text, branch by branch, on report records written by hand (labelled
as such), each expected line worked out by hand from the record. test_profile_text.py holds
a real H100 capture's text to XProf's own table."""

from __future__ import annotations

from types import SimpleNamespace as NS

from hloscope.report.profile import kernel_lines, profile_text

MS = 1e-3


def _prof(events=3, aggregated=None, device="Nvidia, 132 SMs", kind="h100"):
    return NS(events=[object()] * events, aggregated=aggregated or {}, device=device, device_kind=kind)


def _row(name, module="jit_f", **more):
    r = {"module": module, "instruction": name, "category": "matmul fusion", "count": 4, "executions": 2,
         "per_step_seconds": 1 * MS, "total_seconds": 4 * MS, "mean_seconds": 2 * MS, "share": 0.25}
    r.update(more)
    return r


def _report(**more):
    r = {"steps": 4, "step_seconds": 16 * MS, "idle_fraction": 0.125, "warnings": [], "devices": 2,
         "categories": {"matmul fusion": 8 * MS, "elementwise": 2 * MS}, "instructions": [],
         "unmatched_events": [], "unseen_instructions": 0, "ops": []}
    r.update(more)
    return r


def test_the_head_line():
    spec = NS(name="NVIDIA H100 SXM")
    (head, *_) = profile_text("t.pb", _prof(), _report(), spec, False, 0).split("\n")
    assert head == ("t.pb: 3 op events, 4 step(s) of 4.000 ms, idle 12.5%; device Nvidia, 132 SMs, "
                    "roofline on NVIDIA H100 SXM")
    zero = profile_text("t.pb", _prof(), _report(steps=0, step_seconds=0.0), None, False, 0).split("\n")[0]
    assert zero == "t.pb: 3 op events, 0 step(s) of 0.00 us, idle 12.5%; device Nvidia, 132 SMs"
    kind = profile_text("t.pb", _prof(device=None), _report(), None, False, 0).split("\n")[0]
    assert kind.endswith("; device h100")
    unknown = profile_text("t.pb", _prof(device=None, kind=None), _report(), None, False, 0).split("\n")[0]
    assert unknown.endswith("; device unknown")
    table = profile_text("s.json", _prof(events=0, aggregated={("m", "a"): (1, 2.0)}), _report(), None, False, 0)
    assert table.split("\n")[0] == "s.json: an XProf table of 1 ops (times summed over the profile); device Nvidia, 132 SMs"


def test_launches_and_warnings():
    report = _report(launches=[{"count": 3, "host_seconds": 1e-5}, {"count": 2, "host_seconds": 5e-6}],
                     warnings=["w1", "w2"])
    lines = profile_text("t.pb", _prof(), report, None, False, 0).split("\n")
    assert lines[1] == ("  host: 5 kernel launch/copy call(s), 15.00 us of host time (not device time; "
                        "counted apart from the kernels)")
    assert lines[2:4] == ["warning: w1", "warning: w2"]


def test_rows_with_the_hlo():
    """4 steps x 2 devices: categories per step are a total over 8."""
    rows = [_row("fusion.1", roofline_seconds=1.5 * MS, bound="compute"),
            _row("fusion.2", executions=None, count=7),
            _row("a_very_long_instruction_name_that_is_cut_at_34", module="jit_g")]
    del rows[1]["executions"]
    del rows[2]["per_step_seconds"]
    report = _report(instructions=rows, unmatched_events=[{"count": 5}, {"count": 2}], unseen_instructions=3)
    lines = profile_text("t.pb", _prof(), report, None, True, 0).split("\n")
    assert lines[1] == "  by category, per step: matmul fusion 1.000 ms, elementwise 250.00 us"
    assert lines[2] == ("  instruction                        category               runs    per step"
                        "        mean  share    roofline")
    assert lines[3] == ("  jit_f/fusion.1                     matmul fusion             2    1.000 ms"
                        "    2.000 ms  25.0% 1.500 ms (compute)")
    assert lines[4].split()[:4] == ["jit_f/fusion.2", "matmul", "fusion", "7"]  # (no executions: count)
    assert lines[4].endswith("25.0%           -")
    assert lines[5].startswith("  jit_g/a_very_long_instruction_name ")  # (34 characters)
    assert lines[5].split()[4:6] == ["4.000", "ms"]  # (no per-step figure: the total)
    assert lines[6] == "  unmatched events: 7 (2 ops); executed instructions never seen: 3"
    one = profile_text("t.pb", _prof(), _report(instructions=[_row("fusion.1")]), None, True, 0).split("\n")
    assert one[3].startswith("  fusion.1  ")  # (one module: no module name)
    top = profile_text("t.pb", _prof(), report, None, True, 1).split("\n")
    assert [ln for ln in top if ln.startswith("  jit_")] == [lines[3]]


def test_collectives_devices_kernels_and_a_breakdown():
    rows = [_row("ar.1", devices={"/device:GPU:0": {"total_seconds": 3 * MS}, "/device:GPU:1": {"total_seconds": 1 * MS}}),
            _row("ar.2", devices={"/device:GPU:0": {"total_seconds": 1 * MS}})]
    axes = {"data": {"ops": 2, "moved_bytes": 3 * 2**20, "seconds": 1 * MS, "bytes_per_s": 3.2e9,
                     "share_of_peak": 0.04}, "model": {"ops": 1, "moved_bytes": 2**20, "seconds": 1 * MS,
                                                       "bytes_per_s": 1e9}}
    kernels = [{"instruction": "k", "runs": 2, "seconds": 1 * MS, "kinds": {}, "shares": {}, "bundles": 0,
                "counters": {}, "regions": []}]
    breakdown = {"by": "scope", "total": {"seconds": 2 * MS, "ops": 2},
                 "groups": [{"key": "attn", "seconds": 2 * MS, "share": 1.0, "forward_seconds": 0.0,
                             "backward_seconds": 0.0, "flops": 1e9, "bytes": 2**20, "ops": 2}]}
    report = _report(instructions=rows, collectives_by_axis=axes, kernels=kernels, breakdown=breakdown)
    lines = profile_text("t.pb", _prof(), report, None, True, 0).split("\n")
    at = lines.index(next(ln for ln in lines if ln.startswith("  collectives over data")))
    assert lines[at] == ("  collectives over data: 2 op(s), 3.0 MiB moved per device in 1.000 ms: 3.20 GB/s, "
                         "4.0% of the links' peak")
    assert lines[at + 1] == "  collectives over model: 1 op(s), 1.0 MiB moved per device in 1.000 ms: 1.00 GB/s"
    assert lines[at + 2] == "  per device: /device:GPU:0 4.000 ms, /device:GPU:1 1.000 ms"
    assert lines[at + 3] == "  kernel %k: 2 run(s), 1.000 ms"
    assert lines[at + 4] == "  by scope: 2.000 ms of measured (per step and device) time over 2 op(s)"


def test_raw_ops_without_the_hlo():
    ops = [{"module": "jit_f", "hlo_op": f"op.{k}", "count": k + 1, "self_seconds": (4 - k) * MS,
            "total_seconds": 5 * MS, "category": "matmul" if k % 2 else "elementwise"} for k in range(4)]
    report = _report(ops=ops, op_categories={"elementwise": 6 * MS, "matmul": 4 * MS})
    lines = profile_text("t.pb", _prof(), report, None, False, 2).split("\n")
    assert lines[1] == "  (no --hlo: per-op totals as the profile states them, by self time)"
    assert lines[2] == "  by category (self time): elementwise 60.0%, matmul 40.0%"
    assert lines[3].split() == ["module", "op", "category", "count", "self", "total", "self", "%"]
    assert lines[4].split() == ["jit_f", "op.0", "elementwise", "1", "4.000", "ms", "5.000", "ms", "40.0%"]
    assert lines[6] == "  and 2 more (--top 0 lists all)"
    plain = [dict(o, category="") for o in ops]
    bare = profile_text("t.pb", _prof(), _report(ops=plain), None, False, 0).split("\n")
    assert bare[2].split() == ["module", "op", "count", "self", "total", "self", "%"]
    assert len(bare) == 3 + 4


def test_kernel_lines():
    k = {"instruction": "fa", "runs": 3, "seconds": 2 * MS, "kinds": {"dma": 2, "compute": 1},
         "shares": {"dma": 0.25, "compute": 0.75}, "bundles": 1200, "counters": {"MXU": 41.26},
         "regions": [{"name": f"region{k}", "kind": "dma", "count": k, "seconds": 1e-5} for k in range(10)]}
    lines = kernel_lines([k])
    assert lines[0] == "  kernel %fa: 3 run(s), 2.000 ms; compute 75%, dma 25%; 1200 LLO bundles"
    assert lines[1] == "    utilization over its runs: MXU 41.3%"
    assert lines[2] == "    region0                          dma       x0        10.00 us"
    assert len(lines) == 2 + 8  # (the first 8 regions)


def test_kernel_kinds_by_share_and_long_region_names_cut():
    k = {"instruction": "fa", "runs": 1, "seconds": 1 * MS, "kinds": {"compute": 1, "dma": 3},
         "shares": {"compute": 0.25, "dma": 0.75}, "bundles": 0, "counters": {},
         "regions": [{"name": "r" * 40, "kind": "dma", "count": 2, "seconds": 1e-5}]}
    lines = kernel_lines([k])
    assert lines[0] == "  kernel %fa: 1 run(s), 1.000 ms; dma 75%, compute 25%"  # (largest share first)
    assert lines[1] == "    " + "r" * 32 + " dma       x2        10.00 us"


def test_an_empty_capture_is_a_trace_of_no_events_and_one_step_is_not_halved():
    (head, *_) = profile_text("t.pb", _prof(events=0), _report(steps=1), None, False, 0).split("\n")
    assert head == "t.pb: 0 op events, 1 step(s) of 16.000 ms, idle 12.5%; device Nvidia, 132 SMs"


def test_categories_per_step_over_one_step_and_one_device():
    report = _report(steps=1, instructions=[_row("fusion.1")])
    del report["devices"]  # (a CPU or single-device capture names none: one)
    lines = profile_text("t.pb", _prof(), report, None, True, 0).split("\n")
    assert lines[1] == "  by category, per step: matmul fusion 8.000 ms, elementwise 2.000 ms"
    report["devices"] = 1
    assert profile_text("t.pb", _prof(), report, None, True, 0).split("\n")[1] == lines[1]


def test_a_long_category_is_cut_and_one_device_has_no_per_device_line():
    rows = [_row("fusion.1", category="c" * 30, devices={"/device:GPU:0": {"total_seconds": 4 * MS}})]
    axes = {"data": {"ops": 1, "moved_bytes": 2**20, "seconds": 1 * MS, "bytes_per_s": 1e9, "share_of_peak": 0.5}}
    lines = profile_text("t.pb", _prof(), _report(instructions=rows, collectives_by_axis=axes), None, True, 0).split("\n")
    assert lines[3].startswith("  fusion.1" + " " * 27 + "c" * 20 + "      2 ")
    assert lines[4].endswith("1.00 GB/s, 50.0% of the links' peak")
    assert not any(ln.startswith("  per device:") for ln in lines)


def test_raw_ops_at_their_edges():
    """11 categories (10 shown), top 1, a long module name and category cut to their columns,
    a row with no category among rows with one, and a capture whose ops took no time."""
    ops = [{"module": "m" * 30, "hlo_op": "op.0", "count": 1, "self_seconds": 0.0, "total_seconds": 0.0,
            "category": "k" * 25},
           {"module": "jit_f", "hlo_op": "op.1", "count": 1, "self_seconds": 0.0, "total_seconds": 0.0}]
    cats = {f"cat{k}": (11 - k) * MS for k in range(11)}
    lines = profile_text("t.pb", _prof(), _report(ops=ops, op_categories=cats), None, False, 1).split("\n")
    assert not any(ln.startswith("  by category") for ln in lines)  # (no self time: no shares)
    assert lines[3] == "  " + "m" * 24 + " op.0" + " " * 37 + "k" * 20 + "       1     0.00 us     0.00 us   0.0%"
    assert lines[4] == "  and 1 more (--top 0 lists all)"
    full = profile_text("t.pb", _prof(), _report(ops=ops), None, False, 0).split("\n")
    assert full[4] == "  jit_f" + " " * 20 + "op.1" + " " * 37 + " " * 20 + "       1     0.00 us     0.00 us   0.0%"
    timed = [dict(ops[0], self_seconds=66 * MS)]  # (the categories split the ops' self time)
    shown = profile_text("t.pb", _prof(), _report(ops=timed, op_categories=cats), None, False, 0).split("\n")
    assert shown[2] == "  by category (self time): " + ", ".join(
        f"cat{k} {(11 - k) / 66 * 100:.1f}%" for k in range(10))


def test_raw_ops_without_categories_have_no_category_column():
    ops = [{"module": "jit_f", "hlo_op": "op.0", "count": 2, "self_seconds": 1 * MS, "total_seconds": 1 * MS}]
    lines = profile_text("t.pb", _prof(), _report(ops=ops), None, False, 0).split("\n")
    assert lines[3] == "  jit_f" + " " * 20 + "op.0" + " " * 37 + "      2    1.000 ms    1.000 ms 100.0%"
