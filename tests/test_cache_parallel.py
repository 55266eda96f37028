"""The cached and parallel paths give exactly the results of the plain serial ones."""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES, TRICKS_ON
from irdump import dump_module
from typer.testing import CliRunner

from hloscope import cache
from hloscope._speed import enabled
from hloscope.cli.app import app
from hloscope.lint import LintOptions, expand, lint_files
from hloscope.parser import load

runner = CliRunner()


def _written(folder, seconds: float = 10.0) -> list:
    """The cache entries in `folder`, waiting (boundedly) for a CLI's write after its
    output: a child it does not wait for writes parsed modules once the parent has left."""
    import time

    deadline = time.monotonic() + seconds
    while not list(folder.glob("*.pickle")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.05)  # (an entry is renamed into place whole: a second one would be next)
    return list(folder.glob("*.pickle"))


def _keys(report):
    return [(f.key, f.message, f.line, f.column) for f in report.findings]


def test_cached_modules_equal_parsed_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "c"))
    path = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"
    # (strict mode's grammar keeps its modules; so does the default parse on the plain route)
    first = load(path, strict=True)
    assert list((tmp_path / "c" / "modules").glob("*.pickle"))
    second = load(path, strict=True)  # from the cache
    cache.set_enabled(False)
    try:
        fresh = load(path)
    finally:
        cache.set_enabled(True)
    assert [dump_module(m) for m in second] == [dump_module(m) for m in fresh] == [dump_module(m) for m in first]


def test_the_core_parse_keeps_no_modules_and_the_plain_route_does(tmp_path, monkeypatch):
    """Read back, a kept module took longer than the compiled core's parse of the file
    (hloscope.parser.load._core_scans): the default parse keeps none where the core scans,
    and keeps one on the plain route, where it still pays."""
    import os
    import subprocess
    import sys

    from importlib.util import find_spec

    src = str(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")
    core = find_spec("hloscope_native") is not None  # (built: a fresh process scans with it)
    for plain, kept in (("0", 0 if core else 1), ("1", 1)):
        folder = tmp_path / plain
        env = {**os.environ, "HLOSCOPE_CACHE_DIR": str(folder), "HLOSCOPE_PLAIN": plain}
        subprocess.run([sys.executable, "-c", f"from hloscope.parser import load; load({src!r})"],
                       env=env, check=True)
        assert len(list((folder / "modules").glob("*.pickle"))) == kept


def test_cached_lint_equals_fresh_lint(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "c"))
    files = sorted((FIXTURES / "rules").glob("H*/*.hlo.txt"))
    opts = LintOptions(chip="v5p")
    cold = lint_files(files, opts)
    warm = lint_files(files, opts)
    assert list((tmp_path / "c" / "lint").glob("*.pickle"))
    cache.set_enabled(False)
    try:
        fresh = lint_files(files, opts)
    finally:
        cache.set_enabled(True)
    assert _keys(cold) == _keys(warm) == _keys(fresh)
    assert warm.instructions == fresh.instructions


