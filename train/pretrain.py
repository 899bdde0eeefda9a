"""Imitation warm start: the policy first copies a teacher (a baseline player), then PPO improves on it.

Self-play PPO from scratch spends most of a short budget rediscovering what the rule-based players
already know. With ``pretrain.teacher`` set (e.g. the game's strongest rule-based player), a fresh
run first plays ``pretrain.games`` games with the teacher in every seat (one instance per seat), records
every seat's decisions -- each seat's observation vector, legal mask and the teacher's choice -- and
then fits

* the policy head to the teacher's choices (cross-entropy of the masked logits), and
* the value head to the return that seat received from that decision on (squared error),

for ``pretrain.epochs`` passes with Adam. The teacher reads only its seat's view, like any agent, and
recording every seat gives N decisions per decision's worth of teacher time in an N-player game.
This is behaviour cloning, the usual warm start of game-playing RL (AlphaGo, AlphaStar); PPO then
starts from the teacher's level with a value function that already knows what positions are worth.

A clone that agrees with its teacher on 95% of the teacher's own positions can still play far worse:
its first mistake leads to positions the teacher never reached, where it errs more, and a game has
tens of decisions. ``pretrain.dagger_rounds`` corrects this with DAgger (Ross, Gordon & Bagnell 2011):
in each round the *student* plays every seat, the teacher still watches every decision (so a teacher
with memory keeps it) and labels each position with its own choice, and the policy refits on all the
data gathered so far. Each round reports ``student_agreement``: how often, on the positions the student
itself reached and where it had a choice, it did what the teacher would have done -- the figure that
predicts how well the clone plays.

A clone that has only seen the teacher (or itself) at the table also errs where the *others* play
differently: a Revolution clone of the counting player, 0.93 in agreement, won 0.69 of its games against
fields of random players, where its teacher wins 0.93. ``pretrain.mix`` (agent spec -> chance) seats
other players in the demonstration games: each seat of each game (DAgger rounds included) is played,
with that chance, by that agent instead of the teacher or student, and only the teacher's and student's
seats are recorded. With three seats in ten random and two cheap, the clone won 0.91 against random
players, and as much as before against its teacher (benchmarks/results/training_revolution_v0.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.players.base import Decision, advised_observation
from agents.players.registry import make_agent
from card_envs.core.engine import Game

if TYPE_CHECKING:  # torch is imported where it is used: the JAX trainer collects demonstrations without it
    import torch


@dataclass
class Demonstrations:
    """Teacher decisions: observations, legal masks, actions and the return that followed each."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    #: DAgger rounds: how often the student's played choice, where it had one, was the teacher's
    student_agreement: float | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def __add__(self, other: Demonstrations) -> Demonstrations:
        return Demonstrations(*(np.concatenate([getattr(self, name), getattr(other, name)])
                                for name in ("observations", "masks", "actions", "returns")))


Student = Callable[[np.ndarray, np.ndarray], int]  #: (observation, mask) -> action


