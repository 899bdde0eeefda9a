"""Every observation ``Box`` has finite bounds (the encodings' layout tables), and every observation of
every seat over random play lies within them, for every game and variant config; likewise every return lies
within ``Game.return_bounds()`` (OpenSpiel's min/max utility)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs.core.single_agent import SingleAgentEnv
from tests.helpers import case_id, env_module, game_cases, random_playout

CASES = game_cases()


def _assert_within(observation: np.ndarray, low: np.ndarray, high: np.ndarray, where: str) -> None:
    below, above = np.flatnonzero(observation < low), np.flatnonzero(observation > high)
    assert not below.size and not above.size, \
        f"{where}: entries {below.tolist()} below / {above.tolist()} above their bounds " \
        f"(values {observation[below].tolist()} / {observation[above].tolist()}, high {high[above].tolist()})"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_spaces_have_finite_bounds_of_the_right_shape(case):
    name, _, config = case
    game = card_envs.make_game(name, **config)
    low, high = game.observation_bounds()
    assert low.shape == high.shape == (game.observation_size,)
    assert low.dtype == high.dtype == np.float32
    assert np.isfinite(low).all() and np.isfinite(high).all() and (low < high).all()
    box = env_module(name).env(**config).observation_space("player_0")["observation"]
    np.testing.assert_array_equal(box.low, low)
    np.testing.assert_array_equal(box.high, high)
    assert SingleAgentEnv(name, **config).observation_space == box


@pytest.mark.parametrize("case", CASES, ids=case_id)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_every_observation_over_random_play_lies_within_the_bounds(case, seed):
    name, _, config = case
    game = card_envs.make_game(name, **config)
    low, high = game.observation_bounds()
    state = game.new_state(np.random.default_rng(seed))
    for position in random_playout(state, np.random.default_rng(seed)):
        for seat in range(game.num_players):
            _assert_within(game.encode(position.view(seat)), low, high, f"{name} seat {seat}")
    for seat in range(game.num_players):  # the final observations too
        _assert_within(game.encode(state.view(seat)), low, high, f"{name} seat {seat} at the end")
    least, most = game.return_bounds()
    assert least < 0 < most
    assert all(least - 1e-9 <= r <= most + 1e-9 for r in state.returns()), (state.returns(), (least, most))  # sums


def test_battlecards_set_aside_reaches_its_widest_bound():
    """A stacked deck of any size: D mod N cards are set aside, up to N - 1 (A4), so entry 512 reaches 5/4."""
    game = card_envs.make_game("battlecards_v0", num_players=6)
    low, high = game.observation_bounds()
    deck = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC"]  # 11 = 6 + 5
    observation = game.encode(game.new_state(np.random.default_rng(0), {"deck": deck}).view(0))
    assert observation[512] == pytest.approx(5 / 4) == high[512]
    _assert_within(observation, low, high, "stacked")
