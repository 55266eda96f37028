"""XLA's --xla_dump_to directories: which file is which, grouped per module.

XLA names every file of a module `module_<id>.<name>[.cl_<n>].<what>`, where <what> is
- a stage's text: `before_optimizations.txt`, `after_optimizations.txt` (on CPU and GPU with a
  platform prefix: `cpu_after_optimizations.txt`, `sm_8.0_gpu_after_optimizations.txt`);
- XLA's own reports of the optimized module: `...after_optimizations-buffer-assignment.txt`,
  `-memory-usage-report.txt`, `-live-range.txt`, `-buffer-assignment-values.txt`;
- a pass dump (with --xla_dump_hlo_pass_re): `<seq>.<pipeline>.after_<pass>.before_<next>.txt`,
  numbered in the order the passes ran;
- the options it was compiled with: `debug_options`, `execution_options.txt`, and on TPU
  `tpu_comp_env.txt`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_MODULE = re.compile(r"^(module_\d+)\.(.+)$")
_PASS = re.compile(r"^(?P<seq>\d{4})\.(?P<pipeline>[^.]+)\.(?P<rest>.+)\.txt$")
_STAGE = re.compile(r"^(?:(?P<platform>[\w.]+?)_)?(?P<stage>before_optimizations|after_optimizations)"
                    r"(?P<report>-[\w-]+)?\.txt$")
STAGES = ("after_optimizations", "before_optimizations")
OPTION_FILES = ("debug_options", "execution_options.txt", "tpu_comp_env.txt")


@dataclass
class PassDump:
    seq: int
    pipeline: str
    name: str  # `after_copy-insertion.before_small-while-loop-hoisting` or `copy-insertion...`
    path: Path

    @property
    def after(self) -> str:
        """The pass this dump follows (`copy-insertion`), or the dump's own name."""
        m = re.match(r"after_(.+?)(?:\.before_|$)", self.name)
        return m.group(1) if m else self.name


@dataclass
class DumpModule:
    id: str  # module_0006
    name: str  # jit_f (with its .cl_<n> suffix when XLA wrote one)
    stages: dict[str, Path] = field(default_factory=dict)  # stage -> text
    reports: list[Path] = field(default_factory=list)  # XLA's reports of the optimized module
    passes: list[PassDump] = field(default_factory=list)  # in the order the passes ran
    options: dict[str, Path] = field(default_factory=dict)  # debug_options, tpu_comp_env.txt, ...

    def text(self, stage: str = "after_optimizations") -> Path | None:
        return self.stages.get(stage)


def is_dump_dir(path: Path) -> bool:
    """A directory XLA dumped into: it holds module_<id>.<name>....txt files."""
    try:
        return path.is_dir() and any(_MODULE.match(p.name) and p.is_file() for p in path.iterdir())
    except OSError:
        return False


def scan(path: Path) -> list[DumpModule]:
    """The modules of a dump directory (not recursive: XLA writes one flat folder), by id and
    name: XLA's backends number their modules apart, so a TPU program and a CPU helper
    compiled in the same process (a PRNG key, an initialiser) may both be module_0000."""
    modules: dict[tuple[str, str], DumpModule] = {}
    for p in sorted(path.iterdir()):
        m = _MODULE.match(p.name)
        if not m or not p.is_file():
            continue
        mid, rest = m.groups()
        name, what = _split_name(rest)
        if not what:
            continue  # (LLVM IR, object files, compiler metadata: no module text or report)
        mod = modules.setdefault((mid, name), DumpModule(mid, name))
        if what in OPTION_FILES:
            mod.options[what] = p
            continue
        pm = _PASS.match(what)
        if pm:
            mod.passes.append(PassDump(int(pm["seq"]), pm["pipeline"], pm["rest"], p))
            continue
        sm = _STAGE.match(what)
        if sm:
            if sm["report"]:
                mod.reports.append(p)
            else:
                mod.stages[sm["stage"]] = p
    for mod in modules.values():
        mod.passes.sort(key=lambda d: d.seq)
    return [modules[k] for k in sorted(modules)]


def _split_name(rest: str) -> tuple[str, str]:
    """(module name, what the file is) from `jit_f.cl_1.after_optimizations.txt`: the name
    is everything before the first part that names a kind of file."""
    parts = rest.split(".")
    for k in range(1, len(parts)):
        tail = ".".join(parts[k:])
        if tail in OPTION_FILES or _PASS.match(tail) or _STAGE.match(tail):
            return ".".join(parts[:k]), tail
    return rest, ""


def module_files(path: Path, stage: str = "after_optimizations") -> tuple[list[Path], list[str]]:
    """The text of each module at `stage`, and notes for the modules that have none."""
    files, notes = [], []
    for mod in scan(path):
        text = mod.text(stage)
        if text is not None:
            files.append(text)
        else:
            have = ", ".join(sorted(mod.stages)) or "no module text"
            notes.append(f"{path}/{mod.id}.{mod.name}: no {stage} dump ({have})")
    return files, notes


def program_id(path: str | Path | None, name: str) -> int | None:
    """The program id a module's file name states: XLA's dump `module_0021.jit_dot...` or a
    capture's program name `jit_dot.21.hlo.txt` / `jit_dot(21)` (XLA GPU profiles key their
    ops by this id; TPU profiles use a fingerprint instead)."""
    if not path:
        return None
    base = Path(str(path)).name
    m = re.match(r"module_(\d+)\.", base) or re.match(re.escape(name) + r"(?:\.|\()(\d+)[.)]", base)
    return int(m.group(1)) if m else None
