"""Conformance with XLA's parser: every HLO module we can collect (fixtures, XLA's lit test
modules and benchmark HLO in the corpus, real compiles of many lax ops in
fixtures/conformance/) and seeded mutants of them, each judged by XLA's own parser
(jaxlib, in a child process) and by hloscope's default and strict modes.

Accepted by XLA: counted as conforming when a mode accepts it with XLA's instruction count
(every computation, async wrappers included); the targets are on the real modules, the
mutants XLA accepts are reported beside them. Rejected by XLA (mutants: no invalid module
of XLA's own is at hand): counted when strict mode rejects it too. (The default mode keeps
opcodes it does not know, by design.)
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from conftest import fixture_files
from fuzzing import mutate
from oracle import xla_views

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def collect() -> list[tuple[str, str]]:
    """(label, text) of every module: files split at lit's `// -----` separators."""
    import json

    derived = {e["file"] for e in json.loads((ROOT / "fixtures" / "manifest.json").read_text()).values()
               if e.get("derived")}
    files = [p for p in fixture_files() if str(p.relative_to(ROOT / "fixtures")) not in derived]
    if CORPUS.is_dir():
        files += [p for p in sorted(CORPUS.rglob("*")) if p.suffix in (".hlo", ".txt")
                  and p.is_file() and "buffer-assignment" not in p.name and "SOURCES" not in p.name]
    out = []
    for p in files:
        text = p.read_text(encoding="utf-8", errors="replace")
        label = str(p.relative_to(ROOT.parent))
        chunks = text.split("\n// -----") if "\n// -----" in text else [text]
        for k, chunk in enumerate(chunks):
            if "HloModule" in chunk or "ENTRY" in chunk:
                out.append((f"{label}#{k}" if len(chunks) > 1 else label, chunk))
    return out


def mutants(modules: list[tuple[str, str]], count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    small = [(label, text) for label, text in modules if len(text) < 200_000] or modules
    out = []
    for k in range(count):
        label, text = small[k % len(small)]
        kind, data = mutate(text.encode(), rng)
        try:
            out.append((f"{label}~{kind}#{k}", data.decode("utf-8")))
        except UnicodeDecodeError:
            continue  # bytes that are not text: no parser of text judges them
    return out


def _ours(text: str, strict: bool) -> int | None:
    """Our instruction count when we accept the text (every value typed), else None."""
    from hloscope.parser import ParseError, parse
    from hloscope.parser.attrs import force_attributes

    try:
        modules = parse(text, "<conformance>", strict=strict)
        force_attributes(modules)
    except ParseError:
        return None
    except Exception:  # noqa: BLE001 - a typed value that fails is a rejection too
        return None
    return sum(len(c.instructions) for m in modules for c in m.computations)


@dataclass
class Tally:
    accepted_by_xla: int = 0
    default_ok: int = 0
    strict_ok: int = 0
    rejected_by_xla: int = 0
    strict_rejects: int = 0
    crashed_xla: int = 0
    misses: list[str] = field(default_factory=list)  # accepted by XLA, not by us (or other count)
    leniencies: list[str] = field(default_factory=list)  # rejected by XLA, accepted by strict

    def rates(self) -> dict[str, float]:
        a, r = max(self.accepted_by_xla, 1), max(self.rejected_by_xla, 1)
        return {"default_accepts": self.default_ok / a, "strict_accepts": self.strict_ok / a,
                "strict_rejects": self.strict_rejects / r}


def measure(texts: list[tuple[str, str]]) -> Tally:
    """One Tally over texts (measure real modules and mutants apart)."""
    views = xla_views([t for _, t in texts])
    tally = Tally()
    for (label, text), view in zip(texts, views):
        if view.get("crashed"):
            tally.crashed_xla += 1
            continue
        strict = _ours(text, True)
        if "error" in view:
            tally.rejected_by_xla += 1
            if strict is None:
                tally.strict_rejects += 1
            else:
                tally.leniencies.append(f"{label}: XLA says {view['error'][:100]}")
            continue
        count = sum(len(c["instructions"]) for c in view["computations"])
        tally.accepted_by_xla += 1
        default = _ours(text, False)
        tally.default_ok += default == count
        tally.strict_ok += strict == count
        if default != count or strict != count:
            tally.misses.append(f"{label}: XLA {count}, default {default}, strict {strict}")
    return tally
