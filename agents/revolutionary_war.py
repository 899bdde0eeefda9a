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

from functools import lru_cache
from math import comb

from agents.base import Agent, Decision
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
        action = min(plays, key=lambda a: row[a + 1] / 12 + self.future_weight * self._keep_value(view, a + 1))
        rank = action + 1
        unseen = _unseen_ranks(view)
        beaters = sum(unseen[r] for r in range(1, 14) if row[r] >= row[rank])
        p_beaten = _chance_to_hold(sum(unseen), beaters, view.hand_sizes[1 - view.player])
        pot = len(view.played) + 1
        refill = self._mean_keep_value(view, unseen) if view.deck_size else 0.0
        cost = max(self._keep_value(view, rank) - refill, 0.0)
        return CONCEDE if p_beaten * cost * self.cost_weight > pot else action

    @staticmethod
    def _keep_value(view: RevolutionaryWarView, rank: int) -> float:
        upcoming = [RANK_VALUE[c] for c in view.trump_stack[1:3]]
        values = [STRENGTH[t][rank] / 12 for t in upcoming] + [0.5]  # 0.5: mean strength under a random trump
        return sum(values) / len(values)

    def _mean_keep_value(self, view: RevolutionaryWarView, unseen: list[int]) -> float:
        total = sum(unseen)
        if not total:
            return 0.0
        return sum(unseen[r] * self._keep_value(view, r) for r in range(1, 14)) / total


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
        position = endgame_position(view)
        return max(decision.legal_actions, key=lambda action: _after(action, *position))


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
    """Final value for the player making ``action`` (the mover): score difference, +-0.5 on a tie."""
    if action == CONCEDE:
        return -_round_over(other, mover, stack, pot, -diff)
    hand = list(mover)
    hand.remove(action + 1)
    return -_endgame(other, tuple(hand), stack, action + 1, pot + 1, -diff)


def _round_over(capturer: tuple, loser: tuple, stack: tuple, pot: int, diff: int) -> float:
    """Value for the capturer once the loser conceded (R9-R16, deck empty so no refill)."""
    diff += pot + 1
    stack = stack[1:]
    if not stack or not (capturer or loser):  # R11
        if not stack:
            diff += len(capturer) - len(loser)  # R13
        return diff if diff else 0.5  # R16: the capturer took the last round
    return _endgame(capturer, loser, stack, 0, 0, diff)


@lru_cache(maxsize=200_000)
def _endgame(mover: tuple, other: tuple, stack: tuple, last: int, pot: int, diff: int) -> float:
    """Minimax value for ``mover`` to act (``mover``/``other``: sorted rank values; ``diff`` from the mover's side)."""
    row = STRENGTH[stack[0]]
    options = [-_round_over(other, mover, stack, pot, -diff)]
    floor = row[last] if pot else -1
    for rank in set(mover):
        if row[rank] >= floor:
            hand = list(mover)
            hand.remove(rank)
            options.append(-_endgame(other, tuple(hand), stack, rank, pot + 1, -diff))
    return max(options)


AGENTS = {"cheapest": CheapestContest, "pot": PotVersusCost, "endgame": ExactEndgame}
STRONGEST = "endgame"
