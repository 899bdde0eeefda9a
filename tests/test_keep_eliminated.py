"""Battlecards' ``keep_eliminated=True`` env option: a knocked-out player stays in ``env.agents`` until the game
ends (spec section 9: "eliminated ones ... stay in the agent list without decisions until the game ends"),
for libraries that assume a fixed agent list (Tianshou, TorchRL). Default: PettingZoo's dead-agent convention."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

from card_envs import battlecards_v0, revolutionary_war_v0
from card_envs.core.errors import ConfigError

# small hands and piles make knock-outs early and frequent
QUICK = {"hand_size": 2, "war_facedown_count": 1}


def _play(env, seed: int):
    """Random legal play to the end; per step: (agent, agents, rewards) seen."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    log = []
    for agent in env.agent_iter(100_000):
        observation, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            action = None
        else:
            legal = np.flatnonzero(observation["action_mask"])
            action = int(legal[rng.integers(len(legal))])
        log.append((agent, list(env.agents), dict(env.terminations), reward, action))
        env.step(action)
    return log


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_eliminated_players_stay_until_the_end(players):  # R17, spec section 9
    knocked_out_games = 0
    for seed in range(12):
        kept = battlecards_v0.env(num_players=players, keep_eliminated=True, **QUICK)
        log = _play(kept, seed)
        state = kept.unwrapped.state_
        everyone = [f"player_{p}" for p in range(players)]
        out = [f"player_{p}" for p in range(players) if state.is_out(p)]
        knocked_out_games += bool(set(out) - {f"player_{p}" for p in state.winners()})
        first_none = next(i for i, entry in enumerate(log) if entry[4] is None)
        for _agent, agents, terminations, _, action in log[:first_none]:
            assert agents == everyone and not any(terminations.values())  # nobody leaves before the end
            assert action is not None
        final = log[first_none:]
        assert sorted(agent for agent, *_ in final) == everyone  # then each steps None once
        assert all(action is None for *_, action in final)
        # the same deal and actions without the option: the same rewards, paid in the same total
        plain = battlecards_v0.env(num_players=players, **QUICK)
        plain_log = _play(plain, seed)
        assert [a for *_, a in plain_log if a is not None] == [a for *_, a in log if a is not None]
        assert plain.unwrapped.state_.returns() == state.returns()
    assert knocked_out_games >= 3  # the option was exercised: losers knocked out before the end


@pytest.mark.parametrize("players", [3, 6])
def test_final_last_carries_every_reward_earned(players):
    """The None step's reward is all the agent earned since its last move, elimination payment included:
    the rewards seen through last() add up to the engine's returns."""
    for seed in range(8):
        env = battlecards_v0.env(num_players=players, keep_eliminated=True, **QUICK)
        seen = dict.fromkeys(env.possible_agents, 0.0)
        for agent, _, _, reward, _ in _play(env, seed):
            seen[agent] += reward
        returns = env.unwrapped.state_.returns()
        assert [round(seen[f"player_{p}"], 9) for p in range(players)] == [round(r, 9) for r in returns]
        assert abs(sum(returns)) < 1e-9


def test_eliminated_player_never_selected_and_sees_a_zero_mask():
    env = battlecards_v0.raw_env(num_players=4, keep_eliminated=True, **QUICK)
    rng = np.random.default_rng(3)
    for seed in range(10):
        env.reset(seed=seed)
        while not env.unwrapped.state_.is_over:
            state = env.state_
            for p in range(4):
                if state.is_out(p):
                    assert env.agent_selection != f"player_{p}"
                    assert not env.observe(f"player_{p}")["action_mask"].any()
                    assert f"player_{p}" in env.agents
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))


def test_default_still_drops_eliminated_players():
    """Default unchanged: PettingZoo's dead-agent convention (the player leaves before the game ends)."""
    left_early = 0
    for seed in range(12):
        env = battlecards_v0.env(num_players=4, **QUICK)
        for _agent, agents, _, _, action in _play(env, seed):
            if action is not None and len(agents) < 4:
                left_early += 1
                break
    assert left_early > 0


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_api_test_passes_with_keep_eliminated(players):
    """PettingZoo's api_test, warnings as errors except the two it raises for any Dict observation."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        api_test(battlecards_v0.env(num_players=players, keep_eliminated=True, **QUICK), num_cycles=400)


def test_keep_eliminated_is_checked():
    with pytest.raises(ConfigError, match="keep_eliminated must be True or False"):
        battlecards_v0.env(keep_eliminated="yes")
    with pytest.raises(ConfigError, match="has no eliminations"):
        revolutionary_war_v0.env(keep_eliminated=True)
