"""card_envs.openspiel: the games as pyspiel Python games, on the rules engines.

OpenSpiel's own checks (``random_sim_test``, the serialization round trip) on every game (Battlecards at 2, 3
and 6 players), the observation tensor against our encoding, information states against what a seat can
know, resampling, explicit chance with a stacked deck (and CFR on it), and its Python ISMCTS bot.
Configs are kept short so these stay seconds; the long runs are in benchmarks/openspiel_ismcts.py.
"""

from __future__ import annotations

import pickle

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability
from open_spiel.python.algorithms.ismcts import ISMCTSBot
from open_spiel.python.algorithms.mcts import RandomRolloutEvaluator

import card_envs
import card_envs.openspiel as cos
from card_envs.core.errors import ConfigError, DeckError

#: (OpenSpiel name, parameters): short configs of every game, Battlecards at 2, 3 and 6 players
CASES = [
    ("python_card_envs_revolutionary_war", {}),
    ("python_card_envs_revolution", {"num_hands": 1}),
    ("python_card_envs_battlecards", {"num_players": 2, "max_rounds": 40}),
    ("python_card_envs_battlecards", {"num_players": 3, "max_rounds": 40}),
    ("python_card_envs_battlecards", {"num_players": 6, "max_rounds": 25, "first_leader": -1}),
    ("python_card_envs_bloodlines", {"max_turns": 30, "bloodlines": "HS"}),
]
IDS = [f"{name.removeprefix('python_card_envs_')}-{'-'.join(f'{k}={v}' for k, v in p.items())}" for name, p in CASES]
#: a Battlecards config whose only chance is the deal of a small stacked deck: explicit chance, a small tree
TINY = {"deck": "2C 3C 4D 5D", "shuffle_mid_game": False, "hand_size": 2, "war_facedown_count": 0,
        "max_rounds": 3}


def load(name, params, seed=0):
    return pyspiel.load_game(name, {**params, "rng_seed": seed})


def play(state, rng, steps):
    """Random play for ``steps`` decisions (chance nodes included), stopping at the end."""
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_every_game_is_registered_with_its_options_as_parameters():
    registered = {g.short_name: g for g in pyspiel.registered_games()}
    assert set(cos.GAME_NAMES) <= set(registered)
    for short_name, env_name in cos.GAME_NAMES.items():
        engine = card_envs.make_game(env_name)
        spec = registered[short_name].parameter_specification
        assert set(engine.config.to_dict()) | {"rng_seed", "deck"} == set(spec)
        assert registered[short_name].chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    bc = registered["python_card_envs_battlecards"]
    assert (bc.min_num_players, bc.max_num_players) == (2, 6)


def test_parameters_map_to_engine_options():
    game = pyspiel.load_game("python_card_envs_battlecards", {"num_players": 3, "first_leader": -1,
                                                              "max_rounds": -1, "jokers": True})
    config = game.engine.config
    assert (config.num_players, config.first_leader, config.max_rounds, config.jokers) == (3, None, None, True)
    assert game.num_players() == 3 and game.num_distinct_actions() == 14
    revolution = pyspiel.load_game("python_card_envs_revolution", {"first_dealer": -1, "num_hands": 2})
    assert revolution.engine.config.first_dealer == "random" and revolution.engine.config.num_hands == 2
    bloodlines = pyspiel.load_game("python_card_envs_bloodlines", {"bloodlines": "HS"})
    assert bloodlines.engine.config.bloodlines == ("H", "S")
    assert pyspiel.load_game("python_card_envs_bloodlines").engine.config.bloodlines is None


def test_bad_parameters_are_clear_errors():
    with pytest.raises(Exception, match="no_such"):
        pyspiel.load_game("python_card_envs_revolution", {"no_such": 1})
    with pytest.raises(ConfigError, match="num_players"):
        pyspiel.load_game("python_card_envs_battlecards", {"num_players": 9})
    with pytest.raises(DeckError):
        pyspiel.load_game("python_card_envs_battlecards", {"deck": "2C 2C", "shuffle_mid_game": False})
    with pytest.raises(ConfigError, match="reset option 'deck'"):
        pyspiel.load_game("python_card_envs_bloodlines", {"deck": "2C 3C"})
    with pytest.raises(ConfigError, match="draw nothing more at random"):
        pyspiel.load_game("python_card_envs_battlecards", {"deck": "2C 3C 4C", "first_leader": -1})


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_random_sim_test_passes(name, params):
    """OpenSpiel's own simulation test: clones, legal actions, rewards summing to returns within the utility
    range, the game-length bound. serialize=False as for every sampled-chance Python game: pyspiel 2.0.2 cannot
    write a Python game's generator (Game::GetRNGState); the state round trip is tested below."""
    pyspiel.random_sim_test(load(name, params), num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_state_serialization_round_trip_and_clone_continue_identically(name, params):
    game = load(name, params, seed=3)
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(6):
        play(state, rng, 15)
        for copy in (game.deserialize_state(state.serialize()), state.clone(), pickle.loads(pickle.dumps(state))):
            assert str(copy) == str(state) and copy.history() == state.history()
            follow = np.random.default_rng(1)
            a, b = play(state.clone(), follow, 40), play(copy, np.random.default_rng(1), 40)
            assert str(a) == str(b) and a.returns() == b.returns()
            for p in range(game.num_players()):
                assert a.information_state_string(p) == b.information_state_string(p)


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_observation_tensor_is_our_encoding(name, params):
    game = load(name, params, seed=5)
    state = play(game.new_initial_state(), np.random.default_rng(2), 30)
    position = state.engine_state
    for p in range(game.num_players()):
        np.testing.assert_array_equal(np.asarray(state.observation_tensor(p), np.float32),
                                      game.engine.encode(position.view(p)))
        remembering = game.engine.with_perfect_recall()
        assert len(state.information_state_tensor(p)) == remembering.observation_size
    assert game.observation_tensor_shape() == [game.engine.observation_size]


def test_before_the_deal_tensors_are_zeros_and_the_deal_is_sampled():
    game = load("python_card_envs_revolutionary_war", {})
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(cos.DEAL, 1.0)]
    assert not any(state.observation_tensor(0)) and not any(state.information_state_tensor(1))
    state.apply_action(cos.DEAL)
    assert state.current_player() in (0, 1)
    # two states of one seeded game deal differently; the same seed deals the same
    other = game.new_initial_state()
    other.apply_action(cos.DEAL)
    assert str(other) != str(state)
    again = load("python_card_envs_revolutionary_war", {}).new_initial_state()
    again.apply_action(cos.DEAL)
    assert str(again) == str(state)


