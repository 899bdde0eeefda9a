"""The JAX trainer's network: initialisation as SB3's, the forward pass, the masked policy and its sampling,
and the numpy :class:`~agents.players.checkpoint_file.PolicyNet` a checkpoint plays. Used by the PPO loop
(``train/jax_ppo.py``) and the imitation warm start (``train/jax_pretrain.py``), which import it, not each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from train.checkpoint import PolicyNet

#: logits of illegal actions (finite, so gradients stay finite)
ILLEGAL = -1e9

Layers = list[tuple[jax.Array, jax.Array]]  #: [(weights (in, out), bias (out,)), ...]
Params = dict[str, Layers]  #: {"policy": hidden layers + action layer, "value": ... + value layer}


# -- the network --------------------------------------------------------------------------------------


def init_network(key: jax.Array, inputs: int, num_actions: int, net_arch: list[int], network: str) -> Params:
    """Orthogonal initialisation as SB3's: gain sqrt(2) for hidden layers, 0.01 for the action layer,
    1 for the value layer; zero biases.

    ``params["policy"]`` is the policy network exactly as a checkpoint's ``PolicyNet`` holds it (hidden
    layers, then the action layer). ``params["value"]`` is the value layer alone, reading the policy's last
    hidden layer (``network: shared``), or a network of its own (``separate``)."""
    keys = iter(jax.random.split(key, 2 * len(net_arch) + 2))

    def layer(fan_in: int, fan_out: int, gain: float) -> tuple[jax.Array, jax.Array]:
        weights = jax.nn.initializers.orthogonal(gain)(next(keys), (fan_in, fan_out), jnp.float32)
        return weights, jnp.zeros(fan_out, jnp.float32)

    def tower(out: int, gain: float) -> Layers:
        sizes = [inputs, *net_arch]
        return [layer(a, b, math.sqrt(2)) for a, b in zip(sizes, sizes[1:], strict=False)] + \
            [layer(sizes[-1], out, gain)]

    policy = tower(num_actions, 0.01)
    value = tower(1, 1.0) if network == "separate" else [layer(net_arch[-1], 1, 1.0)]
    return {"policy": policy, "value": value}


def activation_function(name: str) -> Callable[[jax.Array], jax.Array]:
    return {"tanh": jnp.tanh, "relu": jax.nn.relu}[name]


def policy_logits(layers: Layers, x: jax.Array, activation: str) -> tuple[jax.Array, jax.Array]:
    """The policy network: (action logits, last hidden layer)."""
    act = activation_function(activation)
    for weights, bias in layers[:-1]:
        x = act(x @ weights + bias)
    weights, bias = layers[-1]
    return x @ weights + bias, x


def forward(params: Params, x: jax.Array, activation: str) -> tuple[jax.Array, jax.Array]:
    """(action logits, value) of observations ``x`` (any leading batch shape)."""
    logits, hidden = policy_logits(params["policy"], x, activation)
    value_layers = params["value"]
    if len(value_layers) > 1:  # a separate value network
        value, _ = policy_logits(value_layers, x, activation)
    else:
        weights, bias = value_layers[0]
        value = hidden @ weights + bias
    return logits, value[..., 0]


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, logits, ILLEGAL)


def log_policy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Log-probabilities of the masked softmax (illegal actions: about -1e9)."""
    return jax.nn.log_softmax(masked_logits(logits, mask))


def entropy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    log_p = log_policy(logits, mask)
    return -jnp.sum(jnp.where(mask, jnp.exp(log_p) * log_p, 0.0), axis=-1)


def sample(key: jax.Array, logits: jax.Array, mask: jax.Array) -> jax.Array:
    """One action per row from the masked softmax."""
    return sample_with_log_prob(key, logits, mask)[0]


def sample_with_log_prob(key: jax.Array, logits: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One action per row from the masked softmax, and its log-probability.

    By the inverse of the cumulative distribution: one uniform number per row (``jax.random.categorical``
    draws one per action, which costs more than the network for games of many actions). The weights are
    the unnormalised ``exp(logit - max)`` of the legal actions, summed by a parallel prefix scan (XLA's
    ``cumsum`` on CPU costs twice as much for 215 actions); the first action whose cumulative weight reaches
    ``u`` in (0, total] has a positive weight, so it is legal."""
    top = jnp.max(masked_logits(logits, mask), axis=-1, keepdims=True)  # finite: a row without legal actions
    weights = jnp.where(mask, jnp.exp(logits - top), 0.0)                 # (a finished game) gets action 0
    cumulative = jax.lax.associative_scan(jnp.add, weights, axis=-1)
    total = jnp.maximum(cumulative[..., -1:], jnp.finfo(jnp.float32).tiny)
    u = (1.0 - jax.random.uniform(key, logits.shape[:-1]))[..., None] * total
    action = jnp.minimum(jnp.sum(cumulative < u, axis=-1), logits.shape[-1] - 1).astype(jnp.int32)
    chosen = jnp.take_along_axis(logits, action[..., None], axis=-1)[..., 0]
    return action, chosen - top[..., 0] - jnp.log(total[..., 0])


def to_policy_net(layers: Layers, activation: str) -> PolicyNet:
    """The numpy :class:`~train.checkpoint.PolicyNet` of a policy network (what a checkpoint plays)."""
    return PolicyNet([np.asarray(w) for w, _ in layers], [np.asarray(b) for _, b in layers], activation)
