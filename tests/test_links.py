"""Collective link time on GPUs: NCCL's alpha-beta model, NVLink inside a node, the network
across nodes. Expected figures are worked by hand from the chip table's numbers (H100: 450
GB/s NVLink one way, 8 GPUs per node, 50 GB/s NIC per GPU, 5 us per collective; GB200: 900
GB/s, 72 GPUs per NVLink domain) and nccl-tests' bus-bytes conventions."""

from __future__ import annotations

import pytest

from hloscope.cost.chips import get_chip, set_link_domain
from hloscope.parser import load
from hloscope.sharding.collectives import analyze
from hloscope.sharding.links import link_time
from conftest import CORPUS, needs_corpus

GIB = 2**30
XLA_TESTS = CORPUS / "gpu" / "xla-tests"


@pytest.fixture(autouse=True)
def _no_domain_override():
    yield
    set_link_domain(None)


def test_a_tiny_all_reduce_costs_the_latency_not_zero():
    # 128 B, 2 GPUs: 5 us + 2 x 1/2 x 128 B / 450 GB/s (0.28 ns)
    t = link_time(get_chip("h100"), "all-reduce", 128.0, 2, [[0, 1]])
    assert t.seconds == pytest.approx(5e-6 + 128 / 450e9)
    assert t.links == "NVLink" and not t.crosses_domains


def test_an_all_reduce_across_nodes_runs_on_the_nics_of_its_members():
    # 16 GPUs, 8 per node: NCCL runs 8 channels, one NIC each: bus bandwidth
    # min(450 GB/s, 8 x 50 GB/s) = 400 GB/s; latency twice
    chip = get_chip("h100")
    moved = 2 * 15 / 16 * GIB
    t = link_time(chip, "all-reduce", moved, 16, [list(range(16))])
    assert t.seconds == pytest.approx(10e-6 + moved / 400e9)
    assert t.crosses_domains and "InfiniBand" in t.links
    # one GPU per node (a data-parallel axis across 16 nodes): one NIC, 50 GB/s
    t = link_time(chip, "all-reduce", moved, 16, [list(range(0, 128, 8))])
    assert t.seconds == pytest.approx(10e-6 + moved / 50e9)


def test_a_tpu_collective_keeps_the_bidirectional_ring():
    chip = get_chip("v5p")
    t = link_time(chip, "all-gather", 1e6, 4, [[0, 1, 2, 3]])
    assert t.seconds == pytest.approx(1e6 / (2 * chip.ici_bandwidth)) and t.links == "ICI"


@needs_corpus
@pytest.mark.parametrize("chip, domain, seconds, links", [
    # all-to-all of bf16[1,8,16,16,128,7168] (3.5 GiB) in groups of 16, 8 GPUs per node:
    # 8/16 of the bytes leave the node through the GPU's own NIC: 1.75 GiB / 50 GB/s + 2 x 5 us
    ("h100", None, 1.75 * GIB / 50e9 + 10e-6, "network (InfiniBand/RoCE)"),
    # the same with 16 GPUs per NVLink domain: 15/16 x 3.5 GiB / 450 GB/s + 5 us
    ("h100", 16, 3.5 * GIB * 15 / 16 / 450e9 + 5e-6, "NVLink"),
    # a GB200 NVL72 rack holds the group: 900 GB/s
    ("gb200", None, 3.5 * GIB * 15 / 16 / 900e9 + 5e-6, "NVLink"),
])
def test_xla_gpu_scheduler_all_to_all(chip, domain, seconds, links):
    """XLA's own GPU latency-hiding-scheduler test module: a 128-device async all-to-all."""
    set_link_domain(domain)
    (module,) = load(XLA_TESTS / "xla_lhs_collectives.hlo")
    _, collectives = analyze(module, get_chip(chip))
    (c,) = collectives
    assert (c.opcode, c.group_size, c.is_async) == ("all-to-all", 16, True)
    assert c.est_seconds == pytest.approx(seconds, rel=1e-6)
    assert c.links == links


@needs_corpus
def test_sharding_cli_says_network_and_takes_gpus_per_node():
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    path = str(XLA_TESTS / "xla_lhs_collectives.hlo")
    out = CliRunner().invoke(app, ["sharding", "--chip", "h100", path]).output
    assert "37.591 ms on network (InfiniBand/RoCE)" in out and "ICI" not in out
    out = CliRunner().invoke(app, ["sharding", "--chip", "h100", "--gpus-per-node", "16", path]).output
    assert "7.834 ms on NVLink" in out


@needs_corpus
def test_an_async_pair_xla_marks_is_sync_is_synchronous():
    """XLA's GPU scheduler test: the all-gather-start whose collective_backend_config says
    is_sync runs in place (nothing hides it); the all-reduce pair beside it is async with
    one op between start and done."""
    (module,) = load(XLA_TESTS / "xla_nccl_async_sched.hlo")
    _, collectives = analyze(module, get_chip("h100"))
    by = {c.instruction: c for c in collectives}
    assert (by["ag-start"].is_async, by["ag-start"].overlap_instructions) == (False, 0)
    assert (by["ar-start"].is_async, by["ar-start"].overlap_instructions) == (True, 1)
