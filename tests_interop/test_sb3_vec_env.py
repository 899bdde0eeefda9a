"""Stable-Baselines3 vector envs over the Gymnasium ids, in subprocesses started with spawn (what macOS and
Windows use; each worker imports card_envs afresh and unpickles its env factory), and a short PPO run."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.vec_env import SubprocVecEnv

import card_envs


def make(gym_id: str, **options):
    def build():
        import card_envs  # noqa: F401 - registers the ids in the spawned worker

        return gymnasium.make(gym_id, **options)

    return build


@pytest.mark.parametrize("gym_id", sorted(card_envs.GYM_IDS))
def test_subproc_vec_env_with_spawn_plays_masked_random_actions(gym_id):
    vec = SubprocVecEnv([make(gym_id), make(gym_id)], start_method="spawn")
    try:
        vec.seed(3)
        observations = vec.reset()
        assert observations.shape == (2, *vec.observation_space.shape)
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(400):
            masks = vec.env_method("action_masks")
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
            observations, rewards, dones, infos = vec.step(actions)
            assert vec.observation_space.contains(observations[0].astype(np.float32))
            finished += int(dones.sum())
        assert finished > 0
    finally:
        vec.close()


@pytest.mark.parametrize("gym_id", sorted(card_envs.GYM_IDS))
def test_sb3_check_env_and_a_short_ppo_run(gym_id):
    check_env(gymnasium.make(gym_id))  # illegal_action="lose" (the ids' default): the checker's random actions
    model = PPO("MlpPolicy", gymnasium.make(gym_id), n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
