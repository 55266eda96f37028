"""A package's names loaded on first use (PEP 562's module `__getattr__`): importing the
package does not import the modules that define them."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable


def lazy_names(package: str, where: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The `__getattr__` of `package` whose names `where` maps to their submodules; each is
    kept in `namespace` (the package's globals) once loaded."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
