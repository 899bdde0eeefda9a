"""JAX ports of Battlecards' ``cheapest`` and ``counter`` players (``agents/players/battlecards.py``), any player count.

They read the observation (``card_envs/battlecards/encoding.py``) instead of the view; seat blocks are
relative (block ``j`` is the seat ``j`` places clockwise of the player):

===========================  =====================================================================
the player reads             from the observation
===========================  =====================================================================
decision (LEAD .. WAR_UP)    0-3
kind values                  ``KIND_VALUE``; a joker is worth ``jv`` (483-496, one-hot 1..14)
this round's cards           seat block +20..+34 (kind one-hot, +34 none)
who still follows            seat blocks +0 (active) and +1 (leader): the seats clockwise up to the
                             leader
the war                      seat blocks +35 (takes part in this level), +36 (stuck), +37 (entry
                             position), +38..+52 (fighting card): participants show in reverse
                             entry order, so those entered after the player have shown at this level
cards on the table           468 (all), the player's own: its round card, one war card per earlier
                             level (an acting participant has shown at every earlier level), and its
                             face-down cards (own block +53, +54)
hidden hands                 seat blocks +3 (hand size), +55..+68 (``K_p``), +69 (``u_p``); 514-527
                             (the unaccounted cards)
===========================  =====================================================================

``counter`` compares expected gains in float32 where Python uses float64; the choice among kinds whose
gains differ by less than ``TOLERANCE`` goes to the first in Python's order (the tests find no move
that differs).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from card_envs.battlecards.encoding import SEAT_BASE, SEAT_SIZE
from card_envs.battlecards.rules import BURY, FOLLOW, KIND_VALUE, LEAD, NUM_KINDS, WAR_UP
from card_envs.core.engine import Game

USAGE = 0.15  # CardCounter.usage
TOLERANCE = 1e-5
MAX_HAND = 16  # factors of the hypergeometric product (hands are far smaller)
_NATURAL = np.asarray(KIND_VALUE, np.float32)  # 2 .. 14, joker 0


def _kind_values(observation: jax.Array) -> jax.Array:
    joker_value = jnp.argmax(observation[483:497]) + 1
    return jnp.where(jnp.arange(NUM_KINDS) == NUM_KINDS - 1, joker_value, jnp.asarray(_NATURAL))


def _sorted_key(values: jax.Array) -> jax.Array:
    """``_by_value``'s order (value, then kind) as one unique integer key per kind."""
    return values * NUM_KINDS + jnp.arange(NUM_KINDS)


def _seats(observation: jax.Array, players: int) -> jax.Array:
    """The relative seat blocks of the table's players, ``(players, 70)``."""
    return observation[SEAT_BASE:SEAT_BASE + SEAT_SIZE * players].reshape(players, SEAT_SIZE)


def _shown_and_later(observation: jax.Array, values: jax.Array, players: int) -> tuple[jax.Array, jax.Array]:
    """The best value shown so far and the mask of seats still to show after the player (``shown_values`` and
    ``still_to_show``)."""
    seats = _seats(observation, players)
    decision = jnp.argmax(observation[0:4])
    round_value = seats[:, 20:20 + NUM_KINDS] @ values  # one-hot kind (all zeros: none) times the kind values
    round_best = jnp.max(round_value)
    # LEAD / FOLLOW: the active seats clockwise up to the leader
    relative = jnp.arange(players)
    leader = jnp.where(seats[:, 1] > 0.5, relative, players)
    leader = jnp.min(jnp.where(relative > 0, leader, players))  # the first leader seat after the player
    round_later = (relative > 0) & (relative < leader) & (seats[:, 0] > 0.5)
    # WAR_UP: participants show in reverse entry order
    participant, stuck = seats[:, 35] > 0.5, seats[:, 36] > 0.5
    entry = jnp.round(seats[:, 37] * 6)
    mine = entry[0]
    fighting_value = seats[:, 38:38 + NUM_KINDS] @ values
    shown = participant & (stuck | (~stuck & (entry > mine)))
    war_best = jnp.max(jnp.where(shown, fighting_value, 0.0))
    war_later = participant & ~stuck & (entry < mine) & (relative > 0)
    in_round = (decision == LEAD) | (decision == FOLLOW)
    return jnp.where(in_round, round_best, war_best), jnp.where(in_round, round_later, war_later)


