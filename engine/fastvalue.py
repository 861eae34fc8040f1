"""Fast construction of frozen slots dataclasses (and of tuples of table entries), for the
engine's hot paths.

A frozen dataclass's generated ``__init__`` sets every field through ``object.__setattr__`` (the
class's own ``__setattr__`` refuses): for a 15-field round that is most of the cost of a move in a
playout. `fast_constructor` builds the same value another way: it fills an instance of a plain
twin class with the same slots (ordinary slot stores, which the interpreter specialises) and then
turns it into the frozen class (``__class__`` assignment, allowed between classes of identical
layout). The result is an ordinary instance of the frozen class: equal, hashed, compared,
printed, pickled and frozen exactly like one its ``__init__`` built.

Only for classes made with ``@dataclass(frozen=True, slots=True)`` whose fields have no
``default_factory`` and no ``__post_init__``: the constructor takes the same arguments as the
class (positional or by name, same defaults); fields with ``init=False`` get their default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def fast_constructor(cls: Callable[P, T], caches: bool = False) -> Callable[P, T]:
    """A function that builds `cls` values like ``cls(...)`` does, several times faster. With
    `caches`, the fields with ``init=False`` (caches a value fills later) come last as arguments
    too, defaulting to their defaults: a value can be built with its cache already filled."""
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        raise TypeError(f"fast_constructor needs a dataclass, not {cls!r}")
    params = getattr(cls, "__dataclass_params__", None)
    slots = cls.__dict__.get("__slots__")
    if params is None or not params.frozen or slots is None:
        raise TypeError(f"{cls.__name__} must be @dataclass(frozen=True, slots=True)")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__, which fast_constructor would skip")
    twin = builder_class(cls)
    namespace: dict[str, Any] = {"_twin": twin, "_cls": cls}
    args: list[str] = []
    uninit: list[str] = []  # with `caches`: the init=False fields, after the others
    body: list[str] = []
    for index, field in enumerate(dataclasses.fields(cls)):
        if field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{field.name} has a default_factory")
        default = f"_default{index}"
        if field.default is not dataclasses.MISSING:
            namespace[default] = field.default
        if not field.init:
            if field.default is dataclasses.MISSING:
                raise TypeError(f"{cls.__name__}.{field.name} has init=False but no default")
            if caches:
                uninit.append(f"{field.name}={default}")
                body.append(f"    o.{field.name} = {field.name}\n")
            else:
                body.append(f"    o.{field.name} = {default}\n")
            continue
        args.append(field.name if field.default is dataclasses.MISSING else f"{field.name}={default}")
        body.append(f"    o.{field.name} = {field.name}\n")
    # `_twin()` (type call of a class without __init__) costs less than `object.__new__(_twin)`
    head = f"def build({', '.join(args + uninit)}):\n    o = _twin()\n"
    source = head + "".join(body) + "    o.__class__ = _cls\n    return o\n"
    exec(source, namespace)
    build: Callable[P, T] = namespace["build"]
    build.__qualname__ = build.__name__ = f"fast_{cls.__name__}"
    build.__doc__ = f"Build a {cls.__name__} (same arguments as the class), bypassing its slow frozen __init__."
    return build


_TWINS: dict[type, type] = {}


def builder_class(cls: type) -> Any:
    """The plain twin class of a frozen slots dataclass `cls` that `fast_constructor` fills: for a hot
    path that builds `cls` values inline (``o = twin(); o.field = ...`` for every slot, the caches'
    too, then ``o.__class__ = cls``), saving the constructor's call. Made once per class."""
    twin = _TWINS.get(cls)
    if twin is None:
        slots = cls.__dict__.get("__slots__")
        if slots is None:
            raise TypeError(f"{cls.__name__} must be @dataclass(frozen=True, slots=True)")
        twin = _TWINS[cls] = type(f"_{cls.__name__}Builder", (), {"__slots__": tuple(slots)})
    return twin


K = TypeVar("K")
V = TypeVar("V")


def lookup_all(table: Mapping[K, V] | Sequence[V], keys: Sequence[K]) -> tuple[V, ...]:
    """``tuple(table[key] for key in keys)``, in one C-level call (legal moves are built this way)."""
    if len(keys) > 1:
        return itemgetter(*keys)(table)  # type: ignore[no-any-return]
    return (table[keys[0]],) if keys else ()  # type: ignore[call-overload]
