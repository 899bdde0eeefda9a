"""The opponent pool (train/pool.py) and the training environments under SB3's vector envs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks
from scipy.stats import binomtest
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from agents.players.base import RandomAgent
from card_envs.core.errors import ConfigError
from train.checkpoint import PolicyNet, Snapshot
from train.config import config_from_dict
from train.pool import SELF, OpponentPool, SnapshotPlayer
from train.trainer import make_env, new_model

GAME = "revolutionary_war_v0"


def constant_net(logits):
    """A one-layer net whose logits are ``logits`` whatever the observation (157 inputs)."""
    logits = np.asarray(logits, np.float32)
    return PolicyNet([np.zeros((157, logits.size), np.float32)], [logits], "tanh")


def test_entries_are_drawn_with_the_config_weights():
    pool = OpponentPool(GAME, {"random": 3.0, "heuristic:cheapest": 1.0})
    rng = np.random.default_rng(0)
    draws = Counter(pool.sample(rng, 1).name for _ in range(4000))
    assert set(draws) == {"random", "heuristic:cheapest"}
    assert binomtest(draws["random"], 4000, 0.75).pvalue > 1e-3


def test_self_is_drawn_only_once_a_snapshot_exists():
    pool = OpponentPool(GAME, {"random": 1.0, SELF: 1.0})
    rng = np.random.default_rng(1)
    assert {pool.sample(rng, 0).name for _ in range(200)} == {"random"}
    pool.add_snapshot(Snapshot("100", constant_net(np.zeros(14))))
    names = Counter(pool.sample(rng, 0).name for _ in range(2000))
    assert set(names) == {"random", "self:100"}
    assert binomtest(names["self:100"], 2000, 0.5).pvalue > 1e-3


def test_a_pool_of_only_self_without_snapshots_is_an_error():
    pool = OpponentPool(GAME, {SELF: 1.0})
    with pytest.raises(ConfigError, match="no snapshot"):
        pool.sample(np.random.default_rng(0), 0)


def test_only_the_latest_snapshots_are_kept_and_drawn_uniformly():
    pool = OpponentPool(GAME, {SELF: 1.0}, max_snapshots=3)
    for step in range(5):
        pool.add_snapshot(Snapshot(str(step), constant_net(np.zeros(14))))
    assert [s.name for s in pool.snapshot_list()] == ["2", "3", "4"]
    rng = np.random.default_rng(2)
    counts = Counter(pool.sample(rng, 1).name for _ in range(3000))
    assert set(counts) == {"self:2", "self:3", "self:4"}
    assert min(counts.values()) > 850  # 1000 each expected


def test_rule_based_players_get_one_instance_per_seat():
    pool = OpponentPool("revolution_v0", {"heuristic:cheap": 1.0})
    rng = np.random.default_rng(0)
    assert pool.sample(rng, 1) is pool.sample(rng, 1)
    assert pool.sample(rng, 1) is not pool.sample(rng, 2)


def test_unknown_and_bad_entries_are_clear_errors():
    with pytest.raises(ConfigError, match="heuristic:nobody"):
        OpponentPool(GAME, {"heuristic:nobody": 1.0})
    with pytest.raises(ConfigError, match="non-negative with a positive total"):
        OpponentPool(GAME, {"random": 0.0})


def test_a_snapshot_player_samples_legal_actions_from_its_softmax():
    # logits favour action 2 (e^2 : 1 over action 5); action 0 has the highest logit but is illegal
    player = SnapshotPlayer(Snapshot("s", constant_net([9.0, 0, 2.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])), seed=0)
    mask = np.zeros(14, np.int8)
    mask[[2, 5]] = 1
    picks = Counter(player(np.zeros(157, np.float32), mask) for _ in range(4000))
    assert set(picks) == {2, 5}
    assert binomtest(picks[2], 4000, np.e**2 / (np.e**2 + 1)).pvalue > 1e-3


def small_config(**extra):
    return config_from_dict({"game": GAME, "n_envs": 2, "pool": {"weights": {"random": 1.0, SELF: 1.0}},
                             "ppo": {"net_arch": [16], "n_steps": 32, "batch_size": 64}, **extra})


@pytest.mark.parametrize("vec_class", [DummyVecEnv, SubprocVecEnv])
def test_training_envs_work_in_sb3_vector_envs(vec_class, tmp_path):
    config = small_config()
    venv = vec_class([make_env(config, i, []) for i in range(2)])
    try:
        venv.seed(0)
        venv.reset()
        masks = get_action_masks(venv)
        assert masks.shape == (2, 14) and masks.dtype == np.int8 and masks.any(axis=1).all()
        venv.env_method("add_snapshot", Snapshot("0", constant_net(np.zeros(14))))
        assert [len(p.snapshots) for p in venv.get_attr("opponents")] == [1, 1]
        model = new_model(config, venv, None)
        model.learn(192)
        assert model.num_timesteps == 192
        finished = [info for info in model.ep_info_buffer]
        assert finished, "no episode finished in 192 decisions"
    finally:
        venv.close()


def test_learner_episode_returns_include_losses_in_training(tmp_path):
    # the SB3 Monitor sees every episode's return: wins and losses against the random opponent
    config = small_config(pool={"weights": {"random": 1.0}})
    venv = DummyVecEnv([make_env(config, i, []) for i in range(2)])
    model = new_model(config, venv, None)
    model.learn(1024)
    returns = {info["r"] for info in model.ep_info_buffer}
    assert returns == {1.0, -1.0}


def test_agents_passed_directly_still_work_as_a_pool_stand_in():
    from card_envs.core.single_agent import SingleAgentEnv

    env = SingleAgentEnv(GAME, opponents=[RandomAgent(0), RandomAgent(1)])
    env.reset(seed=0)
    assert env.lineup[1 - env.seat].name == "random"


def test_a_duplicate_baseline_config_pays_the_learner_its_return_minus_the_baselines():
    config = small_config(pool={"weights": {"random": 1.0}}, duplicate_baseline="heuristic:pot")
    env = make_env(config, 0, [])()
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
        total += reward
        done = terminated or truncated
    raw = env.unwrapped.state.returns()[env.unwrapped.seat]
    assert info["baseline_return"] in (-1.0, 0.0, 1.0)  # the pot player's result on the deal (win_loss)
    assert total == pytest.approx(raw - info["baseline_return"])


def test_a_draw_reward_config_reaches_every_training_env():
    config = small_config(draw_reward=-1.0)
    assert [make_env(config, i, [])().unwrapped.draw_reward for i in range(2)] == [-1.0, -1.0]
