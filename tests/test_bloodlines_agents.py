"""Bloodlines rule-based players (spec section 11): legal, view-only, deterministic, the behaviours each
one promises, and stronger than random (small samples here; the 2,000-game figures are in the report)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import card_envs
from agents.players.base import Decision, RandomAgent
from agents.players.bloodlines import AGENTS, STRONGEST, GreedyAggressor, ThreatAwareDefender
from agents.players.registry import heuristic_agents, make_agent, strongest_heuristic
from agents.tournaments.match import play_game
from card_envs.bloodlines.rules import ACTION_NAMES, MAIN, Bloodlines, BloodlinesState
from card_envs.cards import card_codes

PAIRS = [a + b for a, b in itertools.permutations("CDHS", 2)]
ID = {name: index for index, name in enumerate(ACTION_NAMES)}
GAME = "bloodlines_v0"


def deal(p0=(), p1=(), **config) -> BloodlinesState:
    config.setdefault("starting_player", 0)
    return Bloodlines(**config).new_state(np.random.default_rng(0), {"decks": [list(p0), list(p1)]})


def play(state: BloodlinesState, *names: str) -> None:
    for name in names:
        state.apply(ID[name])


def hand_codes(state: BloodlinesState, player: int) -> set[str]:
    return set(card_codes(state.hands[player]))


def choice(agent_class, state: BloodlinesState) -> str:
    return ACTION_NAMES[agent_class(seed=0).act(Decision.of(state))]


def main_choice(agent_class, state: BloodlinesState) -> str:
    """Apply the agent's resource actions and ``end step 1``, and return its next choice."""
    agent = agent_class(seed=0)
    while True:
        action = agent.act(Decision.of(state))
        if ID["discard 2C"] <= action < ID["end step 1"] or action > ID["end step 1"]:
            return ACTION_NAMES[action]
        state.apply(action)


def test_registry_lists_the_agents_weakest_first():
    assert list(heuristic_agents(GAME)) == ["aggressor", "defender"] == list(AGENTS)
    assert STRONGEST == "defender" and strongest_heuristic(GAME) == "heuristic:defender"
    assert make_agent(GAME, "heuristic:aggressor").name == "heuristic:aggressor"


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("name", list(AGENTS))
def test_agents_play_only_legal_actions_for_every_suit_pair(name, pair):
    config = {"bloodlines": tuple(pair)}
    for seed, extra in enumerate([{}, {"allow_pass": True, "hand_limit": 5}, {"auto_skip_forced": False,
                                                                              "joker_cost": 10}]):
        game = Bloodlines(**config, **extra)
        agents = [AGENTS[name](seed=seed), RandomAgent(seed=seed)]
        for rotation in (0, 1):
            lineup = agents[::-1] if rotation else agents
            state = play_game(game, lineup, deal_seed=seed)  # apply() raises on an illegal action
            assert state.is_over


@pytest.mark.parametrize("name", list(AGENTS))
def test_agents_read_only_what_the_player_may_know(name):
    game = Bloodlines()
    rng = np.random.default_rng(3)
    for seed in range(6):
        state = game.new_state(np.random.default_rng(seed))
        while not state.is_over:
            player = state.current_player
            twin = state.sample_hidden(player, rng)
            action = AGENTS[name](seed=1).act(Decision.of(state))
            assert AGENTS[name](seed=1).act(Decision.of(twin)) == action
            state.apply(action)


def test_aggressor_attacks_with_the_smallest_sufficient_unit():
    state = deal(["2S", "9S", "10S", "3S", "4S"], ["5H", "2C", "3C", "4C"], bloodlines=("S", "H"))
    play(state, "new unit 10S", "end step 1", "heart 5H on Q", "new unit 2S", "end step 1", "pass")
    # p0 units: 10S (11), 2S (3); p1: J def 0, Q def 6, K def 0
    assert main_choice(GreedyAggressor, state.clone()) == "unit 0 attacks Q"  # the most hearts; only 11 beats it
    play(state, "unit 0 attacks Q", "end step 1", "pass")
    assert main_choice(GreedyAggressor, state) == "unit 0 attacks J"  # the 3-attack unit suffices


def test_defender_saves_a_threatened_royal_with_the_least_overkill():
    state = deal(["2S", "3S", "4S", "5S"], ["2H", "10H", "4H", "6H", "5H"], bloodlines=("S", "H"))
    play(state, "new unit 5S", "heart 2H on J", "new unit 4S")
    # p0 units 5S[6] and 4S[5] threaten p1's J (def 3), Q and K (def 0); p1 holds 10H[11] 4H[5] 6H[7] 5H[6]
    assert state.phase == MAIN and hand_codes(state, 1) == {"10H", "4H", "6H", "5H"}
    assert choice(ThreatAwareDefender, state) == "heart 5H on Q"  # 0 + 6 = 6 cannot be beaten by 6
    assert main_choice(GreedyAggressor, deal(["2S", "3S", "4S", "5S"], ["2H", "10H", "4H", "6H"],
                                             bloodlines=("S", "H"))) == "new unit 5S"


