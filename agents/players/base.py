"""The interface every player shares: rule-based, random, search and trained agents.

An agent is asked for one action at a time through :meth:`Agent.act`, given a
:class:`Decision`: the game, the acting seat, that seat's *view* (exactly what it may know;
see ``card_envs.core.engine``), the legal actions, and -- computed on first use -- the
observation vector and mask that a learned policy reads. Agents never see the state.
``Decision`` is defined in ``card_envs.core.decision`` (the environments build it too) and
re-exported here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from card_envs.core.decision import Decision
from card_envs.core.engine import Game


def advised_observation(decision: Decision, advisor: Agent, observation: np.ndarray | None = None) -> np.ndarray:
    """The decision's observation (or ``observation``) followed by the *advice*: a one-hot
    (``game.num_actions`` entries) of the action ``advisor`` chooses there.

    An advisor is any agent, typically the game's strongest rule-based player. Reading its choice
    is residual policy learning (Silver et al. 2018; Johannink et al. 2019): a policy that starts
    by copying the advice plays exactly as the advisor does, and training only has to learn where
    to depart from it. The advisor reads the same view, so the advice reveals nothing hidden.
    """
    advice = np.zeros(decision.game.num_actions, np.float32)
    advice[advisor.act(decision)] = 1.0
    return np.concatenate([decision.observation if observation is None else observation, advice])


class Agent(ABC):
    """A player. Construct with a seed; ``act`` must return one of ``decision.legal_actions``."""

    #: short name used in tables, e.g. ``"random"`` or ``"heuristic:cheapest"``
    name: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int | None) -> None:
        """Fresh randomness, exactly as a new agent built with ``seed``, so one instance can serve many
        games reproducibly (the evaluation harness does this). Override if the agent keeps more state."""
        self.rng = np.random.default_rng(seed)

    def reset(self, game: Game, player: int) -> None:  # noqa: B027 - an optional hook
        """Called at the start of every episode (override if the agent keeps memory)."""

    @abstractmethod
    def act(self, decision: Decision) -> int:
        """Choose a legal action."""

    def __repr__(self) -> str:
        return self.name


class RandomAgent(Agent):
    """Uniformly random legal action (spec section 11, baseline 1, for every game)."""

    name = "random"

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        return legal[int(self.rng.integers(len(legal)))]
