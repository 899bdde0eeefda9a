"""What every JAX engine shares: the ``pgx.Env`` base, ``make`` / ``from_state``, array helpers, auto-reset.

A game file (``card_envs/jax/<game>.py``, Pgx style: one file, a frozen state, small pure functions)
defines its ``State`` (a :class:`CardState` dataclass) and an ``Env`` (a :class:`CardEnv` subclass) that
fills in:

===============================  =================================================================
member                           what it is
===============================  =================================================================
``name``                         the versioned env name of the Python engine, e.g. ``"revolution_v0"``
``state_class``                  the game's ``State``
``unsupported_options``          ``{option: reason}``: options of the Python engine that this engine
                                 refuses at ``make`` unless they keep their default (empty: all run)
``step_uses_key``                ``False`` if ``_step`` draws no randomness (then ``step`` needs no key)
``chance_fields``                game arrays that hold future chance (decks of later games, drawn
                                 from a key): not part of the position, so lockstep does not compare
                                 them and ``from_state`` fills them from its ``key``
``batch_last``                   ``True`` if ``_step``, ``_observe`` and ``_legal_action_mask`` also take
                                 a batch of states whose arrays carry the batch axis *last* (each
                                 scalar a ``(n,)`` row, each ``(k,)`` array ``(k, n)``; keys stay
                                 ``(n, ...)``): :meth:`CardEnv.step_batch_last` then runs them once on
                                 the whole batch; default ``False`` (it vmaps ``step``)
``_init(key)``                   a fresh deal shuffled with ``key``: the game arrays, ``rewards`` zero,
                                 ``current_player``; ``observation`` / ``legal_action_mask`` may be
                                 placeholders (the core fills them)
``_step(state, action, key)``    one *legal* decision of the Python engine (``_step_count`` already
                                 counts it): game arrays, ``rewards`` of this step, ``terminated``,
                                 ``truncated``, ``current_player``; the decision-free rest of the turn
                                 is resolved inside; later shuffles come from ``key``
``_observe(state, player)``      ``game.encode(state.view(player))`` of the equal Python state
``_legal_action_mask(state)``    bool ``(num_actions,)``: the Python engine's legal set of
                                 ``current_player`` (only read while the episode runs)
``_game_fields(py_state, seed)`` the game arrays (numpy, underscore names) of a Python ``GameState``;
                                 chance fields drawn from ``numpy.random.default_rng(seed)`` (a game
                                 without chance fields may define ``_game_fields(py_state)``)
===============================  =================================================================

Conventions, the same in every game (the Python engine is the reference; ``card_envs.jax.lockstep``
checks them):

==========================  ========================================================================
field / behaviour           meaning
==========================  ========================================================================
``current_player``          int32 seat to act; ``0`` once the episode is over (Pgx requires a valid
                            seat; the Python engine says ``-1``)
``observation``             ``observe(state, current_player)`` (float32, the Python encoding)
``rewards``                 float32 ``(num_players,)``: what the last step earned, as Python's
                            ``state.rewards`` (zero-sum unless an option shapes them)
``terminated``              the game (or match) ended; ``truncated``: a step limit ended it
``legal_action_mask``       bool ``(num_actions,)``, Python's legal set; all True once the episode is
                            over (Pgx's convention, so that masked softmaxes stay finite)
``_step_count``             decisions so far (Python ``len(state.history)``)
game arrays                 fixed-size int arrays, names with a leading underscore (Pgx's API test
                            allows no other public fields)
illegal action              (not in the mask, or out of range) the state is left as it was, the
                            episode ends (``terminated``), the mover gets -1 and every other seat
                            ``+1 / (num_players - 1)`` (Pgx's penalty, zero-sum for any seat count)
step after the end          nothing changes but ``rewards``, which are zero (Pgx)
==========================  ========================================================================

Options are static: fixed at ``make``, validated by the Python engine's config class (the same
:class:`~card_envs.core.errors.ConfigError`, naming the option), so every jitted function is specialised
to them. An option the JAX engine cannot run is refused at ``make``, never ignored.

Batched play with auto-reset (the engines are built for ``jax.vmap``):

========================================  ================================================================
helper                                    use
========================================  ================================================================
:func:`step_autoreset`                    per state (vmap it), as ``pgx.experimental.auto_reset``: a step
                                          that ends the episode returns the next episode's first state,
                                          keeping the step's ``rewards`` / ``terminated`` / ``truncated``
                                          (for trainers; pays a deal on every step under ``vmap``)
:func:`reset_finished`                    on a batch: re-deals at most ``slots`` finished states per call
                                          (the deal is paid only for them; ``lazy=True``: only once
                                          ``slots`` wait; benchmarks, and trainers that read rewards and
                                          flags before calling it)
:func:`random_legal_actions`              a uniformly random legal action per state of a batch (one
                                          hashed word per state and action id, the highest legal one)
:meth:`CardEnv.step_batch_last`           a batch with the batch axis *last* (:meth:`CardEnv.init_batch_last`,
                                          :func:`batch_last` / :func:`batch_first`): the same states as
                                          ``vmap(step)``, several times faster on CPU for ``batch_last``
                                          engines (vectorised across games); the helpers above take
                                          ``batch_axis=-1`` / ``action_axis=0`` for it
:func:`across_devices`                    a loop over a batch (``fn(states, key, *args) -> (states,
                                          totals)``) with the batch split over several devices, e.g. one
                                          per CPU core (``JAX_NUM_CPU_DEVICES``); :func:`split_over_devices`
                                          places a batch so
========================================  ================================================================

Helpers for the game files: :func:`shuffled` (a deck permutation from a key), :func:`random_words` (cheap
uint32 words per position from a key: a counter hash), :func:`key_words` (a deal's words from the key's own bits,
no Threefry), :func:`hashed_words`, :func:`one_hot`, :func:`popcount`,
:func:`card_mask`, ``RANK_VALUE`` / ``SUIT_INDEX`` (numpy tables by card id),
:func:`seat_rows` (update one seat's row without a gather), :func:`tree_where`, :class:`ExactRatios`
(observation entries ``n / d`` bit-equal to the Python encoding's; XLA's ``n * (1 / d)`` is not) and
:func:`padded` (for ``_game_fields``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import pgx

import card_envs
from card_envs.cards import RANK_VALUE as _RANK_VALUE
from card_envs.cards import SUIT_INDEX as _SUIT_INDEX
from card_envs.core.config import GameConfig
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import ConfigError

#: JAX engine module of every env name that has one (or will have: a missing module is reported by ``make``)
JAX_GAMES: dict[str, str] = {
    "revolutionary_war_v0": "card_envs.jax.revolutionary_war",
    "revolution_v0": "card_envs.jax.revolution",
    "battlecards_v0": "card_envs.jax.battlecards",
    "bloodlines_v0": "card_envs.jax.bloodlines",
}

#: ``current_player`` of a state whose episode is over
OVER_PLAYER = 0

#: the Python engine's state class of a game (what ``from_state`` converts)
PyState = TypeVar("PyState", bound=GameState)
#: arrays (and numpy scalars) by field name, the numpy form of a state's fields (``_game_fields``)
Fields: TypeAlias = "dict[str, np.ndarray | np.generic]"

#: rank value per card id (A=1 .. K=13, jokers 0) and suit index (C=0 .. S=3, jokers -1), as numpy constants:
#: indexing them inside a trace embeds them in the compiled step
RANK_VALUE = np.asarray(_RANK_VALUE, dtype=np.int32)
SUIT_INDEX = np.asarray(_SUIT_INDEX, dtype=np.int32)

TRUE = jnp.bool_(True)
FALSE = jnp.bool_(False)

#: the base fields of every Pgx state (the game arrays come after them)
PGX_FIELDS: tuple[str, ...] = (
    "current_player", "observation", "rewards", "terminated", "truncated", "legal_action_mask", "_step_count",
)


@pgx._src.struct.dataclass
class CardState(pgx.State):
    """Base of every game's ``State``: Pgx's fields, and the env name as ``env_id``.

    A game's ``State`` adds its arrays (underscore names) and sets ``name`` (a class attribute)."""

    name: ClassVar[str] = ""

    @property
    def env_id(self) -> str:
        return self.name

    def _repr_html_(self) -> None:
        return None  # notebooks fall back to repr(): Pgx's SVG renderer does not know the card games

    def to_svg(self, **_: Any) -> str:
        raise NotImplementedError(
            f"{self.name}: Pgx's SVG visualizer knows only Pgx's own games; render a position with the Python "
            "engine instead (card_envs.make_game(...).new_state(...).render())"
        )


