"""Revolution observation and action layouts (spec sections 7.4 and 8).

The observation of player ``me`` is float32. Seats are *relative*: ``r = (seat - me) mod 4``,
so 0 = me, 1 = my left neighbour (plays after me), 2 = opposite, 3 = my right neighbour.
Card planes are indexed by the card index ``idx = 13 * suit + rank value`` (``2C`` = 0 ..
``AS`` = 51, suits C D H S, ranks 2 .. A). Suit one-hots are C, D, H, S. Everything is zero
where the thing does not exist (no previous trick on trick 1, no led suit before the lead, no
acting player once the episode is over).

Every entry lies in [0, 1] unless its row gives another range (``observation_bounds``; ``H`` =
``num_hands``, ``X`` = ``max_extra_hands``).

Default observation (``full_recall = False``): 541 entries, exactly the spec's proposal.

=========  ==================================================================================
index      content
=========  ==================================================================================
0-51       my holding (one bit per card)
52-259     current trick: card played by relative seat ``r`` at ``52 + 52 r + idx``
260-263    current trick leader ``T``, relative one-hot (zeros before the lead)
264-267    designated leader ``D``, relative one-hot
268-271    seats that passed in this trick's lead phase, relative flags
272-276    phase one-hot: opening lead, designated lead, offered lead, forced lead, follow
277-280    acting player, relative one-hot
281-284    led suit ``LS`` one-hot
285-288    trump suit ``TS`` one-hot (zeros while not fixed)
289-292    previous-led suit ``PL`` one-hot
293-305    rank of the previous winning card ``PW``, one-hot over 2 .. A
306-513    previous trick: card played by relative seat ``r`` at ``306 + 52 r + idx``
514-517    previous trick leader, relative one-hot
518-521    previous trick winner, relative one-hot
522-525    previous trick trump suit one-hot
526-529    tricks won this hand by relative seat, / 4
530-533    cumulative scores (finished hands) by relative seat, / (4 ``num_hands``): 0 .. (H + X) / H
534        trick number: (t - 1) / 12
535-538    dealer, relative one-hot
539        hands completed / ``num_hands``: 0 .. (H + X) / H (tie-break hands)
540        1 during a tie-break hand
=========  ==================================================================================

With ``full_recall = True``: 753 entries, the 541 above followed by

=========  ==================================================================================
index      content
=========  ==================================================================================
541-748    cards played in the completed tricks of this hand (previous trick included), by
           relative seat ``r`` at ``541 + 52 r + idx``
749-752    passes (yields and declines) made this hand by relative seat, / 13
=========  ==================================================================================

With ``void_inferences = True`` (which needs ``full_recall``): 909 entries, the 753 above followed by
what the completed and current tricks prove about each opponent's holding (spec 7.3: a follower who
played off the led suit before trump was fixed is void in it; one who played a card of the previous
led suit then holds nothing else), as the cards each may still hold: cards the viewer has not seen,
minus the suits a void or wall rules out (and ``AS`` for all but its known holder on trick 1)

=========  ==================================================================================
index      content
=========  ==================================================================================
753-804    cards the left neighbour (relative seat 1) may hold, by card index
805-856    cards the opposite seat (relative seat 2) may hold
857-908    cards the right neighbour (relative seat 3) may hold
=========  ==================================================================================

Actions (``Discrete(53)``): ``a`` = 0..51 is ``play <card>`` for card index ``a`` (``play 2C``
.. ``play AS``; a lead or a follow), 52 is ``pass`` (yield or decline).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.engine import unit_bounds
from card_envs.core.errors import ConfigError
from card_envs.revolution.rules import ACTION_NAMES, OVER, RANK_OF, RevolutionView, possible_holdings

OBSERVATION_SIZE = 541
RECALL_OBSERVATION_SIZE = 753
INFERENCE_OBSERVATION_SIZE = 909

#: (start, stop, meaning) of every block of the default observation
LAYOUT: tuple[tuple[int, int, str], ...] = (
    (0, 52, "my holding"),
    (52, 260, "current trick cards by relative seat"),
    (260, 264, "current trick leader"),
    (264, 268, "designated leader"),
    (268, 272, "passed this lead phase"),
    (272, 277, "phase"),
    (277, 281, "acting player"),
    (281, 285, "led suit"),
    (285, 289, "trump suit"),
    (289, 293, "previous-led suit"),
    (293, 306, "previous winning card rank"),
    (306, 514, "previous trick cards by relative seat"),
    (514, 518, "previous trick leader"),
    (518, 522, "previous trick winner"),
    (522, 526, "previous trick trump suit"),
    (526, 530, "tricks won this hand"),
    (530, 534, "cumulative scores"),
    (534, 535, "trick number"),
    (535, 539, "dealer"),
    (539, 540, "hands completed"),
    (540, 541, "tie-break hand"),
)
#: (start, stop, meaning) of every block of the ``full_recall`` observation
RECALL_LAYOUT: tuple[tuple[int, int, str], ...] = LAYOUT + (
    (541, 749, "cards played this hand by relative seat"),
    (749, 753, "passes this hand"),
)
#: (start, stop, meaning) of every block of the ``void_inferences`` observation
INFERENCE_LAYOUT: tuple[tuple[int, int, str], ...] = RECALL_LAYOUT + (
    (753, 805, "cards the left neighbour may hold"),
    (805, 857, "cards the opposite seat may hold"),
    (857, 909, "cards the right neighbour may hold"),
)

__all__ = ["ACTION_NAMES", "INFERENCE_LAYOUT", "INFERENCE_OBSERVATION_SIZE", "LAYOUT", "OBSERVATION_SIZE",
           "RECALL_LAYOUT", "RECALL_OBSERVATION_SIZE", "encode", "encode_inferences", "encode_recall", "layout_for",
           "observation_bounds"]


def observation_bounds(config: Any) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of every entry under ``config`` (the ranges of the module tables)."""
    layout = layout_for(config.full_recall, config.void_inferences)
    # R15/R17: at most num_hands + max_extra_hands hands, each adding at most 4 tricks to a score
    hands = (config.num_hands + config.max_extra_hands) / config.num_hands
    return unit_bounds(layout[-1][1], [(530, 534, hands), (539, 540, hands)])


