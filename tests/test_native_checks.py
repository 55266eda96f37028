"""The compiled checks (hloscope.parser.fast.checks over native/src/check.rs) against their
oracle, `validate`: whenever they say a scanned module passes, validate passes it, on every
module at hand (real compiler output, XLA's test modules), on seeded mutants of them and on
targeted mutants that break one check each; and they answer for most real modules."""

from __future__ import annotations

import random
import re

import pytest

from conformance import collect, mutants

pytestmark = pytest.mark.skipif(
    __import__("hloscope.parser.fast.native", fromlist=["available"]).available() is None,
    reason="the compiled extension is not in use (HLOSCOPE_PLAIN=1 or not built)")


def _scanned(text: str):
    from hloscope.parser.load import _scanned

    return _scanned(text, "<checks>")


def _valid(modules, text: str) -> bool:
    from hloscope.parser import ParseError
    from hloscope.parser.validate import validate

    try:
        validate(modules, text)
    except ParseError:
        return False
    return True


# One targeted change per kind, each breaking what one check of validate looks at:
# (pattern, replacement) applied at one random match of the module.
_TARGETED = {
    "elementwise shape": (r"(= [a-z0-9]+\[)(\d+)(.*? (?:add|multiply|subtract|maximum)\()",
                          lambda m: f"{m[1]}{int(m[2]) + 1}{m[3]}"),
    "parameter number": (r"parameter\((\d+)\)", lambda m: f"parameter({int(m[1]) + 1})"),
    "parameter twice": (r"parameter\((\d+)\)", lambda m: "parameter(0)"),
    "comparison": (r"direction=[A-Z]+", lambda m: "direction=XX"),
    "literal": (r"(s32|s8|u8|pred)\[\] constant\([^)]*\)", lambda m: f"{m[1]}[] constant(99999999999)"),
    "second ROOT": (r"\n(  )(%)", lambda m: f"\n{m[1]}ROOT {m[2]}"),
    "dimensions": (r"dimensions=\{(\d+)", lambda m: "dimensions={17"),
    "tuple index": (r"index=(\d+)", lambda m: "index=99"),
    "malformed value": (r"dimensions=\{[^}]*\}", lambda m: "dimensions={x}"),
    "operand": (r"(\(|, )%([A-Za-z_][\w.\-]*)", lambda m: f"{m[1]}%nowhere.{m[2]}"),
    "callee": (r"(to_apply|calls|body|condition)=%?([\w.\-]+)", lambda m: f"{m[1]}=nowhere"),
    "name twice": (r"\n  (ROOT )?%([\w.\-]+) = ", None),
    "operand count": (r"( (?:negate|exponential|abs|convert|copy)\()([^)]+)\)", lambda m: f"{m[1]}{m[2]}, {m[2]})"),
    "shape rank": (r"(= [a-z0-9]+\[)(\d+)(,)", lambda m: f"{m[1]}{m[3][:0]}"),
    # the async chains validate checks (shorthand `slice-start`, generic `async-start`)
    "async start shape": (r"= \(\(([^()]*)\)(, [^\n]*?-start\()", lambda m: f"= ({m[1]}{m[2]}"),
    "async wrapped op": (r"\b([a-z][a-z\-]*)-(done|update)\(",
                         lambda m: f"{'fusion' if m[1] != 'fusion' else 'slice'}-{m[2]}("),
}


def _targeted(text: str, kind: str, rng: random.Random) -> str | None:
    pattern, make = _TARGETED[kind]
    found = list(re.finditer(pattern, text))
    if not found:
        return None
    m = rng.choice(found)
    if make is None:  # a name given to the next instruction too
        after = text.find("\n  ", m.end())
        if after < 0:
            return None
        end = text.find(" = ", after)
        return text[:after] + "\n  %" + m[2] + text[end:]
    return text[:m.start()] + make(m) + text[m.end():]


def _small_modules() -> list[tuple[str, str]]:
    return [(label, text) for label, text in collect() if len(text) < 400_000]


