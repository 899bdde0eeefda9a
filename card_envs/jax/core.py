"""What every JAX engine shares: the ``pgx.Env`` base, ``make`` / ``from_state``, card tables, array helpers.

A game file (``card_envs/jax/<game>.py``, Pgx style: one file, a frozen state, small pure functions)
defines its ``State`` (a ``pgx.State`` dataclass) and a :class:`CardEnv` subclass that fills in:

==============================  ====================================================================
member                          what it is
==============================  ====================================================================
``name``                        the versioned env name of the Python engine, e.g. ``"revolution_v0"``
``state_class``                 the game's ``State``
``unsupported_options``         ``{option: reason}``: options of the Python engine this engine
                                refuses at ``make`` unless they keep their default (empty: all run)
``_init(key)``                  a fresh deal, shuffled with ``key`` (Pgx)
``_step(state, action, key)``   one decision of the Python engine; the decision-free rest of the
                                turn resolved inside (Pgx); later shuffles come from ``key``
``_observe(state, player)``     ``game.encode(state.view(player))`` of the equal Python state (Pgx)
``_legal_action_mask(state)``   bool ``(num_actions,)``: the Python engine's legal set
``_game_fields(py_state)``      the game's own arrays (underscore names) of a Python ``GameState``
==============================  ====================================================================

Conventions, the same in every game (the Python engine is the reference; ``card_envs.jax.lockstep``
checks them):

==========================  ========================================================================
field / behaviour           meaning
==========================  ========================================================================
``current_player``          int32 seat to act; ``-1`` once the episode is over (Python ``NO_PLAYER``)
``observation``             ``observe(state, current_player)``; seat 0's once the episode is over
``rewards``                 float32 ``(num_players,)``: what the last step earned, as Python's
                            ``state.rewards`` (zero-sum unless an option shapes them)
``terminated``              the game (or match) ended; ``truncated``: a step limit ended it
``legal_action_mask``       bool ``(num_actions,)``, Python's legal set; all True once terminated
                            (Pgx's convention, so that masked softmaxes stay finite)
``_step_count``             decisions so far (Python ``len(state.history)``)
game arrays                 fixed-size int32/bool arrays, names with a leading underscore (Pgx's
                            API test allows no other public fields)
illegal action              as the wrapped PettingZoo ``env()``: the episode ends, the mover gets
                            -1 and every other seat 0
step after the end          no change, zero rewards (Pgx)
==========================  ========================================================================

Options are static: fixed at ``make``, validated by the Python engine's config class (the same
:class:`~card_envs.core.errors.ConfigError`), so every jitted function is specialised to them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pgx

import card_envs
from card_envs.cards import RANK_VALUE as _RANK_VALUE
from card_envs.cards import SUIT_INDEX as _SUIT_INDEX
from card_envs.core.engine import NO_PLAYER, Game, GameState
from card_envs.core.errors import ConfigError

#: JAX engine module of every env name that has one
JAX_GAMES: dict[str, str] = {
    "revolutionary_war_v0": "card_envs.jax.revolutionary_war",
    "revolution_v0": "card_envs.jax.revolution",
    "battlecards_v0": "card_envs.jax.battlecards",
    "bloodlines_v0": "card_envs.jax.bloodlines",
}

#: rank value per card id (A=1 .. K=13, jokers 0) and suit index (C=0 .. S=3, jokers -1), as numpy
#: constants: indexing them inside a trace embeds them in the compiled step
RANK_VALUE = np.asarray(_RANK_VALUE, dtype=np.int32)
SUIT_INDEX = np.asarray(_SUIT_INDEX, dtype=np.int32)

TRUE = jnp.bool_(True)
FALSE = jnp.bool_(False)


class CardEnv(pgx.Env):
    """The ``pgx.Env`` of one game under fixed options; see the module docstring."""

    name: ClassVar[str]
    state_class: ClassVar[type[pgx.State]]
    unsupported_options: ClassVar[dict[str, str]] = {}

    def __init__(self, **options: Any) -> None:
        super().__init__()
        #: the Python engine under the same options: the reference, and the source of the static facts
        self.game: Game = card_envs.make_game(self.name, **options)
        self.config = self.game.config
        self._refuse_unsupported()

    def _refuse_unsupported(self) -> None:
        defaults = type(self.config)()
        for option, reason in self.unsupported_options.items():
            if getattr(self.config, option) != getattr(defaults, option):
                raise ConfigError(f"{self.name}: option {option!r} is not supported by the JAX engine: {reason}")

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

    def observe(self, state: pgx.State, player_id: Any = None) -> jax.Array:
        """``game.encode(view(player_id))`` of the equal Python state (default: the observation's seat)."""
        if player_id is None:
            player_id = observation_seat(state.current_player)
        return jax.lax.stop_gradient(self._observe(state, jnp.asarray(player_id, jnp.int32)))

    def _step_with_illegal_action(self, state: pgx.State, loser: jax.Array) -> pgx.State:
        rewards = jnp.zeros_like(state.rewards).at[loser].set(-1.0)
        penalised = state.replace(rewards=rewards, terminated=TRUE, current_player=jnp.int32(NO_PLAYER))
        # no seat was to act (loser -1): a step after the end, which changes nothing (Pgx). A truncated
        # state's mask is empty, so Pgx's step calls this for it too.
        return jax.tree.map(lambda bad, unchanged: jnp.where(loser >= 0, bad, unchanged), penalised, state)

    def step(self, state: pgx.State, action: jax.Array, key: jax.Array | None = None) -> pgx.State:
        """Pgx's step (illegal action and after-the-end handling), with the observation of
        :func:`observation_seat`. ``key`` feeds the shuffles a step may need (e.g. the next deal)."""
        if key is None:
            raise ValueError(f"{self.name}: step(state, action, key) needs a PRNG key (later shuffles use it)")
        return super().step(state, action, key)

    def legal_action_mask(self, state: pgx.State) -> jax.Array:
        """The legal actions of ``current_player`` (recomputed from the game arrays)."""
        return self._legal_action_mask(state)

    def _legal_action_mask(self, state: pgx.State) -> jax.Array:
        raise NotImplementedError

    # -- Python positions ---------------------------------------------------------------------------

    def from_state(self, py_state: GameState) -> pgx.State:
        """The JAX state equal to ``py_state`` (any position, any time in the episode).

        The legal mask and the observation are computed by this engine from the converted arrays, not
        copied, so a lockstep test of ``from_state`` checks them."""
        return self._finish_conversion(self._converted(py_state))

    def from_states(self, py_states: Sequence[GameState]) -> pgx.State:
        """``from_state`` of each, stacked along a new leading batch axis (one jitted pass for the batch)."""
        if not py_states:
            raise ValueError("from_states needs at least one state")
        # stacked on the host (numpy) and moved to the device once: stacking device arrays leaf by leaf
        # costs more than the conversion itself
        converted = [self._converted(s) for s in py_states]
        return self._finish_conversions(jax.tree.map(lambda *leaves: np.stack(leaves), *converted))

    def _converted(self, py_state: GameState) -> pgx.State:
        game = py_state.game
        if game.name != self.name or game.config != self.config:
            raise ConfigError(
                f"from_state: a state of {game.name} under {game.config} does not fit this engine "
                f"({self.name} under {self.config})"
            )
        # numpy leaves (host arrays): ``jit`` moves them to the device in one go
        return self.state_class(
            current_player=np.int32(py_state.current_player),
            observation=np.zeros(self.observation_shape, np.float32),
            rewards=np.asarray(py_state.rewards, np.float32),
            terminated=np.bool_(py_state.terminated),
            truncated=np.bool_(py_state.truncated),
            legal_action_mask=np.zeros(self.num_actions, np.bool_),
            _step_count=np.int32(len(py_state.history)),
            **{name: np.asarray(value) for name, value in self._game_fields(py_state).items()},
        )

    def _game_fields(self, py_state: GameState) -> dict[str, Any]:
        raise NotImplementedError

    @cached_property
    def _finish_conversion(self) -> Any:
        def finish(state: pgx.State) -> pgx.State:
            mask = self._legal_action_mask(state) | state.terminated
            state = state.replace(legal_action_mask=mask)
            return state.replace(observation=self.observe(state))

        return jax.jit(finish)

    @cached_property
    def _finish_conversions(self) -> Any:
        return jax.jit(jax.vmap(self._finish_conversion))

    def __repr__(self) -> str:
        return f"card_envs.jax.make({self.name!r}, **{self.config.to_dict()})"


def make(env_name: str, **options: Any) -> CardEnv:
    """The JAX engine of ``env_name`` under ``options`` (the Python engine's options, validated alike)."""
    if env_name not in card_envs.ENV_NAMES:
        raise ConfigError(f"unknown environment {env_name!r}; registered: {', '.join(card_envs.ENV_NAMES)}")
    try:
        module = importlib.import_module(JAX_GAMES[env_name])
    except ModuleNotFoundError as error:
        if error.name != JAX_GAMES[env_name]:
            raise
        available = [name for name in JAX_GAMES if _has_module(JAX_GAMES[name])]
        raise ConfigError(f"{env_name} has no JAX engine yet; available: {', '.join(available) or 'none'}") from None
    return module.Env(**options)


def from_state(py_state: GameState) -> pgx.State:
    """The JAX state equal to a Python engine state (of any game that has a JAX engine)."""
    return make(py_state.game.name, **py_state.game.config.to_dict()).from_state(py_state)


def _has_module(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# -- helpers for the game files ------------------------------------------------------------------


def observation_seat(current_player: jax.Array) -> jax.Array:
    """The seat whose observation ``state.observation`` holds: the player to act, seat 0 once over."""
    return jnp.maximum(current_player, 0)


def padded(values: Sequence[int], size: int, fill: int = -1, dtype: Any = np.int32) -> np.ndarray:
    """``values`` in a fixed-size array, the rest ``fill`` (for ``_game_fields``)."""
    if len(values) > size:
        raise ValueError(f"{len(values)} values do not fit in {size} slots")
    out = np.full(size, fill, dtype=dtype)
    out[: len(values)] = values
    return out


def card_mask(cards: Sequence[int], size: int = len(_RANK_VALUE)) -> np.ndarray:
    """A bool array with ``True`` at every card id of ``cards`` (hands and piles as sets)."""
    out = np.zeros(size, dtype=np.bool_)
    out[list(cards)] = True
    return out


def popcount(bits: jax.Array) -> jax.Array:
    """Set bits of integer bit masks (hands as masks), elementwise."""
    return jax.lax.population_count(bits)


def stack_states(states: Sequence[Any]) -> Any:
    """Pytrees of equal structure stacked along a new leading axis (a batch of states)."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def random_legal_action(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """A uniformly random legal action of one state (vmap it for a batch)."""
    logits = jnp.where(legal_action_mask, 0.0, -jnp.inf)
    return jax.random.categorical(key, logits).astype(jnp.int32)
