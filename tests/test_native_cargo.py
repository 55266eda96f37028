"""The compiled scanner's own checks (native/): `cargo test` (its unit tests and a 2-second
fuzz run over mutated real modules) and `cargo clippy -D warnings`, run where cargo is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NATIVE = Path(__file__).resolve().parents[1] / "native"
needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="no Rust toolchain")


def _cargo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["cargo", *args], cwd=NATIVE, capture_output=True, text=True, timeout=900)


@needs_cargo
def test_cargo_test_passes():
    done = _cargo("test", "--no-default-features", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@needs_cargo
def test_cargo_clippy_is_clean():
    if _cargo("clippy", "--version").returncode != 0:
        pytest.skip("clippy is not installed")
    for features in (["--no-default-features", "--all-targets"], ["--lib"]):  # (and the bindings)
        done = _cargo("clippy", *features, "--quiet", "--", "-D", "warnings")
        assert done.returncode == 0, done.stderr[-3000:]
