"""XProf's own tables from a real TPU training capture (corpus xprof/integration_golden): the
op table ranked by self time with XProf's categories, framework ops read and grouped, the
other tool outputs named for what they are (#35 point 4)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest
from conftest import CORPUS, needs_corpus
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.trace import load_profile
from hloscope.trace.events import OpEvent
from hloscope.trace.report import categories_of, raw_ops, self_times

pytestmark = needs_corpus
GOLDEN = CORPUS / "xprof" / "integration_golden"
HLO_STATS = GOLDEN / "data_tpu-training_hlo_stats_tpu_training.json.gz"
FRAMEWORK = GOLDEN / "data_tpu-training_framework_op_stats_tpu_training.json.gz"


def _rows(path):
    doc = json.load(gzip.open(path))
    table = doc[-1] if isinstance(doc, list) else doc
    cols = [c["id"] for c in table["cols"]]
    return [dict(zip(cols, [c.get("v") for c in r["c"]])) for r in table["rows"]]


def test_category_breakdown_equals_xprofs():
    """Self time per category, as XProf's hlo_stats chart shows it (convolution fusion
    33.5%, custom fusion 14.7%, ...), from the table's own category column."""
    xprof: dict[str, float] = defaultdict(float)
    for r in _rows(HLO_STATS):
        xprof[r["category"]] += r["total_self_time"] * 1e-6
    ours = categories_of(raw_ops(load_profile(HLO_STATS)))
    assert list(ours) == sorted(xprof, key=lambda k: -xprof[k])
    for k, v in xprof.items():
        assert ours[k] == pytest.approx(v, rel=1e-9)
    total = sum(ours.values())
    assert round(ours["convolution fusion"] / total * 100, 1) == 33.5


def test_the_op_table_ranks_by_self_time_not_inclusive():
    """while.10 takes 2.737 s inclusive and 0.47 ms of its own: it is not the top op."""
    ops = raw_ops(load_profile(HLO_STATS))
    top = ops[0]
    assert top["hlo_op"] == "dynamic-update-slice.33"
    loop = next(r for r in ops if r["hlo_op"] == "while.10")
    assert loop["total_seconds"] == pytest.approx(2.737, rel=1e-3) and loop["self_seconds"] < 1e-3
    assert [r["self_seconds"] for r in ops] == sorted((r["self_seconds"] for r in ops), reverse=True)


def test_framework_op_stats_are_read_and_group_by_pass():
    prof = load_profile(FRAMEWORK)
    rows = [r for r in _rows(FRAMEWORK) if r["type"] != "IDLE"]
    assert len(prof.aggregated) == len(rows) == 265
    assert sum(t for _, t in prof.aggregated.values()) == pytest.approx(
        sum(r["total_time"] for r in rows) * 1e3)
    out = CliRunner().invoke(app, ["profile", str(FRAMEWORK), "--by", "pass", "--format", "json"])
    assert out.exit_code == 0, out.output
    groups = {g["key"]: g for g in json.loads(out.stdout)["breakdown"]["groups"]}
    assert set(groups) == {"forward", "backward", "other"}
    assert groups["backward"]["seconds"] > groups["forward"]["seconds"]  # (remat recomputes)


@pytest.mark.parametrize("tool", ["overview_page", "op_profile", "memory_profile", "input_pipeline_analyzer",
                                  "roofline_model", "graph_viewer"])
def test_other_tool_outputs_are_named_not_read_as_empty(tool):
    path = next(GOLDEN.glob(f"*{tool}*"))
    res = CliRunner().invoke(app, ["profile", str(path)])
    assert res.exit_code == 2
    assert f"XProf's {tool} tool output, not a per-op table" in res.output


def test_self_time_subtracts_nested_events():
    """A while op's span holds its body's two ops (hand-made events): its self time is what
    is left; the ops beside it keep theirs."""
    ev = lambda op, start, dur: OpEvent("m", op, "line", start, dur)  # noqa: E731
    events = [ev("while", 0, 100), ev("a", 10, 30), ev("b", 50, 40), ev("c", 120, 10)]
    assert self_times(events) == [30, 30, 40, 10]


def test_framework_ops_grouped_by_pass_in_text_are_the_json_groups():
    from hloscope.units import human_seconds

    doc = json.loads(CliRunner().invoke(app, ["profile", str(FRAMEWORK), "--by", "pass", "--format", "json"]).stdout)
    b = doc["breakdown"]
    rows = [r for r in _rows(FRAMEWORK) if r["type"] != "IDLE"]
    assert b["total"]["ops"] == len(rows)
    text = CliRunner().invoke(app, ["profile", str(FRAMEWORK), "--by", "pass", "--top", "2"]).stdout.splitlines()
    at = text.index(f"  by pass: {human_seconds(b['total']['seconds'], 3)} of measured time over {len(rows)} op(s)")
    shown = [g for g in b["groups"]][:2]  # --top 2: two groups, then the rest counted
    for line, g in zip(text[at + 2:at + 4], shown):
        assert line.split()[0] == g["key"]
        assert f"{g['share'] * 100:5.1f}%" in line and human_seconds(g["seconds"], 3) in line
    rest = b["groups"][2:]
    assert text[at + 4] == (f"  and {len(rest)} more ({sum(g['share'] for g in rest) * 100:.1f}%; "
                            "--top 0 lists all)")
