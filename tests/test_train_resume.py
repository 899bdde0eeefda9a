"""Kill and resume (python -m train --resume): a killed run continues from its last checkpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from card_envs.core.errors import ConfigError
from train.checkpoint import CheckpointError, read_checkpoint
from train.config import load_config

ROOT = Path(__file__).resolve().parents[1]
# 2 envs x 32 steps = 64 decisions per rollout; 3,000 rounds up to 47 rollouts = 3,008 decisions
TINY = """\
game: revolutionary_war_v0
seed: 3
total_timesteps: 3000
n_envs: 2
checkpoint_interval: 256
pool: {weights: {random: 1.0, self: 1.0}, snapshot_every: 4, max_snapshots: 3}
ppo: {net_arch: [16], n_steps: 32, batch_size: 64, n_epochs: 1}
eval: {interval: 0, final_games: 4}
"""
EXPECTED_STEPS = 3008
EXPECTED_UPDATES = 47


def write_config(tmp_path: Path, vec_env: str = "dummy") -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY + f"run_dir: {tmp_path / 'run'}\nvec_env: {vec_env}\n")
    return path


def train_command(config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "train", "--config", str(config), "--no-progress", "--no-final-eval", *extra]


#: opt-in (-m slow: two training processes, 22-25 s of the default run); the default run resumes a run in process
#: (test_a_new_run_does_not_overwrite_an_existing_checkpoint) and checks that a failed checkpoint write keeps the
#: previous one (test_train_checkpoint)
@pytest.mark.slow
@pytest.mark.parametrize("vec_env", ["dummy", "async"])
def test_a_killed_run_resumes_from_its_checkpoint_and_reaches_the_same_step_count(tmp_path, vec_env):
    config = write_config(tmp_path, vec_env)
    checkpoint = tmp_path / "run" / "checkpoint.zip"
    process = subprocess.Popen(train_command(config), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    _, stderr = process.communicate()
    assert process.returncode == -signal.SIGKILL, f"the run ended on its own before the kill: {stderr.decode()}"
    killed_at = read_checkpoint(checkpoint).num_timesteps
    assert 256 <= killed_at < EXPECTED_STEPS

    resumed = subprocess.run(train_command(config, "--resume"), cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    final = read_checkpoint(checkpoint)
    assert final.num_timesteps == EXPECTED_STEPS
    assert final.meta["n_updates"] == EXPECTED_UPDATES
    assert len(final.snapshots) == 3 and final.snapshots[-1].name != "0"
    assert f"trained {EXPECTED_STEPS:,} decisions" in resumed.stdout


def test_resume_without_a_checkpoint_is_a_clear_error(tmp_path):
    from train.trainer import train

    with pytest.raises(CheckpointError, match="no checkpoint at"):
        train(load_config(write_config(tmp_path)), resume=True, progress=False, final_eval=False)


def test_a_new_run_does_not_overwrite_an_existing_checkpoint(tmp_path):
    from train.trainer import train

    config = load_config(write_config(tmp_path), ["total_timesteps=64"])
    train(config, progress=False, final_eval=False)
    with pytest.raises(ConfigError, match="already exists: pass --resume"):
        train(config, progress=False, final_eval=False)
    changed = load_config(write_config(tmp_path), ["total_timesteps=128", "ppo.net_arch=[8]"])
    with pytest.raises(ConfigError, match="differs from the checkpoint's in ppo.net_arch"):
        train(changed, resume=True, progress=False, final_eval=False)
    longer = load_config(write_config(tmp_path), ["total_timesteps=128"])
    assert train(longer, resume=True, progress=False, final_eval=False).num_timesteps == 128
