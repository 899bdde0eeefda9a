"""Gymnasium ids (``card_envs.registration``): ``gymnasium.make`` for every game, game options as keywords,
the checkers of Gymnasium and Stable-Baselines3 as shipped, and the layers (card_envs imports no agents/train,
and ``import card_envs`` stays light)."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import card_envs
from agents.players.registry import make_agent
from card_envs.core.errors import ConfigError, IllegalActionError
from card_envs.core.single_agent import RandomPolicy, SingleAgentEnv

IDS = sorted(card_envs.GYM_IDS)
ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_game_has_an_id():
    assert sorted(card_envs.GYM_IDS.values()) == sorted(card_envs.ENV_NAMES)
    assert set(IDS) <= set(gymnasium.registry)


@pytest.mark.parametrize("gym_id", IDS)
def test_make_plays_an_episode_with_default_random_opponents(gym_id):
    env = gymnasium.make(gym_id)
    inner = env.unwrapped
    assert isinstance(inner, SingleAgentEnv) and inner.game.name == card_envs.GYM_IDS[gym_id]
    assert all(isinstance(o, RandomPolicy) for o in inner.opponents)
    assert inner.illegal_action == "lose"
    observation, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20_000):
        assert env.observation_space.contains(observation)
        action = int(rng.choice(np.flatnonzero(inner.action_masks())))
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert terminated or truncated
    assert "returns" in info and not inner.action_masks().any()


def test_make_takes_game_options_and_opponents_as_keywords():
    counting = make_agent("battlecards_v0", "heuristic:counter")
    env = gymnasium.make("card_envs/Battlecards-v0", num_players=4, hand_size=3, opponents=[counting], seat=2)
    inner = env.unwrapped
    assert inner.game.num_players == 4 and inner.game.config.hand_size == 3
    env.reset(seed=1)
    assert inner.seat == 2 and inner.lineup[0] is counting
    with pytest.raises(ConfigError, match="no_such_option"):
        gymnasium.make("card_envs/Bloodlines-v0", no_such_option=1)
    with pytest.raises(ConfigError, match="keywords or as options="):
        SingleAgentEnv("battlecards_v0", options={"num_players": 3}, hand_size=2)


def test_options_dict_and_keywords_build_the_same_game():
    by_dict = SingleAgentEnv("revolution_v0", options={"num_hands": 1, "full_recall": True})
    by_keywords = SingleAgentEnv("revolution_v0", num_hands=1, full_recall=True)
    assert by_dict.game.config == by_keywords.game.config
    np.testing.assert_array_equal(by_dict.reset(seed=4)[0], by_keywords.reset(seed=4)[0])


@pytest.mark.parametrize("gym_id", IDS)
def test_gymnasium_check_env_passes_as_shipped(gym_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every checker warning is a failure
        check_env(gymnasium.make(gym_id).unwrapped)  # the checker asks for the unwrapped env


@pytest.mark.parametrize("gym_id", IDS)
def test_sb3_check_env_passes_as_shipped(gym_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(gymnasium.make(gym_id))


def test_the_checkers_need_illegal_action_lose():
    """The checkers step with unmasked random actions: with illegal_action="raise" they meet the error, which
    is why the ids default to "lose" (README: which setting with which checker)."""
    with pytest.raises(IllegalActionError):
        sb3_check_env(gymnasium.make("card_envs/Revolution-v0", illegal_action="raise"))


def test_random_policy_is_seeded_by_the_env():
    env = gymnasium.make("card_envs/RevolutionaryWar-v0")
    first = [env.reset(seed=3)[0]] + [env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))[0]
                                      for _ in range(5)]
    second = [env.reset(seed=3)[0]] + [env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))[0]
                                       for _ in range(5)]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_import_card_envs_stays_light_and_registers_the_ids():
    """In a fresh interpreter: the ids are registered, and neither the games, the single-agent module, any RL
    library nor agents/train were imported to do it."""
    code = ("import sys, json, gymnasium, card_envs; "
            "print(json.dumps({'ids': sorted(i for i in gymnasium.registry if i.startswith('card_envs/')), "
            "'modules': sorted(sys.modules)}))")
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    cwd=ROOT).stdout)
    assert out["ids"] == IDS
    heavy = ("torch", "ray", "pyspiel", "open_spiel", "jax", "stable_baselines3", "sb3_contrib", "agents", "train",
             "card_envs.core.single_agent", "card_envs.battlecards")
    assert [m for m in out["modules"] if m.split(".")[0] in heavy or m in heavy] == []


def test_card_envs_imports_nothing_from_agents_or_train():
    """Layers point down only: no module of card_envs names agents or train in an import (lazy ones too)."""
    offenders = []
    for path in sorted((ROOT / "card_envs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in ("agents", "train")]
    assert offenders == []


def test_unknown_reset_option_is_a_clear_error_in_the_single_agent_view():
    env = gymnasium.make("card_envs/Revolution-v0")
    first, _ = env.reset(seed=1)
    with pytest.raises(ConfigError, match="'bogus'; valid reset options: 'deck', 'decks'"):
        env.reset(seed=2, options={"bogus": 1})
    np.testing.assert_array_equal(env.unwrapped._observation(), first)  # nothing changed
