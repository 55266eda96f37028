"""Shared paths and the (cached) XLA oracle views."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(Path(__file__).resolve().parent))
# Tests never read a developer's cache, nor leave one behind in their home directory.
os.environ["HLOSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="hloscope-test-cache-")

from oracle import xla_views  # noqa: E402

# The environment of a subprocess that tests a speed trick itself (hloscope._speed): the
# tricks on, even when the suite runs with HLOSCOPE_PLAIN=1.
TRICKS_ON = {k: v for k, v in os.environ.items() if k != "HLOSCOPE_PLAIN"}


def pytest_addoption(parser):
    parser.addoption("--regen-expected", action="store_true",
                     help="rewrite fixtures/rules/*/*.expected from the current findings")


def fixture_files() -> list[Path]:
    """The committed fixtures (not fixtures/big/: the benchmarks' 30 MB dumps, generated on
    demand by `fixtures/generate.py --big` and not in the repository)."""
    big = FIXTURES / "big"
    return sorted(p for p in FIXTURES.glob("**/*.hlo.txt") if big not in p.parents)


def is_test_input(path: Path) -> bool:
    """A fixture copied from XLA's own tests (`// CORPUS gpu/xla-tests/...`): HLO a person
    wrote for XLA's test suite (free formatting, no layouts), not text a compiler printed."""
    with open(path, encoding="utf-8") as f:
        return f.readline().startswith("// CORPUS gpu/xla-tests/")


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = sorted(CORPUS.glob("*/*.hlo")) + sorted(CORPUS.glob("alpa-gpu-dumps/*.txt"))
    return files


def manifest() -> dict:
    return json.loads((FIXTURES / "manifest.json").read_text())


@cache
def xla_view_map() -> dict[str, dict]:
    """XLA's view of every fixture and corpus file, computed once per run."""
    files = fixture_files() + corpus_files()
    views = xla_views([p.read_text(encoding="utf-8") for p in files])
    return {str(p): v for p, v in zip(files, views)}


def xprof_hlo_stats(path: Path) -> dict[tuple[int, str], dict]:
    """XProf's hlo_stats tool output (fixtures/gpu_captures.py): (program id, hlo op) -> its row,
    by column id (occurrences, total_time and total_self_time in us, ...)."""
    doc = json.loads(Path(path).read_text())
    cols = [c["id"] for c in doc["cols"]]
    rows = [dict(zip(cols, [c.get("v") for c in row["c"]])) for row in doc["rows"]]
    return {(int(v["program_id"]), v["hlo_op_name"]): v for v in rows}


def rel(p: Path) -> str:
    for base in (ROOT, CORPUS.parent):
        try:
            return str(p.relative_to(base))
        except ValueError:
            pass
    return str(p)


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"{CORPUS} not present")


def text_and_json(command: str, *args) -> tuple[list[str], dict]:
    """`hloscope COMMAND ARGS` run twice through the CLI: its text's lines and its JSON (-f
    json), the record a text view is checked against."""
    from typer.testing import CliRunner

    from hloscope.cli.app import app

    runner = CliRunner()
    argv = [command, *map(str, args)]
    return runner.invoke(app, argv).output.splitlines(), json.loads(runner.invoke(app, [*argv, "-f", "json"]).output)



# ---------------------------------------------------------------- the evidence contract
_EVIDENCE_ITEM = __import__("re").compile(r"^- `([^`]+)`( \([^)]*\))?: ", __import__("re").M)


@cache
def documented_evidence(code: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """(keys every finding of `code` carries, keys it carries in some cases) from the rule's
    doc (rules/<code>-*.md, "## Evidence"); None for a code with no such section."""
    from hloscope.rules.registry import REGISTRY  # (not load_rules: it would load plugins anew)

    rule = REGISTRY.get(code)
    doc = rule.doc() if rule is not None else ""
    if "## Evidence" not in doc:
        return None
    section = doc.split("## Evidence", 1)[1].split("\n## ", 1)[0]
    items = _EVIDENCE_ITEM.findall(section)
    return (frozenset(k for k, case in items if not case), frozenset(k for k, case in items if case))


def evidence_problems(finding) -> list[str]:
    """What a finding's evidence says that its rule's doc does not (or leaves out)."""
    documented = documented_evidence(finding.code)
    if documented is None:
        return []
    always, sometimes = documented
    keys = set(finding.evidence)
    return ([f"{finding.code}: evidence key {k!r} is not in its doc" for k in sorted(keys - always - sometimes)]
            + [f"{finding.code}: evidence lacks {k!r}, which its doc says every finding has"
               for k in sorted(always - keys)])


def entry_module(lines: str, params: str = "", result: str = "f32[8,128]"):
    """HAND-WRITTEN minimal module (for tests that state so): one entry computation with these
    parameters and instruction lines, parsed."""
    from hloscope.parser import parse

    (m,) = parse(f"HloModule m\n\nENTRY %e ({params}) -> {result} {{\n{lines}\n}}\n")
    return m


def counted_loop(x: str, step: str, trips: int) -> str:
    """HAND-WRITTEN minimal loop computations (for tests that state so): %body and %cond over a
    state (s32[] counter, `x`), the counter from 0 to `trips`; `step` is the body's line
    making %y (the new x) from %x. `x` is a shape with its layout, e.g. f32[8]{0}."""
    bare = re.sub(r"\{[^}]*\}", "", x)
    state = f"(s32[], {bare})"
    laid = f"(s32[], {x})"
    return f"""%body (s: {state}) -> {state} {{
  %s = {laid} parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = {x} get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  {step}
  ROOT %t = {laid} tuple(%j, %y)
}}

%cond (s: {state}) -> pred[] {{
  %s = {laid} parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant({trips})
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}}
"""


def make_rule(code: str, **options):
    """One rule with these options, built as `lint` builds it (hloscope.lint.build_rules)."""
    from hloscope.lint import LintOptions, build_rules

    (rule,) = build_rules(LintOptions(select=[code], rule_options={code: options} if options else {}))
    return rule


def _own_rule(code: str) -> bool:
    """Whether a rule is one of hloscope's own (a plugin's may leave out its help)."""
    from hloscope.rules.registry import REGISTRY

    rule = REGISTRY.get(code)
    return rule is not None and rule.__module__.startswith("hloscope.rules.")


@pytest.fixture(autouse=True)
def _evidence_is_as_documented(monkeypatch):
    """Every finding any test makes carries the evidence its rule's doc lists: the keys are a
    contract (JSON and SARIF consumers read them), checked wherever a rule fires. And every
    finding says what it found and what to do (its message and its help: the text format,
    SARIF's fullDescription and GitHub's annotations print both)."""
    from hloscope.rules.base import Rule

    made = []
    original = Rule.finding

    def finding(self, *args, **kwargs):
        made.append(f := original(self, *args, **kwargs))
        return f

    monkeypatch.setattr(Rule, "finding", finding)
    yield
    problems = sorted({p for f in made for p in evidence_problems(f)}
                      | {f"{f.code}: a finding with no {what}" for f in made if _own_rule(f.code)
                         for what, text in (("message", f.message), ("help", f.help))
                         if not isinstance(text, str) or not text.strip()})
    assert not problems, "\n".join(problems)
