"""Trace linking on real profiles captured here, on the CPU, inside the test suite."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest
from conftest import CORPUS, FIXTURES, needs_corpus
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.lint import LintOptions, lint_files
from hloscope.parser import load
from hloscope.trace import TraceError, join, load_profile
from hloscope.trace import load as trace_load

runner = CliRunner()


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """Compile the scan model on the CPU, dump its HLO, run it 3 times under the profiler."""
    import jax
    import jax.numpy as jnp

    tmp = tmp_path_factory.mktemp("profile")

    def model(w, x):
        def step(h, wl):
            return jnp.tanh(h @ wl), None

        return jax.lax.scan(step, x, w)[0]

    w = jnp.ones((6, 512, 512), jnp.float32) * 0.01
    x = jnp.ones((16, 512), jnp.float32)
    compiled = jax.jit(model).lower(w, x).compile()
    hlo = tmp / "scan.hlo.txt"
    hlo.write_text(compiled.as_text())
    jax.block_until_ready(compiled(w, x))
    with jax.profiler.trace(str(tmp / "trace")):
        for _ in range(3):
            jax.block_until_ready(compiled(w, x))
    (xplane,) = (tmp / "trace").glob("plugins/profile/*/*.xplane.pb")
    return hlo, xplane, tmp / "trace"


def _direct_events(xplane, module_name):
    """Ground truth straight from ProfileData: (hlo_op -> [durations]) for the module."""
    from jax.profiler import ProfileData

    out = defaultdict(list)
    for plane in ProfileData.from_file(str(xplane)).planes:
        for line in plane.lines:
            for ev in line.events:
                st = dict(ev.stats)
                if st.get("hlo_module") == module_name and "hlo_op" in st:
                    out[st["hlo_op"]].append(ev.duration_ns)
    return out


def test_every_op_event_links_and_totals_match(captured):
    hlo, xplane, _ = captured
    (module,) = load(hlo)
    truth = _direct_events(xplane, module.name)
    assert truth, "the CPU profile has op events for the module"
    index = join(load_profile(xplane), [module])
    assert not [u for u in index.unmatched if u["module"] == module.name]
    assert {name for (_, name) in index.stats} == set(truth)
    for (_, name), s in index.stats.items():
        assert s.count == len(truth[name])
        assert s.total_ns == pytest.approx(sum(truth[name]))
        assert module.name and s.computation in module.by_name
    assert index.steps == 3


def test_profile_directory_and_trace_json_agree(captured):
    hlo, xplane, directory = captured
    (module,) = load(hlo)
    from_dir = join(load_profile(directory), [module])
    (trace_json,) = directory.glob("plugins/profile/*/*.trace.json.gz")
    from_json = join(load_profile(trace_json), [module])
    from_pb = join(load_profile(xplane), [module])
    counts = lambda ix: {k: s.count for k, s in ix.stats.items()}  # noqa: E731
    assert counts(from_dir) == counts(from_pb) == counts(from_json)


def test_a_copy_finding_carries_its_measured_time(captured):
    hlo, xplane, _ = captured
    (module,) = load(hlo)
    truth = _direct_events(xplane, module.name)
    report = lint_files([hlo], LintOptions(select=["H001"], trace=xplane))
    copies = [f for f in report.findings if f.code == "H001"]
    assert copies, "the scan model copies its input (not donated)"
    for f in copies:
        assert f.cost["measured_seconds"] == pytest.approx(sum(truth[f.instruction]) * 1e-9 / 3)
        assert 0 < f.cost["measured_share"] <= 1.0
    assert any("linked to instructions" in n for n in report.notes)
    assert "chip generic CPU (a few server cores) detected from the trace" in report.notes


def test_profile_command_json_contract(captured):
    hlo, xplane, _ = captured
    res = runner.invoke(app, ["profile", str(xplane), "--hlo", str(hlo), "--format", "json", "--chip", "cpu"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"instructions", "unmatched_events", "unseen_instructions"} <= set(out)
    rows = out["instructions"]
    keys = {"module", "instruction", "category", "count", "total_seconds", "mean_seconds", "share"}
    assert rows and all(keys <= set(r) for r in rows)
    assert sum(r["share"] for r in rows) == pytest.approx(sum(r["total_seconds"] for r in rows) / out["step_seconds"])
    assert all("roofline_seconds" in r and "gap_seconds" in r for r in rows)


def test_a_trace_of_another_program_is_an_error_naming_what_it_holds(captured, tmp_path):
    """A real CPU compile of a different program against the captured trace: exit 2, the
    trace's module named, the other file of the run still linted; --allow-mismatch runs."""
    import jax
    import jax.numpy as jnp

    other = tmp_path / "other.hlo.txt"
    other.write_text(jax.jit(lambda a: jnp.sin(a) @ a.T).lower(jnp.ones((16, 512))).compile().as_text())
    hlo, xplane, _ = captured
    res = runner.invoke(app, ["profile", str(xplane), "--hlo", str(other), "--chip", "cpu"])
    assert res.exit_code == 2
    assert "does not match" in res.output and "jit_model" in res.output and "0 of its" in res.output
    assert runner.invoke(app, ["profile", str(xplane), "--hlo", str(other), "--chip", "cpu",
                               "--allow-mismatch"]).exit_code == 0
    assert runner.invoke(app, ["profile", str(xplane), "--hlo", str(hlo), "--chip", "cpu"]).exit_code == 0
    res = runner.invoke(app, ["lint", "--format", "json", "--trace", str(xplane), str(other), str(hlo)])
    assert res.exit_code == 2
    out = json.loads(res.stdout)
    assert [e["file"] for e in out["errors"]] == [str(other)] and "jit_model" in out["errors"][0]["message"]
    assert out["summary"]["files"] == 2
    assert runner.invoke(app, ["lint", "--allow-mismatch", "--exit-zero", "--trace", str(xplane),
                               str(other)]).exit_code == 0


