"""Battlecards in JAX (Pgx API): the batched engine of ``battlecards_v0``, every option, 2-6 players.

Which engine does what:

===================  =================================================================================
engine               use it for
===================  =================================================================================
Python engine        ``card_envs.make_game("battlecards_v0")``, the PettingZoo ``env()``, the agents,
                     search and evaluation: the reference implementation of the spec
JAX engine (this)    ``card_envs.jax.make("battlecards_v0", **options)``: thousands of games at once
                     under ``jax.jit(jax.vmap(...))`` (training at scale, batched search); the same
                     observation (``encode(view)``, 533 float32), action ids, legal masks and rewards
===================  =================================================================================

Every option of :class:`~card_envs.battlecards.rules.BattlecardsConfig` runs here (``num_players`` 2-6,
``jokers``, ``retire_lowest_on_flip``, ``cease_fire``, ``hand_size``, ``war_facedown_count``,
``max_rounds`` with either ``truncation_scoring``, ``shaping_weight``, ``first_leader``,
``shuffle_mid_game``). One ``step`` is one decision of the Python engine (LEAD, FOLLOW, BURY or WAR_UP,
spec section 8); everything automatic between two decisions (comparisons, wars of any depth, face-down
placements from the pile, the hand-empty war fill, recycles, the last-card tie and its deal, collecting,
refills, retirement, eliminations, cease fire, the end of the game, truncation and shaping; R24) happens
inside the step, as ``rules.py`` does it. Rewards follow the Python engine's elimination convention
(RULES.md). ``card_envs.jax.lockstep`` checks the two engines decision by decision.

Cards are kinds
---------------
Nothing in the game depends on a card's suit after the deal except *which* card of a kind leaves a hand
(R22), and nothing observable depends on that: values, comparisons, retirement, every observation entry
and every reward are functions of kinds (``2`` = 0 .. ``A`` = 12, joker = 13). So the engine keeps kinds
only: hands, face-up piles and the table are per-kind counts, ordered piles hold kinds.

Shuffles
--------
Every random event comes from the step's key (``init``'s key for the deal): one 32-bit seed is hashed
from the key's own words (:meth:`Env.step_seed`, no Threefry call) and expanded by a counter-based integer
hash, so a step costs one hash however many cards it shuffles. The deal is a uniform permutation of the
deck (ranks of random keys), dealt as the spec deals it (3.3). A recycled face-up pile (R5) is shuffled
*lazily*: it becomes a per-kind multiset (``_pile_rand``) and each card taken from its top is a uniformly
random card of what is left, which is the same distribution as a shuffled pile whose order nobody sees
(7.3); taking the whole pile needs no draw at all. The last-card-tie deal (R15) is made the same way. With
``shuffle_mid_game=False`` recycles and the tie deal keep chronological order (A11): face-up piles and the
table are then also kept in order.

In lockstep, a step where the Python engine shuffles is compared through ``from_state`` (Python's
shuffle is its own random draw); every other step, and every step under ``shuffle_mid_game=False``, is
compared directly, game arrays included.

Two layouts of a batch
----------------------
``jax.vmap(env.step)`` (batch axis first) runs the full step (:meth:`Env._full_step`, every rule above) for
every game. The engine is also ``batch_last`` (``env.step_batch_last``, ``env.init_batch_last``; the same
states, tested decision by decision), which is faster on CPU: there most decisions take a common step written
on whole rows of the batch (:meth:`Env._common_step`: a LEAD or FOLLOW decision and, when it ends the round, a
single winner and a refill of at most one card per seat, or the recycle and refill of one seat whose hand and
pile are empty (R6); and any BURY or WAR_UP decision that leaves the war procedure nothing to do; with
``retire_lowest_on_flip``, refills of up to three draws a seat and no recycle (:meth:`Env._retiring_refill`),
with shuffled piles also a war's resolution with a single winner, and a war level's commitments up to the next
decision where every seat commits from its hand and pile, :meth:`Env._common_commitments`), and the other games
(wars starting, resolving or committing otherwise, longer refills, two recycles, a recycle with retirement or under
``shuffle_mid_game=False``) are gathered into slots and take the full step under ``vmap``
(:meth:`Env._rare_steps`). Both steps draw a shuffled pile's cards from the same random words, so they give
the same state for the same key. Observation and mask are written entry by entry along axis 0 for both
layouts. Per-game values that many per-kind entries read are computed once (``computed_once``): XLA's CPU fusion would
otherwise recompute them for each entry. For the same reason the full step reduces a game's per-seat and
per-kind arrays with one reduction each, not adds of slices (the batch-last form): that made the rare step's
slots about 6% cheaper per decision of the batch-last loop (6 players, 512 games: about 4,150 -> 3,900 ns of
CPU time per decision). With 6 players about 8.5% of the decisions of random play take the rare step (it was
18% before the common step took the recycles, 5.4% of the decisions, and the BURY and WAR_UP decisions with
more to come, 4.4%: about 2,810 -> 2,500 ns of CPU time per decision of the batch-last loop at 6 players, 512
games a device over 2 devices); a round of its slots costs about as much whatever the number of games waiting,
so there are few slots (:meth:`Env._rare_slots`). Retirement (R21) is what costs most: wars are about twice as
frequent (ranks retire, values tie more often) and a refill draws until the hand keeps its cards, so with 4
players about 9% of the decisions of random play take the rare step (7.6% in the default config; 17% before
the common step took a war level's commitments and a refill's recycle of a small pile, 19% before it took a war's
resolution), and the full step costs about 5 times the default's in a slot (about 17 against 3.6 us of CPU time a
game in 102 slots: a seat's fill with its draws and retirements, one commitment per pass of the war, under
``vmap``). Parts that only some games need (the
R11a fill of a war, a fill's recycle) run under :func:`_when`, which skips them when no slot needs them. The
observation is written once: its parts are scaled (``SCALE``) before they are concatenated, and the seat blocks
are one int8 array rotated to the observer at once (a select per shift of a doubled copy). The per-kind counts
are int8 in the State (``_COUNTS``) and int32 in the steps: a step reads and writes the State's arrays.

State arrays (``N`` = ``num_players``, ``D`` = deck size 52 or 54)
------------------------------------------------------------------
=====================  ===========  =================================================================
field                  shape        meaning (spec names)
=====================  ===========  =================================================================
``_hand``              (N, 14)      ``H_p``: cards per kind
``_pile``              (N, D) int8  ``D_p`` in order (kinds), top at ``_pile_n - 1``, 0 beyond
``_pile_n``            (N,)         cards in the ordered pile
``_pile_rand``         (N, 14)      a shuffled (recycled) face-down pile per kind; a pile is either
                                    ordered or shuffled
``_face_up``           (N, 14)      ``U_p`` per kind
``_up_order``          (N, D) int8  ``U_p`` oldest first (kinds); only with ``shuffle_mid_game=False``
``_table_up``          (N, 14)      face-up table cards (round and war cards) per owner and kind
``_table_down``        (N, 14)      face-down table cards from the pile or the recycled pile
``_table_buried``      (N, 14)      face-down table cards buried from hand
``_table_kind``        (D,) int8    the table in chronological order (R23): kinds and owners; only
``_table_owner``       (D,) int8    with ``shuffle_mid_game=False``
``_discard``           (14,)        retired cards per kind (R21)
``_composition``       (14,)        the deck of this game per kind (public)
``_set_aside``         ()           cards set aside at the deal (A4)
``_known``             (N, 14)      ``K_p`` (7.5)
``_unknown``           (N,)         ``u_p``
``_pile_known``        (N, 14)      ``F_p`` (7.5)
``_pile_unknown``      (N,)         ``f_p``
``_active``            (N,) bool    not eliminated
``_phase``             ()           decision owed: 0 LEAD, 1 FOLLOW, 2 BURY, 3 WAR_UP, -1 over
``_leader``            ()           seat that leads (led) the round
``_round_card``        (N,)         kind of this round's card, -1 none
``_fighting``          (N,)         kind of the fighting card, -1 none
``_entry``             (N,)         war entry position 1, 2, ... (0: not in this round's war)
``_participant``       (N,) bool    takes part in the current war level
``_stuck``             (N,) bool    stuck this round (R10)
``_war_level``         ()           0 = no war
``_queue``             ()           during BURY: the face-down phase goes on below this entry position
``_bury_left``         ()           BURY decisions still owed in this commitment
``_commit_rest``       ()           face-down cards still owed after them (R11d)
``_joker_value``       ()           ``jv``
``_retire_level``      ()           ``rl``
``_rounds``            ()           rounds completed
``_shares``            (N,) f32     card shares at the end of the last round (shaping)
``_paid``              (N,) f32     outcome rewards paid so far (eliminations, RULES.md)
``_early``             (N,) bool    eliminated before the end of the game
``_winners``           (N,) bool    the winner set ``W`` once the game is over (R18, R19)
=====================  ===========  =================================================================

Integer fields are int32 unless marked; the per-kind counts ((N, 14) and (14,): ``_hand``, ``_pile_rand``,
``_face_up``, the three ``_table_*`` counts, ``_discard``, ``_composition``, ``_known``, ``_pile_known``) are int8
in the State and int32 in the steps.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from pgx._src.struct import dataclass

from card_envs.battlecards.encoding import OBSERVATION_SIZE, SCALE, SEAT_SIZE
from card_envs.battlecards.rules import (
    BURY,
    FOLLOW,
    FROM_HAND,
    FROM_PILE,
    FROM_RECYCLED,
    JOKER_KIND,
    KIND,
    LEAD,
    MAX_DECK,
    NUM_KINDS,
    OVER,
    ROUND_CARD,
    WAR_CARD,
    WAR_UP,
    Battlecards,
    BattlecardsConfig,
    BattlecardsState,
    sorted_deck,
)
from card_envs.jax.core import CardEnv, CardState, computed_once, key_words, mix32

MAX_SEATS = 6
_NONE_KIND = NUM_KINDS  # the "none" entry of a kind one-hot
_KINDS = np.arange(NUM_KINDS, dtype=np.int32)
_KINDS_OR_NONE = np.arange(NUM_KINDS + 1, dtype=np.int32)
_UPPER = np.triu(np.ones((NUM_KINDS, NUM_KINDS), np.int32))  # _UPPER[i, j] = 1 where i <= j
_BEYOND = MAX_SEATS + 1  # an entry position above every participant's
# what the war procedure has left to do after a decision
_DONE, _RESOLVE, _COMMIT = 0, 1, 2
_GOLDEN = np.uint32(0x9E3779B9)
#: draws a seat makes at most in the common step's refill with retirement (a retired card is discarded and the
#: draw goes on, R21); a seat that needs more takes the full step (random play: well under 1% of the decisions)
_COMMON_DRAWS = 3
#: draws a pass of the full step's draw loop makes (:func:`_draws_until_kept`): a fill from a recycled pile draws 5-12
#: cards with 4 players, and a vmapped loop pass costs about as much whatever it draws (2, 4 and 8 a pass: about 2%,
#: 5% and 2% less CPU time a decision of the batch-last loop than one, 4 players with retirement; 4 and 8: 7% with 3
#: players and hand 10)
_DRAWS_A_PASS = 4
#: random words of one seat's fill with retirement (R6, R21): one a draw (a seat draws at most a deck), those
#: after a recycle from the middle of the block on
_FILL_WORDS = 2 * (MAX_DECK + 10)
#: the first random word of the end-of-round refill with retirement (R16.2, R21): a region of its own, far above
#: what a step's running counter reaches, so that the common step finds a seat's draws without replaying the war
#: procedure's (seat ``p``'s words from ``_REFILL_WORDS + p * _FILL_WORDS`` on)
_REFILL_WORDS = np.uint32(1 << 31)
#: a level above every retirement level (:meth:`Env._kept_best`: jokers are never retired, R20)
_KEEPS_ALWAYS = 99


# -- the state ------------------------------------------------------------------------------------------


class Game(NamedTuple):
    """The game arrays (the State's underscore fields without the underscore) and the Pgx fields a step
    changes: what the step's functions pass along (see the module table)."""

    current: Any
    rewards: Any
    terminated: Any
    truncated: Any
    hand: Any
    pile: Any
    pile_n: Any
    pile_rand: Any
    face_up: Any
    up_order: Any
    table_up: Any
    table_down: Any
    table_buried: Any
    table_kind: Any
    table_owner: Any
    discard: Any
    composition: Any
    set_aside: Any
    known: Any
    unknown: Any
    pile_known: Any
    pile_unknown: Any
    active: Any
    phase: Any
    leader: Any
    round_card: Any
    fighting: Any
    entry: Any
    participant: Any
    stuck: Any
    war_level: Any
    queue: Any
    bury_left: Any
    commit_rest: Any
    joker_value: Any
    retire_level: Any
    rounds: Any
    shares: Any
    paid: Any
    early: Any
    winners: Any


_PGX_FIELDS = {"current": "current_player", "rewards": "rewards", "terminated": "terminated",
               "truncated": "truncated"}
#: the per-kind card counts (at most 54 cards each), stored as int8 in the State and computed as int32 in the
#: steps (``Env._game``): a game-step reads and writes the State's arrays, and these were over 80% of their bytes
#: without the observation (int32: 336 bytes each a game at 6 players); int8 storage made a 6-player game-step
#: 0.88-0.92x the time
_COUNTS = frozenset({"hand", "pile_rand", "face_up", "table_up", "table_down", "table_buried", "discard",
                     "composition", "known", "pile_known"})


#: the per-seat game arrays that a seat's own draws, fills, recycles and commitments change (``Env._on_seat_rows``;
#: ``up_order`` too with ordered piles)
_SEAT_ROWS = ("hand", "pile", "pile_n", "pile_rand", "face_up", "known", "unknown", "pile_known", "pile_unknown",
              "table_down")


def _stored(field: str, value: Any) -> Any:
    """A game array (numpy or JAX) as the State stores it: the per-kind counts as int8."""
    return value.astype(np.int8) if field in _COUNTS else value


@dataclass
class State(CardState):
    """A Battlecards position (the game arrays of the module table after Pgx's fields)."""

    name: ClassVar[str] = "battlecards_v0"

    _hand: jax.Array
    _pile: jax.Array
    _pile_n: jax.Array
    _pile_rand: jax.Array
    _face_up: jax.Array
    _up_order: jax.Array
    _table_up: jax.Array
    _table_down: jax.Array
    _table_buried: jax.Array
    _table_kind: jax.Array
    _table_owner: jax.Array
    _discard: jax.Array
    _composition: jax.Array
    _set_aside: jax.Array
    _known: jax.Array
    _unknown: jax.Array
    _pile_known: jax.Array
    _pile_unknown: jax.Array
    _active: jax.Array
    _phase: jax.Array
    _leader: jax.Array
    _round_card: jax.Array
    _fighting: jax.Array
    _entry: jax.Array
    _participant: jax.Array
    _stuck: jax.Array
    _war_level: jax.Array
    _queue: jax.Array
    _bury_left: jax.Array
    _commit_rest: jax.Array
    _joker_value: jax.Array
    _retire_level: jax.Array
    _rounds: jax.Array
    _shares: jax.Array
    _paid: jax.Array
    _early: jax.Array
    _winners: jax.Array


class Flow(NamedTuple):
    """What one step still has to do (not part of the State)."""

    seed: Any  #: uint32 drawn from the step's key
    counter: Any  #: uint32: random words used so far
    todo: Any  #: _DONE / _RESOLVE / _COMMIT (the war procedure)
    resume: Any  #: the commitment of ``current`` goes on after its BURY decisions
    end_round: Any  #: the round is won (``winner``) or ends in a last-card tie (``tie``)
    winner: Any
    tie: Any
    over: Any  #: the game ends without ending the round (cease fire, A29)
    over_set: Any  #: its winner set


class Moves(NamedTuple):
    """Cards a step moves from the face-down piles (per seat): see ``Env._move``."""

    recycle_first: Any  #: recycle before drawing (hand and pile empty, R6 / R11a)
    to_hand: Any
    to_table: Any
    rest: Any


# -- small helpers ----------------------------------------------------------------------------------------


def _one_hot(index: jax.Array, size: int) -> jax.Array:
    return jnp.arange(size) == index


# Helpers on game arrays with any trailing batch axes (none for one state, ``(B,)`` with the batch last:
# ``batch_last``): seats on axis 0, kinds on axis 1 of a per-seat-and-kind array. Sums are written as adds of
# slices, so a batch-last array is reduced with whole-row vector adds (XLA's CPU reductions over a leading or
# middle axis compile to scalar loops). One game's arrays (the full step, also under ``vmap`` in the rare
# step's slots) are reduced with one reduction: there XLA fused the slice adds into every consumer and computed
# them again for each of its entries.


def _column(size: int, like: jax.Array) -> jax.Array:
    """``0 .. size-1`` along axis 0, broadcasting against ``like``'s batch axes."""
    return jnp.arange(size, dtype=jnp.int32).reshape((size,) + (1,) * jnp.ndim(like))


def _seat_hot(seat: jax.Array, n: int) -> jax.Array:
    """``(n, *batch)``: True in ``seat``'s row."""
    return _column(n, seat) == seat


def _kind_hot(kind: jax.Array) -> jax.Array:
    """``(14, *batch)`` one-hot of a kind (none for -1 or ``NUM_KINDS``); ``kind`` of shape ``batch``."""
    return _column(NUM_KINDS, kind) == kind


#: the one-game reduction of each elementwise ``op`` of :func:`_over_seats`
_REDUCTION: dict[Any, Callable[[jax.Array], jax.Array]] = {
    jnp.add: jnp.sum, jnp.maximum: jnp.max, jnp.minimum: jnp.min, jnp.logical_and: jnp.all, jnp.logical_or: jnp.any}


def _over_seats(x: jax.Array, op: Any = jnp.add) -> jax.Array:
    """``x`` reduced over its seat axis (axis 0) with ``op`` (bools add as int32)."""
    if op is jnp.add and x.dtype == jnp.bool_:
        x = x.astype(jnp.int32)
    if x.ndim == 1 and not jnp.issubdtype(x.dtype, jnp.floating):  # one game: one reduction (float sums in order)
        return _REDUCTION[op](x)
    return functools.reduce(op, [x[s] for s in range(x.shape[0])])


def _over_kinds(x: jax.Array) -> jax.Array:
    """Per-seat totals of a ``(n, 14, *batch)`` array of per-kind counts."""
    if x.ndim == 2:  # one game
        return x.sum(1)
    return functools.reduce(jnp.add, [x[:, k] for k in range(NUM_KINDS)])


def _get_columns(rows: jax.Array, leaf: jax.Array) -> jax.Array:
    """``leaf[..., rows]`` for sorted ``rows`` (past the end: the last column)."""
    return leaf.at[..., rows].get(mode="clip", indices_are_sorted=True)


def _of(x: jax.Array, seat: jax.Array) -> jax.Array:
    """``x[seat]`` of a per-seat array (``(n, ...)``, ``seat`` per game), as selects."""
    row = x[0]
    for s in range(1, x.shape[0]):
        row = jnp.where(seat == s, x[s], row)
    return row


def _kind_counts(kinds: jax.Array) -> jax.Array:
    """Per-kind counts of the last axis of ``kinds`` (-1 entries count for none)."""
    return (kinds[..., None] == _KINDS).sum(-2, dtype=jnp.int32)


def _word_at(seed: jax.Array, index: Any) -> jax.Array:
    """The step's random uint32 word number ``index`` (its seed and the index hashed)."""
    index = jnp.asarray(index).astype(jnp.uint32)
    return mix32(mix32(index * _GOLDEN + seed) ^ seed)


def _words(flow: Flow, shape: tuple[int, ...]) -> tuple[Flow, jax.Array]:
    """Fresh random uint32 words of a static shape."""
    size = int(np.prod(shape))
    return _words_at(flow, jnp.arange(size, dtype=jnp.uint32).reshape(shape), size)


def _words_at(flow: Flow, index: Any, taken: int) -> tuple[Flow, jax.Array]:
    """The words ``index`` (offsets from the flow's counter) of the next ``taken`` fresh words, all of them taken."""
    words = _word_at(flow.seed, flow.counter + jnp.asarray(index, jnp.uint32))
    return flow._replace(counter=flow.counter + jnp.uint32(taken)), words


def _retired(kind: jax.Array | np.ndarray, retire_level: jax.Array) -> jax.Array:
    """R21: a natural card of value at or below the retirement level is retired when drawn."""
    return (kind != JOKER_KIND) & (kind + 2 <= retire_level)


def _top_cards(pile: jax.Array, pile_n: jax.Array, count: int) -> jax.Array:
    """The kinds of the top ``count`` cards of each ordered pile (seats on axis 0, slots on axis 1, the top at
    ``pile_n - 1``; any trailing batch axes), top first on axis 1, 0 past the bottom. A gather: a select over every
    slot of the piles cost about 15 times more (4 seats, 1,024 games, batch axis last)."""
    slot = pile_n[:, None] - 1 - np.arange(count).reshape((1, count) + (1,) * (pile_n.ndim - 1))
    return jnp.where(slot >= 0, jnp.take_along_axis(pile, jnp.maximum(slot, 0), axis=1).astype(jnp.int32), 0)


def _draw_sequence(words: list[jax.Array], running: jax.Array | list[jax.Array]) -> list[jax.Array]:
    """The kinds of cards drawn one after another, each uniformly at random among those left, from a multiset
    given by its running totals over the kinds (``running``: kinds on axis 0, any shape after it, or a list of the
    kinds' rows), draw ``j`` with ``words[j]``: draw ``j`` takes the card at a uniform index among the ``total - j``
    left, in the order of kinds (as :func:`_draws_until_kept` and :func:`_draw_kinds` do). The indices are decoded
    into positions in the whole multiset as a Lehmer code, backwards (draw ``j`` moves up by one for every earlier
    draw ``i`` at or below it), unrolled over the few draws; draws past the multiset's size give a kind of no
    meaning."""
    index = [_below(word, running[-1] - j) for j, word in enumerate(words)]
    position = list(index)
    for i in reversed(range(len(words) - 1)):
        for j in range(i + 1, len(words)):
            position[j] = position[j] + (position[j] >= index[i])
    return [_kind_at(running, at) for at in position]


def _pile_kinds(top: jax.Array, pile_n: jax.Array, shuffled: jax.Array, seed: jax.Array, first_word: Any,
                at_random: bool = True) -> list[jax.Array]:
    """The kinds of each seat's next ``top.shape[1]`` draws from its face-down pile (seats on axis 0, draws on axis 1
    of ``top``, any trailing batch axes): the top cards of an ordered pile (``top``: the kinds of its top cards, top
    first, ``pile_n`` of them, :func:`_top_cards`), or cards drawn one after another uniformly at random from a
    ``shuffled`` pile (per-kind counts; draw ``j`` with the step's word ``first_word + j``, ``first_word`` per seat;
    not ``at_random``: every pile is in order). One array a draw, each computed once (every kind's count reads it);
    draws past a pile's size give a kind of no meaning."""
    kinds = [top[:, j] for j in range(top.shape[1])]
    if at_random:
        running = computed_once(jnp.stack(list(itertools.accumulate(shuffled[:, k] for k in range(NUM_KINDS)))))
        first_word = jnp.asarray(first_word, jnp.uint32)
        kinds = _draw_sequence([_word_at(seed, first_word + np.uint32(j)) for j in range(top.shape[1])], running)
    return [computed_once(jnp.where(pile_n > 0, top[:, j], kind)) for j, kind in enumerate(kinds)]


def _first_draws(kinds: list[jax.Array], size: jax.Array, wanted: jax.Array,
                 retire_level: jax.Array) -> tuple[jax.Array, ...]:
    """R4 with R21, each seat's first ``len(kinds)`` draws at most (seats on axis 0, any trailing batch axes): the
    cards ``kinds`` (:func:`_pile_kinds`) from the top of a pile of ``size`` cards, until it keeps ``wanted`` cards
    or the pile is empty; retired cards are discarded. Returns the cards kept, the pile left, and the cards drawn
    and the retired ones among them (per kind, on axis 1)."""
    columns = _column(NUM_KINDS, size[0])
    kept, made = jnp.zeros_like(wanted), jnp.zeros_like(wanted)
    drawn = retired = jnp.zeros((size.shape[0], NUM_KINDS, *size.shape[1:]), jnp.int32)
    for j, kind in enumerate(kinds):
        go = (kept < wanted) & (j < size)
        hot = (kind[:, None] == columns) & go[:, None]
        gone = _retired(kind, retire_level)
        kept, made = kept + (go & ~gone), made + go
        drawn, retired = drawn + hot, retired + (hot & gone[:, None])
    drawn, retired = computed_once(drawn), computed_once(retired)  # read by several of the caller's updates
    return kept, size - made, drawn, retired


def _drawn_card(kind: jax.Array, go: jax.Array, kept: jax.Array, drawn: jax.Array,
                retire_level: jax.Array) -> tuple[jax.Array, jax.Array]:
    """R4 with R21, one draw of a kind from each pile where ``go`` (kinds on the last axis of ``drawn``): the cards
    kept (unless retired) and drawn so far, after it."""
    return kept + (go & ~_retired(kind, retire_level)), drawn + ((_KINDS == kind[..., None]) & go[..., None])


def _draws_until_kept(seed: jax.Array, first_word: jax.Array, shuffled: jax.Array, wanted: jax.Array,
                      retire_level: jax.Array) -> jax.Array:
    """R4 with R21 from shuffled piles (per-kind counts, kinds on the last axis; a pile per seat before it):
    cards drawn one at a time, uniformly from what is left (draw ``j`` with the step's word ``first_word + j``),
    until ``wanted`` are kept or the pile is empty. Returns the cards drawn, per kind (the retired ones among them
    are those of a retired kind). A loop with only the piles in it, ``_DRAWS_A_PASS`` draws a pass
    (:func:`_draw_sequence`; those after a fill is done are dropped): under ``vmap`` it runs as long as the longest
    fill of the batch. XLA fuses a pass's draws into each of its outputs and decodes them again for every kind's
    count (fusions of about 455 instructions); decoding them once (``computed_once`` of the stacked kinds) launched
    19 more kernels a call of the rare step and took 1.04x the time (cfg2, paired, 256 games, 2026-11-30)."""

    def more(carry: tuple[jax.Array, ...]) -> jax.Array:
        pile, kept, _, _ = carry
        return ((kept < wanted) & (pile.sum(-1) > 0)).any()

    def draw(carry: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        pile, kept, drawn, j = carry
        running = list(itertools.accumulate(pile[..., k] for k in range(NUM_KINDS)))
        words = [_word_at(seed, first_word + j + np.uint32(i)) for i in range(_DRAWS_A_PASS)]
        taken = jnp.zeros_like(pile)
        for i, kind in enumerate(_draw_sequence(words, running)):
            kept, taken = _drawn_card(kind, (kept < wanted) & (i < running[-1]), kept, taken, retire_level)
        return pile - taken, kept, drawn + taken, j + np.uint32(_DRAWS_A_PASS)

    start: tuple[jax.Array, ...] = (shuffled, jnp.zeros(jnp.shape(wanted), jnp.int32), jnp.zeros_like(shuffled),
                                    jnp.uint32(0))
    return jax.lax.while_loop(more, draw, start)[2]


def _ordered_draws(pile: jax.Array, pile_n: jax.Array, wanted: jax.Array, level: jax.Array,
                   start: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
    """R4 with R21 from ordered piles (a seat's slots on axis 1, its top at ``pile_n - 1``), going on from
    ``start`` (the cards made, kept, and drawn per kind, so far): the next ``_DRAWS_A_PASS`` cards from the top a
    pass, until ``wanted`` are kept or the pile is empty (none from a shuffled pile: ``pile_n`` is 0). A loop over
    the few cards a fill draws: a pass over every slot of the piles (suffix sums of the keepable cards above each)
    cost about a fifth of the vmapped full step (4 players, 51 games). Returns the cards made and drawn."""

    def more(carry: tuple[jax.Array, ...]) -> jax.Array:
        made, kept, _ = carry
        return ((kept < wanted) & (made < pile_n)).any()

    def draw(carry: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        made, kept, drawn = carry
        top = _top_cards(pile, pile_n - made, _DRAWS_A_PASS)
        for j in range(_DRAWS_A_PASS):
            go = (kept < wanted) & (made < pile_n)
            (kept, drawn), made = _drawn_card(top[:, j], go, kept, drawn, level), made + go
        return made, kept, drawn

    made, _, drawn = jax.lax.while_loop(more, draw, start)
    return made, drawn


def _when(do: jax.Array, step: Callable[[Any], Any], x: Any) -> Any:
    """``step(x)`` if ``do``, else ``x`` (for a ``step`` that leaves ``x`` as it is where it has nothing to do): a
    while loop of at most one pass, so that under ``vmap`` (the rare step's slots) ``step`` runs only when one of
    the games needs it; a ``cond`` becomes a select there and runs ``step`` for every game."""
    return jax.lax.while_loop(lambda carry: carry[0], lambda carry: (jnp.bool_(False), step(carry[1])),
                              (jnp.asarray(do), x))[1]


def _below(words: jax.Array, bound: jax.Array) -> jax.Array:
    """Uniform integers in ``[0, bound)`` from random words (24 bits; 0 when ``bound`` is 0)."""
    unit = (words >> 8).astype(jnp.float32) * jnp.float32(1.0 / (1 << 24))
    return jnp.minimum((unit * bound.astype(jnp.float32)).astype(jnp.int32), jnp.maximum(bound - 1, 0))


def _seat_words(first_word: Any, n: int, batch_axes: int = 0) -> jax.Array:
    """The step's word of each seat's first fill draw, ``first_word + p * _FILL_WORDS`` for seat ``p`` (seats on
    axis 0, ``batch_axes`` axes after it): the common step's refill and the full step's fills take the same words,
    so both draw the same cards."""
    seats = np.arange(n, dtype=np.uint32).reshape((n,) + (1,) * batch_axes)
    return jnp.asarray(first_word, jnp.uint32) + seats * np.uint32(_FILL_WORDS)


def _marked_before(marked: jax.Array, group: jax.Array | int = 0) -> jax.Array:
    """Per slot ``i`` of ``marked`` (0/1, one axis: the table's slots), how many slots before it are marked and of
    its ``group``: a compare of every pair of slots, summed (XLA's CPU cumsum is a reduce-window: the three cumsums
    this replaced were about a quarter of the vmapped full step with ordered piles, 6 players; a product with a
    triangular matrix was as slow, in transposes)."""
    size = marked.shape[0]
    earlier = np.tril(np.ones((size, size), np.bool_), -1)  # earlier[i, j]: j < i
    same = jnp.asarray(group)[:, None] == jnp.asarray(group)[None, :] if jnp.ndim(group) else True
    pairs = earlier & marked[None, :] & same
    half = (size + 1) // 2  # sums of at most 32 terms: XLA's CPU code splits longer ones into a reduce-window
    return pairs[:, :half].sum(1, dtype=jnp.int32) + pairs[:, half:].sum(1, dtype=jnp.int32)


def _running_total(counts: jax.Array) -> jax.Array:
    """Cumulative sums over the 14 kinds (a broadcast sum: XLA's CPU cumsum is slow for short rows)."""
    return (counts[..., :, None] * _UPPER).sum(-2)


def _sample(words: jax.Array, running: jax.Array) -> jax.Array:
    """The kind of a uniformly random card of each per-kind multiset, given by its running totals
    (:func:`_running_total`): the first kind whose running total exceeds a uniform index."""
    return (running <= _below(words, running[..., -1])[..., None]).sum(-1)


def _kind_at(running: Any, position: jax.Array) -> jax.Array:
    """The kind of the card at ``position`` in a multiset sorted by kind, given its running totals (one row per
    kind, whole rows of the batch): the number of kinds whose running total is at or below it."""
    return functools.reduce(jnp.add, [(total <= position).astype(jnp.int32) for total in running])


def _sample_rows(words: jax.Array, counts: jax.Array) -> jax.Array:
    """:func:`_sample` of per-kind counts ``(n, 14, *batch)`` (kinds on axis 1, module helpers): the same
    kinds from the same words, with running totals as adds of slices."""
    running = list(itertools.accumulate(counts[:, k] for k in range(NUM_KINDS)))
    return _kind_at(running, _below(words, running[-1]))


def _draw_kinds(words: jax.Array, first: jax.Array, second: jax.Array, from_first: jax.Array,
                from_second: jax.Array) -> jax.Array:
    """Cards drawn one after another, each uniformly at random among those left: ``from_first`` from the
    multiset ``first`` (per-kind counts), then ``from_second`` from ``second``; for every row at once, without
    a loop over the batch. Returns the kind of draw ``i`` (``words.shape[-1]`` draws), ``NUM_KINDS`` beyond.

    Draw ``i`` picks the ``v_i``-th card not yet taken (``v_i`` uniform), in the list of both multisets sorted
    by kind; a position's kind comes from the running totals. The positions are decoded from the ``v_i`` as a
    Lehmer code, backwards: draw ``j`` moves up by one for every earlier draw ``i`` at or below it (a loop of
    whole-array steps, which also keeps XLA from computing the random words again for every compared kind)."""
    most = words.shape[-1]
    size_first, size_second = first.sum(-1), second.sum(-1)
    draw = np.arange(most)
    second_pile = draw >= from_first[..., None]
    left = jnp.where(second_pile, (size_second + from_first)[..., None] - draw, size_first[..., None] - draw)
    index = jnp.where(second_pile, (size_first - from_first)[..., None], 0) + _below(words, left)

    def decode(step: jax.Array, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        position, index = carry
        i = most - 2 - step
        return position + ((draw > i) & (position >= jax.lax.dynamic_index_in_dim(index, i, -1))), index

    position, _ = jax.lax.fori_loop(0, most - 1, decode, (index, index))
    # the kind: running totals at or below the position, in the first multiset, then in the second
    kind = sum((running[..., None, :] <= position[..., None]).sum(-1, dtype=jnp.int32)
               for running in (_running_total(first), size_first[..., None] + _running_total(second)))
    kind = kind - jnp.where(position >= size_first[..., None], NUM_KINDS, 0)
    return jnp.where(draw < (from_first + from_second)[..., None], kind, NUM_KINDS)


def _drawn_rows(words: jax.Array, counts: jax.Array, taken: jax.Array) -> jax.Array:
    """Per-kind counts ``(14, *batch)`` of ``taken`` cards drawn one after another, each uniformly at random
    among those left, from the multiset ``counts`` (``(14, *batch)``), one word of ``words`` (``(draws,
    *batch)``) per draw: the cards :func:`_draw_kinds` draws from one multiset with the same words, written on
    whole rows (batch axes last), the Lehmer decoding unrolled over the few draws."""
    draws = words.shape[0]
    # computed once, as the drawn kinds: each kind's row reads them
    running = computed_once(jnp.stack(list(itertools.accumulate(counts[k] for k in range(NUM_KINDS)))))
    kinds = jnp.stack(_draw_sequence(list(words), running))
    draw = np.arange(draws).reshape((draws,) + (1,) * jnp.ndim(taken))
    kinds = computed_once(jnp.where(draw < taken, kinds, NUM_KINDS))
    return jnp.stack([functools.reduce(jnp.add, [(kinds[j] == k).astype(jnp.int32) for j in range(draws)])
                      for k in range(NUM_KINDS)])


def _per_kind(kinds: jax.Array, where: jax.Array | np.ndarray) -> jax.Array:
    """Per-kind counts of the cards ``kinds[..., i]`` with ``where[..., i]`` (a sum of compares per draw: XLA's
    CPU code for a reduction over the middle axis is slow)."""
    return functools.reduce(jnp.add, [(jnp.where(where[..., i], kinds[..., i], NUM_KINDS)[..., None] == _KINDS)
                                      .astype(jnp.int32) for i in range(kinds.shape[-1])])


def _scaled(parts: list[Any]) -> list[jax.Array]:
    """The observation's parts (entries on axis 0, in order) as float32 times their entries' ``SCALE``, each
    part on its own: the products are fused into the parts, so the concatenated observation is written once
    (a product after the concatenation read and wrote all 533 rows again)."""
    out, start = [], 0
    for part in parts:
        stop = start + part.shape[0]
        scale = SCALE[start:stop]
        part = jnp.asarray(part, jnp.float32)
        out.append(part if (scale == 1).all() else part * scale.reshape((-1,) + (1,) * (part.ndim - 1)))
        start = stop
    return out


def _wrap(seat: jax.Array, n: int) -> jax.Array:
    """``seat mod n`` for ``0 <= seat < 2 n`` (a compare and a select: XLA's CPU integer remainder is slow)."""
    return jnp.where(seat >= n, seat - n, seat)


def _value(kind: jax.Array, joker_value: jax.Array) -> jax.Array:
    """R2 / R20: the value of a kind (a joker is worth ``jv``)."""
    return jnp.where(kind == JOKER_KIND, joker_value, kind + 2)


def _take_known(known: jax.Array, unknown: jax.Array, cards: jax.Array) -> tuple[jax.Array, jax.Array]:
    """7.5: cards (per owner and kind) of the owners' hidden holdings became public: each leaves ``K_p``
    if its kind is there, else ``u_p`` (the same rule for ``F_p`` / ``f_p``)."""
    taken = jnp.minimum(cards, known)
    return known - taken, unknown - _over_kinds(cards - taken)


# -- the environment ------------------------------------------------------------------------------------


class Env(CardEnv[BattlecardsState]):
    """``battlecards_v0`` as a ``pgx.Env``; see the module docstring, and the env's docstring
    (``help(card_envs.battlecards_v0)``) for the observation, action and reward tables."""

    game: Battlecards
    config: BattlecardsConfig

    name = "battlecards_v0"
    state_class = State
    batch_last = True  # step_batch_last: the common step vectorised across games (card_envs.jax.core)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        c = self.config
        self.n = c.num_players
        self.deck_size = MAX_DECK if c.jokers else 52
        #: recycles and the tie deal keep chronological order: piles, face-up piles and the table in order
        self.ordered = not c.shuffle_mid_game
        self.retire = c.retire_lowest_on_flip
        #: the most cards a seat moves in one step: a hand-empty war fill and a commitment (R11a-d), or a refill
        self._most = c.hand_size + c.war_facedown_count
        self.deck_kinds = np.asarray(KIND, np.int32)[sorted_deck(c.jokers)]
        self.composition = np.bincount(self.deck_kinds, minlength=NUM_KINDS).astype(np.int32)
        self.round_fraction: np.ndarray | None = None
        if c.max_rounds is not None and c.max_rounds <= 1 << 16:
            # obs[513] is rounds / max_rounds in float64, then float32 (encoding.py): the same numbers
            self.round_fraction = (np.arange(c.max_rounds + 1) / c.max_rounds).astype(np.float32)

    # -- Pgx API -------------------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> State:
        c, n, size = self.config, self.n, self.deck_size
        deal_key, leader_key = jax.random.split(key)
        flow = self._flow(deal_key)
        k = size // n
        dealt = min(c.hand_size, k)
        deck = self._shuffled_deck(flow)  # 3.2: kinds, index 0 = top
        # 3.3: card i goes to player i mod N, the first card a player receives is the top of its pile (A3);
        # 3.4: the first ``dealt`` cards of each pile go to the hand (A7); the rest is set aside (A4)
        received = np.arange(n)[:, None] + n * np.arange(k)[None, :]  # (N, k): deck index, top first
        hand = _kind_counts(deck[received[:, :dealt]])
        below_top = received[:, dealt:][:, ::-1]  # the pile, bottom first: the top at index k - dealt - 1
        pile = jnp.zeros((n, size), jnp.int8).at[:, :k - dealt].set(deck[below_top].astype(jnp.int8))
        zeros = jnp.zeros((n, NUM_KINDS), jnp.int32)
        leader = (jax.random.randint(leader_key, (), 0, n, jnp.int32) if c.first_leader is None  # A5
                  else jnp.int32(c.first_leader))
        g = Game(
            current=leader, rewards=jnp.zeros(n, jnp.float32), terminated=jnp.bool_(False),
            truncated=jnp.bool_(False), hand=hand, pile=pile, pile_n=jnp.full(n, k - dealt, jnp.int32),
            pile_rand=zeros, face_up=zeros, up_order=jnp.zeros((n, size if self.ordered else 0), jnp.int8),
            table_up=zeros, table_down=zeros, table_buried=zeros,
            table_kind=jnp.zeros(size if self.ordered else 0, jnp.int8),
            table_owner=jnp.zeros(size if self.ordered else 0, jnp.int8),
            discard=jnp.zeros(NUM_KINDS, jnp.int32), composition=jnp.asarray(self.composition),
            set_aside=jnp.int32(size - n * k), known=zeros, unknown=jnp.full(n, k, jnp.int32),
            pile_known=zeros, pile_unknown=jnp.full(n, k - dealt, jnp.int32), active=jnp.ones(n, jnp.bool_),
            phase=jnp.int32(LEAD), leader=leader, round_card=jnp.full(n, -1, jnp.int32),
            fighting=jnp.full(n, -1, jnp.int32), entry=jnp.zeros(n, jnp.int32),
            participant=jnp.zeros(n, jnp.bool_), stuck=jnp.zeros(n, jnp.bool_), war_level=jnp.int32(0),
            queue=jnp.int32(0), bury_left=jnp.int32(0), commit_rest=jnp.int32(0),
            joker_value=jnp.int32(c.joker_initial_value), retire_level=jnp.int32(1), rounds=jnp.int32(0),
            shares=jnp.full(n, 1.0 / n, jnp.float32), paid=jnp.zeros(n, jnp.float32),
            early=jnp.zeros(n, jnp.bool_), winners=jnp.zeros(n, jnp.bool_),
        )
        return State(observation=jnp.zeros(OBSERVATION_SIZE, jnp.float32),
                     legal_action_mask=jnp.zeros(NUM_KINDS, jnp.bool_), _step_count=jnp.int32(0),
                     **self._fields(g))

    def _shuffled_deck(self, flow: Flow) -> jax.Array:
        """The kinds of a uniformly shuffled deck: each position a uniformly random card of those left."""
        size = self.deck_size
        _, words = _words(flow, (size,))

        def place(i: jax.Array, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
            running, deck = carry
            kind = _sample(words[i], running)
            return running - (_KINDS >= kind), deck.at[i].set(kind)

        running = jnp.asarray(np.cumsum(self.composition).astype(np.int32))
        return jax.lax.fori_loop(0, size, place, (running, jnp.zeros(size, jnp.int32)))[1]

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        """One state (and ``jax.vmap``): :meth:`_full_step`. A batch with the batch axis last
        (``step_batch_last``): :meth:`_common_step` for every game, vectorised across games, and the full step
        for the few games it does not cover (:meth:`_rare_steps`)."""
        if key is None:
            raise ValueError("battlecards_v0 draws at random in its steps: _step needs a key")
        if jnp.ndim(state._phase) == 0:
            return self._full_step(state, action, key)
        seeds = jax.vmap(self.step_seed)(key)
        common, covered = self._common_step(self._game(state), action, seeds)
        g = self._rare_steps(state, action, key, common, covered)
        # a pile only loses cards from its top in the common step (and without shuffle_mid_game=False in the full
        # step too: recycles make shuffled piles): its slots are emptied past its new size here, for every game at
        # once, not in the steps
        slots = np.arange(self.deck_size).reshape(1, -1, 1)
        return state.replace(**self._fields(g._replace(pile=jnp.where(slots < g.pile_n[:, None], g.pile, 0))))

    def _full_step(self, state: State, action: jax.Array, key: jax.Array) -> State:
        """Any decision of one state: the war procedure, recycles, ties and retirement included."""
        return state.replace(**self._fields(self._full_game_step(self._game(state), action, key)))

    def _full_game_step(self, g: Game, action: jax.Array, key: jax.Array) -> Game:
        g = g._replace(rewards=jnp.zeros(self.n, jnp.float32))
        g, flow = self._decide(g, self._flow(key), action.astype(jnp.int32))
        if self.retire:
            g, flow = self._close_round(*self._war_retiring(g, flow))
            g = self._refill_retiring(g, flow)
        else:  # one pass: either the commitments up to the next BURY decision, or the end of the round
            g, flow, moves = self._war(g, flow)
            g, flow = self._close_round(g, flow)
            moves = jax.tree.map(lambda refill, war: jnp.where(flow.end_round, refill, war),
                                 self._refill_moves(g, flow.end_round), moves)
            g = self._recycle(g, moves.recycle_first)
            g, flow, _ = self._move(g, flow, moves.to_hand, moves.to_table, moves.rest, self._most)
        g = self._after_refill(g, flow)
        return g._replace(queue=jnp.where(g.phase == BURY, g.queue, 0))  # only a BURY decision resumes the queue

    def _war_retiring(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        """The war procedure with R21 (:meth:`_war`), one commitment a pass: the retirement level moves with every
        recycle. (Measured and not kept, 2026-11-30: a pass made of one seat's R11a fill and then every commitment
        down to the next seat that needs a fill or owes BURY decisions, each seat drawing with the words of a pass of
        its own, so every state came out the same on every game of 100 positions of cfg2, cfg4 and cfg6. By a count of
        150 positions it cut a position's longest war from 1.95 passes to about 1.2 with 4 players, and the loop's XLA
        kernels by 5-7%, but not its time: 1.03x with 4 players and 0.98x with 6, paired at 256 games, one core, 9
        repeats; it moves every seat's rows again, which :meth:`_move_seat` had replaced for 0.96-0.99x the time.)"""
        return jax.lax.while_loop(lambda c: c[1].todo != _DONE, lambda c: self._war(*c)[:2], (g, flow))

    def _refill_retiring(self, g: Game, flow: Flow) -> Game:
        """R16.2 FILL with R21 in the full step (when the round ended): every active seat (:meth:`_fill_retiring`)."""
        return self._fill_retiring(g, flow.seed, flow.end_round & g.active, _REFILL_WORDS)

    # -- the common step (a batch, the batch axis last) and the rare one ------------------------------------

    def _common_step(self, g: Game, action: jax.Array, seed: jax.Array) -> tuple[Game, jax.Array]:
        """The step of most decisions, on game arrays with trailing batch axes: a decision (R7, R11c, R12) that
        leaves the war procedure nothing to do, or a LEAD or FOLLOW decision that ends the round with a single
        winner (R8, R14) and a refill (R16.2) that :meth:`_refill` or, with retirement, :meth:`_retiring_refill`
        covers, then R16.3-R19 as in :meth:`_full_step`; with retirement (and ``shuffle_mid_game``) also a WAR_UP
        decision that resolves a war with a single winner (R13, R14), when that refill covers it, and a tie that
        starts a war level or a BURY decision that ends its commitment, up to the next decision
        (:meth:`_common_commitments`). Returns the game after it and whether that covers the step (else the full
        step makes it)."""
        n = self.n
        g = g._replace(rewards=jnp.zeros((n, *jnp.shape(seed)), jnp.float32))
        round_card = g.phase <= FOLLOW  # OVER too: the core discards that step
        flow = Flow(seed=seed, counter=jnp.uint32(0), todo=jnp.int32(_DONE), resume=False, end_round=False,
                    winner=jnp.int32(0), tie=False, over=False, over_set=False)
        g, flow = self._decide(g, flow, action)
        resolve = flow.todo == _RESOLVE
        contenders = jnp.where(g.war_level > 0, g.participant, g.active)  # R8 / R13, as in _war
        values = jnp.where(contenders, _value(g.fighting, g.joker_value), -1)
        tied = computed_once(contenders & (values == _over_seats(values, jnp.maximum)))
        single = _over_seats(tied) == 1
        end = computed_once(resolve & single)
        winner = computed_once(_over_seats(jnp.where(tied, _column(n, seed), n), jnp.minimum))
        committed: jax.Array | bool = False
        kinds: list[jax.Array] = []
        if self.retire:  # a war that starts (or a BURY decision's commitment that ends) up to its next decision
            g, committed, kinds = self._common_commitments(g, flow, resolve & ~single, tied, end)
        # a war's resolution: only where the refill draws several cards a seat (a war's participants played two or
        # more cards from their hands), and the winner's face-up pile is counted, not ordered (_collect_round)
        ends_war = self.retire and not self.ordered
        if ends_war:
            g = self._reveal(g, end)
        g = self._clear_table(self._win_round(g, end, winner), end)
        g, refilled = self._retiring_refill(g, flow, end, kinds) if self.retire else self._refill(g, flow, end)
        # a decision that leaves the war procedure nothing to do (a FOLLOW, a BURY or WAR_UP decision with more
        # to come) is covered whatever the phase: the full step would only make the decision
        covered = (flow.todo == _DONE) | (end & (round_card | ends_war) & refilled) | committed
        return self._after_refill(g, flow._replace(end_round=end, winner=winner)), covered  # pile: see _step

    def _common_commitments(self, g: Game, flow: Flow, start: jax.Array, tied: jax.Array,
                            end: jax.Array) -> tuple[Game, jax.Array, list[jax.Array]]:
        """R10-R12 with retirement in the common step: where a war level starts (``start``: the ``tied`` seats
        play it) or a BURY decision ends its seat's commitment, the face-down phase in reverse entry order up to
        the next BURY decision, or up to the face-up phase (R12's first WAR_UP decision). After BURY decisions the
        face-down cards their commitment still owes (``commit_rest``) come from the seat's recycled face-up pile
        (R11d, R5, R21: the retirement level rises), with shuffled piles only. Covered when every seat it reaches
        then commits from its hand and pile alone (R11b, R11c): no R11a fill (its hand is not empty), no R11d
        recycle (its pile holds ``war_facedown_count`` cards, or it owes BURY decisions for all the missing ones),
        and nobody stuck. Returns the game after it (unchanged elsewhere), where it is covered, and the kinds of
        every seat's first draws from its pile (:func:`_pile_kinds`): those of its commitment, and where the round
        ends (``end``) those of the refill (:meth:`_retiring_refill`), drawn in one go (the games are not the
        same).

        The full step makes one commitment a pass of :meth:`_war_retiring` (pass 0: a war level's first
        commitment, or what the BURY decision's commitment still owes), and a pass's draws from a shuffled pile
        take the words after its fills' (:meth:`_war`, :meth:`_move`): a seat's face-down cards are drawn here with
        the words of its pass, so both steps place the same cards."""
        c, n, seed = self.config, self.n, flow.seed
        facedown = c.war_facedown_count
        seats = _column(n, seed)
        in_war = g.war_level > 0
        resume = flow.todo == _COMMIT  # the seat that made the BURY decision: g.current
        order = self._from_leader(g)  # R9 / A14 at a war's start: entry order = play order
        position = 1 + _over_seats(tied[:, None] & (order[:, None] < order[None, :]))
        entry = computed_once(jnp.where(start & ~in_war, jnp.where(tied, position, 0), g.entry))
        participant = jnp.where(start, tied, g.participant)
        queue = jnp.where(start, _BEYOND, _of(g.entry, g.current))
        waiting = computed_once((start | resume) & participant & ~g.stuck & (entry < queue))
        in_hand, pile = computed_once(_over_kinds(g.hand)), computed_once(self._pile_sizes(g))
        plain = (in_hand >= 1) & (pile >= facedown)  # R11b: every face-down card from the pile
        buries = (in_hand >= 2) & (pile < facedown)  # R11c: BURY decisions, then (R11d) the rest if any
        above = entry[:, None] > entry[None, :]  # [t, s]: t commits before s
        now = waiting & (_over_seats(above & (waiting & ~plain)[:, None]) == 0)
        # R11d after the BURY decisions (shuffled piles): what the commitment still owes, from the recycled face-up
        # pile (an ordered one would be rewritten slot by slot: left to the full step)
        resumable = (g.commit_rest == 0) if self.ordered else True
        do = computed_once(((start & ~_over_seats(tied & (g.stuck | (in_hand == 0)), jnp.logical_or))
                            | (resume & resumable)) & ~_over_seats(now & ~plain & ~buries, jnp.logical_or))
        now = now & do
        resumed = resume & do & (seats == g.current)
        rest = jnp.where(resumed, jnp.minimum(g.commit_rest, _over_kinds(g.face_up)), 0)
        recycle = computed_once(rest > 0)
        from_pile = computed_once(jnp.where(now, jnp.minimum(facedown, pile), 0))
        count = computed_once(from_pile + rest)
        # the words of a seat's draws: its pass's (a commitment; pass 0 what the BURY decisions' commitment still
        # owes), or the refill's
        passes = jnp.where(resumed, 0, _over_seats(above & waiting[:, None]) + resume)
        first_word = jnp.where(end, _seat_words(_REFILL_WORDS, n, jnp.ndim(seed)), computed_once(
            passes * (n * (_FILL_WORDS + self._most)) + n * _FILL_WORDS + seats * self._most).astype(jnp.uint32))
        draws = max(_COMMON_DRAWS, facedown)
        source = jnp.where(recycle[:, None], g.face_up, g.pile_rand)
        kinds = _pile_kinds(_top_cards(g.pile, g.pile_n, draws), g.pile_n, source, seed, first_word,
                            at_random=not self.ordered)
        placed = computed_once(jnp.stack([functools.reduce(jnp.add, [
            ((kinds[j] == k) & (j < count)).astype(jnp.int32) for j in range(facedown)], jnp.zeros_like(pile))
            for k in range(NUM_KINDS)], axis=1))
        shuffled = g.pile_n == 0
        if self.ordered:  # R23: seat by seat in reverse entry order, after the cards on the table
            g = self._table_placed(g, kinds[:facedown], from_pile,
                                   self._table_size(g) + _over_seats(above * from_pile[:, None]))
        g = g._replace(table_down=g.table_down + placed, pile_n=jnp.where(shuffled, g.pile_n, g.pile_n - from_pile),
                       pile_rand=source - placed * shuffled[:, None],
                       entry=jnp.where(do, entry, g.entry), participant=jnp.where(do, participant, g.participant),
                       war_level=g.war_level + (start & do))
        if not self.ordered:
            g = self._recycled(g, recycle)
        buryer = now & buries
        bury = _over_seats(buryer, jnp.logical_or)
        burials = jnp.where(buryer, jnp.minimum(facedown - from_pile, in_hand - 1), 0)
        first_up, _ = self._next_in_war(g, _BEYOND)  # R12: every commitment made
        g = g._replace(
            phase=jnp.where(do, jnp.where(bury, BURY, WAR_UP), g.phase),
            current=jnp.where(do, jnp.where(bury, _over_seats(jnp.where(buryer, seats, 0)), first_up), g.current),
            bury_left=jnp.where(do, _over_seats(burials), g.bury_left),
            commit_rest=jnp.where(do, _over_seats(jnp.where(buryer, facedown - from_pile, 0) - burials), g.commit_rest),
            queue=jnp.where(do, jnp.where(bury, _over_seats(jnp.where(buryer, entry, 0)), 0), g.queue),
        )
        return g, do, kinds

    def _table_placed(self, g: Game, kinds: list[jax.Array], count: jax.Array, first: jax.Array) -> Game:
        """R23 in the common step (batch axis last): each seat's first ``count`` cards of ``kinds`` (one array a
        card) go to the chronological table from its slot ``first`` on: one scatter an array, every seat's cards at
        once (their slots are distinct; one scatter a card cost about 4% of a 6-player step)."""
        games = jnp.arange(jnp.shape(count)[-1])
        placed = np.arange(len(kinds)).reshape(1, -1, 1)  # [seat, card, game]
        beyond = self.deck_size + np.arange(self.n * len(kinds)).reshape(self.n, -1, 1)  # dropped, and distinct
        at = jnp.where(placed < count[:, None], first[:, None] + placed, beyond).reshape(-1, games.size)
        kind = jnp.stack(kinds, axis=1).astype(jnp.int8).reshape(-1, games.size)
        owner = jnp.broadcast_to(np.arange(self.n, dtype=np.int8).reshape(-1, 1, 1), (self.n, len(kinds), games.size))
        return g._replace(table_kind=g.table_kind.at[at, games].set(kind, mode="drop", unique_indices=True),
                          table_owner=g.table_owner.at[at, games].set(owner.reshape(-1, games.size), mode="drop",
                                                                      unique_indices=True))

    def _refill(self, g: Game, flow: Flow, end: jax.Array) -> tuple[Game, jax.Array]:
        """R16.2 FILL in the common step, without retirement: at most one card each, from the top of an ordered
        pile or at random from a shuffled one; a seat whose hand and pile are empty recycles its face-up pile (R6)
        and draws from it (one seat a game; with ``shuffle_mid_game=False`` none: the full step keeps the order).
        Returns the game after it and whether it covers every seat.

        The refill takes the cards of a shuffled pile from the random words of :meth:`_move`'s draws of that
        seat, so both steps give the same state for the same key."""
        n, seed = self.n, flow.seed
        in_hand, pile = _over_kinds(g.hand), self._pile_sizes(g)
        recycle = computed_once(end & g.active & (in_hand == 0) & (pile == 0))
        draw = computed_once(end & g.active & (jnp.minimum(self.config.hand_size - in_hand, pile) > 0))
        fits = jnp.minimum(self.config.hand_size - in_hand, pile) <= 1
        covered = _over_seats(fits, jnp.logical_and) & (_over_seats(recycle) <= (0 if self.ordered else 1))
        top = _top_cards(g.pile, g.pile_n, 1)[:, 0]
        from_order: jax.Array | bool
        recycled: jax.Array | int
        if self.ordered:  # every pile is in order
            kind = computed_once(jnp.where(draw, top, NUM_KINDS))
            from_order, recycled = True, 0
        else:
            g = self._recycle(g, recycle)
            index = _column(n, seed).astype(jnp.uint32) * jnp.uint32(self._most)  # _move's first draw of each seat
            shuffled = _sample_rows(_word_at(seed, index), g.pile_rand)
            from_order = g.pile_n > 0
            kind = computed_once(jnp.where(draw, jnp.where(from_order, top, shuffled), NUM_KINDS))
            recycled = self._recycled_draws(g, recycle, seed)
        drawn = (_column(NUM_KINDS, seed)[None] == kind[:, None]).astype(jnp.int32)
        pile_known, pile_unknown = _take_known(g.pile_known, g.pile_unknown, drawn + recycled)
        from_rand = drawn * jnp.logical_not(from_order)[:, None] if not self.ordered else 0
        g = g._replace(hand=g.hand + drawn + recycled, pile_rand=g.pile_rand - from_rand - recycled,
                       pile_n=g.pile_n - (draw & from_order), pile_known=pile_known, pile_unknown=pile_unknown)
        return g, covered

    def _retiring_refill(self, g: Game, flow: Flow, end: jax.Array, kinds: list[jax.Array]) -> tuple[Game, jax.Array]:
        """R16.2 FILL with R21 in the common step: every active seat's first draws (:func:`_first_draws`, every
        seat at once, of the ``kinds`` :meth:`_common_commitments` drew with the words of :meth:`_fill_retiring`),
        covered when they fill every hand, with shuffled piles also where one seat recycles a small face-up pile
        (:meth:`_refill_recycled`: the level rises for the seats after it, A34). Returns the game after it and
        whether it covers every seat. (Covering one recycle of any pile, as :meth:`_refill` does without
        retirement, cost more in this step than it saved in the rare one: about 1,300 ns more CPU time per
        decision, 4 players, 1,024 games; so did the small recycle with ordered piles, which moved 6 players'
        rare share only from 14.3% to 13.5%.)"""
        in_hand = _over_kinds(g.hand)
        wanted = jnp.where(end & g.active, self.config.hand_size - in_hand, 0)
        in_order = g.pile_n > 0
        size = computed_once(self._pile_sizes(g))  # else summed again in every entry that reads it
        up = _over_kinds(g.face_up)
        recycles = computed_once((wanted > 0) & (in_hand == 0) & (size == 0) & (up > 0))
        level = g.retire_level
        if not self.ordered:  # one seat recycles: the level rises for the seats after it (A34)
            order = self._from_leader(g)
            after = order > _over_seats(jnp.where(recycles, order, self.n), jnp.minimum)
            level = jnp.where(after, jnp.minimum(level + 1, self.config.retire_max_rank), level)
        kept, left, drawn, retired = _first_draws(kinds[:_COMMON_DRAWS], size, wanted, level)
        shuffled = g.pile_rand - drawn * ~in_order[:, None]
        pending = (kept < wanted) & ((left > 0) | ((in_hand + kept == 0) & (up > 0)))
        if not self.ordered:
            g, drawn, retired, recycled = self._refill_recycled(g, recycles, up, drawn, retired)
            pending = pending & ~recycled
        g = self._drawn_retiring(g, drawn, retired)
        g = g._replace(pile_n=jnp.where(in_order, left, 0), pile_rand=shuffled)
        return g, ~_over_seats(pending, jnp.logical_or)

    def _refill_recycled(self, g: Game, recycles: jax.Array, up: jax.Array, drawn: jax.Array,
                         retired: jax.Array) -> tuple[Game, jax.Array, jax.Array, jax.Array]:
        """R16.2 FILL with R21 in the common step (shuffled piles) of a seat whose hand and pile are empty, where
        exactly one seat of a game ``recycles`` and its face-up pile (``up`` cards) holds at most ``hand_size``
        cards: the pile is recycled (R5, the level rises) and drawn whole (R6: the fill draws until the hand is full
        or the pile is empty, so which card comes when does not matter), its retired cards discarded. (Drawing from
        larger piles here, ``hand_size + 2`` draws decoded for every game, cost more than it saved with 3 players
        and hand 10: 1.27x the time a decision.) The seat's pile is empty before and after, so only the cards
        ``drawn`` and ``retired`` (the other seats' passed through) gain its row. Returns the game recycled, those
        two, and the seats recycled."""
        recycled = computed_once(recycles & (_over_seats(recycles) == 1) & (up <= self.config.hand_size))
        level = jnp.minimum(g.retire_level + 1, self.config.retire_max_rank)
        taken = computed_once(g.face_up * recycled[:, None])
        return self._recycled(g, recycled), drawn + taken, retired + taken * _retired(_KINDS[:, None], level), recycled

    @staticmethod
    def _drawn_retiring(g: Game, drawn: jax.Array, retired: jax.Array) -> Game:
        """R4 with R21: the cards ``drawn`` (per seat and kind) left the piles; the ``retired`` ones among them
        are revealed and discarded, the others go to the hands (the piles' sizes are the caller's)."""
        pile_known, pile_unknown = _take_known(g.pile_known, g.pile_unknown, drawn)
        known, unknown = _take_known(g.known, g.unknown, retired)  # revealed to everyone
        return g._replace(hand=g.hand + drawn - retired, discard=g.discard + _over_seats(retired), known=known,
                          unknown=unknown, pile_known=pile_known, pile_unknown=pile_unknown)

    def _recycled_draws(self, g: Game, recycle: jax.Array, seed: jax.Array) -> jax.Array:
        """The common step's R16.2 FILL of the seat that recycled (``recycle``, at most one per game; batch axis
        last): ``min(hand_size, pile)`` cards of its shuffled pile, per seat and kind, drawn by :func:`_draw_kinds`
        from :meth:`_move`'s random words of that seat (those cards come out the same in both steps)."""
        n, most, draws = self.n, self._most, self.config.hand_size
        seat = _over_seats(jnp.where(recycle, _column(n, seed), 0), jnp.maximum)
        pile = computed_once(_of(g.pile_rand, seat))  # (14, *batch)
        count = jnp.where(_over_seats(recycle, jnp.logical_or), jnp.minimum(draws, _over_kinds(pile[None])[0]), 0)
        index = seat.astype(jnp.uint32) * jnp.uint32(most) + _column(draws, seed).astype(jnp.uint32)
        words = _word_at(seed, index)  # (draws, *batch)
        counts = computed_once(_drawn_rows(words, pile, count))  # (14, *batch)
        return computed_once((_seat_hot(seat, n) & recycle)[:, None] * counts[None])

    @staticmethod
    def _rare_slots(batch: int) -> int:
        """Games of a batch given the full step at a time by :meth:`_rare_steps` (random play: about one step
        in twelve is not covered by the common step at 6 players; a tenth of the batch was 5-10% cheaper per
        decision than a fifth at 2 and 6 players, 512 and 1,024 games a device). With retirement a quarter was
        slower too (4 players, 3 players with hand 10: about 6,900 against 5,900 ns of CPU time a decision, 512
        games), though a round's fixed cost (about 560 us) is larger than its slots' (about 5.5 us each) and a
        tenth often takes two rounds: the full step's loops run as long as the longest of their slots. Rounds of two
        sizes, a ``lax.switch`` between a tenth and a twentieth by the games waiting (3 players with hand 10 wait a
        median of 28 of 51 slots at 512 games), were 1.06-1.12x slower, the switch costing more than the slots it
        saved; one size from 8 to 34 slots (4 and 3 players with retirement, 512 games) moved the loop's time by less
        than the run's noise (+-10%). At 256 games, 32 slots instead of 25 (a second round at 18% of the positions
        against a few; reductions over 32 slots are not split) launched 9% fewer kernels a step with 4 players, but
        took 1.03x the time (1.07x with 3 players and hand 10; paired, 11 repeats): each kernel works on every slot.
        With 6 players (cfg4, 256 games: a median of 30 games wait, a second round at 76% of the positions) 42 slots
        launched 18% fewer kernels a step than 25 and took 1.07x the time (paired, 9 repeats, 2026-11-30): about half
        of a round's time grows with its slots."""
        return min(batch, max(16, batch // 10))

    def _rare_steps(self, state: State, action: jax.Array, keys: jax.Array, common: Game,
                    covered: jax.Array) -> Game:
        """The full step for the games (batch axis last) that the common step does not cover: ``slots`` at a
        time, gathered, stepped under ``vmap`` and scattered into the common results, until none is left.

        A round costs the XLA kernels the vmapped full step launches (4 players with retirement, 51 slots: 847 a call at
        the position ``benchmarks.battlecards_jax_parts --full-step`` takes), each working on every slot. Under ``vmap``
        the war procedure's loop runs every slot through the passes of its longest game (a waiting game needs 1.15
        passes on average, a position's longest 2.15); making every slot's first pass and then the few games with more
        passes in slots of their own (a sixth of the round's, a second vmapped stage) was 1.27x slower, paired in one
        process (256 games, 4 players): the second stage launched more kernels than the passes it saved. Not kept
        either: the loops of the full step on one condition for every slot (the axis named, a ``psum`` of each loop's
        condition, each loop's body leaving an idle slot's carry as it was), which spares ``vmap`` its pass-by-pass
        select of each slot's carry (the whole game in a pass of the war procedure): 5-7% fewer kernels a step of the
        loop (1,101 against 1,158 with 4 players, 1,043 against 1,106 with 3 and hand 10, 1,539 against 1,652 with 6),
        but 0.98x, 1.07x and 1.06x the time paired (256 games, 9-15 repeats): fewer kernels are not faster where each
        costs more."""
        batch = covered.shape[-1]
        slots = self._rare_slots(batch)
        g = self._game(state)

        def take(carry: tuple[Game, jax.Array]) -> tuple[Game, jax.Array]:
            out, waiting = carry
            (rows,) = jnp.nonzero(waiting, size=slots, fill_value=batch)  # batch: past the end, dropped below
            get = functools.partial(_get_columns, rows)
            stepped = jax.vmap(self._full_game_step, in_axes=(-1, -1, 0), out_axes=-1)(
                jax.tree.map(get, g), get(action), get(keys.T).T)
            out = out._replace(**{field: getattr(out, field).at[..., rows].set(
                getattr(stepped, field), mode="drop", indices_are_sorted=True, unique_indices=True)
                for field in self._stepped_fields()})
            return out, waiting.at[rows].set(False, mode="drop")

        return jax.lax.while_loop(lambda carry: carry[1].any(), take, (common, ~covered))[0]

    def _stepped_fields(self) -> tuple[str, ...]:
        """The game arrays :meth:`_rare_steps` copies back from the full step: those it can change, except
        ``pile`` where only its size changes (recycles make shuffled piles; the slots past its size are emptied
        for the whole batch, :meth:`_step`). Copying the state of a slot back (a transpose and a scatter per
        array, with the step's last operations fused into the transposes) was a large part of the cost of the
        rare step: ``pile`` alone is 324 of about 1,100 entries at 6 players."""
        c = self.config
        unchanged = {"composition", "set_aside"}
        if not self.ordered:  # no chronological arrays, and a recycled pile is shuffled (lazily: pile_rand)
            unchanged |= {"pile", "up_order", "table_kind", "table_owner"}
        if not self.retire:
            unchanged |= {"discard", "retire_level"}
        if not c.jokers:
            unchanged.add("joker_value")
        if not c.shaping_weight:
            unchanged.add("shares")
        return tuple(field for field in Game._fields if field not in unchanged)

    def _legal_action_mask(self, state: State) -> jax.Array:
        """Section 8.2: the kinds in the acting player's hand (none once the game is over)."""
        return (_of(state._hand, state.current_player) > 0) & (state._phase != OVER)

    def _observe(self, state: State, player: jax.Array) -> jax.Array:
        return self._encode(self._game(state), player)

    # -- State <-> Game ----------------------------------------------------------------------------------

    def _game(self, state: State) -> Game:
        """The game arrays of ``state``, the per-kind counts (``_COUNTS``) widened to int32 for the step."""
        stored = {f: getattr(state, _PGX_FIELDS.get(f, "_" + f)) for f in Game._fields}
        return Game(**{f: x.astype(jnp.int32) if f in _COUNTS else x for f, x in stored.items()})

    def _fields(self, g: Game) -> dict[str, jax.Array]:
        """The State's fields of ``g``, the per-kind counts (``_COUNTS``) stored as int8."""
        return {_PGX_FIELDS.get(f, "_" + f): _stored(f, getattr(g, f)) for f in Game._fields}

    @staticmethod
    def step_seed(key: jax.Array) -> jax.Array:
        """The uint32 seed of a step's random words (:func:`_word_at`) from the step's key: the key's own words
        hashed (:func:`~card_envs.jax.core.key_words`), not ``jax.random.bits``, whose Threefry XLA on CPU runs
        (under ``vmap``, per game) as a loop of small operations: two of them each step, the common one and the
        rare one's. Both steps seed from it, so they draw the same cards."""
        return key_words(key, 1)[0]

    def _flow(self, key: jax.Array) -> Flow:
        return Flow(seed=self.step_seed(key), counter=jnp.uint32(0), todo=jnp.int32(_DONE),
                    resume=jnp.bool_(False), end_round=jnp.bool_(False), winner=jnp.int32(0),
                    tie=jnp.bool_(False), over=jnp.bool_(False), over_set=jnp.zeros(self.n, jnp.bool_))

    # -- card movements (R4-R6, R11), for every seat at once -------------------------------------------------

    def _pile_sizes(self, g: Game) -> jax.Array:
        return g.pile_n + _over_kinds(g.pile_rand)

    def _held(self, g: Game) -> jax.Array:
        """``c_p``: hand + face-down pile + face-up pile."""
        return _over_kinds(g.hand) + self._pile_sizes(g) + _over_kinds(g.face_up)

    def _table_size(self, g: Game) -> jax.Array:
        return _over_seats(_over_kinds(g.table_up + g.table_down + g.table_buried))

    def _recycled_piles(self, g: Game) -> jax.Array:
        """Every seat's face-up pile as an ordered face-down pile: oldest card on top (A11), i.e. last."""
        slots = np.arange(self.deck_size)
        size = g.face_up.sum(1)[:, None]
        source = jnp.clip(size - 1 - slots, 0, self.deck_size - 1)
        return jnp.where(slots < size, jnp.take_along_axis(g.up_order, source, axis=1), 0).astype(jnp.int8)

    def _recycled(self, g: Game, who: jax.Array) -> Game:
        """The bookkeeping of R5 RECYCLE for the seats ``who`` once their piles are replaced: the face-up
        pile is emptied, its contents become public (7.5), and R21 retires the next rank."""
        public = g.face_up * who[:, None]
        g = g._replace(known=g.known + public, pile_known=g.pile_known + public,
                       face_up=jnp.where(who[:, None], 0, g.face_up))
        if self.ordered:
            g = g._replace(up_order=jnp.where(who[:, None], 0, g.up_order).astype(jnp.int8))
        if self.retire:
            g = g._replace(retire_level=jnp.minimum(g.retire_level + _over_seats(who), self.config.retire_max_rank))
        return g

    def _recycle(self, g: Game, who: jax.Array) -> Game:
        """R5 RECYCLE for the seats ``who`` (their face-down piles are empty): the face-up pile becomes the
        face-down pile, shuffled (lazily, module docstring) or in chronological order (A11)."""
        rows = who[:, None]
        if self.ordered:
            g = g._replace(pile=jnp.where(rows, self._recycled_piles(g), g.pile).astype(jnp.int8),
                           pile_n=jnp.where(who, g.face_up.sum(1), g.pile_n))
        else:
            g = g._replace(pile_rand=jnp.where(rows, g.face_up, g.pile_rand))
        return self._recycled(g, who)

    def _move(self, g: Game, flow: Flow, to_hand: jax.Array, to_table: jax.Array, rest: jax.Array,
              most: int) -> tuple[Game, Flow, jax.Array]:
        """Cards leave the top of each seat's face-down pile: ``to_hand[p]`` into the hand (R4 DRAW, no
        retirement), then ``to_table[p]`` face down onto the table (R11b); then, where ``rest[p]`` more
        face-down cards are owed (the pile is empty by then), the face-up pile is recycled (R5) and up to
        ``rest[p]`` of its cards follow (R11d). Every seat at once, at most ``most`` cards each; seats place in
        reverse entry order (R23); the words of ``_most`` draws a seat are taken whatever ``most`` is. Returns the
        cards drawn into each hand, per kind (:meth:`_moved`)."""
        return self._moved(g, flow, to_hand, to_table, rest, most, np.arange(self.n), None)

    def _move_seat(self, g: Game, flow: Flow, to_table: jax.Array, rest: jax.Array,
                   most: int) -> tuple[Game, Flow]:
        """:meth:`_move` of a war's one commitment (with retirement, one a pass of the war procedure: at most one
        seat has ``to_table`` or ``rest`` cards, and none draws into its hand) on that seat's rows alone: its
        draws take the same words (``p * _most`` on) and its cards go to the table's next slots. Under ``vmap``
        (the rare step's slots) :meth:`_move` ran the draws of all n seats' rows for the one: this made the loop
        0.96x the time with 6 players (cfg4), 0.98x with 3 (cfg6) and 0.99x with 4 (cfg2), paired in one process, the
        same states on every game of 60 positions."""
        p = jnp.argmax((to_table > 0) | (rest > 0))
        return self._on_seat_rows(g, p, lambda one: self._moved(
            one, flow, jnp.zeros(1, jnp.int32), to_table[p][None], rest[p][None], most, p[None],
            self._table_size(g)[None])[:2])

    def _on_seat_rows(self, g: Game, p: jax.Array, step: Callable[[Game], tuple[Game, Any]]) -> tuple[Game, Any]:
        """``step`` of seat ``p``'s own card movements on its rows alone: it gets the game with the per-seat arrays
        it may change (:data:`_SEAT_ROWS`) cut to ``p``'s row (the others whole), and those rows are put back into
        ``g``'s; returns the game and what else ``step`` returns. The arrays move packed side by side, one gather and
        one scatter (under ``vmap`` a gather and a scatter an array were 7% of the full step's kernels: 915 against 847
        a call, 4 players, 51 slots; the loop's time moved by less than this machine's noise)."""
        fields = (*_SEAT_ROWS, *(("up_order",) if self.ordered else ()))
        packed = self._packed_rows(g, fields)
        one, out = step(g._replace(**self._unpacked_rows(g, fields, packed[p][None])))
        packed = packed.at[p].set(self._packed_rows(one, fields)[0])
        return one._replace(**self._unpacked_rows(g, fields, packed)), out

    @staticmethod
    def _packed_rows(g: Game, fields: tuple[str, ...]) -> jax.Array:
        """The per-seat arrays ``fields`` of ``g`` side by side, as int32: one row a seat (one gather and one
        scatter move a seat's rows, not one each)."""
        rows = [getattr(g, field) for field in fields]
        return jnp.concatenate([row.reshape(row.shape[0], -1).astype(jnp.int32) for row in rows], axis=1)

    @staticmethod
    def _unpacked_rows(g: Game, fields: tuple[str, ...], packed: jax.Array) -> dict[str, jax.Array]:
        """The arrays ``fields`` (shaped and typed as ``g``'s, but for their seats) of rows packed by
        :meth:`_packed_rows`."""
        out, start = {}, 0
        for field in fields:
            like = getattr(g, field)
            width = int(np.prod(like.shape[1:]))
            out[field] = packed[:, start:start + width].reshape(packed.shape[0], *like.shape[1:]).astype(like.dtype)
            start += width
        return out

    def _moved(self, g: Game, flow: Flow, to_hand: jax.Array, to_table: jax.Array, rest: jax.Array,
               most: int, seats: Any, first: jax.Array | None) -> tuple[Game, Flow, jax.Array]:
        """:meth:`_move` on the rows of ``seats`` (axis 0 of the per-seat arrays; the table's are whole): their
        table cards go to the chronological table from slot ``first`` of each on (``None``: every seat's rows, in
        reverse entry order after the cards on the table).

        The cards of an ordered pile are known in advance (its top ``most`` slots); a shuffled pile gives
        one uniformly random card of what is left per draw (module docstring): ``most`` draws per seat decoded
        at once by :func:`_draw_kinds`, so no row waits for the longest draw of the batch."""
        n, size = self.n, self.deck_size
        j = np.arange(most)
        up = g.face_up.sum(1)
        current = to_hand + to_table  # from the pile as it is
        total = current + jnp.where(rest > 0, jnp.minimum(rest, up), 0)
        recycled = total > current
        top = jnp.take_along_axis(g.pile, jnp.clip(g.pile_n[:, None] - 1 - j, 0, size - 1), axis=1).astype(jnp.int32)
        if self.ordered:  # the recycled pile follows, oldest card first (A11)
            after = jnp.take_along_axis(g.up_order, jnp.clip(j - g.pile_n[:, None], 0, size - 1), axis=1)
            sequence = jnp.where(j < g.pile_n[:, None], top, after.astype(jnp.int32))
            from_order = j < total[:, None]
        else:
            sequence = top
            from_order = j < jnp.minimum(current, g.pile_n)[:, None]
        to_the_hand = j < to_hand[:, None]
        cards = (sequence[:, :, None] == _KINDS) & from_order[:, :, None]
        drawn = (cards & to_the_hand[:, :, None]).sum(1, dtype=jnp.int32)
        placed = (cards & ~to_the_hand[:, :, None]).sum(1, dtype=jnp.int32)
        if self.ordered:
            pile_n = jnp.where(recycled, up - (total - g.pile_n), g.pile_n - total)
            pile = jnp.where(recycled[:, None], self._recycled_piles(g), g.pile)
            if first is None:  # R23: seat by seat in reverse entry order
                later = g.entry[None, :] > g.entry[:, None]  # [p, s]: s entered after p, places before it
                first = self._table_size(g) + (later * (total - to_hand)[None, :]).sum(1)
            at = jnp.where(from_order & ~to_the_hand, first[:, None] - to_hand[:, None] + j, size)
            owner = jnp.broadcast_to(jnp.asarray(seats, jnp.int8)[:, None], at.shape)
            g = g._replace(table_kind=g.table_kind.at[at].set(sequence.astype(jnp.int8), mode="drop"),
                           table_owner=g.table_owner.at[at].set(owner, mode="drop"))
        else:  # the rest at random: from the shuffled pile, then (R11d) from the recycled face-up pile
            ordered = jnp.minimum(current, g.pile_n)
            pile_n = g.pile_n - ordered
            pile = g.pile
            from_rand = current - ordered
            # seat p's draw j: the step's word p * _most + j (the words of every seat are taken)
            flow, words = _words_at(flow, jnp.asarray(seats, jnp.uint32)[:, None] * self._most + j, n * self._most)
            kinds = _draw_kinds(words, g.pile_rand, g.face_up, from_rand, total - current)
            to_hand_by_kind = _per_kind(kinds, ordered[:, None] + j < to_hand[:, None])
            every = _per_kind(kinds, np.ones(most, np.bool_))
            from_up = _per_kind(kinds, j >= from_rand[:, None])  # R11d
            drawn, placed = drawn + to_hand_by_kind, placed + every - to_hand_by_kind
            g = g._replace(pile_rand=jnp.where(recycled[:, None], g.face_up - from_up,
                                               g.pile_rand - (every - from_up)))
        slots = np.arange(size)
        pile_known, pile_unknown = _take_known(g.pile_known, g.pile_unknown, drawn)  # drawn before any recycle
        g = g._replace(pile=jnp.where(slots < pile_n[:, None], pile, 0).astype(jnp.int8), pile_n=pile_n,
                       hand=g.hand + drawn, table_down=g.table_down + placed, pile_known=pile_known,
                       pile_unknown=pile_unknown)
        return self._recycled(g, recycled), flow, drawn

    def _refill_moves(self, g: Game, end: jax.Array) -> Moves:
        """R16.2 FILL of every active seat (without retirement: a recycle if hand and pile are empty, then
        one draw of up to ``hand_size`` cards, R6)."""
        in_hand, pile = g.hand.sum(1), self._pile_sizes(g)
        who = end & g.active
        recycle = who & (in_hand == 0) & (pile == 0)
        pile = jnp.where(recycle, g.face_up.sum(1), pile)
        zero = jnp.zeros(self.n, jnp.int32)
        return Moves(recycle, jnp.where(who, jnp.minimum(self.config.hand_size - in_hand, pile), 0), zero, zero)

    def _fill_retiring(self, g: Game, seed: jax.Array, fill: jax.Array, first_word: Any) -> Game:
        """R6 FILL with R21 of the seats ``fill`` (every active seat at the round's end, clockwise from the next
        leader, A34; one seat in a war, R11a: :meth:`_fill_seat`, the same fill on that seat's rows): cards are
        drawn from a seat's pile until its hand is full or the pile empty, each retired card revealed and discarded;
        then, if the hand is empty, the face-up pile is recycled (the retirement level rises) and the draws go on
        from it (a fill recycles at most once: the face-up pile is empty after it). The seats fill at once, each at
        the level the recycles of the seats before it left (:meth:`_fill_levels`). Seat ``p``'s draws take the step's
        words from ``first_word + p * _FILL_WORDS`` on (:func:`_seat_words`), whatever the other seats drew (the
        common step's refill finds the same ones)."""
        words = _seat_words(first_word, self.n)
        level, recycle = self._fill_levels(g, fill)
        return self._fill(g, seed, jnp.where(fill, self.config.hand_size - g.hand.sum(1), 0), words, level, recycle)

    def _fill(self, g: Game, seed: jax.Array, wanted: jax.Array, words: jax.Array, level: jax.Array,
              recycle: jax.Array) -> Game:
        """The draws of a fill (seats on axis 0): ``wanted`` cards each from the pile at ``level`` with the words
        from ``words`` on, then the recycle of the seats ``recycle`` and its draws (the second half of the words)."""
        g = self._draw_retiring(g, seed, wanted, words, level, first=True)
        return self._fill_recycled(g, seed, recycle, words + np.uint32(_FILL_WORDS // 2), level)

    def _fill_seat(self, g: Game, seed: jax.Array, fill: jax.Array, first_word: Any) -> Game:
        """:meth:`_fill_retiring` of the one seat ``fill`` marks (R11a: a war's next commitment, one a pass of the
        war procedure), on that seat's rows alone: its draws take the same words (``first_word + p * _FILL_WORDS``)
        at the game's retirement level (no seat fills before it), and it recycles as :meth:`_fill_levels` says. Under
        ``vmap`` (the rare step's slots) the fill of all n seats' rows ran for the one: this made the full step
        0.92x the time with 6 players (cfg4) and 0.96x with 4 (cfg2), paired against the all-seat fill in one process
        (``benchmarks.battlecards_jax_parts --rows engine,against``), the same states on every game of 60 positions."""
        p = jnp.argmax(fill)

        def fill_one(one: Game) -> tuple[Game, None]:
            in_hand, level = one.hand.sum(1), jnp.reshape(g.retire_level, (1,))
            recycle = (in_hand == 0) & (one.face_up.sum(1) > 0) & (self._pile_best(one) <= level)
            return self._fill(one, seed, self.config.hand_size - in_hand, _seat_words(first_word, self.n)[p][None],
                              level, recycle), None

        return self._on_seat_rows(g, p, fill_one)[0]

    def _fill_levels(self, g: Game, fill: jax.Array) -> tuple[jax.Array, jax.Array]:
        """For the seats ``fill`` that fill one after another, clockwise from the leader: the retirement level of
        each seat's draws, and which seats recycle. A seat recycles when its hand is empty, its face-up pile is
        not, and its pile holds no card it would keep at its level (it draws them all, R6): the level then rises
        by one for the seats after it (R21)."""
        n = self.n
        best = self._pile_best(g)
        empty_handed = fill & (g.hand.sum(1) == 0) & (g.face_up.sum(1) > 0)
        level, recycle, current = jnp.zeros(n, jnp.int32), jnp.zeros(n, jnp.bool_), g.retire_level
        for i in range(n):
            seat = _one_hot(_wrap(g.leader + i, n), n)
            recycles = (seat & empty_handed & (best <= current)).any()
            level, recycle = jnp.where(seat, current, level), recycle | (seat & recycles)
            current = jnp.minimum(current + recycles, self.config.retire_max_rank)
        return level, recycle

    def _pile_best(self, g: Game) -> jax.Array:
        """Per seat, :meth:`_kept_best` of its face-down pile (its ordered slots and its shuffled counts)."""
        return jnp.maximum(self._kept_best(g.pile, np.arange(self.deck_size) < g.pile_n[:, None]),
                           self._kept_best(_KINDS, g.pile_rand > 0))

    @staticmethod
    def _kept_best(kinds: Any, where: jax.Array) -> jax.Array:
        """Per seat (axis 0), the highest value for R21 among the cards of ``kinds`` where ``where`` (axis 1): a
        joker's is above every level (it is never retired), none gives 0. The seat keeps one of these cards at any
        retirement level below it, and none at a level at or above it."""
        return jnp.where(where, jnp.where(kinds == JOKER_KIND, _KEEPS_ALWAYS, kinds + 2), 0).max(1)

    def _fill_recycled(self, g: Game, seed: jax.Array, recycle: jax.Array, first_word: jax.Array,
                       level: jax.Array) -> Game:
        """The end of :meth:`_fill_retiring` for the seats ``recycle``: R5 (the level rises by one for each), then
        draws from each recycled pile until the hand keeps ``hand_size`` cards, at the level after its recycle;
        skipped when no game needs it (:func:`_when`)."""
        after = jnp.minimum(level + 1, self.config.retire_max_rank)
        return _when(recycle.any(), lambda g: self._draw_retiring(
            self._recycle(g, recycle), seed, self.config.hand_size * recycle, first_word, after, first=False), g)

    def _draw_retiring(self, g: Game, seed: jax.Array, wanted: jax.Array, first_word: jax.Array, level: jax.Array,
                       first: bool) -> Game:
        """R4 with R21 for every seat at once (all on axis 0): cards until it keeps ``wanted`` more or its pile is
        empty, at its retirement ``level``, the retired ones revealed and discarded (no recycle). The ``first``
        draws of a fill (and every fill's, when every pile is in order) as the common step makes them
        (:func:`_first_draws`: the top cards of an ordered pile, or draws at random from a shuffled one), then the
        rest of an ordered pile (:meth:`_ordered_draws`) or of a shuffled one (:func:`_draws_until_kept`), in loops
        that make no pass where every fill is done. A pile just recycled (not ``first``) is shuffled unless every
        pile is in order. Draw ``j`` of seat ``p`` takes the step's word ``first_word[p] + j``."""
        slots = np.arange(self.deck_size)
        pile_n, shuffled = g.pile_n, g.pile_rand
        in_order = pile_n > 0
        kept, rest, drawn, left = jnp.zeros_like(wanted), shuffled, jnp.zeros_like(shuffled), pile_n
        if first or self.ordered:
            kinds = _pile_kinds(_top_cards(g.pile, pile_n, _COMMON_DRAWS), pile_n, shuffled, seed, first_word,
                                at_random=not self.ordered)
            kept, left, drawn, _ = _first_draws(kinds, self._pile_sizes(g), wanted, level)
            rest = shuffled - drawn * ~in_order[:, None]
            made, drawn = _ordered_draws(g.pile, pile_n, wanted, level, (jnp.where(in_order, pile_n - left, 0), kept,
                                                                          drawn))
            left = jnp.where(in_order, pile_n - made, 0)
        if not self.ordered:  # the rest of a shuffled pile
            later = first_word + np.uint32(_COMMON_DRAWS)
            drawn = jnp.where(in_order[:, None], drawn, drawn + _draws_until_kept(seed, later, rest, wanted - kept,
                                                                                   level))
            shuffled = jnp.where(in_order[:, None], shuffled, shuffled - drawn)
        drawn = computed_once(drawn)
        g = self._drawn_retiring(g, drawn, computed_once(drawn * _retired(_KINDS, level[:, None])))
        return g._replace(pile_n=left, pile=jnp.where(slots < left[:, None], g.pile, 0).astype(jnp.int8),
                          pile_rand=shuffled)

    # -- decisions (R7, R11c, R12) ---------------------------------------------------------------------

    def _from_leader(self, g: Game) -> jax.Array:
        """Per seat, its place clockwise from the leader (the leader 0): the order of play (R7), of entry into a
        war (R9, A14) and of a refill's fills (A34)."""
        return _wrap(_column(self.n, g.leader) - g.leader + self.n, self.n)

    def _next_active(self, g: Game, p: jax.Array) -> jax.Array:
        """R1: the next active seat clockwise after ``p``."""
        n = self.n
        after = _wrap(_column(n, p) - p - 1 + n, n)  # 0 for the seat after ``p``
        first = _over_seats(jnp.where(g.active, after, n), jnp.minimum)
        return _wrap(p + 1 + jnp.where(first == n, 0, first), n)

    def _next_in_war(self, g: Game, below: jax.Array | int) -> tuple[jax.Array, jax.Array]:
        """R11 / R12 reverse entry order: the non-stuck participant with the highest entry position below
        ``below``, and whether there is one."""
        rank = jnp.where(g.participant & ~g.stuck & (g.entry < below), g.entry, 0)
        best = _over_seats(rank, jnp.maximum)
        seats = _column(self.n, best)
        return _over_seats(jnp.where(rank == best, seats, self.n), jnp.minimum), best > 0

    def _decide(self, g: Game, flow: Flow, action: jax.Array) -> tuple[Game, Flow]:
        """The decision itself (R7, R11c, R12) and who owes the next one, or what the war does next."""
        p, phase = g.current, g.phase
        seat = _seat_hot(p, self.n)
        card = seat[:, None] & _kind_hot(action)[None]
        bury = phase == BURY
        face_up = ~bury
        round_card = phase <= FOLLOW
        if self.ordered:  # the card goes to the end of the chronological table (any batch axes: a select)
            at = _column(self.deck_size, p) == computed_once(self._table_size(g))  # else summed per slot
            g = g._replace(table_kind=jnp.where(at, action, g.table_kind).astype(jnp.int8),
                           table_owner=jnp.where(at, p, g.table_owner).astype(jnp.int8))
        known, unknown = _take_known(g.known, g.unknown, card & face_up)  # 7.5: played face up
        g = g._replace(
            hand=g.hand - card, known=known, unknown=unknown,
            table_buried=g.table_buried + (card & bury),
            table_up=g.table_up + (card & face_up),
            fighting=jnp.where(seat & face_up, action, g.fighting),
            round_card=jnp.where(seat & round_card, action, g.round_card),
            bury_left=g.bury_left - bury,
        )
        follower = computed_once(self._next_active(g, p))  # R7: the next follower, or the round is resolved
        round_done = round_card & (follower == g.leader)
        shower, more = self._next_in_war(g, _over_seats(g.entry * seat))  # R12: the next war card, or resolve
        war_up = phase == WAR_UP
        level_done = war_up & ~more
        commit_done = bury & (g.bury_left == 0)
        g = g._replace(
            current=jnp.where(round_card & ~round_done, follower, jnp.where(war_up & more, shower, p)),
            phase=jnp.where(round_card & ~round_done, FOLLOW, phase),
        )
        todo = jnp.where(round_done | level_done, _RESOLVE, jnp.where(commit_done, _COMMIT, _DONE))
        return g, flow._replace(todo=todo.astype(jnp.int32), resume=commit_done)

    # -- the war (R8-R13) ------------------------------------------------------------------------------

    def _war(self, g: Game, flow: Flow) -> tuple[Game, Flow, Moves]:
        """The automatic part of a round after a decision: resolve the round or the level (R8 / R13), start
        a level (R10), the face-down phase up to the next BURY decision (R11) and the start of the face-up
        phase (R12). Without retirement one pass does it all and returns the card movements of the
        commitments (made by the step); with it, one commitment per pass, its cards moved here."""
        c, n = self.config, self.n
        facedown = c.war_facedown_count
        # R8 / R13: the highest fighting card among those who played (round) or the participants (level)
        resolve = flow.todo == _RESOLVE
        in_war = g.war_level > 0
        contenders = jnp.where(in_war, g.participant, g.active)
        values = jnp.where(contenders, _value(g.fighting, g.joker_value), -1)
        tied = contenders & (values == values.max())
        single = tied.sum() == 1
        won = resolve & single
        flow = flow._replace(end_round=flow.end_round | won,
                             winner=jnp.where(won, jnp.argmax(tied), flow.winner).astype(jnp.int32))
        start = resolve & ~single
        order = self._from_leader(g)  # R9 / A14: entry order = play order
        position = 1 + (tied[None, :] & (order[None, :] < order[:, None])).sum(1)
        g = g._replace(entry=jnp.where(start & ~in_war, jnp.where(tied, position, 0), g.entry))
        # R10: a level starts
        stuck = g.stuck | (start & tied & (self._held(g) == 0))  # A22
        g = g._replace(war_level=g.war_level + start, participant=jnp.where(start, tied, g.participant),
                       stuck=stuck)
        cease = start & c.cease_fire & (g.active.sum() == 2) & (tied & stuck).any()  # R10.1 / A30
        all_stuck = start & ~cease & ~(tied & ~stuck).any()  # R10.2 / A24
        everyone = all_stuck & (g.active.sum() == tied.sum())  # R15.1 / A29
        over = cease | everyone
        flow = flow._replace(over=flow.over | over,
                             over_set=jnp.where(cease, g.active, jnp.where(everyone, tied, flow.over_set)),
                             tie=flow.tie | (all_stuck & ~everyone),
                             end_round=flow.end_round | (all_stuck & ~everyone))
        # R11: the commitments, in reverse entry order
        commit = (start & ~over & ~all_stuck) | (flow.todo == _COMMIT)
        resume = flow.resume & (flow.todo == _COMMIT)
        resumed = _one_hot(g.current, n) & resume  # the seat that made its BURY decisions
        queue = jnp.where(start, _BEYOND, jnp.where(resume, (g.entry * resumed).sum(), g.queue))
        waiting = commit & g.participant & ~g.stuck & (g.entry < queue)
        in_hand = g.hand.sum(1)
        empty_hand = in_hand == 0
        if self.retire:  # the next seat only (after a BURY decision: that seat's commitment only)
            now = waiting & (g.entry == jnp.where(waiting, g.entry, 0).max()) & ~resume
            g = _when((now & empty_hand).any(), lambda g: self._fill_seat(  # R11a / A19
                g, flow.seed, now & empty_hand, flow.counter), g)
            flow = flow._replace(counter=flow.counter + jnp.uint32(n * _FILL_WORDS))
            turned_stuck = now & (g.hand.sum(1) == 0)  # every drawn card was retired
            now = now & ~turned_stuck
            to_hand = jnp.zeros(n, jnp.int32)
            recycle_first = jnp.zeros(n, jnp.bool_)
            in_hand = g.hand.sum(1)
            pile = self._pile_sizes(g)
        else:  # every seat down to the first one that will owe BURY decisions; R11a draws are moved later
            drawn, pile = self._war_fill(g)
            now = waiting & (g.entry >= jnp.where(waiting & (self._burials(in_hand + drawn, pile) > 0), g.entry,
                                                  0).max())
            turned_stuck = jnp.zeros(n, jnp.bool_)
            to_hand = jnp.where(now & empty_hand, drawn, 0)
            recycle_first = now & empty_hand & (self._pile_sizes(g) == 0)
            in_hand = in_hand + to_hand
        from_pile = jnp.where(now, jnp.minimum(facedown, pile), 0)  # R11b
        short = jnp.where(now, facedown - from_pile, 0)
        burials = jnp.where(now, self._burials(in_hand, pile), 0)
        buries = burials > 0
        moves = Moves(recycle_first, to_hand, from_pile,
                      jnp.where(now & ~buries, short, 0) + jnp.where(resumed, g.commit_rest, 0))
        if self.retire:  # one seat's face-down cards (R11a is drawn above): war_facedown_count at most
            g, flow = self._move_seat(g, flow, moves.to_table, moves.rest, max(1, facedown))
        buryer = jnp.argmax(buries)
        processed = now | turned_stuck
        g = g._replace(
            stuck=g.stuck | turned_stuck,
            phase=jnp.where(buries.any(), BURY, g.phase),
            current=jnp.where(buries.any(), buryer, g.current),
            bury_left=jnp.where(buries.any(), burials[buryer], jnp.where(commit, 0, g.bury_left)),
            commit_rest=jnp.where(buries.any(), short[buryer] - burials[buryer], jnp.where(commit, 0, g.commit_rest)),
            queue=jnp.where(processed.any(), jnp.where(processed, g.entry, _BEYOND).min(), queue),
        )
        # R12: the face-up phase starts once every commitment is made
        more = commit & ~buries.any() & (waiting & ~processed).any()
        ready = commit & ~buries.any() & ~more
        first, anyone = self._next_in_war(g, _BEYOND)
        g = g._replace(phase=jnp.where(ready & anyone, WAR_UP, g.phase),
                       current=jnp.where(ready & anyone, first, g.current))
        todo = jnp.where(more, _COMMIT, jnp.where(ready & ~anyone, _RESOLVE, _DONE))  # all stuck: resolve again
        return g, flow._replace(todo=todo.astype(jnp.int32), resume=jnp.bool_(False)), moves

    def _war_fill(self, g: Game) -> tuple[jax.Array, jax.Array]:
        """R11a without retirement, for every seat whose hand is empty: the cards FILL would draw (all of a
        pile up to ``hand_size``, or of the recycled face-up pile), and the face-down pile left after it."""
        pile, won = self._pile_sizes(g), g.face_up.sum(1)
        source = jnp.where(pile > 0, pile, won)
        drawn = jnp.where(g.hand.sum(1) == 0, jnp.minimum(self.config.hand_size, source), 0)
        return drawn, jnp.where(g.hand.sum(1) == 0, source - drawn, pile)

    def _burials(self, in_hand: jax.Array, pile: jax.Array) -> jax.Array:
        """R11c / A17: BURY decisions owed with this hand and face-down pile (one card is always kept)."""
        short = self.config.war_facedown_count - jnp.minimum(self.config.war_facedown_count, pile)
        return jnp.where(short > 0, jnp.clip(jnp.minimum(short, in_hand - 1), 0), 0)

    # -- the end of a round (R14-R19) -------------------------------------------------------------------

    def _close_round(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        """R14 / R15 and R16.1 (when the round ends): the face-down cards are revealed, the table goes to
        its winner (or is shared after a last-card tie), and the table is cleared."""
        end = flow.end_round
        g = self._win_round(self._reveal(g, end), end & ~flow.tie, flow.winner)
        g, flow = self._last_card_tie(g, flow)
        return self._clear_table(g, end), flow

    @staticmethod
    def _reveal(g: Game, end: jax.Array) -> Game:
        """R14 / A12 (when ``end``): the face-down cards on the table are revealed (7.5)."""
        known, unknown = _take_known(g.known, g.unknown, (g.table_down + g.table_buried) * end)
        pile_known, pile_unknown = _take_known(g.pile_known, g.pile_unknown, g.table_down * end)
        return g._replace(known=known, unknown=unknown, pile_known=pile_known, pile_unknown=pile_unknown)

    @staticmethod
    def _clear_table(g: Game, end: jax.Array) -> Game:
        """R16.1 (when ``end``): the round is counted and the table cleared."""
        zeros = jnp.zeros_like(g.table_up)
        return g._replace(rounds=g.rounds + end, table_up=jnp.where(end, zeros, g.table_up),
                          table_down=jnp.where(end, zeros, g.table_down),
                          table_buried=jnp.where(end, zeros, g.table_buried),
                          table_kind=jnp.where(end, 0, g.table_kind).astype(jnp.int8),
                          table_owner=jnp.where(end, 0, g.table_owner).astype(jnp.int8))

    def _after_refill(self, g: Game, flow: Flow) -> Game:
        """R16.3-R16.7 (when the round ended) and R18 / R19: eliminations, shaping, the end of the game or
        truncation, the next leader and round."""
        c = self.config
        end = flow.end_round
        held = computed_once(self._held(g))
        out = computed_once(end & g.active & (held == 0))  # R17
        g = g._replace(active=g.active & ~out)
        if c.shaping_weight:
            g = self._shape(g, held, end)
        remaining = _over_seats(g.active)
        last_one = end & (remaining <= 1)  # R16.4 / A32
        limit = c.max_rounds if c.max_rounds is not None else np.iinfo(np.int32).max
        truncate = end & ~last_one & (g.rounds >= limit)  # R16.5 / R19
        last_one, truncate = computed_once(last_one), computed_once(truncate)
        go_on = end & ~last_one & ~truncate
        g = self._pay_elimination(g, out & go_on)
        leader_out = go_on & ~_of(g.active, g.leader)  # R16.6 / A33
        g = g._replace(leader=jnp.where(leader_out, self._next_active(g, g.leader), g.leader))
        g = self._start_round(g, go_on)
        winners = jnp.where(flow.over, flow.over_set,
                            jnp.where(last_one, jnp.where(remaining == 1, g.active, out),
                                                            held == _over_seats(held, jnp.maximum)))
        return self._finish(g, flow.over | last_one | truncate, winners, truncate, held)

    def _win_round(self, g: Game, won: jax.Array, winner: jax.Array) -> Game:
        """R14 (when ``won``): the winner takes the table (chronological order, R23); ``jv`` becomes the
        value of its fighting card (a winning joker leaves it, A37)."""
        seat = _seat_hot(winner, self.n) & won
        stakes = computed_once(_over_seats(g.table_up + g.table_down + g.table_buried))
        if self.ordered and jnp.ndim(won):  # the common step: a round without a war (batch axis last)
            g = self._collect_round(g, won, winner)
        elif self.ordered:
            recipient = jnp.where(won, winner, self.n)
            g = self._collect_ordered(g, jnp.full(self.deck_size, recipient), jnp.zeros(self.deck_size, jnp.bool_))
        fighting = _of(g.fighting, winner)
        jv = g.joker_value
        if self.config.jokers:
            jv = jnp.where(won & (fighting != JOKER_KIND), fighting + 2, jv)
        return g._replace(face_up=g.face_up + seat[:, None] * stakes, joker_value=jv,
                          leader=jnp.where(won, winner, g.leader))

    def _last_card_tie(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        """R15.2 (when ``flow.tie``): the tied players take their own cards back; the others' cards are
        shuffled and dealt from the designated player in entry order, the extras to it (A25-A28)."""
        n = self.n
        tie = flow.tie
        tied = g.participant & tie
        placed = g.table_up + g.table_down + g.table_buried
        others = (placed * ~tied[:, None]).sum(0) * tie
        rank = jnp.where(tied, g.entry, _BEYOND)
        first = jnp.argmin(rank)
        second = jnp.argmin(jnp.where(_one_hot(first, n), _BEYOND, rank))
        designated = jnp.where(g.entry[first] == 1, second, first).astype(jnp.int32)  # A27: T[0] unless e1
        size = jnp.maximum(tied.sum(), 1)
        index_in_tied = (tied[None, :] & (g.entry[None, :] < g.entry[:, None])).sum(1)
        rotation = (index_in_tied - index_in_tied[designated]) % size  # 0: designated, then entry order
        total = others.sum()
        dealt = (total // size) * size
        face_up = g.face_up + placed * tied[:, None]
        if self.ordered:  # the chronological deal
            mine, recipient = self._tie_recipients(g, tied, rotation, size, dealt, designated)
            recipient = jnp.where(tie, recipient, n)
            g = self._collect_ordered(g, recipient, ~mine)
            live = (jnp.arange(self.deck_size) < self._table_size(g)) & ~mine
            face_up = face_up.at[recipient, g.table_kind.astype(jnp.int32)].add(live.astype(jnp.int32), mode="drop")
        else:  # one uniformly random card after another (a shuffled deal)

            def deal(carry: tuple[jax.Array, jax.Array, Flow, jax.Array]) -> tuple:
                face_up, running, flow, i = carry
                flow, words = _words(flow, ())
                kind = _sample(words, running)
                to = tied & (rotation == jnp.where(i < dealt, i % size, 0))
                return face_up + (to[:, None] & (_KINDS == kind)), running - (_KINDS >= kind), flow, i + 1

            face_up, _, flow, _ = jax.lax.while_loop(lambda c: c[3] < total, deal,
                                                     (face_up, _running_total(others), flow, jnp.int32(0)))
        jv = g.joker_value
        if self.config.jokers:  # A28: jv := the tied value
            jv = jnp.where(tie, _value(g.fighting[first], g.joker_value), jv)
        return g._replace(face_up=face_up, joker_value=jv, leader=jnp.where(tie, designated, g.leader)), flow

    def _tie_recipients(self, g: Game, tied: jax.Array, rotation: jax.Array, size: jax.Array, dealt: jax.Array,
                        designated: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The chronological R15 deal (``shuffle_mid_game=False``): per table card, whether it goes back to
        its owner, and its recipient (A25-A28)."""
        owners = g.table_owner.astype(jnp.int32)
        mine = tied[owners]
        others_before = _marked_before(~mine)  # the card's index in M
        slot = jnp.where(others_before < dealt, others_before % size, 0)
        by_slot = jnp.argmax(tied[None, :] & (rotation[None, :] == slot[:, None]), axis=1)
        recipient = jnp.where(mine, owners, jnp.where(others_before < dealt, by_slot, designated))
        return mine, recipient

    def _collect_round(self, g: Game, won: jax.Array, winner: jax.Array) -> Game:
        """R23 for a round without a war (the common step, one batch axis last): the winner's ordered face-up pile
        takes the table, at most one card a seat, in the order it was played. Call before the face-up counts
        change. (A war's resolution with ordered piles and retirement is left to the rare step: taking it here, the
        whole table into the winner's pile, moved cfg4's rare decisions from 14.8% to 12.7% of random play but not
        its time: 1.01x with a shifter of selects, 0.98x with this scatter of every slot, paired at 256 games, one
        core, 9 repeats, 2026-11-30; 1.29x, 3.3x and 6.6x slower for the scatter, a gather and the shifter before the
        pile's and the table's sizes were ``computed_once``: every slot computed them again.)"""
        games = jnp.arange(won.shape[-1])
        base = _of(_over_kinds(g.face_up), winner)
        size = self._table_size(g)
        # one scatter of at most n cards a game (a select over the pile's slots cost n times more), the table's
        # first n slots at once (distinct slots; those not taken dropped, at distinct slots past the pile)
        seats = np.arange(self.n).reshape(-1, 1)
        at = jnp.where(won & (seats < size), base + seats, self.deck_size + seats)
        up_order = g.up_order.at[winner, at, games].set(g.table_kind[:self.n], mode="drop", unique_indices=True)
        return g._replace(up_order=up_order)

    def _collect_ordered(self, g: Game, recipient: jax.Array, later: jax.Array) -> Game:
        """R23: the table cards appended to their recipients' ordered face-up piles (a recipient of ``N``
        takes nothing): each recipient gets its cards with ``later`` false first, then the others, each
        group in chronological order. Call before the face-up counts change."""
        n, size = self.n, self.deck_size
        live = jnp.arange(size) < self._table_size(g)
        to = (recipient[:, None] == jnp.arange(n)) & live[:, None]
        first = to & ~later[:, None]
        before = _marked_before(live, recipient * 2 + later)  # its recipient's cards before it, of its group
        base = g.face_up.sum(1)
        base = jnp.append(base, 0)[recipient]
        firsts = jnp.append(first.sum(0), 0)[recipient]
        position = base + jnp.where(later, firsts, 0) + before
        row = jnp.where(live, recipient, n)
        return g._replace(up_order=g.up_order.at[row, position].set(g.table_kind, mode="drop"))

    def _shape(self, g: Game, held: jax.Array, end: jax.Array) -> Game:
        """Section 9 shaping: ``lambda N/(N-1) (s_p - s'_p)`` at the end of every round."""
        n = self.n
        total = _over_seats(held)
        shares = held.astype(jnp.float32) / jnp.maximum(total, 1).astype(jnp.float32)
        do = end & (total > 0)  # every card retired (A32): shares undefined, keep the last ones
        scale = jnp.float32(self.config.shaping_weight * n / (n - 1))
        return g._replace(rewards=g.rewards + jnp.where(do, scale * (shares - g.shares), 0.0),
                          shares=jnp.where(do, shares, g.shares))

    def _pay_elimination(self, g: Game, out: jax.Array) -> Game:
        """RULES.md: an eliminated player is paid ``-1/(N-1)`` at once, shared by the players still in."""
        stake = jnp.where(out, 1.0 / (self.n - 1) + g.paid, 0.0)
        share = _over_seats(stake) / jnp.maximum(_over_seats(g.active), 1)
        pay = jnp.where(out, -stake, jnp.where(g.active & _over_seats(out, jnp.logical_or), share, 0.0))
        return g._replace(rewards=g.rewards + pay, paid=g.paid + pay, early=g.early | out)

    def _finish(self, g: Game, do: jax.Array, winners: jax.Array, truncated: jax.Array, held: jax.Array) -> Game:
        """R18 / R19 (when ``do``): the episode ends with winner set ``W``; section 9 rewards minus what was
        already paid (RULES.md)."""
        c, n = self.config, self.n
        present = ~g.early
        w = jnp.maximum(_over_seats(winners), 1).astype(jnp.float32)
        win = (_over_seats(present) - w) / (n - 1) + _over_seats(g.early) / ((n - 1) * w)
        target = jnp.where(winners, win, -w / (n - 1))
        if c.truncation_scoring == "card_share":
            share = n / (n - 1) * (held / jnp.maximum(_over_seats(held), 1) - 1 / n)
            target = jnp.where(truncated, share, target)
        pay = jnp.where(present & do, target - g.paid, 0.0).astype(jnp.float32)
        return g._replace(rewards=g.rewards + pay, paid=g.paid + pay, winners=jnp.where(do, winners, g.winners),
                          phase=jnp.where(do, OVER, g.phase), current=jnp.where(do, 0, g.current),
                          terminated=g.terminated | (do & ~truncated), truncated=g.truncated | (do & truncated))

    def _start_round(self, g: Game, do: jax.Array) -> Game:
        """R7: the leader leads; every round field is cleared."""
        none, no = -1, False
        return g._replace(
            phase=jnp.where(do, LEAD, g.phase), current=jnp.where(do, g.leader, g.current),
            round_card=jnp.where(do, none, g.round_card), fighting=jnp.where(do, none, g.fighting),
            entry=jnp.where(do, 0, g.entry), participant=jnp.where(do, no, g.participant),
            stuck=jnp.where(do, no, g.stuck), war_level=jnp.where(do, 0, g.war_level),
            queue=jnp.where(do, 0, g.queue), bury_left=jnp.where(do, 0, g.bury_left),
            commit_rest=jnp.where(do, 0, g.commit_rest),
        )

    # -- the observation (encoding.py) --------------------------------------------------------------------

    def _encode(self, g: Game, o: jax.Array) -> jax.Array:
        """The 533 entries of :mod:`card_envs.battlecards.encoding` for seat ``o``.

        Entry by entry along axis 0 (any trailing batch axes, module helpers), so a batch with the batch axis
        last computes each entry for every game at once; the seat blocks are rotated by selects, not gathers."""
        c, n = self.config, self.n
        f32 = jnp.float32
        playing = g.phase != OVER
        in_war = g.entry > 0
        seats = _column(n, o)
        none_or_kind = _column(NUM_KINDS + 1, o)[None]
        kind_hot = lambda kind: jnp.where(kind >= 0, kind, _NONE_KIND)[:, None] == none_or_kind  # noqa: E731
        face_up = g.face_up
        seat_parts = [  # (n, entries, *batch): each seat's block, part by part
            g.active[:, None], (seats == g.leader)[:, None], ((seats == g.current) & playing)[:, None],
            _over_kinds(g.hand)[:, None], self._pile_sizes(g)[:, None], _over_kinds(face_up)[:, None], face_up,
            kind_hot(g.round_card), (g.participant & in_war)[:, None], (g.stuck & in_war)[:, None],
            g.entry[:, None], kind_hot(g.fighting), _over_kinds(g.table_down)[:, None],
            _over_kinds(g.table_buried)[:, None], g.known, g.unknown[:, None],
        ]
        # relative to the observer (seat o + j in block j): every seat's block as one int8 array (every entry is a
        # flag or a count of at most 54 cards), rotated at once by a select per shift of a doubled copy. (A
        # select chain per part and rotation read the int32 game arrays n x n times: 1.9x the observation's time
        # at 6 players, 512 games; a gather was no faster than the chain.)
        block = jnp.concatenate([jnp.asarray(part, jnp.int8) for part in seat_parts], axis=1)  # (n, entries, *batch)
        twice = jnp.concatenate([block, block])
        rotated = block
        for shift in range(1, n):
            rotated = jnp.where(o == shift, twice[shift:shift + n], rotated)
        own = lambda x: _of(x, o)  # noqa: E731
        batch = jnp.shape(o)
        decision = (_column(4, o) == g.phase) & ((g.current == o) & playing)
        table_up = _over_seats(g.table_up)
        unaccounted = (g.composition - _over_seats(g.face_up) - table_up - g.discard - _over_seats(g.known)
                       + own(g.known) - own(g.hand) - own(g.pile_known) - own(g.table_buried))
        if self.round_fraction is not None and c.max_rounds is not None:
            rounds = jnp.asarray(self.round_fraction)[jnp.minimum(g.rounds, c.max_rounds)]
        elif c.max_rounds is not None:
            rounds = g.rounds.astype(f32) / f32(c.max_rounds)
        else:
            rounds = jnp.zeros(batch, f32)
        flags = np.array([c.jokers, c.retire_lowest_on_flip, c.cease_fire], np.float32)
        flags = flags.reshape((3,) + (1,) * len(batch))
        parts = [
            decision, own(g.hand), own(g.table_buried), own(g.pile_known), own(g.pile_unknown)[None],
            rotated.reshape((n * SEAT_SIZE, *batch)), jnp.zeros((SEAT_SIZE * (MAX_SEATS - n), *batch)),
            jnp.stack([g.war_level, self._table_size(g)]), table_up,
            np.arange(1, 15).reshape((14,) + (1,) * len(batch)) == g.joker_value,
            (g.retire_level - 1)[None], g.discard, g.set_aside[None], rounds[None], unaccounted,
            _over_seats(g.active)[None], g.bury_left[None], jnp.broadcast_to(flags, (3, *batch)),
        ]
        return jnp.concatenate(_scaled(parts), dtype=f32)

    # -- Python positions ----------------------------------------------------------------------------------

    def _game_fields(self, s: BattlecardsState, seed: tuple[int, ...]) -> dict[str, np.ndarray | np.generic]:
        n, size = self.n, self.deck_size
        pile = np.zeros((n, size), np.int8)
        for p, cards in enumerate(s.piles):
            pile[p, :len(cards)] = _CARD_KIND[cards[::-1]]  # top at the end
        up_order = np.zeros((n, size if self.ordered else 0), np.int8)
        table_kind = np.zeros(size if self.ordered else 0, np.int8)
        table_owner = np.zeros(size if self.ordered else 0, np.int8)
        table = np.zeros((3, n, NUM_KINDS), np.int32)  # face up, face down from a pile, buried
        if s.table:
            cards, owners, sources, _levels = np.array(s.table, np.int64).T
            slot = (_SOURCE_PART[sources] * n + owners) * NUM_KINDS + _CARD_KIND[cards]
            table = np.bincount(slot, minlength=3 * n * NUM_KINDS).astype(np.int32).reshape(3, n, NUM_KINDS)
            if self.ordered:
                table_kind[:len(cards)], table_owner[:len(cards)] = _CARD_KIND[cards], owners
        if self.ordered:
            for p, cards in enumerate(s.face_up):
                up_order[p, :len(cards)] = _CARD_KIND[cards]
        entry = np.zeros(n, np.int32)
        entry[s.entry_order] = np.arange(1, len(s.entry_order) + 1)
        discard = np.bincount(_CARD_KIND[s.discard], minlength=NUM_KINDS).astype(np.int32)
        fields = {
            "_hand": np.array(s.hand_kinds, np.int32), "_pile": pile,
            "_pile_n": np.array([len(c) for c in s.piles], np.int32),
            "_pile_rand": np.zeros((n, NUM_KINDS), np.int32), "_face_up": np.array(s.face_up_kinds, np.int32),
            "_up_order": up_order, "_table_up": table[0], "_table_down": table[1], "_table_buried": table[2],
            "_table_kind": table_kind, "_table_owner": table_owner, "_discard": discard,
            "_composition": np.array(s.composition, np.int32), "_set_aside": np.int32(len(s.set_aside)),
            "_known": np.array(s.known, np.int32), "_unknown": np.array(s.unknown, np.int32),
            "_pile_known": np.array(s.pile_known, np.int32), "_pile_unknown": np.array(s.pile_unknown, np.int32),
            "_active": np.array(s.active, np.bool_), "_phase": np.int32(s.phase), "_leader": np.int32(s.leader),
            "_round_card": _CARD_KIND_OR_NONE[s.round_cards], "_fighting": _CARD_KIND_OR_NONE[s.fighting],
            "_entry": entry, "_participant": _seats_in(s.participants, n),
            "_stuck": np.array(s.stuck, np.bool_), "_war_level": np.int32(s.war_level),
            "_queue": np.int32(entry[s.current_player] if s.phase == BURY else 0),
            "_bury_left": np.int32(s.bury_left), "_commit_rest": np.int32(s.commit_rest),
            "_joker_value": np.int32(s.joker_value), "_retire_level": np.int32(s.retire_level),
            "_rounds": np.int32(s.rounds_completed), "_shares": np.array(s.shares, np.float32),
            "_paid": np.array(s.outcome_paid, np.float32), "_early": _seats_in(s.eliminated_early, n),
            "_winners": _seats_in(s.winner_set, n) & (s.phase == OVER),
        }
        return {name: _stored(name[1:], value) for name, value in fields.items()}


_CARD_KIND = np.asarray(KIND, np.int32)  #: kind of each card id (numpy, for ``from_state``)
_CARD_KIND_OR_NONE = np.append(_CARD_KIND, -1).astype(np.int32)  #: index -1 (no card) gives -1
#: table placement source (rules.py) -> 0 face up, 1 face down from a pile, 2 face down from the hand
_SOURCE_PART = np.array([0 if source <= WAR_CARD else 2 if source == FROM_HAND else 1
                         for source in (ROUND_CARD, WAR_CARD, FROM_PILE, FROM_HAND, FROM_RECYCLED)], np.int32)


def _seats_in(seats: list[int], n: int) -> np.ndarray:
    mask = np.zeros(n, np.bool_)
    mask[seats] = True
    return mask


__all__ = ["Env", "State"]
