"""`hloscope stats` with the cache: it keeps a text's counts, not its parsed module.

Oracle: the same command with --no-cache (which counts the file afresh) on real compiler
output; a run the cache answers must not count or parse the file at all."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope import cache
from hloscope.cli import stats as stats_cli
from hloscope.cli.app import app

runner = CliRunner()
FILE = FIXTURES / "tpu" / "llm_v5p_16.hlo.txt"
OTHER = FIXTURES / "cpu" / "mlp_cpu.hlo.txt"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    cache.set_enabled(True)
    yield tmp_path / "cache"
    cache.set_enabled(True)


def _stats(path, *flags) -> dict:
    res = runner.invoke(app, ["stats", "--format", "json", *flags, str(path)])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _no_counting(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the file was counted again")

    monkeypatch.setattr(stats_cli, "_counted_early", refuse)
    monkeypatch.setattr(stats_cli, "load_file", refuse)


def test_cached_counts_equal_fresh_ones_and_are_read_back_without_counting(cache_dir, monkeypatch):
    fresh = _stats(FILE, "--no-cache")
    assert _stats(FILE) == fresh  # (cold: counted, then kept)
    assert len(list((cache_dir / "stats").glob("*.pickle"))) == 1
    from hloscope._speed import native

    if native() is not None:  # (the core counts without parsing: the module is not kept)
        assert not (cache_dir / "modules").exists()
    _no_counting(monkeypatch)
    assert _stats(FILE) == fresh


def test_text_format_cached_equals_fresh(cache_dir, monkeypatch):
    """The text format (no per-computation list: a key of its own), cold then cached."""
    fresh = runner.invoke(app, ["stats", "--no-cache", str(FILE)]).output
    assert runner.invoke(app, ["stats", str(FILE)]).output == fresh and "instructions in" in fresh
    _no_counting(monkeypatch)
    assert runner.invoke(app, ["stats", str(FILE)]).output == fresh


def test_same_text_under_another_name_names_the_new_file(cache_dir, tmp_path, monkeypatch):
    _stats(FILE)
    copy = tmp_path / "renamed.hlo.txt"
    shutil.copy(FILE, copy)
    _no_counting(monkeypatch)
    got = _stats(copy)
    assert [m["path"] for m in got["modules"]] == [str(copy)]
    monkeypatch.undo()
    cache.set_enabled(True)
    assert got == _stats(copy, "--no-cache")


def test_changed_file_is_counted_again(cache_dir, tmp_path):
    path = tmp_path / "changing.hlo.txt"
    shutil.copy(FILE, path)
    first = _stats(path)
    shutil.copy(OTHER, path)
    second = _stats(path)
    assert second == _stats(path, "--no-cache") and second != first


def test_a_refused_file_keeps_nothing(cache_dir, tmp_path):
    """A file the checks refuse: the located error, exit 2, and no counts kept for it."""
    bad = tmp_path / "bad.hlo.txt"
    bad.write_text(FILE.read_text().replace("parameter(0)", "parameter(0), bogus_attr=", 1))
    res = runner.invoke(app, ["stats", str(bad)])
    assert res.exit_code == 2 and f"{bad}:" in res.output
    assert not list((cache_dir / "stats").glob("*.pickle"))
