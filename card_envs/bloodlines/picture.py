"""Bloodlines' table for ``render_mode="rgb_array"``, from views only (spec section 7).

Each player owns a deck with the same codes, so every zone sits in its owner's panel: the royals J, Q,
K (edged) with the hearts under them and their defense, the units of spades with their attack, the
diamond pool with the jokers in play (a diamond bloodline's), the hand (face up when its owner's view is
drawn, else backs), the draw pile (a count) and the discard pile (public).
"""

from __future__ import annotations

from collections.abc import Mapping

from card_envs.bloodlines.rules import (
    DECOY_PHASE,
    DIAMONDS,
    DISCARD_PHASE,
    ROYAL_NAMES,
    STEP1,
    Bloodlines,
    BloodlinesView,
    royal_card,
)
from card_envs.cards import card_code, card_codes
from card_envs.core.table import Card, Seat, Table, Zone, count, face_up, hand, pile, public_view, seat_name

SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
PHASE_WORDS = ("step 1", "main action", "discard", "decoy decision")


def table(game: Bloodlines, views: Mapping[int, BloodlinesView]) -> Table:
    view = public_view(views)
    seats = tuple(_seat(view, views.get(seat), seat) for seat in (0, 1))
    return Table("Bloodlines", status(view), _info(view), (), seats, viewer=None if len(views) > 1 else view.player)


def _info(view: BloodlinesView) -> tuple[tuple[str, object], ...]:
    info = [("turn", view.turn), ("active", seat_name(view.active)), ("phase", PHASE_WORDS[view.phase]),
            ("idle turns", view.idle)]
    if view.phase == DECOY_PHASE and not view.over:
        info.append(("threatened", _royal_code(view, 1 - view.active, view.decoy_royal)))
    return tuple(info)


def _royal_code(view: BloodlinesView, seat: int, royal: int) -> str:
    return card_code(royal_card(view.bloodlines[seat], royal))


def _royal(view: BloodlinesView, seat: int, royal: int) -> Zone:
    """A royal with the hearts under it; an empty place once it is dead."""
    if royal not in view.royals[seat]:
        return Zone(f"{ROYAL_NAMES[royal]}: dead", width=2.8)
    cards = (Card(_royal_code(view, seat, royal), highlight=True),) + face_up(card_codes(view.hearts[seat][royal]))
    return Zone(f"{_royal_code(view, seat, royal)} · defense {view.defense[seat][royal]}", cards,
                note=count(len(cards) - 1, "heart"), width=2.8)


def _units(view: BloodlinesView, seat: int) -> Zone:
    """Every unit's spades side by side, a gap between units; each unit's first card tagged with its attack."""
    cards = tuple(Card(code, f"atk {view.attack[seat][unit]}" if k == 0 else "", group=unit)
                  for unit, spades in enumerate(view.units[seat]) for k, code in enumerate(card_codes(spades)))
    return Zone("units", cards, note=count(len(view.units[seat]), "unit"), width=5.2)


def _pool(view: BloodlinesView, seat: int) -> Zone:
    if view.bloodlines[seat] != DIAMONDS:
        return Zone("diamond pool", note="none: not a diamond bloodline", width=3.4)
    cards = face_up(card_codes(view.pools[seat])) + face_up(card_codes(view.jokers[seat]), "in play")
    return Zone(f"diamond pool · value {view.pool_values[seat]}", cards,
                note=f"jokers in supply {view.supply_sizes[seat]}", width=3.4)


def _seat(view: BloodlinesView, own: BloodlinesView | None, seat: int) -> Seat:
    discards = view.discards[seat]
    zones = (*(_royal(view, seat, royal) for royal in range(3)), _units(view, seat), _pool(view, seat),
             hand(card_codes(own.hand) if own is not None else None, view.hand_sizes[seat], width=4.4),
             pile("draw pile", view.pile_sizes[seat]),
             Zone("discard pile", face_up(card_codes(discards)), note=count(len(discards), "card"), width=8))
    stats = (("bloodline", SUIT_WORDS[view.bloodlines[seat]]), ("royals", len(view.royals[seat])),
             ("hand", view.hand_sizes[seat]), ("pile", view.pile_sizes[seat]))
    return Seat(seat_name(seat), zones, stats, to_act=seat == view.current_player,
                out=view.over and not view.royals[seat])


def status(view: BloodlinesView) -> str:
    if view.over:
        return "game over: " + (f"{seat_name(view.winner)} wins" if view.winner >= 0 else "a draw")
    who = seat_name(view.current_player)
    if view.phase == DECOY_PHASE:
        return f"{who} decides: sacrifice a joker to save {_royal_code(view, view.current_player, view.decoy_royal)}"
    if view.phase == DISCARD_PHASE:
        return f"{who} discards {count(view.owed, 'card')} down to the hand limit"
    if view.phase == STEP1:
        return f"{who}: step 1, resource actions, then end step 1"
    return f"{who}: main action"
