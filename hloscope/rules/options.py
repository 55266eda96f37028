"""A rule's options: annotated class attributes with defaults, set by keyword, then frozen.

    class Options(RuleOptions):
        max_bytes: int = 32 << 20   # every option has its default

Built-in rules use this instead of `@dataclass(frozen=True)`: a frozen dataclass writes and
compiles six methods as its class is made (about 0.5 ms each class, 20 ms of every lint for
the rules' options), where these share one set. Third-party rules may still give a dataclass
or a plain class (`option_names` reads all three).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields, is_dataclass
from typing import Any, ClassVar

_MUTABLE = (list, dict, set, bytearray)


class RuleOptions:
    _names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = list(cls._names)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if "ClassVar" in str(annotation) or name in names:
                continue
            if name not in cls.__dict__:
                raise TypeError(f"option {cls.__qualname__}.{name} has no default")
            if isinstance(cls.__dict__[name], _MUTABLE):
                raise TypeError(f"option {cls.__qualname__}.{name}: a mutable default is shared "
                                f"by every rule; use an immutable one (tuple, frozenset, "
                                f"types.MappingProxyType)")
            names.append(name)
        cls._names = tuple(names)

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            if name not in self._names:
                raise TypeError(f"{type(self).__qualname__} has no option {name!r}")
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to option {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete option {name!r}")

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in self._names)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}("
                + ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names) + ")")


def option_names(options_class: type) -> tuple[str, ...]:
    """The options a rule's Options class takes: RuleOptions, a dataclass, or none."""
    if isinstance(options_class, type) and issubclass(options_class, RuleOptions):
        return options_class._names
    if is_dataclass(options_class):
        return tuple(f.name for f in fields(options_class))
    return ()
