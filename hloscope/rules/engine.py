"""Run the selected rules over parsed modules and collect findings.

A rule that crashes yields one internal-error finding (code X000) for that
rule and module; the other rules still run.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace

from hloscope._speed.hashes import sha1_hex
from hloscope.ir import Instruction, Module
from hloscope.parser.errors import ParseError
from hloscope.rules.base import Finding, InstructionRule, ModuleRule, Rule, RuleContext, Severity
from hloscope.source import Source, source_of
from hloscope.stage import detect_stage

# `%name`, or a number (`12`, `1.5`): its first character tested once (a `%` or a digit), so
# the search skips to the next of them, as `%[\w.\-]+|\d+(?:\.\d+)?` (the same matches) did not
_NAMES_AND_NUMBERS = re.compile(r"[%\d](?:(?<=%)[\w.\-]+|(?<=\d)\d*(?:\.\d+)?)")
_SUPPRESS = re.compile(r"//\s*hloscope:\s*ignore\[([A-Za-z0-9_,\s-]+)\]")


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    suppressed: int = 0
    instructions: int = 0
    modules: list[dict] = field(default_factory=list)  # file, name, stage of each module


def _suppressed(finding: Finding, lines: list[str]) -> bool:
    if not 0 < finding.line <= len(lines):
        return False
    m = _SUPPRESS.search(lines[finding.line - 1])
    if not m:
        return False
    codes = {c.strip() for c in m.group(1).split(",")}
    return finding.code in codes or finding.name in codes or "ALL" in codes


def _measured(f: Finding, trace, module) -> Finding:
    """The finding with its instruction's measured time per step (and share of the step)."""
    s = trace.stats.get((trace.label(module), f.instruction))
    if s is None:
        return f
    steps = max(trace.steps, 1)
    cost = {**f.cost, "measured_seconds": s.total_ns * 1e-9 / steps,
            "measured_share": trace.share(s), "measured_count": float(s.count)}
    return replace(f, cost=cost)


_LAYOUT = re.compile(r"\]\{[^{}]*\}")  # a layout printed after a shape's dims, and the `]`


def _bare(shape) -> str:
    """A shape's element types and dimensions, without layouts."""
    if shape.is_tuple:
        return "(" + ", ".join(_bare(e) for e in shape.elements) + ")"
    return f"{shape.element_type}[{','.join(map(str, shape.dims))}]"


def identify(f: Finding, module: Module) -> Finding:
    """The finding, given its fingerprint and its instruction's source (hloscope.source)."""
    comp = module.by_name.get(f.computation)
    instr = comp.by_name.get(f.instruction) if comp is not None else None  # ("": None)
    if instr is None:
        parts = [f.code, f.message]
        source = Source()
    else:
        source = source_of(instr, module)
        by_name = comp.by_name
        operands = [_bare(by_name[o].shape) for o in instr.operands if o in by_name]
        # the message without layouts, names and numbers: two findings of one rule on one
        # instruction (a kernel's input and output block) stay apart, and a layout that moved
        # (a relayout elsewhere, another tiling) leaves the finding the same one
        gist = _NAMES_AND_NUMBERS.sub("#", _LAYOUT.sub("]", f.message))
        pattern = source.pattern()
        parts = [f.code, instr.opcode, _bare(instr.shape), *operands, pattern, gist]
        if not pattern:  # nothing from the program: the callees' opcodes tell apart
            parts += [i.opcode for c in instr.called_computations if c in module.by_name
                      for i in module[c].instructions]
    fingerprint = sha1_hex("\x1f".join(parts).encode())
    # (set in place, not replace()d: a rule's finding is the engine's alone until run
    # returns it, and a copy of its 15 frozen fields cost as much as the fingerprint)
    object.__setattr__(f, "fingerprint", fingerprint)
    object.__setattr__(f, "source", source.to_dict() if source.op_name or source.file else {})
    return f


def internal_error(rule: type[Rule], module: Module, err: BaseException,
                   instr: Instruction | None = None) -> Finding:
    """The finding that says a rule failed (on this instruction, when it was checking one):
    a bug of that rule, reported at the place it met; the other rules' findings stay."""
    where = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    place = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    on = f" on %{instr.name}" if instr is not None else ""
    return Finding(
        code="X000", name="internal-error", severity=Severity.ERROR,
        message=f"rule {rule.code} ({rule.name}) crashed{on}: {type(err).__name__}: {err}{place}",
        file=module.path, line=instr.line if instr else module.line,
        column=instr.column if instr else 1, module=module.name,
        computation=instr.computation if instr else "", instruction=instr.name if instr else "",
        evidence={"rule": rule.code},
    )


