"""Revolution's table for ``render_mode="rgb_array"``, from views only (spec section 7).

Center: the current trick and the previous one (each card tagged with its player, the previous trick's
winning card edged) and, with ``full_recall``, the earlier tricks of this hand. Each seat: its holding
(face up when its view is drawn, else backs), tricks won this hand, score, and whether it passed this lead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from card_envs.core.table import Card, Seat, Table, Zone, count, hand, public_view, seat_name
from card_envs.revolution.rules import (
    DESIGNATED,
    FOLLOW,
    FORCED,
    NUM_PLAYERS,
    OFFERED,
    OPENING,
    Revolution,
    RevolutionView,
    card_code,
)

SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
LEAD_WORDS = {OPENING: "holds the ace of spades: leads the first trick",
              DESIGNATED: "is the designated leader: lead or pass",
              OFFERED: "is offered the lead: lead or pass", FORCED: "must lead"}


def table(game: Revolution, views: Mapping[int, RevolutionView]) -> Table:
    view = public_view(views)
    seats = tuple(_seat(view, views.get(seat), seat) for seat in range(NUM_PLAYERS))
    return Table("Revolution", status(view), _info(view), _center(game, view), seats,
                 viewer=None if len(views) > 1 else view.player)


def _suit(suit: int) -> str:
    return SUIT_WORDS[suit] if suit >= 0 else "-"


def _info(view: RevolutionView) -> tuple[tuple[str, object], ...]:
    hand_number = f"{view.hand_number} of {view.num_hands}" + (" (tie-break)" if view.is_tie_break else "")
    return (("hand", hand_number), ("trick", view.trick_number), ("dealer", seat_name(view.dealer)),
            ("designated leader", seat_name(view.designated)), ("led suit", _suit(view.led_suit)),
            ("trump", _suit(view.trump_suit)))


def _trick(trick: Sequence[int], leader: int, winner: int = -1, group: int = 0) -> tuple[Card, ...]:
    """The cards of a trick in playing order, from its leader, tagged with their players."""
    order = [(leader + k) % NUM_PLAYERS for k in range(NUM_PLAYERS)] if leader >= 0 else range(NUM_PLAYERS)
    return tuple(Card(card_code(trick[seat]), f"p{seat}", highlight=seat == winner, group=group)
                 for seat in order if trick[seat] >= 0)


def _center(game: Revolution, view: RevolutionView) -> tuple[Zone, ...]:
    led = f"led by {seat_name(view.trick_leader)}" if view.trick_leader >= 0 else "no lead yet"
    previous = f"won by {seat_name(view.prev_winner)}" if view.prev_leader >= 0 else ""
    zones = [Zone("current trick", _trick(view.trick, view.trick_leader), note=led, width=4.6),
             Zone("previous trick", _trick(view.prev_trick, view.prev_leader, view.prev_winner), note=previous,
                  width=4.6)]
    if game.config.full_recall:
        earlier = view.recall[:-1] if view.prev_leader >= 0 else view.recall
        cards = tuple(card for number, record in enumerate(earlier)
                      for card in _trick(record[1:5], record[0], record[5], group=number))
        zones.append(Zone("earlier tricks of this hand (full recall)", cards, note=count(len(earlier), "trick"),
                          width=19))
    return tuple(zones)


def _seat(view: RevolutionView, own: RevolutionView | None, seat: int) -> Seat:
    shown = [card_code(c) for c in own.hand] if own is not None else None
    stats = [("tricks", view.tricks_won[seat]), ("score", view.scores[seat])]
    if view.passed[seat]:
        stats.append(("this lead", "passed"))
    return Seat(seat_name(seat), (hand(shown, view.hand_sizes[seat], width=9.1),), tuple(stats),
                to_act=seat == view.current_player)


def status(view: RevolutionView) -> str:
    if view.over:
        return "game over: scores " + ", ".join(f"{seat_name(s)} {view.scores[s]}" for s in range(NUM_PLAYERS))
    who = seat_name(view.current_player)
    if view.phase != FOLLOW:
        return f"{who} {LEAD_WORDS[view.phase]}"
    if view.trump_suit >= 0:
        return f"{who} follows: any card (trump is {_suit(view.trump_suit)})"
    return f"{who} follows: {_suit(view.led_suit)} if possible"
