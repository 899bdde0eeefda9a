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
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import typing
from collections.abc import Collection
from typing import Any

from card_envs.core.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """Base class of a game's options."""

    @classmethod
    def from_options(cls, **options: Any) -> GameConfig:
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise ConfigError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for {cls.__module__.split('.')[1]}; "
                f"valid options: {', '.join(names)}"
            )
        hints = typing.get_type_hints(cls)
        for name, value in options.items():
            _check_type(name, value, hints[name])
        config = cls(**options)
        config.validate()
        return config

    def validate(self) -> None:
        """Range checks beyond types; raise :class:`ConfigError`. Override in a game."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _check_type(name: str, value: Any, hint: Any) -> None:
    allowed = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, _union_type()) else (hint,)
    for kind in allowed:
        if _is_instance(value, kind):
            return
    names = " or ".join(_type_name(k) for k in allowed)
    raise ConfigError(f"option {name!r} must be {names}, got {value!r} ({type(value).__name__})")


def _union_type() -> Any:
    import types

    return types.UnionType


def _is_instance(value: Any, kind: Any) -> bool:
    if kind is type(None):
        return value is None
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if typing.get_origin(kind) is typing.Literal:
        return value in typing.get_args(kind)
    origin = typing.get_origin(kind)
    if origin is not None:
        return isinstance(value, origin)
    return isinstance(value, kind)


def _type_name(kind: Any) -> str:
    if kind is type(None):
        return "None"
    if typing.get_origin(kind) is typing.Literal:
        return " or ".join(repr(v) for v in typing.get_args(kind))
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
