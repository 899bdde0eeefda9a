"""The opponent pool: who sits in the learner's other seats, drawn per seat and episode.

=====================  ==============================================================================
entry                  opponent
=====================  ==============================================================================
``random``             :class:`agents.players.base.RandomAgent`
``heuristic:<name>``   the game's rule-based player of that name (``agents.players.registry``)
``self``               a frozen snapshot of the learner, drawn uniformly among the ``max_snapshots``
                       most recent ones (taken every ``pool.snapshot_every`` PPO updates)
=====================  ==============================================================================

Entries are drawn with the config's ``pool.weights`` (``self`` is left out until the first snapshot
exists). A snapshot is a :class:`SnapshotPlayer`: the policy network copied out of torch into numpy
arrays, sampling from its masked softmax. Copying the weights out is the freezing: a snapshot never
sees a gradient, and one small numpy forward pass per decision costs less than a torch call (no
autograd, no dispatch), so no torch runs inside the environments, whatever the vector env.
Rule-based players get their own instance per seat (some keep per-episode memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.players.registry import make_agent
from card_envs.core.errors import ConfigError
from train.checkpoint import PolicyNet, Snapshot, masked_choice

SELF = "self"


class SnapshotPlayer:
    """A frozen policy as an opponent: ``player(observation, mask) -> action``, sampled."""

    def __init__(self, snapshot: Snapshot, seed: int | None = None) -> None:
        self.snapshot = snapshot
        self.name = f"{SELF}:{snapshot.name}"
        self.rng = np.random.default_rng(seed)  # reseeded by the env at every reset

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return masked_choice(self.snapshot.net.logits(observation), mask, self.rng)


class OpponentPool:
    """Draws opponents for :class:`card_envs.core.single_agent.SingleAgentEnv` (``sample(rng, seat)``)."""

    def __init__(self, game: str, weights: Mapping[str, float], *, max_snapshots: int = 10, seed: int = 0) -> None:
        if not weights or any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ConfigError(f"pool weights must be non-negative with a positive total, got {dict(weights)}")
        self.game = game
        self.weights = {name: float(w) for name, w in weights.items() if w > 0}
        self.max_snapshots = max_snapshots
        self.seed = seed
        self.snapshots: list[SnapshotPlayer] = []
        self._agents: dict[tuple[str, int], Any] = {}
        for name in self.weights:
            if name != SELF:
                make_agent(game, name)  # an unknown name fails here, not mid-training

    def sample(self, rng: np.random.Generator, seat: int) -> Any:
        """An opponent for ``seat``, entry drawn with the weights (``self`` only once a snapshot exists)."""
        names = [n for n in self.weights if n != SELF or self.snapshots]
        if not names:
            raise ConfigError("the pool has only 'self' and no snapshot of the learner yet")
        weights = np.array([self.weights[n] for n in names])
        name = names[_draw(rng, weights)]
        if name == SELF:
            return self.snapshots[int(rng.integers(len(self.snapshots)))]
        key = (name, seat)
        agent = self._agents.get(key)
        if agent is None:
            agent = self._agents[key] = make_agent(self.game, name, seed=self.seed + seat)
        return agent

    def add_snapshot(self, snapshot: Snapshot) -> None:
        """Add a frozen policy; the oldest is dropped beyond ``max_snapshots``."""
        self.snapshots.append(SnapshotPlayer(snapshot, seed=self.seed + len(self.snapshots)))
        del self.snapshots[:-self.max_snapshots]

    def snapshot_list(self) -> list[Snapshot]:
        return [player.snapshot for player in self.snapshots]


def _draw(rng: np.random.Generator, weights: np.ndarray) -> int:
    threshold = rng.random() * weights.sum()
    return min(int(np.searchsorted(np.cumsum(weights), threshold, side="right")), len(weights) - 1)


def torch_activation(name: str) -> type:
    """The torch module of an activation name (``ppo.activation``: ``tanh`` or ``relu``)."""
    import torch

    return {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[name]


def activation_name(module: type) -> str:
    """The name of a torch activation module (an SB3 policy's ``activation_fn``): :func:`torch_activation` inverted."""
    for name in ("tanh", "relu"):
        if torch_activation(name) is module:
            return name
    raise ConfigError(f"only tanh and relu policies can be copied to numpy, not {module.__name__}")


def snapshot_of(policy: Any, name: str, activation: str) -> Snapshot:
    """Freeze a stable-baselines3 ``MaskableActorCriticPolicy`` (MLP) into a numpy :class:`Snapshot`."""
    return Snapshot(name, policy_net_of(policy, activation))


def policy_net_of(policy: Any, activation: str) -> PolicyNet:
    """The numpy copy of ``action_net(mlp_extractor.policy_net(flatten(obs)))`` of an SB3 MLP policy."""
    import torch

    expected = torch_activation(activation)
    modules = list(policy.mlp_extractor.policy_net)
    for module in modules:
        if not isinstance(module, (torch.nn.Linear, expected)):
            raise ConfigError(f"cannot copy a policy layer {module!r}: only Linear and {expected.__name__} "
                              "are supported")
    layers = [m for m in modules if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    with torch.no_grad():
        weights = [layer.weight.detach().cpu().numpy().T.copy() for layer in layers]
        biases = [layer.bias.detach().cpu().numpy().copy() for layer in layers]
    return PolicyNet(weights, biases, activation)


__all__ = ["SELF", "OpponentPool", "SnapshotPlayer", "activation_name", "policy_net_of", "snapshot_of",
           "torch_activation"]
