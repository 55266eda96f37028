"""The long fuzz run: >= 10,000 seeded mutants of real HLO, every analysis on each.

    python3 bench/fuzz.py [--cases 10000] [--seed 1]
    python3 bench/fuzz.py --differential [--cases 5000]
    python3 bench/fuzz.py --halves [--cases 300]

Prints how many mutants parsed, how many were rejected with a located error, and every
uncaught exception (exit 1 if there is any). The test suite runs 2,000 of these.
--differential instead runs each mutant through the fast path and strict mode and
prints every mutant they disagree on (accepted by one only, or rejected at different
places); the test suite runs 600. --halves counts mutants of the 5.57 MB fixture with
`stats` in two halves and serially and prints every mutant they disagree on.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzzing import differential, fuzz, halves_differential  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--differential", action="store_true", help="fast path vs strict mode")
    ap.add_argument("--halves", action="store_true", help="stats in two halves vs serial")
    ns = ap.parse_args()
    t = time.perf_counter()
    if ns.halves:
        counted, wrong = halves_differential(ns.cases, seed=ns.seed)
        print(f"{ns.cases} cases in {time.perf_counter() - t:.0f} s: {counted} counted in two "
              f"halves, {len(wrong)} differing from the serial count")
        print(*wrong[:10], sep="\n")
        return 1 if wrong else 0
    if ns.differential:
        found = differential(ns.cases, seed=ns.seed)
        print(f"{ns.cases} cases in {time.perf_counter() - t:.0f} s: fast path and strict mode "
              f"disagree on {len(found)}")
        for case in found[:10]:
            print(*case, sep="\n  ")
        return 1 if found else 0
    o = fuzz(ns.cases, seed=ns.seed)
    print(f"{o.cases} cases in {time.perf_counter() - t:.0f} s: {o.parsed} parsed and analysed, "
          f"{o.rejected} rejected with a located error, {len(o.crashes)} uncaught exceptions, "
          f"{o.rule_crashes} rule crashes")
    for label, kind, trace in o.crashes[:10]:
        print(f"\n--- {label} ({kind})\n{trace}")
    if o.crashes:
        print(Counter(kind for _, kind, _ in o.crashes))
    return 1 if o.crashes or o.rule_crashes else 0


if __name__ == "__main__":
    sys.exit(main())
