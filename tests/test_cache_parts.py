"""hloscope.cache's parts (the mutation run of bench/mutation.py found them uncovered): where
the cache lives, how an entry is written (atomically, in its own folder, nothing left behind
when it fails), keys, and the deferred writes of the CLI."""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

import pytest

from hloscope import cache


@pytest.fixture
def cache_in(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setitem(cache._state, "enabled", True)
    monkeypatch.setitem(cache._state, "background", False)
    monkeypatch.setattr(cache, "_deferred", [])
    return tmp_path / "c"


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("HLOSCOPE_CACHE_DIR")
    assert cache.cache_dir() == tmp_path / "xdg" / "hloscope"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "hloscope"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # set but empty: as unset (XDG's rule)
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "hloscope"


def test_an_entry_is_written_whole_in_its_own_folder(cache_in, monkeypatch):
    made = []
    real = tempfile.mkstemp

    def spy(*args, **kwargs):
        made.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", spy)
    cache.put("modules", "k1", {"a": [1, 2, 3]})
    folder = cache_in / "modules"
    # the part is written beside its final name (an os.replace within one file system),
    # under a name no reader takes for an entry
    assert made == [{"dir": folder, "suffix": ".tmp"}]
    assert sorted(p.name for p in folder.iterdir()) == ["k1.pickle"]
    raw = (folder / "k1.pickle").read_bytes()
    assert raw[:2] == bytes([0x80, pickle.HIGHEST_PROTOCOL])  # the fastest protocol
    assert cache.get("modules", "k1") == {"a": [1, 2, 3]}


def test_a_failed_write_leaves_nothing_behind(cache_in):
    cache.put("modules", "bad", lambda: None)  # cannot be pickled
    folder = cache_in / "modules"
    assert list(folder.iterdir()) == []
    assert cache.get("modules", "bad") is None


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(blocker))
    monkeypatch.setitem(cache._state, "enabled", True)
    cache.put("modules", "k", 1)  # mkdir fails: the command goes on
    assert cache.get("modules", "k") is None


def test_keys_tell_their_parts_apart():
    assert cache.key("ab", "c") != cache.key("a", "bc")
    assert cache.key("a", b"b") == cache.key("a", "b")
    assert len(cache.key("x")) == 64 and cache.key("x") == cache.key("x")


def test_a_lint_hashes_its_file_once_for_both_keys(cache_in, monkeypatch):
    """lint keys its findings and the parsed modules by the same file: one hash of its
    bytes (a 31 MB dump's is 10 ms), and a second lint finds both entries (strict mode: its
    grammar's modules are kept where the core's parse keeps none). Where the core hashed
    the file before it was read, and its stamp says it is unchanged, what was read is not
    hashed again."""
    from hloscope.lint import LintOptions, lint_files
    from hloscope.parser import files

    path = Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "mlp_v5e.hlo.txt"
    size = path.stat().st_size
    hashed: list[int] = []
    real, real_text, real_file = cache.digest, cache.digest_text, cache.file_digest
    monkeypatch.setattr(cache, "digest", lambda data: hashed.append(len(data)) or real(data))
    # (the text decoded from a map of the file, where it is plain HLO text: its bytes hashed)
    monkeypatch.setattr(cache, "digest_text",
                        lambda text: hashed.append(len(text.encode())) or real_text(text))

    def file_digest(p, limit):  # (the core's hash as it reads the file)
        found = real_file(p, limit)
        if found is not None:
            hashed.append(size)
        return found

    monkeypatch.setattr(cache, "file_digest", file_digest)
    monkeypatch.setattr(files, "_RACY_NS", 0)  # (a checkout made a moment ago: not racy)
    monkeypatch.setitem(cache._state, "enabled", True)
    first = lint_files([path], LintOptions(strict=True))
    assert hashed == [size]
    cache.write_now()
    assert {p.name for p in cache_in.iterdir()} >= {"lint", "modules"}
    again = lint_files([path], LintOptions(strict=True))
    assert [f.fingerprint for f in again.findings] == [f.fingerprint for f in first.findings]


