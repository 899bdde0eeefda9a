"""JAX port of Bloodlines' ``defender`` player (``agents/players/bloodlines.py``, ``ThreatAwareDefender``).

It reads the observation (``card_envs/bloodlines/encoding.py``) instead of the view; every list the Python
player walks is a fixed-size array here, and every ``min``/``max`` over a list is an argmin/argmax over a
key that folds in the list position, so ties break as Python's do (the first in list order):

=======================  ===========================================================================
the player reads         from the observation
=======================  ===========================================================================
bloodlines               0-3 own, 4-7 opponent (card values depend on them: ``VALUE``)
hand                     8-43, by number-card index ``k`` (the view's sorted ids are in ``k`` order)
royals alive             44-46 own, 47-49 opponent
royal defense            104-106 own, 107-109 opponent (x 63)
unit attack              272-280 own, 281-289 opponent (x 63; units are listed without gaps)
jokers in play, supply   290, 292 (x 2)
pool value               312 (x 63)
draw-pile size           388 (x 36)
phase                    392-395
opponent's unseen cards  448-483 (their hand and pile: the spades they may grow a unit with)
=======================  ===========================================================================

``joker_cost`` is the game option (fixed at ``make_defender``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from card_envs.bloodlines.rules import (
    ADD_TO_UNIT,
    ATTACK,
    BUY_JOKER,
    CYCLE,
    DECOY,
    DISCARD,
    END_STEP1,
    HEART,
    JOKER_ATTACK,
    MAX_ADD_UNIT,
    MAX_UNITS,
    NEW_UNIT,
    PASS,
    POOL,
    POWER,
)
from card_envs.core.engine import Game

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
STEP1, MAIN, DISCARD_PHASE, DECOY_PHASE = 0, 1, 2, 3
_K = np.arange(36)
SUIT = _K // 9
RANK = _K % 9 + 2
#: VALUE_OF[bloodline, k]: rank + 1 in the own suit, rank - 1 in the others (rules.VALUE by k)
VALUE_OF = np.where(SUIT[None, :] == np.arange(4)[:, None], RANK[None, :] + 1, RANK[None, :] - 1).astype(np.float32)
POWER_PILE = 12  # ThreatAwareDefender.power_pile
BIG = 1e6


def first_min(keys: jax.Array, allowed: jax.Array) -> jax.Array:
    """Index of the smallest allowed key, the first on ties (keys must be integers below ``BIG / size``)."""
    size = keys.shape[-1]
    return jnp.argmin(jnp.where(allowed, keys * size + jnp.arange(size), jnp.inf))


def first_max(keys: jax.Array, allowed: jax.Array) -> jax.Array:
    return first_min(-keys, allowed)


def make_defender(game: Game) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key)`` of the ``defender`` player (deterministic: the key is unused)."""
    joker_cost = game.config.joker_cost

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        o = observation
        values = jnp.asarray(VALUE_OF)[jnp.argmax(o[0:4])]  # of own cards, by k
        enemy_values = jnp.asarray(VALUE_OF)[jnp.argmax(o[4:8])]
        hand = o[8:44] > 0.5
        my_royals, enemy_royals = o[44:47] > 0.5, o[47:50] > 0.5
        my_defense, enemy_defense = jnp.round(o[104:107] * 63), jnp.round(o[107:110] * 63)
        my_attack, enemy_attack = jnp.round(o[272:281] * 63), jnp.round(o[281:290] * 63)
        my_units = jnp.sum(my_attack > 0)
        my_jokers = jnp.round(o[290] * 2)
        supply = jnp.round(o[292] * 2)
        pool_value = jnp.round(o[312] * 63)
        pile = jnp.round(o[388] * 36)
        phase = jnp.argmax(o[392:396])
        opponent_unseen = o[448:484] > 0.5
        suit = jnp.asarray(SUIT)
        hearts, spades = hand & (suit == HEARTS), hand & (suit == SPADES)
        keeps_decoy = (my_royals.sum() <= 2) & (my_jokers == 1) & (enemy_royals.sum() > 1)

        # DISCARD: the hand card with the lowest keep score (x 2, to compare integers)
        bloodline = jnp.argmax(o[0:4])
        cycling_own = ((suit == CLUBS) | (suit == DIAMONDS)) & (suit == bloodline)
        keep = jnp.where(suit == SPADES, 2 * values + 1, jnp.where(suit == HEARTS, 2 * values,
                                                                   jnp.where(cycling_own, values, -2.0)))
        discard = DISCARD + first_min(keep, hand)

        # resources: cards by rank, highest first (hand order on ties): power, pool or cycle
        wants_jokers = (supply > 0) & (pool_value < joker_cost)
        wants_jokers = wants_jokers & (~keeps_decoy | jnp.any(hearts | spades))
        k = jnp.asarray(_K)
        power_ok = (suit == CLUBS) & mask[jnp.clip(POWER + k, 0, POWER + 8)] & (pile >= POWER_PILE)
        pool_ok = (suit == DIAMONDS) & mask[jnp.clip(POOL + k - 9, POOL, POOL + 8)] & wants_jokers
        cycle_ok = ((suit == CLUBS) | (suit == DIAMONDS)) & mask[jnp.clip(CYCLE + k, 0, CYCLE + 17)]
        usable = hand & (power_ok | pool_ok | cycle_ok)
        card = first_min(10 - jnp.asarray(RANK), usable)
        resource = jnp.where(power_ok[card], POWER + card, jnp.where(pool_ok[card], POOL + card - 9, CYCLE + card))
        has_resource = jnp.any(usable)

        # kill: the smallest unit beating the best-defended beatable royal
        attack_legal = mask[ATTACK:JOKER_ATTACK]  # ATTACK + 3 unit + royal
        unit_of, royal_of = jnp.arange(27) // 3, jnp.arange(27) % 3
        kill_key = -enemy_defense[royal_of] * 64 + my_attack[unit_of]
        kill = ATTACK + first_min(kill_key, attack_legal)
        can_kill = jnp.any(attack_legal)

        # defend: the heart that makes a threatened royal safe with the least excess
        threat_now = jnp.max(enemy_attack)
        raised = my_defense[None, :] + values[:, None]  # [k, royal]
        defend_ok = hearts[:, None] & my_royals[None, :] & (my_defense[None, :] < threat_now) & (raised >= threat_now)
        # options (raised - threat, -defense, card, royal), lexicographically; card ids are in k order
        defend_key = ((raised - threat_now) * 64 + (63 - my_defense[None, :])) * 36 * 3 + k[:, None] * 3 + \
            jnp.arange(3)[None, :]
        best = jnp.argmin(jnp.where(defend_ok, defend_key, jnp.inf).reshape(-1))
        defend = HEART + 3 * (best // 3 - 18) + best % 3
        can_defend = jnp.any(defend_ok) & (threat_now > 0) & mask[jnp.clip(defend, 0, 214)]

        # jokers: attack the best-defended royal, unless the last joker is kept as a decoy
        joker_legal = mask[JOKER_ATTACK:BUY_JOKER]
        joker = JOKER_ATTACK + first_max(enemy_defense, joker_legal)
        can_joker = jnp.any(joker_legal) & ~keeps_decoy
        can_buy = mask[BUY_JOKER]

        # build: a spade that makes some unit beat the weakest enemy royal, with the least overkill
        target = jnp.min(jnp.where(enemy_royals, enemy_defense, BIG))
        slot = k - 27  # spade rank slot
        new_ok = spades & (values > target) & jnp.any(enemy_royals)
        new_key = ((values - target) * 2 + 1) * 256 + (NEW_UNIT + slot)  # (overkill, 1, action)
        units = jnp.arange(MAX_ADD_UNIT)
        grown = my_attack[None, :MAX_ADD_UNIT] + values[:, None]  # [k, unit]
        add_ok = spades[:, None] & (units[None, :] < my_units) & (my_attack[None, :MAX_ADD_UNIT] <= target) & \
            (target < grown) & jnp.any(enemy_royals)
        add_action = ADD_TO_UNIT + MAX_ADD_UNIT * slot[:, None] + units[None, :]
        add_key = ((grown - target) * 2) * 256 + add_action  # (overkill, 0, action)
        build_keys = jnp.concatenate([jnp.where(new_ok, new_key, jnp.inf),
                                      jnp.where(add_ok, add_key, jnp.inf).reshape(-1)])
        build_actions = jnp.concatenate([NEW_UNIT + slot, add_action.reshape(-1)])
        build = build_actions[jnp.argmin(build_keys)]
        can_build = jnp.any(new_ok) | jnp.any(add_ok)
        can_build = can_build & mask[jnp.clip(build, 0, 214)]

        # reinforce: a heart on the weakest (exposed) royal, else grow the strongest unit
        unseen_spades = opponent_unseen & (suit == SPADES)
        threat = threat_now + jnp.max(jnp.where(unseen_spades, enemy_values, 0.0))
        exposed = my_royals & (my_defense < threat)
        heart_card = first_max(values, hearts)
        shielded = jnp.where(jnp.any(exposed), exposed, my_royals)
        heart_royal = first_min(my_defense, shielded)
        reinforce_heart = HEART + 3 * (heart_card - 18) + heart_royal
        heart_first = jnp.any(hearts) & (jnp.any(exposed) | ~jnp.any(spades))
        spade_card = first_max(values, spades)
        strongest = first_max(my_attack, jnp.arange(MAX_UNITS) < my_units)
        grow = jnp.where((my_units > 0) & (my_units <= MAX_ADD_UNIT),
                         ADD_TO_UNIT + MAX_ADD_UNIT * (spade_card - 27) + strongest, NEW_UNIT + spade_card - 27)
        reinforce = jnp.where(heart_first, reinforce_heart, grow)
        can_reinforce = (heart_first | jnp.any(spades)) & mask[jnp.clip(reinforce, 0, 214)]

        # the fallback: pass if allowed, else the first legal main action
        main = mask[HEART:BUY_JOKER + 1]
        fallback = jnp.where(mask[PASS] | ~jnp.any(main), PASS, HEART + jnp.argmax(main))

        chain = [(can_kill, kill), (can_defend, defend), (can_joker, joker), (can_buy, BUY_JOKER),
                 (can_build, build), (can_reinforce, reinforce)]
        choice = fallback
        for ok, action in reversed(chain):
            choice = jnp.where(ok, action, choice)
        choice = jnp.where(phase == STEP1, END_STEP1, choice)
        choice = jnp.where(has_resource & (phase != DISCARD_PHASE) & (phase != DECOY_PHASE), resource, choice)
        choice = jnp.where(phase == DISCARD_PHASE, discard, choice)
        choice = jnp.where(phase == DECOY_PHASE, DECOY, choice)
        return choice.astype(jnp.int32)

    return act


__all__ = ["make_defender"]