def test_cached_lint_prints_what_a_fresh_lint_prints_and_loads_no_parser(tmp_path):
    """A re-lint answered from the cache gives the same text, SARIF (rule metadata) and JSON
    output, with each finding's source excerpt, without importing the scanner or a rule;
    a directory linted in two processes shows the same excerpts as the serial run."""
    import subprocess
    import sys

    files = [str(FIXTURES / "tpu" / "llm_v5p_16.hlo.txt"),
             str(FIXTURES / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt")]
    code = ("import sys\nfrom hloscope.lint import LintOptions, lint_files\n"
            "from hloscope.report import render\n"
            "r = lint_files(sys.argv[2:], LintOptions())\n"
            "print(render(sys.argv[1], r))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('hloscope.parser.fast', "
            "'hloscope.rules.h', 'hloscope.rules.engine'))))")
    env = {**__import__("os").environ, "HLOSCOPE_CACHE_DIR": str(tmp_path / "c")}

    def run(fmt):
        done = subprocess.run([sys.executable, "-c", code, fmt, *files], capture_output=True,
                              text=True, env=env, check=True)
        out, _, loaded = done.stdout.rstrip("\n").rpartition("\n")
        return out, loaded

    fresh, loaded = run("text")
    assert "hloscope.parser.fast.scan" in loaded and " | " in fresh  # excerpts shown
    for fmt in ("text", "json"):
        cached, loaded = run(fmt)
        # (with the tricks off, plug-ins may exist, so the rule classes load to check them)
        assert loaded == "[]" if enabled() else "scan" not in loaded
        if fmt == "text":
            assert cached == fresh
    sarif, loaded = run("sarif")  # its rule metadata: the rule classes load, the parser not
    assert '"id": "H003"' in sarif and "scan" not in loaded and "h003_padding_waste" in loaded
    two = lint_files(files, LintOptions(), jobs=2)
    from hloscope.report import render

    assert render("text", two) == fresh


def test_cli_writes_the_parsed_module_after_its_output_and_both_paths_agree(tmp_path):
    """The CLI writes a parsed module to the cache after printing (a child it does not wait
    for; in one process with HLOSCOPE_PLAIN=1): the entry appears either way, the next
    command is served from it with the same output, and no process is left unreaped."""
    import os
    import subprocess
    import sys

    src = str(FIXTURES / "tpu" / "llm_v5p_16.hlo.txt")
    outputs = []
    for plain in ("0", "1"):
        env = {**os.environ, "HLOSCOPE_CACHE_DIR": str(tmp_path / plain), "HLOSCOPE_PLAIN": plain}
        first = subprocess.run([sys.executable, "-m", "hloscope", "parse", "--strict", src], env=env,
                               capture_output=True, text=True, check=True)
        folder = tmp_path / plain / "modules"
        assert len(_written(folder)) == 1 and not list(folder.glob("*.tmp"))
        second = subprocess.run([sys.executable, "-m", "hloscope", "parse", "--strict", src], env=env,
                                capture_output=True, text=True, check=True)
        assert first.stdout == second.stdout and first.stdout.strip()
        outputs.append(first.stdout)
    assert outputs[0] == outputs[1]
    ps = subprocess.run(["ps", "-eo", "stat,ppid"], capture_output=True, text=True).stdout
    assert not [line for line in ps.splitlines()[1:]
                if line.split()[0].startswith("Z") and line.split()[1] == str(os.getpid())]


def test_parallel_workers_of_the_cli_write_their_modules_at_once(tmp_path):
    """Workers forked from a process that defers its large cache writes to the end of the
    command (the CLI's) write each parsed module when it is made: they never reach that end,
    and would otherwise keep every module they parsed."""
    import os
    import subprocess
    import sys

    files = [str(p) for p in sorted((FIXTURES / "rules").glob("H00[1-4]/*.hlo.txt"))]
    code = ("import sys\nfrom hloscope import cache\ncache.write_in_background()\n"
            "from hloscope.lint import LintOptions, lint_files\n"
            "r = lint_files(sys.argv[1:], LintOptions(strict=True), jobs=2)\nassert not r.errors\n"
            "print(len(cache._deferred))")
    env = {**os.environ, "HLOSCOPE_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code, *files], capture_output=True, text=True,
                          env=env, check=True)
    assert done.stdout.strip() == "0"  # the parent parsed nothing itself
    assert len(list((tmp_path / "modules").glob("*.pickle"))) == len(set(
        (FIXTURES / "rules").glob("H00[1-4]/*.hlo.txt")))


def test_changed_options_or_file_miss_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "c"))
    src = FIXTURES / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt"
    f = tmp_path / "x.hlo.txt"
    shutil.copy(src, f)
    assert len(lint_files([f], LintOptions(select=["H003"])).findings) == 2
    assert len(lint_files([f], LintOptions(select=["H002"])).findings) == 2
    f.write_text(src.read_text().replace("f32[16384,8]", "f32[16384,8]", 1) + "\n// changed\n")
    assert len(lint_files([f], LintOptions(select=["H003"])).findings) == 2


