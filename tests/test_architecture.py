"""The package's shape, as ARCHITECTURE.md states it: data flows one way, no import cycles
(counting imports inside functions), no module writes another's globals, every module
imports on its own, every third-party import is a declared dependency."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hloscope"

# ARCHITECTURE.md's layers, lowest first: a package may import its own layer (without
# cycles) and the layers below, never one above.
LAYERS = [
    {"_version", "resources", "units", "protowire", "_speed"},
    {"ir", "cache"},
    {"parser"},
    {"graph", "cost", "stage", "source", "dumpdir", "passes", "flags"},
    {"sharding", "mlir", "trace", "stats"},
    {"rules"},
    {"report", "render", "lint", "paths"},
    {"api", "html", "explorer", "diff", "compile", "fleet", "testing"},
    {"cli", "__main__"},
]


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(imported hloscope module, line) for every import in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for t in targets:
            if t == "hloscope" or t.startswith("hloscope."):
                r = _resolve(t)
                if r and r != name:
                    out.append((r, node.lineno))
    return out


def _graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for name, path in MODULES.items():
        g.add_node(name)
        for target, _ in _imports(name, path):
            g.add_edge(name, target)
    return g


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_import_graph_of_modules_has_no_cycle():
    cycles = list(nx.simple_cycles(_graph()))
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_import_graph_of_packages_has_no_cycle():
    packages = nx.DiGraph()
    for a, b in _graph().edges():
        if _package(a) != _package(b) and _package(b) != "__init__":
            packages.add_edge(_package(a), _package(b))
    cycles = list(nx.simple_cycles(packages))
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_lower_layers_never_import_higher_ones():
    layer = {pkg: k for k, pkgs in enumerate(LAYERS) for pkg in pkgs}
    unknown = {_package(m) for m in MODULES} - set(layer) - {"__init__"}
    assert not unknown, f"packages missing from ARCHITECTURE.md's layers: {unknown}"
    wrong = []
    for name, path in MODULES.items():
        for target, line in _imports(name, path):
            src, dst = _package(name), _package(target)
            if dst == "__init__":
                if src != "__init__":
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: imports the hloscope package itself")
            elif src != "__init__" and layer[dst] > layer[src]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {src} (layer {layer[src]}) imports "
                             f"{target} (layer {layer[dst]})")
    assert not wrong, "\n".join(wrong)


def _module_aliases(tree: ast.AST) -> set[str]:
    """Names a file binds to modules: `import x.y as z`, `from pkg import module`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if f"{node.module}.{a.name}" in MODULES or node.module in ("os", "sys", "re", "gc"):
                    names.add(a.asname or a.name)
    return names


def test_no_module_assigns_another_modules_attributes():
    found = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _module_aliases(tree)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setattr" and node.args:
                targets = [ast.Attribute(value=node.args[0], attr="?")]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in aliases:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: assigns {t.value.id}.{t.attr}")
    assert not found, "\n".join(found)


def test_every_module_imports_on_its_own_in_a_fresh_interpreter():
    def attempt(name: str) -> str | None:
        done = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
        return None if done.returncode == 0 else f"{name}: {done.stderr.strip().splitlines()[-1]}"

    with ThreadPoolExecutor(4) as pool:
        failures = [f for f in pool.map(attempt, sorted(MODULES)) if f]
    assert not failures, "\n".join(failures)


def test_no_module_is_much_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 420}
    assert not long, long


def test_every_third_party_import_is_a_declared_dependency():
    from importlib import metadata

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~\[ ;]", d)[0].lower().replace("_", "-")
                for d in project["dependencies"]}
    optional = {name: {re.split(r"[<>=!~\[ ;]", d)[0].lower().replace("_", "-") for d in deps}
                for name, deps in project.get("optional-dependencies", {}).items()}
    provided = metadata.packages_distributions()  # import name -> distributions
    stdlib = sys.stdlib_module_names
    missing = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                # (hloscope_native: this repository's own compiled part, native/, optional)
                if top in stdlib or top in ("hloscope", "hloscope_native") or top.startswith("_"):
                    continue
                dists = {d.lower().replace("_", "-") for d in provided.get(top, [top])}
                extras = [x for x, deps in optional.items() if dists & deps]
                if not dists & declared and not extras:
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {top} ({', '.join(sorted(dists))})")
    assert not missing, "undeclared third-party imports:\n" + "\n".join(missing)


@pytest.mark.parametrize("command", [["--help"], ["--version"]])
def test_python_dash_m_hloscope_works(command):
    done = subprocess.run([sys.executable, "-m", "hloscope", *command], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "hloscope" in done.stdout


def test_every_rule_lives_in_a_file_named_by_its_code_and_is_listed_once():
    from typer.testing import CliRunner

    from hloscope.cli.app import app
    from hloscope.rules.registry import RULE_MODULE, load_rules

    rules = load_rules()
    for code, cls in rules.items():
        module = cls.__module__.rsplit(".", 1)[-1]
        assert RULE_MODULE.fullmatch(module + ".py") and module.startswith(code.lower() + "_"), \
            f"{code} lives in {cls.__module__}"
        assert module == f"{code.lower()}_{cls.name.replace('-', '_')}"
    files = [p.stem for p in (PACKAGE / "rules").glob("*.py") if RULE_MODULE.fullmatch(p.name)]
    assert sorted(files) == sorted(f"{c.lower()}_{r.name.replace('-', '_')}" for c, r in rules.items())
    listed = [line.split()[0] for line in CliRunner().invoke(app, ["rules"]).stdout.splitlines()]
    assert sorted(listed) == sorted(rules) and len(listed) == len(set(listed))
