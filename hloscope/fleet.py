"""Lint a fleet of modules on a Dask cluster (`lint --dask`): one task per file, run by
`hloscope.lint.lint_one` on the workers (each a process with hloscope installed), results
gathered in input order so the report equals the serial run's; a task that fails (a lost
worker, an error outside the file's own lint) becomes that file's error entry. Needs the
`fleet` extra: pip install 'hloscope[fleet]' (dask.distributed)."""

from __future__ import annotations

import os
from pathlib import Path


class FleetError(ValueError):
    """Dask is missing or the scheduler cannot be reached (exit code 2)."""


def _client(where: str, workers: int):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise FleetError("--dask needs dask.distributed: pip install 'hloscope[fleet]'") from None
    if where in ("", "local"):
        cluster = LocalCluster(n_workers=workers or (os.cpu_count() or 1), threads_per_worker=1,
                               processes=True, dashboard_address=None)
        return Client(cluster), cluster
    try:
        return Client(where, timeout="10s"), None
    except OSError as e:
        raise FleetError(f"cannot reach the Dask scheduler at {where}: {e}") from None


def dask_runner(where: str, workers: int = 0):
    """A lint_files runner on the Dask cluster at `where` ("local" or a scheduler address)."""
    return lambda files, opts, progress: lint_on_dask(files, opts, where, workers, progress)


def lint_on_dask(files: list[Path], opts, where: str, workers: int = 0, progress=None) -> list:
    """FileResults of every file, in input order."""
    from dask.distributed import as_completed

    from hloscope import cache
    from hloscope.lint import FileResult
    from hloscope.report.common import FileError

    client, cluster = _client(where, workers if workers > 1 else 0)
    try:
        enabled = cache.is_enabled()
        futures = [client.submit(_lint_task, f, opts, enabled, key=f"hloscope-lint-{k}-{f.name}",
                                 pure=False) for k, f in enumerate(files)]
        index = {fut.key: k for k, fut in enumerate(futures)}
        results: list = [None] * len(files)
        for done, fut in enumerate(as_completed(futures), 1):
            k = index[fut.key]
            try:
                results[k] = fut.result()
            except Exception as e:  # noqa: BLE001 - one lost task is one file's error
                results[k] = FileResult([], [], 0, 0, FileError.of(str(files[k]), e))
            if progress:
                progress(done, len(files))
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _lint_task(path: Path, opts, cache_enabled: bool):
    from hloscope.lint import lint_one, prepare_worker

    prepare_worker(cache_enabled)
    return lint_one(path, opts)