def collect(game: Game, teacher_spec: str, games: int, seed: int,
            progress: Callable[[int], None] | None = None, student: Student | None = None,
            mix: Mapping[str, float] | None = None, advisor: str | None = None) -> Demonstrations:
    """Play ``games`` games of ``game`` with the teacher in every seat; record every decision.

    With ``student``, the student's choice is played instead and the teacher's is recorded (DAgger).
    With ``mix`` (agent spec -> chance), each seat of each game is instead played, with that chance,
    by that agent, and its decisions are not recorded: the recorded seats then meet the positions
    that other kinds of players lead to. With ``advisor`` (an agent spec), the recorded observations
    carry that agent's advice (``agents.players.base.advised_observation``; one instance per seat), as the
    training env's do with the same advisor.
    """
    agreed = choices = 0
    teachers = [make_agent(game.name, teacher_spec, seed=seed * 1_000 + seat) for seat in range(game.num_players)]
    others = [[make_agent(game.name, spec, seed=seed * 1_000 + 100 * (k + 1) + seat)
               for seat in range(game.num_players)] for k, spec in enumerate(mix or {})]  # per mix entry, per seat
    advisors = [make_agent(game.name, advisor, seed=seed * 1_000 + 50 + seat) for seat in range(game.num_players)] \
        if advisor is not None else None
    size = game.observation_size + (game.num_actions if advisors else 0)
    chances = np.cumsum([float(chance) for chance in (mix or {}).values()])
    rng = np.random.default_rng(seed)
    observations, masks, actions, returns = [], [], [], []
    for _ in range(games):
        state = game.new_state(rng)
        players: list[Any] = list(teachers)
        if others:
            for seat, u in enumerate(rng.random(game.num_players)):
                k = int(np.searchsorted(chances, u, side="right"))
                if k < len(chances):
                    players[seat] = others[k][seat]
        recorded = [player is teachers[seat] for seat, player in enumerate(players)]
        for seat, player in enumerate(players):
            player.reset(game, seat)
        for seat, helper in enumerate(advisors or ()):
            helper.reset(game, seat)
        earned_before: list[tuple[int, float]] = []  # (seat, its total reward before the decision)
        while not state.is_over:
            decision = Decision.of(state)  # with its position: a search teacher samples from it
            player = decision.player
            action = players[player].act(decision)
            if recorded[player]:
                observations.append(decision.observation if advisors is None
                                    else advised_observation(decision, advisors[player]))
                masks.append(decision.mask)
                actions.append(action)
                earned_before.append((player, state.cumulative[player]))
                if student is not None:
                    played = student(observations[-1], masks[-1])
                    if len(decision.legal_actions) > 1:
                        choices += 1
                        agreed += played == action
                    action = played
            state.apply(action)
        final = state.returns()
        returns.extend(final[seat] - before for seat, before in earned_before)  # undiscounted return-to-go
        if progress is not None:
            progress(1)
    return Demonstrations(np.asarray(observations, np.float32).reshape(len(actions), size),
                          np.asarray(masks, np.int8).reshape(len(actions), game.num_actions),
                          np.asarray(actions, np.int64), np.asarray(returns, np.float32),
                          agreed / max(choices, 1) if student is not None else None)


def greedy_student(policy: torch.nn.Module) -> Student:
    """The most probable legal action of an SB3 ``MaskableActorCriticPolicy``, one position at a time."""
    import torch

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        with torch.no_grad():
            latent = policy.mlp_extractor.forward_actor(policy.extract_features(torch.as_tensor(observation[None])))
            logits = policy.action_net(latent)[0].numpy()
        return int(np.flatnonzero(mask)[np.argmax(logits[mask == 1])])

    return act


def fit(policy: torch.nn.Module, data: Demonstrations, *, epochs: int, batch_size: int, learning_rate: float,
        value_weight: float, seed: int, label_smoothing: float = 0.0) -> dict[str, float]:
    """Fit an SB3 ``MaskableActorCriticPolicy`` to the demonstrations; the final epoch's losses and accuracy.

    The policy's target is the teacher's choice, with ``label_smoothing`` of it spread evenly over the
    legal actions (never over illegal ones: their logits are masked)."""
    import torch

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
            policy_loss = smoothed_cross_entropy(logits, actions[batch], ~illegal[batch], label_smoothing)
            value_loss = torch.nn.functional.mse_loss(values, returns[batch])
            optimizer.zero_grad()
            (policy_loss + value_weight * value_loss).backward()
            optimizer.step()
            agree = (logits.argmax(dim=1) == actions[batch]).float().sum()
            totals += [policy_loss.item() * len(batch), value_loss.item() * len(batch), agree.item()]
        stats = dict(zip(("policy_loss", "value_loss", "accuracy"), (totals / len(data)).tolist(), strict=True))
    policy.set_training_mode(False)
    return stats


def smoothed_cross_entropy(logits: torch.Tensor, actions: torch.Tensor, legal: torch.Tensor,
                           smoothing: float) -> torch.Tensor:
    """Mean cross-entropy of masked ``logits`` against ``1 - smoothing`` on ``actions`` plus ``smoothing``
    spread evenly over each row's ``legal`` actions."""
    import torch

    chosen = torch.nn.functional.cross_entropy(logits, actions)
    if smoothing == 0:
        return chosen
    log_probabilities = torch.log_softmax(logits, dim=1).masked_fill(~legal, 0.0)
    spread = -(log_probabilities.sum(dim=1) / legal.sum(dim=1)).mean()
    return (1 - smoothing) * chosen + smoothing * spread


__all__ = ["Demonstrations", "Student", "collect", "fit", "greedy_student", "smoothed_cross_entropy"]
