"""Battlecards at the table: the board and the log, from views only (spec section 7).

Public: hand, pile and face-up pile sizes, every face-up pile, the face-up cards on the table and
the face-down count per participant and level, the war, ``jv`` and the discard. Private: the
viewer's hand and the cards it buried this round. Hidden: every pile's order, face-down cards from
piles, the set-aside cards -- and which kind another player buried (the log says only that a card
was buried).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.play.layout import board as make_board
from agents.play.layout import card, cards, face_down, hidden_hand, seat_name, seat_panel, zone
from card_envs.battlecards.picture import status
from card_envs.battlecards.rules import (
    BURY,
    FROM_HAND,
    HIDDEN,
    KIND,
    KIND_NAMES,
    LEAD,
    SOURCE_NAMES,
    WAR_UP,
    BattlecardsView,
)
from card_envs.cards import card_code, card_codes

TITLE = "Battlecards"


def _by_kind(hand: Sequence[int]) -> list[str]:
    return card_codes(sorted(hand, key=lambda c: (KIND[c], c)))


def _table_zones(views: Mapping[int, BattlecardsView], view: BattlecardsView) -> list[dict]:
    """The round's cards, then one zone per war level; face-down cards stay backs unless a shown view owns them."""
    levels: dict[int, list[dict]] = {}
    for index, (code, owner, source, level) in enumerate(view.table):
        if code == HIDDEN and source == FROM_HAND and owner in views:
            code = views[owner].table[index][0]  # the owner's own view shows what it buried
        tag = seat_name(owner) + ("" if source <= 1 else f" · {SOURCE_NAMES[source]}")
        levels.setdefault(level, []).append(face_down(tag) if code == HIDDEN else card(card_code(code), tag))
    zones = [zone("this round" if level == 0 else f"war level {level}", items) for level, items in
             sorted(levels.items())]
    return zones or [zone("this round", [], note="no card played yet")]


def board(game, views: Mapping[int, BattlecardsView], names: Sequence[str], you: int | None) -> dict:
    view = next(iter(views.values()))
    config = game.config
    info = [("round", view.rounds_completed + 1), ("leader", seat_name(view.leader))]
    if view.war_level:
        info.append(("war", f"level {view.war_level}: {', '.join(seat_name(p) for p in view.participants)}"))
    if config.jokers:
        info.append(("joker value", view.joker_value))
    if config.retire_lowest_on_flip:
        info.append(("retired up to", view.retire_level))
    if view.set_aside:
        info.append(("set aside", view.set_aside))
    center = _table_zones(views, view)
    if view.discard:
        center.append(zone("retired cards", cards(card_codes(view.discard)), spread="stack"))
    seats = []
    for seat in range(view.num_players):
        hand = (zone("hand", cards(_by_kind(views[seat].hand))) if seat in views
                else hidden_hand(view.hand_sizes[seat]))
        zones = [hand, zone("face-down pile", pile=view.pile_sizes[seat], note=f"{view.pile_sizes[seat]} cards"),
                 zone("face-up pile", cards(card_codes(view.face_up_piles[seat])), spread="stack",
                      note=f"{len(view.face_up_piles[seat])} cards")]
        held = view.hand_sizes[seat] + view.pile_sizes[seat] + len(view.face_up_piles[seat])
        stats = [("cards held", held), ("hand", view.hand_sizes[seat]), ("pile", view.pile_sizes[seat]),
                 ("face-up", len(view.face_up_piles[seat]))]
        if view.stuck[seat]:
            stats.append(("war", "stuck (no cards left)"))
        own = views.get(seat)
        if own is not None and (any(own.pile_known) or own.pile_unknown):
            stats.append(("pile holds", _kinds(own.pile_known, own.pile_unknown)))
        elif own is None and any(view.known[seat]):
            stats.append(("known among hidden cards", _kinds(view.known[seat], view.unknown[seat])))
        seats.append(seat_panel(seat, names[seat], to_act=seat == view.acting, you=seat == you,
                                out=not view.active[seat], stats=stats, zones=zones))
    return make_board(TITLE, info=info, status=status(view), seats=seats, center=center)


def _kinds(counts: Sequence[int], unknown: int) -> str:
    """Spec 7.5's public knowledge: ``K K 7 (+3 unknown)``."""
    known = " ".join(KIND_NAMES[kind] for kind in range(len(counts)) for _ in range(counts[kind]))
    return (known or "-") + (f" (+{unknown} unknown)" if unknown else "")


def narrate(game, before: BattlecardsView, after: BattlecardsView, actor: int, action: int,
            reveal: bool) -> list[str]:
    """A buried card's kind is private to its owner (7.2): others read only that a card went face down."""
    who = seat_name(actor)
    decision = before.acting_decision
    if decision == BURY:
        shown = reveal or actor == before.player
        lines = [f"{who} buries {KIND_NAMES[action] if shown else 'a card'} face down"]
    else:
        verb = {LEAD: "leads", WAR_UP: "turns up"}.get(decision, "follows with")
        lines = [f"{who} {verb} {KIND_NAMES[action]}"]
    if after.war_level > before.war_level and after.rounds_completed == before.rounds_completed:
        lines.append(f"tie: war level {after.war_level} between "
                     f"{', '.join(seat_name(p) for p in after.participants)}")
    if after.rounds_completed > before.rounds_completed or after.over:
        lines += _round_end(before, after)
    return lines


def _held(view: BattlecardsView, seat: int) -> int:
    return view.hand_sizes[seat] + view.pile_sizes[seat] + len(view.face_up_piles[seat])


def _round_end(before: BattlecardsView, after: BattlecardsView) -> list[str]:
    on_table = [0] * before.num_players
    for _code, owner, _source, _level in before.table:
        on_table[owner] += 1
    gains = [_held(after, s) - _held(before, s) for s in range(before.num_players)]  # only the taker gains
    stakes = sum(on_table) + 1  # the card just played was not on the table yet
    winners = [s for s, gain in enumerate(gains) if gain > 0]
    lines = []
    if len(winners) == 1:
        lines.append(f"{seat_name(winners[0])} wins round {before.rounds_completed + 1} "
                     f"and takes {stakes} cards")
    elif winners:
        lines.append(f"last-card tie in round {before.rounds_completed + 1}: the stakes are shared")
    for seat in range(before.num_players):
        if before.active[seat] and not after.active[seat]:
            lines.append(f"{seat_name(seat)} has no cards left and is out")
    return lines


def opening(game, view: BattlecardsView) -> list[str]:
    return [f"{view.num_players} players; {seat_name(view.leader)} leads round 1"]


def result(game, view: BattlecardsView, winners: Sequence[int], truncated: bool) -> str:
    held = ", ".join(f"{seat_name(s)} {_held(view, s)}" for s in range(view.num_players))
    how = f"after {view.rounds_completed} rounds (the round limit), most cards" if truncated else \
        f"after {view.rounds_completed} rounds"
    if len(winners) == 1:
        return f"{seat_name(winners[0])} wins {how}; cards held: {held}"
    return f"draw between {', '.join(seat_name(w) for w in winners)} {how}; cards held: {held}"