class CardEnv(pgx.Env, Generic[PyState]):
    """The ``pgx.Env`` of one game under fixed options; see the module docstring. ``PyState``: the Python
    engine's state class."""

    name: ClassVar[str]
    state_class: ClassVar[type[CardState]]
    unsupported_options: ClassVar[dict[str, str]] = {}
    step_uses_key: ClassVar[bool] = True
    chance_fields: ClassVar[tuple[str, ...]] = ()
    batch_last: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        super().__init__()
        #: the Python engine under the same options: the reference, and the source of the static facts
        self.game: Game = card_envs.make_game(self.name, **options)
        self.config = self.game.config
        self._refuse_unsupported()

    def _refuse_unsupported(self) -> None:
        defaults = type(self.config)()
        for option, reason in self.unsupported_options.items():
            value = getattr(self.config, option)
            if value != getattr(defaults, option):
                raise ConfigError(
                    f"{self.name}: option {option}={value!r} is not supported by the JAX engine ({reason}); "
                    f"leave it at its default {getattr(defaults, option)!r} or use the Python engine"
                )

    # -- the Pgx API ------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.name

    @property
    def version(self) -> str:
        return self.name.rsplit("_", 1)[1]

    @property
    def num_players(self) -> int:
        return self.game.num_players

    @property
    def num_actions(self) -> int:
        return self.game.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (self.game.observation_size,)

    @property
    def action_names(self) -> tuple[str, ...]:
        return self.game.action_names

    def init(self, key: jax.Array) -> CardState:
        """A fresh episode dealt with ``key`` (Pgx)."""
        return self._finished(self._init(key))

    def step(self, state: CardState, action: jax.Array, key: jax.Array | None = None) -> CardState:
        """One decision (Pgx): the game's step, or the illegal-action ending, or no change after the end.

        ``key`` feeds the shuffles a step may need (e.g. the next deal); games whose steps draw nothing
        (``step_uses_key = False``) accept ``None``."""
        if key is None and self.step_uses_key:
            raise ValueError(f"{self.name}: step(state, action, key) needs a PRNG key (later shuffles use it)")
        return self._step_plumbing(state, jnp.asarray(action, jnp.int32), key)

    def _step_plumbing(self, state: CardState, action: jax.Array, key: jax.Array | None) -> CardState:
        """``step`` of one state, or (``batch_last`` games) of a batch whose arrays carry the batch axis last."""
        legal_id = (action >= 0) & (action < self.num_actions)
        action = jnp.clip(action, 0, self.num_actions - 1)
        over = state.terminated | state.truncated
        illegal = ~(legal_id & (state.legal_action_mask & (_column(self.num_actions, action) == action)).any(0))
        counted = state.replace(_step_count=state._step_count + 1)
        stepped = self._step(counted, action, key)
        refused = counted.replace(rewards=self._illegal_action_rewards(state.current_player),
                                  terminated=jnp.ones_like(state.terminated))
        after_end = state.replace(rewards=jnp.zeros_like(state.rewards))
        return self._finished(tree_where(over, after_end, tree_where(illegal, refused, stepped)))

    def init_batch_last(self, keys: jax.Array) -> CardState:
        """``jax.vmap(init)(keys)`` with the batch axis *last* in every array (see :meth:`step_batch_last`).

        For ``batch_last`` engines only the shuffles run per game (``vmap(_init)``); the legal masks and the
        observations are computed once on the whole batch, vectorised, as ``step_batch_last`` does."""
        if self.batch_last:
            return self._finished(jax.vmap(self._init, out_axes=-1)(keys))
        return jax.vmap(self.init, out_axes=-1)(keys)

    def step_batch_last(self, states: CardState, actions: jax.Array, keys: jax.Array | None = None) -> CardState:
        """``step`` of a batch whose arrays carry the batch axis *last* (``(k, n)`` for a ``(k,)`` field; keys
        stay ``(n, ...)``): the same states as ``jax.vmap(step)`` with the axes moved.

        Faster on CPU for ``batch_last`` engines: the game runs once on the whole batch, each entry of a
        hand or an observation a contiguous row of ``n`` games, so XLA vectorises across games (with the
        batch first, rows of 13 or 157 entries compile to scalar loops). Other engines run
        ``jax.vmap(step)`` over the last axis. Keep the batch in this layout from step to step
        (:meth:`init_batch_last`, ``reset_finished(..., batch_axis=-1)``, :func:`batch_last` /
        :func:`batch_first` to convert)."""
        if keys is None and self.step_uses_key:
            raise ValueError(f"{self.name}: step_batch_last(states, actions, keys) needs PRNG keys")
        actions = jnp.asarray(actions, jnp.int32)
        if self.batch_last:
            return self._step_plumbing(states, actions, keys)
        return jax.vmap(self.step, in_axes=(-1, 0, None if keys is None else 0), out_axes=-1)(states, actions, keys)

    def _illegal_action_rewards(self, mover: jax.Array) -> jax.Array:
        others = 1.0 / max(self.num_players - 1, 1)
        return jnp.where(_column(self.num_players, mover) == mover, -1.0, others).astype(jnp.float32)

    def observe(self, state: CardState, player_id: Any = None) -> jax.Array:
        """``game.encode(view(player_id))`` of the equal Python state (default: ``current_player``)."""
        if player_id is None:
            player_id = state.current_player
        return jax.lax.stop_gradient(self._observe(state, jnp.asarray(player_id, jnp.int32)))

    def legal_action_mask(self, state: CardState) -> jax.Array:
        """The legal actions of ``current_player``, recomputed from the game arrays (all True once over)."""
        return self._legal_action_mask(state) | state.terminated | state.truncated

    def _finished(self, state: CardState) -> CardState:
        """Pgx's derived fields of a state whose game arrays are final."""
        over = state.terminated | state.truncated
        state = state.replace(
            current_player=jnp.where(over, OVER_PLAYER, state.current_player).astype(jnp.int32),
            legal_action_mask=self._legal_action_mask(state) | over,
        )
        state = state.replace(observation=self.observe(state))
        return jax.tree.map(_strongly_typed, state)  # a new deal's leaves typed as a step's: jit compiles step once

    # -- to implement in a game -------------------------------------------------------------------

    def _init(self, key: jax.Array) -> CardState:
        raise NotImplementedError

    def _step(self, state: CardState, action: jax.Array, key: jax.Array | None) -> CardState:
        raise NotImplementedError

    def _observe(self, state: CardState, player_id: jax.Array) -> jax.Array:
        raise NotImplementedError

    def _legal_action_mask(self, state: CardState) -> jax.Array:
        raise NotImplementedError

    def _game_fields(self, py_state: PyState, seed: tuple[int, ...]) -> Fields:
        raise NotImplementedError

    # -- Python positions ---------------------------------------------------------------------------

    def from_state(self, py_state: PyState, key: jax.Array | None = None) -> CardState:
        """The JAX state equal to ``py_state`` (any position, any time in the episode).

        Equal means: the same observation for every seat, legal mask, rewards of the last step, flags and
        step count, and the same future for every sequence of actions, up to chance the Python state has
        not drawn yet (its generator; ``chance_fields`` are drawn from ``key``, default ``PRNGKey(0)``).
        The mask and the observation are computed by this engine from the converted arrays, not copied,
        so a lockstep test of ``from_state`` checks them."""
        return self._finish_conversion(self._base_fields(py_state, _seed(key)))

    def from_states(self, py_states: Sequence[PyState], key: jax.Array | None = None) -> CardState:
        """``from_state`` of each, stacked along a new leading batch axis (one jitted pass for the batch;
        each state draws its chance fields from its own stream of ``key``)."""
        if not py_states:
            raise ValueError("from_states needs at least one state")
        seed = _seed(key)
        rows = [self._base_fields(s, (*seed, i)) for i, s in enumerate(py_states)]
        stacked = {name: np.stack([row[name] for row in rows]) for name in rows[0]}
        return self._finish_conversions(stacked)

    def _base_fields(self, py_state: PyState, seed: tuple[int, ...]) -> Fields:
        game = py_state.game
        if game.name != self.name or game.config != self.config:
            raise ConfigError(
                f"from_state: a state of {game.name} under {game.config} does not fit this engine "
                f"({self.name} under {self.config}); make the engine with the state's options"
            )
        over = py_state.terminated or py_state.truncated
        fields: Fields = {
            "current_player": np.int32(OVER_PLAYER if over else py_state.current_player),
            "observation": np.zeros(self.observation_shape, np.float32),
            "rewards": np.asarray(py_state.rewards, np.float32),
            "terminated": np.bool_(py_state.terminated),
            "truncated": np.bool_(py_state.truncated),
            "legal_action_mask": np.zeros(self.num_actions, np.bool_),
            "_step_count": np.int32(len(py_state.history)),
        }
        game_fields = self._game_fields(py_state, seed) if self._fields_take_seed else \
            self._game_fields(py_state)  # type: ignore[call-arg]  # the documented form without chance fields
        fields.update({name: np.asarray(value) for name, value in game_fields.items()})
        return fields

    @functools.cached_property
    def _fields_take_seed(self) -> bool:
        """Whether ``_game_fields`` takes the ``seed`` (a game without chance fields may leave it out)."""
        return len(inspect.signature(self._game_fields).parameters) >= 2

    @functools.cached_property
    def _finish_conversion(self) -> Callable[[dict[str, Any]], CardState]:
        return jax.jit(lambda fields: self._finished(self.state_class(**fields)))

    @functools.cached_property
    def _finish_conversions(self) -> Callable[[dict[str, Any]], CardState]:
        return jax.jit(jax.vmap(lambda fields: self._finished(self.state_class(**fields))))

    def game_fields(self) -> tuple[str, ...]:
        """Names of the game arrays of this engine's ``State`` (after Pgx's fields)."""
        return tuple(f.name for f in dataclasses.fields(self.state_class) if f.name not in PGX_FIELDS)

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.config.to_dict().items())
        return f"card_envs.jax.make({self.name!r}{', ' if options else ''}{options})"


