"""`hloscope diff`: real compiles of one program differing in one change (fixtures/rules/:
a bf16 vs an f32 matmul on v5e; a sharded weight vs one gathered whole on v5p), the deltas
derived by hand from the change, and the CI gate's exit codes."""

from __future__ import annotations

import json

from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app

runner = CliRunner()
BF16 = FIXTURES / "rules" / "H010" / "bf16_matmul_v5e.hlo.txt"
F32 = FIXTURES / "rules" / "H010" / "f32_matmul_v5e.hlo.txt"
SHARDED = FIXTURES / "rules" / "H007" / "sharded_weight_v5p.hlo.txt"
GATHERED = FIXTURES / "rules" / "H007" / "gather_whole_weight_v5p.hlo.txt"


def _diff(a, b, *extra) -> tuple[int, dict]:
    result = runner.invoke(app, ["diff", str(a), str(b), "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_bf16_to_f32_matmul_doubles_bytes_keeps_flops_and_adds_h010():
    code, doc = _diff(BF16, F32, "--chip", "v5e")
    (p,) = doc["pairs"]
    t = p["totals"]
    assert t["flops"]["a"] == t["flops"]["b"] == 2 * 1024**3  # same matmul
    # HBM traffic: two 1024x1024 operands and the result at 2 bytes, then at 4
    assert t["bytes"]["b"] == 2 * t["bytes"]["a"] == 2 * 3 * 1024 * 1024 * 2
    assert t["step_time"]["b"] > t["step_time"]["a"]  # f32 runs the MXU in several passes
    assert [f["code"] for f in p["findings_new"]] == ["H010"] and p["findings_fixed"] == []
    changed = {o["opcode"] for o in p["ops_changed"]}
    assert "fusion" in changed and not p["ops_added"] and not p["ops_removed"]
    back_code, back = _diff(F32, BF16, "--chip", "v5e")
    assert [f["code"] for f in back["pairs"][0]["findings_fixed"]] == ["H010"]
    assert code == back_code == 0  # no gate asked


def test_gathering_the_whole_weight_adds_one_exposed_all_gather():
    _, doc = _diff(SHARDED, GATHERED, "--chip", "v5p")
    (p,) = doc["pairs"]
    assert [(c["opcode"], c["a"], c["b"]) for c in p["collectives"]] == [("all-gather", 0, 1)]
    assert p["totals"]["exposed"]["a"] == 0 and p["totals"]["exposed"]["b"] > 0
    assert {f["code"] for f in p["findings_new"]} == {"H007", "H008"}


def test_fail_if_gates_give_ci_its_exit_code():
    code, doc = _diff(BF16, F32, "--chip", "v5e", "--fail-if", "step_time>+3%")
    assert code == 1 and doc["tripped"] and doc["pairs"][0]["gates"][0]["tripped"]
    code, _ = _diff(F32, BF16, "--chip", "v5e", "--fail-if", "step_time>+3%", "--fail-if", "findings>+0")
    assert code == 0
    code, _ = _diff(BF16, F32, "--chip", "v5e", "--fail-if", "findings>+0")
    assert code == 1
    bad = runner.invoke(app, ["diff", str(BF16), str(F32), "--fail-if", "speed<3"])
    assert bad.exit_code == 2 and "bad --fail-if" in bad.output


def test_dump_folders_and_profiles():
    code, doc = _diff(FIXTURES / "dumps" / "memory_mlp_train_v5e", FIXTURES / "dumps" / "memory_remat_train_v5e")
    assert len(doc["pairs"]) == 1  # one module each: paired whatever their names
    t1 = FIXTURES / "rules" / "T004" / "transpose_copy_cpu.trace.json.gz"
    t2 = FIXTURES / "rules" / "T004" / "elementwise_cpu.trace.json.gz"
    result = runner.invoke(app, ["diff", str(t1), str(t2), "--format", "json"])
    assert result.exit_code == 0, result.output
    prof = json.loads(result.stdout)
    assert prof["ops"] and all("delta" in r for r in prof["ops"])
    mixed = runner.invoke(app, ["diff", str(BF16), str(t1)])
    assert mixed.exit_code == 2 and "like with like" in mixed.output


def test_the_html_report_carries_the_comparison(tmp_path):
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(F32), "--against", str(BF16), "--chip", "v5e", "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert f"Compared with {BF16}" in html and "+100.0%</td>" in html  # bytes doubled
    assert "New findings:" in html and "<code>H010</code>" in html


def test_a_finding_whose_layout_moved_is_neither_new_nor_fixed(tmp_path):
    """The real scan-carry compile (H001 fires on its copies) beside the same text with every
    2-D layout flipped to column-major (DERIVED here, only layouts changed): the findings are
    the same ones, so the diff has none new or fixed, and the findings gate holds."""
    real = FIXTURES / "rules" / "H001" / "scan_carry_cpu.hlo.txt"
    moved = tmp_path / "scan_carry_column_major.hlo.txt"
    moved.write_text(real.read_text().replace("{1,0}", "{0,1}"))
    code, doc = _diff(real, moved, "--fail-if", "findings>+0")
    (p,) = doc["pairs"]
    assert p["findings_new"] == [] and p["findings_fixed"] == []
    assert code == 0
    new = {f["fingerprint"] for f in p["findings_new"]}
    assert not new & {f["fingerprint"] for f in p["findings_fixed"]}


def test_a_donation_that_lowers_the_peak_is_named_an_improvement():
    """The zoo's MLP train step on v5e, params and optimizer state donated or not (real
    compiles): XLA's memory_analysis has the donated one alias 16 MiB and peak 16 MiB lower."""
    from conftest import manifest

    plain, donated = (FIXTURES / "zoo" / f"{n}.hlo.txt" for n in ("mlp_train_v5e", "mlp_train_donated_v5e"))
    mem = {n: manifest()[f"zoo_{n}"]["memory_analysis"] for n in ("mlp_train_v5e", "mlp_train_donated_v5e")}
    alias = mem["mlp_train_donated_v5e"]["alias_size_in_bytes"]
    assert mem["mlp_train_v5e"]["alias_size_in_bytes"] == 0 and alias == 16 * 2**20

    code, doc = _diff(plain, donated, "--chip", "v5e", "--fail-if", "findings>+0")
    (p,) = doc["pairs"]
    assert code == 0
    assert p["totals"]["donated"]["a"] == 0 and p["totals"]["donated"]["b"] == alias
    xla_peak = {n: m["argument_size_in_bytes"] + m["output_size_in_bytes"] - m["alias_size_in_bytes"]
                + m["temp_size_in_bytes"] for n, m in mem.items()}
    assert p["totals"]["hbm_peak"]["delta"] == xla_peak["mlp_train_donated_v5e"] - xla_peak["mlp_train_v5e"]
    (verdict,) = p["verdicts"]
    assert verdict.startswith("improvement: B donates 16.0 MiB") and "(-40.0%)" in verdict
    # and the other way round it is a regression, said so
    _, back = _diff(donated, plain, "--chip", "v5e")
    assert back["pairs"][0]["verdicts"][0].startswith("regression: B donates 16.0 MiB less")
    text = runner.invoke(app, ["diff", str(plain), str(donated), "--chip", "v5e"]).output
    assert "improvement: B donates 16.0 MiB more" in text
