"""Revolution at the table: the board and the log, from views only (spec section 7).

Public: the current trick and who played each card, the previous trick, the designated leader and
the passes of this lead, tricks won, scores, the dealer. Private: the viewer's holding. Without
``full_recall`` the views forget tricks before the previous one (7.3); the log keeps what the
viewer saw happen, as a player at the table would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.play.layout import board as make_board
from agents.play.layout import card, cards, hidden_hand, seat_name, seat_panel, zone
from card_envs.revolution.picture import status
from card_envs.revolution.rules import (
    DESIGNATED,
    FOLLOW,
    NUM_PLAYERS,
    PASS,
    RevolutionView,
    card_code,
)

TITLE = "Revolution"
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")


def _suit(suit: int) -> str:
    return SUIT_WORDS[suit] if suit >= 0 else "none"


def _trick_zone(label: str, trick: Sequence[int], leader: int, winner: int = -1, note: str = "") -> dict:
    order = [(leader + k) % NUM_PLAYERS for k in range(NUM_PLAYERS)] if leader >= 0 else range(NUM_PLAYERS)
    shown = [card(card_code(trick[seat]), seat_name(seat), highlight=seat == winner) for seat in order
             if trick[seat] >= 0]
    return zone(label, shown, note=note)


def board(game, views: Mapping[int, RevolutionView], names: Sequence[str], you: int | None) -> dict:
    view = next(iter(views.values()))
    hand = f"{view.hand_number} of {view.num_hands}" + (" (tie-break)" if view.is_tie_break else "")
    info = [("hand", hand), ("trick", view.trick_number), ("dealer", seat_name(view.dealer)),
            ("designated leader", seat_name(view.designated)), ("led suit", _suit(view.led_suit)),
            ("trump", _suit(view.trump_suit))]
    if view.prev_winning_card >= 0:
        top = card_code(view.prev_winning_card)[:-1]
        info.append(("designated lead", f"no {_suit(view.prev_led_suit)}, nothing above {top}"))
    center = [_trick_zone("current trick", view.trick, view.trick_leader,
                          note=f"led by {seat_name(view.trick_leader)}" if view.trick_leader >= 0 else "no lead yet")]
    if view.prev_leader >= 0:
        center.append(_trick_zone("previous trick", view.prev_trick, view.prev_leader, view.prev_winner,
                                  note=f"led by {seat_name(view.prev_leader)}, won by {seat_name(view.prev_winner)}; "
                                       f"trump {_suit(view.prev_trump_suit)}"))
    for number, record in enumerate(view.recall[:-1] if view.prev_leader >= 0 else view.recall, start=1):
        leader, trick, winner = record[0], record[1:5], record[5]
        center.append(_trick_zone(f"trick {number}", trick, leader, winner, note=f"won by {seat_name(winner)}"))
    seats = []
    for seat in range(NUM_PLAYERS):
        hand_zone = (zone("hand", cards(card_code(c) for c in views[seat].hand)) if seat in views
                     else hidden_hand(view.hand_sizes[seat]))
        stats = [("tricks", view.tricks_won[seat]), ("score", view.scores[seat]), ("cards", view.hand_sizes[seat])]
        if view.passed[seat]:
            stats.append(("this lead", "passed"))
        if view.passes_this_hand is not None:
            stats.append(("passes this hand", view.passes_this_hand[seat]))
        seats.append(seat_panel(seat, names[seat], to_act=seat == view.current_player, you=seat == you,
                                stats=stats, zones=[hand_zone]))
    return make_board(TITLE, info=info, status=status(view), seats=seats, center=center)


def narrate(game, before: RevolutionView, after: RevolutionView, actor: int, action: int, reveal: bool) -> list[str]:
    """Plays and passes are public (7.1)."""
    who = seat_name(actor)
    if action == PASS:
        return [f"{who} passes" + (" (yields the lead)" if before.phase == DESIGNATED else " (declines the lead)")]
    verb = "plays" if before.phase == FOLLOW else "leads"
    lines = [f"{who} {verb} {card_code(action)}"]
    same_trick = after.trick_number == before.trick_number and after.hand_number == before.hand_number
    if same_trick and after.trump_suit >= 0 and before.trump_suit < 0:
        lines.append(f"{_suit(after.trump_suit)} become trump for this trick")
    if same_trick:
        return lines
    if after.hand_number == before.hand_number:
        lines.append(f"{seat_name(after.prev_winner)} wins trick {before.trick_number} and leads next")
        return lines
    gained = [after.scores[s] - before.scores[s] - before.tricks_won[s] for s in range(NUM_PLAYERS)]
    winner = gained.index(1) if 1 in gained else -1
    if winner >= 0:
        lines.append(f"{seat_name(winner)} wins trick {before.trick_number}, its fourth: "
                     f"hand {before.hand_number} over")
    scores = ", ".join(f"{seat_name(s)} {after.scores[s]}" for s in range(NUM_PLAYERS))
    lines.append(f"scores: {scores}")
    if not after.over:
        lines.append(f"hand {after.hand_number} dealt by {seat_name(after.dealer)}; "
                     f"{seat_name(after.designated)} holds the A♠")
    return lines


def opening(game, view: RevolutionView) -> list[str]:
    return [f"hand {view.hand_number} dealt by {seat_name(view.dealer)}; {seat_name(view.designated)} holds the A♠"]


def result(game, view: RevolutionView, winners: Sequence[int], truncated: bool) -> str:
    scores = ", ".join(f"{seat_name(s)} {view.scores[s]}" for s in range(NUM_PLAYERS))
    if truncated:
        tricks = ", ".join(f"{seat_name(s)} {view.scores[s] + view.tricks_won[s]}" for s in range(NUM_PLAYERS))
        scores = f"{tricks} (stopped at the step limit; this hand's tricks counted)"
    if len(winners) == 1:
        return f"{seat_name(winners[0])} wins; scores {scores}"
    if 1 < len(winners) < NUM_PLAYERS:
        return f"shared win: {', '.join(seat_name(w) for w in winners)}; scores {scores}"
    return f"draw; scores {scores}"

