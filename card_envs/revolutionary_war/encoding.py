"""Revolutionary War observation and action layouts (spec sections 7 and 8, extended).

Observation of player ``i`` (opponent ``j``): 157 float32 entries. Rank blocks use A=0 .. K=12;
strength blocks use ``s`` = 0 (the rank just above the active trump) .. 12 (the trump's rank).
Every entry lies in [0, 1] unless its row gives another range (``observation_bounds``; ``T`` =
``target_score``).

=========  ==================================================================================
index      content
=========  ==================================================================================
0-12       own hand: count of each rank (0-4)
13-25      active trump rank, one-hot (all 0 once the stack is empty)
26-38      trump stack position 2 rank, one-hot (0 if absent)
39-51      trump stack position 3 rank, one-hot (0 if absent)
52-64      last card played this round, rank one-hot (0 if none yet)
65-77      current played sequence: count of each rank (0-4)
78-90      own score pile: count of each rank (0-4)
91-103     opponent score pile: count of each rank (0-4)
104-116    unseen ranks (draw deck + opponent hand): count of each rank (0-4)
117        draw deck size / 39
118, 119   own / opponent hand size / 5
120, 121   own / opponent score pile size / 52
122        1 if ``i`` leads the current round
123        1 if no card has been played yet this round (the leader's opening decision)
124        1 if ``i`` is the dealer
125, 126   1 if the last round was captured by ``i`` / by ``j`` (both 0 before round 1 ends)
127        1 if match mode
128, 129   own / opponent match total from finished games / ``target_score`` (0 if single game;
           0 .. (T + 51) / T: the last game may carry a total past the target)
130-142    own hand: count of each *strength* under the active trump, 0-4 (added: the legal set
           is "strength >= last", so this block makes it a threshold instead of a cyclic pattern)
143-155    last card played, strength one-hot (added, same reason)
156        1 if it is ``i``'s turn (added: observe() is valid for every agent at every step)
=========  ==================================================================================

Indices 0-129 are exactly the spec's proposed vector; 130-156 are derived from it.

Actions (``Discrete(14)``): ``a`` = 0..12 is ``play <rank>`` for rank value ``a + 1``
(``play A``, ``play 2`` .. ``play 10``, ``play J``, ``play Q``, ``play K``); 13 is ``concede``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.cards import RANK_VALUE
from card_envs.core.engine import unit_bounds
from card_envs.revolutionary_war.rules import ACTION_NAMES, STRENGTH, RevolutionaryWarView

OBSERVATION_SIZE = 157

#: (start, stop, meaning) of every block, checked against the docstring and the space by the tests
LAYOUT: tuple[tuple[int, int, str], ...] = (
    (0, 13, "own hand rank counts"),
    (13, 26, "active trump rank"),
    (26, 39, "trump stack position 2 rank"),
    (39, 52, "trump stack position 3 rank"),
    (52, 65, "last played rank"),
    (65, 78, "played sequence rank counts"),
    (78, 91, "own score pile rank counts"),
    (91, 104, "opponent score pile rank counts"),
    (104, 117, "unseen rank counts"),
    (117, 118, "draw deck size"),
    (118, 120, "hand sizes"),
    (120, 122, "score pile sizes"),
    (122, 123, "is leader"),
    (123, 124, "opening decision"),
    (124, 125, "is dealer"),
    (125, 127, "last capturer"),
    (127, 128, "match mode"),
    (128, 130, "match totals"),
    (130, 143, "own hand strength counts"),
    (143, 156, "last played strength"),
    (156, 157, "my turn"),
)

_RANK = tuple(v - 1 for v in RANK_VALUE)  # card id -> rank index A=0 .. K=12

__all__ = ["ACTION_NAMES", "LAYOUT", "OBSERVATION_SIZE", "encode", "observation_bounds"]


def observation_bounds(config: Any) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of every entry under ``config`` (the ranges of the module table)."""
    counts = [(0, 13, 4.0), (65, 117, 4.0), (130, 143, 4.0)]  # a rank has four cards
    target = config.target_score
    # a total is at most T - 1 before the match's last game, which scores at most the 52 cards
    totals = [(128, 130, (target + 51) / target)] if target is not None else []
    return unit_bounds(OBSERVATION_SIZE, counts + totals)


def encode(view: RevolutionaryWarView) -> np.ndarray:
    """The observation vector of ``view`` (see the module table)."""
    obs = [0.0] * OBSERVATION_SIZE
    me = view.player
    opp = 1 - me
    unseen = [4] * 13
    trump = RANK_VALUE[view.trump_stack[0]] if view.trump_stack else 0
    strength = STRENGTH[trump]
    for card in view.hand:
        r = _RANK[card]
        obs[r] += 1.0
        unseen[r] -= 1
        if trump:
            obs[130 + strength[r + 1]] += 1.0
    for position, card in enumerate(view.trump_stack):
        r = _RANK[card]
        obs[13 + 13 * position + r] = 1.0
        unseen[r] -= 1
    for card in view.played:
        r = _RANK[card]
        obs[65 + r] += 1.0
        unseen[r] -= 1
    if view.played:
        r = _RANK[view.played[-1]]
        obs[52 + r] = 1.0
        if trump:
            obs[143 + strength[r + 1]] = 1.0
    for base, pile in ((78, view.score_piles[me]), (91, view.score_piles[opp])):
        for card in pile:
            r = _RANK[card]
            obs[base + r] += 1.0
            unseen[r] -= 1
    for card in view.removed:
        unseen[_RANK[card]] -= 1
    obs[104:117] = unseen
    obs[117] = view.deck_size / 39
    obs[118] = view.hand_sizes[me] / 5
    obs[119] = view.hand_sizes[opp] / 5
    obs[120] = len(view.score_piles[me]) / 52
    obs[121] = len(view.score_piles[opp]) / 52
    obs[122] = float(view.leader == me)
    obs[123] = float(not view.over and not view.played)
    obs[124] = float(view.dealer == me)
    if view.last_capturer >= 0:
        obs[125 + (view.last_capturer != me)] = 1.0
    if view.target_score is not None:
        obs[127] = 1.0
        obs[128] = view.totals[me] / view.target_score
        obs[129] = view.totals[opp] / view.target_score
    obs[156] = float(view.current_player == me)
    return np.array(obs, dtype=np.float32)
