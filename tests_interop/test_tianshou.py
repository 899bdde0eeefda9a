"""Tianshou's PettingZoo support on every game: its ``PettingZooEnv`` wrapper, a multi-agent policy of masked
random players per seat, and its ``Collector`` over a vector of envs, for whole episodes. Battlecards with 3+
players uses ``keep_eliminated=True`` (Tianshou ends the episode at the first termination)."""

from __future__ import annotations

import numpy as np
import pytest
from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Collector
from tianshou.env import DummyVectorEnv, PettingZooEnv

import card_envs
from tests_interop.helpers import CASES, IDS, fixed_agent_options


@pytest.mark.parametrize(("case", "name", "options"), CASES, ids=IDS)
def test_collector_plays_whole_episodes(case, name, options):
    options = fixed_agent_options(name, options)

    def make():
        return PettingZooEnv(card_envs.make(name, **options))

    env = make()
    policy = MultiAgentPolicy({agent: MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space).policy
                               for agent in env.agents})
    np.random.seed(0)  # the random policies draw from numpy's global generator
    collector = Collector(policy, DummyVectorEnv([make, make]))
    collector.reset()
    stats = collector.collect(n_episode=4)
    assert stats.n_collected_episodes >= 4
    # whole games: every episode ran to the engine's end, not to the first knock-out
    for worker in collector.env.workers:
        state = worker.env.env.unwrapped.state_
        assert state is not None
    lengths = np.asarray(stats.lens)
    game = card_envs.make_game(name, **{k: v for k, v in options.items() if k != "keep_eliminated"})
    assert lengths.min() >= 2 and (game.max_decisions() is None or lengths.max() <= game.max_decisions())


def test_keep_eliminated_is_what_lets_tianshou_finish_a_battlecards_game():
    """Without the option, Tianshou's wrapper reports done at the first knock-out although the game goes on."""
    plain = PettingZooEnv(card_envs.make("battlecards_v0", num_players=4, hand_size=2, war_facedown_count=1))
    kept = PettingZooEnv(card_envs.make("battlecards_v0", num_players=4, hand_size=2, war_facedown_count=1,
                                        keep_eliminated=True))
    early = 0
    for seed in range(6):
        for env in (plain, kept):
            observation, _ = env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            done = False
            while not done:
                action = int(rng.choice(np.flatnonzero(observation["mask"])))
                observation, _, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
            over = env.env.unwrapped.state_.is_over
            if env is kept:
                assert over
            else:
                early += not over
    assert early > 0
