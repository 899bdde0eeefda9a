"""Revolutionary War's rule-based players: legal, view-only, and the endgame solver is exact (spec section 11)."""

from __future__ import annotations

import numpy as np
import pytest

import card_envs
from agents.players.base import Decision
from agents.players.registry import agent_names, make_agent, strongest_heuristic
from agents.players.revolutionary_war import ExactEndgame, _after, best_endgame_move, endgame_position
from agents.tournaments.match import contest, play_game, wilson
from card_envs.core.errors import ConfigError

GAME = "revolutionary_war_v0"


def test_registry_lists_random_and_every_heuristic():
    assert agent_names(GAME) == ["random", "heuristic:cheapest", "heuristic:pot", "heuristic:endgame"]
    assert strongest_heuristic(GAME) == "heuristic:endgame"
    with pytest.raises(ConfigError, match="known: random, heuristic:cheapest"):
        make_agent(GAME, "heuristic:nope")


@pytest.mark.parametrize("spec", ["random", "heuristic:cheapest", "heuristic:pot", "heuristic:endgame"])
def test_agents_play_legal_moves_to_the_end(spec):
    game = card_envs.make_game(GAME, target_score=60)
    for seed in range(5):
        state = play_game(game, [make_agent(GAME, spec, seed), make_agent(GAME, "random", seed)], seed)
        assert state.terminated  # play_game would have raised on an illegal action


def _exact_value(state, me):
    """Brute force through the engine: best final (score difference, +-0.5 on a tie) for ``me``."""
    if state.is_over:
        scores = state.scores()
        diff = scores[me] - scores[1 - me]
        return diff if diff else (0.5 if state.winner == me else -0.5)
    values = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        values.append(_exact_value(child, me))
    return max(values) if state.current_player == me else min(values)


def _endgame_positions(count):
    game = card_envs.make_game(GAME)
    rng = np.random.default_rng(11)
    cheap = make_agent(GAME, "heuristic:cheapest")
    found = 0
    seed = 0
    while found < count:
        seed += 1
        state = game.new_state(np.random.default_rng(seed))
        while not state.is_over:
            if not state.deck and len(state.legal_actions()) > 1 and rng.random() < 0.3:
                found += 1
                yield state.clone()
                break
            state.apply(cheap.act(Decision.of(state)))


def test_R13_R14_R16_endgame_solver_matches_brute_force():
    """Once the deck is empty the game has perfect information (section 7); the solver must be exact."""
    solver = ExactEndgame(0)
    for state in _endgame_positions(25):
        me = state.current_player
        choice = solver.act(Decision.of(state))
        child = state.clone()
        child.apply(choice)
        best = _exact_value(state, me)
        assert _exact_value(child, me) == best, state.render()


def test_R13_R14_R16_endgame_solver_values_every_move_exactly():
    """The solver's value of each legal move equals the engine's brute-force value of that move."""
    for state in _endgame_positions(25):
        me = state.current_player
        position = endgame_position(state.view(me))
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            assert _after(action, *position) == _exact_value(child, me)


def test_R13_R14_R16_alpha_beta_picks_the_first_best_move_of_the_full_solver():
    """The player's alpha-beta search chooses what the full solver's values choose (first best in legal order)."""
    game = card_envs.make_game(GAME)
    rng = np.random.default_rng(5)
    checked = 0
    for seed in range(60):
        state = game.new_state(np.random.default_rng(1000 + seed))
        while not state.is_over:
            legal = state.legal_actions()
            if not state.deck and len(legal) > 1:
                position = endgame_position(state.view(state.current_player))
                expected = max(legal, key=lambda action: _after(action, *position))
                assert best_endgame_move(legal, *position) == expected, state.render()
                checked += 1
            state.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 100


def test_stronger_players_win_more_with_confidence():
    """Small deterministic version of the 2,000-game report: each heuristic beats random; endgame beats cheapest."""
    assert contest(GAME, "heuristic:cheapest", "random", 200, progress=False).interval[0] > 0.5
    assert contest(GAME, "heuristic:endgame", "heuristic:cheapest", 400, progress=False).interval[0] > 0.5


def test_wilson_interval_known_values():
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson(50, 100)
    assert (low, high) == pytest.approx((0.4038, 0.5962), abs=1e-4)


def test_contest_rotates_seats_and_replays_each_deal():
    """Identical agents on mirrored deals: every deal is won once in each seat order only if results are
    seat-symmetric; a deterministic agent against itself must split exactly 50/50."""
    result = contest(GAME, "heuristic:cheapest", "heuristic:cheapest", 100, progress=False)
    assert result.wins == 50 and result.opponent_wins == 50
    again = contest(GAME, "heuristic:cheapest", "heuristic:cheapest", 100, progress=False, workers=2)
    assert again == result
