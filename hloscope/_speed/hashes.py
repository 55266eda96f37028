"""Hashes without importing hashlib, which loads OpenSSL's libcrypto as it is imported (4-14
ms in a fresh process: more than the rest of a small lint's imports). CPython's own `_sha1`
and `_blake2` modules load in a fraction of a millisecond and give the same digests; the
plain path (HLOSCOPE_PLAIN=1, or an interpreter without them) takes hashlib's.

A finding's fingerprint is a SHA-1 (baselines and SARIF keep it); the cache's keys are
BLAKE2b, which CPython computes at OpenSSL's SHA-256 speed (about 1 GB/s here)."""

from __future__ import annotations

from typing import Any

from hloscope._speed import enabled


def sha1_hex(data: bytes) -> str:
    """hashlib.sha1(data).hexdigest()."""
    if enabled():
        try:
            from _sha1 import sha1
        except ImportError:
            pass
        else:
            return sha1(data).hexdigest()
    import hashlib

    return hashlib.sha1(data).hexdigest()


def blake2b(data: bytes = b"") -> Any:
    """hashlib.blake2b(data, digest_size=32): a hash object to update, with digest() and
    hexdigest() (32 bytes, as the SHA-256 the cache's keys were: file names of one length)."""
    if enabled():
        try:
            from _blake2 import blake2b as made
        except ImportError:
            pass
        else:
            return made(data, digest_size=32)
    import hashlib

    return hashlib.blake2b(data, digest_size=32)
