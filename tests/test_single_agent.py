"""The single-agent Gymnasium view (card_envs/core/single_agent.py), for every registered game."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import card_envs
from agents.players.base import Agent, Decision, RandomAgent
from agents.players.registry import agent_names, make_agent
from card_envs.core.errors import ConfigError, IllegalActionError, StateError
from card_envs.core.single_agent import SingleAgentEnv
from tests.countdown import Countdown

GAMES = card_envs.ENV_NAMES


def random_action(env: SingleAgentEnv, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def play_episode(env: SingleAgentEnv, rng: np.random.Generator, seed: int | None = None) -> list[float]:
    """Rewards of one episode played by a random learner."""
    env.reset(seed=seed)
    rewards = []
    while True:
        _, reward, terminated, truncated, _ = env.step(random_action(env, rng))
        rewards.append(reward)
        if terminated or truncated:
            return rewards


@pytest.mark.parametrize("game", GAMES)
def test_gymnasium_env_checker_passes(game):
    env = SingleAgentEnv(game, opponents=[RandomAgent(0)], illegal_action="lose")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every warning but the unbounded Box (as the AEC envs' spaces) fails
        warnings.filterwarnings("ignore", message=".*Box observation space (minimum|maximum) value is .*infinity")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("game", GAMES)
def test_mask_is_the_learners_legal_set_and_the_learner_is_to_act(game):
    env = SingleAgentEnv(game, opponents=[RandomAgent(1)])
    rng = np.random.default_rng(0)
    for episode in range(3):
        env.reset(seed=episode)
        done = False
        while not done:
            state = env.state
            assert state.current_player == env.seat
            assert env.action_masks().dtype == np.int8
            assert np.array_equal(np.flatnonzero(env.action_masks()), state.legal_actions())
            observation, _, terminated, truncated, _ = env.step(random_action(env, rng))
            assert np.array_equal(observation, env.game.encode(env.state.view(env.seat)))
            done = terminated or truncated
        assert not env.action_masks().any()


@pytest.mark.parametrize("game", GAMES)
def test_the_learner_seat_is_random_each_episode(game):
    env = SingleAgentEnv(game, opponents=[RandomAgent(2)])
    players = env.game.num_players
    seats = Counter()
    env.reset(seed=0)
    for _ in range(40 * players):
        env.reset()
        seats[env.seat] += 1
    assert sorted(seats) == list(range(players))
    assert min(seats.values()) >= 15  # about 40 each; P(< 15) is negligible


def test_a_fixed_seat_is_kept():
    env = SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(0)], seat=1)
    for seed in range(10):
        env.reset(seed=seed)
        assert env.seat == 1 and env.lineup[1] is None and env.lineup[0] is not None


def test_a_learner_that_always_loses_sees_every_loss():
    # Countdown with 5 tokens and 2 seats: seat 0 takes the last token and wins; the game ends on
    # the opponent's move whenever the learner is seat 1. The learner must still get its -1.
    env = SingleAgentEnv(Countdown(count=5), opponents=[RandomAgent(0)], seat=1)
    rng = np.random.default_rng(0)
    for _ in range(20):
        rewards = play_episode(env, rng)
        assert rewards == [0.0, -1.0]  # moves 2 and 4 are the learner's; move 5 (the opponent's) ends it


def test_wins_and_losses_both_reach_a_learner_in_a_random_seat():
    env = SingleAgentEnv(Countdown(count=5), opponents=[RandomAgent(0)])
    rng = np.random.default_rng(1)
    outcomes = Counter()
    env.reset(seed=3)
    for _ in range(60):
        rewards = play_episode(env, rng)
        outcomes[(env.seat, sum(rewards))] += 1
    assert set(outcomes) == {(0, 1.0), (1, -1.0)}


def test_rewards_earned_during_opponents_moves_arrive_with_the_next_step():
    # 3 seats, 7 tokens, each move pays 0.25 from the mover to the next seat; the learner is seat 0
    # and makes moves 1, 4 and 7 (the last wins: +1). Step 1 = move 1 (-0.25) + move 3 by seat 2
    # (+0.25); step 2 likewise (moves 4-6); step 3 = move 7 (-0.25 + 1).
    env = SingleAgentEnv(Countdown(players=3, count=7, toll=0.25), opponents=[RandomAgent(0)], seat=0)
    assert play_episode(env, np.random.default_rng(0)) == [0.0, 0.0, 0.75]


def test_rewards_earned_before_the_first_decision_arrive_with_the_first_step():
    # seat 1 of 3: move 1 (seat 0, during reset) pays it +0.25; step 1 = that + move 2 (-0.25) +
    # move 4 (+0.25); step 2 = move 5 (-0.25) + move 7 (+0.25, and seat 0 wins: -1/2 for seat 1).
    env = SingleAgentEnv(Countdown(players=3, count=7, toll=0.25), opponents=[RandomAgent(0)], seat=1)
    assert play_episode(env, np.random.default_rng(0)) == [0.25, -0.5]


def test_a_learner_that_always_concedes_loses_every_revolutionary_war_game():
    # R5-R9: conceding hands every pot (and the trump) to the opponent, who never concedes while it
    # can play (heuristic:cheapest) -- the learner never captures anything and loses (R16).
    concede = 13
    cheapest = make_agent("revolutionary_war_v0", "heuristic:cheapest", 0)
    env = SingleAgentEnv("revolutionary_war_v0", opponents=[cheapest])
    env.reset(seed=0)
    returns = []
    for _ in range(30):
        env.reset()
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(concede)
            total += reward
            done = terminated or truncated
        returns.append(total)
        assert info["won"] is False and info["winners"] != [env.seat]
    assert returns == [-1.0] * 30


@pytest.mark.parametrize("game", GAMES)
def test_episode_return_is_the_learners_final_result(game):
    env = SingleAgentEnv(game, opponents=[RandomAgent(3)])
    rng = np.random.default_rng(2)
    env.reset(seed=5)
    for _ in range(5):
        rewards = play_episode(env, rng)
        assert sum(rewards) == pytest.approx(env.state.returns()[env.seat])
        assert env.state.is_over


def test_the_same_seed_replays_the_same_episode():
    def trace(seed):
        env = SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(7), make_agent(
            "revolutionary_war_v0", "heuristic:pot", 7)])
        rng = np.random.default_rng(0)
        observation, _ = env.reset(seed=seed)
        steps = [(env.seat, observation.tolist())]
        done = False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(random_action(env, rng))
            steps.append((observation.tolist(), reward))
            done = terminated or truncated
        return steps

    assert trace(11) == trace(11)
    assert trace(11) != trace(12)


def test_a_callable_policy_opponent_gets_its_own_observation_and_mask():
    calls = []

    def first_legal(observation, mask):
        calls.append((observation.shape, mask.dtype, int(mask.sum())))
        return int(np.flatnonzero(mask)[0])

    env = SingleAgentEnv("revolutionary_war_v0", opponents=first_legal)
    play_episode(env, np.random.default_rng(0), seed=0)
    assert calls and all(shape == (157,) and dtype == np.int8 and legal >= 1 for shape, dtype, legal in calls)


class _Recorder(Agent):
    name = "recorder"

    def __init__(self, seed=None):
        super().__init__(seed)
        self.resets = []

    def reset(self, game, player):
        self.resets.append(player)

    def act(self, decision: Decision) -> int:
        return decision.legal_actions[0]


def test_agent_opponents_are_reset_with_their_seat_every_episode():
    agent = _Recorder()
    env = SingleAgentEnv("revolution_v0" if "revolution_v0" in GAMES else "revolutionary_war_v0", opponents=[agent])
    env.reset(seed=0)
    first = [s for s in range(env.game.num_players) if s != env.seat]
    env.reset()
    second = [s for s in range(env.game.num_players) if s != env.seat]
    assert agent.resets == first + second


def test_illegal_learner_action_raises_naming_it_and_changes_nothing():
    env = SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(0)])
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    before = env.state.to_dict()
    with pytest.raises(IllegalActionError, match=f"action {illegal}"):
        env.step(illegal)
    assert env.state.to_dict() == before


def test_illegal_action_lose_mode_ends_the_episode_with_minus_one():
    env = SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(0)], illegal_action="lose")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, illegal)
    with pytest.raises(StateError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("kwargs, match", [
    ({"opponents": []}, "opponents must be"),
    ({"opponents": [object()]}, "an opponent must be"),
    ({"opponents": [RandomAgent(0)], "seat": 2}, "seat must be"),
    ({"opponents": [RandomAgent(0)], "illegal_action": "ignore"}, "illegal_action"),
    ({"opponents": [RandomAgent(0)], "options": {"no_such_option": 1}}, "no_such_option"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        SingleAgentEnv("revolutionary_war_v0", **kwargs)


def test_step_before_reset_is_an_error():
    env = SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(0)])
    with pytest.raises(StateError, match="reset"):
        env.step(0)


def test_render_ansi_shows_the_table():
    env = SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(0)], render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == env.state.render()


def test_importing_the_single_agent_view_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, card_envs.core.single_agent, card_envs; "
            "[card_envs.make_game(n) for n in card_envs.ENV_NAMES]; "
            "sys.exit(any(m.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- the duplicate baseline --------------------------------------------------------------------------


def play_as(env: SingleAgentEnv, agent: Agent, seed: int) -> tuple[list[float], dict, list[list[float]]]:
    """One episode with ``agent`` choosing the learner's actions: rewards, final info, observations."""
    observation, _ = env.reset(seed=seed)
    agent.reset(env.game, env.seat)
    rewards, observations = [], [observation.tolist()]
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(Decision.of(env.state)))
        rewards.append(reward)
        observations.append(observation.tolist())
        if terminated or truncated:
            return rewards, info, observations


