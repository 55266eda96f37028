"""`hloscope diff`'s text, branch by branch, on a record written by hand (labelled as such),
each expected line worked out by hand. test_report_parts.py holds real diffs' text to their
JSON."""

from __future__ import annotations

from hloscope.report.diff import _change, diff_text, profile_diff_text


def _cat(a, b):
    return {"seconds": {"a": a, "b": b, "delta": b - a}, "flops": {"a": 2e9, "b": 2e9, "delta": 0},
            "bytes": {"a": 1024, "b": 1024, "delta": 0}}


def _pair(**more):
    p = {"a": "jit_step", "b": "jit_step",
         "totals": {"step_time": {"a": 2e-3, "b": 1.5e-3}, "flops": {"a": 1e12, "b": 1e12},
                    "mfu": {"a": 0.25, "b": 0.3}, "findings": {"a": 0, "b": 2}},
         "categories": {"matmul": _cat(1e-3, 8e-4), "elementwise": _cat(5e-4, 5e-4)},
         "ops_added": [], "ops_removed": [], "ops_changed": [], "collectives": [],
         "findings_new": [], "findings_fixed": [], "gates": []}
    p.update(more)
    return p


def _record(*pairs, notes=(), tripped=()):
    return {"a": "a.hlo", "b": "b.hlo", "pairs": list(pairs), "notes": list(notes), "tripped": list(tripped)}


def test_change():
    assert _change(2.0, 2.0) == "="
    assert _change(0, 5) == "new"
    assert _change(2.0, 1.5) == "-25.0%"
    assert _change(-2.0, -1.0) == "+50.0%"  # (relative to the size of A)


def test_totals_and_categories():
    lines = diff_text(_record(_pair())).split("\n")
    assert lines[:4] == ["A: a.hlo", "B: b.hlo", "", "HloModule jit_step"]
    assert lines[4].split() == ["step_time", "2.00", "ms", "->", "1.50", "ms", "-25.0%"]
    assert lines[5].split() == ["flops", "1e+12", "->", "1e+12", "="]
    assert lines[6].split() == ["mfu", "25.0%", "->", "30.0%", "+20.0%"]
    assert lines[7].split() == ["findings", "0", "->", "2", "new"]
    assert lines[8] == "  by category (static time; FLOPs; HBM bytes):"
    # only the category that changed: matmul (elementwise is equal in all three)
    assert lines[9] == "    matmul             1.00 ms -> 800.00 us; 2e+09 -> 2e+09; 1.0 KiB -> 1.0 KiB"
    assert len(lines) == 10


def test_a_renamed_module_and_a_change_in_bytes_only():
    cat = _cat(1e-3, 1e-3)
    cat["bytes"] = {"a": 1024, "b": 2048, "delta": 1024}
    lines = diff_text(_record(_pair(b="jit_step_v2", categories={"copy": cat}))).split("\n")
    assert lines[3] == "HloModule jit_step -> jit_step_v2"
    assert lines[-1].endswith("; 1.0 KiB -> 2.0 KiB")


def test_ops_collectives_findings_verdicts_gates():
    added = [{"opcode": "copy", "op": f"c{k}", "forms": {"f32[8]": 1, "f32[4]": 2}} for k in range(22)]
    p = _pair(ops_added=added,
              ops_removed=[{"opcode": "transpose", "op": "t", "forms": {"bf16[2,2]": 1}}],
              ops_changed=[{"opcode": "dot", "op": "d", "a": {"f32[2,2]": 1}, "b": {}}] * 21,
              collectives=[{"opcode": "all-reduce", "moved_bytes": 4096, "async": True, "a": 1, "b": 2},
                           {"opcode": "all-gather", "moved_bytes": 2048, "async": False, "a": 2, "b": 0}],
              findings_new=[{"code": "H001", "count": 2, "message": "copy"}],
              findings_fixed=[{"code": "H005", "count": 1, "message": "pad"}],
              verdicts=["B is faster"], gates=[{"gate": "step_time", "tripped": True},
                                               {"gate": "bytes", "tripped": False}])
    lines = diff_text(_record(p, notes=["n1"], tripped=["step_time +5%"])).split("\n")
    body = lines[lines.index("  by category (static time; FLOPs; HBM bytes):") + 2:]
    assert body[0] == "  op added: copy [c0] f32[8] x1, f32[4] x2"
    assert sum(1 for ln in body if ln.startswith("  op added:")) == 20
    assert body[20] == "  op removed: transpose [t] bf16[2,2] x1"
    assert body[21] == "  op changed: dot [d] f32[2,2] x1 -> -"
    assert sum(1 for ln in body if ln.startswith("  op changed:")) == 20
    rest = body[41:]
    assert rest == ["  collective all-reduce 4.0 KiB async: x1 -> x2",
                    "  collective all-gather 2.0 KiB: x2 -> x0",
                    "  new finding: H001 x2: copy",
                    "  fixed finding: H005 x1: pad",
                    "  B is faster",
                    "  gate step_time: TRIPPED",
                    "  gate bytes: ok",
                    "note: n1",
                    "regression: step_time +5%"]


def test_an_op_that_appears():
    p = _pair(ops_changed=[{"opcode": "dot", "op": "d", "a": {}, "b": {"bf16[2,2]": 3}}])
    assert "  op changed: dot [d] - -> bf16[2,2] x3" in diff_text(_record(p)).split("\n")


def test_profile_diff():
    ops = [{"hlo_op": f"fusion.{k}", "a": 1e-3, "b": 2e-3, "count_a": 1, "count_b": 2} for k in range(27)]
    record = {"a": "a.pb", "b": "b.pb", "modules": {"jit_f": {"a": 1e-3, "b": 1e-3}, "": {"a": 0, "b": 1e-3}},
              "ops": ops}
    lines = profile_diff_text(record).split("\n")
    assert lines[2] == "  module jit_f: 1.00 ms -> 1.00 ms  ="
    assert lines[3] == "  module (none): 0.00 us -> 1.00 ms  new"
    assert lines[4] == "  ops by change in measured time:"
    assert lines[5].split() == ["fusion.0", "1.00", "ms", "->", "2.00", "ms", "x1", "->", "x2"]
    assert len(lines) == 5 + 25


def test_a_profile_diffs_long_op_is_cut_to_its_column():
    record = {"a": "a.pb", "b": "b.pb", "modules": {},
              "ops": [{"hlo_op": "f" * 50, "a": 1e-3, "b": 2e-3, "count_a": 1, "count_b": 1}]}
    line = profile_diff_text(record).split("\n")[3]
    assert line == "    " + "f" * 40 + "     1.00 ms ->     2.00 ms  x1 -> x1"
