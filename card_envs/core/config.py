"""Validated, immutable game configurations.

Each game declares its options as a frozen dataclass deriving from :class:`GameConfig`, with
the spec's defaults, and a ``validate`` method for values that need more than a type check::

    @dataclass(frozen=True)
    class Config(GameConfig):
        first_dealer: int = 0
        target_score: int | None = None

        def validate(self) -> None:
            check_choice(self, "first_dealer", (0, 1))

``Config.from_options(**kwargs)`` rejects unknown option names (listing the valid ones),
checks every value's type against its annotation and calls ``validate``.

One option, one value: a config holds each option in one canonical form, made when it is built
(:func:`canonical_value`, from the option's annotation), so that equal options give equal, equally
hashed configs whatever form the caller used:

=========================  ==========================================================================
given                      held
=========================  ==========================================================================
a list or a tuple          a tuple (nested ones too) for an option annotated ``tuple[...]``; JSON,
                           YAML and saved games give lists, Python callers often tuples
an int for a float option  the float (``shaping_weight=1`` is ``1.0``)
a numpy scalar             the Python scalar (``numpy.int64(3)`` is ``3``)
=========================  ==========================================================================

:meth:`GameConfig.to_dict` is the JSON/YAML form: tuples as lists, everything else as held, and
``from_options(**config.to_dict())`` rebuilds an equal config, before or after a JSON or YAML round trip.
Declare a sequence option as ``tuple[...]`` (never ``list``): the config stays hashable.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import types
import typing
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from card_envs.core.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """Base class of a game's options (see the module docstring)."""

    def __post_init__(self) -> None:
        """Hold every option in its canonical form (:func:`canonical_value`); a game that extends it
        calls this first."""
        hints = _type_hints(type(self))
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            object.__setattr__(self, field.name, canonical_value(value, hints[field.name]))

    @classmethod
    def from_options(cls, **options: Any) -> GameConfig:
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise ConfigError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for {cls.__module__.split('.')[1]}; "
                f"valid options: {', '.join(names)}"
            )
        hints = _type_hints(cls)
        for name, value in options.items():
            _check_type(name, value, hints[name])
        config = cls(**options)
        config.validate()
        return config

    @classmethod
    def canonical(cls, name: str, value: Any) -> Any:
        """The form in which a config of this class holds ``value`` for option ``name``."""
        return canonical_value(value, _type_hints(cls)[name])

    def validate(self) -> None:
        """Range checks beyond types; raise :class:`ConfigError`. Override in a game."""

    def to_dict(self) -> dict[str, Any]:
        """Every option by name, ready for JSON and YAML: tuples as lists, other values as held."""
        return {field.name: _as_json(getattr(self, field.name)) for field in dataclasses.fields(self)}

    def same_as(self, options: Mapping[str, Any]) -> bool:
        """True when ``options`` (e.g. a ``to_dict()`` read back from JSON) names exactly this config's
        options, each with a value whose canonical form is the one held here."""
        names = [field.name for field in dataclasses.fields(self)]
        return set(options) == set(names) and all(
            self.canonical(name, options[name]) == getattr(self, name) for name in names)


def canonical_value(value: Any, hint: Any) -> Any:
    """``value`` in the one form a config holds for an option annotated ``hint``: converted to the first
    kind of the annotation it fits (an int for a float option becomes a float, a numpy scalar a Python
    one, a list for a ``tuple[...]`` option a tuple, nested sequences inside it tuples too). A value that
    fits no kind comes back unchanged, for the type check to name."""
    for kind in _kinds(hint):
        fitted = _fit(value, kind)
        if fitted is not _NO_FIT:
            return fitted
    return value


_NO_FIT = object()  #: :func:`_fit`'s answer for a value that is not of the kind


def _fit(value: Any, kind: Any) -> Any:
    """``value`` converted to ``kind`` if it is a value of that kind, else :data:`_NO_FIT`."""
    if kind is type(None):
        return None if value is None else _NO_FIT
    if kind is bool:
        return value if isinstance(value, bool) else _NO_FIT
    if kind is int:
        return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else _NO_FIT
    if kind is float:
        return float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else _NO_FIT
    if kind is str:
        return str(value) if isinstance(value, str) else _NO_FIT
    if typing.get_origin(kind) is typing.Literal:
        return next((choice for choice in typing.get_args(kind) if choice == value), _NO_FIT)
    if typing.get_origin(kind) is tuple:
        return _as_tuple(value) if isinstance(value, (list, tuple)) else _NO_FIT
    origin = typing.get_origin(kind) or kind
    return value if isinstance(value, origin) else _NO_FIT


def _as_tuple(value: Any) -> Any:
    """Lists and tuples as tuples, at every depth; numpy scalars as Python scalars."""
    if isinstance(value, (list, tuple)):
        return tuple(_as_tuple(item) for item in value)
    return value.item() if isinstance(value, np.generic) else value


def _as_json(value: Any) -> Any:
    """Tuples as lists, at every depth (JSON has no tuple)."""
    if isinstance(value, (list, tuple)):
        return [_as_json(item) for item in value]
    return value


@functools.cache
def _type_hints(config_class: type) -> dict[str, Any]:
    """The resolved annotation of every option of ``config_class`` (resolving them is slow: once a class)."""
    return typing.get_type_hints(config_class)


def _kinds(hint: Any) -> tuple[Any, ...]:
    """The kinds an annotation allows: the members of a union, else the annotation itself."""
    return typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)


def _check_type(name: str, value: Any, hint: Any) -> None:
    allowed = _kinds(hint)
    if any(_fit(value, kind) is not _NO_FIT for kind in allowed):
        return
    names = " or ".join(_type_name(k) for k in allowed)
    raise ConfigError(f"option {name!r} must be {names}, got {value!r} ({type(value).__name__})")


def _type_name(kind: Any) -> str:
    if kind is type(None):
        return "None"
    if typing.get_origin(kind) is typing.Literal:
        return " or ".join(repr(v) for v in typing.get_args(kind))
    if typing.get_origin(kind) is tuple:
        items = ", ".join("..." if k is Ellipsis else _type_name(k) for k in typing.get_args(kind))
        return f"a list or tuple ({items})"
    return getattr(kind, "__name__", str(kind))


def check_range(config: GameConfig, name: str, low: float | None = None, high: float | None = None) -> None:
    """Raise if option ``name`` (when not None) lies outside ``[low, high]``."""
    value = getattr(config, name)
    if value is None:
        return
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low} and {high}" if low is not None and high is not None else (
            f">= {low}" if low is not None else f"<= {high}")
        raise ConfigError(f"option {name!r} must be {bounds}, got {value!r}")


def finite_number(name: str, value: Any) -> float:
    """``value`` as a float, or a :class:`ConfigError` naming ``name`` unless it is a finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_choice(config: GameConfig, name: str, choices: Collection[Any]) -> None:
    """Raise if option ``name`` is not one of ``choices``."""
    value = getattr(config, name)
    if value not in choices:
        raise ConfigError(f"option {name!r} must be one of {', '.join(map(repr, choices))}, got {value!r}")
