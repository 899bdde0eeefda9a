"""Pickle and deepcopy of every environment class, game and state, at any point of a game.

A copy must continue exactly like the original: same observations, masks, rewards, terminations and the
same random stream (later shuffles, the next reset without a seed). That is what RLlib/Ray tasks,
multiprocessing pools, SuperSuit's vector wrappers and what-if search (``copy.deepcopy``) rely on.
``test_pettingzoo_pickle_procedure`` is PettingZoo's own ``test/pickle_test.py`` (the one its envs pass),
run on ours.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test.seed_test import seed_action_spaces, seed_observation_spaces

import card_envs
from agents.players.base import RandomAgent
from card_envs.core.single_agent import SingleAgentEnv
from tests.helpers import case_id, env_module, game_cases

CASES = game_cases()
COPIES = {"pickle": lambda x: pickle.loads(pickle.dumps(x)), "deepcopy": copy.deepcopy}
CONTINUE = 150  # decisions compared after the copy (and then the random stream)
SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random_action(mask: np.ndarray, rng: np.random.Generator) -> int | None:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))]) if len(legal) else None


def _advance_aec(env, steps: int, rng: np.random.Generator) -> None:
    for _ in range(steps):
        if not env.agents:
            return
        env.step(_random_action(env.observe(env.agent_selection)["action_mask"], rng))


def _assert_same_aec(a, b) -> None:
    assert a.agents == b.agents and a.agent_selection == b.agent_selection
    for name in a.possible_agents:
        oa, ob = a.observe(name), b.observe(name)
        np.testing.assert_array_equal(oa["observation"], ob["observation"])
        np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])
    assert a.rewards == b.rewards and a._cumulative_rewards == b._cumulative_rewards
    assert a.terminations == b.terminations and a.truncations == b.truncations
    assert data_equivalence(a.infos, b.infos)


def _continue_aec_together(a, b, rng: np.random.Generator) -> None:
    """Step both with the same random legal actions; then both reset without a seed (the env's stream)."""
    _assert_same_aec(a, b)
    for _ in range(CONTINUE):
        if not a.agents:
            break
        action = _random_action(a.observe(a.agent_selection)["action_mask"], rng)
        a.step(action)
        b.step(action)
        _assert_same_aec(a, b)
    assert a.unwrapped.state_ == b.unwrapped.state_
    assert a.unwrapped.state_.rng.random() == b.unwrapped.state_.rng.random()  # future shuffles
    a.reset()
    b.reset()
    _assert_same_aec(a, b)


#: (wrapped, copy) pairs: every pair on each game's default config; on a variant config the two pairs that use each
#: wrapper and each copy once (the wrappers and the copy do not depend on the rules: the full matrix on every config
#: cost 29 s of the default run's workers)
ALL_COPIES = [(wrapped, how) for wrapped in (True, False) for how in sorted(COPIES)]
DIAGONAL = [(True, "pickle"), (False, "deepcopy")]


def _aec_copy_id(wrapped: bool, how: str) -> str:
    return f"{'env' if wrapped else 'raw_env'}-{how}"


@pytest.mark.parametrize(("case", "wrapped", "how"), [
    pytest.param(case, wrapped, how, id=f"{case_id(case)}-{_aec_copy_id(wrapped, how)}")
    for case in CASES for wrapped, how in (ALL_COPIES if case[1] == 0 else DIAGONAL)])
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 80))
def test_aec_env_copy_continues_identically(case, wrapped, how, seed, steps):
    name, _, config = case
    module = env_module(name)
    env = (module.env if wrapped else module.raw_env)(**config)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    _advance_aec(env, steps, rng)
    twin = COPIES[how](env)
    assert type(twin) is type(env) and twin.unwrapped is not env.unwrapped
    _continue_aec_together(env, twin, rng)


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("name", card_envs.ENV_NAMES)
def test_env_copies_before_reset_and_after_the_end(name, how):
    """The two edges: an env never reset (RLlib ships constructors' products like this), and one whose
    game is over and every agent has left."""
    env = card_envs.make(name)
    fresh = COPIES[how](env)
    env.reset(seed=5)
    fresh.reset(seed=5)
    _assert_same_aec(env, fresh)
    rng = np.random.default_rng(0)
    _advance_aec(env, 100_000, rng)
    assert not env.agents
    finished = COPIES[how](env)
    assert finished.agents == [] and finished.unwrapped.state_ == env.unwrapped.state_
    env.reset()
    finished.reset()
    _assert_same_aec(env, finished)