@pytest.mark.parametrize(("name", "params"), CASES[:3] + CASES[5:], ids=IDS[:3] + IDS[5:])
def test_resampled_states_keep_the_players_information_and_redraw_the_rest(name, params):
    game = load(name, params, seed=11)
    state = play(game.new_initial_state(), np.random.default_rng(4), 25)
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    samples = [state.resample_from_infostate(player, sampler) for _ in range(12)]
    for sample in samples:
        assert sample.information_state_string(player) == state.information_state_string(player)
        assert sample.information_state_tensor(player) == state.information_state_tensor(player)
        assert sample.observation_tensor(player) == state.observation_tensor(player)
        assert sample.legal_actions() == state.legal_actions()
        other = (player + 1) % game.num_players()
        assert sample.information_state_string(other) != state.information_state_string(other)  # derived only
    assert len({str(s) for s in samples}) > 1  # hidden cards really redrawn
    play(samples[0], np.random.default_rng(0), 10_000)  # a sample plays on to the end
    assert samples[0].is_terminal()


def test_information_state_strings_tell_histories_apart_by_what_the_seat_saw():
    """The same deal, two different first moves: the mover's information state differs; a seat's string is
    stable under cloning."""
    game = load("python_card_envs_revolutionary_war", {}, seed=2)
    root = game.new_initial_state()
    root.apply_action(cos.DEAL)
    mover = root.current_player()
    legal = root.legal_actions()
    first, second = root.child(legal[0]), root.child(legal[-1])
    assert first.information_state_string(mover) != second.information_state_string(mover)
    assert first.clone().information_state_string(mover) == first.information_state_string(mover)


def test_explicit_chance_with_a_stacked_deck_passes_the_full_serialization_round_trip():
    game = pyspiel.load_game("python_card_envs_battlecards", TINY)
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    state = game.new_initial_state()
    assert sorted(a for a, _ in state.chance_outcomes()) == sorted(game._deck_ids())
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)  # SerializeGameAndState too
    again, restored = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, play(
        game.new_initial_state(), np.random.default_rng(0), 8)))
    assert str(again) == str(game) and restored.history()


def test_cfr_runs_on_the_tiny_explicit_game_and_lowers_nash_conv():
    game = pyspiel.load_game("python_card_envs_battlecards", TINY)
    solver = cfr.CFRSolver(game)
    uniform = exploitability.nash_conv(game, solver.average_policy())
    for _ in range(8):
        solver.evaluate_and_update_policy()
    after = exploitability.nash_conv(game, solver.average_policy())
    assert uniform > 0.05  # the tiny game has real choices
    assert after < uniform / 2


@pytest.mark.parametrize(("name", "params"), [
    CASES[0], CASES[5], pytest.param(*CASES[3], marks=pytest.mark.slow),
    pytest.param(*CASES[1], marks=pytest.mark.slow)], ids=[IDS[0], IDS[5], IDS[3], IDS[1]])
def test_openspiel_python_ismcts_bot_plays_a_game(name, params):
    game = load(name, params, seed=1)
    rng = np.random.RandomState(0)
    bot = ISMCTSBot(game, RandomRolloutEvaluator(1, rng), uct_c=1.0, max_simulations=8, random_state=rng)
    sampler = pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    state = game.new_initial_state()
    picks = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(cos.DEAL)
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
        else:
            state.apply_action(int(picks.choice(state.legal_actions())))
    assert sum(state.returns()) == pytest.approx(0.0, abs=1e-9)


def test_importing_card_envs_does_not_import_pyspiel():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import sys, card_envs; print('pyspiel' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
