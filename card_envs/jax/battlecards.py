"""Battlecards in JAX (Pgx API): the batched engine of ``battlecards_v0``, every option, 2-6 players.

``card_envs.jax.make("battlecards_v0", **options)`` returns :class:`Env`. One ``step`` is one decision
of the Python engine (LEAD, FOLLOW, BURY or WAR_UP, spec section 8); everything automatic between two
decisions (comparisons, wars of any depth, face-down placements, recycles, the last-card tie and its
deal, collecting, refills, retirement, eliminations, cease fire, the end of the game, truncation and
shaping; R24) runs inside the step in bounded ``lax.while_loop``\\ s, as ``rules.py`` does it.
Observations (``observe(state, p)`` = ``game.encode(state.view(p))``), masks, action ids and per-step
rewards (the Python engine's elimination convention, RULES.md) are exactly the Python engine's;
``card_envs.jax.lockstep`` checks them decision by decision.

Cards are kinds
---------------
Nothing in the game depends on a card's suit after the deal except *which* card of a kind leaves a hand
(R22), and nothing observable depends on that: values, comparisons, retirement, every observation entry
and every reward are functions of kinds (``2`` = 0 .. ``A`` = 12, joker = 13). So the engine keeps kinds
only: hands, face-up piles and the table are per-kind counts, ordered piles hold kinds.

Shuffles
--------
Every random event comes from the step's key: one 32-bit seed is drawn from it (``jax.random.bits``)
and expanded by a counter-based integer hash, so a step costs a single key derivation however many
cards it shuffles. A pile nobody has looked at is shuffled *lazily*: instead of permuting it, the engine
draws a uniformly random card of the pile whenever its top card is taken, which gives every card the
same distribution as a shuffled pile (no one sees a face-down pile's order, R23 / 7.3). Three kinds of
face-down pile exist:

==============  ==============================================================================
pile            how its top card is taken
==============  ==============================================================================
ordered         ``_pile[p, _pile_n[p] - 1]`` (a position converted by ``from_state``, or a pile
                recycled with ``shuffle_mid_game=False``: chronological order, A11)
shuffled        a uniformly random card of ``_pile_rand[p]`` (per-kind counts; a recycle)
dealt           a uniformly random card of ``_pool`` (a fresh deal: the undrawn cards of every
                dealt pile and the set-aside cards are exchangeable until drawn, so the deal is
                made card by card as the piles are drawn; ``_pool_n[p]`` of them are ``p``'s)
==============  ==============================================================================

In lockstep, a step where the Python engine shuffles is compared through ``from_state`` (its result is
the Python engine's random draw); with ``shuffle_mid_game=False`` recycles and the last-card-tie deal
keep chronological order and are compared step by step.

State arrays (``N`` = ``num_players``, ``D`` = deck size 52 or 54)
------------------------------------------------------------------
=====================  ===========  =================================================================
field                  shape        meaning (spec names)
=====================  ===========  =================================================================
``_hand``              (N, 14)      ``H_p``: cards per kind
``_pile``              (N, D) int8  ordered face-down pile ``D_p`` (kinds), top at ``_pile_n - 1``
``_pile_n``            (N,)         cards in the ordered pile
``_pile_rand``         (N, 14)      a shuffled face-down pile, per kind
``_pool``              (14,)        undrawn cards of the dealt piles and the set-aside cards
``_pool_n``            (N,)         ``p``'s undrawn dealt cards (drawn from ``_pool``)
``_face_up``           (N, 14)      ``U_p`` per kind
``_up_order``          (N, D) int8  ``U_p`` oldest first (kinds); only with ``shuffle_mid_game=False``
``_table_up``          (N, 14)      face-up table cards (round and war cards) per owner and kind
``_table_down``        (N, 14)      face-down table cards from the pile or the recycled pile
``_table_buried``      (N, 14)      face-down table cards buried from hand
``_table_kind``        (D,) int8    the table in chronological order (R23): kinds and
``_table_owner``       (D,) int8    owners; only with ``shuffle_mid_game=False``
``_discard``           (14,)        retired cards (R21)
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
``_queue``             ()           the face-down phase goes on below this entry position
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

Integer fields are int32 unless marked. ``current_player`` is ``-1`` once the game is over.
"""

from __future__ import annotations

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
    JOKER_KIND,
    KIND,
    LEAD,
    MAX_DECK,
    NUM_KINDS,
    OVER,
    WAR_CARD,
    WAR_UP,
    BattlecardsState,
)
from card_envs.jax.core import CardEnv, CardState

MAX_SEATS = 6
_NONE_KIND = NUM_KINDS  # the "none" entry of a kind one-hot
_KINDS = np.arange(NUM_KINDS, dtype=np.int32)
_NATURAL_VALUE = np.arange(2, 2 + NUM_KINDS, dtype=np.int32)  # kind + 2 (the joker's entry is unused)
# what the war loop has left to do
_DONE, _RESOLVE, _COMMIT = 0, 1, 2
_GOLDEN = np.uint32(0x9E3779B9)


# -- the state ------------------------------------------------------------------------------------------


class Game(NamedTuple):
    """The game arrays (the State's underscore fields without the underscore) and the Pgx fields a step
    changes; this is what the step's loops carry (see the module table)."""

    current: Any
    rewards: Any
    terminated: Any
    truncated: Any
    hand: Any
    pile: Any
    pile_n: Any
    pile_rand: Any
    pool: Any
    pool_n: Any
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


