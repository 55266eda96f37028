"""The bound H012 checks before it walks a module (cost.memory.hbm_upper_bound): never
under the static peak the walk finds, on every optimized module at hand (TPU, GPU and CPU
compiles, the memory zoo, XLA's GPU test modules); and H012's findings are the walk's."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from hloscope.cost.chips import get_chip
from hloscope.cost.liveness import memory
from hloscope.cost.memory import hbm_upper_bound
from hloscope.lint import LintOptions, build_rules
from hloscope.parser import load
from hloscope.rules.base import RuleContext
from hloscope.stage import detect_stage

CORPUS_GPU = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "gpu"


def _optimized(paths):
    for path in paths:
        if path.parent.name == "big":
            continue  # (the 100 MB case: generated for the bench, and minutes to walk)
        try:
            modules = load(path)
        except Exception:  # noqa: BLE001 - a file the parser rejects is another test's
            continue
        for m in modules:
            if m.entry is not None and detect_stage(m).optimized:
                yield path, m


def test_the_bound_is_never_under_the_walked_peak():
    paths = sorted(FIXTURES.rglob("*.hlo.txt")) + sorted(CORPUS_GPU.rglob("*.hlo*"))
    checked = 0
    for path, m in _optimized(paths):
        for chip in (None, get_chip("v5e"), get_chip("v5p")):
            peak = memory(m, chip=chip).hbm_bytes
            assert hbm_upper_bound(m, chip) >= peak, (path, m.name)
        checked += 1
    assert checked >= 250  # (the memory zoo, the rule fixtures, the TPU/GPU/CPU compiles)


@pytest.mark.parametrize("chip", ["v5e", "v5p", "h100"])
def test_h012_finds_what_the_walk_finds(chip, monkeypatch):
    """With the bound's shortcut and without it (a bound that never says no), H012 gives
    the same findings on its own fixtures and on modules it passes."""
    import hloscope.rules.h012_hbm_peak as h012

    (rule,) = build_rules(LintOptions(select=["H012"]))
    paths = sorted((FIXTURES / "rules" / "H012").glob("*.hlo.txt")) + [
        FIXTURES / "tpu" / "llm_v5p_big.hlo.txt", FIXTURES / "memory" / "big_40gib_v5p.hlo.txt"]
    skipped = 0
    for path, m in _optimized(paths):
        ctx = RuleContext(m, chip=get_chip(chip))
        fast = [(f.message, f.severity) for f in rule.check_module(ctx)]
        with monkeypatch.context() as patch:
            patch.setattr(h012, "hbm_upper_bound", lambda module, chip=None: 1 << 62)
            walked = [(f.message, f.severity) for f in rule.check_module(ctx)]
        assert fast == walked, path
        skipped += not walked and hbm_upper_bound(m, ctx.chip) < 0.95 * ctx.chip.hbm_bytes
    assert skipped >= 1  # (the shortcut is taken somewhere)