def test_defender_builds_just_above_the_weakest_defense():
    state = deal(["2H", "3H", "4H", "5H"], ["2S", "5S", "10S", "9H"], bloodlines=("H", "S"))
    play(state, "heart 5H on J", "heart 9H on J", "heart 4H on Q")
    # p0 defenses: J 6, Q 5, K 0; p1 holds 2S[3], 5S[6], 10S[11]: the smallest unit beats K
    assert main_choice(ThreatAwareDefender, state.clone()) == "new unit 2S"
    assert main_choice(GreedyAggressor, state) == "new unit 10S"


def test_both_agents_decoy_and_the_defender_keeps_a_last_joker():
    state = deal(["10D", "9D", "5D", "5H", "2C", "3C"], ["10S", "2C", "3C", "4C", "5C"], bloodlines=("D", "S"))
    play(state, "pool 10D", "pool 9D", "pool 5D", "buy joker", "end step 1", "new unit 10S", "end step 1",
         "heart 5H on J", "end step 1", "unit 0 attacks J")
    assert choice(GreedyAggressor, state) == choice(ThreatAwareDefender, state) == "decoy"
    play(state, "no decoy", "end step 1")  # p0: X1 in play, two royals left
    assert main_choice(GreedyAggressor, state.clone()).startswith("joker attacks")
    assert not main_choice(ThreatAwareDefender, state).startswith("joker attacks")  # kept as a decoy


@pytest.mark.parametrize("name", list(AGENTS))
def test_agents_beat_random_on_a_small_sample(name):
    game = card_envs.make_game(GAME)
    wins = 0
    for deal_seed in range(60):
        for seat in (0, 1):
            lineup = [RandomAgent(seed=deal_seed), AGENTS[name](seed=deal_seed)]
            if seat == 0:
                lineup.reverse()
            wins += play_game(game, lineup, deal_seed).winners() == [seat]
    assert wins / 120 > 0.7


def test_defender_beats_aggressor_on_a_small_sample():
    game = card_envs.make_game(GAME)
    score = 0
    for deal_seed in range(100):
        for seat in (0, 1):
            lineup = [GreedyAggressor(seed=deal_seed), ThreatAwareDefender(seed=deal_seed)]
            if seat == 0:
                lineup.reverse()
            winners = play_game(game, lineup, deal_seed).winners()
            score += (winners == [seat]) - (winners == [1 - seat])
    assert score > 0


# -- the balance benchmark (benchmarks/bloodlines_balance.py): structure and statistics, tiny budgets --------


def test_balance_games_do_not_depend_on_how_they_are_split():
    from benchmarks import bloodlines_balance as balance

    whole = balance.play_chunk(("heuristic:aggressor", "DS", 5, 0, 4))
    parts = balance.play_chunk(("heuristic:aggressor", "DS", 5, 0, 2)) + \
        balance.play_chunk(("heuristic:aggressor", "DS", 5, 2, 4))
    assert whole == parts
    assert [starter for _, starter, *_ in whole] == [0, 1, 0, 1]  # each deal once with each starter


def test_balance_statistics_pool_both_seat_orders():
    from benchmarks import bloodlines_balance as balance

    # (winner, starter, turns, decisions, outcome); the C-D pair: C (player_0) wins 1 of 4, one draw
    records = {pair: [(0, 0, 20, 40, "kill")] * 2 for pair in balance.PAIRS}
    records["CD"] = [(0, 0, 10, 20, "kill"), (1, 1, 12, 25, "kill"), (1, 0, 14, 30, "kill"),
                     (-1, 1, 40, 80, "stalemate")]
    records["DC"] = [(1, 0, 10, 20, "kill"), (0, 1, 10, 20, "kill")]  # C (player_1) wins 1 of 2
    matrix = balance.suit_matrix(records)
    assert (matrix["C"]["D"]["count"], matrix["C"]["D"]["of"]) == (2, 6)
    assert (matrix["D"]["C"]["count"], matrix["D"]["C"]["of"]) == (3, 6)
    summary = balance.pair_summary(records["CD"])
    assert summary["draws"]["count"] == 1 and summary["starter_wins"]["count"] == 2
    assert summary["outcomes"] == {"kill": 3, "stalemate": 1, "turn_limit": 0}
    assert summary["first_suit_wins"]["low"] < 0.25 < summary["first_suit_wins"]["high"]


def test_balance_report_files_are_written(tmp_path):
    from benchmarks import bloodlines_balance as balance

    report = balance.main(["--games", "2", "--workers", "1", "--agent", "heuristic:aggressor", "--quiet",
                           "--out", str(tmp_path)])
    assert report["games"] == 24 and set(report["pairs"]) == set(balance.PAIRS)
    text = (tmp_path / "bloodlines_balance.md").read_text()
    assert "Suit against suit" in text and "First-player advantage" in text and "Game length" in text
    assert (tmp_path / "bloodlines_balance.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(tmp_path.glob(".*.tmp")) and not list(tmp_path.glob(".*png"))
