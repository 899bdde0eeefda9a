"""``vec_env: async`` (train/async_rollouts.py): rollouts collected in a worker process, one update ahead."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from card_envs.core.errors import StateError
from train.async_rollouts import AsyncMaskablePPO, RolloutWorkerEnv, sample_masked
from train.checkpoint import Snapshot
from train.config import config_from_dict
from train.pool import snapshot_of
from train.trainer import make_env, make_vec_env, new_model

GAME = "revolutionary_war_v0"


def small_config(**extra):
    return config_from_dict({"game": GAME, "n_envs": 2, "seed": 5, "vec_env": "async",
                             "pool": {"weights": {"random": 1.0, "self": 1.0}},
                             "ppo": {"net_arch": [16], "n_steps": 32, "batch_size": 64, "n_epochs": 2,
                                     "learning_rate": 1e-3}, **extra})


@pytest.fixture
def model():
    config = small_config()
    venv = make_vec_env(config, [])
    model = new_model(config, venv, None)
    yield model
    venv.close()


def policy_weights(policy) -> list[np.ndarray]:
    return [p.detach().cpu().numpy().copy() for p in policy.parameters()]


def test_the_async_config_builds_a_worker_env_and_the_async_model(model):
    assert isinstance(model.env, RolloutWorkerEnv) and isinstance(model, AsyncMaskablePPO)
    assert model.env.num_envs == 2 and model.env.process.is_alive()


def test_training_reaches_the_step_count_and_sees_wins_and_losses(model):
    model.learn(1024)
    assert model.num_timesteps == 1024
    returns = {info["r"] for info in model.ep_info_buffer}
    assert returns == {1.0, -1.0}  # the learner is paid its losses too


def test_posted_snapshots_reach_every_env_of_the_worker(model):
    net = snapshot_of(model.policy, "0", "tanh")
    model.env.post("add_snapshot", net)
    model.env.post("add_snapshot", Snapshot("1", net.net))
    pools = model.env.get_attr("opponents")  # answered after the posts, which the worker handles in order
    assert [[s.snapshot.name for s in pool.snapshots] for pool in pools] == [["0", "1"], ["0", "1"]]


def test_the_rollout_buffer_holds_legal_actions_with_the_current_policys_values_and_log_probs(model):
    _, callback = model._setup_learn(10_000, None)
    assert model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
    model.train()  # the second rollout was collected before this update, and is trained on after it
    assert model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
    buffer = model.rollout_buffer
    observations = torch.as_tensor(buffer.observations.reshape(64, -1))
    actions = buffer.actions.reshape(64).astype(np.int64)
    masks = buffer.action_masks.reshape(64, -1)
    assert masks[np.arange(64), actions].all()  # every action was legal where it was taken
    with torch.no_grad():
        values, log_probs, _ = model.policy.evaluate_actions(observations, torch.as_tensor(actions),
                                                             action_masks=masks)
    np.testing.assert_allclose(buffer.log_probs.reshape(64), log_probs.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(buffer.values.reshape(64), values.numpy().reshape(64), rtol=1e-5, atol=1e-6)
    assert model.num_timesteps == 128


def test_each_update_trains_on_a_rollout_of_the_policy_one_update_older(model, monkeypatch):
    sent, updated = [], []
    request, train = model.env.request, model.train

    def spy_request(net, n_steps):
        sent.append([w.copy() for w in net.weights])
        request(net, n_steps)

    def spy_train():
        train()
        updated.append([w.detach().numpy().copy() for w in model.policy.action_net.parameters()][0].T)

    monkeypatch.setattr(model.env, "request", spy_request)
    monkeypatch.setattr(model, "train", spy_train)
    initial = model.policy.action_net.weight.detach().numpy().T.copy()
    model.learn(4 * 64)
    assert len(updated) == 4 and len(sent) == 5  # two requests up front, then one per later update
    np.testing.assert_array_equal(sent[0][-1], initial)
    np.testing.assert_array_equal(sent[1][-1], initial)  # rollout 2 is collected while update 1 runs
    for k in range(2, 5):  # rollout k + 1 is collected with the weights after update k - 1
        np.testing.assert_array_equal(sent[k][-1], updated[k - 2])
        assert not np.array_equal(sent[k][-1], sent[k - 1][-1])


def test_an_async_run_is_deterministic():
    runs = []
    for _ in range(2):
        config = small_config()
        venv = make_vec_env(config, [])
        try:
            model = new_model(config, venv, None)
            model.learn(256)
            runs.append(policy_weights(model.policy))
        finally:
            venv.close()
    for first, second in zip(*runs, strict=True):
        np.testing.assert_array_equal(first, second)


def test_stepping_the_worker_env_one_step_at_a_time_is_a_clear_error(model):
    with pytest.raises(StateError, match="collects whole rollouts"):
        model.env.step(np.zeros(2, np.int64))


def test_close_ends_the_worker():
    venv = RolloutWorkerEnv([make_env(small_config(), i, []) for i in range(2)])
    process = venv.process
    venv.close()
    assert not process.is_alive()
    venv.close()  # a second close does nothing


def test_masked_sampling_draws_legal_actions_in_proportion_to_their_softmax():
    rng = np.random.default_rng(0)
    logits = np.tile(np.array([[0.0, np.log(3.0), 5.0, 1.0]]), (20_000, 1))
    masks = np.tile(np.array([[True, True, False, False]]), (20_000, 1))
    actions = sample_masked(logits, masks, rng)
    assert set(np.unique(actions)) == {0, 1}
    assert abs(np.mean(actions == 1) - 0.75) < 0.015  # softmax over the legal pair: 1 : 3
    with pytest.raises(StateError, match="no legal action"):
        sample_masked(logits[:2], np.zeros((2, 4), bool), rng)


def test_close_with_a_big_rollout_under_way_does_not_wait_on_the_pipe():
    # a rollout larger than the pipe's buffer: the worker can only finish sending it if close() reads it
    import time

    config = config_from_dict({"game": "revolution_v0", "n_envs": 4, "vec_env": "async",
                               "pool": {"weights": {"random": 1.0}},
                               "ppo": {"net_arch": [8], "n_steps": 64, "batch_size": 256}})
    venv = make_vec_env(config, [])
    model = new_model(config, venv, None)
    model.learn(256)  # leaves the next rollout under way
    assert venv.in_flight == 1
    started = time.perf_counter()
    venv.close()
    assert not venv.process.is_alive() and time.perf_counter() - started < 20
