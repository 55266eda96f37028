"""Where the time goes, added up (#35 point 3): a real 16-layer train step compiled for v5e
with each layer in jax.named_scope("layer_<i>") (fixtures/tpu/train_16_layers_v5e.hlo.txt)."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS, FIXTURES
from typer.testing import CliRunner

import hloscope
from hloscope.cli.app import app
from hloscope.cost.aggregate import parse_op_name

TRAIN = FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt"


@pytest.fixture(scope="module")
def program():
    return hloscope.load(TRAIN)


def test_op_names_read_as_jax_writes_them():
    assert parse_op_name("jit(loss)/transpose(jvp(layer_15))/mul") == ("backward", ["layer_15"])
    assert parse_op_name("jit(loss)/jvp(layer_0)/attn/dot_general") == ("forward", ["layer_0", "attn"])
    assert parse_op_name("jit(f)/jvp(Transformer)/layers_3/mlp/dot_general")[0] == "forward"
    assert parse_op_name("broadcast.297") == ("", [])  # made by XLA: no scope


def test_every_layer_gets_its_share_and_equal_layers_are_equal(program):
    b = program.breakdown("layer", chip="v5e")
    layers = [g for g in b["groups"] if g["key"].startswith("layer ")]
    assert [g["key"] for g in layers] == [f"layer {i}" for i in range(16)]
    shares = [g["share"] for g in layers]
    assert max(shares) - min(shares) < 0.01  # within 1 point of the step
    middle = [g["seconds"] for g in layers[1:]]  # (layer 0 also converts the input)
    assert max(middle) / min(middle) < 1.01
    # every layer has its forward and its backward, backward about twice the forward
    for g in layers:
        assert 1.5 < g["backward_seconds"] / g["forward_seconds"] < 3.0


def test_groups_sum_to_the_module_total(program):
    report = program.roofline("v5e")
    total = sum(r.t_bound * r.times for r in report.rows)
    for by in ("layer", "scope", "source", "pass"):
        b = program.breakdown(by, chip="v5e")
        assert b["total"]["seconds"] == pytest.approx(total)
        assert sum(g["seconds"] for g in b["groups"]) == pytest.approx(total)
        assert sum(g["share"] for g in b["groups"]) == pytest.approx(1.0)
    passes = {g["key"]: g for g in program.breakdown("pass", chip="v5e")["groups"]}
    assert set(passes) == {"forward", "backward", "other"}
    assert passes["backward"]["flops"] == pytest.approx(2 * passes["forward"]["flops"], rel=0.05)


def test_a_combined_gradient_all_reduce_is_split_over_the_layers_it_carries(program):
    """XLA combines the layers' gradient all-reduces into one named after layer 0: split by
    operand, layer 0 is no heavier than the others."""
    layers = {g["key"]: g for g in program.breakdown("layer", chip="v5e")["groups"]}
    assert layers["layer 0"]["seconds"] < 1.05 * layers["layer 5"]["seconds"]


def test_roofline_and_profile_commands_take_by():
    res = CliRunner().invoke(app, ["roofline", str(TRAIN), "--chip", "v5e", "--by", "layer"])
    assert res.exit_code == 0, res.output
    assert "layer 15" in res.output and "forward" in res.output and "backward" in res.output
    out = json.loads(CliRunner().invoke(app, ["roofline", str(TRAIN), "--by", "pass", "--format", "json"]).stdout)
    assert [g["key"] for g in out["modules"][0]["breakdown"]["groups"]] == ["forward", "backward", "other"]
    bad = CliRunner().invoke(app, ["roofline", str(TRAIN), "--by", "lines"])
    assert bad.exit_code == 2 and "one of scope, layer, source, pass" in bad.output
    t004 = FIXTURES / "rules" / "T004"
    res = CliRunner().invoke(app, ["profile", str(t004 / "transpose_copy_cpu.trace.json.gz"), "--hlo",
                                   str(t004 / "transpose_copy_cpu.hlo.txt"), "--by", "source", "--format", "json"])
    b = json.loads(res.stdout)["breakdown"]
    assert b["total"]["seconds"] == pytest.approx(json.loads(res.stdout)["step_seconds"] / 3, rel=0.01)


def test_ops_without_an_op_name_are_not_called_forward():
    """A dump stripped of its metadata (HAND-WRITTEN minimal module, no op_name anywhere):
    nothing says which pass its ops belong to."""
    from hloscope.cost.aggregate import group

    rows = [{"op_name": "", "source": "", "seconds": 1.0, "flops": 2.0, "bytes": 4.0},
            {"op_name": "jit(f)/dot_general", "source": "", "seconds": 3.0, "flops": 0.0, "bytes": 0.0}]
    groups = {g["key"]: g["seconds"] for g in group(rows, "pass")["groups"]}
    assert groups == {"forward": 3.0, "(no op_name)": 1.0}


def test_a_dump_without_metadata_says_why_it_is_one_group():
    """The corpus's Llama 3.1 8B benchmark dump carries no op_name at all: --by layer (or
    scope, pass) gives one group, and says that is for want of metadata; the 16-layer
    fixture, which has it, gets no such note."""
    from hloscope.cost.aggregate import group

    bare = [{"op_name": "", "source": "", "seconds": 1.0, "flops": 0.0, "bytes": 0.0}] * 3
    for by in ("scope", "layer", "pass"):
        b = group(bare, by)
        assert len(b["groups"]) == 1 and "without metadata" in b["note"] and f"by {by}" in b["note"]
    assert "source line" in group(bare, "source")["note"]
    named = [dict(bare[0], op_name="jit(f)/layer_0/dot_general")] + bare[1:]
    assert "note" not in group(named, "layer")
    res = CliRunner().invoke(app, ["roofline", str(FIXTURES / "tpu" / "train_16_layers_v5e.hlo.txt"),
                                   "--by", "layer"])
    assert res.exit_code == 0 and "without metadata" not in res.output
    llama = CORPUS / "xla-benchmark-hlo" / "hlo_llama31_8b_bf16_1x8.hlo"
    if llama.exists():
        res = CliRunner().invoke(app, ["roofline", str(llama), "--by", "layer"])
        assert res.exit_code == 0 and "note: no op carries its op_name" in res.output
