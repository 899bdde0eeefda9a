"""A JAX env with a game's shapes and a step that costs nothing: the ceiling of the JAX trainer.

``ZeroCostEnv(num_players, observation_size, num_actions, episode_length)`` is a ``pgx.Env`` like the
game engines of ``card_envs.jax`` (same ``State`` fields, same ``init`` / ``step`` / ``observe``), so
``train/jax_ppo.py`` runs on it unchanged. ``ZeroCostEnv.like(env, episode_length)`` copies the shapes
of a real engine.

=====================  ========================================================================
field                  behaviour
=====================  ========================================================================
seats                  take turns: seat 0, 1, .., N-1, 0, ..
observation            all zeros, ``(observation_size,)`` float32
legal actions          all of them
episode                ends (terminated) after ``episode_length`` decisions of all seats together
rewards                zero, except at the end: +1 for seat 0 and -1 for seat 1 when the episode
                       length is odd (the other way round when it is even), 0 for the others
=====================  ========================================================================

The benchmark ``benchmarks/training_throughput.py`` runs the JAX trainer on it with the real game's
mean episode length: what the trainer costs when the game costs nothing. Tests use it to check the
trainer's plumbing before (and independently of) any real engine.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pgx
from pgx._src.struct import dataclass


@dataclass
class State(pgx.State):
    current_player: jax.Array = jnp.int32(0)
    observation: jax.Array = jnp.zeros(0, jnp.float32)
    rewards: jax.Array = jnp.zeros(2, jnp.float32)
    terminated: jax.Array = jnp.bool_(False)
    truncated: jax.Array = jnp.bool_(False)
    legal_action_mask: jax.Array = jnp.ones(1, jnp.bool_)
    _step_count: jax.Array = jnp.int32(0)

    @property
    def env_id(self) -> str:
        return "zero_cost"


class ZeroCostEnv(pgx.Env):
    """See the module docstring."""

    def __init__(self, num_players: int, observation_size: int, num_actions: int, episode_length: int) -> None:
        super().__init__()
        if num_players < 2 or observation_size < 1 or num_actions < 1 or episode_length < 1:
            raise ValueError(f"ZeroCostEnv needs >= 2 players and positive sizes, got {num_players} players, "
                             f"{observation_size} inputs, {num_actions} actions, episodes of {episode_length}")
        self._num_players = num_players
        self._observation_size = observation_size
        self._num_actions = num_actions
        self.episode_length = episode_length

    @classmethod
    def like(cls, env: pgx.Env, episode_length: int) -> ZeroCostEnv:
        """The shapes of ``env`` (players, observation, actions), episodes of ``episode_length`` decisions."""
        (size,) = env.observation_shape
        return cls(env.num_players, size, env.num_actions, episode_length)

    def _init(self, key: jax.Array) -> State:
        return State(observation=jnp.zeros(self._observation_size, jnp.float32),
                     rewards=jnp.zeros(self._num_players, jnp.float32),
                     legal_action_mask=jnp.ones(self._num_actions, jnp.bool_))

    def _step(self, state: State, action: jax.Array, key: jax.Array) -> State:
        over = state._step_count >= self.episode_length
        winner = jnp.where(self.episode_length % 2 == 1, 1.0, -1.0)
        rewards = jnp.zeros(self._num_players, jnp.float32).at[0].set(winner).at[1].set(-winner)
        return state.replace(current_player=jnp.where(over, jnp.int32(-1),
                                                      (state.current_player + 1) % self._num_players),
                             rewards=jnp.where(over, rewards, 0.0), terminated=over)

    def _observe(self, state: State, player_id: jax.Array) -> jax.Array:
        return jnp.zeros(self._observation_size, jnp.float32)

    @property
    def id(self) -> str:
        return "zero_cost"

    @property
    def version(self) -> str:
        return "v0"

    @property
    def num_players(self) -> int:
        return self._num_players

    @property
    def num_actions(self) -> int:
        return self._num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (self._observation_size,)


__all__ = ["State", "ZeroCostEnv"]
