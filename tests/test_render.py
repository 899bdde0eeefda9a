"""render_mode="rgb_array": pictures of the table for every game and seat count, one seat's view without
leaks, videos through Gymnasium's wrappers, and GIFs of played games (card_envs.core.render)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium
import imageio.v3 as iio
import numpy as np
import pytest

import card_envs
from card_envs.core.errors import ConfigError, IllegalActionError
from card_envs.core.render import WIDTH, frame, game_frames, save_gif, state_frames
from card_envs.core.single_agent import SingleAgentEnv
from tests.helpers import new_state

ROOT = Path(__file__).resolve().parent.parent

#: every game at every seat count it supports, and the options that change its layout
CASES = [
    ("revolutionary_war_v0", {}),
    ("revolutionary_war_v0", {"target_score": 60}),
    ("revolution_v0", {}),
    ("revolution_v0", {"full_recall": True}),
    ("bloodlines_v0", {}),
    ("bloodlines_v0", {"bloodlines": ("D", "S")}),
    *[("battlecards_v0", {"num_players": n}) for n in range(2, 7)],
    ("battlecards_v0", {"num_players": 3, "jokers": True, "retire_lowest_on_flip": True}),
]


def case_id(case: tuple[str, dict]) -> str:
    name, config = case
    return name + "".join(f"-{key}={value}" for key, value in config.items())


def random_actions(state, rng: np.random.Generator, count: int) -> list[int]:
    """Play up to ``count`` uniformly random legal actions on ``state``; the actions played."""
    played = []
    while len(played) < count and not state.is_over:
        legal = state.legal_actions()
        played.append(legal[int(rng.integers(len(legal)))])
        state.apply(played[-1])
    return played


def assert_picture(picture: np.ndarray) -> None:
    assert isinstance(picture, np.ndarray) and picture.dtype == np.uint8
    assert picture.ndim == 3 and picture.shape[1] == WIDTH and picture.shape[2] == 3
    assert 300 < picture.shape[0] < 1400


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_game_draws_its_table_and_every_action_changes_it(case):
    name, config = case
    env = card_envs.make(name, render_mode="rgb_array", **config)
    env.reset(seed=1)
    previous = env.render()
    assert_picture(previous)
    rng = np.random.default_rng(1)
    for _ in range(6):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        picture = env.render()
        assert picture.shape == previous.shape  # one size for the whole game (video writers need it)
        assert not np.array_equal(picture, previous), "the table did not change after an action"
        previous = picture
    for seat in range(env.unwrapped.game.num_players):
        seat_env = card_envs.make(name, render_mode="rgb_array", render_seat=seat, **config)
        seat_env.reset(seed=1)
        seen = seat_env.render()
        assert seen.shape == previous.shape and not np.array_equal(seen, frame(seat_env.unwrapped.state_))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_picture_keeps_its_size_until_the_game_ends(case):
    name, config = case
    game = card_envs.make_game(name, **config)
    state = new_state(game, 2)
    shape = frame(state).shape
    rng = np.random.default_rng(2)
    while not state.is_over:
        random_actions(state, rng, 40)
        assert frame(state).shape == shape


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_seat_view_shows_no_hidden_card(case):
    """Redrawing every card a seat cannot see (``sample_hidden`` keeps its view) leaves that seat's picture
    the same to the pixel, while the all-hands picture shows the redraw (so the check is not vacuous)."""
    name, config = case
    env = card_envs.make_raw(name, render_mode="rgb_array", **config)
    env.reset(seed=3)
    state = env.state_
    random_actions(state, np.random.default_rng(3), 9)
    rng = np.random.default_rng(4)
    everything = frame(state)
    revealed = 0
    for seat in range(state.game.num_players):
        twin = state.sample_hidden(seat, rng)
        seat_env = card_envs.make_raw(name, render_mode="rgb_array", render_seat=seat, **config)
        seat_env.reset(seed=3)
        seat_env.state_ = state
        seen = seat_env.render()
        seat_env.state_ = twin
        np.testing.assert_array_equal(seat_env.render(), seen)
        revealed += not np.array_equal(frame(twin), everything)
    assert revealed, "no redraw changed the all-hands picture: the check would be vacuous"


def test_render_seat_is_checked():
    with pytest.raises(ConfigError, match="render_seat must be None .* or a seat 0..1, got 2"):
        card_envs.make("revolutionary_war_v0", render_mode="rgb_array", render_seat=2)
    with pytest.raises(ConfigError, match="render_mode='rgb_array'; got render_mode='ansi'"):
        card_envs.make("revolutionary_war_v0", render_mode="ansi", render_seat=0)
    with pytest.raises(ConfigError, match="render_seat must be"):
        SingleAgentEnv("revolution_v0", render_mode="rgb_array", render_seat="player_1")
    assert "rgb_array" in card_envs.make("bloodlines_v0").metadata["render_modes"]
    assert "rgb_array" in SingleAgentEnv.metadata["render_modes"]


def test_the_learners_view_follows_its_seat():
    env = SingleAgentEnv("revolution_v0", render_mode="rgb_array", render_seat="learner")
    env.reset(seed=5)
    np.testing.assert_array_equal(env.render(), frame(env.state, env.seat))
    everything = SingleAgentEnv("revolution_v0", render_mode="rgb_array")
    everything.reset(seed=5)
    np.testing.assert_array_equal(everything.render(), frame(everything.state))


def test_gymnasium_collects_the_frames_of_an_episode_and_they_make_a_gif(tmp_path):
    """``RenderCollection`` (Gymnasium's frame collector; ``RecordVideo`` and ``save_video`` need moviepy,
    which is not among the dependencies) on the registered single-agent id, then a GIF of the episode."""
    env = gymnasium.wrappers.RenderCollection(
        gymnasium.make("card_envs/RevolutionaryWar-v0", render_mode="rgb_array", max_steps=12))
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        done = terminated or truncated
    frames = env.render()
    assert len(frames) >= 2 and all(f.shape == frames[0].shape and f.dtype == np.uint8 for f in frames)
    path = tmp_path / "episode.gif"
    save_gif(frames, path, fps=4)
    assert iio.imread(path, index=None).shape[1:] == frames[0].shape


def test_record_video_writes_an_mp4(tmp_path):
    env = gymnasium.wrappers.RecordVideo(gymnasium.make("card_envs/Battlecards-v0", render_mode="rgb_array",
                                                        max_rounds=5), str(tmp_path), disable_logger=True)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        done = terminated or truncated
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def test_a_recorded_game_becomes_a_gif_with_a_frame_per_position(tmp_path):
    game = card_envs.make_game("battlecards_v0", num_players=3)
    state = new_state(game, 7)
    actions = random_actions(state, np.random.default_rng(7), 6)
    frames = game_frames("battlecards_v0", actions, config={"num_players": 3}, seed=7)
    assert len(frames) == len(actions) + 1
    np.testing.assert_array_equal(frames[-1], frame(state))  # the replay ends where the game did
    path = tmp_path / "game.gif"
    save_gif(frames, path, fps=2)
    back = iio.imread(path, index=None)
    assert back.shape == (len(frames), *frames[0].shape)
    assert np.abs(back.astype(int) - np.stack(frames)).mean() < 1  # a palette per frame: nearly exact
    assert iio.immeta(path)["duration"] == 500
    assert [p.name for p in tmp_path.iterdir()] == ["game.gif"]  # the temporary file was renamed into place


def test_the_env_frames_are_the_replay_frames():
    env = card_envs.make("bloodlines_v0", render_mode="rgb_array", render_seat=1)
    env.reset(seed=11)
    rendered = [env.render()]
    for _ in range(5):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        rendered.append(env.render())
    replayed = game_frames(env.unwrapped.game, env.unwrapped.state_.history, seed=11, seat=1)
    for ours, theirs in zip(rendered, replayed, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    states = [env.unwrapped.state_]
    np.testing.assert_array_equal(state_frames(states, seat=1)[0], rendered[-1])


def test_bad_gif_and_replay_input_is_a_clear_error(tmp_path):
    picture = frame(new_state(card_envs.make_game("revolutionary_war_v0"), 0))
    with pytest.raises(ValueError, match="same size"):
        save_gif([picture, picture[:-1]], tmp_path / "bad.gif")
    with pytest.raises(ValueError, match="at least one frame"):
        save_gif([], tmp_path / "bad.gif")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(IllegalActionError):
        game_frames("revolutionary_war_v0", [99], seed=0)


def test_pictures_need_pillow_only_when_asked_for():
    """``import card_envs`` and text rendering never import Pillow or imageio; without Pillow, asking for
    ``rgb_array`` fails when the env is made, naming the extra to install."""
    code = ("import sys, card_envs\n"
            "card_envs.make('revolution_v0', render_mode='ansi').reset(seed=0)\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('PIL', 'imageio')], 'imported'\n"
            "sys.modules['PIL'] = None\n"
            "try:\n"
            "    card_envs.make('revolution_v0', render_mode='rgb_array')\n"
            "except Exception as error:\n"
            "    print(type(error).__name__, error)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.startswith("DependencyNotInstalled") and "pip install card-envs[render]" in out
