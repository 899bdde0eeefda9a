"""Checklist tests that hold for every registered game and every variant config.

Game-specific rules live in ``test_<game>_rules.py``; this module checks the shared contract of
``../shared/game-checklist.md``: PettingZoo API conformance, determinism, invariants under random
play (hypothesis), clone/serialization, no information leak, docstring tables, bad input.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, render_test, seed_test

import card_envs
from card_envs.core.errors import ConfigError, IllegalActionError
from tests.helpers import case_id, composition, env_module, game_cases, new_state, random_playout, thinned

CASES = game_cases()
NAMES = list(card_envs.ENV_NAMES)

# PettingZoo's api_test compares against hard-coded lists of its own env names; these two fire for any Dict
# observation and are the only warnings tolerated (game-checklist.md).
TOLERATED_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
)


def _strict_warnings() -> warnings.catch_warnings:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error")
    for message in TOLERATED_WARNINGS:
        warnings.filterwarnings("ignore", message=re.escape(message))
    return ctx


# -- PettingZoo conformance --------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_pettingzoo_api_test(case):
    name, _, config = case
    ctx = _strict_warnings()
    try:
        api_test(env_module(name).env(**config), num_cycles=300)
        api_test(env_module(name).raw_env(**config), num_cycles=300)
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_pettingzoo_seed_test(case):
    name, _, config = case
    seed_test(lambda: env_module(name).env(**config), num_cycles=300)


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_render_test(name, capsys):
    render_test(env_module(name).env)
    assert "player_0" in capsys.readouterr().out  # human mode printed the table


@pytest.mark.parametrize("name", NAMES)
def test_make_returns_the_wrapped_env(name):
    made = card_envs.make(name)
    direct = env_module(name).env()
    assert type(made) is type(direct)
    assert type(made.unwrapped) is env_module(name).raw_env
    assert made.metadata["name"] == name
    assert made.metadata["is_parallelizable"] is False
    assert {"ansi", "human"} <= set(made.metadata["render_modes"])


@pytest.mark.parametrize("name", NAMES)
def test_action_names_cover_the_action_space(name):
    env = env_module(name).env()
    names = env.unwrapped.action_names
    assert len(names) == env.action_space("player_0").n
    assert len(set(names)) == len(names)


def test_unknown_environment_is_a_clear_error():
    with pytest.raises(ConfigError, match="registered"):
        card_envs.make("no_such_game_v0")


# -- the environment loop: masks, rewards, observe ---------------------------------------------------


def _play_env(env, seed, rng, observe_all=False):
    """Random legal play through env(); yields per-step records for comparison."""
    env.reset(seed=seed)
    records = []
    for agent in env.agent_iter():
        if observe_all:
            for other in env.agents:
                env.observe(other)
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        records.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc,
                        action, tuple(sorted(env.rewards.items()))))
        env.step(action)
    return records


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_masks_rewards_and_infos_each_step(case):
    name, _, config = case
    env = env_module(name).env(**config)
    rng = np.random.default_rng(7)
    for seed in range(3):
        env.reset(seed=seed)
        raw = env.unwrapped
        for _agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            state = raw.state_
            for other in env.agents:
                other_obs = env.observe(other)
                seat = int(other.split("_")[1])
                if state.is_over or seat != state.current_player:
                    assert not other_obs["action_mask"].any(), f"{other} is not to act but has a mask"
                else:
                    assert np.flatnonzero(other_obs["action_mask"]).tolist() == state.legal_actions()
                np.testing.assert_array_equal(env.infos[other]["action_mask"], other_obs["action_mask"])
                assert env.observation_space(other)["observation"].contains(other_obs["observation"]) or \
                    other_obs["observation"].shape == env.observation_space(other)["observation"].shape
            assert abs(sum(env.rewards.values())) < 1e-9 or len(env.agents) < len(env.possible_agents)
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)


@pytest.mark.parametrize("name", NAMES)
def test_observe_has_no_side_effects(name):
    env_a, env_b = env_module(name).env(), env_module(name).env()
    for seed in range(3):
        plain = _play_env(env_a, seed, np.random.default_rng(seed))
        busy = _play_env(env_b, seed, np.random.default_rng(seed), observe_all=True)
        assert plain == busy


DETERMINISM_SEEDS = 21  #: the default config's seeds
VARIANT_DETERMINISM_SEEDS = 8  #: each variant config's (21 each took 31 s of the default run's workers)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_determinism_over_seeds(case):
    """Two fresh envs, same seed, same actions: identical episode; and reset(seed) repeats it (21 seeds of the
    default config, the checklist's 20+; 8 of each variant config, whose episodes run through the same seeding)."""
    name, index, config = case
    first, second = env_module(name).env(**config), env_module(name).env(**config)
    for seed in range(DETERMINISM_SEEDS if index == 0 else VARIANT_DETERMINISM_SEEDS):
        a = _play_env(first, seed, np.random.default_rng(seed))
        b = _play_env(second, seed, np.random.default_rng(seed))
        assert a == b
        assert _play_env(first, seed, np.random.default_rng(seed)) == a
    different = {tuple(r[1] for r in _play_env(first, s, np.random.default_rng(0))[:1]) for s in range(5)}
    assert len(different) > 1, "different seeds should deal differently"


@pytest.mark.parametrize("name", NAMES)
def test_reset_without_seed_continues_the_generator(name):
    env = env_module(name).env()
    env.reset(seed=3)
    first = env.observe(env.agent_selection)["observation"].tobytes()
    env.reset()
    env.reset(seed=3)
    assert env.observe(env.agent_selection)["observation"].tobytes() == first


# -- invariants under random play (hypothesis) -------------------------------------------------------


def _sum_is_zero(values):
    return abs(sum(values)) < 1e-9


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_invariants_under_random_play(name, data):
    game_class = card_envs.make_game(name).__class__
    config = data.draw(st.sampled_from(game_class.variant_configs()), label="config")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    game = card_envs.make_game(name, **config)
    state = new_state(game, seed)
    deck = composition(state)
    bound = game.max_decisions() if hasattr(game, "max_decisions") else None
    steps = 0
    rng = np.random.default_rng(seed)
    for position in random_playout(state, rng):
        assert composition(position) == deck, "a card was lost or duplicated"
        legal = position.legal_actions()
        assert legal, "a live state must offer at least one action"
        assert np.flatnonzero(position.legal_mask()).tolist() == legal
        assert _sum_is_zero(position.rewards)
        steps += 1
    assert composition(state) == deck
    assert _sum_is_zero(state.returns())
    assert not state.legal_mask().any() and state.legal_actions() == []
    if bound is not None:
        assert steps <= bound


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_clone_and_serialization_continue_identically(name, data):
    game_class = card_envs.make_game(name).__class__
    config = data.draw(st.sampled_from(game_class.variant_configs()), label="config")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    cut = data.draw(st.integers(0, 60), label="cut")
    game = card_envs.make_game(name, **config)
    state = new_state(game, seed)
    rng = np.random.default_rng(seed)
    for i, _ in enumerate(random_playout(state, rng)):
        if i == cut:
            break
    twin = state.clone()
    restored = game.state_from_dict(json.loads(json.dumps(state.to_dict())))
    assert twin == state and restored == state
    actions = []
    for _ in random_playout(state, np.random.default_rng(seed + 1)):
        pass
    actions = state.history[len(twin.history):]
    for copy in (twin, restored):
        for action in actions:
            copy.apply(action)
        assert copy.to_dict() == state.to_dict()


@pytest.mark.parametrize("name", NAMES)
def test_replay_from_seed_and_actions(name):
    from card_envs.core.engine import replay

    game = card_envs.make_game(name)
    for seed in range(5):
        state = new_state(game, seed)
        for _ in random_playout(state, np.random.default_rng(seed)):
            pass
        assert replay(game, state.history, seed=seed).to_dict() == state.to_dict()


# -- no information leak -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_observation_ignores_hidden_cards(name, data):
    """Redrawing every card a player cannot see leaves its view and observation unchanged."""
    game_class = card_envs.make_game(name).__class__
    config = data.draw(st.sampled_from(game_class.variant_configs()), label="config")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    game = card_envs.make_game(name, **config)
    state = new_state(game, seed)
    rng = np.random.default_rng(seed)
    changed = 0
    for position in thinned(random_playout(state, rng)):
        for player in range(game.num_players):
            sample = position.sample_hidden(player, rng)
            assert sample.view(player) == position.view(player)
            np.testing.assert_array_equal(game.encode(sample.view(player)), game.encode(position.view(player)))
            assert composition(sample) == composition(position)
            changed += sample.card_locations() != position.card_locations()
    assert changed, "sample_hidden never moved a hidden card: the check would be vacuous"


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_remembered_samples_keep_what_a_player_with_memory_has_seen(name, data):
    """``sample_remembered`` (search's determinizations): the sample keeps the player's view under the
    perfect-recall game -- everything seen this episode -- and is a state of that game. Where the views
    already show everything (``with_perfect_recall()`` is the game), it is ``sample_hidden`` itself."""
    game_class = card_envs.make_game(name).__class__
    config = data.draw(st.sampled_from(game_class.variant_configs()), label="config")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    game = card_envs.make_game(name, **config)
    remembering = game.with_perfect_recall()
    assert remembering.with_perfect_recall() is remembering
    state = new_state(game, seed)
    for position in thinned(random_playout(state, np.random.default_rng(seed))):
        for player in range(game.num_players):
            sample = position.sample_remembered(player, np.random.default_rng([seed, player]))
            assert sample.game is remembering
            seen = position.clone()
            seen.game = remembering
            assert sample.view(player) == seen.view(player)
            assert composition(sample) == composition(position)
            if remembering is game:
                same_draws = position.sample_hidden(player, np.random.default_rng([seed, player]))
                assert sample.to_dict() == same_draws.to_dict()


def test_revolution_remembered_samples_keep_the_earlier_tricks():  # spec 7.3: what perfect memory knows
    """Without ``full_recall`` a plain sample may redeal the cards of earlier tricks (the view no longer
    shows them); a remembered one never does, and rule-based players acting in it see the hand so far."""
    from agents.players.base import Decision

    game = card_envs.make_game("revolution_v0")
    rng = np.random.default_rng(0)
    state = new_state(game, 3)
    while state.trick_number < 5:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    earlier = [record[1:5] for record in state.hand_log[:-1]]
    assert earlier, "needs completed tricks before the previous one"
    decision = Decision.of(state)
    plain_moved = 0
    for _ in range(20):
        remembered = decision.sample_state(rng, remember=True)
        assert [record[1:5] for record in remembered.hand_log[:-1]] == earlier
        assert Decision.of(remembered).view.recall  # the agents acting in the sample remember the hand
        plain = decision.sample_state(rng)
        plain_moved += [record[1:5] for record in plain.hand_log[:-1]] != earlier
    assert plain_moved, "the plain samples never redealt an earlier trick: the contrast would be vacuous"


# -- documentation agrees with the spaces -------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_docstring_tables_match_spaces(case):
    name, _, config = case
    env = env_module(name).env(**config)
    game = env.unwrapped.game
    doc = env_module(name).__doc__
    assert f"Discrete({game.num_actions})" in doc
    layout = game.observation_layout()
    assert layout[0][0] == 0 and layout[-1][1] == game.observation_size
    for (_, stop, _), (start, _, _) in zip(layout, layout[1:], strict=False):
        assert stop == start, f"layout blocks must tile the observation: gap or overlap at {stop}/{start}"
    assert env.observation_space("player_0")["observation"].shape == (game.observation_size,)
    env.reset(seed=0)
    assert env.observe("player_0")["observation"].shape == (game.observation_size,)
    encoding_doc = game.encoding_doc()
    for start, _stop, _ in layout:
        first = str(start)
        assert re.search(rf"(^|\s){first}(\s|-|,|$)", encoding_doc, re.M), \
            f"observation block starting at {start} is not documented in the encoding table"


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_unknown_option_is_a_clear_error(name):
    with pytest.raises(ConfigError, match="no_such_option"):
        env_module(name).env(no_such_option=1)
    with pytest.raises(ConfigError, match="render_mode"):
        env_module(name).env(render_mode="rgb_array_list")


@pytest.mark.parametrize("name", NAMES)
def test_illegal_action_through_raw_env_raises_and_changes_nothing(name):
    env = env_module(name).raw_env()
    env.reset(seed=0)
    state = env.state_
    legal = state.legal_actions()
    illegal = [a for a in range(env.game.num_actions) if a not in legal]
    before = state.to_dict()
    for bad in illegal[:3] + [env.game.num_actions, -1, "x", None, 1.5]:
        with pytest.raises(IllegalActionError) as err:
            env.step(bad)
        assert "legal:" in str(err.value)
        for a in legal:
            assert env.game.action_names[a] in str(err.value)
        assert state.to_dict() == before
        assert env.agent_selection == f"player_{state.current_player}"


@pytest.mark.parametrize("name", NAMES)
def test_unknown_reset_option_is_a_clear_error(name):
    """An unknown reset-option key raises ConfigError naming it and every valid key, like a bad config option,
    through the engine, env() and raw_env(); the env keeps the episode it had."""
    game = card_envs.make_game(name)
    assert game.reset_options, "every game stacks decks through reset options"
    with pytest.raises(ConfigError) as err:
        game.new_state(np.random.default_rng(0), {"not_an_option": True})
    assert "'not_an_option'" in str(err.value)
    assert all(repr(key) in str(err.value) for key in game.reset_options)
    for env in (env_module(name).env(), env_module(name).raw_env()):
        env.reset(seed=1)
        before = env.observe(env.agent_selection)["observation"].copy()
        with pytest.raises(ConfigError, match="not_an_option"):
            env.reset(seed=2, options={"not_an_option": True, "options": 1})
        np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], before)
    option = next(iter(game.config.to_dict()))  # a game option given to reset by mistake is named as such
    with pytest.raises(ConfigError, match=f"'{option}': a game option"):
        game.new_state(np.random.default_rng(0), {option: 1})


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_probe_reset_option_is_ignored(name):
    """pettingzoo.test.api_test and parallel_test call reset(seed=0, options={"options": 1}); that one key is
    accepted and changes nothing (card_envs.core.engine.PROBE_RESET_OPTIONS)."""
    import importlib
    import inspect

    probe = 'options={"options": 1}'  # the probe we let through, in both stock checks
    for module in ("pettingzoo.test.api_test", "pettingzoo.test.parallel_test"):
        assert probe in inspect.getsource(importlib.import_module(module))
    env = env_module(name).env()
    env.reset(seed=1, options={"options": 1})
    a = env.observe(env.agent_selection)["observation"]
    env.reset(seed=1)
    np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], a)


@pytest.mark.parametrize("name", NAMES)
def test_winners_are_exactly_the_seats_with_a_positive_result(name):
    """winners(): the rules' winner set, except that a draw (every seat shares the result) has no winner,
    so a win always means a positive reward and a draw pays every seat 0 (default reward modes)."""
    game = card_envs.make_game(name)
    for seed in range(40):
        state = new_state(game, seed)
        for _ in random_playout(state, np.random.default_rng(seed)):
            pass
        returns, winners, rules = state.returns(), state.winners(), state.rules_winners()
        assert set(winners) <= set(rules)
        assert all(returns[seat] > 0 for seat in winners), (winners, returns)
        if state.terminated and not winners:
            assert len(rules) == game.num_players and all(abs(r) < 1e-9 for r in returns)
