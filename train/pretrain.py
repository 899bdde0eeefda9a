"""Imitation warm start: the policy first copies a teacher (a baseline player), then PPO improves on it.

Self-play PPO from scratch spends most of a short budget rediscovering what the rule-based players
already know. With ``pretrain.teacher`` set (e.g. the game's strongest rule-based player), a fresh
run first plays ``pretrain.games`` episodes of the training environment with the teacher in the
learner's seat (opponents drawn from the pool as in training), then fits

* the policy head to the teacher's choices (cross-entropy of the masked logits), and
* the value head to the episode return that followed each decision (squared error),

for ``pretrain.epochs`` passes with Adam. The teacher reads only its seat's view, like any agent.
This is behaviour cloning, the usual warm start of game-playing RL (AlphaGo, AlphaStar); PPO then
starts from the teacher's level with a value function that already knows what positions are worth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from agents.base import Decision
from agents.registry import make_agent
from card_envs.core.single_agent import SingleAgentEnv


@dataclass
class Demonstrations:
    """Teacher decisions: observations, legal masks, actions and the return that followed each."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def collect(env: SingleAgentEnv, teacher_spec: str, games: int, seed: int,
            progress: Callable[[int], None] | None = None) -> Demonstrations:
    """Play ``games`` episodes of ``env`` with the teacher in the learner's seat."""
    teacher = make_agent(env.game.name, teacher_spec, seed=seed)
    observations, masks, actions, returns = [], [], [], []
    env.reset(seed=seed)
    for _ in range(games):
        observation, _ = env.reset()
        teacher.reset(env.game, env.seat)
        rewards = []
        done = False
        while not done:
            state, seat = env.state, env.seat
            decision = Decision(env.game, seat, state.view(seat), state.legal_actions())
            action = teacher.act(decision)
            observations.append(observation)
            masks.append(env.action_masks().copy())
            actions.append(action)
            observation, reward, terminated, truncated, _ = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        returns.extend(np.cumsum(rewards[::-1])[::-1].tolist())  # undiscounted return-to-go
        if progress is not None:
            progress(1)
    return Demonstrations(np.asarray(observations, np.float32), np.asarray(masks, np.int8),
                          np.asarray(actions, np.int64), np.asarray(returns, np.float32))


def fit(policy: torch.nn.Module, data: Demonstrations, *, epochs: int, batch_size: int, learning_rate: float,
        value_weight: float, seed: int) -> dict[str, float]:
    """Fit an SB3 ``MaskableActorCriticPolicy`` to the demonstrations; the final epoch's losses and accuracy."""
    generator = torch.Generator().manual_seed(seed)
    observations = torch.as_tensor(data.observations)
    illegal = torch.as_tensor(data.masks == 0)
    actions = torch.as_tensor(data.actions)
    returns = torch.as_tensor(data.returns)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    stats: dict[str, float] = {}
    for _ in range(epochs):
        order = torch.randperm(len(data), generator=generator)
        totals = np.zeros(3)
        for start in range(0, len(data), batch_size):
            batch = order[start:start + batch_size]
            features = policy.extract_features(observations[batch])
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(illegal[batch], -1e8)
            values = policy.value_net(latent_vf).squeeze(-1)
            policy_loss = torch.nn.functional.cross_entropy(logits, actions[batch])
            value_loss = torch.nn.functional.mse_loss(values, returns[batch])
            optimizer.zero_grad()
            (policy_loss + value_weight * value_loss).backward()
            optimizer.step()
            agree = (logits.argmax(dim=1) == actions[batch]).float().sum()
            totals += [policy_loss.item() * len(batch), value_loss.item() * len(batch), agree.item()]
        stats = dict(zip(("policy_loss", "value_loss", "accuracy"), (totals / len(data)).tolist(), strict=True))
    policy.set_training_mode(False)
    return stats


__all__ = ["Demonstrations", "collect", "fit"]
