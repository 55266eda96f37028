"""The command line: JSON contracts, text output, and errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from hloscope.cli.app import app
from hloscope.parser import load

runner = CliRunner()
MLP = FIXTURES / "tpu" / "mlp_v5e.hlo.txt"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def hloscope(*args, input_bytes=None):
    """The installed entry point in a real process (exit code, stdout, stderr)."""
    return subprocess.run([sys.executable, "-m", "hloscope", *map(str, args)],
                          capture_output=True, text=True)


def test_parse_json_contract():
    res = run("parse", "--format", "json", MLP)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    (module,) = out["modules"]
    (ir,) = load(MLP)
    assert module["name"] == ir.name == "jit_mlp"
    assert [c["name"] for c in module["computations"]] == [c.name for c in ir.computations]
    entry = [c for c in module["computations"] if c["is_entry"]]
    assert [c["name"] for c in entry] == [ir.entry.name]
    for comp, c in zip(module["computations"], ir.computations):
        assert [i["name"] for i in comp["instructions"]] == [i.name for i in c.instructions]
        for rec in comp["instructions"]:
            assert set(rec) >= {"name", "opcode", "shape", "operands"}
            assert "{" not in rec["shape"]  # the contract: shape without layout
    params = [i for c in module["computations"] for i in c["instructions"]
              if i["opcode"] == "parameter" and i["name"].startswith("param")]
    assert params and all(p["shape"].startswith(("bf16[", "f32[", "(")) for p in params)


def test_parse_json_tuple_and_token_shapes():
    res = run("parse", "--format", "json", FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    shapes = {i["shape"] for m in json.loads(res.stdout)["modules"]
              for c in m["computations"] for i in c["instructions"]}
    assert any(s.startswith("(") and ", " in s for s in shapes)


def test_stats_counts_match_the_ir():
    path = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"
    res = run("stats", "--format", "json", path)
    assert res.exit_code == 0
    (s,) = json.loads(res.stdout)["modules"]
    (m,) = load(path)
    assert s["instructions"] == len(m.instructions())
    assert s["opcodes"]["fusion"] == sum(i.opcode == "fusion" for i in m.instructions())
    assert s["opcodes"]["all-reduce"] == 2
    assert sum(s["fusion_kinds"].values()) == s["opcodes"]["fusion"]
    assert sum(c["instructions"] for c in s["per_computation"]) == s["instructions"]


def test_stats_custom_call_targets_of_a_pallas_kernel():
    res = run("stats", FIXTURES / "tpu" / "pallas_matmul_v5e.hlo.txt")
    assert res.exit_code == 0
    assert "custom-call targets: tpu_custom_call 1" in res.stdout


def test_strict_flag_gives_the_same_json():
    a = run("parse", "--format", "json", MLP).stdout
    b = run("parse", "--format", "json", "--strict", MLP).stdout
    assert a == b


def test_lint_runs_and_reports_a_summary():
    res = run("lint", MLP)
    assert res.exit_code in (0, 1)
    assert "instructions checked" in res.stdout


LINT_COULD_NOT = "0 finding(s) (none) in 1 file(s), 0 instructions checked; 1 file(s) could not be linted\n"


@pytest.mark.parametrize(
    ("content", "where", "message"),
    [
        (b"", ":1:1:", "empty file"),
        (b"HloModule m\n\x00\x01", ":2:1:", "binary file"),
        (b"HloModule m\n\xff\xfe", ":2:1:", "invalid UTF-8"),
        (b"HloModule m\nENTRY e {\n  a = f32[2 parameter(0)\n}\n", ":3:13:", "unexpected name 'parameter'"),
        (b"HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n", ":4:1:", "unexpected end of input"),
        (b'HloModule m\nENTRY e {\n  ROOT a = f32[2] custom-call(), custom_call_target="x\n}\n',
         ":3:53:", "unterminated string"),
    ],
    ids=["empty", "binary", "utf8", "bad-shape", "truncated", "unterminated-string"],
)
def test_bad_input_gives_location_and_exit_2(tmp_path, content, where, message):
    bad = tmp_path / "bad.hlo"
    bad.write_bytes(content)
    for command in ("parse", "stats", "lint"):
        proc = hloscope(command, bad)
        assert proc.returncode == 2, proc
        first = proc.stderr.splitlines()[0]
        assert first.startswith(f"{bad}{where} error: "), first
        assert message in first
        assert "Traceback" not in proc.stderr
        # lint reports the run (its summary line counts the file it could not lint)
        assert proc.stdout == ("" if command != "lint" else LINT_COULD_NOT)


def test_missing_file_is_an_input_error(tmp_path):
    proc = hloscope("stats", tmp_path / "nope.hlo")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{tmp_path / 'nope.hlo'}: error: cannot read file")


def test_usage_error_exit_2():
    proc = hloscope("stats", "--format", "yaml", MLP)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_version_is_quick_to_import():
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "hloscope", "--version"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("hloscope ")
    heavy = [line for line in proc.stderr.splitlines() if line.rstrip().endswith(("| jax", "| lark", "| networkx"))]
    assert not heavy, heavy


def test_console_entry_flushes_everything_and_keeps_exit_codes():
    """`run()` leaves with os._exit after the command: output must be complete and the
    exit code the command's (0 clean, 1 findings, 2 bad input)."""
    import json
    import subprocess
    import sys

    from conftest import ROOT

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "hloscope", *args], capture_output=True,
                              text=True, cwd=ROOT)

    big = cli("parse", "--format", "json", "--no-cache", "fixtures/tpu/llm_v5p_16.hlo.txt")
    assert big.returncode == 0 and len(big.stdout) > 1_000_000
    assert json.loads(big.stdout)["modules"][0]["name"] == "jit_model"
    assert cli("lint", "--no-cache", "fixtures/rules/H001/scan_carry_cpu.hlo.txt").returncode == 1
    bad = cli("stats", "no/such/file.hlo.txt")
    assert bad.returncode == 2 and "cannot read file" in bad.stderr


def test_long_parses_say_so_on_a_terminal_only(monkeypatch):
    import io

    from hloscope.cli import common as cli

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    path = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"
    monkeypatch.setitem(cli.NOTICE_BYTES, False, 1000)
    for stream, expected in ((Terminal(), f"parsing {path} (0 MB)...\r\x1b[K"), (io.StringIO(), "")):
        monkeypatch.setattr(cli.sys, "stderr", stream)
        modules = cli.load_file(path)
        assert modules and stream.getvalue() == expected


@pytest.mark.parametrize("command", ["roofline", "sharding", "parse"])
def test_a_bad_file_in_a_folder_is_located_and_the_others_are_reported(tmp_path, command):
    """A one-path command over a folder: the refused file's located error, the good file's
    report in full (as it alone gives), exit 2. (The refused file is hand-written: a line
    cut short.)"""
    import shutil

    shutil.copy(MLP, tmp_path / "good.hlo.txt")
    bad = tmp_path / "bad.hlo.txt"  # (sorts first: the good one comes after it)
    bad.write_text("HloModule t\n\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] negate(a\n")
    alone = run(command, "--format", "json", "--no-cache", tmp_path / "good.hlo.txt")
    res = hloscope(command, "--format", "json", "--no-cache", tmp_path)
    assert alone.exit_code == 0 and res.returncode == 2
    assert res.stderr.startswith(f"{bad}:6:1: error: unexpected end of input")
    assert json.loads(res.stdout)["modules"] == json.loads(alone.stdout)["modules"]
