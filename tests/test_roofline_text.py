"""`hloscope roofline`'s text says what its JSON says (both come from one record): every op
row, the totals, the step line and each collective's line are checked against the JSON of
the same run, on real compiles with loops, kernels and overlapped collectives (the mutation
run found the text's layout untested)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, text_and_json

from hloscope.report.roofline import roofline_text
from hloscope.units import human_bytes, human_seconds

FSDP = FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"  # 4 gathers, 3 overlapped
SCAN = FIXTURES / "cpu" / "scan_cpu.hlo.txt"  # a 6-trip loop body
KERNEL = FIXTURES / "tpu" / "pallas_matmul_4096_v5e.hlo.txt"  # FLOPs from the kernel body


def _t(s: float) -> str:
    return human_seconds(s, 3)


def _both(path, *args):
    lines, doc = text_and_json("roofline", path, *args)
    return lines, doc["modules"][0]


@pytest.mark.parametrize("path,chip", [(FSDP, "v5p"), (SCAN, "cpu"), (KERNEL, "v5e")])
def test_every_op_row_states_its_json_record(path, chip):
    lines, rec = _both(path, "--chip", chip, "--top", "0")
    t = rec["totals"]
    assert lines[0] == f"HloModule {rec['name']} on {rec['chip']['name']} (ridge {rec['chip']['ridge']:.0f} FLOPs/byte)"
    assert (f"  total: {t['flops']:.4g} FLOPs, {human_bytes(t['bytes'], 2)} accessed "
            f"({human_bytes(t['hbm_bytes'], 2)} in HBM), {t['transcendentals']:.4g} transcendentals") in lines
    assert (f"  time: compute {_t(t['t_compute'])}, memory {_t(t['t_memory'])}, "
            f"roofline {_t(t['t_roofline'])}") in lines
    head = next(k for k, x in enumerate(lines) if x.startswith("  instruction "))
    rows = sorted(rec["instructions"], key=lambda x: -max(x["t_compute"], x["t_memory"]) * x["times"])
    body = lines[head + 1: head + 1 + len(rows)]
    assert len(body) == len(rows)
    for line, row in zip(body, rows, strict=True):
        cells = line.split()
        assert cells[0] == row["instruction"][:32] and cells[1] == row["opcode"][:16]
        flops = "unknown" if row["unknown_cost"] else f"{row['flops']:.3g}"
        if row.get("cost_source") == "kernel body":
            flops += "*"
        assert cells[2] == flops
        assert f" {human_bytes(row['bytes'], 2)} " in line and f" {row['intensity']:.1f} " in line
        assert f" {_t(max(row['t_compute'], row['t_memory']))} " in line and f" {row['bound']} " in line
        est = _t(row["estimated_seconds"]) if row["estimated_seconds"] else "-"
        assert f" {est}" in line
        core = line.split(" [")[0].rstrip()  # (the op's source, bracketed, comes last)
        assert core.endswith(f" {est} x{row['times']}" if row["times"] > 1 else f" {est}")
    if any(r.get("cost_source") == "kernel body" for r in rows):
        assert any(x.startswith("  * derived from the kernel's body") for x in lines)
    if path == SCAN:
        assert any(r["times"] == 6 for r in rows) and any(x.rstrip().endswith(" x6") for x in body)


def test_top_limits_the_rows_and_says_how_many_more():
    lines, rec = _both(SCAN, "--chip", "cpu", "--top", "2")
    n = len(rec["instructions"])
    head = next(k for k, x in enumerate(lines) if x.startswith("  instruction "))
    assert lines[head + 3] == f"  ... {n - 2} more (--top 0 shows all)"
    all_lines, _ = _both(SCAN, "--chip", "cpu", "--top", "0")
    assert not any(x.startswith("  ... ") for x in all_lines)


def test_the_step_line_and_each_collective_line():
    lines, rec = _both(FSDP, "--chip", "v5p", "--top", "0")
    s = rec["step"]
    step = next(x for x in lines if x.startswith("  step (estimate): "))
    want = (f"  step (estimate): {_t(s['step_seconds'])} = ops {_t(s['ops_seconds'])} + exposed "
            f"communication {_t(s['exposed_seconds'])}")
    if s.get("copies_exposed_seconds"):
        want += f" + exposed async copies {_t(s['copies_exposed_seconds'])}"
    want += f"; MFU {s['mfu']:.1%} of {s['peak_flops'] / 1e12:.3g} TFLOP/s"
    assert step == want
    cs = s["collectives"]
    overlapped = sum(1 for c in cs if c["hidden_seconds"] > 0)
    assert overlapped == 3
    summary = next(x for x in lines if x.startswith("  collectives: "))
    assert summary == (f"  collectives: {len(cs)} logical ({len(cs)} all-gather), "
                       f"{_t(s['collective_seconds'])} on {s['links']}, {overlapped} overlapped hiding "
                       f"{_t(s['hidden_seconds'])}")
    at = lines.index(summary)
    ranked = sorted(cs, key=lambda c: -c["exposed_seconds"] * c["times"])
    for line, c in zip(lines[at + 1: at + 1 + len(cs)], ranked, strict=True):
        cells = line.split()
        assert cells[0] == c["instruction"][:32] and cells[1] == c["opcode"]
        assert cells[2] == (c["axis"] or "-") and cells[3] == f"x{c['group_size']}"
        assert f"  {human_bytes(c['moved_bytes'], 2)} moved  {_t(c['seconds'])}, " in line
        how = (f"hidden {_t(c['hidden_seconds'])} by {len(c['overlapped_by'])} op(s)" if c["is_async"]
               else "sync")
        assert f", {how}, exposed {_t(c['exposed_seconds'])}" in line
    one, _ = _both(FSDP, "--chip", "v5p", "--top", "1")
    assert f"    and {len(cs) - 1} more, less exposed (--top 0 lists all)" in one


@pytest.mark.parametrize("top", [1, 2, 5])
@pytest.mark.parametrize("path,chip", [(FSDP, "v5p"), (SCAN, "cpu")])
def test_a_record_of_the_shown_rows_prints_as_the_whole_record(path, chip, top):
    """The text command makes records of the rows it shows only (Report.to_dict(top)): they
    print as the whole record does, ties in program order, "... N more" counted over all
    rows, and the kernel-body note kept when the one derived row is not shown (the row
    least costly is marked so here: none of these modules has a kernel)."""
    from hloscope.cost.chips import get_chip
    from hloscope.cost.roofline import roofline
    from hloscope.parser import load

    module = load(path)[0]
    report = roofline(module, get_chip(chip))
    last = sorted(report.rows, key=lambda r: -r.t_bound * r.times)[-1]
    head = {"chip": {"name": chip, "ridge": 1.0}}
    for marked in (False, True):
        last.cost_source = "kernel body" if marked else ""
        whole = roofline_text([{**report.to_dict(), **head}], top)
        shown = report.to_dict(top)
        assert len(shown["instructions"]) == min(top, len(report.rows)) < len(report.rows)
        assert roofline_text([{**shown, **head}], top) == whole
        assert ("derived from the kernel's body" in whole) is marked
