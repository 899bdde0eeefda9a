"""Battlecards observation and action layouts (spec sections 7.6 and 8).

Observation of player ``o``: 533 float32 entries. Seats are relative to the observer and padded to
six: seat block ``j`` describes ``player_{(o + j) mod N}`` (block 0 is the observer itself); blocks
``j >= N`` are all zeros. Kind blocks are indexed ``2``=0 .. ``A``=12, joker (``X``)=13; a one-hot
"kind or none" block has 15 entries, the last meaning "none". Per-kind counts are divided by 4,
card counts by 54 (the largest deck), hand sizes by 10. Every entry lies in [0, 1] unless its row
gives another range (``observation_bounds``; ``N`` = ``num_players``).

=========  ==================================================================================
index      content
=========  ==================================================================================
0-3        decision the observer owes now, one-hot LEAD / FOLLOW / BURY / WAR_UP (zeros if none)
4-17       own hand: count per kind / 4
18-31      own cards buried face down from hand this round: count per kind / 4
32-45      own pile knowledge ``F_o``: count per kind / 4
46         own pile knowledge ``f_o`` (unknown cards) / 54
47-116     seat block 0: the observer itself (offsets below)
117-186    seat block 1: the next seat clockwise
187-256    seat block 2
257-326    seat block 3
327-396    seat block 4
397-466    seat block 5 (blocks ``j >= N`` are zeros)
467        war level / 10 (0 = no war): 0 .. 5.4 (every level puts a card on the table)
468        stakes (cards on the table) / 54
469-482    face-up table cards: count per kind / 4
483-496    joker value ``jv``, one-hot over 1..14 (entry 483 = 1, ..., 496 = 14)
497        retirement level ``(rl - 1) / 12`` (0 = nothing retired)
498-511    discard (retired cards): count per kind / 4
512        set-aside cards / 4: 0 .. (N - 1) / 4 (a stacked deck of any size)
513        rounds completed / ``max_rounds`` (0 when there is no limit)
514-527    ``unaccounted_o``: count per kind / 4
528        active players / 6
529        BURY decisions the acting player still owes / 5
530        1 if the Joker variant is on
531        1 if the retirement variant is on
532        1 if cease fire is on
=========  ==================================================================================

Offsets inside a seat block (seat ``p``):

=========  ==================================================================================
offset     content
=========  ==================================================================================
+0         1 if ``p`` is active (not eliminated)
+1         1 if ``p`` leads this round
+2         1 if ``p`` owes the next decision
+3         hand size / 10
+4         face-down pile size / 54
+5         face-up pile size / 54
+6..+19    face-up pile: count per kind / 4
+20..+34   this round's card: kind one-hot (+34 = none)
+35        1 if ``p`` takes part in the current war level
+36        1 if ``p`` is stuck (R10)
+37        entry position in the war, ``(i + 1) / 6`` (0 = not in the war)
+38..+52   fighting card: kind one-hot (+52 = none)
+53        face-down table cards from pile or recycled pile / 54
+54        face-down table cards buried from hand / 54
+55..+68   ``K_p``: count per kind / 4
+69        ``u_p`` / 54
=========  ==================================================================================

Indices 0-528 are the spec's proposed vector (7.6) in its order; 529-532 are additions: the
remaining BURY count (not otherwise derivable during a commitment) and the variant flags.

Actions (``Discrete(14)``): ``a`` = 0..12 is "a card of rank ``a + 2``" (``play 2`` ..
``play 10``, ``play J``, ``play Q``, ``play K``, ``play A``); 13 is ``play X`` (a joker). The
decision kind (indices 0-3) says whether the card is led, followed, buried or shown in a war.
"""

from __future__ import annotations

import struct

import numpy as np

from card_envs.battlecards.rules import ACTION_NAMES, KIND, NUM_KINDS, BattlecardsConfig, BattlecardsView
from card_envs.core.engine import unit_bounds

OBSERVATION_SIZE = 533
MAX_SEATS = 6
SEAT_BASE = 47
SEAT_SIZE = 70

#: (start, stop, meaning) of every block, checked against the docstring and the space by the tests
LAYOUT: tuple[tuple[int, int, str], ...] = (
    (0, 4, "decision kind"),
    (4, 18, "own hand kind counts"),
    (18, 32, "own buried kind counts"),
    (32, 46, "own pile knowledge F_o"),
    (46, 47, "own pile unknown f_o"),
    *((SEAT_BASE + SEAT_SIZE * j, SEAT_BASE + SEAT_SIZE * (j + 1), f"seat block {j} (relative)")
      for j in range(MAX_SEATS)),
    (467, 468, "war level"),
    (468, 469, "stakes size"),
    (469, 483, "face-up table kind counts"),
    (483, 497, "joker value one-hot"),
    (497, 498, "retirement level"),
    (498, 512, "discard kind counts"),
    (512, 513, "set-aside count"),
    (513, 514, "rounds completed"),
    (514, 528, "unaccounted kind counts"),
    (528, 529, "active players"),
    (529, 530, "BURY decisions owed"),
    (530, 533, "variant flags"),
)

