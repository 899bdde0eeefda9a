"""JAX port of Revolution's ``counting`` player (``agents/players/revolution.py``, ``CardCounter``).

The Python player remembers the tricks of the hand (``TrickMemory``, or ``full_recall``'s records) to read
voids and walls off them (spec 7.3). The observation keeps the completed tricks only as cards by seat, not
trick by trick, so it cannot redo those inferences; the ``void_inferences`` option (which needs
``full_recall``) observes their result, the cards each opponent may hold, and this port reads that. It
therefore needs ``full_recall=True, void_inferences=True`` (``make_counting`` refuses other options). Seats
are relative (``r = (seat - me) mod 4``; 1 plays after me):

=============================  ==============================================================================
the player reads               from the observation (909 entries, ``card_envs/revolution/encoding.py``)
=============================  ==============================================================================
own holding                    0-51
current trick                  52-259 (card of relative seat ``r`` at ``52 + 52 r + idx``), leader 260-263
phase                          272-276 (opening, designated, offered, forced lead, follow)
led, trump, previous-led suit  281-284, 285-288, 289-292 (all zeros: none)
cards seen                     own holding, current trick, previous trick 306-513, completed tricks 541-748
cards each opponent may hold   753-804, 805-856, 857-908: ``unseen & limits`` (the Python player's
                               ``allowed``), except ``AS``, shown only for its known holder (see below)
hand sizes                     the own holding's size, less one for a seat that has played to this trick
                               (plus one for me if I have): every seat plays one card to every trick
=============================  ==============================================================================

The one thing the observation does not say exactly: the Python player counts ``AS`` among the cards an
opponent may hold whenever that opponent's limits allow spades, while the observation shows ``AS`` only for
its holder (known from trick 1, R2). The port puts it back for a non-holder whose block shows another
spade (limits are whole suits, so spades are allowed). If no other spade is unseen, the block cannot tell
whether a void in spades was proven in an earlier trick; the port then assumes no void (spades allowed).
Only there can the port and the Python player differ (``tests/test_jax_players.py`` counts such positions).

Chances are computed in float32 where Python uses float64, in Python's order of operations; choices follow
Python's tie-breaks (the first card in index order for a follow, ``(chance, -rank, card)`` for a lead). A
chance that is exactly a threshold in exact arithmetic can round to either side: over 20,000 positions
(``positions(..., 20000, seed=1)`` of the test) one move differed, a forced lead whose best chance, 0.4 x 0.25,
is 0.09999999999999999 in float64 (below the 0.1 dump threshold) and 0.10000000596 in float32; the 48
positions of the undecidable ``AS`` case above all agreed.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from card_envs.core.engine import Game
from card_envs.core.errors import ConfigError
from card_envs.revolution.rules import NUM_CARDS, OFFERED, PASS

FOLLOW_PHASE = 4  #: index of "follow" in the phase one-hot
SPADES = 3
AS = NUM_CARDS - 1
LEAD_THRESHOLD, OFFERED_THRESHOLD, RANK_COST = 0.45, 0.55, 0.15  # CardCounter's settings
_SUIT = np.arange(NUM_CARDS) // 13
_RANK = np.arange(NUM_CARDS) % 13
#: _SAME_SUIT_ABOVE[c, d]: card d is of c's suit and higher (``allowed & SUIT_BITS[suit] & ~((2 << c) - 1)``)
_CARDS = np.arange(NUM_CARDS)
_SAME_SUIT_ABOVE = (_SUIT[:, None] == _SUIT[None, :]) & (_CARDS[None, :] > _CARDS[:, None])
_IN_SUIT = (_SUIT[None, :] == np.arange(4)[:, None])  #: (4 suits, 52)


def _suit_one_hot(observation: jax.Array, start: int) -> jax.Array:
    """The suit of a one-hot block (-1: all zeros, no suit)."""
    block = observation[start:start + 4]
    return jnp.where(jnp.any(block > 0.5), jnp.argmax(block), -1)


def _allowed(observation: jax.Array, unseen: jax.Array) -> jax.Array:
    """(3, 52) the cards relative seats 1-3 may hold as the Python player counts them (``unseen & limits``)."""
    blocks = observation[753:909].reshape(3, NUM_CARDS) > 0.5
    other_spades = jnp.any(blocks & jnp.asarray(_IN_SUIT[SPADES] & (np.arange(NUM_CARDS) != AS)), axis=1)
    unseen_other_spade = jnp.any(unseen & jnp.asarray(_IN_SUIT[SPADES] & (np.arange(NUM_CARDS) != AS)))
    # a non-holder's block never shows AS; spades are allowed if another spade shows, or (undecidable) none is unseen
    spades_allowed = other_spades | ~unseen_other_spade
    ace = blocks[:, AS] | (unseen[AS] & spades_allowed)
    return blocks.at[:, AS].set(ace)


def _void_terms(allowed: jax.Array, keep: jax.Array, led: jax.Array, prev_led: jax.Array) -> jax.Array:
    """(3,) ``TableEstimate._void_term`` of each seat for led suit ``led`` (a suit) and previous-led ``prev_led``."""
    in_led = jnp.asarray(_IN_SUIT)[led]
    in_prev = jnp.where(prev_led >= 0, jnp.asarray(_IN_SUIT)[jnp.maximum(prev_led, 0)], False)
    can_trump = jnp.any(allowed & ~in_led & ~in_prev, axis=1)
    return jnp.where(can_trump, keep ** jnp.sum(allowed & in_led, axis=1).astype(jnp.float32), 0.0)


def make_counting(game: Game) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key)`` of ``counting`` (deterministic: the key is unused)."""
    config = game.config
    if not (config.full_recall and config.void_inferences):
        raise ConfigError("the JAX port of heuristic:counting reads what the tricks prove about each opponent's "
                          "holding: it needs the options full_recall=True and void_inferences=True (env_options), "
                          f"got full_recall={config.full_recall}, void_inferences={config.void_inferences}")
    above = jnp.asarray(_SAME_SUIT_ABOVE)
    rank = jnp.asarray(_RANK)
    suit_of = jnp.asarray(_SUIT)
    cards = jnp.arange(NUM_CARDS)

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        hand = observation[0:52] > 0.5
        trick = observation[52:260].reshape(4, NUM_CARDS) > 0.5
        seen = hand | jnp.any(trick, axis=0) | jnp.any(observation[306:514].reshape(4, NUM_CARDS) > 0.5, axis=0) | \
            jnp.any(observation[541:749].reshape(4, NUM_CARDS) > 0.5, axis=0)
        allowed = _allowed(observation, ~seen)
        played = jnp.any(trick, axis=1)  # (4,) relative seats that have played to this trick
        hand_sizes = (jnp.sum(hand) + played[0] - played[1:]).astype(jnp.float32)
        share = jnp.minimum(hand_sizes / jnp.maximum(jnp.sum(allowed, axis=1), 1).astype(jnp.float32), 1.0)
        keep = 1.0 - share  # (3,)
        led, trump, prev_led = _suit_one_hot(observation, 281), _suit_one_hot(observation, 285), \
            _suit_one_hot(observation, 289)
        phase = jnp.argmax(observation[272:277])
        playable = mask[:NUM_CARDS]
        # no_higher[r, c] = keep_r ** (cards seat r may hold of c's suit, above c)
        higher = (allowed.astype(jnp.float32) @ above.T.astype(jnp.float32))  # (3, 52)
        no_higher = keep[:, None] ** higher
        lengths = jnp.sum(hand[None, :] & jnp.asarray(_IN_SUIT), axis=1)
        dump_key = (rank == 12) * 100_000 + lengths[suit_of] * 1_000 + rank * 60 + cards
        dump = jnp.argmin(jnp.where(playable, dump_key, jnp.iinfo(jnp.int32).max))

        # a lead (TableEstimate.best_lead): per card, every seat must neither follow higher nor trump it
        lead_terms = jax.vmap(lambda s: _void_terms(allowed, keep, s, prev_led))(jnp.arange(4))  # (4 suits, 3)
        factors = 1.0 - ((1.0 - no_higher) + lead_terms[suit_of].T)  # (3, 52)
        lead_chance = ((1.0 * factors[0]) * factors[1]) * factors[2]
        best_chance = jnp.max(jnp.where(playable, lead_chance, -jnp.inf))
        tied = playable & (lead_chance == best_chance)
        low = jnp.min(jnp.where(tied, rank, 99))
        best_lead = jnp.max(jnp.where(tied & (rank == low), cards, -1))
        threshold = jnp.where(phase == OFFERED, OFFERED_THRESHOLD, LEAD_THRESHOLD)
        may_pass = mask[PASS]
        lead = jnp.where(may_pass, jnp.where(best_chance < threshold, PASS, best_lead),
                         jnp.where(best_chance < 0.1, dump, best_lead))

        # a follow (CardCounter._follow): the winning card most likely to hold, less what it is worth later
        leader = jnp.argmax(observation[260:264])
        position = (4 - leader) % 4  # my place in the trick's order
        later = jnp.arange(1, 4) <= 3 - position  # (3,) relative seats 1-3 still to play after me
        winning_suit = jnp.where(trump >= 0, trump, led)
        in_winning = jnp.any(trick, axis=0) & (suit_of == winning_suit)
        winning = jnp.max(jnp.where(in_winning, cards, -1))
        fixes = (trump < 0) & (suit_of != led)
        wins_now = jnp.where(fixes, suit_of != prev_led, jnp.where((trump >= 0) & (suit_of != trump), False,
                                                                   cards > winning))
        follow_void = _void_terms(allowed, keep, jnp.maximum(led, 0), prev_led)  # (3,)
        trump_fixed = (trump >= 0) | fixes  # (52,)
        beaten = jnp.where(trump_fixed[None, :], 1.0 - no_higher, (1.0 - no_higher) + follow_void[:, None])
        hold = 1.0 - beaten  # (3, 52)
        chance = jnp.ones(NUM_CARDS)
        for r in range(3):
            chance = jnp.where(later[r], chance * hold[r], chance)
        value = chance - RANK_COST * rank / 12
        candidate = playable & wins_now & (value > -1.0)
        top = jnp.max(jnp.where(candidate, value, -jnp.inf))
        first_best = jnp.argmax(candidate & (value == top))
        follow = jnp.where(jnp.any(candidate) & (top > 0.05), first_best, dump)

        any_card = jnp.any(playable)
        action = jnp.where(phase == FOLLOW_PHASE, follow, lead)
        action = jnp.where(any_card, action, PASS)
        action = jnp.where(mask.sum() == 1, jnp.argmax(mask), action)
        return action.astype(jnp.int32)

    return act


__all__ = ["make_counting"]
