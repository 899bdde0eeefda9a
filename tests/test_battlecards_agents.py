"""Battlecards' rule-based players (spec section 11): registry, legal play for every player count and
variant, view-only decisions, the helpers' card counting, and the documented behaviour of each player.
Strength over >= 2000 games is measured by ``python -m agents.match`` (results in
benchmarks/results/battlecards_match_*p.md); a smaller strength check runs here."""

from __future__ import annotations

import numpy as np
import pytest

import card_envs
from agents.players.base import Decision
from agents.players.battlecards import (
    CardCounter,
    CheapestWinner,
    chance_hand_below,
    kind_value,
    shown_values,
    still_to_show,
)
from agents.players.registry import agent_names, make_agent, strongest_heuristic
from agents.tournaments.match import contest, play_game
from card_envs.battlecards.rules import KIND_NAMES, WAR_UP, Battlecards
from card_envs.core.errors import ConfigError

GAME = "battlecards_v0"


def deal(deck: str, **config):
    return Battlecards(**config).new_state(np.random.default_rng(0), {"deck": deck.split()})


def kind(name: str) -> int:
    return KIND_NAMES.index(name)


def test_registry_lists_random_and_every_heuristic():
    assert agent_names(GAME) == ["random", "heuristic:cheapest", "heuristic:counter"]
    assert strongest_heuristic(GAME) == "heuristic:counter"
    with pytest.raises(ConfigError, match="known: random, heuristic:cheapest"):
        make_agent(GAME, "heuristic:nope")


@pytest.mark.parametrize("spec", ["random", "heuristic:cheapest", "heuristic:counter"])
@pytest.mark.parametrize("config", [
    {"num_players": 2}, {"num_players": 3, "jokers": True}, {"num_players": 4, "retire_lowest_on_flip": True},
    {"num_players": 5, "hand_size": 2, "war_facedown_count": 5}, {"num_players": 6, "cease_fire": True},
])
def test_agents_play_legal_moves_to_the_end(spec, config):
    game = card_envs.make_game(GAME, max_rounds=150, **config)
    n = game.num_players
    for seed in range(2):
        lineup = [make_agent(GAME, spec if s == seed % n else "heuristic:cheapest", seed + s) for s in range(n)]
        state = play_game(game, lineup, seed)
        assert state.is_over  # play_game raises on an illegal action


def test_agents_decide_from_the_view_only():
    """Redealing the hidden cards (same view) never changes a decision."""
    game = card_envs.make_game(GAME, num_players=3)
    rng = np.random.default_rng(5)
    agents = [CheapestWinner(0), CardCounter(0)]
    checked = 0
    for seed in range(3):
        state = game.new_state(np.random.default_rng(seed))
        while not state.is_over and checked < 300:
            decision = Decision.of(state)
            twin = state.sample_hidden(state.current_player, rng)
            for agent in agents:
                assert agent.act(decision) == agent.act(Decision.of(twin))
            checked += 1
            state.apply(agents[checked % 2].act(decision))
    assert checked == 300


def test_cheapest_follows_with_the_lowest_winner_and_leads_low():  # 11.2
    s = deal("9C 8D 2C QD 3C 10D 4C 2D KC 3D", num_players=2)  # P0 {9,2,3,4,K}, P1 {8,Q,10,2,3}
    agent = CheapestWinner(0)
    assert agent.act(Decision.of(s)) == kind("2")  # lead the lowest
    s.apply(kind("9"))
    assert agent.act(Decision.of(s)) == kind("10")  # the lowest card above 9
    s2 = deal("AC 8D 2C QD 3C 10D 4C 2D KC 3D")
    s2.apply(kind("A"))
    assert agent.act(Decision.of(s2)) == kind("2")  # nothing beats an ace: throw the lowest


def test_counter_shows_a_strong_war_card_when_it_shows_first():  # 11.3: S4's war
    s = deal("9C 9D 2C 2D 3C 3D 4C 4D AC KD 5C 5D 6C 6D 7C 7D 8C 8D")
    s.apply(kind("9"))
    s.apply(kind("9"))
    assert s.phase == WAR_UP and s.current_player == 1
    decision = Decision.of(s)
    assert CheapestWinner(0).act(decision) == kind("2")  # nothing shown yet: its lowest
    assert CardCounter(0).act(decision) == kind("K")  # P0 may hold an ace; K is its best chance
    s.apply(kind("K"))
    assert CardCounter(0).act(Decision.of(s)) == kind("A")  # last to show: the cheapest winner


def test_counter_throws_its_lowest_when_others_follow_later():  # 11.3, 3 players
    s = deal("5C 9D QH 2C 2D 2H 3C 3D 3H 4C 10D 4H AC JD KH", num_players=3)
    s.apply(kind("5"))  # P0 leads 5; P1 {9,2,3,10,J} follows with P2 still to play
    decision = Decision.of(s)
    assert still_to_show(decision.view) == [2]
    assert CheapestWinner(0).act(decision) == kind("9")
    assert CardCounter(0).act(decision) == kind("2")


def test_helpers_read_the_table():
    s = deal("9C 9D 2C 2D 3C 3D 4C 4D AC KD 5C 5D 6C 6D 7C 7D 8C 8D")
    s.apply(kind("9"))
    view = s.view(1)
    assert shown_values(view) == [9] and still_to_show(view) == []
    s.apply(kind("9"))
    view = s.view(1)
    assert shown_values(view) == [] and still_to_show(view) == [0]
    s.apply(kind("K"))
    assert shown_values(s.view(0)) == [13]


def test_chance_hand_below_is_exact_for_a_known_hand():  # 7.5: K_p is the hand after a recycle
    s = deal("AC 9D KC 8D QC 7D 2C 6D 3C 5D JC 4D 10C 2D", shuffle_mid_game=False)
    for action in ("A", "5", "2", "9", "2", "3", "K", "4", "10", "6", "J", "8", "Q", "7"):
        s.apply(kind(action))
    view = s.view(0)  # P1 recycled [2C, 9D]: its hand is known exactly
    assert view.unknown[1] == 0 and view.pile_sizes[1] == 0
    assert chance_hand_below(view, 1, 9, strict=True) == 1.0
    assert chance_hand_below(view, 1, 9, strict=False) == 0.0
    assert chance_hand_below(view, 1, 2, strict=False) == 0.0


def test_joker_value_follows_jv():  # R20
    s = deal("X1 2D", jokers=True, joker_initial_value=12)
    assert kind_value(s.view(0), 13) == 12


def test_counter_beats_cheapest_and_random_in_a_small_match():  # 11: ordering (full runs: agents.tournaments.match)
    beat_random = contest(GAME, "heuristic:counter", "random", 40, seed=1, progress=False)
    assert beat_random.interval[0] > 0.5
    beat_cheapest = contest(GAME, "heuristic:counter", "heuristic:cheapest", 120, seed=2, progress=False)
    assert beat_cheapest.win_rate > 0.5


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4])
def test_strength_ordering_over_2000_games(n):  # 11: each beats random, counter beats cheapest
    config = {"num_players": n}
    for agent, field in (("heuristic:cheapest", "random"), ("heuristic:counter", "random"),
                         ("heuristic:counter", "heuristic:cheapest")):
        result = contest(GAME, agent, field, 2000, seed=0, config=config, workers=2, progress=False)
        assert result.interval[0] > 1 / n, (agent, field, result.row())
