"""`hloscope memory`'s text says what its JSON says (both come from one record): the HBM
line, the fit verdict, the spaces, the peak's live buffers, and every row beside XLA's own
reports, on a real dump folder with XLA's buffer-assignment, memory-usage and live-range
files (the mutation run found the text's layout untested)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, text_and_json

from hloscope.units import human_bytes

DUMP = FIXTURES / "dumps" / "memory_remat_train_v5e"


def _both(*args):
    lines, doc = text_and_json("memory", *args)
    return lines, doc["modules"][0]


def _b(n):
    return "-" if n is None else human_bytes(n, 2)


def test_the_hbm_line_the_verdict_and_the_peak():
    lines, r = _both(DUMP, "--chip", "v5e")
    assert lines[0] == f"HloModule {r['module']}: static liveness over its schedule"
    assert (f"  HBM: arguments {_b(r['argument_bytes'])} + outputs {_b(r['output_bytes'])} - aliased "
            f"{_b(r['alias_bytes'])} + peak temporaries {_b(r['temp_peak_bytes'])} = {_b(r['hbm_bytes'])}") in lines
    hbm = 16 * 2**30  # v5e
    free = hbm - r["hbm_bytes"]
    assert f"  TPU v5e HBM {_b(hbm)}: headroom {_b(free)} ({free / hbm:.1%})" in lines
    assert r["hbm_bytes"] == r["argument_bytes"] + r["output_bytes"] - r["alias_bytes"] + r["temp_peak_bytes"]
    assert ("  other memory spaces (peak, not HBM): "
            + ", ".join(f"{k} {_b(v)}" for k, v in r["other_spaces"].items())) in lines
    assert f"  constants: {_b(r['constant_bytes'])} (XLA's own allocations, not counted above)" in lines
    k = lines.index(f"  peak at step {r['peak_step']} (%{r['peak_instruction']}); live there:")
    for line, b in zip(lines[k + 1:], r["peak_live"], strict=False):
        assert line.startswith(f"    {_b(b['bytes']):>11}  %{b['instruction']} {b['shape']}"
                               f"  steps {b['defined']}-{b['last_use']}")
    assert sum(b["bytes"] for b in r["peak_live"]) == r["temp_peak_bytes"]
    bar = next(x for x in lines if x.startswith("  temporaries over the schedule: |"))
    assert bar.endswith("|") and len(bar) - len("  temporaries over the schedule: ||") <= 60
    assert "█" in bar  # (the peak's column is full)


def test_every_row_beside_xlas_reports():
    lines, r = _both(DUMP, "--chip", "v5e")
    x = r["xla"]
    assert lines.index("  beside XLA's own reports (buffer assignment, memory usage report, live range):") >= 0
    assert f"    {'':<24} {'hloscope':>12} {'XLA':>12}" in lines
    hbm = next(s for s in x["spaces"] if s["color"] == 0)

    def row(label, ours, theirs, note=""):
        return f"    {label:<24} {_b(ours):>12} {_b(theirs):>12}" + (f"  {note}" if note else "")

    assert row("HBM arguments", r["argument_bytes"], hbm["arguments"]) in lines
    assert row("HBM outputs", r["output_bytes"], hbm["outputs"]) in lines
    assert row("HBM aliased (donated)", r["alias_bytes"], hbm["aliased"]) in lines
    assert row("HBM temporaries", r["temp_peak_bytes"], hbm["temporaries"],
               "XLA: the temporaries' heap after buffer reuse") in lines
    assert row("HBM total", r["hbm_bytes"], hbm["hbm_figure"], "arguments + outputs - aliased + temporaries") in lines
    assert row("  memory-usage report", None, hbm["report_total"],
               "all allocations of the space (constants, thread-local too)") in lines
    assert hbm["hbm_figure"] == hbm["arguments"] + hbm["outputs"] - hbm["aliased"] + hbm["temporaries"]
    vmem = next(s for s in x["spaces"] if s["color"] == 1)
    assert row("vmem (color 1)", r["other_spaces"]["VMEM (on-chip)"], vmem["report_total"],
               "ours: peak live; XLA: the space's preallocation") in lines
    assert row("live-range peak", None, x["live_range_peak_bytes"],
               f"at step {x['live_range_peak_step']} of XLA's schedule (all spaces)") in lines


@pytest.mark.parametrize("args,words", [
    (("--chip", "cpu"), None),  # the host's RAM: no verdict line
    ((), "of an assumed TPU v5e: no verdict (--chip names the chip)"),
])
def test_no_verdict_without_a_chips_hbm(args, words):
    path = DUMP / "module_0000.jit_grads.cl_933746096.after_optimizations.txt"
    lines, r = _both(path, *args)
    verdicts = [x for x in lines if "headroom" in x or "does not fit" in x]
    assert not verdicts
    if words:
        assert any(x.endswith(words) and x.startswith(f"  {r['hbm_bytes'] / (16 * 2**30):.1%} of the ")
                   for x in lines)


def test_a_module_before_scheduling_gets_no_verdict():
    path = DUMP / "module_0000.jit_grads.cl_933746096.before_optimizations.txt"
    lines, r = _both(path, "--chip", "v5e")
    assert lines[0].endswith("the text's order (not a scheduled module: the peak is indicative)")
    assert any(x.endswith("no verdict before scheduling (unfused values all look live); run memory on "
                          "the after_optimizations dump") for x in lines)