def run(modules: Iterable[Module], rules: list[Rule], chip=None,
        sources: dict[str, list[str]] | None = None, trace=None,
        stage: str | None = None, flags: str | None = None,
        only: Collection[tuple[str, str]] | None = None) -> LintResult:
    """Run `rules` over `modules`; `stage` overrides each module's detected compile stage;
    `only`: the (computation, instruction) pairs whose findings are wanted, which the
    instruction rules that say their findings are at the instruction they check (`located`)
    check alone (module rules, and the others, run whole; their findings are all kept)."""
    result = LintResult()
    available = frozenset({"trace"} if trace is not None else set())
    sources = sources or {}
    active: list[Rule] = []
    skipped: dict[str, list[str]] = {}
    for rule in rules:
        missing = rule.requires - available
        if missing:
            skipped.setdefault(", ".join(sorted(missing)), []).append(f"{rule.code} ({rule.name})")
        else:
            active.append(rule)
    for need, names in skipped.items():
        result.notes.append(f"{', '.join(names)} skipped: needs {need}")
    by_opcode: dict[str, list[InstructionRule]] = {}
    for rule in active:
        if isinstance(rule, InstructionRule):
            for op in rule.targets:
                by_opcode.setdefault(op, []).append(rule)
    for module in modules:
        lines = sources.get(module.path, [])
        module_stage = detect_stage(module, stage)
        module_chip, assumed = chip, None
        if chip is None:  # the chip its folder records or it shows; an assumed one apart
            from hloscope.cost.resolve import resolve_chip

            choice = resolve_chip(module)
            module_chip, assumed = (None, choice.chip) if choice.assumed else (choice.chip, None)
            if choice.note and choice.note not in result.notes:
                result.notes.append(choice.note)
        ctx = RuleContext(module, chip=module_chip, trace=trace, stage=module_stage,
                          flags=flags, assumed_chip=assumed)
        result.modules.append({"file": module.path, "name": module.name, **module_stage.to_dict()})
        off_stage = [r for r in active if module_stage.name not in r.stages]
        if off_stage:
            result.notes.append(
                f"{', '.join(f'{r.code} ({r.name})' for r in off_stage)} skipped on "
                f"{module.name}: a {module_stage.name} module, where their patterns are "
                "compiler artifacts (lint the after_optimizations dump, or --stage)")
        crashed: set[str] = {r.code for r in off_stage}
        found: list[Finding] = []
        result.instructions += sum(len(comp.instructions) for comp in module.computations)
        fused = ctx.fused
        # (the instructions of the opcodes the rules target, from the module's opcode index:
        # each opcode's in module order; the findings are sorted by place below)
        for op, here in by_opcode.items():
            for instr in module.of_opcode(op):
                in_fusion = instr.computation in fused
                away = only is not None and (instr.computation, instr.name) not in only
                for rule in here:
                    if rule.code in crashed or (in_fusion and not rule.include_fused) or (
                            away and rule.located):
                        continue
                    try:
                        found.extend(rule.check(instr, ctx))
                    except ParseError:
                        raise  # a malformed value in the file: an input error, not a rule bug
                    except Exception as e:  # noqa: BLE001 - one rule must not stop the run
                        crashed.add(rule.code)
                        found.append(internal_error(type(rule), module, e, instr))
        for rule in active:
            if isinstance(rule, ModuleRule) and rule.code not in crashed:
                try:
                    found.extend(rule.check_module(ctx))
                except ParseError:
                    raise
                except Exception as e:  # noqa: BLE001
                    found.append(internal_error(type(rule), module, e))
        if ctx.undecoded and not any(r.code == "X002" for r in active):
            # (the kernel rules saw only the kernels that decoded; X002 says so when selected)
            why = ctx.undecoded[0].error
            result.notes.append(f"kernel rules skipped {len(ctx.undecoded)} Pallas kernel(s) of "
                                f"{module.name} that could not be decoded: {why}")
        for f in found:
            if _suppressed(f, lines):
                result.suppressed += 1
            else:
                f = identify(f, module)
                result.findings.append(_measured(f, trace, module) if trace is not None else f)
    result.findings.sort(key=lambda f: (-f.sort_cost, f.file, f.line, f.column, f.code))
    return result
