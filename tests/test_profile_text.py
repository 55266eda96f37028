"""`hloscope profile` as text and JSON on a real GPU capture: the H100 programs captured with
command buffers off (fixtures/h100_no_command_buffers, ten programs called five times each).

Oracles: XProf's own hlo_stats of the capture (fixtures/gpu_captures.py): occurrences, total
and self time per op; the capture as jax's ProfileData reads it; counts worked out by hand
from the capture script (10 programs x 5 calls = 50 program runs).
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, xprof_hlo_stats
from typer.testing import CliRunner

from hloscope.cli.app import app

FOLDER = FIXTURES / "h100_no_command_buffers"
CAPTURE = FOLDER / "capture.xplane.pb"
HLO = sorted((FOLDER / "dump").glob("*after_optimizations.txt"))


def _xprof() -> dict[tuple[int, str], dict]:
    return xprof_hlo_stats(FOLDER / "xprof_hlo_stats.json")


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, ["profile", str(CAPTURE), "--no-cache", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _with_hlo() -> list[str]:
    return [a for p in HLO for a in ("--hlo", str(p))]


def _program(label: str) -> int:
    """The program id of a row's module label: `jit__lambda(35055)`, or for a name only one
    program has, the id in its dump's file name (module_76060.jit_attention_xla...)."""
    if label.endswith(")"):
        return int(label.rsplit("(", 1)[1].rstrip(")"))
    (pid,) = {int(p.name.split(".")[0][len("module_"):]) for p in HLO if p.name.split(".")[1] == label}
    return pid


def _gpu_events() -> int:
    from jax.profiler import ProfileData

    data = ProfileData.from_file(str(CAPTURE))
    return sum(1 for p in data.planes if p.name.startswith("/device:GPU") for line in p.lines
               for e in line.events if dict(e.stats).get("hlo_op"))


def test_raw_ops_equal_xprof():
    """Without --hlo: one row per (program, op), its count, total and self time XProf's (a
    GPU kernel that overlaps the one before it, as Hopper launches them, is not nested in it:
    self time is the whole time, as XProf has it)."""
    doc = json.loads(_run("--format", "json", "--top", "0"))
    xprof = _xprof()
    assert len(doc["ops"]) == len(xprof) == 30
    assert {(_program(r["module"]), r["hlo_op"]) for r in doc["ops"]} == set(xprof)
    for row in doc["ops"]:
        v = xprof[(_program(row["module"]), row["hlo_op"])]
        assert row["count"] == int(v["occurrences"])
        assert row["total_seconds"] * 1e6 == pytest.approx(float(v["total_time"]), rel=1e-6)
        assert row["self_seconds"] * 1e6 == pytest.approx(float(v["total_self_time"]), rel=1e-6)
    selfs = [r["self_seconds"] for r in doc["ops"]]
    assert selfs == sorted(selfs, reverse=True)


def test_raw_text_lists_the_top_rows_and_says_how_many_more():
    out = _run("--top", "4")
    head, _, _, columns, *rows = out.splitlines()
    assert head.startswith(f"{CAPTURE}: {_gpu_events()} op events")
    assert "device Nvidia, compute capability 9.0, 132 SMs, 79 GiB, roofline on NVIDIA H100 SXM" in head
    assert columns.split() == ["module", "op", "count", "self", "total", "self", "%"]
    assert rows[-1] == "  and 26 more (--top 0 lists all)"
    first = rows[0].split()
    assert first[:3] == ["jit__lambda(35055)", "custom-call.1", "5"]
    assert first[3:5] == ["13.202", "ms"] and first[5:7] == ["13.202", "ms"]


def test_text_with_the_hlo():
    """50 program runs; the host launched each of the 295 kernels itself (no command
    buffers); the HIGHEST gemm's row: 5 runs, 13.2015 ms in all, so 264.03 us per run of
    the 50 and 2.640 ms each; its roofline on the f32 peak."""
    out = _run("--top", "3", *_with_hlo())
    lines = out.splitlines()
    assert " 50 step(s) of " in lines[0]
    assert lines[1].startswith("  host: 295 kernel launch/copy call(s), ")
    assert lines[2].startswith("  by category, per step: custom kernel ")
    assert lines[3].split() == ["instruction", "category", "runs", "per", "step", "mean", "share", "roofline"]
    row = lines[4].split()
    assert row[:4] == ["jit__lambda(35055)/custom-call.1", "custom", "kernel", "5"]
    assert row[4:8] == ["264.03", "us", "2.640", "ms"]
    assert row[-2:] == ["2.051", "ms"]
    assert len([ln for ln in lines if ln.startswith("  jit")]) == 3
    assert lines[-1] == "  unmatched events: 0 (0 ops); executed instructions never seen: 1"


def test_categories_add_up_to_every_op():
    """The per-step categories, times the 50 runs, are the time of all 30 ops (XProf's sum)."""
    doc = json.loads(_run("--format", "json", *_with_hlo()))
    assert doc["steps"] == 50 and doc["devices"] == 1
    total = sum(float(v["total_time"]) for v in _xprof().values()) * 1e-6
    assert sum(doc["categories"].values()) == pytest.approx(total, rel=1e-6)
    assert doc["unseen_instructions"] == 1  # (the scan's condition: the loop knows its trip count)
    assert sum(r["count"] for r in doc["launches"]) == 295