def test_a_pass_is_always_validates_pass():
    """Real modules, seeded mutants and targeted mutants: the checks never pass what
    validate refuses; and among the targeted mutants validate refuses, they answer for
    none (each kind of change is met many times)."""
    rng = random.Random(37)
    texts = collect() + mutants(collect(), 600, seed=37)
    refused = {kind: 0 for kind in _TARGETED}
    for label, text in _small_modules():
        for kind in _TARGETED:
            changed = _targeted(text, kind, rng)
            if changed is not None:
                texts.append((f"{label}~{kind}", changed))
    from hloscope.parser.fast.checks import passed

    unsound = []
    for label, text in texts:
        modules = _scanned(text)
        if modules is None:
            continue
        valid = _valid(modules, text)
        if passed(modules, text) and not valid:
            unsound.append(label)
        if "~" in label and not valid and label.rsplit("~", 1)[1] in refused:
            refused[label.rsplit("~", 1)[1]] += 1
    assert not unsound, unsound[:10]
    assert sum(refused.values()) >= 500, refused
    assert sum(1 for n in refused.values() if n >= 10) >= 12, refused


def test_they_answer_for_most_real_modules_and_agree_with_validate():
    from hloscope.parser.fast.checks import passed

    answered = valid = 0
    for _, text in collect():
        modules = _scanned(text)
        if modules is None or not _valid(modules, text):
            continue
        valid += 1
        answered += passed(modules, text)
    assert valid >= 350
    # (GPU compiles' async shorthand, deep Triton configs and SparseCore computations
    # included: only multi-line instructions, complex literals and such are left to validate)
    assert answered >= 0.9 * valid, (answered, valid)


def test_validate_scanned_raises_validates_error():
    """A failing module goes to validate: the same located error."""
    from hloscope.parser import ParseError
    from hloscope.parser.fast.checks import validate_scanned
    from hloscope.parser.validate import validate

    rng = random.Random(5)
    seen = 0
    for label, text in _small_modules()[:60]:
        changed = _targeted(text, "operand", rng)
        modules = _scanned(changed) if changed else None
        if modules is None or _valid(modules, changed):
            continue
        with pytest.raises(ParseError) as ours:
            validate_scanned(modules, changed)
        with pytest.raises(ParseError) as theirs:
            validate(modules, changed)
        assert ours.value.render() == theirs.value.render(), label
        seen += 1
    assert seen >= 20


def test_value_checks_read_only_the_keys_they_name(monkeypatch):
    """The signatures keep only VALUE_KEYS' attributes: value_problem must read no other
    (watched over every instruction of the real modules)."""
    from hloscope.ir.instruction import Instruction
    from hloscope.parser.validate import VALUE_CHECKED, VALUE_KEYS, value_problem

    read: set[str] = set()
    for method in ("attr", "raw_attr", "may_have"):
        real = getattr(Instruction, method)

        def watched(self, key, *args, _real=real, **kwargs):
            read.add(key)
            return _real(self, key, *args, **kwargs)

        monkeypatch.setattr(Instruction, method, watched)
    real_attrs = Instruction.attrs

    class Watched(dict):
        def get(self, key, default=None):
            read.add(key)
            return super().get(key, default)

        def __getitem__(self, key):
            read.add(key)
            return super().__getitem__(key)

        def __contains__(self, key):
            read.add(key)
            return super().__contains__(key)

        def __iter__(self):
            read.add("(every key)")
            return super().__iter__()

        def items(self):
            read.add("(every key)")
            return super().items()

    monkeypatch.setattr(Instruction, "attrs", property(lambda self: Watched(real_attrs.fget(self))))
    checked = 0
    for _, text in _small_modules():
        modules = _scanned(text)
        for comp in (c for m in modules or () for c in m.computations):
            seen = comp.by_name
            for instr in comp.instructions:
                if instr.opcode in VALUE_CHECKED and all(o in seen for o in instr.operands):
                    value_problem(instr, seen)
                    checked += 1
    assert checked > 10_000
    assert read <= set(VALUE_KEYS), read - set(VALUE_KEYS)
    assert {"dimensions", "index", "direction"} <= read


def test_checks_beside_the_scan_answer_as_run_alone_and_leave_forking_possible():
    """Beside runs the pass on a thread while the scan goes on: the same answer, and once
    joined, the thread (still exiting at the kernel's pace) does not stop the helpers that
    fork (may_fork counts threads)."""
    import os

    from hloscope._speed import process
    from hloscope.parser.fast.beside import Beside, compiled_checks

    text = next(t for label, t in collect() if label.endswith("llm_v5p_16.hlo.txt"))
    alone = compiled_checks(text)
    assert alone is not None and alone[0] is None
    for _ in range(20):
        beside = Beside(text)
        assert beside.answer() == alone
        process.may_fork()  # (what it counts: the listed threads less the joined ones)
        counted = set(os.listdir("/proc/self/task")) - process._joined
        assert str(beside.thread.native_id) not in counted