def test_trace_rules_are_skipped_with_a_note_without_a_trace():
    report = lint_files([FIXTURES / "rules" / "T004" / "transpose_copy_cpu.hlo.txt"], LintOptions(select=["T"]))
    assert report.findings == []
    assert [n for n in report.notes if "T004 (hot-copy)" in n and n.endswith("skipped: needs trace")]


# ------------------------------------------------------------------ bounded, clear errors
def test_gzip_bomb_is_refused(tmp_path):
    bomb = tmp_path / "bomb.trace.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (8 << 20)))
    with pytest.raises(TraceError, match="gzip bomb"):
        load_profile(bomb, max_bytes=1 << 20)


def test_truncated_gzip_and_json(tmp_path):
    good = gzip.compress(json.dumps({"traceEvents": []}).encode())
    cut = tmp_path / "cut.trace.json.gz"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(TraceError, match="truncated or corrupt gzip"):
        load_profile(cut)
    half = tmp_path / "half.trace.json"
    half.write_text('{"traceEvents": [{"ph": "X", ')
    with pytest.raises(TraceError, match="not valid JSON"):
        load_profile(half)


def test_truncated_xplane(tmp_path, captured):
    _, xplane, _ = captured
    cut = tmp_path / "cut.xplane.pb"
    cut.write_bytes(xplane.read_bytes()[:1000])
    with pytest.raises(TraceError, match="not a valid XSpace"):
        load_profile(cut)
    res = runner.invoke(app, ["profile", str(cut)])
    assert res.exit_code == 2 and "not a valid XSpace" in res.output


def test_event_cap_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_load, "TRACE_EVENT_CAP", 3)
    events = [{"ph": "X", "name": "a", "ts": i, "dur": 1, "args": {"hlo_op": "a", "hlo_module": "m"}}
              for i in range(3)]
    f = tmp_path / "capped.trace.json"
    f.write_text(json.dumps({"traceEvents": events}))
    assert "cut at jax's 3-event cap" in load_profile(f).warnings[0]


def test_size_and_event_limits(tmp_path, captured):
    _, xplane, _ = captured
    with pytest.raises(TraceError, match="over the 10-byte limit"):
        load_profile(xplane, max_bytes=10)
    with pytest.raises(TraceError, match="more than 1 op events"):
        load_profile(xplane, max_events=1)


@needs_corpus
def test_the_corpus_tpu_xplane_is_reported_as_mangled():
    """../shared/corpus/xprof/test_xplanes/tpu_inference_2.xplane.pb had every non-UTF-8
    byte replaced by U+FFFD on its way into the corpus: it is no longer a protobuf."""
    path = CORPUS / "xprof" / "test_xplanes" / "tpu_inference_2.xplane.pb"
    with pytest.raises(TraceError, match="U\\+FFFD sequences"):
        load_profile(path)


@needs_corpus
def test_real_tpu_op_stats_are_tabulated_per_hlo_op():
    path = CORPUS / "xprof" / "integration_golden" / "data_tpu-training_hlo_stats_tpu_training.json.gz"
    res = runner.invoke(app, ["profile", str(path), "--format", "json"])
    out = json.loads(res.stdout)
    ops = {r["hlo_op"]: r for r in out["ops"]}
    assert ops["dynamic-update-slice.33"]["count"] == 512
    assert ops["dynamic-update-slice.33"]["total_seconds"] == pytest.approx(0.20004287218)
    assert len(ops) > 300