def test_parallel_directory_lint_equals_serial():
    serial = lint_files([FIXTURES], LintOptions(chip="v5p"), jobs=1)
    parallel = lint_files([FIXTURES], LintOptions(chip="v5p"), jobs=2)
    assert serial.files == parallel.files and len(serial.files) > 40
    assert _keys(serial) == _keys(parallel)
    assert serial.instructions == parallel.instructions


def test_directory_expansion_prefers_xla_dump_names(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    base = (FIXTURES / "cpu" / "mlp_cpu.hlo.txt").read_text()
    (dump / "module_0001.jit_f.before_optimizations.txt").write_text(base)
    (dump / "module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt").write_text(base)
    (dump / "module_0001.jit_f.sm_8.0_gpu_after_optimizations-buffer-assignment.txt").write_text("x")
    assert [p.name for p in expand([dump])] == ["module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt"]
    res = runner.invoke(app, ["lint", str(dump), "--format", "json", "--no-cache"])
    assert json.loads(res.stdout)["summary"]["files"] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(app, ["lint", str(empty)])
    assert res.exit_code == 2 and "no files matching" in res.output


def test_no_cache_flag_writes_nothing(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "c"))
    for args in (["stats"], ["lint"], ["parse"]):
        runner.invoke(app, [*args, "--no-cache", str(FIXTURES / "cpu" / "mlp_cpu.hlo.txt")])
        # and in a fresh process, which compiles its patterns (kept elsewhere)
        done = subprocess.run([sys.executable, "-m", "hloscope", *args, "--no-cache",
                               str(FIXTURES / "tpu" / "transformer_v5p.hlo.txt")], capture_output=True,
                              env={**TRICKS_ON, "HLOSCOPE_COMPILED_DIR": str(tmp_path / "compiled")})
        assert done.returncode in (0, 1), done.stderr  # (lint: 1 when it finds something)
    cache.set_enabled(True)
    assert not (tmp_path / "c").exists()
    assert list((tmp_path / "compiled").iterdir())


def test_auto_jobs_uses_processes_only_when_the_input_repays_them(monkeypatch):
    import os

    from hloscope import lint

    assert lint.auto_jobs([FIXTURES / "rules"]) == 1  # 1.6 MB of small files: serial is faster
    assert lint.auto_jobs([FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"]) == 1  # one file
    monkeypatch.setattr(lint, "PARALLEL_MIN_BYTES", 256 << 10)
    assert lint.auto_jobs([FIXTURES / "rules"]) == min(os.cpu_count() or 1, len(lint.expand([FIXTURES / "rules"])))


# stats on two cores (hloscope.stats.halves): run in a fresh process, which has one thread (the
# test process may hold JAX's), with two cores assumed (the result must not depend on it)
_HALVES = """
import json, os, sys
os.cpu_count = lambda: 2
from hloscope.stats.halves import stats_in_halves
from hloscope.parser import ParseError, parse
from hloscope.stats.counts import module_stats
from hloscope.cost.memory import memory_facts
text = open(sys.argv[1]).read()
if len(sys.argv) > 2:  # a line replaced: (line number, new text)
    lines = text.split("\\n")
    lines[int(sys.argv[2]) - 1] = sys.argv[3]
    text = "\\n".join(lines)
out = {}
for every in (False, True):
    halves = stats_in_halves(text, sys.argv[1], every)
    try:
        serial = [{**module_stats(m, every), "memory": memory_facts(m)} for m in parse(text, sys.argv[1])]
    except ParseError as e:
        serial = str(e)
    out[str(every)] = [halves, serial]
print(json.dumps(out))
"""


def _halves(*args):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _HALVES, *map(str, args)], capture_output=True,
                          text=True, check=True, env=TRICKS_ON)
    return json.loads(done.stdout)


def test_stats_in_halves_equal_serial_stats():
    big = FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"
    for every, (halves, serial) in _halves(big).items():
        assert halves is not None, every
        assert halves == serial, every
        assert serial[0]["per_computation"] or every == "False"
        # (the StackFrames tables sit before the computations: the second half resolves
        # its frames with the first half's tables)
        assert all(b["source"].endswith("(transformer_block)") for b in halves[0]["memory"]["largest_buffers"])


