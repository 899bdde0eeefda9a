"""Revolutionary War in JAX: the batched engine of ``revolutionary_war_v0`` on Pgx's ``Env`` API.

Which engine does what:

===================  =================================================================================
engine               use it for
===================  =================================================================================
Python engine        ``card_envs.make_game("revolutionary_war_v0")``, the PettingZoo ``env()``, the
                     agents, search and evaluation: the reference implementation of the spec
JAX engine (this)    ``card_envs.jax.make("revolutionary_war_v0", **options)``: thousands of games at
                     once under ``jax.jit(jax.vmap(...))`` (training at scale, batched search); the same
                     observation (``encode(view)``, 157 float32), action ids, legal masks and rewards
===================  =================================================================================

Every option of :class:`~card_envs.revolutionary_war.rules.RevolutionaryWarConfig` runs here
(``first_dealer``, ``target_score`` with ``dealer_rotation``, ``reward_mode``, ``shaping_weight``,
``max_steps``). One ``step`` is one decision of the Python engine; draws, captures, trump replenishment,
scoring and the deals of later match games happen inside it (R6-R16, R23). ``card_envs.jax.lockstep``
checks the two engines decision by decision.

Every function of the step works on one state or on a batch whose arrays carry the batch axis *last*
(``batch_last``): ``env.step_batch_last(states, actions)`` runs the whole batch at once, each entry of a
hand or of the observation a contiguous row of games that XLA vectorises (on CPU several times cheaper
per decision than ``jax.vmap(env.step)``, whose rows of 13 or 157 entries compile to scalar loops; see
``benchmarks/jax_throughput.py``). Hence sizes are counters (no sums over ranks), the observation's
ratios are gather-free (``ExactRatios.rows``) and the hand by strength is a rotation, not a gather.

The state keeps what decides the future and the views (suits never matter after the deal, and the
observation counts ranks); rank indices are A=0 .. K=12, -1 marks an empty slot:

=====================  ===========  =============================================================
field                  shape        meaning
=====================  ===========  =============================================================
``_hands``             (2, 13)      cards of each rank in each seat's hand
``_trump_stack``       (3,)         ranks of the trump stack, active trump first (R10: a queue)
``_deck``              (39,)        ranks of the draw deck in draw order (a queue), -1 padded
``_deck_counts``       (13,)        cards of each rank in the draw deck
``_deck_size``         ()           cards in the draw deck
``_hand_sizes``        (2,)         cards in each seat's hand
``_pile_sizes``        (2,)         cards in each seat's score pile (its score, R15)
``_played_size``       ()           cards played this round
``_played``            (13,)        cards of each rank played this round
``_last_played``       ()           rank of the last card played this round (-1: none yet)
``_piles``             (2, 13)      cards of each rank in each seat's score pile
``_leader``            ()           seat leading the current round
``_dealer``            ()           seat dealing the current game
``_last_capturer``     ()           capturer of the last round (-1 before round 1 ends)
``_game_number``       ()           1-based game of the match
``_totals``            (2,)         match totals of the finished games
``_decks``             (G - 1, 52)  card ids (suits included, R4 needs colours) of the decks of match
                                    games 2 .. G, G = ceil(target_score / 25) the most games a match
                                    can last (R23); shuffled at ``init`` (chance, not position)
=====================  ===========  =============================================================

Cards removed at the end of a game (R14) are not kept: they count for nobody, and once the game is over
the unseen block of the observation is zero either way.
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from pgx._src.struct import dataclass

from card_envs.cards import RANK_VALUE
from card_envs.jax.core import CardEnv, CardState, ExactRatios, Fields, computed_once, padded, shuffled, tree_where
from card_envs.revolutionary_war.rules import (
    CONCEDE,
    DECK_SIZE,
    HAND_SIZE,
    NUM_RANKS,
    STACK_SIZE,
    RevolutionaryWar,
    RevolutionaryWarConfig,
    RevolutionaryWarState,
)

DRAW_DECK_SIZE = DECK_SIZE - 2 * HAND_SIZE - STACK_SIZE  #: 39 cards face down after the deal
#: dtype of the card arrays (counts, ranks, card ids): small arrays move less memory in a batched step
CARDS = jnp.int8


@dataclass
class State(CardState):
    name: ClassVar[str] = "revolutionary_war_v0"

    _hands: jax.Array
    _trump_stack: jax.Array
    _deck: jax.Array
    _deck_counts: jax.Array
    _deck_size: jax.Array
    _hand_sizes: jax.Array
    _pile_sizes: jax.Array
    _played_size: jax.Array
    _played: jax.Array
    _last_played: jax.Array
    _piles: jax.Array
    _leader: jax.Array
    _dealer: jax.Array
    _last_capturer: jax.Array
    _game_number: jax.Array
    _totals: jax.Array
    _decks: jax.Array


class Env(CardEnv[RevolutionaryWarState]):
    """``revolutionary_war_v0`` as a ``pgx.Env``; see the module docstring and the env's docstring
    (``help(card_envs.revolutionary_war_v0)``) for the observation, action and reward tables."""

    game: RevolutionaryWar
    config: RevolutionaryWarConfig

    name = "revolutionary_war_v0"
    state_class = State
    step_uses_key = False  # later match games are dealt from decks shuffled at init
    batch_last = True  # step_batch_last runs the whole batch at once, batch axis last (card_envs.jax.core)
    chance_fields = ("_decks",)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        config = self.config
        #: the most games a match can last (R23: each game adds at least 50 to the two totals)
        self.max_games = 1 if config.target_score is None else math.ceil(config.target_score / 25)
        # the observation's ratios (deck, hands, piles, match totals: below the target before a game, so a
        # total stays under target + 52), exactly as the Python encoding rounds them
        target = config.target_score or 1
        self._ratios = ExactRatios([(DRAW_DECK_SIZE, DRAW_DECK_SIZE), (HAND_SIZE, DECK_SIZE), (HAND_SIZE, DECK_SIZE),
                                    (DECK_SIZE, DECK_SIZE), (DECK_SIZE, DECK_SIZE),
                                    (target, target + DECK_SIZE), (target, target + DECK_SIZE)])

    # -- init ---------------------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> State:
        decks = jax.vmap(lambda k: shuffled(k, DECK_SIZE, hashed=True))(jax.random.split(key, self.max_games))
        dealer = jnp.int32(self.config.first_dealer)
        return State(
            observation=jnp.zeros(self.observation_shape, jnp.float32),
            rewards=jnp.zeros(2, jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=jnp.zeros(self.num_actions, jnp.bool_),
            _step_count=jnp.int32(0),
            _piles=jnp.zeros((2, NUM_RANKS), CARDS),
            _pile_sizes=jnp.zeros(2, jnp.int32),
            _dealer=dealer,
            _game_number=jnp.int32(1),
            _totals=jnp.zeros(2, jnp.int32),
            _decks=decks[1:].astype(CARDS),
            **_deal(decks[0], dealer),
        )

    # -- step (one state, or a batch with the batch axis last: ``batch_last``) --------------------------

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        del key
        config = self.config
        mover = state.current_player
        other = 1 - mover
        play = action < CONCEDE
        concede = ~play
        top = state._deck[0]
        has_deck = top >= 0
        drawn = _hot(top, NUM_RANKS)  # zero when the deck is empty (A19)
        deck = jnp.where(has_deck, _pop(state._deck), state._deck)

        # R5-R7: play the named rank, then draw (R6); a concession draws nothing here
        card = _hot(action, NUM_RANKS)  # zero for concede
        hands = state._hands + _seat(mover) * jnp.where(play, drawn - card, 0)
        hand_sizes = state._hand_sizes - (_seat_rows(mover) & play & ~has_deck)  # sizes: no sums over ranks
        played = jnp.where(play, state._played + card, 0)
        last_played = jnp.where(play, action, -1)

        # R9: the non-conceder captures the played cards and the active trump
        captured = state._played + _hot(state._trump_stack[0], NUM_RANKS)
        piles = state._piles + _seat(other) * jnp.where(concede, captured, 0)
        has_trump = state._trump_stack[0] >= 0
        pile_sizes = state._pile_sizes + (_seat_rows(other) & concede) * (state._played_size + has_trump)
        capture_size = state._played_size + 1
        # R10: the trump stack pops its top; the deck's top card joins the bottom
        popped = _pop(state._trump_stack)
        bottom = (popped >= 0).sum(axis=0)
        replenished = jnp.where(has_deck & (_column(STACK_SIZE, bottom) == bottom), top, popped)
        trump_stack = jnp.where(concede, replenished, state._trump_stack)

        rewards = jnp.zeros_like(state.rewards)
        if config.shaping_weight:  # section 9: capture shaping, zero-sum
            rewards += _pay(other, jnp.where(concede, config.shaping_weight * capture_size / DECK_SIZE, 0.0))

        # R11: the end check, only after a capture
        out_of_cards = (deck[0] < 0) & ((trump_stack[0] < 0) | (hand_sizes[0] + hand_sizes[1] == 0))
        game_over = computed_once(concede & out_of_cards)  # read by every field's select
        state = state.replace(
            _hands=hands, _deck=deck, _deck_counts=state._deck_counts - drawn, _played=played,
            _deck_size=state._deck_size - has_deck, _hand_sizes=hand_sizes, _pile_sizes=pile_sizes,
            _played_size=jnp.where(play, state._played_size + 1, 0),
            _last_played=last_played, _piles=piles, _trump_stack=trump_stack,
            _leader=jnp.where(concede & ~game_over, other, state._leader),  # R12
            _last_capturer=jnp.where(concede, other, state._last_capturer),
            current_player=other,  # R8 after a play; R12 the capturer leads after a concession
        )
        state, rewards = self._end_game(state, game_over, rewards)
        if config.max_steps is not None:  # R22: no terminal reward
            state = state.replace(truncated=(state._step_count >= config.max_steps) & ~state.terminated)
        return state.replace(rewards=rewards)

    def _end_game(self, state: State, game_over: jax.Array, rewards: jax.Array) -> tuple[State, jax.Array]:
        """R13-R16 and R23 where ``game_over``: leftovers, scores, rewards, the match, the next deal."""
        config = self.config
        stack_out = game_over & (state._trump_stack[0] < 0)
        leftovers = jnp.where(stack_out, state._hands, 0)  # R13: each hand to its holder's pile
        piles = state._piles + leftovers
        kept = jnp.where(stack_out, state._hand_sizes, 0)
        if config.shaping_weight:
            rewards += _pay(0, config.shaping_weight * (kept[0] - kept[1]) / DECK_SIZE)
        scores = state._pile_sizes + kept  # R15
        if config.reward_mode == "score_diff":
            rewards += _pay(0, jnp.where(game_over, (scores[0] - scores[1]) / DECK_SIZE, 0.0))
        state = state.replace(
            _hands=jnp.where(stack_out, 0, state._hands),
            _hand_sizes=state._hand_sizes - kept,
            _piles=piles,
            _pile_sizes=scores,
            _trump_stack=jnp.where(game_over, -1, state._trump_stack),  # R14: leftover trumps removed
        )
        if config.target_score is None:
            winner = _winner(scores, state._last_capturer)  # R16
            return state.replace(terminated=game_over), rewards + self._result(game_over, winner)
        totals = state._totals + jnp.where(game_over, scores, 0)  # R23
        reached = totals >= config.target_score
        match_over = computed_once(game_over & (reached[0] | reached[1]))  # read by every field's select
        winner = jnp.where(reached[0] & reached[1], _winner(totals, state._last_capturer),  # A32, A33
                           jnp.where(reached[0], 0, 1))
        next_game = computed_once(game_over & ~match_over)  # A31: deal the next game at once
        dealer = 1 - state._dealer if config.dealer_rotation == "alternate" else state._dealer  # A29
        state = state.replace(_totals=totals, terminated=match_over)
        if self.max_games > 1:  # else the first game always ends the match
            # the next game's deck, a select chain (a gather cost ~15% more a decision, batch-last, target_score=80)
            game = jnp.clip(state._game_number - 1, 0, self.max_games - 2)
            deck = functools.reduce(lambda chosen, g: jnp.where(game == g, state._decks[g], chosen),
                                    range(1, self.max_games - 1), state._decks[0])
            dealt = state.replace(_piles=jnp.zeros_like(piles), _pile_sizes=jnp.zeros_like(scores),
                                  _game_number=state._game_number + 1,
                                  _dealer=dealer, **_deal(deck, dealer))  # A46: R4 on the new deal
            state = tree_where(next_game, dealt, state)
        return state, rewards + self._result(match_over, winner)

    def _result(self, over: jax.Array, winner: jax.Array) -> jax.Array:
        """``win_loss``: +1 / -1 when the episode ends."""
        if self.config.reward_mode != "win_loss":
            return jnp.zeros((2, *jnp.shape(over)), jnp.float32)
        return _pay(winner, jnp.where(over, 1.0, 0.0))

    # -- observation and mask -----------------------------------------------------------------------

    def _observe(self, state: State, player_id: jax.Array) -> jax.Array:
        """The 157 entries of :mod:`card_envs.revolutionary_war.encoding` for seat ``player_id``.

        Entry by entry along axis 0, so a batch with the batch axis last (``batch_last``) computes each
        entry for every game at once (vectorised); the own hand by strength is a rotation of the own hand
        (four fixed shifts, no gather)."""
        me, opp = player_id, 1 - player_id
        first = player_id == 0
        own = jnp.where(first, state._hands[0], state._hands[1])
        theirs = jnp.where(first, state._hands[1], state._hands[0])
        own_pile = jnp.where(first, state._piles[0], state._piles[1])
        their_pile = jnp.where(first, state._piles[1], state._piles[0])
        over = state.terminated | state.truncated
        trump = state._trump_stack[0].astype(jnp.int32)
        last = state._last_played
        has_trump = trump >= 0
        strength_last = jnp.where(has_trump & (last >= 0), (last - trump - 1 + NUM_RANKS) % NUM_RANKS, -1)
        # the one-hot blocks: trump stack positions 1-3 and the last card (by rank), the last card by strength
        hot = jnp.stack([*state._trump_stack.astype(jnp.int32), last, strength_last])[:, None] == _column(
            NUM_RANKS, last)
        match = self.config.target_score is not None
        totals = jnp.where(first, state._totals, state._totals[::-1]) * match
        ratios = self._ratios.rows(jnp.stack([
            state._deck_size, *_relative(state._hand_sizes, first), *_relative(state._pile_sizes, first),
            totals[0], totals[1]]))
        flags = jnp.stack([
            ~over & (state._leader == me),
            ~over & (last < 0),
            state._dealer == me,
            state._last_capturer == me,
            state._last_capturer == opp,
            jnp.full_like(over, match),
        ]).astype(jnp.float32)
        # own hand by strength under the active trump: rank (j + trump + 1) mod 13 has strength j (R0)
        by_strength = jnp.where(has_trump, _rotate(own, (trump + 1) % NUM_RANKS), 0)
        ranks_block = jnp.concatenate([
            own, hot[:4].reshape((-1, *own.shape[1:])).astype(CARDS), state._played, own_pile, their_pile,
            theirs + state._deck_counts,  # unseen: the opponent's hand and the draw deck (section 7)
        ])
        return jnp.concatenate([
            ranks_block.astype(jnp.float32),
            ratios[:5],
            flags,
            ratios[5:],
            by_strength.astype(jnp.float32),
            hot[4].astype(jnp.float32),
            (~over & (state.current_player == me)).astype(jnp.float32)[None],
        ])

    def _legal_action_mask(self, state: State) -> jax.Array:
        """R5/R7: any held rank on the opening, else a held rank at least as strong as the last; concede."""
        held = jnp.where(state.current_player == 0, state._hands[0], state._hands[1]) > 0
        trump = state._trump_stack[0].astype(jnp.int32)
        last = state._last_played
        strength = _strengths(trump)
        floor = jnp.where(trump >= 0, (last - trump - 1 + NUM_RANKS) % NUM_RANKS, 0)
        playable = held & ((last < 0) | (strength >= floor))
        return jnp.concatenate([playable, jnp.ones_like(playable[:1])])

    # -- Python positions ---------------------------------------------------------------------------

    def _game_fields(self, py_state: RevolutionaryWarState, seed: tuple[int, ...]) -> Fields:
        deck = padded(_ranks(py_state.deck), DRAW_DECK_SIZE, dtype=np.int8)
        return {
            "_hands": np.stack([_rank_counts(hand) for hand in py_state.hands]),
            "_trump_stack": padded(_ranks(py_state.trump_stack), STACK_SIZE, dtype=np.int8),
            "_deck": deck,
            "_deck_counts": _rank_counts(py_state.deck),
            "_deck_size": np.int32(len(py_state.deck)),
            "_hand_sizes": np.asarray([len(hand) for hand in py_state.hands], np.int32),
            "_pile_sizes": np.asarray([len(pile) for pile in py_state.score_piles], np.int32),
            "_played_size": np.int32(len(py_state.played)),
            "_played": _rank_counts(py_state.played),
            "_last_played": np.int32(_ranks(py_state.played[-1:])[0] if py_state.played else -1),
            "_piles": np.stack([_rank_counts(pile) for pile in py_state.score_piles]),
            "_leader": np.int32(py_state.leader),
            "_dealer": np.int32(py_state.dealer),
            "_last_capturer": np.int32(py_state.last_capturer),
            "_game_number": np.int32(py_state.game_number),
            "_totals": np.asarray(py_state.totals, np.int32),
            "_decks": self._later_decks(py_state, seed),
        }

    def _later_decks(self, py_state: RevolutionaryWarState, seed: tuple[int, ...]) -> np.ndarray:
        """Decks of games 2 .. G: the Python state's stacked ones (``pending_decks``), the rest shuffled."""
        decks = np.zeros((self.max_games - 1, DECK_SIZE), np.int8)
        if not len(decks):
            return decks
        rng = np.random.default_rng(seed)
        for index in range(len(decks)):
            pending = index + 2 - py_state.game_number - 1  # position in pending_decks of game index + 2
            stacked = py_state.pending_decks[pending] if 0 <= pending < len(py_state.pending_decks) else None
            decks[index] = stacked if stacked is not None else rng.permutation(DECK_SIZE)
        return decks


