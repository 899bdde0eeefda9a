"""RLlib multi-agent PPO (one shared action-masked module, remote env runners) for a few iterations on every
game, on a local Ray started by the test on 127.0.0.1, through train/rllib_example.py."""

from __future__ import annotations

import numpy as np
import pytest
import ray

from tests_interop.helpers import CASES, IDS
from train.rllib_example import SHARED, build_algorithm, evaluate_against_random, greedy_action


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.parametrize(("case", "name", "options"), CASES, ids=IDS)
def test_ppo_trains_a_shared_masked_policy_with_remote_env_runners(local_ray, case, name, options):
    algo = build_algorithm(name, options, env_runners=2, batch=400, minibatch=100, epochs=1, hidden=(32,))
    try:
        for _ in range(2):
            result = algo.train()
        # the env runners' lifetime count reaches the driver with a lag under load: at least one full batch
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 400
        assert SHARED in result["learners"]
        module = algo.get_module(SHARED)
        import card_envs

        env = card_envs.make(name, **options)
        env.reset(seed=0)
        observation = env.observe(env.agent_selection)
        assert observation["action_mask"][greedy_action(module, observation)] == 1  # masking works
        assert 0.0 <= evaluate_against_random(module, name, options, games=2) <= 1.0
    finally:
        algo.stop()
    assert np.isfinite(result["learners"][SHARED]["policy_loss"])
