"""Batched JAX engines of the four games, on Pgx's ``Env`` API (optional extra ``card-envs[jax]``).

>>> import jax
>>> from card_envs import jax as cj            # needs ``pip install card-envs[jax]``
>>> env = cj.make("revolutionary_war_v0")       # a pgx.Env; options as in the Python engine
>>> state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 1024))

``make(name, **options)`` returns the game's :class:`~card_envs.jax.core.CardEnv`; ``from_state(py_state)``
converts any position of the Python engine (``card_envs.make_game(name).new_state(...)``) into the
equal JAX ``State``. Observations (``env.observe(state, player)``), action ids, legal masks and per-step
rewards are exactly the Python engine's, so one policy plays on either side; ``card_envs.jax.lockstep``
proves it game by game.

Importing ``card_envs`` (or any PettingZoo env) never imports this package or jax.
"""

from __future__ import annotations

try:
    import jax as _jax  # noqa: F401
    import pgx as _pgx  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"card_envs.jax needs jax and pgx ({error.name} is missing): pip install 'card-envs[jax]'"
    ) from error

from card_envs.jax.core import JAX_GAMES, CardEnv, from_state, make

__all__ = ["JAX_GAMES", "CardEnv", "from_state", "make"]
