"""Bloodlines observation and action layouts (spec sections 7 and 8).

Observation of player ``i`` (opponent ``j``): 485 float32 entries. Card blocks use the
number-card index ``k = 9 s + rank - 2`` (2C = 0 .. 10C = 8, 2D = 9 .. 10D = 17, 2H = 18 ..
10H = 26, 2S = 27 .. 10S = 35); rank blocks use ``rank - 2`` (2 = 0 .. 10 = 8); royals J, Q, K
are 0, 1, 2. Every entry lies in [0, 1] unless its row gives another range (``observation_bounds``;
``L`` = ``hand_limit``).

=========  ==================================================================================
index      content
=========  ==================================================================================
0-3        own bloodline, one-hot (C, D, H, S)
4-7        opponent bloodline, one-hot
8-43       own hand, by ``k`` (1 if held)
44-46      own royals alive (J, Q, K)
47-49      opponent royals alive
50-76      own hearts: ``50 + 9 r + rank - 2`` is 1 if that heart lies under own royal ``r``
77-103     opponent hearts, same layout from 77
104-106    own royal defense / 63 (J, Q, K)
107-109    opponent royal defense / 63
110-190    own units: ``110 + 9 u + rank - 2`` is 1 if that spade is in own unit ``u`` (0-8)
191-271    opponent units, same layout from 191
272-280    own unit attack / 63 per unit slot (0 for an empty slot)
281-289    opponent unit attack / 63
290, 291   own / opponent jokers in play / 2
292, 293   own / opponent joker supply / 2
294-302    own pool, by diamond rank
303-311    opponent pool, by diamond rank
312, 313   own / opponent pool value / 63
314-349    own discard pile (number cards), by ``k``
350-385    opponent discard pile, by ``k``
386, 387   own / opponent jokers in the discard pile / 2
388, 389   own / opponent draw-pile size / 36
390, 391   own / opponent hand size / ``hand_limit``: 0 .. min(L + 10, 36) / L (a club's power
           draws up to 11 cards; the excess is discarded in ``DISCARD``)
392-395    phase, one-hot (``STEP1``, ``MAIN``, ``DISCARD``, ``DECOY``)
396        1 if ``i`` is the active player (the turn owner; the attacker during ``DECOY``)
397        discards owed / 10
398-400    pending ``DECOY``: the defender's threatened royal, one-hot (zeros if none)
401        1 if the pending ``DECOY`` follows a joker attack
402        turn number / ``max_turns`` (/ 200 if ``max_turns`` is None: 0 .. 461 / 200, R15)
403        idle-turn counter: 0-2 (2 only in the final observation: a stalemate, R15)
404        1 if ``allow_pass``
405        1 if ``unfinished_result == "royals"``
406-411    reserved (0)
412-447    own draw pile composition, by ``k`` (its order is hidden)
448-483    opponent unseen set U(O) = their hand and pile, by ``k``
484        1 if ``i`` is to decide now (the defender during ``DECOY``)
=========  ==================================================================================

Indices 0-411 are exactly the spec's proposed vector; 412-483 are the unseen sets the spec
allows appending (section 7) and 484 says whose decision it is (``observe`` is valid for
every agent at every step).

Actions (``Discrete(215)``): the table of spec section 8, names in ``ACTION_NAMES``.
"""

from __future__ import annotations

import numpy as np

from card_envs.bloodlines.rules import (
    ACTION_NAMES,
    MAX_TURNS_BOUND,
    MAX_VALUE_SUM,
    NUM_NUMBER_CARDS,
    NUM_ZONES,
    VALUE,
    Z_DISCARD,
    Z_HAND,
    Z_HEART,
    Z_PILE,
    Z_POOL,
    Z_UNIT,
    Z_UNSEEN,
    BloodlinesConfig,
    BloodlinesView,
)
from card_envs.core.engine import unit_bounds

OBSERVATION_SIZE = 485

#: (start, stop, meaning) of every block, checked against the docstring and the space by the tests
LAYOUT: tuple[tuple[int, int, str], ...] = (
    (0, 4, "own bloodline"),
    (4, 8, "opponent bloodline"),
    (8, 44, "own hand"),
    (44, 47, "own royals alive"),
    (47, 50, "opponent royals alive"),
    (50, 77, "own hearts under royals"),
    (77, 104, "opponent hearts under royals"),
    (104, 107, "own royal defense"),
    (107, 110, "opponent royal defense"),
    (110, 191, "own units"),
    (191, 272, "opponent units"),
    (272, 281, "own unit attack"),
    (281, 290, "opponent unit attack"),
    (290, 292, "jokers in play"),
    (292, 294, "joker supply"),
    (294, 303, "own pool"),
    (303, 312, "opponent pool"),
    (312, 314, "pool values"),
    (314, 350, "own discard pile"),
    (350, 386, "opponent discard pile"),
    (386, 388, "jokers in discard piles"),
    (388, 390, "draw-pile sizes"),
    (390, 392, "hand sizes"),
    (392, 396, "phase"),
    (396, 397, "is active player"),
    (397, 398, "discards owed"),
    (398, 401, "pending decoy royal"),
    (401, 402, "decoy after joker attack"),
    (402, 403, "turn number"),
    (403, 404, "idle counter"),
    (404, 406, "rule flags"),
    (406, 412, "reserved"),
    (412, 448, "own pile composition"),
    (448, 484, "opponent unseen set"),
    (484, 485, "is to decide"),
)

# _ZONE_INDEX[side * 36 + k, zone]: the entry set to 1 for number card k of that side (0 = own,
# 1 = opponent) lying in that zone. Zones a card cannot be in (a club under a royal, an own card
# "unseen") map to the scratch entry ``_SCRATCH`` past the end of the vector.
_SCRATCH = OBSERVATION_SIZE


