"""SYNTHETIC TPU-structured captures for the profile tests, written with tests/xspace.py
around real HLO fixtures (deviceless compiles): the structure of a real v6e capture of a
Pallas kernel (XLA Modules / XLA Ops / Async XLA Ops / XLA TraceMe / _counters_ / Tensor
Core), with times chosen by the test. They are not measurements; the tests compare
hloscope's numbers with XProf's CLI run on the same files."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from xspace import XSpace

US = 1_000_000  # picoseconds in a microsecond
COUNTERS = ("MXU", "Vector ALU", "Vector Load", "Vector Store", "Scalar ALU")


def instruction_text(hlo: Path, name: str) -> str:
    """The instruction's line as XLA prints it: the name real XLA Ops events carry."""
    for line in hlo.read_text().splitlines():
        s = line.strip()
        if s.startswith((f"%{name} = ", f"ROOT %{name} = ")):
            return s
    raise KeyError(name)


@dataclass
class Kernel:
    """How one kernel's runs look inside: per grid step, a DMA wait then compute."""

    name: str
    micros: float  # per run
    grid: int = 32
    wait_share: float = 0.1  # of each grid step spent in ep_wait_in
    copy_share: float = 0.05
    mxu: float = 60.0  # % util during the kernel
    vector_alu: float = 30.0
    bundles_per_step: int = 40


@dataclass
class Op:
    name: str
    micros: float
    is_async: bool = False  # on Async XLA Ops (overlapping what follows)


@dataclass
class Program:
    hlo: Path
    module: str
    program_id: int
    ops: list = field(default_factory=list)  # Kernel | Op, in run order