@dataclass
class State(CardState):
    """A Battlecards position (the game arrays of the module table after Pgx's fields)."""

    name: ClassVar[str] = "battlecards_v0"

    _hand: jax.Array
    _pile: jax.Array
    _pile_n: jax.Array
    _pile_rand: jax.Array
    _pool: jax.Array
    _pool_n: jax.Array
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
    counter: Any  #: uint32: random numbers used so far
    todo: Any  #: _DONE / _RESOLVE / _COMMIT (the war loop)
    resume: Any  #: the commitment of ``current`` goes on after its BURY decisions
    end_round: Any  #: the round is won (``winner``) or ends in a last-card tie (``tie``)
    winner: Any
    tie: Any
    over: Any  #: the game ends without ending the round (cease fire, A29)
    over_set: Any  #: its winner set


# -- small helpers ----------------------------------------------------------------------------------------


def _one_hot(index: jax.Array, size: int) -> jax.Array:
    return jnp.arange(size) == index


def _mix(x: jax.Array) -> jax.Array:
    """A 32-bit integer hash (lowbias32): the engine's source of random bits, seeded from the key."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def _random_below(flow: Flow, bound: jax.Array) -> tuple[Flow, jax.Array]:
    """A uniform integer in ``[0, bound)`` (``bound`` >= 1; 24 random bits)."""
    bits = _mix(_mix(flow.counter * _GOLDEN + flow.seed) ^ flow.seed)
    unit = (bits >> 8).astype(jnp.float32) * jnp.float32(1.0 / (1 << 24))
    value = jnp.minimum((unit * bound.astype(jnp.float32)).astype(jnp.int32), jnp.maximum(bound - 1, 0))
    return flow._replace(counter=flow.counter + jnp.uint32(1)), value


def _sample_kind(flow: Flow, counts: jax.Array) -> tuple[Flow, jax.Array]:
    """A uniformly random card of a per-kind multiset: its kind (garbage when ``counts`` is empty)."""
    flow, r = _random_below(flow, counts.sum())
    kind = (jnp.cumsum(counts) <= r).sum()
    return flow, jnp.minimum(kind, NUM_KINDS - 1).astype(jnp.int32)


def _value(kind: jax.Array, joker_value: jax.Array) -> jax.Array:
    """R2 / R20: the value of a kind (a joker is worth ``jv``)."""
    return jnp.where(kind == JOKER_KIND, joker_value, kind + 2)


def _take_known(known: jax.Array, unknown: jax.Array, cards: jax.Array) -> tuple[jax.Array, jax.Array]:
    """7.5: cards (per owner and kind) of the owners' hidden holdings became public: each leaves ``K_p``
    if its kind is there, else ``u_p`` (the same rule for ``F_p`` / ``f_p``)."""
    taken = jnp.minimum(cards, known)
    return known - taken, unknown - (cards - taken).sum(-1)


# -- the environment ------------------------------------------------------------------------------------


class Env(CardEnv):
    """Battlecards on Pgx's ``Env`` API (module docstring). Engines: this class plays the game
    (``init``, ``step``, ``observe``, ``legal_action_mask``, all jittable and vmappable); ``self.game``,
    the Python engine under the same options, supplies the static facts and ``from_state`` positions."""

    name = "battlecards_v0"
    state_class = State
    unsupported_options: dict[str, str] = {}

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        c = self.config
        self.n = c.num_players
        self.deck_size = MAX_DECK if c.jokers else 52
        self.ordered = not c.shuffle_mid_game  # recycles and the tie deal keep chronological order
        composition = np.full(NUM_KINDS, 4, np.int32)
        composition[JOKER_KIND] = 2 if c.jokers else 0
        self.composition = composition
        if c.max_rounds is not None and c.max_rounds <= 1 << 16:
            # obs[513] is rounds / max_rounds in float64, then float32 (encoding.py): the same numbers
            self.round_fraction = (np.arange(c.max_rounds + 1) / c.max_rounds).astype(np.float32)
        else:
            self.round_fraction = None

    # -- Pgx API -------------------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> State:
        c, n = self.config, self.n
        deal_key, leader_key = jax.random.split(key)
        flow = self._flow(deal_key)
        k = self.deck_size // n
        dealt = min(c.hand_size, k)
        zeros = jnp.zeros((n, NUM_KINDS), jnp.int32)
        g = Game(
            current=jnp.int32(0), rewards=jnp.zeros(n, jnp.float32), terminated=jnp.bool_(False),
            truncated=jnp.bool_(False), hand=zeros, pile=jnp.zeros((n, self.deck_size), jnp.int8),
            pile_n=jnp.zeros(n, jnp.int32), pile_rand=zeros, pool=jnp.asarray(self.composition),
            pool_n=jnp.full(n, k, jnp.int32), face_up=zeros,
            up_order=jnp.zeros((n, self.deck_size if self.ordered else 0), jnp.int8),
            table_up=zeros, table_down=zeros, table_buried=zeros,
            table_kind=jnp.zeros(self.deck_size if self.ordered else 0, jnp.int8),
            table_owner=jnp.zeros(self.deck_size if self.ordered else 0, jnp.int8),
            discard=jnp.zeros(NUM_KINDS, jnp.int32), composition=jnp.asarray(self.composition),
            set_aside=jnp.int32(self.deck_size - n * k), known=zeros, unknown=jnp.full(n, k, jnp.int32),
            pile_known=zeros, pile_unknown=jnp.full(n, k - dealt, jnp.int32), active=jnp.ones(n, jnp.bool_),
            phase=jnp.int32(LEAD), leader=jnp.int32(0), round_card=jnp.full(n, -1, jnp.int32),
            fighting=jnp.full(n, -1, jnp.int32), entry=jnp.zeros(n, jnp.int32),
            participant=jnp.zeros(n, jnp.bool_), stuck=jnp.zeros(n, jnp.bool_), war_level=jnp.int32(0),
            queue=jnp.int32(0), bury_left=jnp.int32(0), commit_rest=jnp.int32(0),
            joker_value=jnp.int32(c.joker_initial_value), retire_level=jnp.int32(1), rounds=jnp.int32(0),
            shares=jnp.full(n, 1.0 / n, jnp.float32), paid=jnp.zeros(n, jnp.float32),
            early=jnp.zeros(n, jnp.bool_), winners=jnp.zeros(n, jnp.bool_),
        )

        def deal_one(i: jax.Array, carry: tuple[Game, Flow]) -> tuple[Game, Flow]:  # 3.4 / A7
            g, flow = carry
            p = i // dealt
            flow, kind = _sample_kind(flow, g.pool)
            card = _one_hot(kind, NUM_KINDS)
            return g._replace(pool=g.pool - card, pool_n=g.pool_n - _one_hot(p, n),
                              hand=g.hand + (_one_hot(p, n)[:, None] & card[None, :])), flow

        g, flow = jax.lax.fori_loop(0, n * dealt, deal_one, (g, flow))
        if c.first_leader is None:  # A5
            leader = jax.random.randint(leader_key, (), 0, n, jnp.int32)
        else:
            leader = jnp.int32(c.first_leader)
        g = self._start_round(g._replace(leader=leader), jnp.bool_(True))
        return State(observation=jnp.zeros(OBSERVATION_SIZE, jnp.float32),
                     legal_action_mask=jnp.zeros(NUM_KINDS, jnp.bool_), _step_count=jnp.int32(0),
                     **self._fields(g))

    def _step(self, state: State, action: jax.Array, key: jax.Array) -> State:
        g = self._game(state)
        g = g._replace(rewards=jnp.zeros(self.n, jnp.float32))
        flow = self._flow(key)
        g, flow = self._decide(g, flow, action.astype(jnp.int32))
        g, flow = jax.lax.while_loop(lambda c: c[1].todo != _DONE, lambda c: self._war(*c), (g, flow))
        g, flow = self._end_of_round(g, flow)
        g = g._replace(queue=jnp.where(g.phase == BURY, g.queue, 0))  # only a BURY decision resumes the queue
        return state.replace(**self._fields(g))

    def _legal_action_mask(self, state: State) -> jax.Array:
        """Section 8.2: the kinds in the acting player's hand (none once the game is over)."""
        hand = state._hand[jnp.maximum(state.current_player, 0)]
        return (hand > 0) & (state._phase != OVER)

    def _observe(self, state: State, player: jax.Array) -> jax.Array:
        return self._encode(self._game(state), player)

    # -- State <-> Game ----------------------------------------------------------------------------------

    def _game(self, state: State) -> Game:
        return Game(**{f: getattr(state, _PGX_FIELDS.get(f, "_" + f)) for f in Game._fields})

    def _fields(self, g: Game) -> dict[str, jax.Array]:
        return {_PGX_FIELDS.get(f, "_" + f): getattr(g, f) for f in Game._fields}

    def _flow(self, key: jax.Array) -> Flow:
        n = self.n
        return Flow(seed=jax.random.bits(key, (), jnp.uint32), counter=jnp.uint32(0), todo=jnp.int32(_DONE),
                    resume=jnp.bool_(False), end_round=jnp.bool_(False), winner=jnp.int32(0),
                    tie=jnp.bool_(False), over=jnp.bool_(False), over_set=jnp.zeros(n, jnp.bool_))

    # -- card movements (R4-R6) ----------------------------------------------------------------------------

    def _pile_sizes(self, g: Game) -> jax.Array:
        return g.pile_n + g.pool_n + g.pile_rand.sum(1)

    def _held(self, g: Game) -> jax.Array:
        """``c_p``: hand + face-down pile + face-up pile."""
        return g.hand.sum(1) + self._pile_sizes(g) + g.face_up.sum(1)

    def _take_top(self, g: Game, flow: Flow, p: jax.Array, do: jax.Array) -> tuple[Game, Flow, jax.Array]:
        """The top card of ``p``'s (non-empty) face-down pile leaves it (when ``do``): its kind."""
        seat = _one_hot(p, self.n) & do
        count = g.pile_n[p]
        ordered = count > 0
        top = g.pile[p, jnp.maximum(count - 1, 0)].astype(jnp.int32)
        dealt = ~ordered & (g.pool_n[p] > 0)
        flow, drawn = _sample_kind(flow, jnp.where(dealt, g.pool, g.pile_rand[p]))
        kind = jnp.where(ordered, top, drawn)
        card = _one_hot(kind, NUM_KINDS)
        shuffled = ~ordered & ~dealt
        top_slot = seat[:, None] & (jnp.arange(self.deck_size) == count - 1)[None, :] & ordered
        g = g._replace(
            pile=jnp.where(top_slot, 0, g.pile).astype(jnp.int8),
            pile_n=g.pile_n - (seat & ordered),
            pool=g.pool - (card & (do & dealt)),
            pool_n=g.pool_n - (seat & dealt),
            pile_rand=g.pile_rand - (seat[:, None] & card[None, :] & shuffled),
        )
        return g, flow, kind

    def _recycle(self, g: Game, p: jax.Array, do: jax.Array) -> Game:
        """R5 RECYCLE: the face-up pile becomes the (empty) face-down pile; its contents are public (7.5)."""
        seat = _one_hot(p, self.n) & do
        won = g.face_up[p]
        size = won.sum()
        slots = jnp.arange(self.deck_size)
        if self.ordered:  # A11: the oldest card on top, i.e. at the end of the array
            source = jnp.clip(size - 1 - slots, 0, self.deck_size - 1)
            row = jnp.where(slots < size, g.up_order[p][source], 0)
            g = g._replace(pile=jnp.where(seat[:, None], row[None, :], g.pile), pile_n=jnp.where(seat, size, g.pile_n),
                           up_order=jnp.where(seat[:, None], 0, g.up_order).astype(jnp.int8))
        else:  # shuffled lazily (module docstring); a single card is a pile in order
            single = size == 1
            row = jnp.where(slots == 0, jnp.argmax(won), 0)
            g = g._replace(pile=jnp.where(seat[:, None] & single, row[None, :], g.pile).astype(jnp.int8),
                           pile_n=jnp.where(seat & single, 1, g.pile_n),
                           pile_rand=jnp.where(seat[:, None] & ~single, won[None, :], g.pile_rand))
        rows = seat[:, None] * won[None, :]
        g = g._replace(known=g.known + rows, pile_known=g.pile_known + rows,
                       face_up=jnp.where(seat[:, None], 0, g.face_up))
        if self.config.retire_lowest_on_flip:  # R21
            g = g._replace(retire_level=jnp.where(do, jnp.minimum(g.retire_level + 1, self.config.retire_max_rank),
                                                  g.retire_level))
        return g

    def _reveal(self, g: Game, p: jax.Array, kind: jax.Array, do: jax.Array) -> Game:
        """7.5: a card of ``p``'s hidden holdings became public."""
        cards = (_one_hot(p, self.n)[:, None] & _one_hot(kind, NUM_KINDS)[None, :] & do).astype(jnp.int32)
        known, unknown = _take_known(g.known, g.unknown, cards)
        return g._replace(known=known, unknown=unknown)

    def _left_pile(self, g: Game, p: jax.Array, kind: jax.Array, do: jax.Array) -> Game:
        """7.5: a card left ``p``'s pile knowledge ``F_p`` / ``f_p`` (drawn)."""
        cards = (_one_hot(p, self.n)[:, None] & _one_hot(kind, NUM_KINDS)[None, :] & do).astype(jnp.int32)
        known, unknown = _take_known(g.pile_known, g.pile_unknown, cards)
        return g._replace(pile_known=known, pile_unknown=unknown)

    def _fill_pending(self, g: Game, p: jax.Array) -> jax.Array:
        """R6 FILL goes on: the hand is short and there is a pile to draw from (or to recycle)."""
        in_hand = g.hand[p].sum()
        return (in_hand < self.config.hand_size) & (
            (self._pile_sizes(g)[p] > 0) | ((in_hand == 0) & (g.face_up[p].sum() > 0)))

    def _fill_step(self, g: Game, flow: Flow, p: jax.Array) -> tuple[Game, Flow]:
        """One draw of R6 FILL (recycling first when hand and pile are empty); R4 DRAW with R21 retirement."""
        c = self.config
        recycle = (self._pile_sizes(g)[p] == 0) & (g.hand[p].sum() == 0) & (g.face_up[p].sum() > 0)
        g = self._recycle(g, p, recycle)
        g, flow, kind = self._take_top(g, flow, p, jnp.bool_(True))
        g = self._left_pile(g, p, kind, jnp.bool_(True))
        card = _one_hot(kind, NUM_KINDS)
        if c.retire_lowest_on_flip:
            retired = (kind != JOKER_KIND) & (kind + 2 <= g.retire_level)
            g = self._reveal(g, p, kind, retired)
            g = g._replace(discard=g.discard + (card & retired))
        else:
            retired = jnp.bool_(False)
        return g._replace(hand=g.hand + (_one_hot(p, self.n)[:, None] & card[None, :] & ~retired)), flow

    def _fill(self, g: Game, flow: Flow, p: jax.Array, do: jax.Array) -> tuple[Game, Flow]:
        """R6 FILL(p) when ``do``."""
        return jax.lax.while_loop(lambda c: do & self._fill_pending(c[0], p),
                                  lambda c: self._fill_step(c[0], c[1], p), (g, flow))

    def _place_face_down(self, g: Game, flow: Flow, p: jax.Array, count: jax.Array,
                         recycle: jax.Array) -> tuple[Game, Flow]:
        """R11b / R11d: up to ``count`` cards from the top of ``p``'s pile to the table face down; when the
        pile runs out and ``recycle`` allows, the face-up pile is recycled first (A17, A20)."""

        def pending(carry: tuple[Game, Flow, jax.Array]) -> jax.Array:
            g, _, placed = carry
            return (placed < count) & ((self._pile_sizes(g)[p] > 0) | (recycle & (g.face_up[p].sum() > 0)))

        def place(carry: tuple[Game, Flow, jax.Array]) -> tuple[Game, Flow, jax.Array]:
            g, flow, placed = carry
            g = self._recycle(g, p, self._pile_sizes(g)[p] == 0)
            g, flow, kind = self._take_top(g, flow, p, jnp.bool_(True))
            g = self._append_table(g, p, kind, jnp.bool_(True))
            g = g._replace(table_down=g.table_down + (_one_hot(p, self.n)[:, None] & _one_hot(kind, NUM_KINDS)))
            return g, flow, placed + 1

        g, flow, _ = jax.lax.while_loop(pending, place, (g, flow, jnp.int32(0)))
        return g, flow

    def _table_size(self, g: Game) -> jax.Array:
        return (g.table_up + g.table_down + g.table_buried).sum()

    def _append_table(self, g: Game, p: jax.Array, kind: jax.Array, do: jax.Array) -> Game:
        """R23: the chronological table (kept only when it matters: ``shuffle_mid_game=False``).
        Call before the placement is counted in the table arrays."""
        if not self.ordered:
            return g
        at = jnp.where(do, self._table_size(g), self.deck_size)
        return g._replace(table_kind=g.table_kind.at[at].set(kind.astype(jnp.int8), mode="drop"),
                          table_owner=g.table_owner.at[at].set(p.astype(jnp.int8), mode="drop"))

    # -- decisions (R7, R11c, R12) ---------------------------------------------------------------------

    def _next_active(self, g: Game, p: jax.Array) -> jax.Array:
        """R1: the next active seat clockwise after ``p``."""
        seats = (p + 1 + jnp.arange(self.n)) % self.n
        return seats[jnp.argmax(g.active[seats])]

    def _next_in_war(self, g: Game, below: jax.Array) -> tuple[jax.Array, jax.Array]:
        """R11 / R12 reverse entry order: the non-stuck participant with the highest entry position below
        ``below``, and whether there is one."""
        rank = jnp.where(g.participant & ~g.stuck & (g.entry < below), g.entry, 0)
        return jnp.argmax(rank).astype(jnp.int32), rank.max() > 0

    def _decide(self, g: Game, flow: Flow, action: jax.Array) -> tuple[Game, Flow]:
        n = self.n
        p, phase = g.current, g.phase
        seat = _one_hot(p, n)
        card = seat[:, None] & _one_hot(action, NUM_KINDS)[None, :]
        bury = phase == BURY
        face_up = ~bury
        round_card = phase <= FOLLOW
        g = self._append_table(g, p, action, jnp.bool_(True))
        g = self._reveal(g, p, action, face_up)
        g = g._replace(
            hand=g.hand - card,
            table_buried=g.table_buried + (card & bury),
            table_up=g.table_up + (card & face_up),
            fighting=jnp.where(seat & face_up, action, g.fighting),
            round_card=jnp.where(seat & round_card, action, g.round_card),
            bury_left=g.bury_left - bury,
        )
        # R7: the next follower, or the round is resolved
        follower = self._next_active(g, p)
        round_done = round_card & (follower == g.leader)
        # R12: the next war card in reverse entry order, or the level is resolved
        shower, more = self._next_in_war(g, g.entry[p])
        war_up = phase == WAR_UP
        level_done = war_up & ~more
        commit_done = bury & (g.bury_left == 0)
        g = g._replace(
            current=jnp.where(round_card & ~round_done, follower, jnp.where(war_up & more, shower, p)),
            phase=jnp.where(round_card & ~round_done, FOLLOW, phase),
        )
        todo = jnp.where(round_done | level_done, _RESOLVE, jnp.where(commit_done, _COMMIT, _DONE))
        return g, flow._replace(todo=todo.astype(jnp.int32), resume=commit_done)

    # -- the war (R8-R13, R15 start) ---------------------------------------------------------------------

    def _war(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        """One pass of the automatic war procedure: resolve (R8 / R13), start a level (R10), one
        commitment (R11) or the start of the face-up phase (R12)."""
        c, n = self.config, self.n
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
        # R9 / A14: entry order = play order, clockwise from the leader
        order = (jnp.arange(n) - g.leader) % n
        position = 1 + (tied[None, :] & (order[None, :] < order[:, None])).sum(1)
        g = g._replace(entry=jnp.where(start & ~in_war, jnp.where(tied, position, 0), g.entry))
        # R10: a level starts
        stuck = g.stuck | (start & tied & (self._held(g) == 0))  # A22
        g = g._replace(war_level=g.war_level + start, participant=jnp.where(start, tied, g.participant),
                       stuck=stuck)
        two_left = g.active.sum() == 2
        cease = start & jnp.bool_(c.cease_fire) & two_left & (tied & stuck).any()  # R10.1 / A30
        all_stuck = start & ~cease & ~(tied & ~stuck).any()  # R10.2 / A24
        everyone = all_stuck & (g.active.sum() == tied.sum())  # R15.1 / A29
        over = cease | everyone
        flow = flow._replace(over=flow.over | over,
                             over_set=jnp.where(cease, g.active, jnp.where(everyone, tied, flow.over_set)),
                             tie=flow.tie | (all_stuck & ~everyone),
                             end_round=flow.end_round | (all_stuck & ~everyone))
        commit = jnp.where(start & ~over & ~all_stuck, True, (flow.todo == _COMMIT) & ~resolve)
        g = g._replace(queue=jnp.where(start, MAX_SEATS + 1, g.queue))
        # R11: one commitment, in reverse entry order
        resume = flow.resume & commit
        nxt, any_left = self._next_in_war(g, g.queue)
        p = jnp.where(resume, g.current, nxt)
        begin = commit & ~resume & any_left
        empty = begin & (g.hand[p].sum() == 0)
        g, flow = self._fill(g, flow, p, empty)  # R11a / A19
        now_stuck = empty & (g.hand[p].sum() == 0)
        g = g._replace(stuck=g.stuck | (_one_hot(p, n) & now_stuck))
        begin = begin & ~now_stuck
        facedown = c.war_facedown_count
        from_pile = jnp.minimum(facedown, self._pile_sizes(g)[p])
        short = facedown - from_pile
        burials = jnp.where(short > 0, jnp.maximum(jnp.minimum(short, g.hand[p].sum() - 1), 0), 0)  # R11c / A17
        bury_now = begin & (burials > 0)
        count = jnp.where(resume, g.commit_rest, jnp.where(bury_now, from_pile, facedown))
        g, flow = self._place_face_down(g, flow, p, jnp.where(resume | begin, count, 0), ~bury_now)
        done_commit = resume | begin | now_stuck
        g = g._replace(
            phase=jnp.where(bury_now, BURY, g.phase),
            current=jnp.where(bury_now, p, g.current),
            bury_left=jnp.where(bury_now, burials, jnp.where(done_commit, 0, g.bury_left)),
            commit_rest=jnp.where(bury_now, short - burials, jnp.where(done_commit, 0, g.commit_rest)),
            queue=jnp.where(done_commit, g.entry[p], g.queue),
        )
        # R12: the face-up phase starts once every commitment is made
        exhausted = commit & ~resume & ~any_left
        first, anyone = self._next_in_war(g, MAX_SEATS + 1)
        g = g._replace(phase=jnp.where(exhausted & anyone, WAR_UP, g.phase),
                       current=jnp.where(exhausted & anyone, first, g.current))
        todo = jnp.where(commit & ~bury_now & ~exhausted, _COMMIT,
                         jnp.where(exhausted & ~anyone, _RESOLVE, _DONE))  # all stuck: resolve again
        return g, flow._replace(todo=todo.astype(jnp.int32), resume=jnp.bool_(False))

    # -- the end of a round (R14-R19) -------------------------------------------------------------------

    def _end_of_round(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        c, n = self.config, self.n
        end = flow.end_round
        # A12: every face-down card is revealed
        revealed = (g.table_down + g.table_buried) * end
        known, unknown = _take_known(g.known, g.unknown, revealed)
        pile_known, pile_unknown = _take_known(g.pile_known, g.pile_unknown, g.table_down * end)
        g = g._replace(known=known, unknown=unknown, pile_known=pile_known, pile_unknown=pile_unknown)
        won = end & ~flow.tie
        g, flow = jax.lax.cond(won, self._win_round, lambda g, flow: (g, flow), g, flow)
        g, flow = jax.lax.cond(flow.tie, self._last_card_tie, lambda g, flow: (g, flow), g, flow)
        # R16
        zeros = jnp.zeros_like(g.table_up)
        g = g._replace(rounds=g.rounds + end, table_up=jnp.where(end, zeros, g.table_up),
                       table_down=jnp.where(end, zeros, g.table_down),
                       table_buried=jnp.where(end, zeros, g.table_buried),
                       table_kind=jnp.where(end, 0, g.table_kind).astype(jnp.int8),
                       table_owner=jnp.where(end, 0, g.table_owner).astype(jnp.int8))
        for i in range(n):  # A34: clockwise from the next leader
            p = (g.leader + i) % n
            g, flow = self._fill(g, flow, p, end & g.active[p])
        held = self._held(g)
        out = end & g.active & (held == 0)  # R17
        g = g._replace(active=g.active & ~out)
        if c.shaping_weight:
            g = self._shape(g, held, end)
        remaining = g.active.sum()
        last_one = end & (remaining <= 1)  # R16.4 / A32
        limit = c.max_rounds if c.max_rounds is not None else np.iinfo(np.int32).max
        truncate = end & ~last_one & (g.rounds >= limit)  # R16.5 / R19
        go_on = end & ~last_one & ~truncate
        g = self._pay_elimination(g, out & go_on)
        leader_out = go_on & ~g.active[g.leader]  # R16.6 / A33
        g = g._replace(leader=jnp.where(leader_out, self._next_active(g, g.leader), g.leader))
        g = self._start_round(g, go_on)
        most = held == held.max()
        winners = jnp.where(flow.over, flow.over_set,
                            jnp.where(last_one, jnp.where(remaining == 1, g.active, out), most))
        g = jax.lax.cond(flow.over | last_one | truncate, self._finish, lambda g, *_: g, g, winners, truncate, held)
        return g, flow

    def _win_round(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        """R14: the winner takes the table (chronological order, R23); ``jv`` becomes its card's value."""
        n = self.n
        w = flow.winner
        seat = _one_hot(w, n)
        stakes = (g.table_up + g.table_down + g.table_buried).sum(0)
        if self.ordered:
            g = self._collect_ordered(g, jnp.full(self.deck_size, w, jnp.int32), jnp.zeros(self.deck_size, jnp.bool_))
        fighting = g.fighting[w]
        jv = g.joker_value
        if self.config.jokers:  # A37: a winning joker leaves jv unchanged
            jv = jnp.where(fighting == JOKER_KIND, jv, fighting + 2)
        return g._replace(face_up=g.face_up + seat[:, None] * stakes[None, :], joker_value=jv, leader=w), flow

    def _last_card_tie(self, g: Game, flow: Flow) -> tuple[Game, Flow]:
        """R15.2: the tied players take their own cards back; the others' cards are shuffled and dealt
        from the designated player in entry order, the extras to the designated player (A25-A28)."""
        n = self.n
        tied = g.participant
        placed = g.table_up + g.table_down + g.table_buried
        others = (placed * ~tied[:, None]).sum(0)
        rank = jnp.where(tied, g.entry, MAX_SEATS + 1)
        first = jnp.argmin(rank)
        second = jnp.argmin(jnp.where(_one_hot(first, n), MAX_SEATS + 1, rank))
        designated = jnp.where(g.entry[first] == 1, second, first)  # A27: T[0] unless it is e1
        size = tied.sum()
        in_tied = (tied[None, :] & (g.entry[None, :] < g.entry[:, None])).sum(1)  # index in T, entry order
        rotation = (in_tied - in_tied[designated]) % size  # 0 = designated, then entry order, wrapping
        total = others.sum()
        dealt = (total // size) * size
        if self.ordered:
            mine, recipient = self._tie_recipients(g, tied, rotation, size, dealt, designated)
            g = self._collect_ordered(g, recipient, ~mine)
            live = jnp.arange(self.deck_size) < self._table_size(g)
            face_up = (g.face_up + placed * tied[:, None]).at[recipient, g.table_kind.astype(jnp.int32)].add(
                (live & ~mine).astype(jnp.int32))
        else:
            face_up = g.face_up + placed * tied[:, None]

            def deal(carry: tuple[jax.Array, jax.Array, Flow, jax.Array]) -> tuple:
                face_up, left, flow, i = carry
                flow, kind = _sample_kind(flow, left)
                slot = jnp.where(i < dealt, i % size, 0)
                to = tied & (rotation == slot)
                card = _one_hot(kind, NUM_KINDS)
                return face_up + (to[:, None] & card[None, :]), left - card, flow, i + 1

            face_up, _, flow, _ = jax.lax.while_loop(lambda c: c[3] < total, deal,
                                                      (face_up, others, flow, jnp.int32(0)))
        jv = g.joker_value
        if self.config.jokers:  # A28: jv := the tied value
            jv = _value(g.fighting[first], g.joker_value)
        return g._replace(face_up=face_up, joker_value=jv, leader=designated.astype(jnp.int32)), flow

    def _tie_recipients(self, g: Game, tied: jax.Array, rotation: jax.Array, size: jax.Array, dealt: jax.Array,
                        designated: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Chronological R15 deal (``shuffle_mid_game=False``): per table card, whether it goes back to its
        owner, and its recipient (A25-A28)."""
        owners = g.table_owner.astype(jnp.int32)
        mine = tied[owners]
        others_before = jnp.cumsum(~mine) - ~mine  # index of the card in the chronological M
        slot = jnp.where(others_before < dealt, others_before % size, 0)
        by_slot = jnp.argmax(tied[None, :] & (rotation[None, :] == slot[:, None]), axis=1)
        recipient = jnp.where(mine, owners, jnp.where(others_before < dealt, by_slot, designated))
        return mine, recipient

    def _collect_ordered(self, g: Game, recipient: jax.Array, later: jax.Array) -> Game:
        """R23: the table cards appended to their recipients' ordered face-up piles: every recipient gets
        its cards with ``later`` false first, then the others, each group in chronological order."""
        n, size = self.n, self.deck_size
        live = jnp.arange(size) < self._table_size(g)
        to = (recipient[:, None] == jnp.arange(n)[None, :]) & live[:, None]
        early_cards = to & ~later[:, None]
        late_cards = to & later[:, None]
        before_early = jnp.cumsum(early_cards, axis=0) - early_cards
        before_late = jnp.cumsum(late_cards, axis=0) - late_cards
        base = g.face_up.sum(1)
        position = jnp.where(later, (base + early_cards.sum(0))[recipient] + before_late[jnp.arange(size), recipient],
                             base[recipient] + before_early[jnp.arange(size), recipient])
        row = jnp.where(live, recipient, n)
        return g._replace(up_order=g.up_order.at[row, position].set(g.table_kind, mode="drop"))

    def _shape(self, g: Game, held: jax.Array, end: jax.Array) -> Game:
        """Section 9 shaping: ``lambda N/(N-1) (s_p - s'_p)`` at the end of every round."""
        n = self.n
        total = held.sum()
        shares = held.astype(jnp.float32) / jnp.maximum(total, 1).astype(jnp.float32)
        do = end & (total > 0)  # every card retired (A32): shares undefined, keep the last ones
        scale = jnp.float32(self.config.shaping_weight * n / (n - 1))
        return g._replace(rewards=g.rewards + jnp.where(do, scale * (shares - g.shares), 0.0),
                          shares=jnp.where(do, shares, g.shares))

    def _pay_elimination(self, g: Game, out: jax.Array) -> Game:
        """RULES.md: an eliminated player is paid ``-1/(N-1)`` at once, shared by the players still in."""
        n = self.n
        stake = jnp.where(out, 1.0 / (n - 1) + g.paid, 0.0)
        share = stake.sum() / jnp.maximum(g.active.sum(), 1)
        pay = jnp.where(out, -stake, jnp.where(g.active & out.any(), share, 0.0))
        return g._replace(rewards=g.rewards + pay, paid=g.paid + pay, early=g.early | out)

    def _finish(self, g: Game, winners: jax.Array, truncated: jax.Array, held: jax.Array) -> Game:
        """R18 / R19: the episode ends with winner set ``W``; section 9 rewards minus what was paid."""
        c, n = self.config, self.n
        present = ~g.early
        w = winners.sum().astype(jnp.float32)
        win = (present.sum() - w) / (n - 1) + g.early.sum() / ((n - 1) * w)
        target = jnp.where(winners, win, -w / (n - 1))
        if c.truncation_scoring == "card_share":
            share = n / (n - 1) * (held / held.sum() - 1 / n)
            target = jnp.where(truncated, share, target)
        pay = jnp.where(present, target - g.paid, 0.0).astype(jnp.float32)
        return g._replace(rewards=g.rewards + pay, paid=g.paid + pay, winners=winners, phase=jnp.int32(OVER),
                          current=jnp.int32(-1), terminated=~truncated, truncated=truncated)

    def _start_round(self, g: Game, do: jax.Array) -> Game:
        """R7: the leader leads; every round field is cleared."""
        n = self.n
        none = jnp.full(n, -1, jnp.int32)
        no = jnp.zeros(n, jnp.bool_)
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
        c, n = self.config, self.n
        f32 = jnp.float32
        seats = jnp.arange(n)
        in_war = g.entry > 0
        seat_rows = jnp.concatenate([
            g.active[:, None], (seats == g.leader)[:, None], ((seats == g.current) & (g.phase != OVER))[:, None],
            g.hand.sum(1)[:, None], self._pile_sizes(g)[:, None], g.face_up.sum(1)[:, None], g.face_up,
            jnp.where(g.round_card >= 0, g.round_card, _NONE_KIND)[:, None] == np.arange(NUM_KINDS + 1)[None, :],
            (g.participant & in_war)[:, None], (g.stuck & in_war)[:, None], g.entry[:, None],
            jnp.where(g.fighting >= 0, g.fighting, _NONE_KIND)[:, None] == np.arange(NUM_KINDS + 1)[None, :],
            g.table_down.sum(1)[:, None], g.table_buried.sum(1)[:, None], g.known, g.unknown[:, None],
        ], axis=1, dtype=f32)
        rotated = seat_rows[(o + seats) % n].reshape(-1)
        decision = jnp.where((g.current == o) & (g.phase >= 0), jnp.arange(4) == g.phase, False)
        public_known = g.known.sum(0) - g.known[o]
        table_up = g.table_up.sum(0)
        unaccounted = (g.composition - g.face_up.sum(0) - table_up - g.discard - public_known - g.hand[o]
                       - g.pile_known[o] - g.table_buried[o])
        if self.round_fraction is not None:
            rounds = jnp.asarray(self.round_fraction)[jnp.minimum(g.rounds, c.max_rounds)]
        elif c.max_rounds is not None:
            rounds = g.rounds.astype(f32) / f32(c.max_rounds)
        else:
            rounds = f32(0.0)
        head = jnp.concatenate([decision, g.hand[o], g.table_buried[o], g.pile_known[o], g.pile_unknown[o][None]],
                               dtype=f32)
        tail = jnp.concatenate([
            jnp.stack([g.war_level, self._table_size(g)]), table_up,
            g.joker_value == np.arange(1, 15), (g.retire_level - 1)[None], g.discard, g.set_aside[None],
        ], dtype=f32)
        flags = np.array([c.jokers, c.retire_lowest_on_flip, c.cease_fire], np.float32)
        rest = jnp.concatenate([unaccounted, g.active.sum()[None], g.bury_left[None]], dtype=f32)
        obs = jnp.concatenate([head, rotated, jnp.zeros(SEAT_SIZE * (MAX_SEATS - n), f32), tail, rounds[None],
                               rest, flags])
        return obs * SCALE

    # -- Python positions ----------------------------------------------------------------------------------

    def _game_fields(self, s: BattlecardsState, seed: tuple[int, ...]) -> dict[str, np.ndarray]:
        n, size = self.n, self.deck_size
        kinds = np.asarray(KIND, np.int32)

        def per_kind(cards: list[int]) -> np.ndarray:
            return np.bincount(kinds[np.asarray(cards, np.int64)], minlength=NUM_KINDS).astype(np.int32) \
                if cards else np.zeros(NUM_KINDS, np.int32)

        pile = np.zeros((n, size), np.int8)
        for p, cards in enumerate(s.piles):
            pile[p, :len(cards)] = kinds[cards[::-1]] if cards else []  # top at the end
        up_order = np.zeros((n, size if self.ordered else 0), np.int8)
        table_kind = np.zeros(size if self.ordered else 0, np.int8)
        table_owner = np.zeros(size if self.ordered else 0, np.int8)
        if self.ordered:
            for p, cards in enumerate(s.face_up):
                up_order[p, :len(cards)] = kinds[cards] if cards else []
            for i, (card, owner, _source, _level) in enumerate(s.table):
                table_kind[i], table_owner[i] = KIND[card], owner
        table = np.zeros((3, n, NUM_KINDS), np.int32)
        for card, owner, source, _level in s.table:
            table[0 if source <= WAR_CARD else 2 if source == FROM_HAND else 1, owner, KIND[card]] += 1
        entry = np.zeros(n, np.int32)
        for i, p in enumerate(s.entry_order):
            entry[p] = i + 1
        over = s.phase == OVER
        queue = entry[s.current_player] if s.phase == BURY else 0
        return {
            "_hand": np.asarray(s.hand_kinds, np.int32), "_pile": pile,
            "_pile_n": np.array([len(c) for c in s.piles], np.int32),
            "_pile_rand": np.zeros((n, NUM_KINDS), np.int32), "_pool": np.zeros(NUM_KINDS, np.int32),
            "_pool_n": np.zeros(n, np.int32), "_face_up": np.asarray(s.face_up_kinds, np.int32),
            "_up_order": up_order, "_table_up": table[0], "_table_down": table[1], "_table_buried": table[2],
            "_table_kind": table_kind, "_table_owner": table_owner, "_discard": per_kind(s.discard),
            "_composition": np.asarray(s.composition, np.int32), "_set_aside": np.int32(len(s.set_aside)),
            "_known": np.asarray(s.known, np.int32), "_unknown": np.asarray(s.unknown, np.int32),
            "_pile_known": np.asarray(s.pile_known, np.int32), "_pile_unknown": np.asarray(s.pile_unknown, np.int32),
            "_active": np.asarray(s.active, np.bool_), "_phase": np.int32(s.phase), "_leader": np.int32(s.leader),
            "_round_card": np.array([KIND[c] if c >= 0 else -1 for c in s.round_cards], np.int32),
            "_fighting": np.array([KIND[c] if c >= 0 else -1 for c in s.fighting], np.int32),
            "_entry": entry, "_participant": np.isin(np.arange(n), s.participants),
            "_stuck": np.asarray(s.stuck, np.bool_), "_war_level": np.int32(s.war_level),
            "_queue": np.int32(queue), "_bury_left": np.int32(s.bury_left), "_commit_rest": np.int32(s.commit_rest),
            "_joker_value": np.int32(s.joker_value), "_retire_level": np.int32(s.retire_level),
            "_rounds": np.int32(s.rounds_completed), "_shares": np.asarray(s.shares, np.float32),
            "_paid": np.asarray(s.outcome_paid, np.float32),
            "_early": np.isin(np.arange(n), s.eliminated_early),
            "_winners": np.isin(np.arange(n), s.winner_set) & over,
        }


__all__ = ["Env", "State"]