@pytest.mark.parametrize("game", GAMES)
def test_a_learner_playing_as_the_baseline_earns_exactly_nothing(game):
    # the replay must deal the same cards (later hands' shuffles included) and give the opponents the
    # same randomness: a learner choosing as the baseline agent would then plays the identical game
    rule_based = [name for name in agent_names(game) if name.startswith("heuristic:")][-1]
    env = SingleAgentEnv(game, opponents=[RandomAgent(4), make_agent(game, rule_based, 5)],
                         baseline=make_agent(game, rule_based, 6))
    learner = make_agent(game, rule_based, 6)
    returns = set()
    for seed in range(6):
        learner.reseed(6)
        rewards, info, _ = play_as(env, learner, seed)
        assert sum(rewards) == pytest.approx(0.0, abs=1e-9)
        assert info["baseline_return"] == pytest.approx(env.state.returns()[env.seat])
        returns.add(round(info["baseline_return"], 6))
    assert len(returns) > 1  # real games with different results, not a constant


def test_the_baseline_is_subtracted_and_leaves_the_learners_game_unchanged():
    game = "revolution_v0"
    plain = SingleAgentEnv(game, opponents=[RandomAgent(1), make_agent(game, "heuristic:counting", 2)])
    dup = SingleAgentEnv(game, opponents=[RandomAgent(1), make_agent(game, "heuristic:counting", 2)],
                         baseline=RandomAgent(3))
    differences = []
    for seed in range(5):
        rewards, info, observations = play_as(plain, make_agent(game, "heuristic:counting", 0), seed)
        dup_rewards, dup_info, dup_observations = play_as(dup, make_agent(game, "heuristic:counting", 0), seed)
        assert observations == dup_observations and rewards[:-1] == dup_rewards[:-1]
        assert dup_rewards[-1] == pytest.approx(rewards[-1] - dup_info["baseline_return"])
        assert "baseline_return" not in info
        differences.append(dup_info["baseline_return"])
    assert len(set(differences)) > 1