def _kernel_inside(plane, lines, k: Kernel, start: int) -> None:
    step = int(k.micros * US / k.grid)
    for g in range(k.grid):
        t = start + g * step
        wait, copy = int(step * k.wait_share), int(step * k.copy_share)
        plane.event(lines["trace"], "ep_wait_in", t, wait)
        plane.event(lines["trace"], "ep_copy_in", t + wait, copy)
        run = step - wait - copy
        plane.event(lines["trace"], "ep_run_kernel", t + wait + copy, run)
        plane.event(lines["trace"], "acc", t + wait + copy + run // 4, run // 2)  # nested in run
        for b in range(k.bundles_per_step):
            plane.event(lines["tc"], f"bundle.{134217728 + b}", t + wait + copy + b * 1000, 1000,
                        {"instrumentation_id": b}, metadata_stats={"long_name": f"bundle {b}"})


def write_capture(path: Path, device: int, programs: list[Program], steps: int,
                  gap_us: float = 5.0, host: str = "synthetic-tpu-host",
                  device_kind: str = "TPU v5 lite") -> dict:
    """One host's XSpace with one TPU plane running each program `steps` times; returns
    what was written per (module, op): runs and total microseconds."""
    space = XSpace(hostnames=[host])
    plane = space.plane(f"/device:TPU:{device}", {"device_type_string": device_kind})
    lines = {"modules": plane.line("XLA Modules"), "ops": plane.line("XLA Ops"),
             "async": plane.line("Async XLA Ops"), "trace": plane.line("XLA TraceMe"),
             "tc": plane.line("Tensor Core"), "counters": plane.line("_counters_")}
    written: dict[tuple[str, str], list[float]] = {}
    util: list[tuple[int, int, dict]] = []  # (start, end, counter values) while a kernel runs
    kernels: list[Kernel] = []
    t = 0
    for step in range(steps):
        for prog in programs:
            module_start = t
            t += int(gap_us * US)
            for op in prog.ops:
                micros = op.micros + 0.5 * step  # runs differ a little, as real ones do
                dur = int(micros * US)
                line = lines["async"] if getattr(op, "is_async", False) else lines["ops"]
                plane.event(line, instruction_text(prog.hlo, op.name), t, dur,
                            {"device_offset_ps": t, "device_duration_ps": dur},
                            display_name=op.name,
                            metadata_stats={"program_id": prog.program_id,
                                            "symbol_id": 1 + prog.ops.index(op),
                                            "hlo_category": "custom-call" if isinstance(op, Kernel) else "data formatting"})
                row = written.setdefault((prog.module, op.name), [0, 0.0])
                row[0] += 1
                row[1] += dur / US
                if isinstance(op, Kernel):
                    _kernel_inside(plane, lines, op, t)
                    kernels.append(op)
                    util.append((t, t + dur, {"MXU": op.mxu, "Vector ALU": op.vector_alu,
                                              "Vector Load": 20.0, "Vector Store": 10.0, "Scalar ALU": 5.0}))
                if not getattr(op, "is_async", False):
                    t += dur
            t += int(gap_us * US)
            plane.event(lines["modules"], f"{prog.module}({prog.program_id})", module_start,
                        t - module_start, {"run_id": 100 + step}, metadata_stats={"program_id": prog.program_id})
    # counter samples: one per grid step inside kernels (the kernel's utilization), and
    # idle samples (0%) in between, so a kernel's average is its own figure exactly
    edges = [0] + [x for b, e, _ in util for x in (b, e)] + [t]
    for k in range(0, len(edges) - 1, 2):
        if edges[k + 1] > edges[k]:
            for name in COUNTERS:
                plane.event(lines["counters"], name, edges[k], edges[k + 1] - edges[k], {"% util": 0.0})
    for (b, e, values), kernel in zip(util, kernels, strict=True):
        step = (e - b) // kernel.grid
        for g in range(kernel.grid):
            for name in COUNTERS:
                plane.event(lines["counters"], name, b + g * step, step if g < kernel.grid - 1
                            else e - b - g * step, {"% util": values[name]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(space.encode())
    return {k: (int(c), total) for k, (c, total) in written.items()}


def xprof_command() -> str:
    """XProf's CLI (the test extra installs xprof): beside this interpreter, else on PATH."""
    import shutil

    beside = Path(sys.executable).parent / "xprof"
    found = str(beside) if beside.exists() else shutil.which("xprof")
    if found is None:
        raise FileNotFoundError("xprof's CLI is not installed (pip install xprof)")
    return found


def xprof_hlo_stats(logdir: Path, session: str, host: str | None = None) -> dict:
    """XProf's own `get_hlo_stats` on a session: {(program_id, op_name): record}."""
    cmd = [xprof_command(), "get_hlo_stats", f"--session_id={session}",
           f"--logdir={logdir}", "--limit=100000", "--bypass_cache=True"]
    if host:
        cmd.append(f"--host={host}")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout[done.stdout.index("{"):])
    return {(r["program_id"], r["op_name"]): r for r in doc["records"]}


RULES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
# The synthetic capture beside each kernel trace rule fixture: (kernel micros per run,
# DMA-wait share, MXU %). The HLO is the real compile; the matmul's roofline on v5e is 23 us.
RULE_CAPTURES = {
    "T005/dma_bound_matmul_v5e": (75.0, 0.6, 60.0),
    "T005/pipelined_matmul_v5e": (25.0, 0.1, 60.0),
    "T006/low_mxu_matmul_v5e": (40.0, 0.1, 12.0),
    "T006/busy_mxu_matmul_v5e": (25.0, 0.1, 70.0),
    "T007/slow_matmul_v5e": (75.0, 0.1, 60.0),
    "T007/fast_matmul_v5e": (25.0, 0.1, 60.0),
}


def rule_capture(case: str, out: Path) -> None:
    micros, wait, mxu = RULE_CAPTURES[case]
    hlo = RULES / f"{case}.hlo.txt"
    module = hlo.read_text().split(None, 2)[1].rstrip(",")
    write_capture(out, 0, [Program(hlo, module, 1234, [Kernel("matmul.1", micros, wait_share=wait, mxu=mxu)])],
                  steps=3)


def main() -> None:
    """Write the synthetic captures beside the kernel trace rule fixtures."""
    for case in RULE_CAPTURES:
        rule_capture(case, RULES / f"{case}.xplane.pb")
        print(f"wrote fixtures/rules/{case}.xplane.pb")


if __name__ == "__main__":
    main()
