"""Imitation warm start (train/pretrain.py): demonstrations and behaviour cloning."""

from __future__ import annotations

import numpy as np

from agents.registry import make_agent
from card_envs.core.single_agent import SingleAgentEnv
from train.config import config_from_dict
from train.pretrain import collect, fit
from train.trainer import make_vec_env, new_model

GAME = "revolutionary_war_v0"


def test_demonstrations_hold_the_teachers_legal_choices_and_the_return_that_followed():
    env = SingleAgentEnv(GAME, opponents=[make_agent(GAME, "random", 0)])
    data = collect(env, "heuristic:cheapest", games=20, seed=0)
    assert len(data) > 20 * 15  # about 23 learner decisions a game
    assert all(mask[action] == 1 for mask, action in zip(data.masks, data.actions, strict=True))
    # win_loss rewards come only at the end, so every decision's return-to-go is the game's +-1
    assert set(np.unique(data.returns)) == {-1.0, 1.0}
    assert data.observations.shape == (len(data), 157) and data.observations.dtype == np.float32


def test_cloning_a_deterministic_teacher_reproduces_its_choices_on_new_positions():
    config = config_from_dict({"game": GAME, "n_envs": 1, "ppo": {"net_arch": [64, 64], "n_steps": 64,
                                                                   "batch_size": 64}})
    model = new_model(config, make_vec_env(config, []), None)
    env = SingleAgentEnv(GAME, opponents=[make_agent(GAME, "heuristic:pot", 0)])
    stats = fit(model.policy, collect(env, "heuristic:cheapest", games=300, seed=1), epochs=15, batch_size=128,
                learning_rate=3e-3, value_weight=0.5, seed=0)
    assert stats["accuracy"] > 0.9
    fresh = collect(env, "heuristic:cheapest", games=30, seed=99)
    predicted, _ = model.predict(fresh.observations, action_masks=fresh.masks, deterministic=True)
    assert np.mean(predicted == fresh.actions) > 0.85
