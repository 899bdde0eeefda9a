"""Rule-based Revolutionary War players (spec section 11), weakest first.

All read only the player's view (``RevolutionaryWarView``): own hand, the public stack, the
played sequence, score piles and sizes. Ranks, not suits, matter after the deal.

================  ===========================================================================
name              play
================  ===========================================================================
``cheapest``      baseline 2: lead the weakest card, answer with the weakest beating card,
                  never concede while able to play
``pot``           baselines 3+4: weighs the pot against the future value of the card spent
                  (its strength under the next visible trumps), and the chance that the
                  opponent can beat it (hypergeometric over the unseen ranks)
``endgame``       ``pot`` until the draw deck is empty, then exact minimax over the now
                  perfect-information endgame (baseline 5), with R13/R14 and the tie-break
================  ===========================================================================
"""

from __future__ import annotations

import math
from functools import cache
from math import comb

from agents.players.base import Agent, Decision
from card_envs.cards import RANK_VALUE
from card_envs.revolutionary_war.rules import CONCEDE, STRENGTH, RevolutionaryWarView


def _trump(view: RevolutionaryWarView) -> int:
    return RANK_VALUE[view.trump_stack[0]]


def _unseen_ranks(view: RevolutionaryWarView) -> list[int]:
    """Count per rank value (index 1..13) of cards in the draw deck or the opponent's hand (section 7)."""
    unseen = [0] + [4] * 13
    for zone in (view.hand, view.trump_stack, view.played, view.score_piles[0], view.score_piles[1], view.removed):
        for card in zone:
            unseen[RANK_VALUE[card]] -= 1
    return unseen


class CheapestContest(Agent):
    """Spec 11.2: always contest with the weakest card that is legal."""

    name = "heuristic:cheapest"

    def act(self, decision: Decision) -> int:
        plays = [a for a in decision.legal_actions if a != CONCEDE]
        if not plays:
            return CONCEDE
        row = STRENGTH[_trump(decision.view)]
        return min(plays, key=lambda a: row[a + 1])


class PotVersusCost(Agent):
    """Spec 11.3 + 11.4: spend the card that is cheapest now *and* later; decline only hopeless pots.

    A card's *keep value* is its mean strength (0..1) under the next two visible trumps and a
    random later trump. Among the legal plays it picks the lowest
    ``strength now / 12 + future_weight * keep value`` (the weakest card that is also least useful
    for the coming rounds), so the opponent must escalate while good cards are kept. It concedes
    only when the pot is small, the card is precious and the opponent almost surely beats it:
    ``p_beaten * cost > pot / cost_weight`` with ``p_beaten`` hypergeometric over the unseen cards.
    """

    name = "heuristic:pot"
    future_weight = 2.0
    cost_weight = 4.0

    def act(self, decision: Decision) -> int:
        view = decision.view
        plays = [a for a in decision.legal_actions if a != CONCEDE]
        if not plays:
            return CONCEDE
        row = STRENGTH[_trump(view)]
        keep = _keep_values(tuple(RANK_VALUE[c] for c in view.trump_stack[1:3]))
        action = min(plays, key=lambda a: row[a + 1] / 12 + self.future_weight * keep[a + 1])
        rank = action + 1
        unseen = _unseen_ranks(view)
        beaters = sum(unseen[r] for r in range(1, 14) if row[r] >= row[rank])
        p_beaten = _chance_to_hold(sum(unseen), beaters, view.hand_sizes[1 - view.player])
        pot = len(view.played) + 1
        refill = _mean_keep_value(keep, unseen) if view.deck_size else 0.0
        cost = max(keep[rank] - refill, 0.0)
        return CONCEDE if p_beaten * cost * self.cost_weight > pot else action


def _mean_keep_value(keep: tuple[float, ...], unseen: list[int]) -> float:
    """Mean keep value of the unseen cards (what a card drawn next is worth later)."""
    total = sum(unseen)
    if not total:
        return 0.0
    return sum(unseen[r] * keep[r] for r in range(1, 14)) / total


@cache
def _keep_values(upcoming: tuple[int, ...]) -> tuple[float, ...]:
    """Keep value of every rank (index 1..13) under the next visible trumps ``upcoming`` (0 to 2 of them)."""
    values = [0.0]
    for rank in range(1, 14):
        strengths = [STRENGTH[t][rank] / 12 for t in upcoming] + [0.5]  # 0.5: mean strength under a random trump
        values.append(sum(strengths) / len(strengths))
    return tuple(values)


def _chance_to_hold(pool: int, good: int, drawn: int) -> float:
    """P(at least one of ``drawn`` cards taken from ``pool`` is among ``good``)."""
    if drawn <= 0 or good <= 0:
        return 0.0
    if pool - good < drawn:
        return 1.0
    return 1.0 - comb(pool - good, drawn) / comb(pool, drawn)


class ExactEndgame(PotVersusCost):
    """Spec 11.5: ``pot`` while the deck lasts, then exact minimax (the opponent's hand is known)."""

    name = "heuristic:endgame"

    def act(self, decision: Decision) -> int:
        view = decision.view
        if view.deck_size or len(decision.legal_actions) == 1:
            return super().act(decision)
        return best_endgame_move(decision.legal_actions, *endgame_position(view))


def endgame_position(view: RevolutionaryWarView) -> tuple[tuple, tuple, tuple, int, int, int]:
    """The solver's arguments once the deck is empty (the opponent's hand = the unseen ranks):
    (own ranks, opponent ranks, stack ranks, last played rank or 0, cards played this round, score difference)."""
    me = view.player
    unseen = _unseen_ranks(view)
    opponent = tuple(r for r in range(1, 14) for _ in range(unseen[r]))
    mine = tuple(sorted(RANK_VALUE[c] for c in view.hand))
    stack = tuple(RANK_VALUE[c] for c in view.trump_stack)
    last = RANK_VALUE[view.played[-1]] if view.played else 0
    diff = len(view.score_piles[me]) - len(view.score_piles[1 - me])
    return mine, opponent, stack, last, len(view.played), diff


