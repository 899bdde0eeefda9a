"""Bloodlines at the table: the board and the log, from views only (spec section 7).

Public: both bloodlines, royals with the hearts under them, units, jokers, pools, discard piles,
hand and pile sizes, every action's public face (draws only by count). Private: the viewer's own
hand. Both players own a deck with the same codes, so every zone sits in its owner's panel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.play.layout import board as make_board
from agents.play.layout import card, cards, hidden_hand, seat_name, seat_panel, zone
from card_envs.bloodlines.picture import status
from card_envs.bloodlines.rules import (
    ACTION_NAMES,
    DECOY,
    DECOY_PHASE,
    DIAMONDS,
    DISCARD_PHASE,
    NO_DECOY,
    ROYAL_NAMES,
    BloodlinesView,
    royal_card,
)
from card_envs.cards import SUITS, card_code, card_codes

TITLE = "Bloodlines"
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
PHASE_WORDS = ("step 1 (resource actions, then end step 1)", "main action", "discard", "decoy decision")


def board(game, views: Mapping[int, BloodlinesView], names: Sequence[str], you: int | None) -> dict:
    view = next(iter(views.values()))
    phase = PHASE_WORDS[view.phase] + (f" (owes {view.owed})" if view.phase == DISCARD_PHASE else "")
    info = [("turn", view.turn), ("active", seat_name(view.active)), ("phase", phase),
            ("idle turns", view.idle)]
    if view.phase == DECOY_PHASE and not view.over:
        defender = 1 - view.active
        royal = card_code(royal_card(view.bloodlines[defender], view.decoy_royal))
        info.append(("threatened", f"{royal} (attacked by {'a joker' if view.decoy_by_joker else 'a unit'})"))
    seats = [_seat(game, view, views, seat, names[seat], you) for seat in (0, 1)]
    return make_board(TITLE, info=info, status=status(view), seats=seats)


def _seat(game, view: BloodlinesView, views: Mapping[int, BloodlinesView], seat: int, name: str,
          you: int | None) -> dict:
    bloodline = view.bloodlines[seat]
    zones = []
    for royal in view.royals[seat]:
        royal_code = card_code(royal_card(bloodline, royal))
        under = [card(code, "heart") for code in card_codes(view.hearts[seat][royal])]
        zones.append(zone(f"{royal_code} · defense {view.defense[seat][royal]}", [card(royal_code, highlight=True)]
                          + under))
    for unit, spades in enumerate(view.units[seat]):
        zones.append(zone(f"unit {unit} · attack {view.attack[seat][unit]}", cards(card_codes(spades))))
    if view.jokers[seat]:
        zones.append(zone("jokers in play", cards(card_codes(view.jokers[seat]))))
    if bloodline == DIAMONDS:
        zones.append(zone(f"diamond pool · value {view.pool_values[seat]}", cards(card_codes(view.pools[seat])),
                          note=f"a joker costs {game.config.joker_cost}; supply {view.supply_sizes[seat]}"))
    zones.append(zone("hand", cards(card_codes(views[seat].hand))) if seat in views
                 else hidden_hand(view.hand_sizes[seat]))
    zones.append(zone("draw pile", pile=view.pile_sizes[seat], note=f"{view.pile_sizes[seat]} cards"))
    zones.append(zone("discard pile", cards(card_codes(view.discards[seat])), spread="stack",
                      note=f"{len(view.discards[seat])} cards"))
    stats = [("bloodline", SUIT_WORDS[bloodline]), ("royals", len(view.royals[seat])),
             ("hand", view.hand_sizes[seat]), ("pile", view.pile_sizes[seat])]
    return seat_panel(seat, name, to_act=seat == view.current_player, you=seat == you,
                      out=view.over and not view.royals[seat], stats=stats, zones=zones)


def narrate(game, before: BloodlinesView, after: BloodlinesView, actor: int, action: int,
            reveal: bool) -> list[str]:
    """Every Bloodlines action is public (section 7); draws are told by count, or by card to their owner."""
    who = seat_name(actor)
    if action in (DECOY, NO_DECOY):
        royal = card_code(royal_card(before.bloodlines[actor], before.decoy_royal))
        lines = [f"{who} sacrifices a joker as a decoy: {royal} survives" if action == DECOY
                 else f"{who} declines the decoy"]
    else:
        lines = [f"{who}: {ACTION_NAMES[action]}"]
        enemy = 1 - actor
        for royal in range(3):
            lost = before.hearts[enemy][royal]
            if lost and not after.hearts[enemy][royal] and royal in before.royals[enemy]:
                lines.append(f"the hearts under {seat_name(enemy)}'s {ROYAL_NAMES[royal]} are discarded "
                             f"({' '.join(card_codes(lost))})")
    draws = {seat: before.pile_sizes[seat] - after.pile_sizes[seat] for seat in (0, 1)}
    if draws[actor] > 0:  # the actor's draws come first; the next player's (R4, auto-skipped) after the turn line
        lines.append(_draw_line(before, after, actor, draws[actor]))
    for seat in (0, 1):
        for royal in before.royals[seat]:
            if royal not in after.royals[seat]:
                lines.append(f"{seat_name(seat)}'s {card_code(royal_card(before.bloodlines[seat], royal))} dies")
    if after.phase == DECOY_PHASE and not after.over:
        defender = after.current_player
        royal = card_code(royal_card(after.bloodlines[defender], after.decoy_royal))
        lines.append(f"{seat_name(defender)} may sacrifice a joker to save {royal}")
    if after.turn != before.turn and not after.over:
        lines.append(f"turn {after.turn}: {seat_name(after.active)} to play")
    if draws[1 - actor] > 0:
        lines.append(_draw_line(before, after, 1 - actor, draws[1 - actor]))
    return lines


def _draw_line(before: BloodlinesView, after: BloodlinesView, seat: int, drawn: int) -> str:
    if seat == after.player:
        new = sorted(set(after.hand) - set(before.hand))
        if len(new) == drawn:
            return f"{seat_name(seat)} draws {' '.join(card_codes(new))}"
    return f"{seat_name(seat)} draws {drawn} card{'s' if drawn > 1 else ''}"


def opening(game, view: BloodlinesView) -> list[str]:
    lines = [f"{seat_name(s)}'s bloodline is {SUIT_WORDS[view.bloodlines[s]]} ({SUITS[view.bloodlines[s]]})"
             for s in (0, 1)]
    return lines + [f"turn 1: {seat_name(view.active)} starts"]


def result(game, view: BloodlinesView, winners: Sequence[int], truncated: bool) -> str:
    royals = f"royals {len(view.royals[0])}-{len(view.royals[1])}"
    if any(not r for r in view.royals):
        how = "by killing the last royal"
    else:
        scored = "on surviving royals" if game.config.unfinished_result == "royals" else "scored as a draw"
        how = f"at the turn limit, {scored}" if truncated else f"by stalemate (two idle turns), {scored}"
    if not winners or len(winners) > 1:
        return f"draw {how}; {royals}"
    return f"{seat_name(winners[0])} wins {how}; {royals}"
