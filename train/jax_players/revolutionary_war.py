"""JAX ports of Revolutionary War's ``cheapest`` and ``pot`` players (``agents/players/revolutionary_war.py``).

They read the observation (``card_envs/revolutionary_war/encoding.py``) instead of the view; ``pot``
(``PotVersusCost``) reads:

==================  ================================================================================
the player reads    from the observation
==================  ================================================================================
active trump        entries 13-25 (one-hot rank)
next two trumps     entries 26-38, 39-51 (one-hot rank each, all zero when absent)
cards played now    entries 65-77 (rank counts): the pot is their sum plus one
unseen ranks        entries 104-116 (rank counts of the draw deck and the opponent's hand)
draw deck size      entry 117 (x 39)
opponent's hand     entry 119 (x 5)
==================  ================================================================================

The choice among plays is the Python player's ``strength now / 12 + 2 x keep value`` scaled by
``12 x (visible next trumps + 1)`` to exact integers, so ties break as Python's ``min`` does (lowest
action). The exact endgame player (``endgame``: ``pot`` until the deck is empty, then a full minimax
search) is not ported: a search of that size is no fit for a batched step. It can still teach
(``pretrain.teacher: heuristic:endgame``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from card_envs.core.engine import Game
from card_envs.revolutionary_war.rules import CONCEDE, HAND_SIZE, STRENGTH

#: STRENGTH[t][r] for trump rank value t = 0..13 and card rank value r = 0..13
_STRENGTH = np.asarray(STRENGTH, np.int32)
FUTURE_WEIGHT, COST_WEIGHT = 2.0, 4.0  # PotVersusCost.future_weight, .cost_weight


def make_cheapest(game: Game) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key)`` of the ``cheapest`` player: the weakest legal card, concede only when
    no card is legal."""
    del game

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        row = observation[13:26] @ jnp.asarray(_STRENGTH[1:, 1:], jnp.float32)
        plays = mask[:13]
        action = jnp.argmin(jnp.where(plays, row, 99))
        return jnp.where(jnp.any(plays), action, CONCEDE).astype(jnp.int32)

    return act


def make_pot(game: Game) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key)`` of the ``pot`` player (the key is unused: it is deterministic)."""
    del game  # one layout for every option

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        strength = jnp.asarray(_STRENGTH[1:, 1:], jnp.float32)  # [trump rank index, card rank index]
        row = observation[13:26] @ strength  # strength of every rank now
        upcoming = observation[26:52].reshape(2, 13)  # the next two trumps, one-hot (zeros when absent)
        shown = upcoming.sum()
        # keep value = (sum of strengths under the visible next trumps / 12 + 0.5) / (shown + 1); scaled by
        # 12 (shown + 1): sum of strengths + 6, so that the choice below compares integers
        keep_scaled = (upcoming @ strength).sum(axis=0) + 6.0
        choice_key = row * (shown + 1) + FUTURE_WEIGHT * keep_scaled
        plays = mask[:13]
        action = first_min(choice_key, plays)
        chosen = jnp.arange(13) == action
        keep = keep_scaled / (12.0 * (shown + 1))
        unseen = jnp.round(observation[104:117])
        beaters = jnp.sum(jnp.where(row >= jnp.sum(jnp.where(chosen, row, 0.0)), unseen, 0.0))
        pool = unseen.sum()
        drawn = jnp.round(observation[119] * HAND_SIZE)
        p_beaten = chance_to_hold(pool, beaters, drawn)
        pot = jnp.round(observation[65:78]).sum() + 1
        deck = jnp.round(observation[117] * 39)
        refill = jnp.where((deck > 0) & (pool > 0), jnp.sum(unseen * keep) / jnp.maximum(pool, 1.0), 0.0)
        cost = jnp.maximum(jnp.sum(jnp.where(chosen, keep, 0.0)) - refill, 0.0)
        concede = (p_beaten * cost * COST_WEIGHT > pot) | ~jnp.any(plays)
        return jnp.where(concede, CONCEDE, action).astype(jnp.int32)

    return act


def first_min(keys: jax.Array, allowed: jax.Array) -> jax.Array:
    """The index of the smallest of the ``allowed`` integer-valued ``keys``, the first one on ties (Python's
    ``min``). The index is folded into the key, so the minimum is unique: XLA's batched ``argmin`` on CPU
    does not always return the first of equal values (seen with jax 0.10.2)."""
    size = keys.shape[-1]
    return jnp.argmin(jnp.where(allowed, keys * size + jnp.arange(size), jnp.inf))


def chance_to_hold(pool: jax.Array, good: jax.Array, drawn: jax.Array) -> jax.Array:
    """P(at least one of ``drawn`` cards taken from ``pool`` is among ``good``): 1 - C(pool-good, drawn) / C(pool,
    drawn), the ratio as a product of at most ``HAND_SIZE`` factors."""
    i = jnp.arange(HAND_SIZE)
    factors = jnp.where(i < drawn, (pool - good - i) / jnp.maximum(pool - i, 1.0), 1.0)
    chance = 1.0 - jnp.prod(factors)
    chance = jnp.where(pool - good < drawn, 1.0, chance)
    return jnp.where((drawn <= 0) | (good <= 0), 0.0, chance)


__all__ = ["chance_to_hold", "first_min", "make_cheapest", "make_pot"]