@pytest.mark.parametrize("name", card_envs.ENV_NAMES)
def test_pettingzoo_pickle_procedure(name, capsys):
    """PettingZoo's test/pickle_test.py, verbatim in substance: env(render_mode="human"), pickled before
    reset, both reset(seed=42), spaces seeded alike, then 10 steps with sampled masked actions."""
    module = env_module(name)
    env1 = module.env(render_mode="human")
    env2 = pickle.loads(pickle.dumps(env1))
    env1.reset(seed=42)
    env2.reset(seed=42)
    seed_action_spaces(env1)
    seed_action_spaces(env2)
    seed_observation_spaces(env1)
    seed_observation_spaces(env2)
    steps = 0
    for agent1, agent2 in zip(env1.agent_iter(), env2.agent_iter(), strict=False):
        if steps > 10:
            break
        assert data_equivalence(agent1, agent2)
        obs1, rew1, term1, trunc1, info1 = env1.last()
        obs2, rew2, term2, trunc2, info2 = env2.last()
        if term1 or term2 or trunc1 or trunc2:
            break
        for x, y in ((obs1, obs2), (rew1, rew2), (term1, term2), (trunc1, trunc2), (info1, info2)):
            assert data_equivalence(x, y)
        mask = obs1["action_mask"]
        action1 = env1.action_space(agent1).sample(mask=mask)
        action2 = env2.action_space(agent2).sample(mask=mask)
        assert data_equivalence(action1, action2)
        env1.step(action1)
        env2.step(action2)
        steps += 1
    assert steps == 11
    assert capsys.readouterr().out  # "human" rendered on both


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("case", CASES, ids=case_id)
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 80))
def test_game_and_state_copy_continue_identically(case, how, seed, steps):
    name, _, config = case
    game = card_envs.make_game(name, **config)
    game_twin = COPIES[how](game)
    assert game_twin.config == game.config and game_twin.observation_size == game.observation_size
    state = game.new_state(np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.is_over:
            break
        state.apply(_random_action(state.legal_mask(), rng))
    twin = COPIES[how](state)
    assert twin == state and twin.game is not state.game
    for _ in range(CONTINUE):
        for seat in range(game.num_players):
            np.testing.assert_array_equal(twin.game.encode(twin.view(seat)), game.encode(state.view(seat)))
        np.testing.assert_array_equal(twin.legal_mask(), state.legal_mask())
        if state.is_over:
            break
        action = _random_action(state.legal_mask(), rng)
        state.apply(action)
        twin.apply(action)
        assert twin.rewards == state.rewards and twin.returns() == state.returns()
    assert twin == state
    assert twin.rng.integers(2**62) == state.rng.integers(2**62)
    # a state rebuilt from the copied game deals the same from the same seed
    np.testing.assert_array_equal(game_twin.encode(game_twin.new_state(np.random.default_rng(1)).view(0)),
                                  game.encode(game.new_state(np.random.default_rng(1)).view(0)))


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("case", CASES, ids=case_id)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 40))
def test_single_agent_env_copy_continues_identically(case, how, seed, steps):
    """SingleAgentEnv with seeded random opponents: the copy carries the opponents' generators too."""
    name, _, config = case
    env = SingleAgentEnv(name, opponents=[RandomAgent(0), RandomAgent(1)], options=config)
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    over = False
    for _ in range(steps):
        observation, reward, terminated, truncated, info = env.step(_random_action(env.action_masks(), rng))
        if terminated or truncated:
            over = True
            break
    twin = COPIES[how](env)
    np.testing.assert_array_equal(twin._observation(), env._observation())
    for _ in range(CONTINUE if not over else 0):
        action = _random_action(env.action_masks(), rng)
        a, b = env.step(action), twin.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4] and data_equivalence(a[4], b[4])
        np.testing.assert_array_equal(env.action_masks(), twin.action_masks())
        if a[2] or a[3]:
            break
    first, second = env.reset(), twin.reset()  # the env's own stream: deal, seat, line-up
    np.testing.assert_array_equal(first[0], second[0])
    assert env.seat == twin.seat
