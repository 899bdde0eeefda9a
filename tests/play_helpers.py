"""Helpers of the play-table tests (not a test module): an independent oracle of what a seat may see,
and a scanner of everything a table sends.

The oracle reads the *state* (``card_locations`` and, for Battlecards, the table placements), never
the views the play code uses, so it can catch a table that shows more than the rules allow. A card
is keyed ``(owner, code)`` in Bloodlines (each player owns a deck with the same codes) and
``(None, code)`` elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

import card_envs
from agents.play.layout import board_cards
from card_envs.battlecards.rules import FROM_HAND, FROM_PILE
from card_envs.cards import CODES
from card_envs.core.engine import GameState
from card_envs.revolution import rules as revolution_rules

#: a card code standing alone in text: 2..10, J, Q, K, A then a suit letter, or a joker
CARD_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_])(?:(?:10|[2-9AJQK])[CDHS]|X[12])(?![A-Za-z0-9_])")

#: small configs so that a whole game takes seconds in a browser
QUICK_CONFIGS: dict[str, dict[str, Any]] = {
    "revolutionary_war_v0": {},
    "bloodlines_v0": {"max_turns": 60},
    "revolution_v0": {"num_hands": 1},
    "battlecards_v0": {"max_rounds": 25},
}


def _owner_of_zone(zone: str) -> int | None:
    tail = zone.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else None


def visible_cards(state: GameState, seat: int) -> set[tuple[int | None, str]]:
    """Every card ``seat`` can see now: its own hand and everything face up (spec section 7 of each game)."""
    name = state.game.name
    locations = state.card_locations()
    seen: set[tuple[int | None, str]] = set()
    if name == "bloodlines_v0":
        for zone, cards in locations.items():
            owner = _owner_of_zone(zone)
            hidden = (zone.startswith(("pile_", "set_aside_", "joker_supply_"))
                      or (zone.startswith("hand_") and owner != seat))
            if not hidden:
                seen.update((owner, CODES[c]) for c in cards)
        return seen
    for zone, cards in locations.items():
        if name == "battlecards_v0" and zone == "table":
            continue
        if zone.startswith("hand_") and _owner_of_zone(zone) != seat:
            continue
        if zone in ("deck", "set_aside") or zone.startswith("pile_"):
            continue
        seen.update((None, CODES[c]) for c in cards)
    if name == "battlecards_v0":
        for card, owner, source, _level in state.table:
            face_down = source >= FROM_PILE and not (source == FROM_HAND and owner == seat)
            if not face_down:
                seen.add((None, CODES[card]))
    return seen


def replay_states(state: GameState, seed: int) -> list[GameState]:
    """The states before every decision of a finished game, and its end, replayed from ``seed``."""
    game = state.game
    replayed = game.new_state(np.random.default_rng(seed))
    states = [replayed.clone()]
    for action in state.history:
        replayed.apply(action)
        states.append(replayed.clone())
    return states


def played_face_up(state: GameState, action: int) -> set[tuple[int | None, str]]:
    """A card an action puts face up that may be gone from the table by the next decision: in Revolution
    the fourth card of a hand's last trick (the next hand is dealt at once; spec 7.1, plays are public)."""
    if state.game.name == "revolution_v0" and action != revolution_rules.PASS:
        return {(None, revolution_rules.card_code(action))}
    return set()


class SeenSoFar:
    """``seen(k)``: every card the seat could see at some decision ``0..k`` of a game."""

    def __init__(self, states: list[GameState], seat: int) -> None:
        self.visible = [visible_cards(s, seat) for s in states]
        self.cumulative: list[set[tuple[int | None, str]]] = []
        running: set[tuple[int | None, str]] = set()
        for k, now in enumerate(self.visible):
            running = running | now
            if k:
                running |= played_face_up(states[k - 1], states[-1].history[k - 1])
            self.cumulative.append(running)


def texts_of(payload: Any) -> Iterable[str]:
    """Every string in a JSON payload, board included (labels, notes, tags, log, names, result)."""
    if isinstance(payload, str):
        yield payload
    elif isinstance(payload, dict):
        for key, value in payload.items():
            if key not in ("c", "table"):  # card codes are checked with their owner by check_payload; "table" is
                # the table's random id (token_urlsafe), not text: it can spell a code such as "-X1-" by chance
                yield from texts_of(value)
    elif isinstance(payload, list):
        for value in payload:
            yield from texts_of(value)


def check_payload(payload: dict[str, Any], game_name: str, visible_now: set, seen: set) -> None:
    """The board shows only cards the seat can see now; no text names a card it has never seen."""
    owned = game_name == "bloodlines_v0"
    if "board" in payload:
        for panel_seat, code in board_cards(payload["board"]):
            key = (panel_seat if owned else None, code)
            assert key in visible_now, f"{game_name}: the board shows {key}, which the seat cannot see now"
    seen_codes = {code for _owner, code in seen}
    for text in texts_of(payload):
        for code in CARD_IN_TEXT.findall(text):
            assert code in seen_codes, f"{game_name}: {text!r} names {code}, which the seat has never seen"


def all_game_names() -> tuple[str, ...]:
    return card_envs.ENV_NAMES