# -- small pure functions (one state, or a batch with the batch axis last) ---------------------------------


def _deal(cards: jax.Array, dealer: jax.Array) -> dict[str, jax.Array]:
    """Section 3 from 52 card ids (index 0 = top): hands, trump stack, draw deck, first leader (R4)."""
    ranks = (cards % NUM_RANKS).astype(CARDS)  # card ids are suit-major: rank index = id mod 13
    non_dealer_hand = _counts(ranks[0:10:2])  # A2: alternately, non-dealer first
    dealer_hand = _counts(ranks[1:10:2])
    stack = ranks[10:13]  # A3: index 10 is the active trump
    black = (cards[10:13] < NUM_RANKS) | (cards[10:13] >= 3 * NUM_RANKS)  # clubs 0-12, spades 39-51
    leader = jnp.where(black.sum(axis=0) >= 2, dealer, 1 - dealer)  # R4
    dealer_first = jnp.stack([dealer_hand, non_dealer_hand])
    none = jnp.full_like(dealer, -1, dtype=jnp.int32)
    return {
        "_hands": jnp.where(dealer == 0, dealer_first, dealer_first[::-1]),
        "_trump_stack": stack,
        "_deck": ranks[13:],
        "_deck_counts": 4 - non_dealer_hand - dealer_hand - _counts(stack),
        "_deck_size": jnp.full_like(dealer, DRAW_DECK_SIZE, dtype=jnp.int32),
        "_hand_sizes": jnp.full((2, *jnp.shape(dealer)), HAND_SIZE, jnp.int32),
        "_played_size": jnp.zeros_like(dealer, dtype=jnp.int32),
        "_played": jnp.zeros_like(dealer_hand),
        "_last_played": none,
        "_leader": leader,
        "_last_capturer": none,
        "current_player": leader,
    }


