"""A trained model as a JAX player: the policy network of a ``zoo:`` or ``checkpoint:`` agent, frozen.

``make_network_port(game, spec)`` gives ``act(observation, mask, key) -> action`` for one seat (vmap it for a
batch), as the rule-based ports do, so the JAX trainer seats a trained agent as an opponent (``pool.weights``)
inside the jitted loop, and ``train.exploit`` trains a best response against it. The network plays exactly as
the Python player (:class:`agents.players.checkpoint.CheckpointAgent`) of the same spec:

=====================  ================================================================================
the Python player      the port
=====================  ================================================================================
weights                the same arrays (``PolicyNet``), constants of the jitted loop (never trained)
input                  the seat's observation, then (a policy trained with an ``advisor``) a one-hot of
                       the advisor's move: its JAX port here (``make_port``), its Python player there
greedy / sampling      the model's recorded ``deterministic``: the most probable legal action (the first
                       on a tie, as ``numpy.argmax``), or a draw from the masked softmax (from ``key``)
observation options    the table's must be the model's (Revolution's ``full_recall``, ...): the port reads
                       the engine's observation as it is, where the Python player would encode its own
                       (``Game.encoder_for``); another table is a ``ConfigError`` naming the options
=====================  ================================================================================

The network's sums run in float32 on XLA, the Python player's in numpy: two legal actions whose logits differ
by a rounding error can be chosen differently (``tests/test_exploit.py`` counts the moves that agree).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from card_envs.core.engine import Game
from card_envs.core.errors import CardEnvsError, ConfigError


def model_options(game_name: str, spec: str) -> dict[str, Any]:
    """The observation options (``Game.observation_options``) the model of ``spec`` was trained under: the table
    its port needs (and ``train.exploit`` sets). :class:`ConfigError` when ``spec`` cannot be built."""
    import card_envs

    checkpoint = _model_agent(game_name, spec).checkpoint
    return _observation_options(card_envs.make_game(game_name), checkpoint.meta["game"].get("env_options", {}))


def _observation_options(game: Game, trained: dict[str, Any]) -> dict[str, Any]:
    defaults = game.config_class()
    return {name: trained.get(name, getattr(defaults, name)) for name in game.observation_options}


def _model_agent(game_name: str, spec: str) -> Any:
    from agents.players.registry import make_agent

    try:
        return make_agent(game_name, spec, seed=0)
    except CardEnvsError as error:
        raise ConfigError(f"{spec} cannot be seated: {error}") from None


def make_network_port(game: Game, spec: str) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """``act(observation, mask, key) -> action`` of the model ``spec`` at ``game``'s table (see the module
    docstring)."""
    from train.jax_network import masked_logits, policy_logits, sample
    from train.jax_players import make_port

    agent = _model_agent(game.name, spec)
    checkpoint = agent.checkpoint
    wanted = _observation_options(game, checkpoint.meta["game"].get("env_options", {}))
    differ = {name: value for name, value in wanted.items() if getattr(game.config, name) != value}
    if differ:
        table = {name: getattr(game.config, name) for name in differ}
        raise ConfigError(f"{spec} was trained under the observation options {differ}; the JAX trainer seats it "
                          f"only at a table with them (env_options), this one has {table}")
    advisor_spec = checkpoint.meta["policy"].get("advisor")
    advisor = None if advisor_spec is None else make_port(game, advisor_spec)
    net = checkpoint.policy
    inputs = game.observation_size + (game.num_actions if advisor is not None else 0)
    if net.observation_size != inputs or net.num_actions != game.num_actions:
        raise ConfigError(f"{spec} reads {net.observation_size} inputs and chooses among {net.num_actions} actions; "
                          f"this {game.name} table gives {inputs} and {game.num_actions}")
    layers = [(jnp.asarray(w), jnp.asarray(b)) for w, b in zip(net.weights, net.biases, strict=True)]
    activation, greedy, actions = net.activation, agent.deterministic, game.num_actions

    def act(observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        x = observation
        if advisor is not None:
            x = jnp.concatenate([x, jax.nn.one_hot(advisor(observation, mask, key), actions, dtype=x.dtype)])
        logits, _ = policy_logits(layers, x, activation)
        if greedy:
            return jnp.argmax(masked_logits(logits, mask)).astype(jnp.int32)
        return sample(key, logits, mask)

    return act


__all__ = ["make_network_port", "model_options"]
