"""The advisor: a rule-based player's choice appended to the learner's observation (residual policy learning).

``SingleAgentEnv(advisor=..., advise=advised_observation)``, the training config's ``advisor``, the imitation
warm start and the trained player (``agents/players/checkpoint.py``) must all build the same advised observation.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import card_envs
from agents.players.base import Decision, RandomAgent, advised_observation
from agents.players.registry import make_agent
from card_envs.core.errors import ConfigError
from card_envs.core.single_agent import SingleAgentEnv
from tests.test_train_checkpoint import edit_meta, rewrite, train_and_save
from train.checkpoint import CheckpointError
from train.config import config_from_dict
from train.pool import OpponentPool
from train.pretrain import collect
from train.trainer import RunState

REVOLUTION = "revolution_v0"
OPTIONS = {"num_hands": 2, "full_recall": True}


def advice_of(observation: np.ndarray, num_actions: int) -> np.ndarray:
    return observation[-num_actions:]


def test_the_observation_ends_with_a_one_hot_of_the_advisors_legal_choice():
    env = SingleAgentEnv(REVOLUTION, opponents=[RandomAgent(1)], options=OPTIONS,
                         advisor=make_agent(REVOLUTION, "heuristic:counting"), advise=advised_observation)
    game = env.game
    assert env.observation_space.shape == (game.observation_size + game.num_actions,)
    rng = np.random.default_rng(0)
    watcher = make_agent(REVOLUTION, "heuristic:counting")  # an independent copy of the advisor
    observation, _ = env.reset(seed=3)
    watcher.reset(game, env.seat)
    decisions = 0
    while True:
        advice = advice_of(observation, game.num_actions)
        assert observation.shape == env.observation_space.shape
        assert np.array_equal(observation[:game.observation_size], game.encode(env.state.view(env.seat)))
        assert advice.sum() == 1.0 and env.action_masks()[int(np.argmax(advice))] == 1
        expected = watcher.act(Decision(game, env.seat, env.state.view(env.seat), env.state.legal_actions()))
        assert int(np.argmax(advice)) == expected
        decisions += 1
        observation, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            break
    assert decisions > 10
    assert not advice_of(observation, game.num_actions).any()  # no decision once the episode is over


def test_a_learner_that_follows_the_advice_plays_exactly_the_advisors_game():
    # the duplicate baseline replays the same deal (and later deals) with counting in the learner's seat;
    # following a counting advisor must give the very same result on every deal. This also checks that
    # drawing the advisors' seeds does not shift the generator that deals the later hands of the replay.
    pool = OpponentPool(REVOLUTION, {"heuristic:counting": 1.0, "heuristic:cheap": 1.0})
    env = SingleAgentEnv(REVOLUTION, opponents=pool, options=OPTIONS,
                         advisor=make_agent(REVOLUTION, "heuristic:counting", seed=2), advise=advised_observation,
                         baseline=make_agent(REVOLUTION, "heuristic:counting", seed=3))
    num_actions = env.game.num_actions
    for episode in range(30):
        observation, _ = env.reset(seed=episode)
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(int(np.argmax(advice_of(observation, num_actions))))
            done = terminated or truncated
        assert info["baseline_return"] == pytest.approx(info["returns"][info["seat"]]), f"episode {episode}"


def test_callable_opponents_read_advised_observations_of_their_own_seat():
    advisor = make_agent(REVOLUTION, "heuristic:counting")
    game = card_envs.make_game(REVOLUTION, **OPTIONS)
    seen = []

    def snapshot(observation, mask):
        seen.append((observation, mask.copy()))
        return int(np.argmax(advice_of(observation, game.num_actions)))  # follows its own advice

    env = SingleAgentEnv(game, opponents=[snapshot], advisor=advisor, advise=advised_observation, seat=0)
    env.reset(seed=1)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert len(seen) > 5
    for observation, mask in seen:
        advice = advice_of(observation, game.num_actions)
        assert observation.shape == (game.observation_size + game.num_actions,)
        assert advice.sum() == 1.0 and mask[int(np.argmax(advice))] == 1


def test_without_an_advisor_the_observation_is_the_games():
    env = SingleAgentEnv(REVOLUTION, opponents=[RandomAgent(1)], options=OPTIONS)
    observation, _ = env.reset(seed=0)
    assert observation.shape == (env.game.observation_size,)


def test_an_advisor_that_is_not_an_agent_is_a_clear_error():
    with pytest.raises(ConfigError, match="advisor must be an Agent"):
        SingleAgentEnv(REVOLUTION, opponents=[RandomAgent(1)], advisor="heuristic:counting",
                       advise=advised_observation)


def test_the_advice_hook_comes_with_the_advisor():
    """card_envs cannot import agents (layers point down): the caller passes the hook that builds the
    advised observation together with the advisor, and one without the other is a clear error."""
    with pytest.raises(ConfigError, match="advisor and advise go together"):
        SingleAgentEnv(REVOLUTION, opponents=[RandomAgent(1)], advisor=make_agent(REVOLUTION, "heuristic:counting"))
    with pytest.raises(ConfigError, match="advisor and advise go together"):
        SingleAgentEnv(REVOLUTION, opponents=[RandomAgent(1)], advise=advised_observation)


def test_advised_observation_appends_the_advisors_choice():
    game = card_envs.make_game(REVOLUTION, **OPTIONS)
    state = game.new_state(np.random.default_rng(5))
    decision = Decision.of(state)
    observation = advised_observation(decision, make_agent(REVOLUTION, "heuristic:cheap"))
    choice = make_agent(REVOLUTION, "heuristic:cheap").act(decision)
    assert np.array_equal(observation[:game.observation_size], decision.observation)
    assert np.flatnonzero(observation[game.observation_size:]).tolist() == [choice]


def test_demonstrations_carry_the_advice_and_a_teacher_that_is_the_advisor_follows_it():
    game = card_envs.make_game(REVOLUTION, **OPTIONS)
    data = collect(game, "heuristic:counting", games=6, seed=0, advisor="heuristic:counting",
                   mix={"random": 0.5})
    assert data.observations.shape == (len(data), game.observation_size + game.num_actions)
    advice = data.observations[:, game.observation_size:]
    assert (advice.sum(axis=1) == 1).all()
    assert np.array_equal(advice.argmax(axis=1), data.actions)  # the recorded teacher seats only
    other = collect(game, "heuristic:cheap", games=6, seed=0, advisor="heuristic:counting")
    disagree = other.observations[:, game.observation_size:].argmax(axis=1) != other.actions
    assert disagree.any()  # the advice is the advisor's, not the teacher's


def small_config(tmp_path, **extra):
    return config_from_dict({"game": REVOLUTION, "env_options": OPTIONS, "n_envs": 2, "run_dir": str(tmp_path),
                             "advisor": "heuristic:counting", "pool": {"weights": {"random": 1.0, "self": 1.0}},
                             "ppo": {"net_arch": [16], "n_steps": 32, "batch_size": 64}, **extra})


def test_an_unknown_advisor_in_the_config_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="advisor: unknown agent 'heuristic:nope'"):
        small_config(tmp_path, advisor="heuristic:nope")


@pytest.fixture(scope="module")
def advised_checkpoint(tmp_path_factory):
    config = small_config(tmp_path_factory.mktemp("advised"))
    model, path = train_and_save(config, 64, RunState())
    return config, model, path


def test_training_envs_and_the_trained_player_read_the_same_advised_observation(advised_checkpoint):
    config, model, path = advised_checkpoint
    game = card_envs.make_game(REVOLUTION, **OPTIONS)
    assert model.observation_space.shape == (game.observation_size + game.num_actions,)
    player = make_agent(REVOLUTION, f"checkpoint:{path}")
    assert player.advisor is not None and player.advisor.name == "heuristic:counting"
    state = game.new_state(np.random.default_rng(2))
    decision = Decision.of(state)
    player.reset(game, decision.player)
    expected = advised_observation(decision, make_agent(REVOLUTION, "heuristic:counting"))
    assert np.array_equal(player.observation(decision), expected)
    torch_logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(
        model.policy.extract_features(torch.as_tensor(expected[None])))).detach().numpy()[0]
    assert np.allclose(player.net.logits(expected), torch_logits, atol=1e-5)


def test_the_advised_player_plays_full_games(advised_checkpoint):
    from agents.tournaments.match import contest

    _, _, path = advised_checkpoint
    result = contest(REVOLUTION, f"checkpoint:{path}", "heuristic:cheap", 4, seed=0, config=OPTIONS)
    assert result.games == 4


def test_a_checkpoint_whose_advisor_cannot_be_built_is_a_clear_error(advised_checkpoint, tmp_path):
    _, _, good = advised_checkpoint
    unknown = tmp_path / "unknown_advisor.zip"
    rewrite(good, unknown, edit_meta(lambda m: m["policy"].update(advisor="heuristic:nope")))
    with pytest.raises(CheckpointError, match="reads the advice of 'heuristic:nope'"):
        make_agent(REVOLUTION, f"checkpoint:{unknown}")
    dropped = tmp_path / "no_advisor.zip"
    rewrite(good, dropped, edit_meta(lambda m: m["policy"].update(advisor=None)))
    with pytest.raises(CheckpointError, match="shape does not match"):
        make_agent(REVOLUTION, f"checkpoint:{dropped}")
