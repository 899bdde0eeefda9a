"""Real training runs (opt-in: ``pytest -m slow``): the pipeline learns, end to end through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_short_run_from_scratch_learns_to_beat_the_random_player(tmp_path):
    # PPO alone (no warm start), 60k decisions against random and snapshots: a policy that still
    # played at random would win about half its games against random
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "train", "--config", "configs/revolutionary_war.yaml", "--no-progress",
               "--set", "total_timesteps=60000", "--set", "pretrain.teacher=null", "--set", f"run_dir={run_dir}",
               "--set", "pool.weights={random: 1.0, self: 1.0}", "--set", "eval.interval=0",
               "--set", "eval.opponents=[random]", "--set", "eval.final_games=400",
               "--set", "checkpoint_interval=20000"]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert finished.returncode == 0, finished.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    (result,) = summary["results"]
    assert result["opponent"] == "random" and result["games"] == 400
    assert result["ci_low"] > 0.7, summary
    assert "| random | 2 | 400 |" in finished.stdout