def _column(size: int, like: jax.Array) -> jax.Array:
    """``0 .. size-1`` along axis 0, broadcasting against ``like``'s batch axes (none for one state)."""
    return jnp.arange(size, dtype=jnp.int32).reshape((size,) + (1,) * jnp.ndim(like))


def _hot(index: jax.Array, size: int) -> jax.Array:
    """``(size, *batch)``: 1 at ``index`` (none if out of range, e.g. -1 for "no card")."""
    return (_column(size, index) == index).astype(CARDS)


def _seat_rows(seat: jax.Array) -> jax.Array:
    """``(2, *batch)``: True in ``seat``'s row."""
    return _column(2, seat) == seat


def _relative(pair: jax.Array, first: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A ``(2, *batch)`` pair as (the observer's, the opponent's); ``first``: the observer is seat 0."""
    return jnp.where(first, pair[0], pair[1]), jnp.where(first, pair[1], pair[0])


def _seat(seat: jax.Array) -> jax.Array:
    """``(2, 1, *batch)``: selects one seat's row of a ``(2, 13, *batch)`` array (updates without gathers)."""
    return (_column(2, seat) == seat)[:, None].astype(CARDS)


def _pop(queue: jax.Array) -> jax.Array:
    """The queue without its first entry, -1 at the end."""
    return jnp.concatenate([queue[1:], jnp.full_like(queue[:1], -1)])


def _rotate(ranks: jax.Array, shift: jax.Array) -> jax.Array:
    """``out[j] = ranks[(j + shift) % 13]`` for ``0 <= shift < 13``: four fixed rotations, each kept or not."""
    for bit in range(4):
        step = 1 << bit
        ranks = jnp.where((shift >> bit) & 1 == 1, jnp.concatenate([ranks[step:], ranks[:step]]), ranks)
    return ranks


def _counts(ranks: jax.Array) -> jax.Array:
    """Cards of each rank among ``ranks`` (``(k, *batch)``; -1 entries count for none)."""
    return (ranks[:, None] == _column(NUM_RANKS, ranks[0])).sum(axis=0, dtype=CARDS)


def _strengths(trump: jax.Array) -> jax.Array:
    """R0: the strength 0..12 of every rank under the active trump (all 0 without a trump, as Python)."""
    return jnp.where(trump >= 0, (_column(NUM_RANKS, trump) - trump - 1 + NUM_RANKS) % NUM_RANKS, 0)


def _pay(seat: jax.Array | int, amount: jax.Array) -> jax.Array:
    """Zero-sum: ``seat`` gets ``amount``, the other seat ``-amount`` (``(2, *batch)``)."""
    return jnp.where(_column(2, amount) == seat, amount, -amount).astype(jnp.float32)


def _winner(scores: jax.Array, last_capturer: jax.Array) -> jax.Array:
    """R16 / R23: the higher score wins; a tie goes to the last round's capturer."""
    return jnp.where(scores[0] == scores[1], last_capturer, jnp.where(scores[0] > scores[1], 0, 1))


def _ranks(cards: Any) -> list[int]:
    return [RANK_VALUE[c] - 1 for c in cards]


def _rank_counts(cards: Any) -> np.ndarray:
    return np.bincount(_ranks(cards), minlength=NUM_RANKS).astype(np.int8)


__all__ = ["Env", "State"]
