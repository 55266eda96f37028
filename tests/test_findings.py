"""Findings a performance engineer acts on (issue #18), on real compiler output: the compile
stage decides which patterns are artifacts, repeated layers are one group with stable
fingerprints, every finding carries its source line, H004 never merges dependent dots,
cloned async collectives count once."""

from __future__ import annotations

import json
import re
from collections import Counter

import networkx as nx
import pytest
from conftest import CORPUS, FIXTURES, needs_corpus
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.graph import build_graph, node_id
from hloscope.lint import LintOptions, lint_files
from hloscope.parser import load

LLAMA = CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo"
TFM16, TFM32 = FIXTURES / "tpu" / "llm_v5p_16.hlo.txt", FIXTURES / "tpu" / "llm_v5p_32.hlo.txt"
runner = CliRunner()


def _json(*args) -> dict:
    return json.loads(runner.invoke(app, ["lint", "--format", "json", *map(str, args)]).stdout)


@needs_corpus
def test_llama_pre_optimization_dump_reads_as_what_it_is():
    out = _json(LLAMA)
    (module,) = out["modules"]
    assert module["stage"] == "before_optimizations"
    codes = Counter(f["code"] for f in out["findings"])
    assert "H001" not in codes  # 1,126 sharding_constraint copies were reported before
    h008 = [f for f in out["findings"] if f["code"] == "H008"]
    assert len(h008) == 1 and h008[0]["severity"] == "info" and "not scheduled yet" in h008[0]["message"]
    groups = {f["group"] for f in out["findings"]}
    assert len(groups) * 10 <= 2189  # the count before: 2,189 findings


def test_repeated_layers_are_one_group_each_with_fingerprints_stable_across_compiles():
    r16 = lint_files([TFM16], LintOptions(chip="v5p"))
    r32 = lint_files([TFM32], LintOptions(chip="v5p"))
    g16 = Counter(f.fingerprint for f in r16.findings)
    g32 = Counter(f.fingerprint for f in r32.findings)
    assert set(g16) == set(g32)  # the same patterns, numbered differently
    assert max(g16.values()) >= 15 and max(g32.values()) >= 31  # once per layer
    text = runner.invoke(app, ["lint", "--chip", "v5p", str(TFM32)]).stdout
    entries = [line for line in text.splitlines() if re.match(rf"{re.escape(str(TFM32))}:\d+:\d+: ", line)]
    assert len(entries) == len(g32)  # each anti-pattern once ...
    assert any(line.endswith("(x 32)") for line in entries)  # ... with its count
    expanded = runner.invoke(app, ["lint", "--chip", "v5p", "--expand", str(TFM32)]).stdout
    finding_line = re.compile(rf"{re.escape(str(TFM32))}:\d+:\d+: ")
    assert sum(1 for line in expanded.splitlines() if finding_line.match(line)) == len(r32.findings)
    out = _json("--chip", "v5p", TFM32)  # JSON keeps every occurrence, with its group
    assert len(out["findings"]) == len(r32.findings)
    assert Counter(f["group"] for f in out["findings"]) == Counter(fp[:16] for fp in g32.elements())


def test_every_finding_on_a_module_with_metadata_names_its_source_line():
    report = lint_files([TFM16], LintOptions(chip="v5p"))
    assert report.findings
    for f in report.findings:
        assert f.source["file"].endswith("fixtures/generate.py") and f.source["line"] > 0, f
    sarif = json.loads(runner.invoke(app, ["lint", "--chip", "v5p", "--format", "sarif", str(TFM16)]).stdout)
    related = sarif["runs"][0]["results"][0]["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"].endswith("generate.py") and related["region"]["startLine"] > 0


STACK_FRAMES_DUMP = CORPUS / "xla-cpu-benchmark-hlo" / "jax.issue.33666.linx.frag_0100.module_0005.hlo"


def _frames_oracle(path):
    """instruction name -> (file, function, line) from a real JAX dump's FileNames /
    FunctionNames / FileLocations / StackFrames tables, read by plain regular expressions
    (an oracle apart from the parser)."""
    text = path.read_text()
    files = dict(re.findall(r'^(\d+) "([^"]*)"$', text.split("FunctionNames")[0], re.M))
    functions = dict(re.findall(r'^(\d+) "([^"]*)"$', text.split("FunctionNames")[1].split("FileLocations")[0], re.M))
    locations = {k: (f, fn, int(line)) for k, f, fn, line in re.findall(
        r"^(\d+) \{file_name_id=(\d+) function_name_id=(\d+) line=(\d+)", text, re.M)}
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+)", text, re.M))
    out = {}
    for name, frame in re.findall(r"^\s*(?:ROOT )?%?([\w.-]+) = .*stack_frame_id=(\d+)", text, re.M):
        f, fn, line = locations[frames[frame]]
        out[name] = (files[f], functions[fn], line)
    return out


@needs_corpus
def test_new_style_stack_frame_tables_are_resolved():
    from hloscope.source import source_of

    oracle = _frames_oracle(STACK_FRAMES_DUMP)
    (m,) = load(STACK_FRAMES_DUMP)
    checked = 0
    for instr in m.instructions():
        if instr.name in oracle:
            src = source_of(instr, m)
            assert (src.file, src.function, src.line) == oracle[instr.name]
            checked += 1
    assert checked >= 10 and checked == len(oracle)


