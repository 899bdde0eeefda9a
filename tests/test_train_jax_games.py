"""The JAX trainer on the real engines (opt-in, ``-m slow``): a short run learns to beat random (Revolutionary War:
seconds once compiled), and every committed JAX config trains an agent that beats its baselines (the full
budgets, up to 30 minutes each). A game whose JAX engine is missing from the checkout fails, naming it: nothing
is skipped."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agents.tournaments.match import contest
from card_envs.jax.core import JAX_GAMES
from train import jax_ppo
from train.config import config_from_dict, load_config

ROOT = Path(__file__).resolve().parents[1]


def require_engine(game: str) -> None:
    assert importlib.util.find_spec(JAX_GAMES[game]) is not None, \
        f"{game} has no JAX engine ({JAX_GAMES[game]}) in this checkout: its committed JAX config cannot be trained"


#: opt-in (-m slow: 17-22 s of the default run); the default run checks that the loop learns a toy game and that it
#: trains, resumes and snapshots on Revolutionary War's engine (test_train_jax)
@pytest.mark.slow
def test_a_short_run_on_the_engine_beats_random(tmp_path):
    game = "revolutionary_war_v0"
    require_engine(game)
    config = config_from_dict({
        "game": game, "backend": "jax", "seed": 0, "n_envs": 256, "total_timesteps": 120_000,
        "run_dir": str(tmp_path / "run"), "eval": {"interval": 0, "final_games": 400},
        "pool": {"weights": {"random": 1.0}},
        "ppo": {"net_arch": [64], "n_steps": 16, "batch_size": 1024, "n_epochs": 4, "learning_rate": 1e-3},
        "jax": {"updates_per_call": 10}})
    jax_ppo.train(config, progress=False, final_eval=False)
    result = contest(game, f"checkpoint:{tmp_path / 'run' / 'checkpoint.zip'}", "random", 400, seed=1,
                     progress=False)
    assert result.interval[0] > 0.5, result  # random against random wins half


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*_jax.yaml")), ids=lambda p: p.stem)
def test_a_committed_jax_config_trains_an_agent_that_beats_random(path, tmp_path):
    config = load_config(path, [f"run_dir={tmp_path / 'run'}", "eval.interval=0"])
    require_engine(config.game)
    summary = jax_ppo.train(config, progress=False)
    first = summary.results[0]
    assert first.opponent == "random" and first.interval[0] > 1 / first.seats, summary.table()
