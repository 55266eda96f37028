"""The light install (#40): HLO text needs no jax, jaxlib or numpy. Every command is run in a
child process where importing them fails, as in an environment installed with plain
`pip install hloscope`: the text commands work; each jax-backed feature says which extra to
install (exit 2, one line, no traceback) and the rest of the run goes on. (.ci/run also
builds such an environment for real and measures it.)"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT

BLOCKER = """
import sys

class NoJax:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jax", "jaxlib", "numpy", "scipy", "ml_dtypes", "libtpu"):
            raise ImportError(f"No module named {name!r} (a light install)")
        return None

sys.meta_path.insert(0, NoJax())
"""


@pytest.fixture(scope="module")
def light_env(tmp_path_factory) -> dict:
    """An environment whose every Python process (the command's workers too) cannot import
    jax: a sitecustomize on PYTHONPATH installs the blocker; a cache of its own."""
    import os

    site = tmp_path_factory.mktemp("light-site")
    (site / "sitecustomize.py").write_text(BLOCKER)
    return {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}",
            "HLOSCOPE_CACHE_DIR": str(tmp_path_factory.mktemp("light-cache"))}


MLP = FIXTURES / "cpu" / "mlp_cpu.hlo.txt"
TPU = FIXTURES / "tpu" / "transformer_v5p.hlo.txt"
KERNEL = FIXTURES / "rules" / "K001" / "output_accumulator_v5e.hlo.txt"
T004 = FIXTURES / "rules" / "T004"
EXTRA = "pip install 'hloscope[jax]'"


_ENV: dict = {}


@pytest.fixture(autouse=True)
def _light(light_env):
    _ENV.clear()
    _ENV.update(light_env)


def light(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hloscope", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=_ENV, timeout=300)


def test_the_blocker_blocks():
    done = subprocess.run([sys.executable, "-c", "import jax"], capture_output=True, text=True, env=_ENV)
    assert done.returncode == 1 and "a light install" in done.stderr


@pytest.mark.parametrize("args", [
    ["lint", "--exit-zero", TPU], ["stats", TPU], ["roofline", TPU, "--by", "layer"], ["memory", TPU],
    ["sharding", TPU], ["parse", MLP], ["diff", MLP, MLP], ["shape", "bf16[3,5]{1,0:T(8,128)(2,1)}"],
    ["profile", T004 / "transpose_copy_cpu.trace.json.gz", "--hlo", T004 / "transpose_copy_cpu.hlo.txt"],
    ["rules"],
])
def test_text_commands_need_no_jax(args):
    done = light(*args)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.strip()
    assert "Traceback" not in done.stderr


def test_graph_and_report_need_no_jax(tmp_path):
    done = light("graph", MLP, "-o", tmp_path / "g.dot")
    assert done.returncode == 0, done.stderr
    done = light("report", TPU, MLP, "-o", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").stat().st_size > 10_000


def test_kernels_say_which_extra_and_the_rules_go_on():
    done = light("kernel", KERNEL)
    assert done.returncode == 0, done.stderr
    assert f"not decoded: decoding a Mosaic kernel needs jax and jaxlib: {EXTRA}" in done.stdout
    done = light("lint", "--exit-zero", KERNEL)
    assert done.returncode == 0, done.stderr
    # one info finding for the module (X002), naming the extra; the kernel rules are skipped
    assert "X002 [info] kernel-not-decoded: 1 Pallas kernel(s) not decoded" in done.stdout
    assert EXTRA in done.stdout and "K001 [" not in done.stdout


@pytest.mark.parametrize(("path", "says"), [
    (FIXTURES / "inputs" / "tanh_matmul.after_optimizations.hlo.pb", "reading a binary HloProto"),
    (FIXTURES / "inputs" / "tanh_matmul.stablehlo.mlir", "converting it to HLO"),
])
def test_inputs_that_need_jax_say_so(path, says):
    done = light("stats", path)
    assert done.returncode == 2
    assert says in done.stderr and EXTRA in done.stderr and "Traceback" not in done.stderr


def test_a_capture_is_read_without_jax_and_other_files_go_on():
    """*.xplane.pb captures are read by hloscope's own protobuf reader: no extra needed; the
    figures are those the jax route gives (README's example: 3 steps of 75.50 us)."""
    capture = FIXTURES / "rules" / "T005" / "dma_bound_matmul_v5e.xplane.pb"
    done = light("profile", capture, "--hlo", capture.with_name("dma_bound_matmul_v5e.hlo.txt"))
    assert done.returncode == 0, done.stderr
    assert "3 op events, 3 step(s) of 75.50 us" in done.stdout and "TPU v5 lite" in done.stdout
    # lint of two files, one with a Pallas kernel: both linted
    done = light("lint", "--exit-zero", KERNEL, MLP)
    assert done.returncode == 0 and "in 2 file(s)" in done.stdout


def test_compile_names_the_tpu_extra():
    done = light("compile", f"{ROOT / 'examples' / 'mlp.py'}:train_step", "--args", "f32[8]")
    assert done.returncode == 2 and "pip install 'hloscope[tpu]'" in done.stderr
