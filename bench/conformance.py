"""Conformance with XLA's own parser (issue #17's measurement).

    python3 bench/conformance.py [--mutants 3000] [--seed 7]

Every HLO module in fixtures/ and ../shared/corpus (XLA's lit test modules and benchmark
HLO among them), plus seeded mutants of them, judged by XLA's parser (jaxlib 0.10.2) and
by hloscope: the share of XLA-accepted inputs hloscope accepts with XLA's instruction
count (default and strict mode), and the share of XLA-rejected inputs strict mode rejects.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conformance import collect, measure, mutants  # noqa: E402

TARGETS = {"default_accepts": 0.995, "strict_accepts": 0.99, "strict_rejects": 0.90}


def parser_tests() -> dict:
    """The rates over every module collected from XLA's own tests: its parser tests
    (tests/test_xla_parser_cases.py, leaving out what jaxlib 0.10.2 predates; their verdicts
    are the tests' own) and its emitter, pass and verifier test inputs
    (tests/test_xla_test_inputs.py; XLA's verdict is jaxlib's parser's, asked here)."""
    from oracle import xla_views
    from test_xla_parser_cases import CASES
    from test_xla_test_inputs import CASES as INPUTS

    from hloscope.parser import ParseError, parse

    def accepts(text: str, strict: bool) -> bool:
        try:
            parse(text, "case", strict=strict)
        except ParseError:
            return False
        return True

    cases = [(text, verdict) for text, verdict, newer in CASES.values() if not newer]
    names = sorted(INPUTS)
    cases += [(INPUTS[n], "reject" if "error" in view else "accept")
              for n, view in zip(names, xla_views([INPUTS[n] for n in names]))]
    good = [t for t, v in cases if v == "accept"]
    bad = [t for t, v in cases if v == "reject"]
    return {"accepted": len(good), "rejected": len(bad),
            "default": sum(accepts(t, False) for t in good) / len(good),
            "strict": sum(accepts(t, True) for t in good) / len(good),
            "strict_rejects": sum(not accepts(t, True) for t in bad) / len(bad)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=7)
    ns = ap.parse_args()
    t = time.perf_counter()
    modules = collect()
    real = measure(modules)
    mutated = measure(mutants(modules, ns.mutants, ns.seed))
    print(f"{len(modules)} modules, {ns.mutants} mutants, in {time.perf_counter() - t:.0f} s")
    print(f"real modules: XLA accepts {real.accepted_by_xla}, rejects {real.rejected_by_xla}")
    print(f"mutants: XLA accepts {mutated.accepted_by_xla}, rejects {mutated.rejected_by_xla}, "
          f"crashes on {mutated.crashed_xla}")
    rows = [("default_accepts", "real modules XLA accepts, default mode", real),
            ("strict_accepts", "real modules XLA accepts, strict mode", real),
            ("strict_rejects", "mutants XLA rejects, strict mode rejects", mutated)]
    failed = False
    for key, what, tally in rows:
        value = tally.rates()[key]
        ok = value >= TARGETS[key]
        failed |= not ok
        print(f"{what:44} {value * 100:6.2f}%  target >= {TARGETS[key] * 100:.1f}%  "
              f"{'PASS' if ok else 'FAIL'}")
    print(f"{'(mutants XLA accepts, default / strict mode)':44} "
          f"{mutated.rates()['default_accepts'] * 100:6.2f}% / {mutated.rates()['strict_accepts'] * 100:.2f}%")
    xla_tests = parser_tests()
    print(f"XLA's test modules (fixtures/xla_tests): XLA accepts {xla_tests['accepted']}, default "
          f"{xla_tests['default']:.1%}, strict {xla_tests['strict']:.1%}; XLA rejects "
          f"{xla_tests['rejected']}, strict rejects {xla_tests['strict_rejects']:.1%}")
    for line in real.misses + mutated.misses[:10]:
        print("  miss:", line)
    for line in real.leniencies + mutated.leniencies[:10]:
        print("  lenient:", line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
