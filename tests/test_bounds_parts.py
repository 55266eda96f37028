"""sharding.bounds, piece by piece, on hand-made collectives whose figures are worked out
by hand (the mutation run found the link word, the cross-node case and the per-axis sums
untested)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hloscope.cost.chips import get_chip
from hloscope.sharding.bounds import link_bandwidth, measured, per_axis


def _collective(**kw):
    base = dict(axis="data", moved_bytes=1e6, est_seconds=5e-6, links="", crosses_domains=False)
    base.update(kw)
    return SimpleNamespace(**base)


def test_a_tpu_collective_against_two_one_way_links():
    v5p = get_chip("v5p")
    out = measured(_collective(), 10e-6, v5p)
    assert out == {"axis": "data", "moved_bytes": 1e6, "link_seconds": 5e-6, "links": "ICI",
                   "link_bytes_per_s": 1e6 / 10e-6,
                   "link_share": (1e6 / 10e-6) / (2 * 9e10)}  # v5p: 90 GB/s each way
    assert link_bandwidth(v5p) == 2 * 9e10


def test_a_gpu_collective_against_its_one_way_link_and_not_across_nodes():
    h100 = get_chip("h100")
    within = measured(_collective(links="NVLink"), 20e-6, h100)
    assert within["links"] == "NVLink"
    assert within["link_share"] == pytest.approx((1e6 / 20e-6) / h100.ici_bandwidth)
    across = measured(_collective(links="network (InfiniBand/RoCE)", crosses_domains=True), 20e-6, h100)
    assert across["links"] == "network (InfiniBand/RoCE)"
    assert across["link_bytes_per_s"] == 1e6 / 20e-6 and "link_share" not in across


def test_unmeasured_and_unknown_chips_give_no_rate():
    assert set(measured(_collective(), 0.0, get_chip("v5p"))) == {"axis", "moved_bytes", "link_seconds", "links"}
    out = measured(_collective(links="ICI"), 1e-6, None)
    assert out["links"] == "ICI" and out["link_bytes_per_s"] == 1e12 and "link_share" not in out


def test_per_axis_sums_every_run_of_every_collective_on_an_axis():
    rows = [
        {"collective": {"axis": "x", "moved_bytes": 100.0}, "count": 3, "total_seconds": 6e-6},
        {"collective": {"axis": "x", "moved_bytes": 50.0}, "count": 2, "total_seconds": 4e-6},
        {"collective": {"axis": "y", "moved_bytes": 10.0}, "count": 1, "total_seconds": 0.0},
        {"count": 5, "total_seconds": 1.0},  # (not a collective)
    ]
    out = per_axis(rows)
    assert set(out) == {"x", "y"}
    assert out["x"]["moved_bytes"] == 3 * 100 + 2 * 50 and out["x"]["ops"] == 2
    assert out["x"]["seconds"] == pytest.approx(10e-6)
    assert out["x"]["bytes_per_s"] == pytest.approx(400 / 10e-6)
    assert out["y"]["ops"] == 1 and out["y"]["bytes_per_s"] == 0.0
