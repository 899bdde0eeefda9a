"""Checkpoints (train/checkpoint.py) and the trained player (agents/players/checkpoint.py)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

import card_envs
from agents.players.base import Decision
from agents.players.checkpoint import CheckpointAgent
from agents.players.registry import make_agent
from agents.tournaments.match import contest
from train.checkpoint import CheckpointError, read_checkpoint, write_checkpoint
from train.config import config_from_dict
from train.pool import policy_net_of, snapshot_of
from train.trainer import RunState, TrainingEnv, make_vec_env, new_model, save_checkpoint

GAME = "revolutionary_war_v0"


def tiny_config(tmp_path, **extra):
    return config_from_dict({"game": GAME, "n_envs": 2, "run_dir": str(tmp_path),
                             "ppo": {"net_arch": [32, 16], "n_steps": 32, "batch_size": 64, "activation": "relu"},
                             **extra})


def train_and_save(config, steps, run, *, snapshot=False):
    """Train a model of ``config`` for ``steps`` decisions and save it as ``run_dir/checkpoint.zip``
    (with one snapshot of itself if ``snapshot``): (model, path)."""
    model = new_model(config, make_vec_env(config, []), None)
    model.learn(steps)
    path = Path(config.run_dir) / "checkpoint.zip"
    snapshots = [snapshot_of(model.policy, str(steps), config.ppo.activation)] if snapshot else []
    save_checkpoint(path, config, model, run, snapshots)
    return model, path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A briefly trained model, saved as a checkpoint: (config, model, path)."""
    config = tiny_config(tmp_path_factory.mktemp("checkpoint"))
    model, path = train_and_save(config, 128, RunState(updates=2, evaluations=[{"num_timesteps": 64}]), snapshot=True)
    return config, model, path


def observations(count: int, seed: int = 0):
    """(observation, mask) pairs from real positions."""
    from agents.players.base import RandomAgent
    from card_envs.core.single_agent import SingleAgentEnv

    env = SingleAgentEnv(GAME, opponents=[RandomAgent(seed)])
    rng = np.random.default_rng(seed)
    observation, _ = env.reset(seed=seed)
    pairs = []
    while len(pairs) < count:
        pairs.append((observation, env.action_masks().copy()))
        observation, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            observation, _ = env.reset()
    return pairs


def test_numpy_policy_matches_the_torch_policy(trained):
    _, model, _ = trained
    net = policy_net_of(model.policy, "relu")
    for observation, mask in observations(40):
        with torch.no_grad():
            distribution = model.policy.get_distribution(torch.as_tensor(observation[None]),
                                                         action_masks=mask[None].astype(bool))
        expected = distribution.distribution.probs[0].numpy()
        logits = net.logits(observation)[mask.astype(bool)]
        ours = np.zeros_like(expected)
        ours[mask.astype(bool)] = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        np.testing.assert_allclose(ours, expected, atol=1e-5)


def test_the_checkpoint_player_acts_as_the_model_predicts(trained):
    _, model, path = trained
    agent = make_agent(GAME, f"checkpoint:{path}", seed=0)
    assert isinstance(agent, CheckpointAgent) and agent.deterministic
    env = TrainingEnv(GAME, opponents=[make_agent(GAME, "random", 1)])
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(60):
        player = env.seat
        decision = Decision(env.game, player, env.state.view(player), env.state.legal_actions())
        predicted, _ = model.predict(decision.observation, action_masks=decision.mask, deterministic=True)
        assert agent.act(decision) == int(predicted)
        _, _, terminated, truncated, _ = env.step(int(rng.choice(decision.legal_actions)))
        if terminated or truncated:
            env.reset()


