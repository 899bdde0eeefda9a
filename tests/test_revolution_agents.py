"""Revolution rule-based players: legal, view-only, deterministic; their reading of the table."""

from __future__ import annotations

import numpy as np
import pytest

from agents.players.base import Decision
from agents.players.registry import agent_names, make_agent, strongest_heuristic
from agents.players.revolution import AGENTS, STRONGEST, CardCounter, CheapWinner, TrickMemory, winning_card
from card_envs.revolution.rules import CARD_CODES, Revolution, known_holding_limits

GAME = "revolution_v0"


def _play(game: Revolution, lineup, seed: int):
    state = game.new_state(np.random.default_rng(seed))
    for seat, agent in enumerate(lineup):
        agent.reset(game, seat)
    while not state.is_over:
        player = state.current_player
        decision = Decision(game, player, state.view(player), state.legal_actions())
        action = lineup[player].act(decision)
        assert action in decision.legal_actions, f"{lineup[player].name} chose an illegal action {action}"
        state.apply(action)
    return state


def test_registry_lists_every_heuristic_weakest_first():
    assert list(AGENTS) == ["cheap", "counting"]
    assert STRONGEST == "counting" and strongest_heuristic(GAME) == "heuristic:counting"
    assert agent_names(GAME) == ["random", "heuristic:cheap", "heuristic:counting"]


@pytest.mark.parametrize("config", Revolution.variant_configs())
def test_rule_based_players_act_legally_in_every_variant(config):
    game = Revolution(**config)
    names = ["heuristic:cheap", "heuristic:counting", "random"]
    for seed in range(3):
        lineup = [make_agent(GAME, names[(seat + seed) % 3], seed=seat) for seat in range(4)]
        state = _play(game, lineup, seed)
        assert state.is_over


def test_players_are_deterministic_given_their_seed():
    game = Revolution(num_hands=1)
    first = _play(game, [make_agent(GAME, "heuristic:counting", seed=s) for s in range(4)], 3).history
    second = _play(game, [make_agent(GAME, "heuristic:counting", seed=s) for s in range(4)], 3).history
    assert first == second


def test_players_read_only_the_view():
    """Redrawing every hidden card (sample_hidden) never changes a rule-based player's choice."""
    game = Revolution(num_hands=1)
    state = game.new_state(np.random.default_rng(11))
    rng = np.random.default_rng(0)
    agents = [CheapWinner(0), make_agent(GAME, "heuristic:counting", seed=0)]
    while not state.is_over:
        player = state.current_player
        twin = state.sample_hidden(player, rng)
        for agent in agents:
            a = agent.act(Decision(game, player, state.view(player), state.legal_actions()))
            b = agent.act(Decision(game, player, twin.view(player), twin.legal_actions()))
            assert a == b
        state.apply(agents[1].act(Decision(game, player, state.view(player), state.legal_actions())))


def _spec_deal_a():
    from tests.test_revolution_rules import DECK_A, SCENARIO_3_MOVES, SCENARIO_4_MOVES, action

    state = Revolution(first_dealer=3, num_hands=1).new_state(np.random.default_rng(0), {"deck": DECK_A})
    for move in SCENARIO_3_MOVES + SCENARIO_4_MOVES + ["pass", "pass", "KD", "QD"]:
        state.apply(action(move))
    return state


def test_cheap_follower_wins_cheaply_or_dumps_lowest():  # spec 11.2
    state = _spec_deal_a()  # scenario 5: P3 led KD, P0 played QD; P1 (void in D) to play
    view = state.view(1)
    assert CARD_CODES[winning_card(view)] == "KD"
    # P1 is not last (P2 follows) and may fix trump: an ace if it has one (AC), else its highest card
    choice = CheapWinner(0).act(Decision(state.game, 1, view, state.legal_actions()))
    assert CARD_CODES[choice] == "AC"


def test_voids_are_read_off_the_visible_tricks():  # section 7.3
    state = _spec_deal_a()
    # previous trick (scenario 4): P1 played 4C on a diamond lead before trump: void in diamonds
    diamonds = sum(1 << (13 + r) for r in range(13))
    assert not known_holding_limits(state.view(2))[1] & diamonds


def test_memory_recovers_the_hand_so_far_from_successive_views():  # spec 11.5
    from tests.test_revolution_rules import DECK_A, SCENARIO_3_MOVES, SCENARIO_4_MOVES, SCENARIO_5_MOVES, action

    state = Revolution(first_dealer=3, num_hands=1).new_state(np.random.default_rng(0), {"deck": DECK_A})
    recall = Revolution(first_dealer=3, num_hands=1, full_recall=True).new_state(
        np.random.default_rng(0), {"deck": DECK_A})
    memory = TrickMemory()
    for move in SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES:
        if state.current_player == 2:  # player_2 sees a view at each of its decisions
            remembered = memory.recall(state.view(2))
            truth = recall.view(2).recall
            assert [r[:7] for r in remembered.recall] == [r[:7] for r in truth]
        state.apply(action(move))
        recall.apply(action(move))
    assert len(memory.tricks) == 2  # tricks 1 and 2, seen as previous tricks


def test_memory_forgets_at_a_new_hand_and_a_new_episode():
    game = Revolution(num_hands=2)
    agent = CardCounter(0)
    for seed in range(2):
        state = game.new_state(np.random.default_rng(seed))
        agent.reset(game, 0)
        while not state.is_over:
            p = state.current_player
            view = state.view(p)
            action = agent.act(Decision(game, p, view, state.legal_actions())) if p == 0 else \
                state.legal_actions()[0]
            if p == 0:
                assert all(t < view.trick_number for t in agent.memory.tricks)
                assert agent.memory.hand == view.hand_number
            state.apply(action)


def test_determinized_deals_respect_the_view_and_known_voids():
    state = _spec_deal_a()  # player_1 to act
    game = state.game
    rng = np.random.default_rng(5)
    for _ in range(30):
        for seat in range(4):
            view = state.view(seat)
            sample = game.determinize(view, rng)
            assert sample.view(seat)._replace(passes_this_hand=None) == view._replace(passes_this_hand=None)
            if seat == 1:
                assert sample.legal_actions() == state.legal_actions()
            else:
                assert not any(c // 13 == 1 for c in sample.holding(1))  # P1 is known void in diamonds