def _hand_basics(observation: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Each kind's value, its sort key, the lowest legal kind, and the decision type (LEAD..WAR_UP)."""
    values = _kind_values(observation)
    order = _sorted_key(values)
    return values, order, jnp.argmin(jnp.where(mask, order, jnp.inf)), jnp.argmax(observation[0:4])


def make_cheapest(game: Game) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key)`` of ``cheapest``: the lowest card beating every card shown, else the lowest."""
    players = game.num_players

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        values, order, lowest, decision = _hand_basics(observation, mask)
        best, _ = _shown_and_later(observation, values, players)
        beating = mask & (values > best)
        cheapest_winner = jnp.argmin(jnp.where(beating, order, jnp.inf))
        contest = ((decision == FOLLOW) | (decision == WAR_UP)) & jnp.any(beating)
        return jnp.where(contest, cheapest_winner, lowest).astype(jnp.int32)

    return act


def chance_hand_below(seat: jax.Array, unaccounted: jax.Array, values: jax.Array, value: jax.Array,
                      strict: bool) -> jax.Array:
    """P(the seat's hand holds no card of value > ``value`` (``strict``) or >= ``value``), its hidden holdings
    modelled as in ``agents.players.battlecards.chance_hand_below``."""
    hand = jnp.round(seat[3] * 10)
    known = jnp.round(seat[55:69] * 4)
    unknown = jnp.round(seat[69] * 54)
    pool = unaccounted.sum()
    good = values > value if strict else values >= value
    good_known = jnp.sum(jnp.where(good, known, 0.0))
    good_pool = jnp.sum(jnp.where(good, unaccounted, 0.0))
    total = known.sum() + unknown
    good_cards = good_known + jnp.where(pool > 0, unknown * good_pool / jnp.maximum(pool, 1.0), 0.0)
    i = jnp.arange(MAX_HAND)
    factors = jnp.where(i < jnp.minimum(hand, total), jnp.maximum(total - good_cards - i, 0.0) /
                        jnp.maximum(total - i, 1.0), 1.0)
    return jnp.where((hand == 0) | (total <= 0), 1.0, jnp.prod(factors))


def make_counter(game: Game) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key)`` of ``counter`` (deterministic: the key is unused)."""
    players = game.num_players

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        values, order, lowest, decision = _hand_basics(observation, mask)
        best, later = _shown_and_later(observation, values, players)
        beating = mask & (values > best)
        cheapest_winner = jnp.where(jnp.any(beating), jnp.argmin(jnp.where(beating, order, jnp.inf)), lowest)
        # WAR_UP with participants still to show: the best expected card gain
        seats = _seats(observation, players)
        unaccounted = jnp.round(observation[514:528] * 4)
        level = jnp.round(observation[467] * 10)
        mine = level + jnp.round(seats[0, 53] * 54) + jnp.round(seats[0, 54] * 54)
        gain = jnp.round(observation[468] * 54) - mine + later.sum()

        def win_chance(value: jax.Array) -> jax.Array:
            def holds_below(seat: jax.Array) -> jax.Array:
                below = chance_hand_below(seat, unaccounted, values, value, strict=False)
                not_above = chance_hand_below(seat, unaccounted, values, value, strict=True)
                return below + 0.5 * (not_above - below)

            per_seat = jax.vmap(holds_below)(seats)
            return jnp.prod(jnp.where(later, per_seat, 1.0)) * jnp.where(value > best, 1.0, 0.5)

        win = jax.vmap(win_chance)(values)
        score = win * gain - (1 - win) * (mine + 1) - USAGE * (values - 1) / 13
        candidate = mask & (values >= best)
        top = jnp.max(jnp.where(candidate, score, -jnp.inf))
        choice = jnp.argmin(jnp.where(candidate & (score >= top - TOLERANCE), order, jnp.inf))
        war_choice = jnp.where(jnp.any(candidate) & (top >= -(mine + 1)), choice, lowest)
        single = mask.sum() == 1
        action = jnp.where(later.any(), jnp.where(decision == FOLLOW, lowest, war_choice), cheapest_winner)
        action = jnp.where(single | (decision == LEAD) | (decision == BURY), lowest, action)
        return action.astype(jnp.int32)

    return act


__all__ = ["chance_hand_below", "make_cheapest", "make_counter"]