def layout_for(full_recall: bool, void_inferences: bool = False) -> tuple[tuple[int, int, str], ...]:
    """The layout of the observation under a configuration."""
    if void_inferences:
        return INFERENCE_LAYOUT
    return RECALL_LAYOUT if full_recall else LAYOUT


def encode(view: RevolutionView) -> np.ndarray:
    """The default observation of ``view`` (541 entries, see the module table)."""
    obs = np.zeros(OBSERVATION_SIZE, np.float32)
    _fill(obs, view)
    return obs


def encode_recall(view: RevolutionView) -> np.ndarray:
    """The ``full_recall`` observation of ``view`` (753 entries, see the module table)."""
    obs = np.zeros(RECALL_OBSERVATION_SIZE, np.float32)
    _fill_recall(obs, view)
    return obs


def encode_inferences(view: RevolutionView) -> np.ndarray:
    """The ``void_inferences`` observation of ``view`` (909 entries, see the module table)."""
    obs = np.zeros(INFERENCE_OBSERVATION_SIZE, np.float32)
    _fill_recall(obs, view)
    possible = possible_holdings(view)
    for r in range(1, 4):
        obs[753 + 52 * (r - 1):753 + 52 * r] = (np.int64(possible[(view.player + r) & 3]) >> _BIT_SHIFTS) & 1
    return obs


_BIT_SHIFTS = np.arange(52, dtype=np.int64)


def _fill_recall(obs: np.ndarray, view: RevolutionView) -> None:
    _fill(obs, view)
    me = view.player
    ones = []
    for record in view.recall:
        for seat in range(4):
            ones.append(541 + 52 * ((seat - me) & 3) + record[1 + seat])
    if ones:
        obs[ones] = 1.0
    passes = view.passes_this_hand
    if passes is None:
        raise ConfigError("the full_recall observations read a view of a game made with full_recall=True (this "
                          "view has no passes_this_hand)")
    for seat in range(4):
        if passes[seat]:
            obs[749 + ((seat - me) & 3)] = passes[seat] / 13


def _fill(obs: np.ndarray, view: RevolutionView) -> None:
    me = view.player
    ones = list(view.hand)
    trick = view.trick
    prev = view.prev_trick
    passed = view.passed
    for seat in range(4):
        r = (seat - me) & 3
        if trick[seat] >= 0:
            ones.append(52 + 52 * r + trick[seat])
        if prev[seat] >= 0:
            ones.append(306 + 52 * r + prev[seat])
        if passed[seat]:
            ones.append(268 + r)
    if view.trick_leader >= 0:
        ones.append(260 + ((view.trick_leader - me) & 3))
    if not view.over:
        ones.append(264 + ((view.designated - me) & 3))
        ones.append(272 + view.phase)
        ones.append(277 + ((view.current_player - me) & 3))
    if view.led_suit >= 0:
        ones.append(281 + view.led_suit)
    if view.trump_suit >= 0:
        ones.append(285 + view.trump_suit)
    if view.prev_leader >= 0:
        ones.append(289 + view.prev_led_suit)
        ones.append(293 + RANK_OF[view.prev_winning_card])
        ones.append(514 + ((view.prev_leader - me) & 3))
        ones.append(518 + ((view.prev_winner - me) & 3))
        if view.prev_trump_suit >= 0:
            ones.append(522 + view.prev_trump_suit)
    ones.append(535 + ((view.dealer - me) & 3))
    obs[ones] = 1.0
    won = view.tricks_won
    scores = view.scores
    scale = 4 * view.num_hands
    for seat in range(4):
        r = (seat - me) & 3
        if won[seat]:
            obs[526 + r] = won[seat] / 4
        if scores[seat]:
            obs[530 + r] = scores[seat] / scale
    obs[534] = (view.trick_number - 1) / 12
    completed = view.hand_number - 1 + (view.phase == OVER and not _truncated_mid_hand(view))
    obs[539] = completed / view.num_hands
    obs[540] = float(view.hand_number > view.num_hands)


def _truncated_mid_hand(view: RevolutionView) -> bool:
    """Once over: True unless the last hand was finished (somebody reached 4 tricks)."""
    return max(view.tricks_won) < 4

