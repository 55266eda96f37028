"""What `@dataclass` gives a value class, written out once.

Every command imports the IR and a few records; a dataclass compiles its methods as its
class is made (about 0.5 ms a class, and `import dataclasses` 1.5 ms more), which is a
measurable part of a `stats` or a cached lint. These bases give the same behaviour from
one set of methods: fields are the class's `__slots__`, in order; equal when of one class
with equal fields; `Frozen` ones hashed by their fields and refusing writes. Each class
writes its own `__init__` (positional and keyword, as a dataclass's)."""

from __future__ import annotations

from typing import Any


class FrozenInstanceError(AttributeError):
    """A frozen record written to after it was made (as dataclasses' error of that name)."""


class Record:
    """Fields in `__slots__`; equality by them; a dataclass's repr; pickled by them."""

    __slots__ = ()

    def field_values(self) -> tuple:
        return tuple([getattr(self, k) for k in self.__slots__])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.field_values() == other.field_values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # (mutable: unhashable, as a dataclass)

    def __reduce__(self) -> tuple:
        return (self.__class__, self.field_values())

    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(" + ", ".join(
            f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def replace(self, **changes: Any):
        """A copy with some fields changed (as dataclasses.replace)."""
        return replaced(self, changes)


class Frozen(Record):
    """A Record whose fields are set once, in `__init__` (with `set_field`), and hashed."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self.field_values())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


set_field = object.__setattr__  # (how a Frozen's __init__ sets its fields)


def replaced(record: Any, changes: dict[str, Any]) -> Any:
    """A copy of a class whose fields are its `__slots__` and its `__init__`'s keywords
    (a Record, or the IR's containers), with some fields changed."""
    values = {k: getattr(record, k) for k in record.__slots__}
    values.update(changes)
    return record.__class__(**values)