def _after(action: int, mover: tuple, other: tuple, stack: tuple, last: int, pot: int, diff: int) -> float:
    """Final value for the player making ``action`` (the mover): score difference, +-0.5 on a tie (R16).
    ``last`` is part of the position only to bound which actions are legal; it does not change a legal one's value."""
    return final_value(diff, _outcome_of(action, mover, other, stack, pot, -math.inf, math.inf))


def _outcome_of(action: int, mover: tuple, other: tuple, stack: tuple, pot: int, alpha: float, beta: float) -> float:
    """The mover's outcome (see :func:`final_value`) after ``action``, searched in the window (alpha, beta)."""
    if action == CONCEDE:
        return -_round_over(other, mover, stack, pot, -beta, -alpha)
    index = mover.index(action + 1)
    return -_endgame(other, mover[:index] + mover[index + 1:], stack, action + 1, pot + 1, -beta, -alpha)


def final_value(diff: int, outcome: float) -> float:
    """The mover's final value from the score difference now and the solver's ``outcome``.

    The solver leaves the score difference out of its positions (so one position is solved once,
    whatever the score): an outcome is ``2 * gain + 0.5`` if the mover takes the last round and
    ``2 * gain - 0.5`` if not, ``gain`` being what the rest of the game adds to the mover's score
    difference. This order (gain first, then the last round) is the order of the final values for
    any current difference, and the negamax negation holds (the other side's outcome is
    ``-outcome``), so the best line does not depend on ``diff``. The final value is the final
    difference, or +-0.5 for the R16 tie-break when it is 0.
    """
    gain = round(outcome / 2)
    final = diff + gain
    return float(final) if final else (0.5 if outcome > 2 * gain else -0.5)


def best_endgame_move(legal: list[int], mover: tuple, other: tuple, stack: tuple, last: int, pot: int,
                      diff: int) -> int:
    """The first of ``legal`` with the highest :func:`_after` value, found by alpha-beta search.

    The same move as ``max(legal, key=lambda a: _after(a, ...))``: each later move only has to be
    shown better than the best so far, i.e. its outcome above the highest outcome whose final value
    is not better (:func:`_not_better_than`), so most of the tree is cut off.
    """
    best_action, threshold = legal[0], -math.inf
    for action in legal:
        outcome = _outcome_of(action, mover, other, stack, pot, threshold, math.inf)
        if outcome > threshold:
            best_action, threshold = action, _not_better_than(diff, outcome)
    return best_action


def _not_better_than(diff: int, outcome: float) -> float:
    """The highest outcome whose final value (:func:`final_value`) is at most that of ``outcome``."""
    gain = round(outcome / 2)
    if diff + gain == 0 and outcome < 2 * gain:
        return outcome  # a tie lost on the last round: winning the last round instead is better
    return 2 * gain + 0.5  # same final difference: which side takes the last round changes nothing


#: transposition table: position -> (lower bound, upper bound) of its outcome
_BOUNDS: dict[tuple, tuple[float, float]] = {}
_BOUNDS_LIMIT = 500_000


def _round_over(capturer: tuple, loser: tuple, stack: tuple, pot: int, alpha: float, beta: float) -> float:
    """Outcome for the capturer once the loser conceded (R9-R16, deck empty so no refill), in a window."""
    gain = pot + 1
    stack = stack[1:]
    if not stack or not (capturer or loser):  # R11
        if not stack:
            gain += len(capturer) - len(loser)  # R13
        return 2 * gain + 0.5  # R16: the capturer took the last round
    return 2 * gain + _endgame(capturer, loser, stack, 0, 0, alpha - 2 * gain, beta - 2 * gain)


def _endgame(mover: tuple, other: tuple, stack: tuple, last: int, pot: int, alpha: float, beta: float) -> float:
    """Fail-soft negamax alpha-beta: the outcome (see :func:`final_value`) for ``mover`` to act, exact when it
    falls inside (alpha, beta), else a bound beyond the window (``mover``/``other``: sorted rank values)."""
    key = (mover, other, stack, last, pot)
    lower, upper = _BOUNDS.get(key, (-math.inf, math.inf))
    if lower >= beta or lower == upper:
        return lower
    if upper <= alpha:
        return upper
    alpha, beta = max(alpha, lower), min(beta, upper)
    start_alpha = alpha
    row = STRENGTH[stack[0]]
    best = -_round_over(other, mover, stack, pot, -beta, -alpha)
    if best < beta:
        alpha = max(alpha, best)
        floor = row[last] if pot else -1
        previous = -1
        for index, rank in enumerate(mover):
            if rank != previous and row[rank] >= floor:
                value = -_endgame(other, mover[:index] + mover[index + 1:], stack, rank, pot + 1, -beta, -alpha)
                if value > best:
                    best = value
                    if best >= beta:
                        break
                    alpha = max(alpha, best)
            previous = rank
    if len(_BOUNDS) >= _BOUNDS_LIMIT:
        _BOUNDS.clear()
    if best <= start_alpha:
        _BOUNDS[key] = (lower, min(upper, best))
    elif best >= beta:
        _BOUNDS[key] = (max(lower, best), upper)
    else:
        _BOUNDS[key] = (best, best)
    return best


AGENTS = {"cheapest": CheapestContest, "pot": PotVersusCost, "endgame": ExactEndgame}
STRONGEST = "endgame"
