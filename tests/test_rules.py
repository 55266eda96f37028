"""Every rule on its real fixtures: exact expected findings, a positive case and a clean twin."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, FIXTURES, fixture_files, needs_corpus

from hloscope.lint import LintOptions, lint_files
from hloscope.parser import load
from hloscope.rules.base import Severity
from hloscope.rules.registry import load_rules

RULE_DIR = FIXTURES / "rules"
CASES = sorted(RULE_DIR.glob("*/*.hlo.txt"))


def _render(findings) -> str:
    return "".join(f"{f.code} {f.line}:{f.column} {f.computation}/{f.instruction}: {f.message}\n"
                   for f in findings)


def chip_of(case) -> str | None:
    """The chip a rule fixture was compiled for (manifest topology), e.g. 'v5p'."""
    import json

    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    rel = str(case.relative_to(FIXTURES))
    for entry in manifest.values():
        if entry["file"] == rel:
            return entry["topology"].split(":")[0] if entry.get("topology") else entry["platform"]
    return None


def trace_of(case):
    """The profile beside a rule fixture, if any (<case>.trace.json[.gz] or .xplane.pb)."""
    for suffix in (".trace.json.gz", ".trace.json", ".xplane.pb"):
        candidate = case.with_name(case.name.replace(".hlo.txt", suffix))
        if candidate.exists():
            return candidate
    return None


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rule_fixture(case, request):
    code = case.parent.name
    report = lint_files([case], LintOptions(select=[code], chip=chip_of(case), trace=trace_of(case)))
    got = _render(sorted(report.findings, key=lambda f: (f.line, f.column, f.instruction)))
    expected_path = case.with_suffix("").with_suffix(".expected")
    fresh = expected_path.with_name(expected_path.name + ".new")
    if request.config.getoption("--regen-expected"):
        # a person reviews each .expected.new and moves it in (as snapshot tools do); until
        # then test_no_snapshot_awaits_review fails
        if not expected_path.exists() or expected_path.read_text() != got:
            fresh.write_text(got)
        elif fresh.exists():
            fresh.unlink()
        return
    assert expected_path.exists(), f"missing {expected_path.name}; run pytest --regen-expected"
    assert got == expected_path.read_text()


def test_no_snapshot_awaits_review():
    waiting = sorted(str(p.relative_to(FIXTURES)) for p in RULE_DIR.glob("*/*.expected.new"))
    assert not waiting, ("review these new expected outputs, then move each over its .expected "
                         "(mv X.expected.new X.expected):\n" + "\n".join(waiting))


@pytest.mark.parametrize("code", sorted(load_rules()))
def test_every_rule_has_a_positive_case_and_a_clean_twin(code):
    cases = sorted((RULE_DIR / code).glob("*.hlo.txt"))
    expected = [c.with_suffix("").with_suffix(".expected").read_text() for c in cases]
    assert any(e.strip() for e in expected), f"{code}: no fixture where it fires"
    assert any(not e.strip() for e in expected), f"{code}: no clean twin"


def test_rule_fixtures_are_labelled_real_compiler_output():
    import json

    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    generated = {entry["file"] for entry in manifest.values()}
    for case in CASES:
        rel = str(case.relative_to(FIXTURES))
        text = case.read_text()
        first = text.splitlines()[0]
        if first.startswith("// CORPUS "):  # real output copied from the corpus, unchanged
            source = CORPUS / first.split()[2].rstrip(":")
            if source.exists():
                assert text[len(first) + 1:] == source.read_text(), rel
            trace = trace_of(case)
            if trace is not None:  # its capture, copied too, named on that line
                capture = CORPUS / first.split("trace: ", 1)[1].strip()
                assert not capture.exists() or capture.read_bytes() == trace.read_bytes(), rel
            continue
        assert rel in generated or first.startswith("// HAND-WRITTEN"), rel
        trace = trace_of(case)
        if trace is not None and trace.suffix == ".json":  # hand-written traces say so inside
            assert json.loads(trace.read_text())["hloscope_note"].startswith("HAND-WRITTEN")
        if trace is not None and trace.name.endswith(".xplane.pb"):
            # synthetic TPU-structured captures: exactly what the labelled writer makes
            from tpu_captures import RULE_CAPTURES, rule_capture

            key = f"{case.parent.name}/{case.name.removesuffix('.hlo.txt')}"
            assert key in RULE_CAPTURES, key
            import tempfile

            with tempfile.TemporaryDirectory() as d:
                fresh = Path(d) / "c.xplane.pb"
                rule_capture(key, fresh)
                assert fresh.read_bytes() == trace.read_bytes(), f"{trace} differs from its writer"


def test_lint_all_fixtures_in_one_call():
    files = fixture_files()
    report = lint_files(files, LintOptions(chip="v5p"))  # K006 needs a megacore chip
    assert report.files == [str(f) for f in files]
    codes = {f.code for f in report.findings}
    static = {c for c, r in load_rules().items() if "trace" not in r.requires}
    # every static rule fires somewhere in the fixtures; H012 (HBM peak) only on the chip
    # its fixture was compiled to nearly fill, a v5e (16 GiB, not the v5p's 95)
    assert static - {"H012"} <= codes
    near_full = lint_files([FIXTURES / "rules" / "H012" / "near_full_v5e.hlo.txt"], LintOptions(chip="v5e"))
    assert "H012" in {f.code for f in near_full.findings} and "H012" not in codes
    assert any("skipped: needs trace" in n for n in report.notes)
    assert "X000" not in codes  # no rule crashed


def _h006(f, *args):
    """H006's findings on the pre-optimization HLO JAX lowers f to (before XLA's CSE)."""
    import jax

    import hloscope

    text = jax.jit(f).lower(*args).as_text(dialect="hlo")
    return hloscope.load(text).lint(select=["H006"]).findings


def test_h006_reports_a_repeated_chain_once_at_its_root():
    """g(x) called twice computes each of its three ops twice: one finding, at the second
    call's first op, naming the other two as its followers. Bytes wasted, derived by hand:
    each op reads and writes one f32[64,1024] (256 KiB), 3 x 512 KiB. Twins: g of another
    input repeats nothing; exp(x) shared by two different ops is one finding, no followers."""
    import jax.numpy as jnp

    def g(x):
        return jnp.sin(jnp.tanh(jnp.exp(x)))

    x = jnp.ones((64, 1024), jnp.float32)
    (found,) = _h006(lambda x: g(x) / g(x), x)
    assert found.evidence["opcode"] == "exponential"
    assert [n.split(".")[0] for n in found.evidence["followers"]] == ["tanh", "sin"]
    assert "2 op(s) computed from it repeat theirs too" in found.message
    assert found.cost["bytes_wasted"] == 3 * 2 * 64 * 1024 * 4
    assert _h006(lambda x, y: g(x) / g(y), x, x) == []
    (alone,) = _h006(lambda x: jnp.tanh(jnp.exp(x)) / jnp.sin(jnp.exp(x)), x)
    assert alone.evidence["opcode"] == "exponential" and "followers" not in alone.evidence
    assert alone.cost["bytes_wasted"] == 2 * 64 * 1024 * 4


def test_h006_is_silent_on_buffers_allocated_alike():
    """XLA's TPU compiler gives each scan output its own `AllocateBuffer` call (no operands,
    nothing computed); two of one shape are two buffers, not one value computed twice. The
    real RNN training compile holds such pairs (counted from its text); none is reported."""
    path = FIXTURES / "zoo" / "rnn_train_v5e.hlo.txt"
    (module,) = load(path)
    allocs = [i for i in module.instructions() if i.opcode == "custom-call"
              and i.attr("custom_call_target") == "AllocateBuffer"]
    shapes = [a.shape_text for a in allocs]
    assert len(shapes) > len(set(shapes))  # some share a shape
    report = lint_files([path], LintOptions(select=["H006"], chip="v5e"))
    assert not {f.instruction for f in report.findings} & {a.name for a in allocs}


def test_t001_bounds_an_f32_matmul_at_default_precision_as_one_bf16_pass():
    """The CPU fixture's f32[512,512] x f32[512,512] matmul with its real CPU trace, linted
    for TPU v5e (a trace from another chip: only the bound matters here). The dot prints no
    operand_precision (DEFAULT), which a TPU runs as one bf16 MXU pass (XLA's estimated
    cycles for f32 DEFAULT equal bf16's: tests/test_precision.py). Derived by hand: 2 x 512^3
    FLOPs at v5e's bf16 peak (197 TFLOP/s) is 1.36 us, under the memory time (3 x 1 MiB at
    819 GB/s, 3.84 us), so the bound is the memory time; at the six-pass f32 rate it would
    have been 8.18 us."""
    base = RULE_DIR / "T001" / "matmul_cpu"
    report = lint_files([base.with_suffix(".hlo.txt")],
                        LintOptions(select=["T001"], chip="v5e", trace=base.with_suffix(".trace.json.gz")))
    (found,) = report.findings
    assert found.evidence["flops"] == 2 * 512**3
    assert found.evidence["roofline_seconds"] == pytest.approx(3 * 512 * 512 * 4 / 819e9)


def test_h001_help_knows_whether_the_input_is_donated():
    """Real CPU compiles: an input donated and also returned unchanged is still copied; the
    help must not ask to donate it. The scan carry's copy comes from a parameter that is not
    donated: there donation is the advice."""
    donated = lint_files([RULE_DIR / "H001" / "donated_return_old_cpu.hlo.txt"],
                         LintOptions(select=["H001"])).findings
    assert donated and all("donate" not in f.help.lower() for f in donated)
    assert all("input_output_alias" in f.help for f in donated)
    plain = lint_files([RULE_DIR / "H001" / "scan_carry_cpu.hlo.txt"], LintOptions(select=["H001"])).findings
    assert any("donate_argnums" in f.help for f in plain)


def test_no_tpu_words_on_cpu_or_gpu_modules():
    """Every real CPU compile among the fixtures and the corpus's GPU test modules, linted with
    every rule: no message or help speaks of the MXU, ICI or VMEM (TPU parts)."""
    import re

    from conftest import CORPUS

    paths = sorted(FIXTURES.glob("**/*cpu*.hlo.txt"))
    paths += sorted((CORPUS / "gpu" / "xla-tests").glob("*.hlo")) if (CORPUS / "gpu").is_dir() else []
    report = lint_files(paths, LintOptions(select=["ALL"]))
    words = re.compile(r"\bMXU\b|\bICI\b|\bVMEM\b|TensorCore")
    said = [(f.file, f.code, f.message + " " + f.help) for f in report.findings
            if words.search(f.message + " " + f.help)]
    assert len(paths) > 20 and not said, said[:3]


def _h004(path):
    return lint_files([path], LintOptions(select=["H004"])).findings


def test_h004_silent_on_backward_matmuls_of_an_mlp():
    """Real MLP train steps: dW = x^T g and dx = g W^T share the upstream gradient g but
    contract different dimensions of it: never one matmul (the rule used to pair them)."""
    for name in ("mlp_train_v5e", "mlp_train_deep_v5p", "mlp_adam_v5e"):
        assert _h004(FIXTURES / "zoo" / f"{name}.hlo.txt") == [], name


def test_h004_names_the_activation_not_the_norm_statistics():
    """Q/K/V after an RMS norm (real compiles): the shared operand named is the bf16
    activation [4, 512, 1024], never the f32 [4, 512] statistics fused beside it."""
    for path in (RULE_DIR / "H004" / "separate_qkv_v5p.hlo.txt", FIXTURES / "zoo" / "transformer_fwd_v5e.hlo.txt"):
        found = _h004(path)
        assert found, path
        (m,) = load(path)
        for f in found:
            shared = m[f.computation][f.evidence["shared_operand"]].shape
            assert str(shared).startswith("bf16[4,512,1024]"), (path.name, shared)


def test_h004_reports_the_independent_pair_beside_a_dependent_third():
    """a = x @ w1, b = x @ w2, c = x @ w3 + softmax(a @ b^T) (a real v5e compile): c reads x
    too, and a and b through its fused epilogue, so only (a, b) can become one matmul; it is
    reported, without c."""
    (m,) = load(RULE_DIR / "H004" / "dependent_third_v5e.hlo.txt")
    (f,) = _h004(RULE_DIR / "H004" / "dependent_third_v5e.hlo.txt")
    root = m.entry.root
    assert len(f.evidence["matmuls"]) == 2 and root.name not in f.evidence["matmuls"]
    feeds, todo = set(), list(root.operands)  # everything the third one reads, transitively
    while todo:
        name = todo.pop()
        if name not in feeds:
            feeds.add(name)
            todo += m.entry.by_name[name].operands
    assert set(f.evidence["matmuls"]) <= feeds


def test_h004_silent_where_merging_costs_time():
    """Pairs whose results meet in a gate (gelu(a) * b; a SwiGLU's silu(x w1) * (x w3)) and a
    train step's weight-gradient pairs (x^T g1, x^T g3): real compiles where the rule used to
    fire. XLA's own estimates make the merged form slower there (bench/split_dot.py: the gate
    14-66% more cycles on v5e/v5p/v6e), so it stays silent."""
    for name in ("gated_pair_v5e", "swiglu_train_v5p"):
        assert _h004(RULE_DIR / "H004" / f"{name}.hlo.txt") == [], name


@needs_corpus
def test_h004_on_llama_pairs_only_the_forward_kv_projections():
    """Llama 3.1 8B's train step (XLA's benchmark dump, no metadata): 32 layers, each with
    grouped-query K and V projections of one normed activation by [4096, 8, 128] weights. The
    SwiGLU gate pairs and the backward weight-gradient pairs (contracting [2, 8192] rows) are
    not reported: one finding per layer."""
    from conftest import CORPUS

    found = _h004(CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo")
    assert len(found) == 32
    assert {(f.evidence["weights"], f.evidence["contracting"], len(f.evidence["matmuls"]))
            for f in found} == {("bf16[4096,8,128]", "{2}", 2)}


def test_h007_per_layer_gathers_are_the_pattern_its_help_recommends():
    """Mixtral 8x7B (XLA's benchmark dump): 128 per-layer 32 MiB weight gathers and its two
    250 MiB embedding gathers; the FSDP compiles: 4 and 6 per-layer gathers. Per-layer gathering
    is what H007's own advice leads to: info, with advice about overlap and residency, never a
    warning telling the user to gather per layer."""
    from conftest import CORPUS

    mixtral = CORPUS / "xla-benchmark-hlo" / "hlo_mixtral_8x7b_bf16_1x8.hlo"
    paths = [FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt", FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"]
    for path in paths + ([mixtral] if mixtral.exists() else []):
        found = lint_files([path], LintOptions(select=["H007"])).findings
        per_layer = [f for f in found if "per_layer" in f.evidence]
        assert per_layer and all(f.severity == Severity.INFO for f in per_layer), path.name
        assert all("gather per layer" not in f.help for f in per_layer)
        if path == mixtral:
            assert len(per_layer) == 128
            assert sorted(f.evidence["result_bytes"] >> 20 for f in found if f not in per_layer) == [250, 250]
    (whole,) = lint_files([RULE_DIR / "H007" / "gather_whole_weight_v5p.hlo.txt"], LintOptions(select=["H007"])).findings
    assert whole.severity == Severity.WARNING and "per_layer" not in whole.evidence


def _dus_module(target: str, update: str) -> str:
    """HAND-WRITTEN minimal module: one dynamic-update-slice of `update` into `target`."""
    rank = target.split("[")[1].split("]")[0].count(",") + 1
    zeros = ", ".join(["z"] * (rank - 1))
    return (f"HloModule m, is_scheduled=true\nENTRY e {{\n  t = {target} parameter(0)\n"
            f"  u = {update} parameter(1)\n  i = s32[] parameter(2)\n  z = s32[] constant(0)\n"
            f"  ROOT d = {target} dynamic-update-slice(t, u, i, {zeros})\n}}\n")


def _h014(text: str) -> list:
    from hloscope.parser import parse
    from hloscope.rules.engine import run

    return run(parse(text, "h014"), [load_rules()["H014"]()]).findings


def test_h014_on_the_real_v5p_captures_slowest_updates():
    """The corpus's real v5p capture (XProf hlo_stats): its three dynamic-update-slices write
    one layer's f32[1,7168,512] gradient into a f32[16,...] stack laid out {2,0,1}: dimension 0
    (the layers) is the tile's 8-row dimension. Each touches 8 x 7168 x 512 x 4 =
    117,440,512 bytes of whole tiles (by hand) for a 14,680,064-byte update; measured, they
    take the three largest shares of the step's time, 14% together. Its two small ones
    (f32[1,2048] rows) are partial too, but under min_bytes."""
    import gzip
    import json

    from hloscope.parser.attrs import parse_shape
    from hloscope.rules.helpers import partial_dims, touched_tile_bytes

    path = CORPUS / "xprof/integration_golden/data_tpu-training_hlo_stats_tpu_training.json.gz"
    if not path.exists():
        pytest.skip("shared/corpus not beside the repository")
    table = json.loads(gzip.decompress(path.read_bytes()))
    labels = [c["label"] for c in table["cols"]]
    rows = [dict(zip(labels, [c.get("v") if c else None for c in r["c"]])) for r in table["rows"]]
    updates = [r for r in rows if r["HLO op category"] == "dynamic-update-slice"]
    by_share = sorted(rows, key=lambda r: -r["Total self time (%)"])
    big = [r for r in updates if r["Avg. self time (us)"] > 100]
    assert [r["HLO op name"] for r in by_share[:3]] == [r["HLO op name"] for r in
                                                        sorted(big, key=lambda r: -r["Total self time (%)"])]
    assert sum(r["Total self time (%)"] for r in big) > 14
    for r in updates:
        text = r["HLO op text"]
        target = parse_shape(text.split(" = ", 1)[1].split(" dynamic-update-slice(")[0])
        update = parse_shape(text.split("(", 1)[1].split(", ", 1)[1].split(" %")[0])
        assert partial_dims(target, update) == [(0, 1, 8)]
        fired = _h014(_dus_module(target.text(), update.text()))
        if r in big:
            assert touched_tile_bytes(target, update) == 117_440_512
            assert update.logical_bytes == 14_680_064
            assert [f.evidence["tile_bytes"] for f in fired] == [117_440_512]
        else:  # f32[1,2048] into f32[16,2048]: 8 x 2048 x 4 x 2 = 128 KiB of tiles, under min_bytes
            assert touched_tile_bytes(target, update) == 65_536 and fired == []


def test_h014_partial_lanes_fire_whole_tiles_and_small_updates_do_not():
    """Hand-derived: 64 of 128 lanes along the minor dimension is a partial tile (8 x 128 x 4 B
    = 4 KiB a tile, 2048 tiles: 8 MiB, read and written: 16 MiB); 8 rows of an 8-row tile are
    whole tiles; one row of a small buffer touches under min_bytes (8 x 128 x 4 x 2 = 8 KiB)."""
    (lanes,) = _h014(_dus_module("f32[2048,16,256]{2,1,0:T(8,128)}", "f32[2048,16,64]{2,1,0:T(8,128)}"))
    assert lanes.evidence["dimension"] == 2 and lanes.evidence["tile_bytes"] == 2048 * 16 * 128 * 4
    assert _h014(_dus_module("f32[64,1024,1024]{2,0,1:T(8,128)}", "f32[8,1024,1024]{2,0,1:T(8,128)}")) == []
    assert _h014(_dus_module("f32[16,128]{1,0:T(8,128)}", "f32[1,128]{1,0:T(8,128)}")) == []
    (row,) = _h014(_dus_module("f32[16,1024,1024]{2,0,1:T(8,128)}", "f32[1,1024,1024]{2,0,1:T(1,128)}"))
    assert row.evidence["tile_bytes"] == 8 * 1024 * 1024 * 4 and "relayout" not in row.evidence


def test_h002_on_a_relayout_that_only_feeds_a_partial_tile_update_points_to_h014():
    """The real scanned step stacked on axis 1: XLA retiles each layer's gradient to T(1,128)
    (%copy.6, read off the text) only to write it one row per tile; H002's generic advice
    (transpose weights, einsum orders) does not apply there, H014's does. Its twin copy in
    H002's own positive keeps the generic help."""
    path = RULE_DIR / "H014" / "stacked_axis1_v5p.hlo.txt"
    (found,) = lint_files([path], LintOptions(select=["H002"], chip="v5p")).findings
    (module,) = load(path)
    dus = next(i for i in module.instructions() if i.opcode == "dynamic-update-slice" and "copy.6" in i.operands)
    assert found.instruction == "copy.6" and found.evidence["partial_tile_update"] == dus.name
    # each of the loop's 16 trips retiles 4 MiB (f32[1,1024,1024]) in and out: 8 MiB a trip
    assert found.evidence["trips"] == 16 and found.evidence["bytes"] == 2 * 1024 * 1024 * 4
    assert found.cost["bytes_wasted"] == 16 * 2 * 1024 * 1024 * 4
    assert "H014" in found.help and "transpose weights" not in found.help
    (plain,) = lint_files([RULE_DIR / "H002" / "transpose_out_v5e.hlo.txt"],
                          LintOptions(select=["H002"], chip="v5e")).findings
    assert "partial_tile_update" not in plain.evidence and "transpose weights" in plain.help


def _equal_pairs(module, opcode: str) -> list[tuple]:
    """Pairs of instructions of one computation with this opcode, shape and operands."""
    seen, pairs = {}, []
    for comp in module.computations:
        for i in comp.instructions:
            if i.opcode == opcode:
                key = (comp.name, i.shape_text, tuple(i.operands))
                if key in seen:
                    pairs.append((seen[key], i))
                seen.setdefault(key, i)
    return pairs


@pytest.mark.parametrize(("file", "opcode", "why"), [
    ("transformer_train_v5e", "slice-start", "async"),
    ("transformer_scan_train_v5p", "broadcast", "while"),
    ("sort_topk_v5e", "iota", "sort"),
])
def test_h006_leaves_xlas_own_duplicates_alone(file, opcode, why):
    """What XLA's CSE left in a real optimized compile, it left on purpose: two async slices of
    one operand are two transfers it scheduled; a broadcast cloned per loop state, an iota per
    sort are buffers each written in place. Each pair is read off the text, with the user that
    writes into it; none is reported (all 195 H006 findings on the memory zoo were of these
    kinds)."""
    path = FIXTURES / "zoo" / f"{file}.hlo.txt"
    (module,) = load(path)
    pairs = _equal_pairs(module, opcode)
    assert pairs
    if why != "async":
        users = {u.opcode for comp in module.computations for u in comp.instructions
                 for a, b in pairs if a.name in u.operands or b.name in u.operands}
        assert why in users or "tuple" in users
    report = lint_files([path], LintOptions(select=["H006"], chip=file.rsplit("_", 1)[1]))
    assert not {f.instruction for f in report.findings} & {i.name for p in pairs for i in p}


def test_h014_figures_on_the_real_stacked_step():
    """The real step stacked on axis 1 (16 layers): each layer's f32[1,1024,1024] gradient
    goes into f32[16,1024,1024]{2,0,1:T(8,128)}, 1 of every 8 rows along dimension 0, after
    %copy.6 retiles it. By hand: 8 x 1024 x 1024 x 4 = 32 MiB of whole tiles a trip, read and
    written: 64 MiB a trip, 1 GiB over the 16 trips (the loop's known trip count)."""
    path = RULE_DIR / "H014" / "stacked_axis1_v5p.hlo.txt"
    (found,) = lint_files([path], LintOptions(select=["H014"], chip="v5p")).findings
    tile = 8 * 1024 * 1024 * 4
    assert found.evidence == {"dimension": 0, "update_extent": 1, "tile_extent": 8,
                              "update_bytes": 1024 * 1024 * 4, "tile_bytes": tile, "trips": 16,
                              "relayout": "copy.6"}
    assert found.cost["bytes_wasted"] == 2 * tile * 16
    assert found.cost["est_seconds"] == pytest.approx(2 * tile * 16 / 2.765e12)  # v5p's HBM
    assert "on each of 16 trips" in found.message and "after %copy.6 relayouts" in found.message
    assert "axis 0" in found.help and "sequence-first" in found.help


def test_h014_edges_by_hand():
    """HAND-WRITTEN modules. Exactly min_bytes (1 MiB) of tiles read and written fires:
    8 x 128 x 128 x 4 = 512 KiB a side; outside a loop the message names no trips and the
    cost no multiple. An update copied without a change of layout is no relayout. A copy that
    retiles an update of whole tiles keeps H002's own advice."""
    (edge,) = _h014(_dus_module("f32[16,128,128]{2,0,1:T(8,128)}", "f32[1,128,128]{2,0,1:T(1,128)}"))
    assert edge.evidence["tile_bytes"] == 512 << 10 and edge.cost["bytes_wasted"] == 1 << 20
    assert "trips" not in edge.message and edge.evidence["trips"] is None
    text = _dus_module("f32[16,1024,1024]{2,0,1:T(8,128)}", "f32[1,1024,1024]{2,0,1:T(1,128)}")
    copied = text.replace("  ROOT d = ", "  c = f32[1,1024,1024]{2,0,1:T(1,128)} copy(u)\n  ROOT d = ") \
                 .replace("dynamic-update-slice(t, u,", "dynamic-update-slice(t, c,")
    (plain,) = _h014(copied)
    assert "relayout" not in plain.evidence and "relayouts" not in plain.message
    from hloscope.parser import parse
    from hloscope.rules.engine import run

    whole = ("HloModule m, is_scheduled=true\nENTRY e {\n"
             "  t = f32[64,1024,1024]{2,0,1:T(8,128)} parameter(0)\n"
             "  u = f32[8,1024,1024]{2,1,0:T(8,128)} parameter(1)\n  i = s32[] parameter(2)\n"
             "  z = s32[] constant(0)\n  c = f32[8,1024,1024]{2,0,1:T(8,128)} copy(u)\n"
             "  ROOT d = f32[64,1024,1024]{2,0,1:T(8,128)} dynamic-update-slice(t, c, i, z, z)\n}\n")
    (retile,) = run(parse(whole, "h002"), [load_rules()["H002"]()]).findings
    assert "partial_tile_update" not in retile.evidence and "transpose weights" in retile.help
    assert _h014(whole) == []


def test_h002_figures_and_the_transpose_branch():
    """The real positive: %copy turns bf16[1024,512]{1,0} into {0,1} (1 MiB each side, by
    hand: 1024 x 512 x 2), 2 MiB moved, once (no loop), costed at XLA's own estimate of the
    copy. HAND-WRITTEN transposes: one whose result layout keeps the memory order is a
    bitcast (silent); one that reorders memory is a relayout; 1,024 bytes moved is the
    threshold (fires), under it not."""
    (found,) = lint_files([RULE_DIR / "H002" / "transpose_out_v5e.hlo.txt"],
                          LintOptions(select=["H002"], chip="v5e")).findings
    assert found.evidence == {"from": "bf16[1024,512]{1,0:T(8,128)(2,1)}",
                              "to": "bf16[1024,512]{0,1:T(8,128)(2,1)S(1)}",
                              "bytes": 2 * 1024 * 512 * 2, "trips": None}
    assert found.cost["bytes_wasted"] == 2 * 1024 * 512 * 2
    assert found.cost["est_seconds"] == found.cost["xla_est_seconds"]
    from hloscope.parser import parse
    from hloscope.rules.engine import run

    def h002(src: str, dst: str) -> list:
        text = (f"HloModule m, is_scheduled=true\nENTRY e {{\n  x = {src} parameter(0)\n"
                f"  ROOT t = {dst} transpose(x), dimensions={{1,0}}\n}}\n")
        return run(parse(text, "h002"), [load_rules()["H002"]()]).findings

    assert h002("f32[256,128]{1,0}", "f32[128,256]{0,1}") == []  # same memory order: a bitcast
    (moved,) = h002("f32[256,128]{1,0}", "f32[128,256]{1,0}")
    assert moved.evidence["bytes"] == 2 * 256 * 128 * 4
    (edge,) = h002("f32[16,8]{1,0}", "f32[8,16]{1,0}")  # 2 x 512 bytes: the 1 KiB threshold
    assert edge.evidence["bytes"] == 1024
    assert h002("f32[8,8]{1,0}", "f32[8,8]{1,0}") == []  # 512 bytes moved: under it


def test_h006_what_it_leaves_alone_and_what_it_does_not_by_hand():
    """HAND-WRITTEN modules, one case each: a custom call repeated with a side effect is two
    calls (silent), without one a value computed twice (reported); an equal pair read as a
    dynamic-update-slice's update (not the buffer it writes into) is reported; a pair one of
    which initialises a loop's state is left alone (XLA keeps them apart for it)."""
    from hloscope.parser import parse
    from hloscope.rules.engine import run

    def h006(body: str) -> list[str]:
        text = ("HloModule m, is_scheduled=true\nENTRY e {\n  p = f32[1024,1024]{1,0} parameter(0)\n"
                + body + "}\n")
        return [f.instruction for f in run(parse(text, "h006"), [load_rules()["H006"]()]).findings]

    call = 'custom-call(p), custom_call_target="my_kernel"'
    assert h006(f"  a = f32[1024,1024]{{1,0}} {call}, custom_call_has_side_effect=true\n"
                f"  b = f32[1024,1024]{{1,0}} {call}, custom_call_has_side_effect=true\n"
                "  ROOT t = (f32[1024,1024]{1,0}, f32[1024,1024]{1,0}) tuple(a, b)\n") == []
    assert h006(f"  a = f32[1024,1024]{{1,0}} {call}\n  b = f32[1024,1024]{{1,0}} {call}\n"
                "  ROOT t = (f32[1024,1024]{1,0}, f32[1024,1024]{1,0}) tuple(a, b)\n") == ["b"]
    assert h006("  a = f32[1024,1024]{1,0} exponential(p)\n  b = f32[1024,1024]{1,0} exponential(p)\n"
                "  q = f32[4096,1024]{1,0} parameter(1)\n  z = s32[] constant(0)\n"
                "  ROOT d = f32[4096,1024]{1,0} dynamic-update-slice(q, a, z, z)\n"
                "  s = f32[1024,1024]{1,0} add(a, b)\n") == ["b"]
    loop = ("%body (s: (f32[1024,1024])) -> (f32[1024,1024]) {\n  s = (f32[1024,1024]{1,0}) parameter(0)\n"
            "  x = f32[1024,1024]{1,0} get-tuple-element(s), index=0\n"
            "  y = f32[1024,1024]{1,0} negate(x)\n  ROOT r = (f32[1024,1024]{1,0}) tuple(y)\n}\n"
            "%cond (s: (f32[1024,1024])) -> pred[] {\n  s = (f32[1024,1024]{1,0}) parameter(0)\n"
            "  ROOT f = pred[] constant(false)\n}\n")
    text = ("HloModule m, is_scheduled=true\n" + loop + "ENTRY e {\n  p = f32[1024,1024]{1,0} parameter(0)\n"
            "  a = f32[1024,1024]{1,0} exponential(p)\n  b = f32[1024,1024]{1,0} exponential(p)\n"
            "  i = (f32[1024,1024]{1,0}) tuple(a)\n"
            "  w = (f32[1024,1024]{1,0}) while(i), condition=%cond, body=%body\n"
            "  g = f32[1024,1024]{1,0} get-tuple-element(w), index=0\n"
            "  ROOT s = f32[1024,1024]{1,0} add(g, b)\n}\n")
    assert run(parse(text, "h006"), [load_rules()["H006"]()]).findings == []


def test_h006_attributes_sizes_chains_and_fusions_by_hand():
    """HAND-WRITTEN modules. Equal but for metadata: a duplicate; equal but for an attribute
    (broadcast dimensions): not. min_elements (1,024) is the edge: f32[32,32] is reported,
    f32[31,32] not. exp then tanh of one parameter written twice: one finding at the second
    exp, the second tanh its follower; its figures by hand (each op reads and writes one
    f32[32,32], 8 KiB). A fused computation before the entry does not stop the walk."""
    from hloscope.parser import parse
    from hloscope.rules.engine import run

    def h006(body: str, shape: str = "f32[32,32]", before: str = "") -> list:
        text = (f"HloModule m, is_scheduled=true\n{before}ENTRY e {{\n  p = {shape}{{1,0}} parameter(0)\n"
                + body + "}\n")
        return run(parse(text, "h006"), [load_rules()["H006"]()]).findings

    pair = ('  a = {s}{{1,0}} exponential(p), metadata={{op_name="f"}}\n'
            '  b = {s}{{1,0}} exponential(p), metadata={{op_name="g"}}\n'
            '  ROOT t = ({s}, {s}) tuple(a, b)\n')
    (found,) = h006(pair.format(s="f32[32,32]"))
    assert found.instruction == "b" and found.evidence["first"] == "a"
    assert found.evidence["opcode"] == "exponential" and found.evidence["bytes"] == 2 * 32 * 32 * 4
    assert found.cost["bytes_wasted"] == 2 * 32 * 32 * 4
    assert h006(pair.format(s="f32[31,32]"), shape="f32[31,32]") == []
    assert h006("  a = f32[32,32]{1,0} broadcast(q), dimensions={0}\n"
                "  b = f32[32,32]{1,0} broadcast(q), dimensions={1}\n"
                "  ROOT t = (f32[32,32], f32[32,32]) tuple(a, b)\n".replace(
                    "  a =", "  q = f32[32]{0} parameter(1)\n  a =")) == []
    chain = ("  a = f32[32,32]{1,0} exponential(p)\n  b = f32[32,32]{1,0} tanh(a)\n"
             "  c = f32[32,32]{1,0} exponential(p)\n  d = f32[32,32]{1,0} tanh(c)\n"
             "  ROOT t = (f32[32,32], f32[32,32]) tuple(b, d)\n")
    (root,) = h006(chain)
    assert root.instruction == "c" and root.evidence["followers"] == ["d"]
    assert root.cost["bytes_wasted"] == 2 * (2 * 32 * 32 * 4)
    fused = ("%f (x: f32[32,32]) -> f32[32,32] {\n  x = f32[32,32]{1,0} parameter(0)\n"
             "  y = f32[32,32]{1,0} exponential(x)\n  ROOT z = f32[32,32]{1,0} exponential(x)\n}\n")
    (after_fusion,) = h006("  k = f32[32,32]{1,0} fusion(p), kind=kLoop, calls=%f\n" + chain.replace(
        "tuple(b, d)", "tuple(b, d, k)").replace("ROOT t = (f32[32,32], f32[32,32])",
                                                  "ROOT t = (f32[32,32], f32[32,32], f32[32,32])"),
        before=fused)
    assert after_fusion.instruction == "c"


def test_h004_weight_gradients_told_by_their_contraction():
    """HAND-WRITTEN minimal modules, no metadata: x^T g1 and x^T g3 contract both inputs'
    rows (dimension 0, not the last) as weight gradients do: silent. The forward pair x w1,
    x w3 contracts x's features (its last dimension): reported."""
    from hloscope.parser import parse
    from hloscope.rules.engine import run

    def module(lhs: str, dims: str, other: str) -> str:
        return (f"HloModule m\nENTRY e {{\n  x = bf16[64,32] parameter(0)\n"
                f"  a = {other} parameter(1)\n  b = {other} parameter(2)\n"
                f"  p = {lhs} dot(x, a), {dims}\n  q = {lhs} dot(x, b), {dims}\n"
                f"  ROOT t = ({lhs}, {lhs}) tuple(p, q)\n}}\n")

    backward = module("bf16[32,16]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}", "bf16[64,16]")
    forward = module("bf16[64,16]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "bf16[32,16]")
    rule = load_rules()["H004"]
    assert run(parse(backward, "bwd"), [rule()]).findings == []
    (f,) = run(parse(forward, "fwd"), [rule()]).findings
    assert f.evidence["matmuls"] == ["p", "q"]
