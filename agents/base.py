"""The interface every player shares: rule-based, random, search and trained agents.

An agent is asked for one action at a time through :meth:`Agent.act`, given a
:class:`Decision`: the game, the acting seat, that seat's *view* (exactly what it may know;
see ``card_envs.core.engine``), the legal actions, and -- computed on first use -- the
observation vector and mask that a learned policy reads. Agents never see the state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from card_envs.core.engine import Game, GameState


class Decision:
    """One decision of one seat. ``observation`` and ``mask`` are built only when read."""

    __slots__ = ("game", "player", "view", "legal_actions", "_observation", "_position")

    def __init__(self, game: Game, player: int, view: Any, legal_actions: Sequence[int],
                 position: GameState | None = None) -> None:
        self.game = game
        self.player = player
        self.view = view
        self.legal_actions = tuple(legal_actions)
        self._observation: np.ndarray | None = None
        self._position = position  #: only its samplers are used (an agent never reads the state)

    @classmethod
    def of(cls, state: GameState) -> Decision:
        """The decision facing ``state.current_player``."""
        player = state.current_player
        return cls(state.game, player, state.view(player), state.legal_actions(), state)

    def sample_state(self, rng: np.random.Generator, *, remember: bool = False) -> GameState:
        """A full state consistent with this player's view, every hidden card redrawn at random
        (a determinization for search). It reveals nothing the view does not: the tests check that
        ``sample_hidden`` keeps the view and redraws what is hidden.

        ``remember=True``: consistent with what the player would remember of the episode instead
        (``GameState.sample_remembered``; the sample is a state of ``game.with_perfect_recall()``).
        """
        position = self._require_position()
        if remember:
            return position.sample_remembered(self.player, rng)
        return position.sample_hidden(self.player, rng)

    def actual_state(self, rng: np.random.Generator, *, remember: bool = False) -> GameState:
        """A copy of the *real* position, hidden cards included -- for a privileged teacher only
        (``ismcts:...,deal=true``, which imitation may learn from but no fair match should field).
        Future chance (the copy's generator) is reseeded from ``rng``, so the copy does not know the
        cards still to be dealt. ``remember=True``: a state of ``game.with_perfect_recall()``, as in
        :meth:`sample_state`."""
        state = self._require_position().clone()
        if remember:
            state.game = state.game.with_perfect_recall()
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        return state

    def _require_position(self) -> GameState:
        if self._position is None:
            raise RuntimeError("this decision was built without its position (use Decision.of(state))")
        return self._position

    @property
    def observation(self) -> np.ndarray:
        """``game.encode(view)``: the vector a learned policy reads."""
        if self._observation is None:
            self._observation = self.game.encode(self.view)
        return self._observation

    @property
    def mask(self) -> np.ndarray:
        mask = np.zeros(self.game.num_actions, np.int8)
        mask[list(self.legal_actions)] = 1
        return mask


def advised_observation(decision: Decision, advisor: Agent) -> np.ndarray:
    """The decision's observation followed by the *advice*: a one-hot (``game.num_actions``
    entries) of the action ``advisor`` chooses there.

    An advisor is any agent, typically the game's strongest rule-based player. Reading its choice
    is residual policy learning (Silver et al. 2018; Johannink et al. 2019): a policy that starts
    by copying the advice plays exactly as the advisor does, and training only has to learn where
    to depart from it. The advisor reads the same view, so the advice reveals nothing hidden.
    """
    advice = np.zeros(decision.game.num_actions, np.float32)
    advice[advisor.act(decision)] = 1.0
    return np.concatenate([decision.observation, advice])


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