def make(env_name: str, **options: Any) -> CardEnv:
    """The JAX engine of ``env_name`` under ``options`` (the Python engine's options, validated alike)."""
    if env_name not in card_envs.ENV_NAMES:
        raise ConfigError(f"unknown environment {env_name!r}; registered: {', '.join(card_envs.ENV_NAMES)}")
    if env_name not in JAX_GAMES or not _has_module(JAX_GAMES[env_name]):
        raise ConfigError(
            f"{env_name} has no JAX engine yet; available: {', '.join(available_games()) or 'none'} "
            "(the Python engine runs every game: card_envs.make_game)"
        )
    return importlib.import_module(JAX_GAMES[env_name]).Env(**options)


def available_games() -> list[str]:
    """The env names whose JAX engine is installed in this checkout."""
    return [name for name, module in JAX_GAMES.items() if _has_module(module)]


def from_state(py_state: GameState, key: jax.Array | None = None) -> CardState:
    """The JAX state equal to a Python engine state, of any game that has a JAX engine (engines are cached
    per game and config, so their compiled conversion is reused)."""
    game = py_state.game
    return _cached_engine(game.name, game.config).from_state(py_state, key)


@functools.lru_cache(maxsize=32)
def _cached_engine(env_name: str, config: GameConfig) -> CardEnv:
    """The engine of ``env_name`` under ``config`` (a config is hashable: it holds canonical values)."""
    return make(env_name, **config.to_dict())


