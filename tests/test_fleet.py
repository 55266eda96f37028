"""lint --dask: a LocalCluster of 2 workers lints a folder of 23 real modules (rule
fixtures) and one truncated file, and gives exactly the serial result plus that file's
error; the tasks ran on the cluster."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.cli.lint import optional_dask_value

distributed = pytest.importorskip("dask.distributed")
runner = CliRunner()


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet")
    for case in sorted((FIXTURES / "rules").glob("*/*.hlo.txt"))[:23]:
        shutil.copy(case, d / f"{case.parent.name}_{case.name}")
    (d / "truncated.hlo.txt").write_text((FIXTURES / "cpu" / "mlp_cpu.hlo.txt").read_text()[:300])
    return d


def _lint(*args) -> tuple[int, dict]:
    result = runner.invoke(app, ["lint", *args, "--format", "json", "--exit-zero"])
    return result.exit_code, json.loads(result.stdout)


def test_dask_on_two_workers_equals_the_serial_run_plus_one_error(fleet_dir):
    code, serial = _lint(str(fleet_dir), "--no-cache", "-j", "1")
    assert code == 2 and len(serial["errors"]) == 1 and serial["summary"]["files"] == 24
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        code, on_dask = _lint(str(fleet_dir), "--no-cache", "--dask", cluster.scheduler_address)
        ran = client.run_on_scheduler(lambda dask_scheduler: sorted(
            k for k in dask_scheduler.task_prefixes if "hloscope-lint" in str(k)))
    assert code == 2
    assert on_dask == serial  # the same findings, order, notes and the one error
    assert ran  # the lint tasks went through the cluster's scheduler
    assert on_dask["errors"][0]["file"].endswith("truncated.hlo.txt")


def test_dask_alone_means_a_local_cluster_and_errors_are_plain(fleet_dir):
    assert optional_dask_value(["lint", "d", "--dask", "--format", "json"]) == \
        ["lint", "d", "--dask", "local", "--format", "json"]
    assert optional_dask_value(["lint", "--dask", "tcp://h:8786", "d"]) == ["lint", "--dask", "tcp://h:8786", "d"]
    assert optional_dask_value(["lint", "--dask", "sched:8786"]) == ["lint", "--dask", "sched:8786"]
    result = runner.invoke(app, ["lint", str(fleet_dir), "--dask", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2 and "cannot reach the Dask scheduler" in result.output
