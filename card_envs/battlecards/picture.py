"""Battlecards' table for ``render_mode="rgb_array"``, from views only (spec section 7).

Center: this round's cards, the war (every face-up war card and every face-down one, grouped by war
level and tagged with owner and level) and, with ``retire_lowest_on_flip``, the retired cards. A
face-down table card is a back unless a drawn view owns it (its owner saw what it buried). Each seat:
its hand (face up when its view is drawn, else backs), its face-down pile (a count: nobody sees it) and
its face-up pile (public).
"""

from __future__ import annotations

from collections.abc import Mapping

from card_envs.battlecards.rules import BURY, HIDDEN, KIND, LEAD, WAR_UP, Battlecards, BattlecardsView
from card_envs.cards import card_code, card_codes
from card_envs.core.table import Card, Seat, Table, Zone, count, face_up, hand, pile, public_view, seat_name

DECISION_WORDS = {LEAD: "leads the round: play a card face up", WAR_UP: "plays a card face up for the war"}


def table(game: Battlecards, views: Mapping[int, BattlecardsView]) -> Table:
    view = public_view(views)
    seats = tuple(_seat(view, views.get(seat), seat) for seat in range(view.num_players))
    return Table("Battlecards", status(view), _info(game, view), _center(game, views, view), seats,
                 viewer=None if len(views) > 1 else view.player)


def _info(game: Battlecards, view: BattlecardsView) -> tuple[tuple[str, object], ...]:
    info = [("round", view.rounds_completed + 1), ("leader", seat_name(view.leader))]
    if view.war_level:
        info.append(("war level", view.war_level))
    if game.config.jokers:
        info.append(("joker value", view.joker_value))
    if game.config.retire_lowest_on_flip:
        info.append(("retired up to", view.retire_level))
    if view.set_aside:
        info.append(("set aside", view.set_aside))
    return tuple(info)


def _table_card(views: Mapping[int, BattlecardsView], index: int, placement: tuple[int, int, int, int]) -> Card:
    """One placement of the round: face up, or a back unless a drawn view (its owner's) shows it."""
    code, owner, _source, level = placement
    if code == HIDDEN and owner in views:
        code = views[owner].table[index][0]  # the owner's own view shows what it buried
    tag = f"p{owner}" + (f" L{level}" if level else "")
    return Card(None if code == HIDDEN else card_code(code), tag, group=level)


def _center(game: Battlecards, views: Mapping[int, BattlecardsView], view: BattlecardsView) -> tuple[Zone, ...]:
    cards = [_table_card(views, i, placement) for i, placement in enumerate(view.table)]
    round_cards = tuple(card for card in cards if card.group == 0)
    war = tuple(card for card in cards if card.group > 0)
    fighting = "fighting: " + ", ".join(seat_name(p) for p in view.participants) if view.war_level else "no war"
    if not game.config.retire_lowest_on_flip:
        return Zone("this round", round_cards, width=6.2), Zone("war", war, note=fighting, width=12.4)
    return (Zone("this round", round_cards, width=5.4), Zone("war", war, note=fighting, width=8.6),
            Zone("retired cards", face_up(card_codes(view.discard)), note=count(len(view.discard), "card"), width=4.4))


def _seat(view: BattlecardsView, own: BattlecardsView | None, seat: int) -> Seat:
    shown = card_codes(sorted(own.hand, key=lambda c: (KIND[c], c))) if own is not None else None
    face_up_pile = view.face_up_piles[seat]
    zones = (hand(shown, view.hand_sizes[seat], width=3.6), pile("face-down pile", view.pile_sizes[seat], width=1.9),
             Zone("face-up pile", face_up(card_codes(face_up_pile)), note=count(len(face_up_pile), "card"),
                  width=3))
    held = view.hand_sizes[seat] + view.pile_sizes[seat] + len(face_up_pile)
    stats = [("cards held", held)] + ([("war", "stuck")] if view.stuck[seat] else [])
    return Seat(seat_name(seat), zones, tuple(stats), to_act=seat == view.acting, out=not view.active[seat])


def status(view: BattlecardsView) -> str:
    if view.over:
        return "game over"
    who = seat_name(view.acting)
    if view.acting_decision == BURY:
        return f"{who} buries {count(view.bury_left, 'card')} from hand face down (war level {view.war_level})"
    return f"{who} {DECISION_WORDS.get(view.acting_decision, 'follows: play a card face up')}"
