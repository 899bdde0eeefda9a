"""An env instance (mid-game) sent to a Ray task continues exactly as the original, on a local Ray started by
the test on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import pytest
import ray

import card_envs
from card_envs.core.single_agent import SingleAgentEnv
from tests_interop.helpers import CASES, IDS


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    yield
    ray.shutdown()


def continue_aec(env, seed: int, steps: int) -> list:
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        if not env.agents:
            break
        agent = env.agent_selection
        observation, reward, termination, truncation, _ = env.last()
        trace.append((agent, observation["observation"].tolist(), reward))
        legal = np.flatnonzero(observation["action_mask"])
        env.step(None if termination or truncation else int(rng.choice(legal)))
    return trace


@ray.remote
def continue_remotely(env, seed: int, steps: int) -> list:
    return continue_aec(env, seed, steps)


@pytest.mark.parametrize(("case", "name", "options"), CASES, ids=IDS)
def test_env_instance_sent_to_a_ray_task_continues_identically(local_ray, case, name, options):
    env = card_envs.make(name, **options)
    env.reset(seed=11)
    continue_aec(env, 0, 25)  # mid-game
    remote = ray.get(continue_remotely.remote(env, 5, 200))
    assert remote == continue_aec(env, 5, 200)


@ray.remote
def play_single_agent(env: SingleAgentEnv) -> list:
    trace = []
    for _ in range(50):
        mask = env.action_masks()
        observation, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
        trace.append((observation.tolist(), reward))
        if terminated or truncated:
            break
    return trace


def test_single_agent_env_sent_to_a_ray_task(local_ray):
    env = SingleAgentEnv("revolutionary_war_v0")
    env.reset(seed=2)
    remote = ray.get(play_single_agent.remote(env))
    assert remote == ray.get(play_single_agent.remote(env)) and len(remote) > 3