def _seed(key: jax.Array | None) -> tuple[int, ...]:
    """A numpy seed from a JAX key (``PRNGKey(0)`` when None): ``from_state`` draws chance fields in numpy,
    so that converting many states costs no device round trip per state."""
    key = jax.random.PRNGKey(0) if key is None else key
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return tuple(int(word) for word in np.asarray(key).ravel())


def _strongly_typed(leaf: jax.Array) -> jax.Array:
    """``leaf`` without JAX's weak type (a ``jnp.where`` of Python numbers is weakly typed): a state whose leaf is
    weakly typed after ``init`` and not after ``step`` is a new input type to a jitted ``step``, which then traces
    and compiles it a second time (1.5 s a function, Revolution with ``void_inferences``)."""
    return leaf.astype(leaf.dtype) if getattr(leaf, "weak_type", False) else leaf


def _column(size: int, like: jax.Array) -> jax.Array:
    """``arange(size)`` shaped to broadcast against ``like``'s trailing batch axes (none for one state)."""
    return jnp.arange(size, dtype=jnp.int32).reshape((size,) + (1,) * jnp.ndim(like))


def _has_module(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# -- helpers for the game files ------------------------------------------------------------------


def tree_where(condition: jax.Array, on_true: Any, on_false: Any) -> Any:
    """``jnp.where(condition, a, b)`` leaf by leaf over two pytrees of equal structure (a scalar condition)."""
    return jax.tree.map(lambda a, b: jnp.where(condition, a, b), on_true, on_false)


def computed_once(x: jax.Array) -> jax.Array:
    """``x``, computed once: XLA's CPU fusion puts a chain of elementwise ops into every consumer, so a value read
    by many entries of larger arrays (a per-game value read by per-seat or per-kind rows, an observation's
    blocks) would be computed again for each of them; a reduction (here over ``x`` and a neutral value) is not
    fused into its consumers (``optimization_barrier`` does not do it on CPU)."""
    if x.dtype == jnp.bool_:
        return jnp.stack([x, jnp.zeros_like(x)]).any(0)
    neutral = jnp.finfo(x.dtype).min if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    return jnp.stack([x, jnp.full_like(x, neutral)]).max(0)


def one_hot(index: jax.Array, size: int, dtype: Any = jnp.int32) -> jax.Array:
    """``size`` entries, 1 at ``index`` (none if ``index`` is out of range, e.g. -1 for "no card")."""
    return (jnp.arange(size, dtype=jnp.int32) == index).astype(dtype)


def seat_rows(seat: jax.Array, num_players: int) -> jax.Array:
    """Column vector selecting one seat's row of a ``(num_players, n)`` array, for row updates without gathers."""
    return (jnp.arange(num_players, dtype=jnp.int32) == seat)[:, None]


def shuffled(key: jax.Array, n: int, hashed: bool = False) -> jax.Array:
    """A uniformly random permutation of ``0 .. n-1`` (int32), e.g. a shuffled deck of card ids.

    Two rounds of one int32 sort each: random high bits with the position in the low bits, so a sort of
    plain integers (4x cheaper than ``jax.random.permutation``'s key-value sort, which dominates a deal's
    cost) carries the permutation along. A tie of the random bits keeps the earlier order; two rounds make
    the distance from uniform smaller than ``jax.random.permutation``'s own (below 1e-9 for 52 cards).

    ``hashed=True`` takes the random bits from :func:`random_words` (two Threefry words for the whole
    deck, then a counter hash) instead of ``jax.random.bits`` per round: about 40% cheaper a deal on CPU,
    the same sorts (a different permutation for the same key; engines opt in)."""
    index_bits = max(1, (n - 1).bit_length())
    low = jnp.uint32((1 << index_bits) - 1)
    order = jnp.arange(n, dtype=jnp.uint32)
    words: jax.Array | list[jax.Array]
    if hashed:
        words = random_words(key, (2, n))
    else:
        words = [jax.random.bits(round_key, (n,), jnp.uint32) for round_key in jax.random.split(key, 2)]
    for round_words in words:
        keys = (round_words & ~low) | jnp.arange(n, dtype=jnp.uint32)
        order = order[jnp.sort(keys) & low]
    return order.astype(jnp.int32)


class ExactRatios:
    """Several ``numerator / denominator`` entries of an observation, rounded exactly as the Python encoding
    rounds them (float64 division, then float32).

    XLA compiles ``x / d`` as ``x * (1 / d)``, one ulp off for some numerators, so observations would not be
    bit-equal to the Python ones; a constant table of the exact values and one gather are. Build it once per
    engine with ``(denominator, largest numerator)`` per entry; call it with the numerators (int array)."""

    def __init__(self, parts: Sequence[tuple[int | float, int]]) -> None:
        self.parts = [(denominator, top) for denominator, top in parts]
        self.table = np.concatenate([np.arange(top + 1) / denominator for denominator, top in parts]).astype(
            np.float32)
        self.tops = np.array([top for _, top in parts], np.int32)
        self.offsets = np.concatenate([[0], np.cumsum(self.tops + 1)[:-1]]).astype(np.int32)

    def __call__(self, numerators: jax.Array) -> jax.Array:
        return jnp.asarray(self.table)[self.offsets + jnp.clip(numerators, 0, self.tops)]

    def rows(self, numerators: jax.Array) -> jax.Array:
        """The same values without a gather, for numerators ``(parts, *batch)`` (one row per part, any
        trailing batch axes): ``n * float32(1 / d)`` (an IEEE product, as XLA computes it), moved by one ulp
        at the numerators where that product is one ulp off: a select per such numerator when there are few,
        else a bit of a mask (32 numerators a word) read at ``n``. Elementwise, so XLA vectorises it across a
        batch (a gather per entry compiles to a scalar loop; a select per numerator, 21 to 32 of them for
        Revolutionary War's pile sizes and match totals, made its observation's ratios most of its step)."""
        rows: list[jax.Array] = []
        for (denominator, top), numerator in zip(self.parts, numerators, strict=True):
            exact = self.table[self.offsets[len(rows)]:][: top + 1]
            reciprocal = np.float32(1 / denominator)
            product = np.arange(top + 1, dtype=np.float32) * reciprocal
            value = numerator.astype(jnp.float32) * reciprocal
            off = np.flatnonzero(product != exact)
            one_ulp = np.abs(exact.view(np.int32) - product.view(np.int32)).max(initial=0) <= 1
            if len(off) <= _FEW_SELECTS or not one_ulp:
                for n in off:
                    value = jnp.where(numerator == n, exact[n], value)
            else:
                value = _moved_by_an_ulp(value, numerator, exact > product, exact < product)
            rows.append(value)
        return jnp.stack(rows)


_FEW_SELECTS = 3  #: ExactRatios.rows: up to this many off numerators a part, a select each


def _moved_by_an_ulp(value: jax.Array, numerator: jax.Array, up: np.ndarray, down: np.ndarray) -> jax.Array:
    """``value`` (non-negative float32) one ulp up where ``up[numerator]``, one down where ``down[numerator]``
    (flags per numerator ``0 .. len(up) - 1``; none elsewhere), read as bits of 32-bit words."""
    def flag(bits: np.ndarray) -> jax.Array:
        words = [sum(1 << (n % 32) for n in np.flatnonzero(bits) if n // 32 == w) for w in range(-(-len(bits) // 32))]
        index = numerator >> 5
        word = functools.reduce(lambda chosen, w: jnp.where(index == w, np.uint32(words[w]), chosen),
                                range(len(words)), jnp.uint32(0))
        return ((word >> (numerator & 31).astype(jnp.uint32)) & 1).astype(jnp.int32)

    moved = jax.lax.bitcast_convert_type(value, jnp.int32) + flag(up) - flag(down)
    return jax.lax.bitcast_convert_type(moved, jnp.float32)


def observation_seat(current_player: jax.Array) -> jax.Array:
    """The seat whose observation ``state.observation`` holds (``current_player``; never -1)."""
    return jnp.maximum(current_player, 0)


def card_mask(cards: Sequence[int], size: int = len(_RANK_VALUE)) -> np.ndarray:
    """A bool array with ``True`` at every card id of ``cards`` (hands and piles as sets, for ``_game_fields``)."""
    out = np.zeros(size, dtype=np.bool_)
    out[list(cards)] = True
    return out


def popcount(bits: jax.Array) -> jax.Array:
    """Set bits of integer bit masks (hands as masks), elementwise."""
    return jax.lax.population_count(bits)


def padded(values: Sequence[int], size: int, fill: int = -1, dtype: Any = np.int32) -> np.ndarray:
    """``values`` in a fixed-size array, the rest ``fill`` (for ``_game_fields``)."""
    if len(values) > size:
        raise ValueError(f"{len(values)} values do not fit in {size} slots")
    out = np.full(size, fill, dtype=dtype)
    out[: len(values)] = values
    return out


def stack_states(states: Sequence[Any]) -> Any:
    """Pytrees of equal structure stacked along a new leading axis (a batch of states)."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def unstack_state(batch: Any, index: int) -> Any:
    """Row ``index`` of a batch of states."""
    return jax.tree.map(lambda leaf: leaf[index], batch)


def random_legal_action(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """A uniformly random legal action of one state (vmap it, or see :func:`random_legal_actions`)."""
    return random_legal_actions(key, legal_action_mask[None])[0]


@functools.partial(jax.jit, static_argnames="action_axis")
def random_legal_actions(key: jax.Array, legal_action_mask: jax.Array, action_axis: int = -1) -> jax.Array:
    """A random legal action for each mask of a batch ``(batch, num_actions)``, cheaply (the benchmark
    harness, random opponents).

    One random 32-bit word per state (:func:`random_words`: a counter hashed with two words drawn from
    ``key``, a few integer operations per state instead of a Threefry call), hashed with each action id
    into a priority (:func:`mix32`) whose low bits are replaced by the id; the legal action of highest
    priority is played. Uniform over the legal set up to the quality of the hash (tested with chi-square,
    neighbouring states included) and to ties of the random high bits (24 of them for 215 actions; a tie goes
    to the higher id: a deviation below 2e-5 per choice). The maximum is a chain of ``maximum`` over the
    actions' priorities, each computed from its own mask row: XLA then fuses the whole choice into one pass
    that keeps the priorities in registers (a ``(batch, actions)`` priority array and an ``argmax`` over it
    were written out and reduced by a scalar loop: 3x-6x slower; a prefix count, the exact "k-th legal
    action", compiles to a reduce-window, slower still). A mask without any legal action gives id 0.
    Deterministic in ``key``. Jitted (``action_axis`` static): called eagerly, its per-action loop ran as
    about two thousand dispatched operations, 150 ms a call for Bloodlines' 215 actions.

    ``action_axis=0`` takes batch-last masks ``(num_actions, batch)`` (:meth:`CardEnv.step_batch_last`) and
    picks the same actions as for the transposed masks, each step a whole-batch vector operation."""
    if action_axis not in (0, -1, legal_action_mask.ndim - 1):
        raise ValueError(f"action_axis must be -1 (masks (batch, actions)) or 0 (masks (actions, batch)), "
                         f"got {action_axis}")
    axis = 0 if action_axis == 0 and legal_action_mask.ndim > 1 else legal_action_mask.ndim - 1
    num_actions = legal_action_mask.shape[axis]
    batch_shape = legal_action_mask.shape[1:] if axis == 0 else legal_action_mask.shape[:-1]
    word = random_words(key, batch_shape)
    low = (1 << max(1, (num_actions - 1).bit_length())) - 1  # the bits that hold the action id

    def priority(action: int) -> jax.Array:
        salt = jnp.uint32(action * 0x9E3779B9 & 0xFFFFFFFF)
        ranked = (mix32(word ^ salt) & jnp.uint32(~low & 0xFFFFFFFF)) | jnp.uint32(action)
        legal = legal_action_mask[action] if axis == 0 else legal_action_mask[..., action]
        return jnp.where(legal, ranked, jnp.uint32(0))

    best = functools.reduce(jnp.maximum, [priority(action) for action in range(num_actions)])
    # written out once through a running maximum after a zero (a reduce-window, which XLA's CPU fusion keeps
    # apart from its operand and its users): elementwise, the choice would be fused into (and computed again
    # by) every user of the actions, e.g. each entry of a step's legality check (1000x slower); behind a
    # reduction it is fused into the reduction's scalar loop instead of a vectorised one (8x slower)
    best = jax.lax.cummax(jnp.stack([jnp.zeros_like(best), best]), axis=0)[1]
    return (best & jnp.uint32(low)).astype(jnp.int32)


def random_words(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """``uint32`` words of ``shape``, one per position: the position's index hashed with two words drawn
    from ``key`` (:func:`hashed_words`), far cheaper than ``jax.random.bits`` (Threefry) for a batch."""
    index = jnp.arange(math.prod(shape), dtype=jnp.uint32).reshape(shape)
    return hashed_words(jax.random.bits(key, (2,), jnp.uint32), index)


def key_words(key: jax.Array, n: int) -> jax.Array:
    """``n`` random ``uint32`` words of one game's key (an ``init``'s deal): the key's own two words as the seed
    of :func:`hashed_words`, with no Threefry call at all. ``jax.random.bits`` runs Threefry, which XLA on CPU
    compiles (under ``vmap``) to a loop of about a hundred small operations: most of the cost of re-dealing
    the few games of a batch that just ended."""
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    return hashed_words(data.reshape(-1).astype(jnp.uint32), jnp.arange(n, dtype=jnp.uint32))


def hashed_words(seed: jax.Array, counter: jax.Array) -> jax.Array:
    """Random ``uint32`` words from a 64-bit ``seed`` (two words), one per entry of ``counter``: the counter
    hashed twice (:func:`mix32`), the seed's halves mixed in between. A seed never used with the same counter
    twice gives independent-looking words."""
    return mix32(mix32(seed[0] ^ (counter.astype(jnp.uint32) * jnp.uint32(0x9E3779B9))) ^ seed[-1])


def mix32(x: jax.Array) -> jax.Array:
    """An integer hash with good avalanche ("lowbias32", C. Wellons): close bits give unrelated outputs."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


# -- auto-reset --------------------------------------------------------------------------------------


def step_autoreset(env: pgx.Env) -> Callable[[pgx.State, jax.Array, jax.Array], pgx.State]:
    """``step(state, action, key)`` that starts the next episode when this one ends (vmap it).

    As ``pgx.experimental.auto_reset``: the returned state is the next episode's first state with this
    step's ``rewards``, ``terminated`` and ``truncated``; stepping it clears them. Under ``vmap`` the deal is
    computed for every state on every step; :func:`reset_finished` pays it only for finished states."""

    def step(state: pgx.State, action: jax.Array, key: jax.Array) -> pgx.State:
        step_key, deal_key = jax.random.split(key)
        fresh = state.replace(terminated=jnp.bool_(False), truncated=jnp.bool_(False),
                              rewards=jnp.zeros_like(state.rewards))
        state = tree_where(state.terminated | state.truncated, fresh, state)
        state = env.step(state, action, step_key)
        dealt = env.init(deal_key).replace(terminated=state.terminated, truncated=state.truncated,
                                           rewards=state.rewards)
        return tree_where(state.terminated | state.truncated, dealt, state)

    return step


def reset_finished(env: pgx.Env, states: pgx.State, key: jax.Array, slots: int | None = None,
                   lazy: bool = False, batch_axis: int = 0) -> pgx.State:
    """A batch of states in which finished episodes (terminated or truncated) are replaced by fresh deals.

    With ``slots=None`` every finished state is re-dealt (the deal is computed for the whole batch). With
    ``slots=k`` the first ``k`` finished states are re-dealt and only ``k`` deals are computed; any further
    finished states wait for a later call (stepping them changes nothing, Pgx). With ``lazy=True`` nothing
    happens until ``k`` states are finished (a real branch, so most steps skip the deal; finished states
    wait a few steps). The batch passes through the branch and is updated in place there: a scatter of
    the deals outside it ran on every step, and XLA copied every array the step had just written to make
    it (Revolution's batch-last benchmark loop: 80 of its 300 operations per step, about 7% of its CPU time;
    Revolutionary War's loop, either layout, about as much).
    ``batch_axis=-1``: the batch axis is last in every array (:meth:`CardEnv.step_batch_last`). Read
    ``rewards`` and the flags of the step before calling this: the fresh states have them cleared. Jit it
    with ``slots``, ``lazy`` and ``batch_axis`` static."""
    if batch_axis not in (0, -1):
        raise ValueError(f"batch_axis must be 0 (batch first, jax.vmap's default) or -1 (batch last), got {batch_axis}")
    done = states.terminated | states.truncated
    batch = done.shape[0]
    deal = env.init_batch_last if batch_axis == -1 and hasattr(env, "init_batch_last") else jax.vmap(
        env.init, out_axes=batch_axis)
    if slots is None or slots >= batch:
        fresh = deal(jax.random.split(key, batch))
        return jax.tree.map(lambda new, old: jnp.where(_expand(done, old, batch_axis), new, old), fresh, states)

    def redeal(states: pgx.State) -> pgx.State:
        (rows,) = jnp.nonzero(done, size=slots, fill_value=batch)  # batch: out of range, dropped by the scatter
        fresh = deal(jax.random.split(key, slots))
        if batch_axis == 0:
            return jax.tree.map(lambda old, new: old.at[rows].set(new, mode="drop"), states, fresh)
        return jax.tree.map(lambda old, new: _set_columns(old, rows, new), states, fresh)

    if lazy:
        return jax.lax.cond(done.sum() >= slots, redeal, lambda states: states, states)
    return redeal(states)


# -- all cores: one device per CPU core ---------------------------------------------------------------


def across_devices(fn: Callable[..., Any], *, batch_axis: int = 0,
                   devices: Sequence[Any] | None = None) -> Callable[..., Any]:
    """``fn(states, key, *args) -> (states, totals)`` jitted with the batch of ``states`` split evenly over
    ``devices`` (default: all of JAX's devices).

    On a CPU, JAX has one device unless told otherwise, and XLA runs a batched step on it as one program,
    spreading only its large operations over the cores (about 1.5 of 2 cores for Revolutionary War's
    batch-last loop, with hand-offs between threads at every operation). With one CPU device per core
    (the environment variable ``JAX_NUM_CPU_DEVICES=2``, or ``jax.config.update("jax_num_cpu_devices", 2)``
    right after ``import jax``, before ``pgx`` or this package is imported: JAX fixes its devices at its
    first computation), each device plays its own part of the batch in its own thread, start to finish.

    ==============  =============================================================================================
    argument        on each device
    ==============  =============================================================================================
    ``states``      its own ``batch / len(devices)`` games: every array split along ``batch_axis`` (0: as
                    ``jax.vmap`` makes them, -1: :meth:`CardEnv.step_batch_last`'s layout); returned split
                    (:func:`split_over_devices` places a batch so, before the first call)
    ``key``         folded with the device's index (``jax.random.fold_in``): the parts draw different numbers
    ``*args``       the same values on every device (step counts, parameters)
    ``totals``      any pytree of arrays (decision counts, summed rewards): summed over the devices
    ==============  =============================================================================================

    The parts exchange nothing but the totals, so each part's games are played exactly as ``fn`` alone would
    play them. The states are donated (updated in place). The batch must divide evenly over the devices."""
    from jax.sharding import PartitionSpec as P

    mesh = _batch_mesh(devices)

    @functools.partial(jax.jit, donate_argnums=0)
    def run(states: Any, key: jax.Array, *args: Any) -> tuple[Any, Any]:
        # empty arrays (a game's unused option arrays) stay out of the split: JAX gives them no sharding
        tree: Any  # a PyTreeDef: jaxlib declares none of its methods (a compiled module without stubs)
        leaves, tree = jax.tree.flatten(states)
        kept = [leaf for leaf in leaves if leaf.size]
        specs = _batch_specs(kept, batch_axis, mesh.size)

        def per_device(parts: list[jax.Array], key: jax.Array, *args: Any) -> tuple[list[jax.Array], Any]:
            part = iter(parts)
            local = [next(part) if leaf.size else jnp.zeros(_part_shape(leaf.shape, batch_axis, mesh.size), leaf.dtype)
                     for leaf in leaves]
            local, totals = fn(tree.unflatten(local), jax.random.fold_in(key, jax.lax.axis_index("batch")), *args)
            return ([leaf for leaf in jax.tree.leaves(local) if leaf.size],
                    jax.tree.map(lambda total: jax.lax.psum(total, "batch"), totals))

        parts, totals = jax.shard_map(per_device, mesh=mesh, in_specs=(specs, P()) + (P(),) * len(args),
                                      out_specs=(specs, P()), check_vma=False)(kept, key, *args)
        part = iter(parts)
        return tree.unflatten([next(part) if leaf.size else leaf for leaf in leaves]), totals

    return run


def split_over_devices(states: Any, *, batch_axis: int = 0, devices: Sequence[Any] | None = None) -> Any:
    """``states`` placed as :func:`across_devices` takes and returns them: each device holds its own part of the
    batch (split along ``batch_axis``)."""
    from jax.sharding import NamedSharding

    mesh = _batch_mesh(devices)
    return jax.tree.map(lambda leaf, spec: jax.device_put(leaf, NamedSharding(mesh, spec)) if leaf.size
                        else jnp.zeros(leaf.shape, leaf.dtype),  # a new array: the caller's may be donated
                        states, _batch_specs(states, batch_axis, mesh.size))


def _batch_mesh(devices: Sequence[Any] | None) -> Any:
    from jax.sharding import Mesh

    return Mesh(np.array(list(devices or jax.devices())), ("batch",))


def _part_shape(shape: tuple[int, ...] | list[int], batch_axis: int, parts: int) -> tuple[int, ...]:
    shape = list(shape)
    shape[batch_axis] //= parts
    return tuple(shape)


def _batch_specs(states: Any, batch_axis: int, parts: int) -> Any:
    from jax.sharding import PartitionSpec as P

    batch = jax.tree.leaves(states)[0].shape[batch_axis]
    if batch % parts:
        raise ValueError(f"a batch of {batch} games does not split evenly over {parts} devices")

    def spec(leaf: Any) -> P:
        axes: list[str | None] = [None] * leaf.ndim
        axes[batch_axis] = "batch"
        return P(*axes)

    return jax.tree.map(spec, states)


def batch_last(states: Any) -> Any:
    """A batch of states (batch axis first, as ``jax.vmap`` makes it) with the batch axis moved last."""
    return jax.tree.map(lambda leaf: jnp.moveaxis(leaf, 0, -1), states)


def batch_first(states: Any) -> Any:
    """The inverse of :func:`batch_last`: the batch axis back in front (``jax.vmap``'s layout)."""
    return jax.tree.map(lambda leaf: jnp.moveaxis(leaf, -1, 0), states)


def _set_columns(old: jax.Array, columns: jax.Array, new: jax.Array) -> jax.Array:
    """``old.at[..., columns].set(new, mode="drop")`` for a batch-last array, written row by row. XLA's scatter
    of whole columns walks down each column, one cache line per entry at a stride of the batch size, which a
    power-of-two batch maps to a few cache sets: on CPU, about 7 ns an entry at 1,024 games, against 2 ns in
    row order (one scalar index per entry), most of the cost of re-dealing games with large observations."""
    entries = math.prod(old.shape[:-1])  # explicit: an array may have no entries
    flat, updates = old.reshape(entries, old.shape[-1]), new.reshape(entries, new.shape[-1])
    return flat.at[jnp.arange(entries)[:, None], columns[None, :]].set(updates, mode="drop").reshape(old.shape)


def _expand(flags: jax.Array, like: jax.Array, batch_axis: int = 0) -> jax.Array:
    if batch_axis == -1:  # (n,) already broadcasts against (..., n)
        return flags
    return flags.reshape(flags.shape + (1,) * (like.ndim - flags.ndim))


__all__ = [
    "CardEnv", "CardState", "JAX_GAMES", "OVER_PLAYER", "across_devices", "available_games", "batch_first",
    "batch_last", "computed_once", "from_state", "hashed_words", "key_words", "make", "mix32", "random_legal_action",
    "random_legal_actions", "random_words", "reset_finished", "split_over_devices", "step_autoreset"
]
