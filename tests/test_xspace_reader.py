"""hloscope's own XSpace reader against jax's ProfileData (the oracle): the same planes,
lines, events (name, start, duration) and stats, on every *.xplane.pb in fixtures/ and the
corpus (real MI300X and multi-worker GPU captures, the synthetic TPU-structured ones), and
a clear error on what is not an XSpace."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, FIXTURES

from hloscope.trace.xspace_pb import XSpaceError, read_xspace

CAPTURES = sorted(FIXTURES.rglob("*.xplane.pb")) + (sorted(CORPUS.rglob("*.xplane.pb")) if CORPUS.is_dir() else [])


def _view(planes) -> list:
    return [(p.name, sorted(map(str, p.stats)),
             [(line.name, [(e.name, e.start_ns, e.duration_ns, list(e.stats)) for e in line.events])
              for line in p.lines]) for p in planes]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_the_reader_sees_what_profile_data_sees(path: Path):
    ProfileData = pytest.importorskip("jax.profiler").ProfileData  # noqa: N806
    data = path.read_bytes()
    try:
        want = _view(ProfileData.from_serialized_xspace(data).planes)
    except RuntimeError:  # the corpus's text-mangled capture: neither reads it
        with pytest.raises(XSpaceError):
            read_xspace(data)
        return
    got = _view(read_xspace(data))
    assert got == want
    assert sum(len(line[1]) for plane in got for line in plane[2]) > 0


def test_what_is_not_an_xspace(tmp_path):
    real = (FIXTURES / "rules" / "T001" / "jit_dot.21.xplane.pb").read_bytes()
    with pytest.raises(XSpaceError):
        read_xspace(real[: len(real) // 2])  # cut in the middle
    with pytest.raises(XSpaceError):
        read_xspace(b"\x0f\xff\xff")  # wire type 7
    assert read_xspace(b"") == []
