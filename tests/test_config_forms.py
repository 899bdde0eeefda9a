"""One option, one value (issue 44): an option given as a list (what JSON, YAML and saved games give) or as a
tuple (what Python callers write) is the same option for every consumer of a config.

Every game's ``variant_configs()``, in its JSON round-trip form (lists) and in its tuple form: the configs are
equal and hash alike, and the Python engine, ``card_envs.jax.make`` / ``from_state`` on a mid-game position,
the OpenSpiel game and a saved-game round trip accept both and agree (observations and legal masks after the
same actions). The canonical form itself is a hypothesis property over mixed list/tuple nestings.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import card_envs
from card_envs.core.config import GameConfig
from card_envs.core.engine import GameState
from card_envs.core.errors import ConfigError
from tests.helpers import case_id, game_cases

CASES = game_cases()
#: decisions played before a position is compared (mid-game in every variant)
DECISIONS = 25


def as_lists(options: dict[str, Any]) -> dict[str, Any]:
    """The options as JSON gives them back: every sequence a list."""
    return json.loads(json.dumps(options))


def as_tuples(value: Any) -> Any:
    """Every list (at any depth) as a tuple; a dict's values converted alike."""
    if isinstance(value, dict):
        return {key: as_tuples(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(as_tuples(item) for item in value)
    return value


def both_forms(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    listed = as_lists(options)
    return listed, as_tuples(listed)


def play(game: Any, decisions: int, seed: int = 0) -> tuple[GameState, list[tuple[np.ndarray, list]]]:
    """A seeded deal and up to ``decisions`` seeded random legal actions; the final state and what each step
    showed (the legal mask, every seat's observation)."""
    state = game.new_state(np.random.default_rng(seed))
    choices = np.random.default_rng(seed + 1)
    seen = []
    for _ in range(decisions):
        seen.append((state.legal_mask(), [game.encode(state.view(p)) for p in range(game.num_players)]))
        if state.is_over:
            break
        state.apply(int(choices.choice(state.legal_actions())))
    return state, seen


def assert_same_play(one: list, other: list) -> None:
    assert len(one) == len(other)
    for (mask, observations), (other_mask, other_observations) in zip(one, other, strict=True):
        assert np.array_equal(mask, other_mask)
        for seen, other_seen in zip(observations, other_observations, strict=True):
            assert np.array_equal(seen, other_seen)


# -- the config itself ---------------------------------------------------------------------------------------


def mixed_forms(value: Any) -> st.SearchStrategy:
    """Every way of writing ``value`` with lists and tuples mixed at each depth."""
    if isinstance(value, (list, tuple)):
        items = st.tuples(*(mixed_forms(item) for item in value))
        return items.flatmap(lambda parts: st.sampled_from([list(parts), tuple(parts)]))
    return st.just(value)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_mix_of_lists_and_tuples_builds_one_config(data):
    name, _, options = data.draw(st.sampled_from(CASES), label="case")
    written = {key: data.draw(mixed_forms(value), label=key) for key, value in options.items()}
    reference = card_envs.make_game(name, **as_tuples(options)).config
    config = card_envs.make_game(name, **written).config
    assert config == reference and hash(config) == hash(reference)
    assert config.to_dict() == reference.to_dict()
    assert type(config).from_options(**json.loads(json.dumps(config.to_dict()))) == reference
    assert config.same_as(config.to_dict()) and config.same_as(as_tuples(config.to_dict()))


def test_sequences_are_held_as_tuples_and_written_as_lists():
    config = card_envs.make_game("bloodlines_v0", bloodlines=["d", "S"]).config
    assert config.bloodlines == ("D", "S") and config.to_dict()["bloodlines"] == ["D", "S"]
    assert hash(config) == hash(card_envs.make_game("bloodlines_v0", bloodlines=("D", "S")).config)


def test_numbers_are_held_as_their_option_kind():
    config = card_envs.make_game("battlecards_v0", num_players=np.int64(3), shaping_weight=1).config
    assert type(config.num_players) is int and type(config.shaping_weight) is float
    assert json.dumps(config.to_dict())  # a numpy scalar would not be JSON-safe


def test_a_directly_built_config_is_canonical_too():
    config_class = card_envs.make_game("bloodlines_v0").config_class
    assert config_class(bloodlines=["h", "c"]) == config_class.from_options(bloodlines=("H", "C"))


@pytest.mark.parametrize(("options", "message"), [
    ({"bloodlines": "SH"}, "'bloodlines' must be a list or tuple"),
    ({"bloodlines": ["S"]}, "'bloodlines' must be two suits"),
    ({"bloodlines": ["S", "s"]}, "'bloodlines' must name two different suits"),
    ({"bloodlines": [["S"], "H"]}, "'bloodlines' must be two suits"),
    ({"shaping_weight": [1.0]}, "'shaping_weight' must be float"),
])
def test_bad_sequence_values_are_still_clear_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        card_envs.make_game("bloodlines_v0", **options)


def test_a_config_class_declares_no_list_option():
    """A ``list`` annotation would make a config unhashable: sequence options are ``tuple[...]``."""
    for name in card_envs.ENV_NAMES:
        config_class: type[GameConfig] = card_envs.make_game(name).config_class
        for annotation in config_class.__annotations__.values():
            assert "list" not in str(annotation), (name, annotation)


# -- every consumer, both forms ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_python_engine_and_saved_games_agree_on_both_forms(case):
    from agents.tournaments.saved_games import game_record, load_game, replay_saved

    name, _, options = case
    listed, tupled = both_forms(options)
    games = [card_envs.make_game(name, **listed), card_envs.make_game(name, **tupled)]
    assert games[0].config == games[1].config and hash(games[0].config) == hash(games[1].config)
    (state, seen), (other, other_seen) = (play(game, DECISIONS) for game in games)
    assert_same_play(seen, other_seen)
    assert state == other and state.to_dict() == other.to_dict()
    for game, position in zip(games, (state, other), strict=True):
        assert game.state_from_dict(json.loads(json.dumps(position.to_dict()))) == state
        record = json.loads(json.dumps(game_record(position, seed=0, agents=["random"] * game.num_players)))
        saved = load_game(record)
        assert saved.game.config == games[0].config and replay_saved(saved) == state


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_jax_make_and_from_state_agree_on_both_forms(case):
    import card_envs.jax as jax_engines  # every game has a JAX engine: a missing one fails here, not skips

    name, _, options = case
    listed, tupled = both_forms(options)
    game = card_envs.make_game(name, **listed)
    assert jax_engines.make(name, **listed).config == jax_engines.make(name, **tupled).config == game.config
    states = [play(card_envs.make_game(name, **form), DECISIONS)[0] for form in (listed, tupled)]
    converted = [jax_engines.from_state(state) for state in states]
    for field in ("current_player", "observation", "legal_action_mask", "rewards", "terminated", "truncated"):
        assert np.array_equal(getattr(converted[0], field), getattr(converted[1], field)), field
    if not states[0].is_over:
        assert np.array_equal(converted[0].legal_action_mask, states[0].legal_mask().astype(bool))
        assert np.array_equal(converted[0].observation, game.encode(states[0].view(states[0].current_player)))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_openspiel_game_agrees_on_both_forms(case):
    import pyspiel  # the [openspiel] extra is part of the test setup: missing, it fails

    import card_envs.openspiel as cos

    name, _, options = case
    short_name = next(short for short, env_name in cos.GAME_NAMES.items() if env_name == name)
    listed, tupled = both_forms(options)
    game = card_envs.make_game(name, **listed)
    parameters = cos.parameters_from_options(game.config_class, listed)
    assert parameters == cos.parameters_from_options(game.config_class, tupled)
    spiel = pyspiel.load_game(short_name, parameters)
    assert spiel.engine.config == game.config
    expected, _ = play(game, DECISIONS)
    state = spiel.new_initial_state_from_seed(0)
    state.apply_action(cos.DEAL)
    for action in expected.history:
        state.apply_action(action)
    assert state.engine_state == expected
    if not expected.is_over:
        for seat in range(game.num_players):
            assert np.array_equal(state.observation_tensor(seat), game.encode(expected.view(seat)))