@pytest.mark.parametrize("plain", ["0", "1"])
def test_a_second_lint_is_answered_from_the_cache_on_both_routes(cache_in, monkeypatch, plain):
    """The plain route has no core to hash the file before reading it: lint hashes what it
    read and asks the cache then, so a second lint parses nothing there either (it used to
    parse again, asking only for the kept module)."""
    from importlib import import_module

    from hloscope.lint import LintOptions, lint_files

    load_module = import_module("hloscope.parser.load")  # (the package's `load` is the function)
    monkeypatch.setenv("HLOSCOPE_PLAIN", plain)
    monkeypatch.setitem(cache._state, "enabled", True)
    path = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "H003" / "narrow_kernel_operand_v5e.hlo.txt"
    first = lint_files([path], LintOptions())
    cache.write_now()

    def refuse(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(load_module, "load_checked_ahead", refuse)
    again = lint_files([path], LintOptions())
    assert [f.fingerprint for f in again.findings] == [f.fingerprint for f in first.findings]
    assert again.findings and not again.errors


# BLAKE3's published test vectors (its reference's test_vectors.json, input byte k = k % 251,
# and the "abc" of its README), for the digest the compiled core gives the cache
_BLAKE3 = {
    b"": "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    b"abc": "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85",
    bytes([0]): "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213",
}


def test_the_core_digests_files_with_blake3_as_they_are_read(cache_in, monkeypatch, tmp_path):
    """With the compiled core, a file's digest is BLAKE3's (the published vectors), the same
    whether the core hashes the bytes or reads the file itself; where it cannot say (standard
    input, which lint reads, a file over the size limit, one it cannot read) there is none, and the caller
    reads the file. A lint the cache answers then never reads the file into Python."""
    if cache._digests() is None:
        pytest.skip("the compiled core is not built here (the plain route hashes with BLAKE2b)")
    import hloscope.parser.files as files
    from hloscope.lint import LintOptions, lint_files

    limit = files.MAX_FILE_BYTES
    for data, hex_digest in _BLAKE3.items():
        assert cache.digest(data) == bytes.fromhex(hex_digest)
        (tmp_path / "f").write_bytes(data)
        assert cache.file_digest(tmp_path / "f", limit) == bytes.fromhex(hex_digest)
    path = Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "mlp_v5e.hlo.txt"
    assert cache.file_digest(path, limit) == cache.digest(path.read_bytes())
    big = tmp_path / "big"  # (more than the core's 1 MiB block)
    big.write_bytes(path.read_bytes() * (1 + (3 << 20) // path.stat().st_size))
    assert cache.file_digest(big, limit) == cache.digest(big.read_bytes())
    assert cache.file_digest(big, limit) != cache.file_digest(path, limit)
    assert cache.file_digest(tmp_path / "missing", limit) is None
    assert cache.file_digest(path, 10) is None  # (over the limit: read, and refused, there)
    monkeypatch.setenv("HLOSCOPE_CACHE_DIR", str(cache_in))
    monkeypatch.setitem(cache._state, "enabled", True)
    monkeypatch.setitem(cache._state, "background", False)
    reads: list[str] = []
    real, real_text = files.read, files.read_text
    monkeypatch.setattr(files, "read", lambda p: reads.append(str(p)) or real(p))
    monkeypatch.setattr(files, "read_text", lambda p: reads.append(str(p)) or real_text(p))
    first = lint_files([path], LintOptions())
    assert reads == [str(path)]
    cache.write_now()
    again = lint_files([path], LintOptions())
    assert reads == [str(path)]  # (answered from the cache: not read again)
    assert [f.fingerprint for f in again.findings] == [f.fingerprint for f in first.findings]


def test_large_entries_wait_for_the_output_only_when_asked(cache_in, monkeypatch):
    monkeypatch.setitem(cache._state, "background", True)
    cache.put("modules", "now", 1)  # not marked large: written at once
    assert (cache_in / "modules" / "now.pickle").exists()
    cache.put("modules", "later", [2], background=True)
    assert cache._deferred == [("modules", "later", [2])]
    assert not (cache_in / "modules" / "later.pickle").exists()
    # the after-output step writes them (here, where it may not fork: in this process)
    import hloscope._speed.fork as fork

    monkeypatch.setattr(fork, "before_exit", lambda work: False)
    cache._write_deferred()
    assert cache.get("modules", "later") == [2] and cache._deferred == []


def test_write_now_undoes_the_deferral(cache_in, monkeypatch):
    monkeypatch.setitem(cache._state, "background", True)
    cache.put("modules", "later", 3, background=True)
    cache.write_now()
    assert cache._deferred == [] and cache._state["background"] is False
    cache.put("modules", "later", 3, background=True)
    assert cache.get("modules", "later") == 3


def test_a_disabled_cache_neither_reads_nor_writes(cache_in, monkeypatch):
    cache.put("modules", "k", 1)
    monkeypatch.setitem(cache._state, "enabled", False)
    assert cache.get("modules", "k") is None and not cache.is_enabled()
    cache.put("modules", "k2", 2)
    assert not Path(cache_in / "modules" / "k2.pickle").exists()


@pytest.mark.parametrize("plain", ["0", "1"])
def test_the_hashes_are_hashlibs_without_importing_it(plain, monkeypatch):
    """A finding's fingerprint is hashlib's SHA-1 of its parts and the cache's keys its
    32-byte BLAKE2b, whichever module computes them (CPython's own _sha1 and _blake2, or
    hashlib on the plain path); and a lint imports no hashlib (OpenSSL's load), the cache
    on or off."""
    import hashlib
    import os
    import random
    import subprocess
    import sys

    from hloscope._speed.hashes import blake2b, sha1_hex

    monkeypatch.setenv("HLOSCOPE_PLAIN", plain)
    rng = random.Random(7)
    for n in (0, 1, 63, 64, 65, 1000, 1 << 16):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert sha1_hex(data) == hashlib.sha1(data).hexdigest()
        h = blake2b(data[: n // 2])
        h.update(data[n // 2:])
        assert h.digest() == hashlib.blake2b(data, digest_size=32).digest()
    if cache._digests() is None:  # (the plain route, or no core built: BLAKE2b)
        assert cache.digest(b"hlo") == hashlib.blake2b(b"hlo", digest_size=32).digest()
    if plain == "1":
        return  # (the plain path imports hashlib: nothing more to see)
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    path = fixtures / "rules" / "H002" / "transpose_out_v5e.hlo.txt"  # (it has findings)
    for enabled in (True, False):
        probe = (f"import sys; from hloscope import cache; cache.set_enabled({enabled}); "
                 "from hloscope.lint import LintOptions, lint_files; "
                 f"r = lint_files([{str(path)!r}], LintOptions()); "
                 "assert r.findings and all(len(f.fingerprint) == 40 for f in r.findings); "
                 "print('hashlib' in sys.modules)")
        env = {**os.environ, "HLOSCOPE_PLAIN": "0",
               "HLOSCOPE_CACHE_DIR": tempfile.mkdtemp(prefix="hloscope-hash-")}
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             env=env, check=True).stdout.strip()
        assert out == "False", enabled


@pytest.fixture
def core_digests():
    if cache._digests() is None:
        pytest.skip("the compiled core is not in use: nothing is hashed before the read")


def test_a_file_read_as_it_was_hashed_is_not_hashed_again(core_digests, tmp_path, monkeypatch):
    from hloscope.parser import files

    path = tmp_path / "m.hlo"
    path.write_bytes((Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "mlp_v5e.hlo.txt").read_bytes())
    monkeypatch.setattr(files, "_RACY_NS", 0)
    before = files.file_digest(path)
    data, text = files.read_input(path)
    want = cache.digest_read(data, text)

    def refuse(*args):
        raise AssertionError("hashed again")

    monkeypatch.setattr(cache, "digest_read", refuse)
    assert files.read_digest(path, data, text) == before == want


def test_a_file_changed_or_written_a_moment_ago_is_hashed_again(core_digests, tmp_path, monkeypatch):
    """Changed between the hash and the read (its stamp differs), or written within the
    last two seconds (a write in the same timestamp tick could leave the stamp as it was):
    what was read is hashed."""
    from hloscope.parser import files

    path = tmp_path / "m.hlo"
    path.write_text("HloModule a\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert files.stamp(path) is None  # (just written)
    old = files.file_digest(path)
    path.write_text("HloModule b\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n")
    data, text = files.read_input(path)
    assert files.read_digest(path, data, text) == cache.digest_read(data, text) != old
    monkeypatch.setattr(files, "_RACY_NS", 0)  # (not racy: the stamp alone tells)
    old = files.file_digest(path)
    path.write_text("HloModule c\n\nENTRY e {\n  ROOT p = f32[3,4] parameter(0)\n}\n")
    data, text = files.read_input(path)
    assert files.read_digest(path, data, text) == cache.digest_read(data, text) != old
