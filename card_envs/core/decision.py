"""One decision of one seat: what an agent is given to act on (``agents.players.base.Agent.act``).

It lives in the engine layer, below the agents, because the environments build it too: the
single-agent view (:mod:`card_envs.core.single_agent`) asks its opponents, its baseline and its advisor
through it, and ``card_envs`` never imports ``agents``. ``agents.players.base`` re-exports it.

==================  =================================================================================
``game``            the :class:`~card_envs.core.engine.Game`
``player``          the acting seat
``view``            ``state.view(player)``: everything the seat may know (never the state)
``legal_actions``   the legal action ids, increasing
``observation``     ``game.encode(view)``, built on first read
``mask``            int8 mask of ``legal_actions``
``sample_state``    a determinization: a full state consistent with the view (hidden cards redrawn)
``actual_state``    the real position (privileged teachers only)
==================  =================================================================================
"""

from __future__ import annotations

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


__all__ = ["Decision"]
