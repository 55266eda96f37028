"""Where a lint's time goes, phase by phase, on bench/targets.py's files, beside XLA's parse.

    python3 bench/phases.py

Each file in fresh processes (best of 3 per phase), the collector paused as the CLI runs:
lint's imports, the rule objects, reading and decoding the file, the scan (text -> IR), the
checks XLA's parser also makes (`validate`: shapes, operands, calls; `check_values`: every
attribute value typed), and the rules with the analyses they ask for. The CLI runs the two
checks in a forked child beside the rules, so a lint's critical path is imports + rules
objects + read + scan + rules (+ output); `floor.py` gives the least the scan could cost.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import ROOT, xla_parse  # noqa: E402
from targets import FILES  # noqa: E402

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
path = sys.argv[1]


def timed(name, fn, *args):
    t = time.perf_counter()
    got = fn(*args)
    took[name] = time.perf_counter() - t
    return got


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


def phases(path: Path) -> dict[str, float]:
    runs = [json.loads(subprocess.run([sys.executable, "-c", _PHASES, str(path)], check=True,
                                      capture_output=True, text=True, cwd=ROOT).stdout)
            for _ in range(3)]
    return {k: min(r[k] for r in runs) for k in NAMES}


def main() -> int:
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
