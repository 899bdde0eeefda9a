"""A trained model as a player: ``make_agent(game, "checkpoint:<path>", seed)``.

Loads a checkpoint written by ``card-envs train`` (format and reader: ``checkpoint_file.py``) and plays its
policy network on the observation of its own seat's view, masked to the legal actions. It acts
greedily (the most probable legal action) or samples from the masked softmax, as the training
config's ``eval.deterministic`` says. A policy trained with an ``advisor`` gets its advice here
too: the player builds that agent and appends its choice to every observation. Needs only numpy:
torch is not imported.

A checkpoint of another game, of an observation or action layout that differs from this
card_envs version's, a corrupt or a missing file is a :class:`~agents.players.checkpoint_file.CheckpointError`
naming the file and what is wrong. Loaded files are cached (by path, size and modification time),
so building one agent per game, as the match runner does, reads the file once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from agents.players.base import Agent, Decision, advised_observation
from agents.players.checkpoint_file import (
    Checkpoint,
    CheckpointError,
    advisor_of,
    check_game,
    masked_choice,
    read_checkpoint,
)
from card_envs.core.engine import Game
from card_envs.core.errors import CardEnvsError

PREFIX = "checkpoint:"

#: builds an agent from its spec, ``make_agent(game, spec, seed)``: how a policy trained with an ``advisor`` gets
#: that agent (the registry, :func:`agents.players.registry.make_agent`, hands itself in; it stands above this module)
AgentMaker = Callable[[str, str, "int | None"], Agent]


class CheckpointAgent(Agent):
    """The policy of a checkpoint as an :class:`~agents.players.base.Agent`.

    ``path`` names a checkpoint file; a :class:`~agents.players.checkpoint_file.Checkpoint` already in memory
    (a ``zoo:`` entry) is passed as ``checkpoint``, with ``path`` and ``name`` saying where it came from.
    ``make_agent`` builds the advisor of a policy trained with one (:data:`AgentMaker`; needed only then).
    """

    def __init__(self, path: str, game: str, seed: int | None = None, *, deterministic: bool | None = None,
                 checkpoint: Checkpoint | None = None, name: str | None = None,
                 make_agent: AgentMaker | None = None) -> None:
        super().__init__(seed)
        self.path = path
        self.checkpoint = load(path) if checkpoint is None else checkpoint
        check_game(self.checkpoint, game, source=f"checkpoint {path!r}")
        self.game_name = game
        self.name = name or f"{PREFIX}{path}"
        recorded = bool(self.checkpoint.meta["policy"].get("deterministic", True))
        self.deterministic = recorded if deterministic is None else deterministic
        self.net = self.checkpoint.policy
        self._table: Game | None = None
        #: the game that encodes this model's observation of the table's views when the model was trained under
        #: other observation options than the table's (``Game.encoder_for``), else None (the table's observation)
        self.encoder: Game | None = None
        spec = advisor_of(self.checkpoint)
        #: the agent whose advice the policy reads (config ``advisor``), or None
        self.advisor: Agent | None = None
        if spec is not None:
            if make_agent is None:
                raise CheckpointError(f"checkpoint {path!r}: its policy reads the advice of {spec!r}; pass "
                                      "make_agent=agents.players.registry.make_agent to build it")
            try:
                self.advisor = make_agent(game, spec, seed)
            except CardEnvsError as error:
                raise CheckpointError(f"checkpoint {path!r}: its policy reads the advice of {spec!r}, "
                                      f"which cannot be built: {error}") from None

    def reseed(self, seed: int | None) -> None:
        super().reseed(seed)
        if self.advisor is not None:
            self.advisor.reseed(seed)

    def reset(self, game: Game, player: int) -> None:
        if game is not self._table:
            self._table, self.encoder = game, self._encoder_for(game)
        encoding = self.encoder or game
        advice = game.num_actions if self.advisor is not None else 0
        if game.name != self.game_name or encoding.observation_size + advice != self.net.observation_size \
                or game.num_actions != self.net.num_actions:
            raise CheckpointError(f"checkpoint {self.path!r} plays {self.game_name} with "
                                  f"{self.net.observation_size} inputs and {self.net.num_actions} actions; "
                                  f"asked to play {game.name} with {encoding.observation_size + advice} and "
                                  f"{game.num_actions}")
        if self.advisor is not None:
            self.advisor.reset(game, player)

    def _encoder_for(self, game: Game) -> Game | None:
        if game.name != self.game_name:
            return None  # reset names the mismatch
        try:
            return game.encoder_for(self.checkpoint.meta["game"].get("env_options", {}))
        except CardEnvsError as error:
            raise CheckpointError(f"checkpoint {self.path!r} cannot play at this {game.name} table: {error}") from None

    def observation(self, decision: Decision) -> np.ndarray:
        """What the policy reads: its observation of the decision's view (the table's, or its own encoding when
        it was trained under other observation options), then the advisor's advice if it has one."""
        observation = decision.observation if self.encoder is None else self.encoder.encode(decision.view)
        if self.advisor is None:
            return observation
        return advised_observation(decision, self.advisor, observation)

    def act(self, decision: Decision) -> int:
        logits = self.net.logits(self.observation(decision))
        return masked_choice(logits, decision.mask, None if self.deterministic else self.rng)

    def action_probabilities(self, decision: Decision) -> np.ndarray:
        """The policy's masked softmax over every action (zeros for illegal ones)."""
        logits = self.net.logits(self.observation(decision)).astype(np.float64)
        mask = decision.mask.astype(bool)
        probabilities = np.zeros_like(logits)
        scores = np.exp(logits[mask] - logits[mask].max())
        probabilities[mask] = scores / scores.sum()
        return probabilities


def load(path: str) -> Checkpoint:
    """Read (cached) the checkpoint at ``path``."""
    try:
        status = os.stat(path)
    except OSError:
        raise CheckpointError(f"checkpoint {path!r} does not exist") from None
    return _load(os.path.abspath(path), status.st_size, status.st_mtime_ns)


@lru_cache(maxsize=16)
def _load(path: str, size: int, mtime_ns: int) -> Checkpoint:
    return read_checkpoint(path)


def make_checkpoint_agent(game: str, spec: str, seed: int | None = None, *,
                          make_agent: AgentMaker | None = None) -> CheckpointAgent:
    """``checkpoint:<path>`` -> the agent (used by ``agents.players.registry.make_agent``, which passes itself as
    ``make_agent`` for the policy's advisor)."""
    path = spec[len(PREFIX):]
    if not path:
        raise CheckpointError(f"agent spec {spec!r} names no file; write checkpoint:<path>")
    return CheckpointAgent(path, game, seed, make_agent=make_agent)


__all__ = ["PREFIX", "AgentMaker", "CheckpointAgent", "load", "make_checkpoint_agent"]
