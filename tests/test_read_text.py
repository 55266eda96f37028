"""Reading a plain HLO text file through a map of it (hloscope.parser.files.read_text): the
same text as its bytes decoded (parser.load.decode), the same analysis whichever way the
file came in, and no text where the file is something else (the caller then reads its bytes
and `decode` says what they are)."""

from __future__ import annotations

import gzip

import pytest
from conftest import FIXTURES

from hloscope.parser.files import read, read_text
from hloscope.parser.load import decode

REAL = [FIXTURES / "tpu" / "mlp_v5e.hlo.txt", FIXTURES / "tpu" / "llm_v5p_big.hlo.txt",
        FIXTURES / "inputs" / "tanh_matmul.hlo.txt"]


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setenv("HLOSCOPE_PLAIN", "0")


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_a_mapped_file_reads_as_its_decoded_bytes(fast, path):
    text = read_text(path)
    assert text is not None and text == decode(read(path), str(path))


def test_non_ascii_text_decodes_alike(fast, tmp_path):
    # (a real module with a hand-written op name in other scripts: UTF-8 of 2, 3 and 4 bytes)
    text = REAL[0].read_text().replace('op_name="', 'op_name="é中𝔘/', 1)
    assert text != REAL[0].read_text()
    (tmp_path / "u.hlo.txt").write_text(text, encoding="utf-8")
    assert read_text(tmp_path / "u.hlo.txt") == text


def test_what_is_not_plain_hlo_text_is_left_to_the_bytes(fast, tmp_path, monkeypatch):
    import hloscope.parser.files as files

    hlo = REAL[0].read_bytes()
    cases = {
        "gzip": gzip.compress(hlo), "nul": hlo[:100] + b"\0" + hlo[100:],
        "latin1": hlo.replace(b'op_name="', b'op_name="\xe9', 1), "empty": b"",
        "blank": b"  \n\n", "stablehlo": (FIXTURES / "inputs" / "tanh_matmul.stablehlo.mlir").read_bytes(),
        "proto": (FIXTURES / "inputs" / "tanh_matmul.after_optimizations.hlo.pb").read_bytes(),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        assert read_text(tmp_path / name) is None, name
    assert read_text(tmp_path / "missing") is None
    assert read_text("-") is None and read_text(files.STDIN) is None
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    assert read_text(REAL[0]) is None
    monkeypatch.undo()
    monkeypatch.setenv("HLOSCOPE_PLAIN", "1")  # (the plain route reads bytes, as before)
    assert read_text(REAL[0]) is None


def test_a_file_analyses_alike_mapped_or_read(fast):
    """The modules a command loads from the mapped text equal those from the bytes."""
    from hloscope.parser.load import load

    path = REAL[1]
    mapped, bytes_read = load(path), load(path, data=read(path))
    assert [(c.name, [(i.name, i.opcode, i.shape_text, i.operands, i.attr_text)
                      for i in c.instructions]) for m in mapped for c in m.computations] == \
        [(c.name, [(i.name, i.opcode, i.shape_text, i.operands, i.attr_text)
                   for i in c.instructions]) for m in bytes_read for c in m.computations]