# -------------------------------------------- synthetic traces with known answers (#19)
# Hand-written minimal module (labelled as such): two ops a profile can show.
_TWO_OPS = """HloModule two_ops, is_scheduled=true

ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  ROOT b = f32[256] negate(a)
}
"""


def _index(events):
    from hloscope.parser import parse
    from hloscope.trace.load import OpEvent, Profile

    modules = parse(_TWO_OPS)
    prof = Profile("synthetic", events=[OpEvent(m, op, dev, start, dur, run_id=run)
                                        for m, op, dev, start, dur, run in events])
    return join(prof, modules)


def test_join_keeps_other_modules_events_apart():
    index = _index([("two_ops", "a", "d0", 0, 10, 0), ("two_ops", "b", "d0", 10, 5, 0),
                    ("other", "a", "d0", 20, 100, 0), ("other", "b", "d0", 120, 100, 0)])
    assert index.stats[("two_ops", "a")].total_ns == 10 and index.stats[("two_ops", "b")].count == 1
    assert {(u["module"], u["hlo_op"], u["reason"]) for u in index.unmatched} == {
        ("other", "a", "module not loaded"), ("other", "b", "module not loaded")}


def test_overlapping_ops_are_busy_once():
    """Two ops overlapping by 5 ns on one device: busy 15 ns of a 15 ns step, not 20."""
    index = _index([("two_ops", "a", "d0", 0, 10, 0), ("two_ops", "b", "d0", 5, 10, 0)])
    assert (index.steps, index.step_ns, index.busy_ns) == (1, 15, 15)
    assert index.idle_fraction == 0


def test_the_step_is_taken_on_the_busiest_device():
    """d0 is busy 10 ns of [0,10]; d1 runs two 2 ns ops 20 ns apart: the step is d0's."""
    index = _index([("two_ops", "a", "d0", 0, 10, 0), ("two_ops", "a", "d1", 0, 2, 0),
                    ("two_ops", "b", "d1", 18, 2, 0)])
    assert (index.step_ns, index.busy_ns) == (10, 10)


@pytest.mark.parametrize(("event", "name"), [
    # the text of a real v6e capture's XLA Ops event, as quoted in issue #23
    ('%matmul_optimized.1 = f32[2048,2048]{1,0:T(8,128)} custom-call(f32[2048,1024]{1,0:T(8,128)} %x.1, '
     'f32[1024,2048]{1,0:T(8,128)} %y.1), custom_call_target="tpu_custom_call"', "matmul_optimized.1"),
    ("ROOT %fusion.3 = bf16[8]{0} fusion(%p), kind=kLoop", "fusion.3"),
    ("fusion.3", "fusion.3"),  # CPU/GPU events name the instruction alone
    ("copy-start.2", "copy-start.2"),
])
def test_xla_ops_events_named_by_instruction_text(event, name):
    from hloscope.trace.load import instruction_name

    assert instruction_name(event) == name


def test_one_trace_is_read_once_for_a_folder_and_its_report(tmp_path, monkeypatch):
    """lint of two modules with one --trace, then the HTML report of them: the profile is
    read once (it was read once per module, then again by the report); a profile whose
    file changed is read again. Both modules still get their measured findings."""
    import os
    import shutil

    import hloscope.lint
    import hloscope.trace
    from hloscope.html.build import build_report

    base = FIXTURES / "rules" / "T001" / "sort_cpu"
    paths = [tmp_path / "a.hlo.txt", tmp_path / "b.hlo.txt"]
    for p in paths:
        shutil.copy(base.with_suffix(".hlo.txt"), p)
    trace = tmp_path / "sort.trace.json.gz"
    shutil.copy(base.with_suffix(".trace.json.gz"), trace)
    reads = []
    real = hloscope.trace.load_profile
    monkeypatch.setattr(hloscope.trace, "load_profile", lambda p: reads.append(p) or real(p))
    monkeypatch.setattr(hloscope.lint, "_PROFILES", {})
    report = lint_files(paths, LintOptions(select=["T001"], chip="cpu", trace=trace))
    assert sorted(f.file for f in report.findings) == sorted(map(str, paths))
    build_report(paths, chip="cpu", trace=trace, select=["T001"])
    assert len(reads) == 1
    os.utime(trace, ns=(1, 1))  # (another time: a changed file)
    lint_files(paths[:1], LintOptions(select=["T001"], chip="cpu", trace=trace))
    assert len(reads) == 2
