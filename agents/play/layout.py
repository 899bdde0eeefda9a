"""The table a person sees, as plain data: the one picture the web page and the terminal both draw.

Each game's module (``agents/play/<game>.py``) turns *views* (``state.view(seat)``, never the state)
into a :func:`board`; the web page draws it with CSS cards, the terminal with rich. A board is a
JSON-safe dict:

==============  =====================================================================================
key             meaning
==============  =====================================================================================
``title``       the game's name
``info``        ``[[label, value], ...]``: public facts of the table (trump rank, trick number, ...)
``status``      one line: whose decision it is and what kind
``seats``       one panel per seat: ``seat``, ``name``, ``to_act``, ``out``, ``you`` (the seat whose
                view this is), ``stats`` (``[[label, value], ...]``) and ``zones``
``center``      zones in the middle of the table (trump stack, the trick, the war, ...)
==============  =====================================================================================

A *zone* is ``{"label", "cards", "pile", "note", "spread"}``: ``cards`` are drawn left to right, each
``{"c": code}`` (a card code such as ``"10H"`` or ``"X1"``; ``None`` for a face-down card) with an
optional tag ``"t"`` (who played it, a level) and ``"h": true`` to highlight it; ``pile`` is a
face-down stack drawn as one card back with its count; ``spread`` is ``"row"`` (side by side) or
``"stack"`` (overlapping, for long public piles).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Card = dict[str, Any]
Zone = dict[str, Any]


def card(code: str, tag: str | None = None, *, highlight: bool = False) -> Card:
    """A face-up card, e.g. ``card("AS", "player_1")``."""
    item: Card = {"c": code}
    if tag:
        item["t"] = tag
    if highlight:
        item["h"] = True
    return item


def face_down(tag: str | None = None) -> Card:
    """A face-down card in its place (its identity is not part of the picture)."""
    item: Card = {"c": None}
    if tag:
        item["t"] = tag
    return item


def cards(codes: Iterable[str]) -> list[Card]:
    return [card(code) for code in codes]


def zone(label: str, items: Sequence[Card] = (), *, pile: int = 0, note: str = "", spread: str = "row") -> Zone:
    """A labelled place on the table holding face-up/face-down ``items`` and/or a face-down ``pile``."""
    return {"label": label, "cards": list(items), "pile": int(pile), "note": note, "spread": spread}


def hidden_hand(size: int) -> Zone:
    """Another player's hand: only its size is public."""
    return zone("hand", [face_down() for _ in range(size)], note=f"{size} cards", spread="stack")


def seat_panel(seat: int, name: str, *, to_act: bool, you: bool = False, out: bool = False,
               stats: Sequence[tuple[str, Any]] = (), zones: Sequence[Zone] = ()) -> dict[str, Any]:
    return {"seat": seat, "name": name, "to_act": to_act, "you": you, "out": out,
            "stats": [[label, _plain(value)] for label, value in stats], "zones": list(zones)}


def board(title: str, *, info: Sequence[tuple[str, Any]], status: str, seats: Sequence[dict[str, Any]],
          center: Sequence[Zone] = ()) -> dict[str, Any]:
    return {"title": title, "info": [[label, _plain(value)] for label, value in info], "status": status,
            "seats": list(seats), "center": list(center)}


def seat_name(seat: int) -> str:
    return f"player_{seat}"


def board_cards(picture: dict[str, Any]) -> list[tuple[int | None, str]]:
    """Every face-up card of a board as ``(seat of the panel or None for the center, code)``: what a
    person can read off the table (the no-leak tests scan this)."""
    found = [(None, item["c"]) for z in picture["center"] for item in z["cards"] if item["c"]]
    for panel in picture["seats"]:
        found += [(panel["seat"], item["c"]) for z in panel["zones"] for item in z["cards"] if item["c"]]
    return found


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
