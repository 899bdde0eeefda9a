"""Bloodlines in JAX (Pgx API): the Python engine ``card_envs/bloodlines/rules.py`` as pure array functions.

``card_envs.jax.make("bloodlines_v0", **options)`` returns :class:`Env`. One ``step`` is one decision of
the Python engine (215 actions, the same ids); the decision-free rest of the turn (R11's forced
``end step 1`` / ``pass``, the step-2 draw, attack resolution, turn end, stalemate, truncation) is resolved
inside the step, so the two engines agree decision for decision. ``observe(state, p)`` is exactly
``game.encode(py_state.view(p))`` (485 float32 entries, layout in ``card_envs/bloodlines/encoding.py``);
masks and per-step rewards are the Python engine's. Every option of ``BloodlinesConfig`` is supported
(static, fixed at ``make``). The only randomness is the deal (S2-S7), drawn from ``init``'s key with the
distribution of the Python engine's (not its number stream: a JAX deal equals the Python deal of the same
piles, which ``from_state`` and the tests use); nothing is shuffled after setup (A36), so ``step`` never
uses its key. Every random number of a deal is one of the key's words hashed with a counter (``core.key_words``, no
Threefry call). Each pile is ordered by sorting 36 random 26-bit keys that carry the card index in their low 6 bits
(one sort, the cheapest shuffle on CPU); keys tying in the random bits keep index order, a deviation from the uniform
order below 1e-5 per deal, like ``jax.random.permutation``'s (32-bit keys).

Every function of the step works on one state or on a batch whose arrays carry the batch axis *last*
(``batch_last``: a per-game scalar ``(n,)``, ``_zone`` ``(2, 36, n)``, the observation ``(485, n)``):
``env.step_batch_last(states, actions)`` runs the whole batch at once, each entry a contiguous row of ``n``
games that XLA vectorises, where ``jax.vmap(env.step)`` compiles rows of 36 or 485 entries to short scalar
loops (on CPU the batch-last loop of ``benchmarks/jax_throughput`` plays about 1.7x the decisions per
CPU-second of ``vmap(step)``). Hence per-entry constants are columns (``column``), a seat's row a selection
(``_of``), and reductions over entries unrolled chains (``_any``).

State arrays (seat-indexed rows ``[p]``; card columns use the number-card index ``k = 9 s + rank - 2``,
2C = 0 .. 10S = 35, of that seat's own deck, A51):

=====================  ===========  =======================================================================
field                  shape/dtype  meaning
=====================  ===========  =======================================================================
``_bloodline``         (2,) int32   suit of each seat (C=0, D=1, H=2, S=3)
``_zone``              (2,36) int8  where each number card lies: 0 pile, 1 hand, 2-4 hearts under J/Q/K,
                                    5-13 unit 0-8, 14 pool, 15 discard pile (``rules.Z_*``)
``_order``             (2,36) int8  a pile card's position in its pile (-1 once out of it); the pile's cards
                                    are those with ``_order >= _top`` (lower = nearer the top), so a draw
                                    of ``n`` cards is ``zone = hand where _order < _top + n`` -- no gather
``_top``               (2,) int32   pile positions already drawn; pile size ``36 - _top``
``_hand_size``         (2,) int32   cards in each hand (``_zone == 1`` counted, kept in step)
``_alive``             (2,3) bool   surviving royals J, Q, K
``_defense``           (2,3) int32  def(P, r): value of the hearts under each royal (R2)
``_attack``            (2,9) int32  atk(P, u) of each unit slot, 0 past the last unit (R2, R17)
``_units``             (2,) int32   number of units
``_jokers``            (2,) int32   jokers in play (identities never matter: the lowest acts, A35)
``_supply``            (2,) int32   jokers left in the supply (R9f)
``_jokers_discarded``  (2,) int32   jokers in the discard pile
``_pool_value``        (2,) int32   poolval(P) (the pool's cards are ``_zone == 14``)
``_turn``              () int32     turn number, 1-based (R1)
``_active``            () int32     seat whose turn it is (the attacker during ``DECOY``)
``_phase``             () int32     0 ``STEP1``, 1 ``MAIN``, 2 ``DISCARD``, 3 ``DECOY``
``_resume_phase``      () int32     the phase the owed discards return to (R8)
``_owed``              () int32     discards owed (R8)
``_idle``              () int32     idle-turn counter (R15)
``_moved``             () bool      a card changed zone during this turn (R15)
``_decoy_royal``       () int32     the defender's threatened royal during ``DECOY``, else -1
``_decoy_by_joker``    () bool      the pending ``DECOY`` follows a joker attack
=====================  ===========  =======================================================================

The legal mask is a handful of whole-array operations over these arrays (no per-action loop), and the
step one straight-line update in which each action kind contributes through ``jnp.where``. How the
costly parts are kept cheap on a CPU (measured with ``jax.profiler`` on the benchmark's loop):

=========================  ===============================================================================
part                       form
=========================  ===============================================================================
observation                every entry is one comparison with, or one copy of, one entry of a small int32
                           source vector (``_observation_tables``): one gather with constant indices and a
                           select (``_take``): batch-last, whole rows of the source; under ``vmap`` taken
                           over the flattened batch so that XLA writes it batch-major in one pass
                           (per-block kernels and a concatenate cost 2.5x)
R11 forced steps           at most ``MAX_FORCED_TURNS`` turns; the first in line for every state (a quarter
                           of a random batch has one), the rest a ``lax.while_loop`` that runs only the few
                           states that still need it, gathered into slots (``_forced_steps_in_slots``, under
                           ``vmap`` through ``custom_vmap``): a batched loop would run the whole batch as
                           often as its longest chain needs
per-game values            the few a zone update reads (the moved card, its destination, the attacked
                           unit, the drawn pile positions) computed once (``computed_once``): XLA fuses an
                           elementwise value into each consumer and computed it again for each of the 72
                           zone entries (the batch-last step cost 1.4x more)
``_zone``, ``_order``      int8: the largest arrays a step updates (several passes) move a quarter of the
                           bytes of int32 (batch-last at 2,048 games a device: 13% less CPU per decision)
the deal                   no Threefry call (``core.key_words``): under ``vmap``, each was a loop of small XLA
                           operations, the largest cost of a re-deal of a few games
"any" over a few entries   unrolled ``or`` chains (``_any``) and R9d as strongest unit against weakest
                           survivor (``_can_attack``): XLA's small reductions are slow on CPU
=========================  ===============================================================================
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from pgx._src.struct import dataclass

from card_envs.bloodlines import rules
from card_envs.bloodlines.encoding import OBSERVATION_SIZE
from card_envs.bloodlines.rules import (
    ADD_TO_UNIT,
    ATTACK,
    BUY_JOKER,
    CLUBS,
    CYCLE,
    DECOY,
    DECOY_PHASE,
    DIAMONDS,
    DISCARD,
    DISCARD_PHASE,
    END_STEP1,
    HEART,
    JOKER_ATTACK,
    MAIN,
    MAX_ADD_UNIT,
    MAX_TURNS_BOUND,
    MAX_UNITS,
    MAX_VALUE_SUM,
    NEW_UNIT,
    NO_DECOY,
    NUM_ACTIONS,
    NUM_NUMBER_CARDS,
    PASS,
    POOL,
    POWER,
    STEP1,
    SUITS,
    Z_DISCARD,
    Z_HAND,
    Z_HEART,
    Z_PILE,
    Z_POOL,
    Z_UNIT,
    Bloodlines,
    BloodlinesConfig,
    BloodlinesState,
)
from card_envs.cards import JOKER_IDS
from card_envs.core.engine import NO_PLAYER
from card_envs.jax.core import FALSE, CardEnv, CardState, Fields, computed_once, key_words, padded
from card_envs.jax.core import _column as column

NUM_CARDS = NUM_NUMBER_CARDS  # 36 number cards per seat
NUM_ROYALS = 3
#: R11: the most turns one decision can hand to the forced-step automation (one loop iteration each:
#: a forced ``end step 1`` then a forced ``pass``). A forced turn that moves a card draws the last card of
#: its pile (with cards left, a drawn club/diamond could be cycled and a heart/spade played), and a forced
#: idle turn needs an empty pile too (a full hand of neither kind is empty), so each seat has at most one
#: moving forced turn, before its idle ones; two idle turns in a row end the game (R15). Longest chain:
#: the rest of the deciding turn, then N, N, I, I = 5 turns (10 forced steps): the first taken in line,
#: the others in a loop of at most ``MAX_FORCED_TURNS - 1`` iterations.
MAX_FORCED_TURNS = 5
#: S4: the low bits of a pile's sort keys hold the card index (see the module docstring)
_INDEX_BITS = 6
#: a zone number past every zone (``rules.Z_*``): no card is in it
_NO_ZONE = Z_DISCARD + 1
#: dtype of ``_zone`` and ``_order`` (values -1 .. 35): the step's largest arrays move a quarter of int32's bytes
CARDS = np.int8

# -- action decoding (spec section 8): one row per action id --------------------------------------

(K_CYCLE, K_POWER, K_POOL, K_DISCARD, K_HEART, K_NEW_UNIT, K_ADD, K_ATTACK, K_JOKER_ATTACK, K_BUY,
 K_END_STEP1, K_PASS, K_DECOY, K_NO_DECOY) = range(14)
#: kinds after which the card-moving counter ``_moved`` is set (every action but the four below, R15)
_MOVES_A_CARD = K_BUY


def _decode_tables() -> dict[str, np.ndarray]:
    """kind, number card ``k`` (-1: none), royal, unit and destination zone (-1: none) of every action."""
    kind = np.zeros(NUM_ACTIONS, np.int32)
    card = np.full(NUM_ACTIONS, -1, np.int32)
    royal = np.zeros(NUM_ACTIONS, np.int32)
    unit = np.zeros(NUM_ACTIONS, np.int32)
    dest = np.full(NUM_ACTIONS, -1, np.int32)

    def block(start: int, size: int, what: int, cards: Any = None, zone: Any = -1) -> None:
        ids = np.arange(start, start + size)
        kind[ids] = what
        if cards is not None:
            card[ids] = cards
        dest[ids] = zone

    ranks = np.arange(9)
    block(CYCLE, 18, K_CYCLE, np.arange(18), Z_DISCARD)
    block(POWER, 9, K_POWER, ranks, Z_DISCARD)  # clubs k = 0..8
    block(POOL, 9, K_POOL, 9 + ranks, Z_POOL)  # diamonds k = 9..17
    block(DISCARD, NUM_CARDS, K_DISCARD, np.arange(NUM_CARDS), Z_DISCARD)
    block(HEART, 27, K_HEART, 18 + np.repeat(ranks, 3), Z_HEART + np.tile(np.arange(3), 9))
    royal[HEART:HEART + 27] = np.tile(np.arange(3), 9)
    block(NEW_UNIT, 9, K_NEW_UNIT, 27 + ranks)  # destination: the next free unit slot, set in _apply
    block(ADD_TO_UNIT, 72, K_ADD, 27 + np.repeat(ranks, MAX_ADD_UNIT), Z_UNIT + np.tile(np.arange(8), 9))
    unit[ADD_TO_UNIT:ADD_TO_UNIT + 72] = np.tile(np.arange(MAX_ADD_UNIT), 9)
    block(ATTACK, 27, K_ATTACK)
    unit[ATTACK:ATTACK + 27] = np.repeat(np.arange(MAX_UNITS), 3)
    royal[ATTACK:ATTACK + 27] = np.tile(np.arange(3), MAX_UNITS)
    block(JOKER_ATTACK, 3, K_JOKER_ATTACK)
    royal[JOKER_ATTACK:JOKER_ATTACK + 3] = np.arange(3)
    for action, what in ((BUY_JOKER, K_BUY), (END_STEP1, K_END_STEP1), (PASS, K_PASS), (DECOY, K_DECOY),
                         (NO_DECOY, K_NO_DECOY)):
        kind[action] = what
    return {"kind": kind, "card": card, "royal": royal, "unit": unit, "dest": dest}


_DECODE = _decode_tables()
_CHECK = {name: i for i, name in enumerate(rules.ACTION_NAMES)}
assert _CHECK["heart 7H on Q"] == HEART + 3 * 5 + 1 and _DECODE["card"][_CHECK["heart 7H on Q"]] == 18 + 5
assert _DECODE["unit"][_CHECK["add 9S to unit 3"]] == 3 and _DECODE["card"][_CHECK["add 9S to unit 3"]] == 27 + 7

#: VALUE[b, k]: value of number card k for an owner of bloodline b (section 2), as in ``rules.VALUE``
VALUE = np.array([[rules.VALUE[b][c] for c in rules.NUMBER_CARDS] for b in range(4)], np.int32)
#: one packed row per action (a single gather decodes it): kind | card + 1 << 4 | royal << 10 | unit << 12
#: | dest + 1 << 16
_PACKED = (_DECODE["kind"] | (_DECODE["card"] + 1) << 4 | _DECODE["royal"] << 10 | _DECODE["unit"] << 12
           | (_DECODE["dest"] + 1) << 16).astype(np.int32)


def card_value(card: jax.Array, bloodline: jax.Array) -> jax.Array:
    """Section 2 by arithmetic (no table gather): rank + 1 in the owner's suit, rank - 1 otherwise."""
    return card % 9 + 2 + jnp.where(card // 9 == bloodline, 1, -1)


#: the observation's source vector (``Env._observation_source``), seen from the observer (seat-indexed
#: blocks: the observer's row, then the opponent's): (name, size) of the blocks compared as integers, then
#: (name, size, table segment) of the blocks looked up in the table of scaled values, held as float32 bits
_COMPARED_BLOCKS = (
    ("zone", 2 * NUM_CARDS), ("bloodline", 2), ("alive", 2 * NUM_ROYALS), ("phase", 1), ("is_active", 1),
    ("decoy_royal", 1), ("decoy_by_joker", 1), ("is_to_decide", 1),
)
_SCALED_BLOCKS = (
    ("defense", 2 * NUM_ROYALS, "value"), ("attack", 2 * MAX_UNITS, "value"), ("pool_value", 2, "value"),
    ("top", 2, "pile"), ("hand_size", 2, "hand"), ("jokers", 2, "half"), ("supply", 2, "half"),
    ("jokers_discarded", 2, "half"), ("owed", 1, "owed"), ("turn", 1, "turn"), ("idle", 1, "count"),
    ("flags", 3, "flags"),
)
_SOURCE_SIZE = {name: size for name, size, *_ in _COMPARED_BLOCKS + _SCALED_BLOCKS}
_SOURCE_AT = dict(zip(_SOURCE_SIZE, np.cumsum([0, *_SOURCE_SIZE.values()])[:-1].tolist(), strict=True))
#: how an observation entry is made from its source entry ``x`` and its operand ``v``
_EQUALS, _AT_MOST, _LOOKUP = 0, 1, 2  # x == v, x <= v, table[v + x]


def _observation_tables(config: BloodlinesConfig) -> dict[str, np.ndarray]:
    """Every observation entry as one rule on one entry of the observer's source vector (``Env._observe``):

    =============  =============================================================================
    table          meaning
    =============  =============================================================================
    ``source``     (485,) the source entry of each observation entry (the observer's rows first)
    ``kind``       (485,) ``_EQUALS`` / ``_AT_MOST``: ``x == operand`` / ``x <= operand`` as 0/1;
                   ``_LOOKUP``: ``x`` is a float32 (bits) of the scaled block, copied
    ``operand``    (485,) the compared value
    ``scaled``     (n,) the raw source entry of each scaled value (the scaled block, after the raw one)
    ``offset``     (n,) its segment's offset in ``table``
    ``table``      every scaled scalar as the Python encoder computes it (float64, then rounded to
                   float32; XLA's float32 division by a constant is not correctly rounded) and the
                   constant flags
    =============  ============================================================================="""
    segments: dict[str, np.ndarray] = {
        "value": np.arange(MAX_VALUE_SUM + 1) * (1.0 / MAX_VALUE_SUM),  # defense, attack, pool / 63
        "pile": (NUM_CARDS - np.arange(NUM_CARDS + 1)) / NUM_CARDS,  # by _top: pile size / 36
        "hand": np.arange(NUM_CARDS + 1) / config.hand_limit,
        "half": np.arange(NUM_CARDS + 1) * 0.5,  # jokers, supply, discarded jokers / 2
        "owed": np.arange(NUM_CARDS + 1) * 0.1,
        "turn": np.arange(MAX_TURNS_BOUND + 2) / (config.max_turns or 200),  # R15: no game lasts longer
        "count": np.arange(NUM_CARDS + 1, dtype=np.float64),  # the idle counter as it is
        "flags": np.array([float(config.allow_pass), float(config.unfinished_result == "royals"), 0.0]),
    }
    offsets = dict(zip(segments, np.cumsum([0] + [len(v) for v in segments.values()][:-1]).tolist(), strict=True))
    entries: list[tuple[str, int, int, int, int]] = []  # (block, seat row 0/1 or -1, index in block, kind, operand)
    cards = range(NUM_CARDS)
    for row in (0, 1):  # 0-7 bloodlines
        entries.extend(("bloodline", row, 0, _EQUALS, suit) for suit in range(4))
    entries.extend(("zone", 0, k, _EQUALS, Z_HAND) for k in cards)  # 8-43
    entries.extend(("alive", row, r, _EQUALS, 1) for row in (0, 1) for r in range(NUM_ROYALS))  # 44-49
    entries.extend(("zone", row, 18 + rank, _EQUALS, Z_HEART + r)  # 50-103
                   for row in (0, 1) for r in range(NUM_ROYALS) for rank in range(9))
    entries.extend(("defense", row, r, _LOOKUP, 0) for row in (0, 1) for r in range(NUM_ROYALS))
    entries.extend(("zone", row, 27 + rank, _EQUALS, Z_UNIT + u)  # 110-271
                   for row in (0, 1) for u in range(MAX_UNITS) for rank in range(9))
    entries.extend(("attack", row, u, _LOOKUP, 0) for row in (0, 1) for u in range(MAX_UNITS))
    entries.extend(("jokers", row, 0, _LOOKUP, 0) for row in (0, 1))  # 290-291
    entries.extend(("supply", row, 0, _LOOKUP, 0) for row in (0, 1))  # 292-293
    entries.extend(("zone", row, 9 + rank, _EQUALS, Z_POOL) for row in (0, 1) for rank in range(9))  # 294-311
    entries.extend(("pool_value", row, 0, _LOOKUP, 0) for row in (0, 1))  # 312-313
    entries.extend(("zone", row, k, _EQUALS, Z_DISCARD) for row in (0, 1) for k in cards)  # 314-385
    entries.extend(("jokers_discarded", row, 0, _LOOKUP, 0) for row in (0, 1))  # 386-387
    entries.extend(("top", row, 0, _LOOKUP, 0) for row in (0, 1))  # 388-389
    entries.extend(("hand_size", row, 0, _LOOKUP, 0) for row in (0, 1))  # 390-391
    entries.extend(("phase", -1, 0, _EQUALS, phase) for phase in range(4))  # 392-395
    entries.append(("is_active", -1, 0, _EQUALS, 1))  # 396
    entries.append(("owed", -1, 0, _LOOKUP, 0))  # 397
    entries.extend(("decoy_royal", -1, 0, _EQUALS, r) for r in range(NUM_ROYALS))  # 398-400
    entries.append(("decoy_by_joker", -1, 0, _EQUALS, 1))  # 401
    entries.append(("turn", -1, 0, _LOOKUP, 0))  # 402
    entries.append(("idle", -1, 0, _LOOKUP, 0))  # 403
    entries.extend(("flags", -1, flag, _LOOKUP, 0) for flag in (0, 1, 2, 2, 2, 2, 2, 2))  # 404-411
    entries.extend(("zone", 0, k, _EQUALS, Z_PILE) for k in cards)  # 412-447
    entries.extend(("zone", 1, k, _AT_MOST, Z_HAND) for k in cards)  # 448-483: pile or hand, not told apart
    entries.append(("is_to_decide", -1, 0, _EQUALS, 1))  # 484
    assert len(entries) == OBSERVATION_SIZE

    def source_index(block: str, row: int, index: int) -> int:
        """``row`` 0: the observer's, 1: the opponent's; -1: a block not per seat."""
        return _SOURCE_AT[block] + max(row, 0) * (_SOURCE_SIZE[block] // 2) + index

    return {
        "source": np.array([source_index(*entry[:3]) for entry in entries], np.int32),
        "kind": np.array([entry[3] for entry in entries], np.int32),
        "operand": np.array([entry[4] for entry in entries], np.int32),
        "offset": np.concatenate([np.full(size, offsets[segment] + (np.arange(size) if name == "flags" else 0))
                                  for name, size, segment in _SCALED_BLOCKS]).astype(np.int32),
        "table": np.concatenate(list(segments.values())).astype(np.float32),
    }


# -- state -----------------------------------------------------------------------------------------


@dataclass
class State(CardState):
    name: ClassVar[str] = "bloodlines_v0"

    current_player: jax.Array = jnp.int32(0)
    observation: jax.Array = jnp.zeros(OBSERVATION_SIZE, jnp.float32)
    rewards: jax.Array = jnp.zeros(2, jnp.float32)
    terminated: jax.Array = FALSE
    truncated: jax.Array = FALSE
    legal_action_mask: jax.Array = jnp.zeros(NUM_ACTIONS, jnp.bool_)
    _step_count: jax.Array = jnp.int32(0)
    # --- Bloodlines (see the module table) ---
    _bloodline: jax.Array = jnp.zeros(2, jnp.int32)
    _zone: jax.Array = jnp.zeros((2, NUM_CARDS), CARDS)
    _order: jax.Array = jnp.zeros((2, NUM_CARDS), CARDS)
    _top: jax.Array = jnp.zeros(2, jnp.int32)
    _hand_size: jax.Array = jnp.zeros(2, jnp.int32)
    _alive: jax.Array = jnp.ones((2, NUM_ROYALS), jnp.bool_)
    _defense: jax.Array = jnp.zeros((2, NUM_ROYALS), jnp.int32)
    _attack: jax.Array = jnp.zeros((2, MAX_UNITS), jnp.int32)
    _units: jax.Array = jnp.zeros(2, jnp.int32)
    _jokers: jax.Array = jnp.zeros(2, jnp.int32)
    _supply: jax.Array = jnp.zeros(2, jnp.int32)
    _jokers_discarded: jax.Array = jnp.zeros(2, jnp.int32)
    _pool_value: jax.Array = jnp.zeros(2, jnp.int32)
    _turn: jax.Array = jnp.int32(1)
    _active: jax.Array = jnp.int32(0)
    _phase: jax.Array = jnp.int32(STEP1)
    _resume_phase: jax.Array = jnp.int32(STEP1)
    _owed: jax.Array = jnp.int32(0)
    _idle: jax.Array = jnp.int32(0)
    _moved: jax.Array = FALSE
    _decoy_royal: jax.Array = jnp.int32(NO_PLAYER)
    _decoy_by_joker: jax.Array = FALSE


# -- array helpers ----------------------------------------------------------------------------------


def _of(pair: jax.Array, seat: jax.Array) -> jax.Array:
    """Row ``seat`` of a seat-indexed array (a select between the two rows: no gather under vmap)."""
    return jnp.where(seat == 0, pair[0], pair[1])


def _seat_rows(seat: jax.Array, entry_axes: int = 0) -> jax.Array:
    """``(2, 1 x entry_axes, *batch)``: True in ``seat``'s row, broadcasting against a seat-indexed array
    with ``entry_axes`` axes per seat (its batch axes, if any, last)."""
    rows = column(2, seat) == seat
    return jnp.expand_dims(rows, tuple(range(1, 1 + entry_axes)))


def _set(pair: jax.Array, seat: jax.Array, row: jax.Array) -> jax.Array:
    """``pair`` with row ``seat`` replaced by ``row``."""
    return jnp.where(_seat_rows(seat, pair.ndim - 1 - jnp.ndim(seat)), row, pair)


def _add(pair: jax.Array, seat: jax.Array, amount: jax.Array) -> jax.Array:
    """A (2,) counter with ``amount`` added at ``seat``."""
    return pair + jnp.where(_seat_rows(seat), amount, 0).astype(pair.dtype)


def _any(flags: jax.Array) -> jax.Array:
    """Whether any entry along axis 0 is true, as an unrolled chain of ``or`` (XLA on CPU runs a reduction
    over a few dozen entries per state far slower than the same number of elementwise operations, which it
    fuses)."""
    return functools.reduce(jnp.logical_or, [flags[i] for i in range(flags.shape[0])])


def _rows(x: ArrayLike, batch: tuple[int, ...]) -> jax.Array:
    """``x`` with its entry axes flattened into axis 0 (its ``batch`` axes, if any, kept last)."""
    return jnp.reshape(x, (-1, *batch))


def _can_attack(state: State, me: jax.Array) -> jax.Array:
    """R9d: whether some unit of ``me`` beats some surviving royal of the opponent (strictly greater attack
    than its defense): the strongest unit against the weakest survivor, a few elementwise steps."""
    attack = _of(state._attack, me)
    strongest = functools.reduce(jnp.maximum, [attack[u] for u in range(MAX_UNITS)])
    defense = jnp.where(_of(state._alive, 1 - me), _of(state._defense, 1 - me), jnp.iinfo(jnp.int32).max)
    weakest = functools.reduce(jnp.minimum, [defense[r] for r in range(NUM_ROYALS)])
    return strongest > weakest


def _take(source: jax.Array, index: np.ndarray) -> jax.Array:
    """``source[index]`` along axis 0 for a constant ``index`` (batch axes, if any, last: whole rows); under
    ``vmap``, one gather over the flattened batch, whose output XLA writes in the batch-major order the state
    keeps (the plain batched gather puts the batch last, and XLA on CPU then transposes the whole
    observation: twice the cost)."""
    if source.ndim > 1:
        return source[index]
    return _take_rows(source, jnp.asarray(index, jnp.int32))


@jax.custom_batching.custom_vmap
def _take_rows(source: jax.Array, index: jax.Array) -> jax.Array:
    return source[index]


@_take_rows.def_vmap
def _take_rows_batched(axis_size: int, in_batched: list[bool], source: jax.Array, index: jax.Array) -> tuple:
    source_batched, index_batched = in_batched
    if index_batched or not source_batched:
        return jax.vmap(lambda s, i: s[i], in_axes=(0 if source_batched else None, 0 if index_batched else None))(
            source, index), source_batched or index_batched
    rows = source.reshape(-1, source.shape[-1])
    flat = (jnp.arange(rows.shape[0], dtype=jnp.int32)[:, None] * rows.shape[1] + index[None, :]).reshape(-1)
    # in bounds by construction; without the negative-index wrap, XLA fuses the index arithmetic into the gather
    taken = rows.reshape(-1).at[flat].get(mode="promise_in_bounds")
    return taken.reshape(source.shape[:-1] + index.shape), True


def _seen_from(pair: jax.Array, seat: jax.Array) -> jax.Array:
    """Rows reordered to (``seat``, the other seat)."""
    return jnp.where(seat == 0, pair, pair[::-1])


# -- the engine -------------------------------------------------------------------------------------


class Env(CardEnv[BloodlinesState]):
    """Bloodlines (``bloodlines_v0``) in JAX; see the module docstring.

    The Python engine (``card_envs.bloodlines``) is the reference: ``from_state`` converts any of its
    positions, and ``card_envs.jax.lockstep`` checks the two agree on every decision.
    """

    game: Bloodlines
    config: BloodlinesConfig

    name = "bloodlines_v0"
    state_class = State
    step_uses_key = False  # nothing is shuffled after the deal (A36)
    batch_last = True  # step_batch_last runs the whole batch at once, batch axis last (card_envs.jax.core)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        config = self.config
        self._limit = config.hand_limit
        self._fixed_bloodlines = (None if config.bloodlines is None
                                  else np.array([SUITS.index(s) for s in config.bloodlines], np.int32))
        self._observation = _observation_tables(config)

    # -- Pgx API -------------------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> State:
        """S1-S7: bloodlines, both piles, the deal, the starting player; then R11 (forced steps)."""
        # every random number from the key's words and a counter hash: a Threefry call per draw cost most of
        # a deal; 32-bit words give the exact probabilities below but for player_1's one in three (a bias
        # below 1e-9)
        words = key_words(key, 2 * NUM_CARDS + 3)
        if self._fixed_bloodlines is None:  # S2 / A4: p0 uniform, p1 uniform among the other three
            first = (words[-3] % 4).astype(jnp.int32)
            second = (first + 1 + (words[-2] % 3).astype(jnp.int32)) % 4
            bloodline = jnp.stack([first, second])
        else:
            bloodline = jnp.asarray(self._fixed_bloodlines)
        # S4: a uniform order of each pile (``_order[p, k]``: card k's position; the inverse of a
        # uniform permutation is uniform)
        keys = words[:2 * NUM_CARDS].reshape(2, NUM_CARDS)
        keys = (keys & ~jnp.uint32((1 << _INDEX_BITS) - 1)) | jnp.arange(NUM_CARDS, dtype=jnp.uint32)
        order = (jnp.sort(keys, axis=1) & ((1 << _INDEX_BITS) - 1)).astype(jnp.int32)
        limit = self._limit
        zone = jnp.where(order < limit, Z_HAND, Z_PILE).astype(CARDS)  # S5: the top cards
        order = jnp.where(order < limit, -1, order).astype(CARDS)
        if self.config.starting_player is None:  # S6: the coin
            starter = (words[-1] >> 31).astype(jnp.int32)
        else:
            starter = jnp.int32(self.config.starting_player)
        state = State(
            current_player=starter,
            _bloodline=bloodline,
            _zone=zone,
            _order=order,
            _top=jnp.full(2, limit, jnp.int32),
            _hand_size=jnp.full(2, limit, jnp.int32),
            _supply=jnp.where(bloodline == DIAMONDS, self.config.joker_supply, 0).astype(jnp.int32),
            _active=starter,
        )
        if self.config.auto_skip_forced:  # R11 right after the deal: a full hand means no draw, and
            # a hand of clubs/diamonds only could cycle, so at most end step 1 is forced (never pass)
            state = self._end_step1(state, self._forced(state)[0])
        return state.replace(legal_action_mask=self._legal_action_mask(state))

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        del key  # nothing is shuffled after setup (S7, A36)
        state = self._apply(state.replace(rewards=jnp.zeros_like(state.rewards)), action)
        if self.config.auto_skip_forced:
            state = self._take_forced_steps(state)
        return state.replace(current_player=self._to_decide(state), legal_action_mask=self._legal_action_mask(state))

    def _observe(self, state: State, player: jax.Array) -> jax.Array:
        """``encode(view(player))`` of ``card_envs/bloodlines/encoding.py``: every entry is one comparison or
        one copy of one entry of the observer's source vector (``_observation_tables``), so the whole vector
        is one gather with constant indices and a select, one pass of XLA (no per-block kernels)."""
        tables = self._observation
        x = _take(self._observation_source(state, player), tables["source"])
        entries = (-1,) + (1,) * jnp.ndim(player)  # one constant per entry, against the batch axes if any
        kind, operand = jnp.asarray(tables["kind"]).reshape(entries), jnp.asarray(tables["operand"]).reshape(entries)
        compared = jnp.where(kind == _AT_MOST, x <= operand, x == operand).astype(jnp.float32)
        return jnp.where(kind == _LOOKUP, jax.lax.bitcast_convert_type(x, jnp.float32), compared)

    def _observation_source(self, state: State, player: jax.Array) -> jax.Array:
        """The int32 source vector of the observation of ``player`` (``_COMPARED_BLOCKS``, then the scaled
        values of ``_SCALED_BLOCKS`` as float32 bits, looked up in one gather)."""
        seen = functools.partial(_seen_from, seat=player)
        batch = jnp.shape(player)
        compared = {
            "zone": seen(state._zone), "bloodline": seen(state._bloodline), "alive": seen(state._alive),
            "phase": state._phase, "is_active": state._active == player, "decoy_royal": state._decoy_royal,
            "decoy_by_joker": state._decoy_by_joker & (state._decoy_royal >= 0),
            "is_to_decide": self._to_decide(state) == player,
        }
        scaled = {
            "defense": seen(state._defense), "attack": seen(state._attack), "pool_value": seen(state._pool_value),
            "top": seen(state._top), "hand_size": seen(state._hand_size), "jokers": seen(state._jokers),
            "supply": seen(state._supply), "jokers_discarded": seen(state._jokers_discarded), "owed": state._owed,
            "turn": jnp.minimum(state._turn, MAX_TURNS_BOUND + 1), "idle": state._idle,
            "flags": jnp.zeros((3, *batch), jnp.int32),
        }
        numbers = jnp.concatenate([_rows(jnp.asarray(scaled[name], jnp.int32), batch) for name, *_ in _SCALED_BLOCKS])
        offset = _rows(self._observation["offset"], (1,) * len(batch))
        values = jnp.asarray(self._observation["table"])[offset + numbers]
        return jnp.concatenate([_rows(jnp.asarray(compared[name], jnp.int32), batch) for name, _ in _COMPARED_BLOCKS]
                               + [jax.lax.bitcast_convert_type(values, jnp.int32)])

    def _legal_action_mask(self, state: State) -> jax.Array:
        """Section 8's legality column, as whole-array operations on the active seat's rows."""
        config = self.config
        me = state._active
        enemy = 1 - me
        hand = _of(state._zone, me) == Z_HAND
        bloodline = _of(state._bloodline, me)
        running = ~(state.terminated | state.truncated)
        phase = state._phase
        main = running & (phase == MAIN)
        resource = running & ((phase == STEP1) | (phase == MAIN))  # R7, A43
        can_draw = _of(state._top, me) < NUM_CARDS  # R12, A36
        clubs, diamonds, hearts, spades = hand[0:9], hand[9:18], hand[18:27], hand[27:36]
        cycle = hand[0:18] & (resource & can_draw)  # R7a
        power = clubs & (resource & can_draw & (bloodline == CLUBS))  # R7b
        pool = diamonds & (resource & (bloodline == DIAMONDS))  # R7c
        discard = hand & (running & (phase == DISCARD_PHASE))  # R8
        alive = _of(state._alive, me)
        heart = (hearts[:, None] & alive[None, :]) & main  # R9a: (rank, royal)
        new_unit = spades & main  # R9b
        add = (spades[:, None] & (column(MAX_ADD_UNIT, me) < _of(state._units, me))[None, :]) & main  # R9c
        enemy_alive = _of(state._alive, enemy)
        # R9d: strictly greater; empty unit slots have attack 0, which beats nothing
        attack = (_of(state._attack, me)[:, None] > _of(state._defense, enemy)[None, :]) & enemy_alive[None, :] & main
        jokers = main & (_of(state._jokers, me) > 0)
        joker = enemy_alive & jokers  # R9e
        buy = main & (bloodline == DIAMONDS) & (_of(state._supply, me) > 0) & (
            _of(state._pool_value, me) >= config.joker_cost)  # R9f
        # a heart has a surviving royal to go on, and a joker a surviving enemy royal to strike (R14)
        any_main = main & (_any(hearts) | _any(spades)) | _can_attack(state, me) | jokers | buy
        passing = main & (~any_main | config.allow_pass)  # R6
        decoy = running & (phase == DECOY_PHASE)  # R10.3
        batch = jnp.shape(me)
        return jnp.concatenate([
            cycle, power, pool, discard, _rows(heart, batch), new_unit, _rows(add, batch), _rows(attack, batch),
            joker, jnp.stack([buy, running & (phase == STEP1), passing, decoy, decoy]),
        ])

    # -- transitions -------------------------------------------------------------------------------

    def _apply(self, state: State, action: jax.Array) -> State:
        """One action of section 8 for ``current_player``, resolved as the Python engine's ``_do``."""
        config = self.config
        packed = jnp.asarray(_PACKED)[action]
        kind = packed & 15
        card = (packed >> 4 & 63) - 1
        royal = packed >> 10 & 3
        unit = packed >> 12 & 15
        dest = (packed >> 16) - 1
        me = state._active
        enemy = 1 - me
        mine = _seat_rows(me, 1)
        theirs = ~mine
        bloodline = _of(state._bloodline, me)
        value = card_value(card, bloodline)
        units = _of(state._units, me)
        is_kind = lambda k: kind == k  # noqa: E731
        unit_attack, joker_attack, buy = is_kind(K_ATTACK), is_kind(K_JOKER_ATTACK), is_kind(K_BUY)
        strike = unit_attack | joker_attack

        # the zone entries read only the per-game values below, each computed once (``computed_once``); a zone that
        # is not there (_NO_ZONE) matches no card
        # the named hand card moves (R7, R8, R9a-c); a new unit is appended at the end (R17)
        columns = column(NUM_CARDS, me)
        zone = state._zone
        placed = computed_once(jnp.where(is_kind(K_NEW_UNIT), Z_UNIT + units, dest))
        zone = jnp.where(mine & (columns == computed_once(card)), placed, zone)
        # R10.1 / R17: the attacking unit's spades are discarded, later units move down one index
        attacked = computed_once(jnp.where(unit_attack, Z_UNIT + unit, _NO_ZONE))
        zone = jnp.where(mine & (zone == attacked), Z_DISCARD, zone)
        zone = jnp.where(mine & (zone > attacked) & (zone < Z_POOL), zone - 1, zone)
        # R10.2: the hearts under the target go whatever happens; R9f / A31: the whole pool is spent
        struck = computed_once(jnp.where(strike, Z_HEART + royal, _NO_ZONE))
        zone = jnp.where(theirs & (zone == struck), Z_DISCARD, zone)
        zone = jnp.where(mine & (zone == computed_once(jnp.where(buy, Z_POOL, _NO_ZONE))), Z_DISCARD, zone)

        # draws: cycle 1 (R7a), power its value (R7b); end step 1's draw (R4) is _end_step1's
        top = _of(state._top, me)
        hand_size = _of(state._hand_size, me) - (card >= 0)
        wanted = jnp.where(is_kind(K_CYCLE), 1, jnp.where(is_kind(K_POWER), value, 0))
        drawn = jnp.minimum(wanted, NUM_CARDS - top)  # R12 / A14: a short pile gives what it has
        drawing = mine & (zone == Z_PILE) & (state._order < computed_once(top + drawn))
        zone = jnp.where(drawing, Z_HAND, zone)
        order = jnp.where(drawing, -1, state._order)  # a card out of the pile has no position (canonical)
        hand_size = hand_size + drawn

        # phase of the turn
        phase = state._phase
        resume_phase = state._resume_phase
        owed = state._owed
        excess = hand_size - self._limit
        owes = is_kind(K_POWER) & (excess > 0)  # R8 / A15
        owed = jnp.where(owes, excess, owed)
        resume_phase = jnp.where(owes, phase, resume_phase)
        phase = jnp.where(owes, DISCARD_PHASE, phase)
        discarding = is_kind(K_DISCARD)
        owed = owed - discarding
        phase = jnp.where(discarding & (owed == 0), resume_phase, phase)
        moved = state._moved | (kind <= _MOVES_A_CARD)

        # counters of the moved cards
        slots = column(MAX_UNITS, me)
        attack_row = _of(state._attack, me)
        shifted = jnp.where(slots >= unit, jnp.concatenate([attack_row[1:], jnp.zeros_like(attack_row[:1])]),
                            attack_row)
        attack_row = jnp.where(unit_attack, shifted, attack_row)
        grows = (is_kind(K_ADD) & (slots == unit)) | (is_kind(K_NEW_UNIT) & (slots == units))
        attack_row = attack_row + jnp.where(grows, value, 0)
        royals = column(NUM_ROYALS, me)
        defense = state._defense
        defense = defense + jnp.where(mine & is_kind(K_HEART) & (royals == royal), value, 0)
        defense = jnp.where(theirs & strike & (royals == royal), 0, defense)
        pool_value = _of(state._pool_value, me)
        pool_value = jnp.where(buy, 0, pool_value + jnp.where(is_kind(K_POOL), value, 0))
        decoy, no_decoy = is_kind(K_DECOY), is_kind(K_NO_DECOY)
        jokers = state._jokers
        jokers = _add(jokers, me, buy.astype(jnp.int32) - joker_attack)
        jokers_discarded = _add(state._jokers_discarded, me, joker_attack.astype(jnp.int32))
        jokers = _add(jokers, enemy, -decoy.astype(jnp.int32))  # R10.3: the defender's joker dies instead
        jokers_discarded = _add(jokers_discarded, enemy, decoy.astype(jnp.int32))

        # R10.3: with a joker in play, the defender decides; otherwise (or after no decoy) R10.4 kills
        decoy_pending = strike & (_of(state._jokers, enemy) > 0)
        decoy_royal = jnp.where(decoy_pending, royal, jnp.where(decoy | no_decoy, NO_PLAYER, state._decoy_royal))
        decoy_by_joker = jnp.where(decoy_pending, joker_attack, state._decoy_by_joker & ~(decoy | no_decoy))
        phase = jnp.where(decoy_pending, DECOY_PHASE, phase)
        kill = (strike & ~decoy_pending) | no_decoy
        killed = jnp.where(no_decoy, state._decoy_royal, royal)
        alive = state._alive & ~(theirs & kill & (royals == killed))
        rewards = state.rewards
        if config.shaping_weight:  # section 9: +w to the killer, -w to the owner
            rewards = rewards + jnp.where(kill, jnp.where(mine[:, 0], 1.0, -1.0) * config.shaping_weight, 0.0)
        won = kill & ~_any(_of(alive, enemy))  # R14

        state = state.replace(
            rewards=rewards.astype(jnp.float32),
            _zone=zone.astype(CARDS),
            _order=order.astype(CARDS),
            _top=_set(state._top, me, top + drawn),
            _hand_size=_set(state._hand_size, me, hand_size),
            _alive=alive,
            _defense=defense,
            _attack=_set(state._attack, me, attack_row),
            _units=_add(state._units, me, is_kind(K_NEW_UNIT).astype(jnp.int32) - unit_attack),
            _jokers=jokers,
            _supply=_add(state._supply, me, -buy.astype(jnp.int32)),
            _jokers_discarded=jokers_discarded,
            _pool_value=_set(state._pool_value, me, pool_value),
            _phase=phase,
            _resume_phase=resume_phase,
            _owed=owed,
            _moved=moved,
            _decoy_royal=decoy_royal,
            _decoy_by_joker=decoy_by_joker,
        )
        # R5: a main action, a pass, or a resolved attack ends the turn; R14: the third kill ends the game
        ends_turn = ((kind == K_HEART) | (kind == K_NEW_UNIT) | (kind == K_ADD) | buy | (kind == K_PASS) | decoy
                     | (kill & ~won))
        state = self._finish(state, won, me, truncated=FALSE)
        state = self._end_turn(state, ends_turn)
        return self._end_step1(state, kind == K_END_STEP1)

    def _end_turn(self, state: State, ending: jax.Array) -> State:
        """R15 / R16 at the end of a turn (where ``ending``): stalemate, truncation, or the next turn."""
        config = self.config
        idle = jnp.where(ending, jnp.where(state._moved, 0, state._idle + 1), state._idle)
        stalemate = ending & (idle >= 2)  # R15, which wins over a truncation at the same turn end
        truncate = ending & ~stalemate
        if config.max_turns is None:
            truncate = FALSE
        else:
            truncate = truncate & (state._turn >= config.max_turns)  # R16
        carry_on = ending & ~stalemate & ~truncate
        state = state.replace(_idle=idle)
        state = self._finish_unfinished(state, stalemate | truncate, truncate)
        return state.replace(
            _turn=state._turn + carry_on,
            _active=jnp.where(carry_on, 1 - state._active, state._active),
            _phase=jnp.where(carry_on, STEP1, state._phase),
            _moved=state._moved & ~carry_on,
        )

    def _finish_unfinished(self, state: State, ending: jax.Array, truncated: jax.Array) -> State:
        """R16: a stalemate or a truncation, scored by ``unfinished_result``."""
        if self.config.unfinished_result == "royals":
            counts = functools.reduce(jnp.add, [state._alive[:, r].astype(jnp.int32) for r in range(NUM_ROYALS)])
            winner = jnp.where(counts[0] > counts[1], 0, 1)
            decided = ending & (counts[0] != counts[1])
        else:
            winner, decided = jnp.int32(0), FALSE
        state = self._finish(state, decided, winner, truncated)
        return self._finish(state, ending & ~decided, jnp.int32(NO_PLAYER), truncated)

    def _finish(self, state: State, ending: jax.Array, winner: jax.Array, truncated: jax.Array) -> State:
        """The game ends (where ``ending``): +1 to ``winner`` and -1 to the other (none on a draw)."""
        pay = ending & (winner >= 0)
        rewards = state.rewards + jnp.where(pay, jnp.where(column(2, state._turn) == winner, 1.0, -1.0), 0.0)
        return state.replace(
            rewards=rewards.astype(jnp.float32),
            terminated=state.terminated | (ending & ~truncated),
            truncated=state.truncated | (ending & truncated),
            _decoy_royal=jnp.where(ending, NO_PLAYER, state._decoy_royal),
            # a declined decoy resolved the attacker's main action: no decision is pending
            _phase=jnp.where(ending & (state._phase == DECOY_PHASE), MAIN, state._phase),
        )

    @staticmethod
    def _to_decide(state: State) -> jax.Array:
        """The seat to decide: the defender during ``DECOY``, else the active seat; -1 once over."""
        seat = jnp.where(state._phase == DECOY_PHASE, 1 - state._active, state._active)
        return jnp.where(state.terminated | state.truncated, NO_PLAYER, seat).astype(jnp.int32)

    def _forced(self, state: State) -> tuple[jax.Array, jax.Array]:
        """R11: whether the only legal action is ``end step 1`` (in ``STEP1``) / ``pass`` (in ``MAIN``).

        The legal mask's conditions, reduced to what decides them: no resource action (R7) and, in
        ``MAIN``, no main action (R9; a heart always has a surviving royal to go on)."""
        me = state._active
        hand = _of(state._zone, me) == Z_HAND
        bloodline = _of(state._bloodline, me)
        resource = (_any(hand[0:9]) & (_of(state._top, me) < NUM_CARDS)) | (_any(hand[9:18]) & (
            (_of(state._top, me) < NUM_CARDS) | (bloodline == DIAMONDS)))
        main_action = (_any(hand[18:36]) | _can_attack(state, me) | (_of(state._jokers, me) > 0)
                       | ((bloodline == DIAMONDS) & (_of(state._supply, me) > 0)
                          & (_of(state._pool_value, me) >= self.config.joker_cost)))
        idle_choice = ~(state.terminated | state.truncated) & ~resource
        return idle_choice & (state._phase == STEP1), idle_choice & (state._phase == MAIN) & ~main_action

    def _end_step1(self, state: State, taking: jax.Array) -> State:
        """``end step 1`` (where ``taking``): R4's draw of one card below the hand limit, then ``MAIN``."""
        me = state._active
        top = _of(state._top, me)
        draw = taking & (_of(state._hand_size, me) < self._limit) & (top < NUM_CARDS)
        # the pile position drawn, once for the 72 entries (none: a position no card has)
        drawing = _seat_rows(me, 1) & (state._order == computed_once(jnp.where(draw, top, NUM_CARDS)))
        return state.replace(
            _zone=jnp.where(drawing, Z_HAND, state._zone).astype(CARDS),
            _order=jnp.where(drawing, -1, state._order).astype(CARDS),
            _top=_add(state._top, me, draw.astype(jnp.int32)),
            _hand_size=_add(state._hand_size, me, draw.astype(jnp.int32)),
            _moved=state._moved | draw,
            _phase=jnp.where(taking, MAIN, state._phase),
        )

    def _take_forced_steps(self, state: State) -> State:
        """R11: forced ``end step 1`` / ``pass`` steps until a real choice or the end, a turn per iteration.

        The first turn is taken in line for every state (a quarter of the states of a random batch have
        one); the rest is a loop that runs only the states that still have a forced step (a few percent),
        gathered into a few slots (``_forced_steps_in_slots``: under ``vmap`` through ``custom_vmap``, and on
        a batch whose axis is last directly): a batched ``while_loop`` would run every state of the batch as
        many times as the longest chain needs."""
        state = self._forced_turn(state, self._forced(state)[0])
        if jnp.ndim(state._turn):  # a batch, the batch axis last (``step_batch_last``)
            return self._forced_steps_in_slots(state, batch_axis=-1)
        if not hasattr(self, "_forced_steps"):
            self._forced_steps = jax.custom_batching.custom_vmap(self._forced_steps_loop)
            self._forced_steps.def_vmap(self._forced_steps_batched)
        return self._forced_steps(state)

    def _forced_turn(self, state: State, step1: jax.Array) -> State:
        """One turn of R11's automation: the forced ``end step 1`` (where ``step1``), then the forced pass
        (R6) if the main step offers nothing; a no-op for a state with neither."""
        state = self._end_step1(state, step1)
        return self._end_turn(state, self._forced(state)[1])

    def _forced_steps_loop(self, state: State) -> State:
        """R11's loop after the first forced turn (a turn per iteration), for one state or a batch whose axis is
        last: a forced turn leaves a state without forced steps as it is."""
        def forced(carry: tuple[State, jax.Array, jax.Array, jax.Array]) -> jax.Array:
            _, step1, main, turns = carry
            return (step1 | main).any() & (turns < MAX_FORCED_TURNS - 1)

        def take(carry: tuple[State, jax.Array, jax.Array, jax.Array]) -> tuple:
            state, step1, _, turns = carry
            state = self._forced_turn(state, step1)
            return (state, *self._forced(state), turns + 1)

        state, *_ = jax.lax.while_loop(forced, take, (state, *self._forced(state), jnp.int32(0)))
        return state

    @staticmethod
    def _forced_slots(batch: int) -> int:
        """States of a batch looped at a time by ``_forced_steps_batched``: after the first forced turn, a
        random batch has 2.5% of its states left in the loop on average, 10% at the 99th percentile (batch
        4096); more take further rounds of the (correct but slower) outer loop."""
        return min(batch, max(16, batch // 16))

    def _forced_steps_batched(self, batch: int, in_batched: Any, state: State) -> tuple[State, Any]:
        """The batched rule of ``_take_forced_steps`` under ``vmap`` (the batch axis first)."""
        (state_batched,) = in_batched  # one flag per leaf of the one argument
        state = jax.tree.map(lambda leaf, batched: leaf if batched else jnp.broadcast_to(leaf, (batch, *leaf.shape)),
                             state, state_batched)
        return self._forced_steps_in_slots(state, batch_axis=0), jax.tree.map(lambda _: True, state)

    def _forced_steps_in_slots(self, state: State, batch_axis: int) -> State:
        """R11's loop on a batch (its axis first or last): the states with a forced step, ``slots`` at a time
        (gathered, looped, scattered back), until none is left; the others are not touched."""
        batch = state._turn.shape[0]
        slots = self._forced_slots(batch)
        step1, main = (jax.vmap(self._forced) if batch_axis == 0 else self._forced)(state)
        at = () if batch_axis == 0 else (Ellipsis,)  # the batch axis of every leaf

        def pending(carry: tuple[State, jax.Array]) -> jax.Array:
            return carry[1].any()

        def take(carry: tuple[State, jax.Array]) -> tuple[State, jax.Array]:
            state, waiting = carry
            (rows,) = jnp.nonzero(waiting, size=slots, fill_value=batch)  # batch: past the end, dropped below
            index = (*at, rows)
            some = jax.tree.map(lambda leaf: leaf.at[index].get(mode="clip", indices_are_sorted=True), state)
            some = (jax.vmap(self._forced_steps_loop) if batch_axis == 0 else self._forced_steps_loop)(some)
            state = jax.tree.map(lambda leaf, new: leaf.at[index].set(new, mode="drop", indices_are_sorted=True),
                                 state, some)
            return state, waiting.at[rows].set(False, mode="drop")

        state, _ = jax.lax.while_loop(pending, take, (state, step1 | main))
        return state

    # -- Python positions ---------------------------------------------------------------------------

    def _game_fields(self, py_state: BloodlinesState, seed: tuple[int, ...]) -> Fields:
        """The arrays of the module table from a ``BloodlinesState`` (no chance fields: ``seed`` is unused)."""
        order = np.full((2, NUM_CARDS), -1, np.int32)  # cards out of the pile: below ``_top``
        top = np.zeros(2, np.int32)
        for p in (0, 1):
            pile = py_state.piles[p]
            top[p] = NUM_CARDS - len(pile)
            for position, card in enumerate(pile):
                order[p, rules.K_OF[card]] = top[p] + position
        jokers = set(JOKER_IDS)
        return {
            "_bloodline": np.array(py_state.bloodlines, np.int32),
            "_zone": np.array(py_state.zones, CARDS),
            "_order": order.astype(CARDS),
            "_top": top,
            "_hand_size": np.array([len(h) for h in py_state.hands], np.int32),
            "_alive": np.array([[r in py_state.royals[p] for r in range(NUM_ROYALS)] for p in (0, 1)]),
            "_defense": np.array(py_state.defense, np.int32),
            "_attack": np.stack([padded(py_state.attack[p], MAX_UNITS, fill=0) for p in (0, 1)]),
            "_units": np.array([len(u) for u in py_state.units], np.int32),
            "_jokers": np.array([len(j) for j in py_state.jokers], np.int32),
            "_supply": np.array([len(s) for s in py_state.supply], np.int32),
            "_jokers_discarded": np.array([sum(c in jokers for c in d) for d in py_state.discards], np.int32),
            "_pool_value": np.array(py_state.pool_values, np.int32),
            "_turn": np.int32(py_state.turn),
            "_active": np.int32(py_state.active),
            "_phase": np.int32(py_state.phase),
            "_resume_phase": np.int32(py_state.resume_phase),
            "_owed": np.int32(py_state.owed),
            "_idle": np.int32(py_state.idle),
            "_moved": np.bool_(py_state.moved),
            "_decoy_royal": np.int32(py_state.decoy_royal),
            "_decoy_by_joker": np.bool_(py_state.decoy_by_joker),
        }