def test_a_baseline_must_be_an_agent():
    with pytest.raises(ConfigError, match="baseline must be an Agent"):
        SingleAgentEnv("revolutionary_war_v0", opponents=[RandomAgent(0)], baseline=lambda o, m: 0)


class _EndsEveryTurnIdle(Agent):
    """Ends step 1 without drawing and passes (Bloodlines), so two such turns are a stalemate (R15)."""

    name = "idle"

    def act(self, decision: Decision) -> int:
        return max(a for a in decision.legal_actions if a in (211, 212))


@pytest.mark.parametrize("draw_reward", [0.0, -1.0, 0.25])
def test_a_drawn_game_pays_the_draw_reward(draw_reward):  # Bloodlines Sc-13: R15 stalemate, 3 : 3 royals
    env = SingleAgentEnv("bloodlines_v0", opponents=[_EndsEveryTurnIdle()], seat=0, draw_reward=draw_reward,
                         options={"bloodlines": ("H", "S"), "starting_player": 0})
    deck = ["2C", "3C", "4D", "5D"]
    env.reset(seed=0, options={"decks": [deck, deck]})
    _, reward, _, _, _ = env.step(211)  # end step 1: no draw
    assert reward == 0.0
    _, reward, terminated, _, info = env.step(212)  # pass; the opponent's idle turn then ends the game
    assert terminated and info["winners"] == [] and env.state.returns() == [0.0, 0.0]
    assert reward == draw_reward


def test_the_draw_reward_leaves_won_and_lost_games_alone():
    env = SingleAgentEnv("bloodlines_v0", opponents=[RandomAgent(3)], draw_reward=-0.5)
    rng = np.random.default_rng(4)
    env.reset(seed=6)
    outcomes = set()
    for _ in range(30):
        total = sum(play_episode(env, rng))
        winners = env.state.winners()
        outcomes.add("draw" if not winners else "won" if env.seat in winners else "lost")
        assert total == pytest.approx(env.state.returns()[env.seat] + (-0.5 if not winners else 0.0))
    assert {"won", "lost"} <= outcomes


@pytest.mark.parametrize("draw_reward", [float("nan"), float("inf"), "lose", True])
def test_a_bad_draw_reward_is_a_clear_error(draw_reward):
    with pytest.raises(ConfigError, match="draw_reward must be a finite number"):
        SingleAgentEnv("bloodlines_v0", opponents=[RandomAgent(0)], draw_reward=draw_reward)