def _zone_index() -> np.ndarray:
    table = np.full((2 * NUM_NUMBER_CARDS, NUM_ZONES), _SCRATCH, dtype=np.intp)
    for side in (0, 1):
        for k in range(NUM_NUMBER_CARDS):
            suit, rank_slot = divmod(k, 9)
            row = table[side * NUM_NUMBER_CARDS + k]
            if side == 0:
                row[Z_PILE] = 412 + k
                row[Z_HAND] = 8 + k
            else:
                row[Z_UNSEEN] = 448 + k
            row[Z_DISCARD] = (314, 350)[side] + k
            if suit == 1:
                row[Z_POOL] = (294, 303)[side] + rank_slot
            if suit == 2:
                for r in range(3):
                    row[Z_HEART + r] = (50, 77)[side] + 9 * r + rank_slot
            if suit == 3:
                for u in range(9):
                    row[Z_UNIT + u] = (110, 191)[side] + 9 * u + rank_slot
    return table


_ZONE_INDEX = _zone_index().ravel()
_ROW_START = np.arange(2 * NUM_NUMBER_CARDS) * NUM_ZONES
_SCALE = 1.0 / MAX_VALUE_SUM
_JOKERS = (52, 53)
_ONE_HOT3 = {-1: (0.0, 0.0, 0.0), 0: (1.0, 0.0, 0.0), 1: (0.0, 1.0, 0.0), 2: (0.0, 0.0, 1.0)}
_ONE_HOT4 = tuple(tuple(float(i == j) for j in range(4)) for i in range(4))
_NO_UNITS = (0.0,) * 9
#: surviving royals (a sorted tuple of J=0, Q=1, K=2) -> alive flags
_ALIVE: dict[tuple[int, ...], tuple[float, ...]] = {
    alive: tuple(float(r in alive) for r in range(3))
    for alive in ((), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2))
}
#: every entry outside the number-card blocks, written from one tuple of values each step, in this order
_SCALARS = np.array(
    [*range(0, 8), *range(44, 50), *range(104, 110), *range(272, 294), 312, 313, *range(386, 406), 484],
    dtype=np.intp,
)

__all__ = ["ACTION_NAMES", "LAYOUT", "OBSERVATION_SIZE", "encode", "observation_bounds"]


def observation_bounds(config: BloodlinesConfig) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of every entry under ``config`` (the ranges of the module table)."""
    limit = config.hand_limit
    # R7b/R8: a club (at most 11 for a club bloodline) is played from a hand of at most L and draws its
    # value; sums of one suit's values (defense, attack, pool) are at most MAX_VALUE_SUM
    hands = (390, 392, min(limit + max(max(v) for v in VALUE) - 1, NUM_NUMBER_CARDS) / limit)
    turns = [(402, 403, MAX_TURNS_BOUND / 200)] if config.max_turns is None else []
    return unit_bounds(OBSERVATION_SIZE, [hands, (403, 404, 2.0), *turns])


def _scaled_attack(attack: tuple[int, ...]) -> tuple[float, ...]:
    """The nine unit-attack entries of one side: atk / 63, zeros for empty slots."""
    if not attack:
        return _NO_UNITS
    return (*[a * _SCALE for a in attack], *_NO_UNITS[len(attack):])


def encode(view: BloodlinesView, config: BloodlinesConfig) -> np.ndarray:
    """The observation vector of ``view`` under ``config`` (see the module table)."""
    me = view.player
    opp = 1 - me
    buffer = np.zeros(OBSERVATION_SIZE + 1, np.float32)  # + the scratch entry
    zones = np.frombuffer(view.own_zones + view.opponent_zones, np.uint8)
    buffer[_ZONE_INDEX.take(_ROW_START + zones)] = 1.0  # every number-card block at once
    own_defense = view.defense[me]
    opp_defense = view.defense[opp]
    own_discard = view.discards[me]
    opp_discard = view.discards[opp]
    scale = _SCALE
    buffer[_SCALARS] = (
        _ONE_HOT4[view.bloodlines[me]] + _ONE_HOT4[view.bloodlines[opp]]
        + _ALIVE[view.royals[me]] + _ALIVE[view.royals[opp]]
        + (own_defense[0] * scale, own_defense[1] * scale, own_defense[2] * scale,
           opp_defense[0] * scale, opp_defense[1] * scale, opp_defense[2] * scale)
        + _scaled_attack(view.attack[me]) + _scaled_attack(view.attack[opp])
        + (len(view.jokers[me]) * 0.5, len(view.jokers[opp]) * 0.5,
           view.supply_sizes[me] * 0.5, view.supply_sizes[opp] * 0.5,
           view.pool_values[me] * scale, view.pool_values[opp] * scale,
           ((_JOKERS[0] in own_discard) + (_JOKERS[1] in own_discard)) * 0.5,
           ((_JOKERS[0] in opp_discard) + (_JOKERS[1] in opp_discard)) * 0.5,
           view.pile_sizes[me] / NUM_NUMBER_CARDS, view.pile_sizes[opp] / NUM_NUMBER_CARDS,
           view.hand_sizes[me] / config.hand_limit, view.hand_sizes[opp] / config.hand_limit)
        + _ONE_HOT4[view.phase]
        + (1.0 if view.active == me else 0.0, view.owed * 0.1)
        + _ONE_HOT3[view.decoy_royal]
        + (1.0 if view.decoy_by_joker and view.decoy_royal >= 0 else 0.0,
           view.turn / (config.max_turns or 200), float(view.idle),
           1.0 if config.allow_pass else 0.0, 1.0 if config.unfinished_result == "royals" else 0.0,
           1.0 if view.current_player == me else 0.0)
    )
    return buffer[:OBSERVATION_SIZE]
