"""Helpers shared by the test modules (not a test module itself)."""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np

import card_envs
from card_envs.core.engine import Game, GameState


def game_cases() -> list[tuple[str, int, dict[str, Any]]]:
    """(env name, config index, config) for every registered game and every variant config."""
    cases = []
    for name in card_envs.ENV_NAMES:
        game_class = card_envs.make_game(name).__class__
        for index, config in enumerate(game_class.variant_configs()):
            cases.append((name, index, config))
    return cases


def case_id(case: tuple[str, int, dict[str, Any]]) -> str:
    return f"{case[0]}-cfg{case[1]}"


def env_module(name: str) -> Any:
    return importlib.import_module(f"card_envs.{name}")


def composition(state: GameState) -> Counter:
    """The multiset of all cards at the deal (conservation reference)."""
    return Counter(card for zone in state.card_locations().values() for card in zone)


def random_playout(state: GameState, rng: np.random.Generator, limit: int = 200_000) -> Iterator[GameState]:
    """Yield the state before each decision while playing uniformly random legal actions."""
    for _ in range(limit):
        if state.is_over:
            return
        yield state
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    raise AssertionError(f"episode did not end within {limit} decisions")


def thinned(positions: Iterator[GameState], dense: int = 200, every: int = 10) -> Iterator[GameState]:
    """Every one of the first ``dense`` positions, then every ``every``-th: the whole game is still played and its
    late positions checked, without a check per decision of Battlecards' long games (thousands of decisions)."""
    for index, position in enumerate(positions):
        if index < dense or index % every == 0:
            yield position


def new_state(game: Game, seed: int) -> GameState:
    return game.new_state(np.random.default_rng(seed))