def test_round_trip_keeps_game_version_config_policy_snapshots_and_model(trained):
    config, model, path = trained
    checkpoint = read_checkpoint(path, with_model=True)
    meta = checkpoint.meta
    assert meta["game"] == {"env_name": GAME, "card_envs_version": card_envs.__version__,
                            "observation_size": 157, "num_actions": 14, "env_options": {}}
    assert meta["config"] == config.to_dict()
    assert meta["num_timesteps"] == model.num_timesteps == 128
    assert meta["n_updates"] == 2 and meta["evaluations"] == [{"num_timesteps": 64}]
    assert meta["policy"] == {"activation": "relu", "net_arch": [32, 16], "deterministic": True,
                              "advisor": None}
    expected = policy_net_of(model.policy, "relu")
    for ours, theirs in zip(checkpoint.policy.weights + checkpoint.policy.biases, expected.weights + expected.biases,
                             strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert [s.name for s in checkpoint.snapshots] == ["128"]
    np.testing.assert_array_equal(checkpoint.snapshots[0].net.weights[0], expected.weights[0])
    restored = MaskablePPO.load(io.BytesIO(checkpoint.model_bytes), env=DummyVecEnv([lambda: TrainingEnv(
        GAME, opponents=[make_agent(GAME, "random")])]), device="cpu")
    assert restored.num_timesteps == 128
    for key, value in model.policy.state_dict().items():
        assert torch.equal(restored.policy.state_dict()[key], value)


def test_the_checkpoint_player_plays_full_matches(trained):
    _, _, path = trained
    result = contest(GAME, f"checkpoint:{path}", "random", 8, seed=0, progress=False)
    assert result.games == 8 and result.wins + result.opponent_wins + result.nobody == 8


def test_a_checkpoint_of_another_game_is_a_clear_error(trained):
    _, _, path = trained
    with pytest.raises(CheckpointError, match="is a model for revolutionary_war_v0, not for bloodlines_v0"):
        make_agent("bloodlines_v0", f"checkpoint:{path}")


def test_a_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        make_agent(GAME, f"checkpoint:{tmp_path / 'nothing.zip'}")
    with pytest.raises(CheckpointError, match="names no file"):
        make_agent(GAME, "checkpoint:")


def rewrite(source, target, change):
    """Copy the checkpoint zip ``source`` to ``target`` with ``change(name, data) -> data | None`` per member."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            data = change(name, old.read(name))
            if data is not None:
                new.writestr(name, data)


def edit_meta(update):
    def change(name, data):
        if name != "meta.json":
            return data
        meta = json.loads(data)
        update(meta)
        return json.dumps(meta)
    return change


@pytest.mark.parametrize("damage, match", [
    (lambda path, good: path.write_bytes(b"not a zip at all" * 10), "corrupt or not a card_envs checkpoint"),
    (lambda path, good: path.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2]), "corrupt"),
    (lambda path, good: path.write_bytes(b""), "corrupt"),
    (lambda path, good: rewrite(good, path, lambda n, d: None if n == "policy.npz" else d), "policy.npz missing"),
    (lambda path, good: rewrite(good, path, lambda n, d: b"{" if n == "meta.json" else d), "corrupt"),
    (lambda path, good: rewrite(good, path, lambda n, d: d[:40] if n == "policy.npz" else d), "corrupt"),
    (lambda path, good: rewrite(good, path, edit_meta(lambda m: m.update(format="other"))),
     "not a card_envs checkpoint"),
    (lambda path, good: rewrite(good, path, edit_meta(lambda m: m.update(format_version=99))), "format version 99"),
    (lambda path, good: rewrite(good, path, edit_meta(lambda m: m["game"].update(observation_size=150))),
     "trained with observation_size 150"),
    (lambda path, good: rewrite(good, path, edit_meta(lambda m: m["policy"].update(activation="gelu"))),
     "unknown activation 'gelu'"),
])
def test_a_corrupt_checkpoint_is_a_clear_error(trained, tmp_path, damage, match):
    _, _, good = trained
    path = tmp_path / "damaged.zip"
    damage(path, good)
    with pytest.raises(CheckpointError, match=match):
        make_agent(GAME, f"checkpoint:{path}")


def test_a_failed_write_leaves_the_previous_checkpoint_and_no_temporary_file(trained, tmp_path, monkeypatch):
    _, _, good = trained
    path = tmp_path / "checkpoint.zip"
    path.write_bytes(good.read_bytes())
    checkpoint = read_checkpoint(path, with_model=True)
    import train.checkpoint as module

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(module, "_npz_bytes", fail)
    with pytest.raises(OSError, match="disk full"):
        write_checkpoint(path, checkpoint)
    assert path.read_bytes() == good.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.zip"]


def test_the_trained_player_imports_no_torch(trained):
    import subprocess
    import sys

    _, _, path = trained
    code = ("import sys; from agents.players.registry import make_agent; from agents.tournaments.match import contest; "
            f"contest({GAME!r}, 'checkpoint:{path}', 'random', 2, progress=False); "
            "sys.exit(any(m.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_init_from_starts_a_new_run_from_a_checkpoints_weights(trained, tmp_path):
    from train.trainer import initialize_from

    config, model, path = trained
    fresh = new_model(tiny_config(tmp_path / "fresh"), make_vec_env(config, []), None)
    assert not torch.equal(fresh.policy.action_net.weight, model.policy.action_net.weight)
    initialize_from(fresh, config, str(path))
    for key, value in model.policy.state_dict().items():
        assert torch.equal(fresh.policy.state_dict()[key], value)
    assert fresh.num_timesteps == 0


def test_init_from_another_network_or_game_is_a_clear_error(trained, tmp_path):
    from train.trainer import initialize_from

    config, _, path = trained
    wider = tiny_config(tmp_path, ppo={"net_arch": [64], "n_steps": 32, "batch_size": 64, "activation": "relu"})
    with pytest.raises(CheckpointError, match=r"another network \(\[32, 16\]\) than ppo.net_arch \[64\]"):
        initialize_from(new_model(wider, make_vec_env(wider, []), None), wider, str(path))
    tanh = tiny_config(tmp_path, ppo={"net_arch": [32, 16], "n_steps": 32, "batch_size": 64})
    with pytest.raises(CheckpointError, match="uses relu, ppo.activation is tanh"):
        initialize_from(new_model(tanh, make_vec_env(tanh, []), None), tanh, str(path))
    other = config_from_dict({"game": "bloodlines_v0", "n_envs": 1, "ppo": {"n_steps": 64, "batch_size": 64}})
    with pytest.raises(CheckpointError, match="is a model for revolutionary_war_v0, not for bloodlines_v0"):
        initialize_from(new_model(other, make_vec_env(other, []), None), other, str(path))
