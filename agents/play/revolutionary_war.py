"""Revolutionary War at the table: the board and the log, from views only (spec section 7).

Public: the trump stack, the played sequence and who played each card, both score piles, hand
sizes, the deck size. Private: the viewer's own hand. Nothing here reads a state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.play.layout import board as make_board
from agents.play.layout import card, cards, hidden_hand, seat_name, seat_panel, zone
from card_envs.cards import RANK_VALUE, card_code, card_codes, rank_name
from card_envs.revolutionary_war.picture import status
from card_envs.revolutionary_war.rules import CONCEDE, RevolutionaryWarView

TITLE = "Revolutionary War"


def _by_rank(hand: Sequence[int]) -> list[str]:
    return card_codes(sorted(hand, key=lambda c: (RANK_VALUE[c], c)))


def _who_played(view: RevolutionaryWarView, index: int) -> int:
    """The leader plays cards 0, 2, 4, ... of the round; the other player 1, 3, ..."""
    return view.leader if index % 2 == 0 else 1 - view.leader


def board(game, views: Mapping[int, RevolutionaryWarView], names: Sequence[str], you: int | None) -> dict:
    view = next(iter(views.values()))  # every view shows the same public table
    trump = rank_name(RANK_VALUE[view.trump_stack[0]]) if view.trump_stack else "-"
    info = [("active trump", trump), ("draw deck", view.deck_size), ("dealer", seat_name(view.dealer))]
    if view.last_capturer >= 0:
        info.append(("last round captured by", seat_name(view.last_capturer)))
    if view.target_score is not None:
        info[:0] = [("game", view.game_number), ("match", f"{view.totals[0]}-{view.totals[1]} "
                                                          f"(target {view.target_score})")]
    stack = [card(code, "trump" if i == 0 else None, highlight=i == 0)
             for i, code in enumerate(card_codes(view.trump_stack))]
    played = [card(card_code(c), seat_name(_who_played(view, i)), highlight=i == len(view.played) - 1)
              for i, c in enumerate(view.played)]
    center = [zone("trump stack", stack, note="active trump first; new trumps join the bottom"),
              zone("draw deck", pile=view.deck_size, note=f"{view.deck_size} cards"),
              zone("played this round", played,
                   note=f"led by {seat_name(view.leader)}" if view.leader >= 0 else "")]
    if view.removed:
        center.append(zone("removed (count for nobody)", cards(card_codes(view.removed))))
    seats = []
    for seat in (0, 1):
        hand = (zone("hand", cards(_by_rank(views[seat].hand))) if seat in views
                else hidden_hand(view.hand_sizes[seat]))
        pile = zone("score pile", cards(card_codes(view.score_piles[seat])), spread="stack",
                    note=f"{len(view.score_piles[seat])} cards")
        stats = [("hand", view.hand_sizes[seat]), ("score", len(view.score_piles[seat]))]
        if view.target_score is not None:
            stats.append(("match total", view.totals[seat]))
        seats.append(seat_panel(seat, names[seat], to_act=seat == view.current_player, you=seat == you,
                                stats=stats, zones=[hand, pile]))
    return make_board(TITLE, info=info, status=status(view), seats=seats, center=center)


def narrate(game, before: RevolutionaryWarView, after: RevolutionaryWarView, actor: int, action: int,
            reveal: bool) -> list[str]:
    """What happened, in words, from what ``before``/``after`` (the same seat's views) show."""
    who = seat_name(actor)
    if action != CONCEDE:
        line = f"{who} plays {card_code(after.played[-1])}"
        if before.deck_size:
            drawn = set(after.hand) - set(before.hand) if actor == after.player else set()
            line += f" and draws {card_code(drawn.pop())}" if drawn else " and draws a card"
        return [line]
    capturer = 1 - actor
    captured = [*before.played, before.trump_stack[0]]
    lines = [f"{who} concedes: {seat_name(capturer)} captures {len(captured)} cards "
             f"({' '.join(card_codes(captured))})"]
    new_game = after.game_number != before.game_number
    if new_game or after.over:
        if before.deck_size == 0 and len(before.trump_stack) == 1:
            lines.append("the trump stack is empty: the cards left in hand go to their holders' score piles")
        if new_game:
            totals = f"{after.totals[0]}-{after.totals[1]}"
            lines.append(f"game {before.game_number} over; match totals {totals}; game {after.game_number} dealt, "
                         f"{seat_name(after.dealer)} deals, {seat_name(after.leader)} leads")
        return lines
    if before.deck_size:
        lines.append(f"{card_code(after.trump_stack[-1])} joins the bottom of the trump stack")
    if after.trump_stack:
        lines.append(f"active trump now {rank_name(RANK_VALUE[after.trump_stack[0]])}; "
                     f"{seat_name(after.leader)} leads")
    return lines


def opening(game, view: RevolutionaryWarView) -> list[str]:
    trump = rank_name(RANK_VALUE[view.trump_stack[0]])
    return [f"{seat_name(view.dealer)} deals; trump stack {' '.join(card_codes(view.trump_stack))} "
            f"(active trump {trump}); {seat_name(view.leader)} leads"]


def result(game, view: RevolutionaryWarView, winners: Sequence[int], truncated: bool) -> str:
    scores = f"{len(view.score_piles[0])}-{len(view.score_piles[1])}"
    if view.target_score is not None:
        scores = f"match {view.totals[0]}-{view.totals[1]}, last game {scores}"
    if truncated:
        return f"no result (stopped at the step limit); cards captured {scores}"
    return f"{seat_name(winners[0])} wins, {scores}"