#: offsets inside a seat block
SEAT_FIELDS: tuple[tuple[int, int, str], ...] = (
    (0, 1, "active"), (1, 2, "is leader"), (2, 3, "owes the next decision"), (3, 4, "hand size"),
    (4, 5, "face-down pile size"), (5, 6, "face-up pile size"), (6, 20, "face-up pile kind counts"),
    (20, 35, "round card kind"), (35, 36, "war participant"), (36, 37, "stuck"), (37, 38, "entry position"),
    (38, 53, "fighting card kind"), (53, 54, "face-down from pile"), (54, 55, "face-down from hand"),
    (55, 69, "K_p kind counts"), (69, 70, "u_p"),
)


def _scale() -> np.ndarray:
    """Per-entry divisor applied after the raw counts are written."""
    scale = np.ones(OBSERVATION_SIZE, np.float32)
    kinds, cards = 1 / 4, 1 / 54
    scale[4:46] = kinds
    scale[46] = cards
    for j in range(MAX_SEATS):
        b = SEAT_BASE + SEAT_SIZE * j
        scale[b + 3] = 1 / 10
        scale[b + 4:b + 6] = cards
        scale[b + 6:b + 20] = kinds
        scale[b + 37] = 1 / 6
        scale[b + 53:b + 55] = cards
        scale[b + 55:b + 69] = kinds
        scale[b + 69] = cards
    scale[467] = 1 / 10
    scale[468] = cards
    scale[469:483] = kinds
    scale[497] = 1 / 12
    scale[498:512] = kinds
    scale[512] = 1 / 4
    scale[514:528] = kinds
    scale[528] = 1 / 6
    scale[529] = 1 / 5
    return scale


SCALE = _scale()
_PACK = struct.Struct(f"{OBSERVATION_SIZE}f").pack
_NONE = NUM_KINDS  # the "none" entry of a kind one-hot

__all__ = ["ACTION_NAMES", "LAYOUT", "OBSERVATION_SIZE", "SEAT_FIELDS", "encode", "observation_bounds"]


def observation_bounds(config: BattlecardsConfig) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of every entry under ``config`` (the ranges of the module table)."""
    # R10-R12: every war level played puts at least one WAR_UP card on the table, which holds at most
    # the 54 cards; the set-aside cards are D mod N of a deck of D cards (A4)
    return unit_bounds(OBSERVATION_SIZE, [(467, 468, 54 / 10), (512, 513, (config.num_players - 1) / 4)])


def encode(view: BattlecardsView, config: BattlecardsConfig) -> np.ndarray:
    """The observation vector of ``view`` (see the module table)."""
    obs = [0.0] * OBSERVATION_SIZE
    # every field of the view, in BattlecardsView's order (locals are much cheaper than attributes)
    (me, n, decision, acting, _acting_decision, bury_left, leader, rounds_completed, active, _hand, hand_kinds,
     buried, pile_known, pile_unknown, hand_sizes, pile_sizes, face_up_piles, face_up_kinds, table, table_up_kinds,
     round_cards, fighting, entry, participants, stuck, war_level, facedown_pile, facedown_hand, known, unknown,
     joker_value, retire_level, discard, set_aside, unaccounted, _over) = view
    if decision >= 0:
        obs[decision] = 1.0
    obs[4:18] = hand_kinds
    for card in buried:
        obs[18 + KIND[card]] += 1.0
    obs[32:46] = pile_known
    obs[46] = pile_unknown
    b = 47
    for j in range(n):
        p = (me + j) % n
        if active[p]:
            obs[b] = 1.0
        if leader == p:
            obs[b + 1] = 1.0
        if acting == p:
            obs[b + 2] = 1.0
        obs[b + 3] = hand_sizes[p]
        obs[b + 4] = pile_sizes[p]
        obs[b + 5] = len(face_up_piles[p])
        obs[b + 6:b + 20] = face_up_kinds[p]
        card = round_cards[p]
        obs[b + 20 + (KIND[card] if card >= 0 else _NONE)] = 1.0
        if entry:  # a war this round (only then can a player be stuck)
            if p in participants:
                obs[b + 35] = 1.0
            if p in entry:
                obs[b + 37] = entry.index(p) + 1
            if stuck[p]:
                obs[b + 36] = 1.0
        card = fighting[p]
        obs[b + 38 + (KIND[card] if card >= 0 else _NONE)] = 1.0
        obs[b + 53] = facedown_pile[p]
        obs[b + 54] = facedown_hand[p]
        obs[b + 55:b + 69] = known[p]
        obs[b + 69] = unknown[p]
        b += 70
    obs[467] = war_level
    obs[468] = len(table)
    obs[469:483] = table_up_kinds
    obs[482 + joker_value] = 1.0
    obs[497] = retire_level - 1
    for card in discard:
        obs[498 + KIND[card]] += 1.0
    obs[512] = set_aside
    if config.max_rounds:
        obs[513] = rounds_completed / config.max_rounds
    obs[514:528] = unaccounted
    obs[528] = sum(active)
    obs[529] = bury_left
    obs[530] = float(config.jokers)
    obs[531] = float(config.retire_lowest_on_flip)
    obs[532] = float(config.cease_fire)
    vector = np.frombuffer(bytearray(_PACK(*obs)), dtype=np.float32)  # faster than np.array(list)
    vector *= SCALE
    return vector
