"""rules/config.py and rules/baseline.py piece by piece: where the configuration is found,
what each key becomes, what is refused and how, and how a baseline filters (expected
answers from the module docstrings; the mutation run found most of this untested)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from hloscope.rules.baseline import VERSION, apply_baseline, read_baseline, write_baseline
from hloscope.rules.config import Config, ConfigError, load_config


def test_every_key_of_a_config_file(tmp_path):
    (tmp_path / "hloscope.toml").write_text(
        'select = ["H", "K0"]\nignore = ["H006"]\nfail-on = "error"\nchip = "v5p"\n'
        "[rules.defensive-copy]\nmin_bytes = 4096\n"
        '[chips.my-chip]\nname = "Mine"\npeak_bf16_flops = 1e15\n')
    cfg = load_config(start=tmp_path)
    assert cfg == Config(select=["H", "K0"], ignore=["H006"], fail_on="error", chip="v5p",
                         rules={"defensive-copy": {"min_bytes": 4096}},
                         chips={"my-chip": {"name": "Mine", "peak_bf16_flops": 1e15}},
                         source=str(tmp_path / "hloscope.toml"))


def test_defaults_when_a_key_is_absent(tmp_path):
    (tmp_path / "hloscope.toml").write_text('chip = "v5e"\n')
    cfg = load_config(start=tmp_path)
    assert (cfg.select, cfg.ignore, cfg.fail_on, cfg.rules, cfg.chips) == (None, [], "warning", {}, {})


def test_the_nearest_file_upwards_and_pyproject_only_with_its_table(tmp_path):
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "hloscope.toml").write_text('chip = "v4"\n')
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "other"\n')  # another tool's: skipped
    assert load_config(start=deep).chip == "v4"
    (tmp_path / "a" / "pyproject.toml").write_text('[tool.hloscope]\nchip = "v6e"\n')
    cfg = load_config(start=deep)
    assert cfg.chip == "v6e" and cfg.source.endswith("pyproject.toml [tool.hloscope]")


def test_the_pasted_tool_table_in_hloscope_toml_reads_the_same(tmp_path):
    (tmp_path / "hloscope.toml").write_text('[tool.hloscope]\nignore = ["H001"]\n')
    cfg = load_config(start=tmp_path)
    assert cfg.ignore == ["H001"] and cfg.source.endswith("[tool.hloscope]")


def test_an_explicit_file(tmp_path):
    f = tmp_path / "lint.toml"
    f.write_text('select = ["T"]\n')
    assert load_config(explicit=f).select == ["T"]
    with pytest.raises(ConfigError, match="no such file"):
        load_config(explicit=tmp_path / "none.toml")
    p = tmp_path / "pyproject.toml"
    p.write_text('[project]\nname = "x"\n')
    assert load_config(explicit=p) == Config(source=str(p))  # (named, but no table: defaults)


@pytest.mark.parametrize("text,words", [
    ('colour = "red"\n', "unknown key(s) colour; known: chip, chips, fail-on, ignore, rules, select"),
    ("rules = 3\n", "[rules.<name>] tables expected"),
    ("[rules]\nsplit-dot = 2\n", "[rules.<name>] tables expected"),
    ("chips = 1\n", "[chips.<key>] tables expected"),
    ("select = [\n", "invalid TOML"),
])
def test_what_is_refused_says_where_and_why(tmp_path, text, words):
    f = tmp_path / "hloscope.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(start=tmp_path)
    assert str(e.value).startswith(str(f)) and words in str(e.value)


def _finding(code, fingerprint, key):
    return SimpleNamespace(code=code, fingerprint=fingerprint, key=key)


def test_a_baseline_keeps_only_new_findings(tmp_path):
    old = [_finding("H001", "fp-a", ("H001", "m", "c", "x")), _finding("H002", "fp-b", ("H002", "m", "c", "y"))]
    path = tmp_path / "baseline.json"
    write_baseline(path, old + [old[0]])  # (duplicates written once)
    data = json.loads(path.read_text())
    assert data == {"version": VERSION, "findings": [{"code": "H001", "fingerprint": "fp-a"},
                                                       {"code": "H002", "fingerprint": "fp-b"}]}
    # committed beside the code, it is reviewed as a diff: one finding to a line, so that a
    # finding fixed or accepted is one line removed or added
    assert [line.strip() for line in path.read_text().splitlines() if "fp-" in line] == [
        '"fingerprint": "fp-a"', '"fingerprint": "fp-b"']
    known = read_baseline(path)
    new = _finding("H001", "fp-c", ("H001", "m", "c", "z"))
    kept, dropped = apply_baseline(old + [new], known)
    assert kept == [new] and dropped == 2


def test_a_version_1_baseline_matches_by_place(tmp_path):
    path = tmp_path / "v1.json"
    path.write_text(json.dumps({"findings": [{"code": "H001", "module": "m", "computation": "c",
                                              "instruction": "x"}]}))
    known = read_baseline(path)
    assert known == {("H001", "m", "c", "x")}
    kept, dropped = apply_baseline([_finding("H001", "fp", ("H001", "m", "c", "x"))], known)
    assert (kept, dropped) == ([], 1)


@pytest.mark.parametrize("text", ["not json", "[]", '{"version": 2}', '{"version": 2, "findings": [{"code": 1}]}'])
def test_what_is_no_baseline_is_refused(tmp_path, text):
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="not a hloscope baseline"):
        read_baseline(path)


def test_another_tools_project_file_is_passed_over_on_the_way_up(tmp_path):
    (tmp_path / "hloscope.toml").write_text('fail-on = "error"\n')
    inner = tmp_path / "pkg"
    inner.mkdir()
    # a project file of another tool, not valid TOML and not naming hloscope: not read at all
    (inner / "pyproject.toml").write_text("[project\nname = broken\n")
    assert load_config(start=inner).source == str(tmp_path / "hloscope.toml")
    # one that names hloscope (as a dependency) but has no [tool.hloscope]: read, passed over
    (inner / "pyproject.toml").write_text('[project]\ndependencies = ["hloscope>=1"]\n')
    cfg = load_config(start=inner)
    assert cfg.source == str(tmp_path / "hloscope.toml") and cfg.fail_on == "error"


def test_unknown_keys_are_listed_one_by_one(tmp_path):
    path = tmp_path / "hloscope.toml"
    path.write_text('zeta = 1\nalpha = 2\nfail-on = "error"\n')
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert "unknown key(s) alpha, zeta; known: " in str(e.value)
