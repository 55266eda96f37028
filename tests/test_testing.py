"""hloscope.testing (#35 point 10): budgets and findings asserted in a user's own tests, the
README's example run as it stands (a deviceless TPU compile: libtpu, which the set-up
installs)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import FIXTURES

import hloscope.testing as ht
from hloscope.compile import have_libtpu

ROOT = FIXTURES.parent
TRANSFORMER = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"


def test_budget_amounts_read_units():
    assert ht.amount("2 ms") == pytest.approx(2e-3)
    assert ht.amount("12 GiB") == 12 * 2**30
    assert ht.amount("3e12") == 3e12 and ht.amount(5) == 5.0
    with pytest.raises(ValueError, match="a number and a unit"):
        ht.amount("two seconds")


def test_a_budget_failure_says_every_figure_and_by_how_much():
    figures = ht.measure(TRANSFORMER, chip="v5p")
    with pytest.raises(AssertionError) as e:
        ht.assert_budget(TRANSFORMER, chip="v5p", step_time=figures["step_time"] / 2,
                         hbm=figures["hbm"] * 2)
    text = str(e.value)
    assert text.startswith("hloscope budget exceeded for jit_model on TPU v5p")
    assert re.search(r"step_time .* > budget .*OVER by 100\.0%", text)
    assert re.search(r"hbm .* <= budget", text)
    # within its budgets: passes and returns the figures
    assert ht.assert_budget(TRANSFORMER, chip="v5p", step_time=figures["step_time"]) == figures


def test_findings_and_new_findings_against_a_baseline(tmp_path):
    h001 = FIXTURES / "rules" / "H001"
    positive = next(p for p in sorted(h001.glob("*.hlo.txt")) if p.with_suffix("").with_suffix(".expected").read_text().strip())
    with pytest.raises(AssertionError, match=r"hloscope finding\(s\) on .*\n  H001 \d+:\d+ %"):
        ht.assert_no_findings(positive, ["H001"])
    baseline = tmp_path / "baseline.json"
    ht.assert_no_new_findings(positive, baseline, codes=["H001"])  # writes it
    assert baseline.exists()
    ht.assert_no_new_findings(positive, baseline, codes=["H001"])  # the same: nothing new
    empty = tmp_path / "empty.json"
    empty.write_text('{"version": 2, "findings": []}')
    with pytest.raises(AssertionError, match="new hloscope finding"):
        ht.assert_no_new_findings(positive, empty, codes=["H001"])


@pytest.mark.skipif(not have_libtpu(), reason="libtpu not installed (pip install 'hloscope[tpu]')")
def test_the_readme_example_passes_under_pytest(tmp_path):
    text = (ROOT / "README.md").read_text()
    section = text.split("## Budgets in your own tests", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    test_file = tmp_path / "test_budget_example.py"
    test_file.write_text(code)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
