"""Countdown: a tiny scripted game for testing game-generic code (not a registered environment).

``count`` tokens; seats move in turn (seat 0 first), each move ("tick" or "tock", both legal)
takes one token. The seat that takes the last token wins: +1, every other seat -1/(players-1).
Each move also pays ``toll`` from the mover to the next seat (zero-sum), so every seat earns a
reward during another seat's move -- seat 1 even before its first decision. With ``count`` and
``players`` the winner is fixed in advance: seat ``(count - 1) % players``; every other seat always
loses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np

from card_envs.core.config import GameConfig, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState


@dataclass(frozen=True)
class CountdownConfig(GameConfig):
    players: int = 2
    count: int = 5
    toll: float = 0.0

    def validate(self) -> None:
        check_range(self, "players", 2, 6)
        check_range(self, "count", 1)


class CountdownView(NamedTuple):
    player: int
    tokens: int
    current_player: int


def _encode(view: CountdownView) -> np.ndarray:
    return np.array([view.tokens, float(view.current_player == view.player)], np.float32)


def _bounds(config: CountdownConfig) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(2, np.float32), np.array([config.count, 1], np.float32)


_ENCODING = SimpleNamespace(OBSERVATION_SIZE=2, encode=_encode, LAYOUT=((0, 1, "tokens"), (1, 2, "my turn")),
                            observation_bounds=_bounds)


class CountdownState(GameState):
    fields = ("tokens", "current_player", "terminated", "truncated", "rewards", "cumulative", "history")

    def legal_actions(self) -> list[int]:
        return [] if self.terminated else [0, 1]

    def _apply(self, action: int) -> None:
        players = self.game.num_players
        mover = self.current_player
        self.rewards[mover] -= self.game.config.toll
        self.rewards[(mover + 1) % players] += self.game.config.toll
        self.tokens -= 1
        if self.tokens == 0:
            for seat in range(players):
                self.rewards[seat] += 1.0 if seat == mover else -1.0 / (players - 1)
            self.terminated = True
            self.current_player = NO_PLAYER
        else:
            self.current_player = (mover + 1) % players

    def view(self, player: int) -> CountdownView:
        return CountdownView(player, self.tokens, self.current_player)

    def render(self) -> str:
        return f"{self.tokens} tokens, seat {self.current_player} to move"

    def card_locations(self) -> dict[str, list[int]]:
        return {}

    def sample_hidden(self, player: int, rng: np.random.Generator) -> GameState:
        return self.clone()


class Countdown(Game):
    name = "countdown_v0"
    config_class = CountdownConfig
    state_class = CountdownState
    num_actions = 2
    action_names = ("tick", "tock")

    @property
    def num_players(self) -> int:
        return self.config.players

    @classmethod
    def _encoding_module(cls) -> Any:
        return _ENCODING

    def _new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None = None) -> CountdownState:
        state = CountdownState.__new__(CountdownState)
        state.game = self
        state.rng = rng
        state.tokens = self.config.count
        state.current_player = 0
        state.terminated = state.truncated = False
        state.rewards = [0.0] * self.num_players
        state.cumulative = [0.0] * self.num_players
        state.history = []
        return state
