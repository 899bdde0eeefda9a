"""Revolutionary War's table for ``render_mode="rgb_array"``, from views only (spec section 7).

Center: the trump stack (active trump first, edged), the draw deck (a count), the cards played this
round (tagged with who played them) and the trump cards removed at the game's end. Each seat: its
hand (face up when its view is drawn, else backs) and its score pile (public).
"""

from __future__ import annotations

from collections.abc import Mapping

from card_envs.cards import RANK_VALUE, card_codes, rank_name
from card_envs.core.table import Card, Seat, Table, Zone, count, face_up, hand, pile, public_view, seat_name
from card_envs.revolutionary_war.rules import RevolutionaryWar, RevolutionaryWarView


def table(game: RevolutionaryWar, views: Mapping[int, RevolutionaryWarView]) -> Table:
    view = public_view(views)
    return Table("Revolutionary War", status(view), _info(view), _center(view),
                 tuple(_seat(view, views.get(seat), seat) for seat in (0, 1)),
                 viewer=None if len(views) > 1 else view.player)


def _info(view: RevolutionaryWarView) -> tuple[tuple[str, object], ...]:
    trump = rank_name(RANK_VALUE[view.trump_stack[0]]) if view.trump_stack else "-"
    info = [("active trump", trump), ("draw deck", view.deck_size), ("dealer", seat_name(view.dealer))]
    if view.target_score is not None:
        info[:0] = [("game", view.game_number), ("match", f"{view.totals[0]}-{view.totals[1]} "
                                                          f"of {view.target_score}")]
    return tuple(info)


def _center(view: RevolutionaryWarView) -> tuple[Zone, ...]:
    stack = tuple(Card(code, "trump" if i == 0 else "", highlight=i == 0)
                  for i, code in enumerate(card_codes(view.trump_stack)))
    played = tuple(Card(code, f"p{_who_played(view, i)}", highlight=i == len(view.played) - 1)
                   for i, code in enumerate(card_codes(view.played)))
    led = f"led by {seat_name(view.leader)}" if view.leader >= 0 else ""
    return (Zone("trump stack", stack, note="active trump first", width=5),
            pile("draw deck", view.deck_size),
            Zone("played this round", played, note=led, width=7),
            Zone("removed (count for nobody)", face_up(card_codes(view.removed)), width=3.6))


def _seat(view: RevolutionaryWarView, own: RevolutionaryWarView | None, seat: int) -> Seat:
    shown = card_codes(sorted(own.hand, key=lambda c: (RANK_VALUE[c], c))) if own is not None else None
    score_pile = view.score_piles[seat]
    zones = (hand(shown, view.hand_sizes[seat], width=5.6),
             Zone("score pile", face_up(card_codes(score_pile)), note=count(len(score_pile), "card"), width=13))
    stats = [("hand", view.hand_sizes[seat]), ("score", len(score_pile))]
    if view.target_score is not None:
        stats.append(("match total", view.totals[seat]))
    return Seat(seat_name(seat), zones, tuple(stats), to_act=seat == view.current_player)


def _who_played(view: RevolutionaryWarView, index: int) -> int:
    """The leader plays cards 0, 2, 4, ... of the round; the other player 1, 3, ..."""
    return view.leader if index % 2 == 0 else 1 - view.leader


def status(view: RevolutionaryWarView) -> str:
    if view.over:
        scores = f"{len(view.score_piles[0])}-{len(view.score_piles[1])}"
        return f"game over: cards captured {scores}"
    who = seat_name(view.current_player)
    if not view.played:
        return f"{who} leads the round: play any card, or concede"
    return f"{who} to beat {rank_name(RANK_VALUE[view.played[-1]])} under the trump, or concede"
