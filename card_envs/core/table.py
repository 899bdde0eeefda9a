"""The table as plain data, from views only: what ``render_mode="rgb_array"`` draws.

Each game's ``picture.py`` turns *views* (``state.view(seat)``, never the state) into a :class:`Table`;
:mod:`card_envs.core.render` draws it with Pillow. Nothing here needs Pillow.

=============  ===========================================================================================
class          what it is
=============  ===========================================================================================
:class:`Card`  one card in its place: ``code`` (``"10H"``, ``"X1"``) or ``None`` face down, an optional
               ``tag`` under it (who played it, a war level), ``highlight`` (gold edge), ``group`` (a gap
               is drawn where the group changes, e.g. between two units)
:class:`Zone`  a labelled place: face-up/face-down ``cards`` drawn left to right (overlapping when they do
               not fit), a face-down ``pile`` drawn as one back with its count, a ``note`` under it, and
               its ``width`` in card widths, fixed by the game's layout (not by what the zone holds now);
               a ``stretch`` zone shares the room its row leaves over
:class:`Seat`  one player's panel: name, ``stats`` (``[(label, value), ...]``), zones, ``to_act``, ``out``
:class:`Table` the title, ``info`` (public facts), ``status`` (whose decision), the ``center`` zones,
               the seats, and ``viewer``: the seat whose view it is, or ``None`` when every hand is shown
=============  ===========================================================================================

Two pictures of a position (:func:`table_of`):

* every hand face up (``seat=None``): built from every seat's view together -- what any player knows.
  Cards nobody sees (a draw deck, a face-down pile's order) stay face down;
* one seat's view (``seat=k``): built from ``state.view(k)`` alone, so every card that seat cannot see
  is a back (or only a count) and no hidden card can leak: two positions that seat cannot tell apart
  (``state.sample_hidden(k, rng)``) give the same table.

A game's layout must not depend on the position, only on its config: then every frame of an episode
has the same size (video writers need that).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from card_envs.core.engine import Game, GameState


@dataclass(frozen=True)
class Card:
    """A card in its place; ``code=None`` is face down."""

    code: str | None
    tag: str = ""
    highlight: bool = False
    group: int = 0


@dataclass(frozen=True)
class Zone:
    """A labelled place on the table; ``width`` in card widths is the room it takes, whatever it holds."""

    label: str
    cards: tuple[Card, ...] = ()
    pile: int = 0
    note: str = ""
    width: float = 4
    stretch: bool = True


@dataclass(frozen=True)
class Seat:
    """One player's panel."""

    name: str
    zones: tuple[Zone, ...]
    stats: tuple[tuple[str, Any], ...] = ()
    to_act: bool = False
    out: bool = False


@dataclass(frozen=True)
class Table:
    """Everything one picture shows."""

    title: str
    status: str
    info: tuple[tuple[str, Any], ...]
    center: tuple[Zone, ...]
    seats: tuple[Seat, ...]
    viewer: int | None = None


def face_up(codes: Iterable[str], tag: str = "") -> tuple[Card, ...]:
    """Face-up cards, e.g. ``face_up(["AS", "10H"])``."""
    return tuple(Card(code, tag) for code in codes)


def backs(count: int, tag: str = "") -> tuple[Card, ...]:
    """``count`` face-down cards."""
    return tuple(Card(None, tag) for _ in range(count))


def hand(shown: Sequence[str] | None, size: int, width: float, label: str = "hand") -> Zone:
    """A hand: its cards face up when ``shown`` (the owner's view is drawn), else ``size`` backs."""
    cards = face_up(shown) if shown is not None else backs(size)
    return Zone(label, cards, note=count(size, "card"), width=width)


def pile(label: str, size: int, width: float = 2) -> Zone:
    """A face-down stack: one back with its count."""
    return Zone(label, pile=size, note=count(size, "card"), width=width, stretch=False)


def count(number: int, noun: str) -> str:
    """``count(1, "card") == "1 card"``, ``count(3, "card") == "3 cards"``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def seat_name(seat: int) -> str:
    return f"player_{seat}"


def views_of(state: GameState, seat: int | None = None) -> dict[int, Any]:
    """``{seat: state.view(seat)}`` for one seat, or for every seat when ``seat`` is None."""
    seats = range(state.game.num_players) if seat is None else (seat,)
    return {s: state.view(s) for s in seats}


def table_of(state: GameState, seat: int | None = None) -> Table:
    """The table of ``state``: every hand face up (``seat=None``) or ``seat``'s view; built from views only."""
    return picture_module(state.game).table(state.game, views_of(state, seat))


def picture_module(game: Game) -> Any:
    """The game's ``picture`` module (``card_envs.<game>.picture``): ``table(game, views) -> Table``."""
    return importlib.import_module(f"{type(game).__module__.rsplit('.', 1)[0]}.picture")


def public_view(views: Mapping[int, Any]) -> Any:
    """Any one of ``views``: every view shows the same public table."""
    return next(iter(views.values()))
