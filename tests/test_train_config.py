"""Training configs (train/config.py): the committed configs, validation, CLI overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

import card_envs
from card_envs.core.errors import ConfigError
from train.config import TrainConfig, apply_overrides, config_from_dict, load_config

CONFIGS = sorted(Path(__file__).resolve().parents[1].joinpath("configs").glob("*.yaml"))


def minimal(**extra):
    return {"game": "revolutionary_war_v0", **extra}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_committed_config_is_valid(path):
    config = load_config(path)
    assert config.game in card_envs.ENV_NAMES or pytest.fail(f"{path.name}: {config.game} is not registered")
    assert config.run_dir == str(Path("runs") / path.stem)


def test_every_registered_game_has_a_config():
    games = {load_config(path).game for path in CONFIGS}
    assert set(card_envs.ENV_NAMES) <= games


def test_defaults_fill_every_key_but_the_game():
    config = config_from_dict(minimal())
    assert isinstance(config, TrainConfig) and config.ppo.n_steps == 256 and config.pool.weights["self"] == 1.0
    with pytest.raises(ConfigError, match="missing required key 'game'"):
        config_from_dict({})


@pytest.mark.parametrize("data, match", [
    (minimal(learning_rate=1e-4), r"unknown key\(s\) learning_rate; valid keys: game, env_options"),
    (minimal(ppo={"learnin_rate": 1e-4}), r"unknown key\(s\) ppo.learnin_rate; valid keys in ppo: net_arch"),
    (minimal(ppo={"n_steps": "many"}), "ppo.n_steps must be an integer, got 'many'"),
    (minimal(ppo={"n_steps": 2.5}), "ppo.n_steps must be an integer"),
    (minimal(ppo={"learning_rate": -1.0}), "ppo.learning_rate must be > 0"),
    (minimal(ppo={"activation": "sigmoid"}), "ppo.activation must be one of 'tanh', 'relu'"),
    (minimal(ppo={"net_arch": []}), "ppo.net_arch must be a non-empty list"),
    (minimal(ppo={"net_arch": [64, "wide"]}), r"ppo.net_arch\[1\] must be an integer"),
    (minimal(ppo={"gamma": 1.5}), "ppo.gamma must be between 0 and 1"),
    (minimal(ppo={"batch_size": 100_000}), r"ppo.batch_size \(100000\) must be <= ppo.n_steps \* n_envs"),
    (minimal(n_envs=0), "n_envs must be >= 1"),
    (minimal(vec_env="threads"), "vec_env must be one of 'dummy', 'subproc', 'async'"),
    (minimal(ppo=[1, 2]), "ppo must be a mapping"),
    (minimal(pool={"weights": {"heuristic:nobody": 1.0}}), "pool.weights: unknown opponent 'heuristic:nobody'"),
    (minimal(pool={"weights": {"random": -1.0}}), "pool.weights.random must be >= 0"),
    (minimal(pool={"weights": {"random": 0.0}}), "positive total"),
    (minimal(pool={"weights": {}}), "at least one opponent"),
    (minimal(eval={"opponents": ["heuristic:nobody"]}), "eval.opponents: unknown baseline 'heuristic:nobody'"),
    (minimal(eval={"games": 0}), "eval.games must be >= 1"),
    (minimal(env_options={"target_score": 0}), "target_score"),
    (minimal(env_options={"no_such_option": 1}), "no_such_option"),
    ({"game": "chess_v0"}, "game must be one of"),
    (minimal(seed=True), "seed must be an integer"),
    (minimal(draw_reward=float("nan")), "draw_reward must be a finite number"),
    (minimal(draw_reward="lose"), "draw_reward must be a number"),
    (minimal(eval={"deterministic": "yes"}), "eval.deterministic must be true or false"),
    (minimal(pretrain={"teacher": "heuristic:nobody"}), "unknown agent 'heuristic:nobody'"),
    (minimal(pretrain={"games": 0}), "pretrain.games must be >= 1"),
    (minimal(pretrain={"value_weight": -1.0}), "pretrain.value_weight must be >= 0"),
    (minimal(pretrain={"dagger_rounds": -1}), "pretrain.dagger_rounds must be >= 0"),
    (minimal(pretrain={"dagger_games": 0}), "pretrain.dagger_games must be >= 1"),
    (minimal(pretrain={"teacher": "heuristic:pot", "mix": {"heuristic:nobody": 0.1}}),
     "pretrain.mix: unknown agent 'heuristic:nobody'"),
    (minimal(duplicate_baseline="heuristic:nobody"), "duplicate_baseline: unknown agent 'heuristic:nobody'"),
    (minimal(pretrain={"mix": {"random": 1.5}}), "pretrain.mix.random must be a chance between 0 and 1"),
    (minimal(pretrain={"mix": {"random": 0.6, "heuristic:pot": 0.6}}), "must add up to at most 1, got 1.2"),
])
def test_bad_configs_are_clear_errors(data, match):
    with pytest.raises(ConfigError, match=match):
        config_from_dict(data)


def test_overrides_set_nested_keys_with_yaml_values(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text("game: revolutionary_war_v0\nppo:\n  n_steps: 128\n")
    config = load_config(path, ["ppo.learning_rate=1e-4", "pool.weights={random: 2, self: 1}",
                                "eval.opponents=[random]", "env_options.target_score=50", "ppo.target_kl=null",
                                "run_dir=/tmp/elsewhere"])
    assert config.ppo.learning_rate == 1e-4  # YAML 1.1 reads 1e-4 as text; the schema makes it a float
    assert config.ppo.n_steps == 128
    assert config.pool.weights == {"random": 2.0, "self": 1.0}
    assert config.eval.opponents == ["random"]
    assert config.env_options == {"target_score": 50}
    assert config.ppo.target_kl is None
    assert config.run_dir == "/tmp/elsewhere"


@pytest.mark.parametrize("override, match", [
    ("ppo.learnin_rate=1e-4", "unknown key"),
    ("ppo.n_steps", "must look like key=value"),
    ("=3", "must look like key=value"),
    ("ppo.n_steps.deeper=3", "ppo.n_steps is not a section"),
    ("ppo.n_steps=[1", "not valid YAML"),
])
def test_bad_overrides_are_clear_errors(tmp_path, override, match):
    path = tmp_path / "small.yaml"
    path.write_text("game: revolutionary_war_v0\nppo:\n  n_steps: 128\n")
    with pytest.raises(ConfigError, match=match):
        load_config(path, [override])


def test_overrides_do_not_change_the_input():
    data = {"ppo": {"n_steps": 1}}
    apply_overrides(data, ["ppo.n_steps=2"])
    assert data == {"ppo": {"n_steps": 1}}


def test_missing_and_malformed_files_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    listing = tmp_path / "list.yaml"
    listing.write_text("- game\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_config(listing)


def test_the_cli_rejects_a_bad_config_before_training(tmp_path, capsys):
    from train.__main__ import main

    path = tmp_path / "small.yaml"
    path.write_text("game: revolutionary_war_v0\n")
    assert main(["--config", str(path), "--set", "ppo.learnin_rate=1e-4"]) == 2
    assert "unknown key(s) ppo.learnin_rate" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
