"""Modules per second linting a folder of real modules: serial, `-j 2` (spawned processes)
and `--dask` on a local cluster of 2 workers (started once, outside the timing; the lint
runs against its scheduler address). The folder: N copies of the 32-layer v5p transformer
(1.8 MB each) and of every rule fixture, so each run has real work per module.

    python3 bench/fleet.py [--copies 4]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _folder(copies: int) -> Path:
    d = Path(tempfile.mkdtemp(prefix="hloscope-fleet-"))
    for k in range(copies):
        shutil.copy(ROOT / "fixtures" / "tpu" / "llm_v5p_32.hlo.txt", d / f"llm_{k}.hlo.txt")
    for case in sorted((ROOT / "fixtures" / "rules").glob("*/*.hlo.txt")):
        shutil.copy(case, d / f"{case.parent.name}_{case.name}")
    return d


def _time(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hloscope", "lint", *args, "--no-cache", "--exit-zero",
                    "--format", "json"], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--copies", type=int, default=4)
    ns = ap.parse_args()
    folder = _folder(ns.copies)
    n = len(list(folder.glob("*.hlo.txt")))
    from dask.distributed import LocalCluster

    rows = [("serial (-j 1)", _time([str(folder), "-j", "1"])),
            ("-j 2", _time([str(folder), "-j", "2"]))]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        rows.append(("dask, 2 workers", _time([str(folder), "--dask", cluster.scheduler_address])))
    print(f"{n} modules ({sum(f.stat().st_size for f in folder.glob('*.hlo.txt')) / 1e6:.1f} MB)")
    for label, seconds in rows:
        print(f"  {label:18} {seconds:6.2f} s  {n / seconds:6.1f} modules/s")
    shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