def test_stats_in_halves_leave_errors_to_the_serial_path():
    """A broken line in either half, or a call across the halves to a computation no half
    has: no halves result, and the serial path reports the error."""
    big = FIXTURES / "tpu" / "llm_v5p_big.hlo.txt"
    lines = big.read_text().split("\n")
    early = next(k for k, s in enumerate(lines) if " multiply(" in s) + 1
    late = max(k for k, s in enumerate(lines) if " multiply(" in s) + 1
    call = max(k for k, s in enumerate(lines) if "calls=%" in s) + 1
    for number, new in ((early, lines[early - 1].replace(" multiply(", " multiply(%nope, ")),
                        (late, lines[late - 1].replace(" multiply(", " multiply(%nope, ")),
                        (call, lines[call - 1].replace("calls=%", "calls=%nope"))):
        for every, (halves, serial) in _halves(big, number, new).items():
            assert halves is None, (number, every)
            assert isinstance(serial, str) and f":{number}:" in serial, serial


def test_stats_command_counts_large_modules_alike_with_and_without_cache(tmp_path):
    import subprocess
    import sys

    big = str(FIXTURES / "tpu" / "llm_v5p_big.hlo.txt")
    env = {**__import__("os").environ, "HLOSCOPE_CACHE_DIR": str(tmp_path)}

    def stats(*flags):
        return subprocess.run([sys.executable, "-m", "hloscope", "stats", "--format", "json",
                               *flags, big], capture_output=True, text=True, env=env, check=True).stdout

    # (in halves, serially, counted with the cache cold, then read from it)
    assert stats("--no-cache") == stats("--no-cache", "-j", "1") == stats() == stats()
    assert len(list((tmp_path / "stats").glob("*.pickle"))) == 1  # the counts were kept


def test_stats_in_halves_never_fork_a_threaded_process():
    import subprocess
    import sys

    code = ("import os, sys, threading, time\nos.cpu_count = lambda: 2\n"
            "from hloscope.stats.halves import stats_in_halves\ntext = open(sys.argv[1]).read()\n"
            "alone = stats_in_halves(text, 'm', False) is not None\n"
            "threading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n"
            "print(alone, stats_in_halves(text, 'm', False) is None)")
    done = subprocess.run([sys.executable, "-c", code, str(FIXTURES / "tpu" / "llm_v5p_big.hlo.txt")],
                          capture_output=True, text=True, check=True, env=TRICKS_ON)
    assert done.stdout.split() == ["True", "True"]


# The checks after the scan run beside the command (hloscope.parser.load.load_checked_ahead,
# hloscope._speed.fork.Ahead): in a fresh process (one thread, so it may fork), with two
# cores assumed, commands are run in-process and their forks counted.
_BESIDE = """
import json, os, sys
os.cpu_count = lambda: 2
forks = []
_fork = os.fork
def fork():
    pid = _fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = fork
from typer.testing import CliRunner
from hloscope.cli.app import app
runs = []
for args in json.loads(sys.argv[1]):
    done = CliRunner().invoke(app, args)
    runs.append([args, done.exit_code, done.output])
print(json.dumps({"runs": runs, "forks": len(forks)}))
"""


def _mutants(folder):
    """A real 16-layer TPU dump, and copies of it with one line changed (each labelled by
    what it breaks): an operand never defined, every tuple index out of range (the rules
    then meet a broken module), a dimensions value that is not a list of integers."""
    import re

    good = (FIXTURES / "tpu" / "llm_v5p_16.hlo.txt").read_text()
    lines = good.split("\n")
    fusion = max(k for k, line in enumerate(lines) if " fusion(%" in line)
    undefined = list(lines)
    undefined[fusion] = re.sub(r"fusion\(%[\w.\-]+", "fusion(%never_defined", lines[fusion], count=1)
    broadcast = next(k for k, line in enumerate(lines) if " broadcast(" in line and "dimensions={" in line)
    malformed = list(lines)
    malformed[broadcast] = re.sub(r"dimensions=\{[^}]*\}", "dimensions={x}", lines[broadcast])
    out = {"good": good, "undefined_operand": "\n".join(undefined),
           "tuple_index": re.sub(r"index=\d+", "index=99", good), "malformed_value": "\n".join(malformed)}
    folder.mkdir()
    for name, text in out.items():
        (folder / f"{name}.hlo.txt").write_text(text)
    return {name: str(folder / f"{name}.hlo.txt") for name in out}


