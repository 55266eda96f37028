"""Where a command's time goes, phase by phase, on bench/targets.py's files, beside XLA's parse.

    python3 bench/phases.py                      # lint
    python3 bench/phases.py memory roofline      # those commands' phases (#37's profiles)

Each file in fresh processes (best of 3 per phase), the collector paused as the CLI runs:
lint's imports, the rule objects, reading and decoding the file, the scan (text -> IR), the
checks XLA's parser also makes (`validate`: shapes, operands, calls; `check_values`: every
attribute value typed), and the rules with the analyses they ask for. The CLI runs the two
checks in a forked child beside the rules, so a lint's critical path is imports + rules
objects + read + scan + rules (+ output); `floor.py` gives the least the scan could cost.

`memory`: its imports, read, scan, the entry's walk over its schedule (buffers, sharing, the
temporaries placed in outputs: hloscope.cost.walk), the rest of the report (the chip, the
peak's figures) and its text. `roofline`: imports, read, scan, the cost
model with its rows (hloscope.cost.roofline), the step estimate (the collectives and async
copies: hloscope.sharding.step) and the text. Each phase's share of XLA's parse is printed
beside it: what a target over XLA's parse would leave for the rest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import ROOT, xla_parse  # noqa: E402
from targets import BIG_30, FILES  # noqa: E402

_TIMED = r'''
path = sys.argv[1]


def timed(name, fn, *args):
    t = time.perf_counter()
    got = fn(*args)
    took[name] = time.perf_counter() - t
    return got


'''
_PHASES = r'''
import json, sys, time
t = time.perf_counter()
from hloscope._speed.nogc import no_cyclic_gc
from hloscope.lint import LintOptions, build_rules
from hloscope.parser.files import read
from hloscope.parser.load import _checked, _scanned, check_values, decode
from hloscope.parser.text import Lines
from hloscope.rules.engine import run
took = {"imports": time.perf_counter() - t}
''' + _TIMED + r'''
with no_cyclic_gc():
    rules = timed("rule objects", build_rules, LintOptions())
    text = timed("read", lambda: decode(read(path), path))
    lines = Lines(text)
    modules = timed("scan", _scanned, text, path)
    modules = timed("validate", _checked, modules, text, False)
    timed("check_values", check_values, modules, lines, path)
    timed("rules", lambda: run(modules, rules, chip=None, sources={path: lines}, trace=None,
                                stage=None, flags=None))
print(json.dumps(took))
'''
NAMES = ["imports", "rule objects", "read", "scan", "validate", "check_values", "rules"]

_COMMON = r'''
import json, sys, time
t = time.perf_counter()
from hloscope._speed.nogc import no_cyclic_gc
from hloscope.parser.files import read
from hloscope.parser.load import _scanned, decode
'''
_READ = _TIMED + r'''
with no_cyclic_gc():
    text = timed("read", lambda: decode(read(path), path))
    modules = timed("scan", _scanned, text, path)
'''
_MEMORY = _COMMON + r'''
from hloscope.cli.memory import _records
from hloscope.cost.walk import _Walk
from hloscope.report.memory import memory_text
took = {"imports": time.perf_counter() - t}
''' + _READ + r'''
    walked = []
    run = _Walk.run

    def run_timed(self):  # (the entry's walk, callees' inside it, timed within the report)
        t = time.perf_counter()
        run(self)
        if self.outer is None:
            walked.append(time.perf_counter() - t)

    _Walk.run = run_timed
    records = timed("report", _records, modules, None, None)
    took["walk"] = sum(walked)
    took["report"] -= took["walk"]
    timed("text", memory_text, records)
print(json.dumps(took))
'''
_ROOFLINE = _COMMON + r'''
from hloscope.cost.resolve import chip_for
from hloscope.cost.roofline import roofline
from hloscope.mlir.cost import body_costs
from hloscope.report.roofline import roofline_text
from hloscope.sharding.step import estimate
took = {"imports": time.perf_counter() - t}
''' + _READ + r'''
    m = modules[0]
    spec, note = timed("chip", chip_for, m, None)
    report = timed("cost model", lambda: roofline(m, spec, kernel_costs=body_costs(m)))
    step = timed("step", estimate, m, spec, report)
    timed("text", lambda: roofline_text([dict(report.to_dict(20), step=step.to_dict(), chip={
        "key": spec.key, "name": spec.name, "ridge": spec.ridge, "note": note})], 20))
print(json.dumps(took))
'''
COMMANDS = {"lint": (_PHASES, NAMES),
            "memory": (_MEMORY, ["imports", "read", "scan", "walk", "report", "text"]),
            "roofline": (_ROOFLINE, ["imports", "read", "scan", "chip", "cost model", "step", "text"])}


def phases(path: Path, command: str = "lint") -> dict[str, float]:
    code, names = COMMANDS[command]
    runs = [json.loads(subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                                      capture_output=True, text=True, cwd=ROOT).stdout)
            for _ in range(3)]
    return {k: min(r[k] for r in runs) for k in names}


def main(argv: list[str]) -> int:
    commands = argv or ["lint"]
    unknown = [c for c in commands if c not in COMMANDS]
    if unknown:
        print(f"unknown command {unknown[0]!r}: one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    for command in commands:
        if command != "lint":
            _table(command)
            continue
        _lint_table()
    return 0


def _table(command: str) -> None:
    """Each phase of one command, in ms and over XLA's parse of the file."""
    names = COMMANDS[command][1]
    print(f"{command}: each phase in ms (its share of XLA's parse)")
    print(f"{'file':<28}{'XLA':>7}" + "".join(f"{n:>18}" for n in names) + f"{'sum/XLA':>9}")
    for path in [*FILES, BIG_30]:
        if not path.exists():
            print(f"{path}: not at hand, skipped")
            continue
        took = phases(path, command)
        xla = xla_parse(path)
        print(f"{path.stem[:27]:<28}{xla * 1e3:>5.0f}ms"
              + "".join(f"{took[n] * 1e3:>9.0f} ({took[n] / xla:4.2f}x)" for n in names)
              + f"{sum(took.values()) / xla:>8.2f}x", flush=True)
    print()


def _lint_table() -> None:
    print(f"{'file':<28}{'XLA':>7}" + "".join(f"{n:>14}" for n in NAMES) + f"{'path/XLA':>10}")
    for path in FILES:
        if not path.exists():
            print(f"{path}: not at hand, skipped")
            continue
        took = phases(path)
        xla = xla_parse(path)
        critical = sum(took[k] for k in ("imports", "rule objects", "read", "scan", "rules"))
        print(f"{path.stem[:27]:<28}{xla * 1e3:>5.0f}ms"
              + "".join(f"{took[n] * 1e3:>12.0f}ms" for n in NAMES) + f"{critical / xla:>9.2f}x")
    print("\npath/XLA: imports + rule objects + read + scan + rules (the checks run beside "
          "them), over XLA's parse; output and start-up not counted")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