@needs_corpus
def test_roofline_rows_and_graph_nodes_carry_the_source_line():
    oracle = _frames_oracle(STACK_FRAMES_DUMP)
    result = CliRunner().invoke(app, ["roofline", "--format", "json", "--no-cache", str(STACK_FRAMES_DUMP)])
    assert result.exit_code == 0, result.output
    rows = [r for mod in json.loads(result.output)["modules"] for r in mod["instructions"]]
    with_source = [r for r in rows if r["instruction"] in oracle]
    assert len(with_source) >= 5
    for r in with_source:
        file, function, line = oracle[r["instruction"]]
        assert r["source"] == f"{file}:{line} ({function})" and r["op_name"]
    text = CliRunner().invoke(app, ["roofline", "--top", "0", "--no-cache", str(STACK_FRAMES_DUMP)]).output
    assert f"[{with_source[0]['source']}]" in text

def test_graph_nodes_carry_the_source_line(tmp_path):
    if not STACK_FRAMES_DUMP.exists():
        pytest.skip("corpus not at hand")
    oracle = _frames_oracle(STACK_FRAMES_DUMP)
    out = tmp_path / "g.dot"
    done = CliRunner().invoke(app, ["graph", "-o", str(out), str(STACK_FRAMES_DUMP)])
    assert done.exit_code == 0, done.output
    dot = out.read_text()
    shown = [name for name in oracle if f'"{name}"' in dot or f"{name}" in dot]
    assert shown
    for file, function, line in {oracle[n] for n in shown}:
        assert f"{file}:{line} ({function})" in dot


def test_cloned_async_collective_fusions_are_one_logical_collective():
    from hloscope.cost.chips import get_chip
    from hloscope.sharding import analyze

    plain_text = (FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt").read_text()
    fused_text = (FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt").read_text()
    (plain,) = load(FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt")
    (fused,) = load(FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt")
    _, before = analyze(plain, get_chip("v5p"))
    _, after = analyze(fused, get_chip("v5p"))
    # 4 layers, one gathered weight each: 4 all-gathers whatever the flags
    assert plain_text.count(" all-gather(") == 4
    assert [c.opcode for c in before] == ["all-gather"] * 4 == [c.opcode for c in after]
    chains = [c for c in after if c.clones]
    # XLA printed 3 async-collective-start fusions: one chain each, and 1 gather left alone
    starts = re.findall(r"%async-collective-start[.\d]* = ", fused_text)
    assert len(chains) == len(starts) == 3
    assert fused_text.count(" all-gather(") - sum(len(c.clones) for c in chains) == 1
    assert all(c.is_async and c.overlap_flops > 0 and len(c.clones) >= 3 for c in chains)
    exposed = {f.instruction for f in lint_files([FIXTURES / "tpu" / "fsdp_async_fusion_v5p.hlo.txt"],
                                                  LintOptions(chip="v5p", select=["H008"])).findings}
    assert not exposed & {c.instruction for c in chains} and len(exposed) == 1
    default = lint_files([FIXTURES / "tpu" / "fsdp_default_v5p.hlo.txt"], LintOptions(chip="v5p", select=["H008"]))
    assert len(default.findings) == 4


def test_a_pre_optimization_shard_map_dump_gets_no_collective_warnings():
    out = _json("--chip", "v5p", FIXTURES / "tpu" / "shard_map_v5p.before_optimizations.hlo.txt")
    assert out["modules"][0]["stage"] == "before_optimizations"
    h008 = [f for f in out["findings"] if f["code"] == "H008"]
    assert h008 and all(f["severity"] == "info" for f in h008) and len(h008) == 1


def _dependent_pairs(path, chip):
    (m,) = load(path)
    g = build_graph(m)
    pairs = []
    for f in lint_files([path], LintOptions(chip=chip, select=["H004"])).findings:
        members = f.evidence.get("matmuls", [])
        ids = [node_id(m[f.computation][name]) for name in members]
        pairs += [(a, b) for a in ids for b in ids if a != b and nx.has_path(g, a, b)]
    return pairs


@pytest.mark.parametrize("path", [TFM16, pytest.param(LLAMA, marks=needs_corpus)],
                         ids=["tfm16", "llama"])
def test_split_dot_never_groups_dots_that_feed_each_other(path):
    assert not _dependent_pairs(path, "v5p")


def test_huge_intermediate_bytes_are_the_tensor_itself():
    """The naive attention writes two [8, 8192, 8192] f32 score tensors to HBM: the scores
    (a fusion of its own) and exp(scores - max) (output 1 of a two-output fusion)."""
    found = lint_files([FIXTURES / "rules" / "H011" / "naive_attention_v5e.hlo.txt"],
                       LintOptions(chip="v5e", select=["H011"])).findings
    assert len(found) == 2
    for f in found:
        assert f.evidence["shape"].startswith("f32[8,8192,8192]")
        assert f.evidence["bytes"] == 8 * 8192 * 8192 * 4
    assert sorted(str(f.evidence["output_index"]) for f in found) == ["1", "None"]


def test_huge_intermediate_in_a_multi_output_fusion():
    """Loss and accuracy over [4096, 32768] logits: one fusion writes them as f32 (output 1)
    and bf16 (output 2); reported once, at the larger (4096 * 32768 * 4 bytes)."""
    (f,) = lint_files([FIXTURES / "rules" / "H011" / "loss_and_accuracy_v5e.hlo.txt"],
                      LintOptions(chip="v5e", select=["H011"])).findings
    assert f.evidence["output_index"] == 1 and f.evidence["bytes"] == 4096 * 32768 * 4
    assert "output 2 too" in f.message
