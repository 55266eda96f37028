"""The compiled checks' pass (`hloscope_native.checks`, native/src/check.rs) started on a
thread, with nothing imported but the extension and the opcode tables: `hloscope stats`
starts it as soon as the file is read, and imports the rest while it runs
(hloscope.parser.fast.checks reads its answer)."""

from __future__ import annotations

from functools import cache

from hloscope.ir.opcodes import OPCODES
from hloscope.parser.consistency import GENERIC_ASYNC, VALUE_CHECKED, VALUE_KEYS


@cache
def _classes() -> list[tuple[str, int]]:
    """(opcode, 1: no value check, or 2: value checks) for the opcodes validate checks
    nothing else of (the generic async ops and the rest are left to validate)."""
    return [(op, 2 if op in VALUE_CHECKED else 1) for op in sorted(OPCODES)
            if op not in GENERIC_ASYNC]


def count_level(per_computation: bool) -> int:
    """The `count` of compiled_checks that `hloscope stats` reads (2: per computation too)."""
    return 2 if per_computation else 1


# Whether the compiled checks also digest each computation's structure
# (hloscope.ir.Computation.structure): asked by the commands whose cost model works out
# fused computations, which it then costs once per structure
# (hloscope.parser.load.digest_structures); the others leave the pass its checks alone.
DIGESTS = {"on": False}


def compiled_checks(text: str, count: int = 0, structures: bool | None = None) -> tuple | None:
    """The compiled pass's answer for `text` (None without the extension); `count`: 1 with
    what `stats` reads, 2 with it per computation too (hloscope.stats.table); `structures`:
    with each computation's structure digest (None: where this process asks, DIGESTS)."""
    from hloscope._speed import native as extension

    native = extension()
    if native is None or not hasattr(native, "checks"):
        return None
    if structures is None:
        structures = DIGESTS["on"]
    return native.checks(text, _classes(), VALUE_KEYS, count, structures)


class Beside:
    """The compiled pass over a text (compiled_checks) run on a thread while the caller
    works on the text: the pass holds no interpreter lock, so it takes the second core.
    `answer()` waits for it (None also when the extension failed: the caller checks the
    plain way)."""

    def __init__(self, text: str, count: int = 0, structures: bool | None = None) -> None:
        import threading

        self.found: list = []
        self.level = count
        self.thread = threading.Thread(target=self._run, args=(text, count, structures),
                                       name="hloscope-checks")
        self.thread.start()

    def _run(self, text: str, count: int, structures: bool | None) -> None:
        try:
            self.found.append(compiled_checks(text, count, structures))
        except Exception:  # noqa: BLE001 - the extension's internal error: validate decides
            self.found.append(None)

    def answer(self) -> tuple | None:
        from hloscope._speed.process import joined

        self.thread.join()
        if self.thread.native_id is not None:
            joined(self.thread.native_id)  # (a child may be forked while it exits)
        return self.found[0] if self.found else None