def test_checks_beside_the_command_give_what_serial_checks_give(tmp_path):
    """lint, memory, roofline, stats and graph on a good file and on three it must refuse,
    one by one and as a folder: the same output and exit code with the checks in a second
    process as with every trick off, no drawing written for a refused file, and the
    checks did go to a second process (none with `-j 1`, which asks for one process)."""
    import subprocess
    import sys

    files = _mutants(tmp_path / "dumps")
    runs = []
    for name, path in files.items():
        runs += [["lint", "--no-cache", path], ["memory", "--no-cache", path],
                 ["roofline", "--no-cache", path], ["stats", "--no-cache", path],
                 ["graph", "--no-cache", "-o", str(tmp_path / f"{name}.dot"), path]]
    folder = str(tmp_path / "dumps")
    runs += [["lint", "--no-cache", folder], ["memory", "--no-cache", folder],
             ["stats", "--no-cache", folder]]
    result = {}
    for mode, env in (("beside", TRICKS_ON), ("plain", {**TRICKS_ON, "HLOSCOPE_PLAIN": "1"})):
        done = subprocess.run([sys.executable, "-c", _BESIDE, json.dumps(runs)], capture_output=True,
                              text=True, check=True, env=env, cwd=tmp_path)
        result[mode] = json.loads(done.stdout)
    assert result["beside"]["runs"] == result["plain"]["runs"]
    assert result["beside"]["forks"] >= 20 and result["plain"]["forks"] == 0
    codes = {tuple(args): code for args, code, _ in result["plain"]["runs"]}
    for name, path in files.items():
        refused = name != "good"
        assert codes[("memory", "--no-cache", path)] == (2 if refused else 0), name
        assert (tmp_path / f"{name}.dot").exists() != refused, name
    assert all(f"{files[n]}:" in result["plain"]["runs"][-2][2] for n in files if n != "good")
    # `-j 1` asks for one process: no checks beside the rules
    one = [["lint", "--no-cache", "-j", "1", files["good"]], ["stats", "--no-cache", "-j", "1", files["good"]],
           ["memory", "--no-cache", files["good"]]]
    done = subprocess.run([sys.executable, "-c", _BESIDE, json.dumps(one)], capture_output=True,
                          text=True, check=True, env=TRICKS_ON, cwd=tmp_path)
    assert json.loads(done.stdout)["forks"] == 0


_AHEAD = """
import gc, json, os
os.cpu_count = lambda: 2
from hloscope._speed.fork import Ahead
out = {}
passing = Ahead(lambda: None)
failing = Ahead(lambda: 1 / 0)
out["gc_paused"] = not gc.isenabled()
out["verdicts"] = [passing.passed(), failing.passed(), failing.passed()]
out["gc_back"] = gc.isenabled()
try:
    os.waitpid(-1, os.WNOHANG)
    out["children_left"] = True
except ChildProcessError:
    out["children_left"] = False
os.environ["HLOSCOPE_PLAIN"] = "1"
try:
    Ahead(lambda: 1 / 0)
    out["plain_raises"] = False
except ZeroDivisionError:
    out["plain_raises"] = True
print(json.dumps(out))
"""


def test_work_ahead_in_a_child_says_whether_it_passed():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _AHEAD], capture_output=True, text=True,
                          check=True, env=TRICKS_ON)
    assert json.loads(done.stdout) == {"gc_paused": True, "verdicts": [True, False, False],
                                       "gc_back": True, "children_left": False,
                                       "plain_raises": True}
