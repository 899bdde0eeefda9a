"""Battlecards rules (spec specs/battlecards.md): every numbered rule R1-R25, the worked scenarios of
section 10, the rulings of section 5, and property tests over every player count and variant.

Scenario steps are written as in the spec, e.g. ``"P0: lead 9"``: the named player must be the one
to act, the decision kind must match the verb, and the action is the kind's index.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from card_envs.battlecards.encoding import LAYOUT, OBSERVATION_SIZE
from card_envs.battlecards.invariants import invariant_errors
from card_envs.battlecards.rules import (
    ACTION_NAMES,
    BURY,
    FOLLOW,
    FROM_HAND,
    FROM_PILE,
    FROM_RECYCLED,
    KIND,
    KIND_NAMES,
    LEAD,
    NATURAL_VALUE,
    OVER,
    WAR_UP,
    Battlecards,
    BattlecardsState,
    sorted_deck,
)
from card_envs.cards import CODES, card_codes, card_id
from card_envs.core.errors import ConfigError, DeckError, IllegalActionError

VERB_PHASE = {"lead": LEAD, "follow": FOLLOW, "bury": BURY, "war-up": WAR_UP}
SORTED_CODES = [CODES[c] for c in sorted_deck(False)]


# -- helpers -------------------------------------------------------------------------------------------


def deal(deck: str | list[str], seed: int = 0, **config) -> BattlecardsState:
    codes = deck.split() if isinstance(deck, str) else deck
    return Battlecards(**config).new_state(np.random.default_rng(seed), {"deck": codes})


def kind(name: str) -> int:
    return KIND_NAMES.index(name)


def play(state: BattlecardsState, script: str) -> None:
    """Apply steps like ``"P0: lead 9, P1: follow 9"`` checking actor and decision kind."""
    for step in re.split(r"[,;]\s*", script.strip()):
        match = re.fullmatch(r"P(\d): (lead|follow|bury|war-up) (\w+)", step.strip())
        assert match, f"bad step {step!r}"
        player, verb, name = int(match[1]), match[2], match[3]
        assert state.current_player == player, f"{step}: player_{state.current_player} is to act"
        assert state.phase == VERB_PHASE[verb], f"{step}: decision is {state.phase}"
        assert state.describe_action(kind(name)) == f"{verb} {name}"
        state.apply(kind(name))


def hand(state: BattlecardsState, p: int) -> set[str]:
    return set(card_codes(state.hands[p]))


def pile(state: BattlecardsState, p: int) -> list[str]:
    return card_codes(state.piles[p])


def face_up(state: BattlecardsState, p: int) -> list[str]:
    return card_codes(state.face_up[p])


def mask_kinds(state: BattlecardsState) -> set[str]:
    return {KIND_NAMES[a] for a in np.flatnonzero(state.legal_mask())}


def codes(text: str) -> list[str]:
    return text.split()


# -- section 2, 3: cards and the deal -------------------------------------------------------------------


def test_action_names_are_the_spec_names():  # section 8.3
    assert ACTION_NAMES == ("play 2", "play 3", "play 4", "play 5", "play 6", "play 7", "play 8", "play 9",
                            "play 10", "play J", "play Q", "play K", "play A", "play X")


def test_r2_kinds_and_values():  # R2, A6
    assert [KIND[card_id(c)] for c in ("2C", "10H", "JD", "AS", "X1", "X2")] == [0, 8, 9, 12, 13, 13]
    state = deal("2C 3C", jokers=True, joker_initial_value=9)
    assert [state.value(card_id(c)) for c in ("2C", "10H", "AS", "X1")] == [2, 10, 14, 9]


def test_sorted_deck_order():  # section 2: 2C 3C ... AC 2D ... AS X1 X2
    assert SORTED_CODES[:3] == ["2C", "3C", "4C"] and SORTED_CODES[12] == "AC" and SORTED_CODES[-1] == "AS"
    assert card_codes(sorted_deck(True))[-2:] == ["X1", "X2"]


def test_s1_deal_plain_round_and_mask():  # S1, R4, R7, R8, R14, R16, R25, A3, A44
    s = deal(SORTED_CODES)
    assert hand(s, 0) == {"2C", "4C", "6C", "8C", "10C"}
    assert pile(s, 0)[:4] == ["QC", "AC", "3D", "5D"] and len(pile(s, 0)) == 21 and pile(s, 0)[-1] == "KS"
    assert hand(s, 1) == {"3C", "5C", "7C", "9C", "JC"}
    assert pile(s, 1)[:3] == ["KC", "2D", "4D"] and len(pile(s, 1)) == 21 and pile(s, 1)[-1] == "AS"
    assert s.set_aside == []
    assert s.current_player == 0 and s.phase == LEAD
    assert set(np.flatnonzero(s.legal_mask())) == {0, 2, 4, 6, 8}
    play(s, "P0: lead 10, P1: follow J")
    assert face_up(s, 1) == ["10C", "JC"]
    assert hand(s, 1) == {"3C", "5C", "7C", "9C", "KC"} and hand(s, 0) == {"2C", "4C", "6C", "8C", "QC"}
    assert len(s.piles[0]) == len(s.piles[1]) == 20
    assert s.current_player == 1 and s.phase == LEAD
    assert set(np.flatnonzero(s.legal_mask())) == {1, 3, 5, 7, 11}
    before = s.to_dict()
    with pytest.raises(IllegalActionError, match="play A"):  # R25
        s.apply(12)
    assert s.to_dict() == before


def test_s2_deal_with_remainder():  # S2, A4, A38
    s = deal(SORTED_CODES, num_players=5)
    assert hand(s, 0) == {"2C", "7C", "QC", "4D", "9D"} and pile(s, 0) == codes("AD 6H JH 3S 8S")
    assert hand(s, 4) == {"6C", "JC", "3D", "8D", "KD"} and pile(s, 4) == codes("5H 10H 2S 7S QS")
    assert card_codes(s.set_aside) == ["KS", "AS"]
    s = deal(SORTED_CODES + ["X1", "X2"], num_players=5, jokers=True)
    assert all(s.cards_held(p) == 10 for p in range(5))
    assert card_codes(s.set_aside) == ["KS", "AS", "X1", "X2"]
    s = deal(SORTED_CODES + ["X1", "X2"], num_players=6, jokers=True)
    assert s.set_aside == [] and pile(s, 4)[-1] == "X1" and pile(s, 5)[-1] == "X2"


@pytest.mark.parametrize("n, each, aside", [(2, 26, 0), (3, 17, 1), (4, 13, 0), (5, 10, 2), (6, 8, 4)])
def test_a4_deal_table(n, each, aside):  # 3.3 table, A4
    s = Battlecards(num_players=n).new_state(np.random.default_rng(3))
    assert [s.cards_held(p) for p in range(n)] == [each] * n and len(s.set_aside) == aside


def test_a7_small_deck_gives_all_cards_to_the_hand():  # A7
    s = deal("2C 3C 4C 5C 6C 7C")
    assert hand(s, 0) == {"2C", "4C", "6C"} and s.piles[0] == []


def test_a5_first_leader_option_and_random():  # A5
    s = deal(SORTED_CODES, num_players=4, first_leader=2)
    assert s.current_player == 2 and s.follow_queue == [3, 0, 1]
    leaders = {Battlecards(num_players=4, first_leader=None).new_state(np.random.default_rng(i)).leader
               for i in range(40)}
    assert leaders == {0, 1, 2, 3}


def test_s3_which_physical_card():  # S3, R22, A35
    s = deal("9H 2D 9C 3D")
    assert hand(s, 0) == {"9H", "9C"} and s.piles[0] == []
    play(s, "P0: lead 9")
    assert card_codes([s.table[0][0]]) == ["9C"]
    play(s, "P1: follow 3")
    assert face_up(s, 0) == ["9C", "3D"] and hand(s, 0) == {"9H"} and hand(s, 1) == {"2D"}


def test_r22_jokers_x1_before_x2():  # R22
    s = deal("X2 2C X1 3C", jokers=True)
    play(s, "P0: lead X")
    assert card_codes([s.table[0][0]]) == ["X1"]


# -- rounds and wars ------------------------------------------------------------------------------------

S4_DECK = "9C 9D 2C 2D 3C 3D 4C 4D AC KD 5C 5D 6C 6D 7C 7D 8C 8D"


def test_s4_simple_war_and_empty_pile_rule():  # S4, R6, R9, R11, R12, R14, R23, A8, A12, A16
    s = deal(S4_DECK)
    assert hand(s, 0) == {"9C", "2C", "3C", "4C", "AC"} and pile(s, 0) == codes("5C 6C 7C 8C")
    play(s, "P0: lead 9, P1: follow 9")
    assert s.entry_order == [0, 1] and s.war_level == 1
    # face-down automatic, P1 first (reverse entry order)
    assert [(CODES[c], o, src) for c, o, src, _ in s.table[2:]] == [
        ("5D", 1, FROM_PILE), ("6D", 1, FROM_PILE), ("7D", 1, FROM_PILE),
        ("5C", 0, FROM_PILE), ("6C", 0, FROM_PILE), ("7C", 0, FROM_PILE)]
    assert s.current_player == 1 and s.phase == WAR_UP and mask_kinds(s) == {"2", "3", "4", "K"}
    play(s, "P1: war-up K")
    assert mask_kinds(s) == {"2", "3", "4", "A"}
    play(s, "P0: war-up A")
    assert face_up(s, 0) == codes("9C 9D 5D 6D 7D 5C 6C 7C KD AC")
    assert hand(s, 0) == {"2C", "3C", "4C", "8C"} and s.piles[0] == []
    assert hand(s, 1) == {"2D", "3D", "4D", "8D"}
    play(s, "P0: lead 8, P1: follow 2")
    assert len(s.face_up[0]) == 12
    assert hand(s, 0) == {"2C", "3C", "4C"} and hand(s, 1) == {"3D", "4D", "8D"}  # A8: nobody draws
    assert s.current_player == 0 and s.phase == LEAD and mask_kinds(s) == {"2", "3", "4"}
    assert [s.cards_held(0), s.cards_held(1)] == [15, 3]


S6_DECK = "9C 4D 9H 2C 2D 2H 3C 3D 3H 4C 10D 4H AC JD KH 5C 5D 5H 6C 6D 6H 7C 7D 7H 8C 8D 8H"


def test_s6_war_with_a_bystander_and_low_tie():  # S6, R1, R8, R9, A2, A13, A14, A34, A46
    s = deal(S6_DECK, num_players=3)
    assert hand(s, 1) == {"4D", "2D", "3D", "10D", "JD"} and pile(s, 2) == codes("5H 6H 7H 8H")
    play(s, "P0: lead 9, P1: follow 4, P2: follow 9")
    assert s.entry_order == [0, 2]
    assert {o for _, o, src, _ in s.table if src >= FROM_PILE} == {0, 2}  # A46: P1 idle
    assert card_codes(c for c, o, src, _ in s.table if src >= FROM_PILE) == codes("5H 6H 7H 5C 6C 7C")
    play(s, "P2: war-up K, P0: war-up A")
    assert len(s.face_up[0]) == 11 and "4D" in face_up(s, 0)
    assert len(s.hands[0]) == 4 and s.piles[0] == []
    assert len(s.hands[1]) == 5 and pile(s, 1) == codes("6D 7D 8D")
    assert len(s.hands[2]) == 4 and s.piles[2] == []
    play(s, "P0: lead 3, P1: follow 3, P2: follow 8")  # A13: a low tie is no war
    assert face_up(s, 2) == codes("3C 3D 8H")
    assert pile(s, 1) == codes("7D 8D") and "6D" in hand(s, 1)
    assert s.current_player == 2 and s.phase == LEAD and s.follow_queue == [0, 1]
    assert [s.cards_held(p) for p in range(3)] == [14, 7, 6]


S7_DECK = "AC 9D KC 8D QC 7D 2C 6D 3C 5D JC 4D 10C 2D"
S7_ROUNDS = ("P0: lead A, P1: follow 5, P0: lead 2, P1: follow 9, P1: lead 2, P0: follow 3, "
             "P0: lead K, P1: follow 4, P0: lead 10, P1: follow 6, P0: lead J, P1: follow 8, "
             "P0: lead Q, P1: follow 7")


def test_s7_empty_pile_and_recycle_timing():  # S7, R5, R6, R23, A8, A9, A10, A11, A41
    s = deal(S7_DECK, shuffle_mid_game=False)
    assert hand(s, 0) == {"AC", "KC", "QC", "2C", "3C"} and pile(s, 0) == ["JC", "10C"]
    play(s, "P0: lead A, P1: follow 5, P0: lead 2, P1: follow 9")
    assert face_up(s, 1) == ["2C", "9D"] and s.piles == [[], []]
    play(s, "P1: lead 2, P0: follow 3")
    assert len(s.hands[0]) == len(s.hands[1]) == 4 and len(s.face_up[0]) == 4  # A8: no recycle yet
    play(s, "P0: lead K, P1: follow 4, P0: lead 10, P1: follow 6, P0: lead J, P1: follow 8")
    assert s.legal_actions() == [kind("Q")]  # A41: still a decision
    play(s, "P0: lead Q")
    assert s.legal_actions() == [kind("7")]
    play(s, "P1: follow 7")
    # A9: R7's cards are included in the recycled pile; A11: oldest first on top
    assert hand(s, 0) == {"AC", "5D", "2D", "3C", "KC"} and pile(s, 0) == codes("4D 10C 6D JC 8D QC 7D")
    assert hand(s, 1) == {"2C", "9D"} and s.piles[1] == [] and s.face_up == [[], []]
    assert s.current_player == 0 and s.phase == LEAD
    assert [s.cards_held(0), s.cards_held(1)] == [12, 2]


def test_s8_retirement_variant():  # S8, R21, A39, A40
    s = deal(S7_DECK, shuffle_mid_game=False, retire_lowest_on_flip=True)
    play(s, S7_ROUNDS)
    assert s.retire_level == 3
    assert hand(s, 0) == {"AC", "5D", "3C", "KC", "4D"} and pile(s, 0) == codes("10C 6D JC 8D QC 7D")
    assert hand(s, 1) == {"9D"} and s.piles[1] == []
    assert card_codes(s.discard) == ["2D", "2C"]
    assert "3C" in hand(s, 0)  # A40: hands are not searched
    assert [s.cards_held(0), s.cards_held(1)] == [11, 1]


S9_DECK = "8C 8D 2C JD 3C QD 4C 2D KC 3D 5C 9D"


def test_s9_short_pile_bury_from_hand():  # S9, R11b, R11c, A17, A18, A21
    s = deal(S9_DECK)
    assert pile(s, 0) == ["5C"] and pile(s, 1) == ["9D"]
    play(s, "P0: lead 8, P1: follow 8")
    assert s.phase == BURY and s.current_player == 1 and s.bury_left == 2
    assert mask_kinds(s) == {"J", "Q", "2", "3"}
    play(s, "P1: bury 2")
    assert mask_kinds(s) == {"J", "Q", "3"}
    play(s, "P1: bury 3")
    assert s.current_player == 0 and s.phase == BURY and mask_kinds(s) == {"2", "3", "4", "K"}
    play(s, "P0: bury 2")
    assert mask_kinds(s) == {"3", "4", "K"}
    play(s, "P0: bury 3")
    assert s.phase == WAR_UP and mask_kinds(s) == {"J", "Q"}
    play(s, "P1: war-up Q")
    assert mask_kinds(s) == {"4", "K"}
    play(s, "P0: war-up K")
    assert face_up(s, 0) == codes("8C 8D 9D 2D 3D 5C 2C 3C QD KC")
    assert hand(s, 0) == {"4C"} and hand(s, 1) == {"JD"} and s.piles == [[], []]
    play(s, "P0: lead 4, P1: follow J")
    assert len(s.hands[1]) == 2 and len(s.hands[0]) == 5 and len(s.piles[0]) == 5
    assert s.current_player == 1 and s.phase == LEAD


S11_DECK = "AC 7H KC 2D QC 3D JC 4D 7C 7D"
S11_START = ("P0: lead A, P1: follow 7, P0: lead K, P1: follow 2, P0: lead Q, P1: follow 3, "
             "P0: lead J, P1: follow 4, P0: lead 7, P1: follow 7")


def s11_state(**config) -> BattlecardsState:
    s = deal(S11_DECK, shuffle_mid_game=False, **config)
    play(s, S11_START)
    return s


def test_s11_stuck_player_and_war_recycle():  # S11, R10, R11a, A19, A22, A31
    s = deal(S11_DECK, shuffle_mid_game=False)
    play(s, "P0: lead A, P1: follow 7")
    assert face_up(s, 0) == ["AC", "7D"]  # R22: 7D before 7H
    s = s11_state()
    assert s.stuck == [False, True] and s.active == [True, True]  # A31: still active
    assert card_codes(c for c, o, src, _ in s.table if src == FROM_PILE) == ["3D", "JC", "4D"]
    assert hand(s, 0) == {"AC", "7D", "KC", "2D", "QC"}
    assert s.current_player == 0 and s.phase == WAR_UP and mask_kinds(s) == {"2", "7", "Q", "K", "A"}


def test_s11a_war_up_ace_wins_the_game():  # S11a, R17, R18
    s = s11_state()
    play(s, "P0: war-up A")
    assert s.terminated and s.winner_set == [0] and s.returns() == [1.0, -1.0]


def test_s11b_stuck_card_beats_a_two():  # S11b, R13, R14
    s = s11_state()
    play(s, "P0: war-up 2")
    assert hand(s, 1) == {"7C", "7H", "3D", "JC", "4D"} and pile(s, 1) == ["2D"]
    assert hand(s, 0) == {"AC", "7D", "KC", "QC"} and s.piles[0] == []
    assert s.current_player == 1 and s.phase == LEAD
    assert [s.cards_held(1), s.cards_held(0)] == [6, 4]


def test_s11c_tie_with_the_stuck_card_goes_to_level_two():  # S11c, R10, R11c, A22
    s = s11_state()
    play(s, "P0: war-up 7")
    assert s.war_level == 2 and s.participants == [0, 1] and s.stuck == [False, True]
    assert s.phase == BURY and s.bury_left == 3
    play(s, "P0: bury 2, P0: bury Q, P0: bury K")
    assert s.legal_actions() == [kind("A")]
    play(s, "P0: war-up A")
    assert s.terminated and s.winner_set == [0] and s.returns() == [1.0, -1.0]


def test_s11d_cease_fire():  # S11d, R10.1, A30
    s = s11_state(cease_fire=True)
    assert s.terminated and s.phase == OVER and s.winner_set == [0, 1] and s.returns() == [0.0, 0.0]
    assert s.legal_actions() == []


def test_s14_last_card_tie_redistribution_and_win():  # S14, R15, A24-A28, R16, R17
    s = deal("9C 9D 5H", num_players=3)
    play(s, "P0: lead 9, P1: follow 9, P2: follow 5")
    assert hand(s, 1) == {"9D", "5H"} and hand(s, 0) == {"9C"}  # U_P0 = [9C], U_P1 = [9D, 5H], recycled
    assert s.active == [True, True, False]
    assert s.current_player == 1 and s.phase == LEAD and s.follow_queue == [0]
    play(s, "P1: lead 9, P0: follow 9")
    assert s.stuck == [True, False, False]
    assert s.legal_actions() == [kind("5")]
    play(s, "P1: war-up 5")
    assert s.terminated and s.winner_set == [0]
    assert s.returns() == pytest.approx([1.0, -0.5, -0.5])


def test_r15_redistribution_first_forced_player_is_not_tied():  # R15, A25, A26, A27, A28
    # 4 players, one card each: P0 and P1 tie on their last cards; P2's and P3's cards are dealt
    s = deal("9C 9D 5H 7S", num_players=4, shuffle_mid_game=False, hand_size=1)
    play(s, "P0: lead 9, P1: follow 9, P2: follow 5, P3: follow 7")
    # T = [P0, P1], T[0] = e1 -> designated P1: M = [5H, 7S] dealt P1 first; U_P0 = [9C, 7S], U_P1 = [9D, 5H]
    assert s.leader == 1 and s.current_player == 1 and s.active == [True, True, False, False]
    assert hand(s, 1) == {"9D"} and pile(s, 1) == ["5H"]
    assert hand(s, 0) == {"9C"} and pile(s, 0) == ["7S"]


def test_r15_redistribution_after_a_higher_level_with_extra_cards():  # R13, R15, A23, A26, A27, A28
    s = deal("AC 3D 4H 9C 9D 9H", num_players=3, shuffle_mid_game=False, hand_size=2, war_facedown_count=1)
    play(s, "P0: lead A, P1: follow 3, P2: follow 4")  # P0 wins [AC, 3D, 4H]
    play(s, "P0: lead 9, P1: follow 9, P2: follow 9")  # P1, P2 play their last cards
    assert s.stuck == [False, True, True] and s.entry_order == [0, 1, 2]
    # P0 recycles, draws AC 3D, puts 4H face down, shows 3: P1 and P2 tie above it, all stuck
    assert hand(s, 0) == {"AC", "3D"}
    play(s, "P0: war-up 3")
    # T = [P1, P2], e1 = P0 -> designated P1; M = [9C, 4H, 3D]: P1 9C, P2 4H, the extra 3D to P1
    assert s.leader == 1 and s.current_player == 1 and s.phase == LEAD
    assert hand(s, 1) == {"9D", "9C"} and pile(s, 1) == ["3D"]
    assert hand(s, 2) == {"9H", "4H"} and s.piles[2] == []
    assert hand(s, 0) == {"AC"} and s.active == [True, True, True]


def test_s14_cease_fire_after_an_elimination():  # S14 with cease_fire, A30, rewards decision
    s = deal("9C 9D 5H", num_players=3, cease_fire=True)
    play(s, "P0: lead 9, P1: follow 9, P2: follow 5")  # three active: no cease fire
    assert s.active == [True, True, False] and s.returns() == pytest.approx([0.25, 0.25, -0.5])
    play(s, "P1: lead 9, P0: follow 9")
    assert s.terminated and s.winner_set == [0, 1]
    # spec S14 says +0.5/+0.5/-1; P2 left at its elimination with -1/(N-1) (RULES.md, "Rewards")
    assert s.returns() == pytest.approx([0.25, 0.25, -0.5])


def test_s15_two_player_last_card_tie_is_a_draw():  # S15, R15.1, A29
    for cease_fire in (False, True):
        s = deal("9C 9D", cease_fire=cease_fire)
        play(s, "P0: lead 9, P1: follow 9")
        assert s.terminated and s.winner_set == [0, 1] and s.returns() == [0.0, 0.0]


S16_DECK = ("X1 2D 9C 9D 5C X2 2C 3D 4C 4D 6C 5D 7C 6D 8C 7D 10C 8D JC 10D QC JD KC QD AC KD")


def test_s16_jokers():  # S16, R9, R20, A15, A36, A37
    s = deal(S16_DECK, jokers=True)
    assert hand(s, 0) == {"X1", "9C", "5C", "2C", "4C"} and hand(s, 1) == {"2D", "9D", "X2", "3D", "4D"}
    assert s.joker_value == 1
    play(s, "P0: lead X, P1: follow 2")
    assert s.joker_value == 2 and face_up(s, 1) == ["X1", "2D"]
    play(s, "P1: lead 9, P0: follow 9")
    assert s.entry_order == [1, 0]
    assert card_codes(c for c, _o, src, _ in s.table if src == FROM_PILE) == codes("7C 8C 10C 6D 7D 8D")
    play(s, "P0: war-up 2, P1: war-up X")
    assert s.war_level == 2 and s.participants == [1, 0]  # the joker is worth 2 the whole round
    play(s, "P0: war-up 5, P1: war-up 3")
    assert s.joker_value == 5 and len(s.face_up[0]) == 18
    assert hand(s, 0) == {"4C", "6C", "AC"} and hand(s, 1) == {"4D", "5D", "KD"}
    assert [s.cards_held(0), s.cards_held(1)] == [21, 5] and face_up(s, 1) == ["X1", "2D"]
    assert s.current_player == 0 and s.phase == LEAD
    obs = Battlecards(jokers=True).encode(s.view(0))
    assert obs[483 + 5 - 1] == 1.0 and obs[483:497].sum() == 1.0


def test_a37_winning_joker_keeps_the_value():  # A37
    s = deal("X1 2D", jokers=True, joker_initial_value=9)
    play(s, "P0: lead X, P1: follow 2")
    assert s.joker_value == 9


def test_r14_joker_value_stays_without_jokers():  # R14, R20: "If jokers are used, jv := ..."
    s = deal("9C 2D", joker_initial_value=5)
    play(s, "P0: lead 9, P1: follow 2")
    assert s.joker_value == 5
    assert Battlecards(joker_initial_value=5).encode(s.view(0))[483 + 5 - 1] == 1.0


def test_s17_elimination_and_skipping_a_seat():  # S17, R1, R16, R17
    s = deal("AC 2D 10H KC 3D JH 5C 4D QH", num_players=3, shuffle_mid_game=False)
    play(s, "P0: lead A, P1: follow 2, P2: follow 10, P0: lead K, P1: follow 3, P2: follow J")
    play(s, "P0: lead 5, P1: follow 4, P2: follow Q")
    assert hand(s, 2) == {"5C", "4D", "QH"}
    assert hand(s, 0) == {"AC", "2D", "10H", "KC", "3D"} and pile(s, 0) == ["JH"]
    assert s.active == [True, False, True] and s.is_out(1) and not s.is_over
    assert s.current_player == 2 and s.phase == LEAD and s.follow_queue == [0]
    # eliminated players are paid at elimination (RULES.md): -1/(N-1), shared by the others
    assert s.rewards == pytest.approx([0.25, -0.5, 0.25])
    play(s, "P2: lead Q, P0: follow A")
    assert s.current_player == 0


def test_s19_truncation_scoring():  # S19, R19, A43
    for scoring, expected in (("most_cards", [-1.0, 1.0]), ("card_share", [-1 / 13, 1 / 13])):
        s = deal(SORTED_CODES, max_rounds=2, truncation_scoring=scoring)
        play(s, "P0: lead 10, P1: follow J, P1: lead 3, P0: follow 2")
        assert hand(s, 1) >= {"2D"} and "AC" in hand(s, 0)
        assert s.truncated and not s.terminated and s.rounds_completed == 2
        assert [s.cards_held(0), s.cards_held(1)] == [24, 28]
        assert s.returns() == pytest.approx(expected)


# -- rulings without a published scenario ---------------------------------------------------------------


def test_a23_stuck_player_beaten_by_a_higher_tie_drops_out():  # A23, R10, R11a, R13, A19
    s = deal("2C AD 4H 3C 5D AH 9C 9D 9H", num_players=3, war_facedown_count=0, shuffle_mid_game=False)
    play(s, "P0: lead 2, P1: follow A, P2: follow 4")  # P1 wins
    play(s, "P1: lead 5, P2: follow A, P0: follow 3")  # P2 wins
    play(s, "P2: lead 9, P0: follow 9, P1: follow 9")  # P0 plays its last card
    assert s.entry_order == [2, 0, 1] and s.stuck == [True, False, False]
    # P1 and P2 have empty hands: they recycle their face-up piles (A19) and show a card
    assert hand(s, 1) == {"2C", "AD", "4H"} and hand(s, 2) == {"5D", "AH", "3C"}
    play(s, "P1: war-up A, P2: war-up A")
    assert s.war_level == 2 and s.participants == [2, 1]  # the stuck 9 drops out
    play(s, "P1: war-up 4, P2: war-up 5")
    assert face_up(s, 2) == codes("9H 9C 9D AD AH 4H 5D") and s.active == [False, True, True]


def test_a21_fewer_face_down_cards_without_penalty():  # A21, R11e
    # P1 has only its hand (2 cards after following): buries nothing from a 1-card hand
    s = deal("9C 9D 2C 2D 3C KD", war_facedown_count=3)
    play(s, "P0: lead 9, P1: follow 9")
    # each player has 2 cards in hand, nothing else: buries 1, keeps 1
    assert s.phase == BURY and s.current_player == 1 and s.bury_left == 1
    play(s, "P1: bury 2, P0: bury 2")
    assert s.phase == WAR_UP
    play(s, "P1: war-up K, P0: war-up 3")
    assert s.cards_held(1) == 6


def test_a20_war_recycle_becomes_the_pile_for_later_levels():  # R11d, A17, A20
    # P0 has 1 hand card + 4 face-up cards (won earlier) at the war: recycles, takes 3 blind
    s = deal("AC 2D 9C 3D 9H 9D 4C 5D", shuffle_mid_game=False, hand_size=2)
    # hands: P0 {AC, 9C}, P1 {2D, 3D}; piles: P0 [9H, 4C], P1 [9D, 5D]
    play(s, "P0: lead A, P1: follow 2")  # P0 wins [AC, 2D]; refill P0 +9H, P1 +9D
    assert hand(s, 0) == {"9C", "9H"} and pile(s, 0) == ["4C"]
    play(s, "P0: lead 9, P1: follow 3")  # P0 wins; P0 +4C, P1 +5D
    assert hand(s, 0) == {"9H", "4C"} and s.piles[0] == [] and len(s.face_up[0]) == 4
    play(s, "P0: lead 9, P1: follow 9")  # war: P1 (hand {5D}) places nothing; P0 buries 0
    table = [(CODES[c], o, src) for c, o, src, _ in s.table[2:]]
    assert table == [("AC", 0, FROM_RECYCLED), ("2D", 0, FROM_RECYCLED), ("9C", 0, FROM_RECYCLED)]
    assert pile(s, 0) == ["3D"] and s.face_up[0] == []
    play(s, "P1: war-up 5, P0: war-up 4")
    # P1 won the 7 cards and, with an empty hand, recycled them at once (oldest on top)
    assert hand(s, 1) == {"9H", "9D"} and pile(s, 1) == codes("AC 2D 9C 5D 4C")


def test_a32_everyone_eliminated_at_once_is_a_draw():  # A32, R16.4, R21
    s = deal("6H 5D 4S 6S 2C", retire_lowest_on_flip=True, shuffle_mid_game=False, hand_size=1,
             war_facedown_count=1)
    play(s, "P0: lead 6, P1: follow 5, P0: lead 4, P1: follow 6, P1: lead 4, P0: follow 6, "
            "P0: lead 5, P1: follow 6, P1: lead 5")
    assert s.active == [True, True]
    play(s, "P0: follow 6")  # P0 wins, recycles, and every card it draws is retired
    assert s.terminated and s.active == [False, False] and s.winner_set == [0, 1]
    assert s.returns() == [0.0, 0.0] and len(s.discard) == 4


def test_a33_eliminated_next_leader_passes_clockwise():  # A33, R16.6, R21
    s = deal("AH 5H 7C 4H 4D 6S 3C 3H 3S", num_players=3, retire_lowest_on_flip=True,
             shuffle_mid_game=False, hand_size=2, war_facedown_count=1)
    play(s, "P0: lead A, P1: follow 4, P2: follow 7, P0: lead 3, P1: follow 5, P2: follow 3, "
            "P1: lead 3, P2: follow 6, P0: follow 4, P2: lead 3, P0: follow 4, P1: follow 5")
    # P1 won the round, recycled [3H, 4D, 5H] at retirement level 5: all retired
    assert s.active == [True, False, True] and s.retire_level == 5
    assert s.current_player == 2 and s.phase == LEAD and s.follow_queue == [0]


def test_a39_retirement_stops_at_the_max_rank():  # A39, R21
    game = Battlecards(retire_lowest_on_flip=True, retire_max_rank=4)
    rng = np.random.default_rng(0)
    levels = set()
    for seed in range(5):
        s = game.new_state(np.random.default_rng(seed))
        while not s.is_over:
            s.apply(s.legal_actions()[int(rng.integers(len(s.legal_actions())))])
            levels.add(s.retire_level)
            assert all(KIND[c] + 2 <= s.retire_level for c in s.discard)
    assert levels == {1, 2, 3, 4}


def test_r18_the_last_player_holding_cards_wins_with_n_players():  # R18, section 9
    s = deal("AC 2D 3H 4S", num_players=4)
    play(s, "P0: lead A, P1: follow 2, P2: follow 3, P3: follow 4")
    assert s.terminated and s.winner_set == [0]
    assert s.returns() == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])


def test_r10_cease_fire_applies_when_a_larger_game_is_down_to_two():  # A30
    s = deal("9C 9D 5H", num_players=3, cease_fire=True)
    play(s, "P0: lead 9, P1: follow 9, P2: follow 5")
    assert s.active == [True, True, False] and not s.is_over  # three were active in R1


def test_r24_the_selected_player_always_owes_the_decision():  # R24
    s = deal(S9_DECK)
    seen = []
    while not s.is_over:
        assert s.legal_actions(), "the acting player always has a legal action"
        seen.append(s.phase)
        s.apply(s.legal_actions()[0])
    assert {LEAD, FOLLOW, BURY, WAR_UP} <= set(seen)


def test_r3_cards_on_the_table_are_not_held():  # R3
    s = deal(S4_DECK)
    play(s, "P0: lead 9, P1: follow 9")
    assert s.cards_held(0) == 4 + 1  # hand {2C,3C,4C,AC} + pile [8C]; 9C and 5C-7C on the table


def test_r4_draw_and_r6_fill_cap():  # R4, R6, A45, A47
    s = deal(SORTED_CODES, hand_size=3)
    assert all(len(h) == 3 for h in s.hands)
    play(s, "P0: lead 2, P1: follow 3")
    assert all(len(h) == 3 for h in s.hands)


# -- configuration and bad input ------------------------------------------------------------------------


@pytest.mark.parametrize("options, fragment", [
    ({"num_players": 7}, "num_players"), ({"num_players": 1}, "num_players"),
    ({"joker_initial_value": 0}, "joker_initial_value"), ({"retire_max_rank": 14}, "retire_max_rank"),
    ({"hand_size": 0}, "hand_size"), ({"war_facedown_count": 6}, "war_facedown_count"),
    ({"max_rounds": 0}, "max_rounds"), ({"truncation_scoring": "points"}, "truncation_scoring"),
    ({"shaping_weight": -1.0}, "shaping_weight"), ({"first_leader": 2}, "first_leader"),
    ({"jokers": 1}, "jokers"), ({"colour": True}, "colour"),
])
def test_bad_options_are_rejected(options, fragment):  # section 6, A1, A45
    with pytest.raises(ConfigError, match=fragment):
        Battlecards(**options)


def test_defaults_match_section_6():
    c = Battlecards().config
    assert (c.num_players, c.jokers, c.joker_initial_value, c.retire_lowest_on_flip, c.retire_max_rank,
            c.cease_fire, c.first_leader, c.hand_size, c.war_facedown_count, c.max_rounds,
            c.truncation_scoring, c.shaping_weight, c.shuffle_mid_game) == (
        2, False, 1, False, 10, False, 0, 5, 3, 1000, "most_cards", 0.0, True)


@pytest.mark.parametrize("deck, fragment", [
    (["2C", "2C"], "duplicated"), (["2C", "ZZ"], "unknown card code"), (["2C"], "at least one card"),
    (["2C", "X1"], "jokers"), ("2C 3C", "list of card codes"),
])
def test_bad_decks_are_rejected(deck, fragment):  # 3.2
    with pytest.raises(DeckError, match=fragment):
        Battlecards().new_state(np.random.default_rng(0), {"deck": deck})


# -- observation and knowledge (section 7) ----------------------------------------------------------------


def test_layout_tiles_the_observation():
    assert LAYOUT[0][0] == 0 and LAYOUT[-1][1] == OBSERVATION_SIZE
    assert all(a[1] == b[0] for a, b in zip(LAYOUT[:-1], LAYOUT[1:], strict=True))


def test_observation_decision_kind_and_relative_seats():  # 7.6
    game = Battlecards(num_players=3)
    s = deal(S6_DECK, num_players=3)
    play(s, "P0: lead 9")
    obs1 = game.encode(s.view(1))
    assert list(obs1[0:4]) == [0, 1, 0, 0]  # P1 owes FOLLOW
    assert obs1[47 + 2] == 1.0  # seat block 0 (itself) owes the decision
    assert obs1[47 + 70 * 2 + 20 + kind("9")] == 1.0  # block 2 = player_0's round card
    obs0 = game.encode(s.view(0))
    assert list(obs0[0:4]) == [0, 0, 0, 0] and obs0[47 + 20 + kind("9")] == 1.0
    assert not obs0[47 + 70 * 3:47 + 70 * 6].any()  # padding seats


def test_known_cards_after_a_recycle():  # 7.5: K_p is exactly the hidden holdings after a recycle
    s = deal(S7_DECK, shuffle_mid_game=False)
    play(s, S7_ROUNDS)
    view = s.view(1)
    held0 = Counter(KIND[c] for c in s.hands[0] + s.piles[0])
    assert view.unknown[0] == 0 and Counter({k: n for k, n in enumerate(view.known[0]) if n}) == held0
    assert view.unknown[1] == 0 and view.known[1][kind("2")] == 1 and view.known[1][kind("9")] == 1
    # P0's own pile knowledge: exactly its pile after the recycle
    own = s.view(0)
    assert own.pile_unknown == 0 and sum(own.pile_known) == 7


def test_face_down_cards_are_hidden_in_views():  # 7.2, 7.3, A42
    s = deal(S9_DECK)
    play(s, "P0: lead 8, P1: follow 8, P1: bury 2")
    mine, theirs = s.view(1).table, s.view(0).table
    assert [c for c, o, src, _ in mine if src == FROM_PILE] == [-1]  # not even the owner sees it
    assert [CODES[c] for c, o, src, _ in mine if src == FROM_HAND] == ["2D"]
    assert [c for c, o, src, _ in theirs if src == FROM_HAND] == [-1]
    assert s.view(1).buried == (card_id("2D"),)


# -- property tests ----------------------------------------------------------------------------------------

VARIANT_FLAGS = st.fixed_dictionaries({
    "num_players": st.integers(2, 6),
    "jokers": st.booleans(),
    "joker_initial_value": st.sampled_from([1, 8, 14]),
    "retire_lowest_on_flip": st.booleans(),
    "retire_max_rank": st.sampled_from([2, 10, 13]),
    "cease_fire": st.booleans(),
    "shuffle_mid_game": st.booleans(),
    "hand_size": st.sampled_from([1, 3, 5]),
    "war_facedown_count": st.sampled_from([0, 1, 3]),
    "max_rounds": st.sampled_from([5, 60, 300]),
    "truncation_scoring": st.sampled_from(["most_cards", "card_share"]),
    "shaping_weight": st.sampled_from([0.0, 0.5]),
    "first_leader": st.sampled_from([None, 0, 1]),
})


def check_invariants(state: BattlecardsState, all_cards: Counter) -> None:
    """Conservation, mask == legal set, the 7.5 identities and soundness, zero-sum rewards, ..."""
    zones = state.card_locations()
    assert Counter(c for cards in zones.values() for c in cards) == all_cards
    assert invariant_errors(state) == []


def test_the_invariant_checker_catches_corruption():
    s = deal(S9_DECK)
    play(s, "P0: lead 8, P1: follow 8")
    assert invariant_errors(s) == []
    broken = s.clone()
    broken.piles[0].append(broken.hands[1].pop())
    assert any(e.startswith("hand limit") for e in invariant_errors(broken))
    broken = s.clone()
    broken.known[1][kind("A")] += 1
    assert any(e.startswith("knowledge") for e in invariant_errors(broken))
    broken = s.clone()
    broken.discard.append(broken.discard[0] if broken.discard else card_id("2C"))
    assert any(e.startswith("conservation") for e in invariant_errors(broken))
    broken = s.clone()
    broken.rewards[0] = 0.5
    assert any(e.startswith("zero-sum") for e in invariant_errors(broken))
    broken = s.clone()
    broken.recycled[1] = [0] * len(KIND_NAMES)  # as if a recycled pile of no card were all it holds
    assert any(e.startswith("recycled piles") for e in invariant_errors(broken))


@settings(max_examples=40, deadline=None)
@given(config=VARIANT_FLAGS, seed=st.integers(0, 2**31))
def test_random_play_keeps_every_invariant(config, seed):  # R3, R16, R19, section 9
    game = Battlecards(**config)
    rng = np.random.default_rng(seed)
    state = game.new_state(np.random.default_rng(seed))
    all_cards = Counter(c for cards in state.card_locations().values() for c in cards)
    steps = 0
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
        check_invariants(state, all_cards)
        steps += 1
    assert state.rounds_completed <= config["max_rounds"]
    assert len(state.history) <= state.game.max_decisions()
    if state.truncated:  # R19: only at the limit, with at least two players left
        assert state.rounds_completed == config["max_rounds"] and sum(state.active) >= 2
    assert state.terminated != state.truncated and state.winner_set
    assert abs(sum(state.returns())) < 1e-9


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, 2**31))
def test_round_limit_truncates(n, seed):  # R19, A43
    state = Battlecards(num_players=n, max_rounds=3).new_state(np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    assert state.rounds_completed <= 3
    if not state.truncated:  # ended early: a sole survivor, or a draw (last-card tie, A32)
        assert sum(state.active) <= 1 or len(state.winner_set) >= 2
    else:
        assert state.rounds_completed == 3


@settings(max_examples=20, deadline=None)
@given(config=VARIANT_FLAGS, seed=st.integers(0, 2**31), cut=st.integers(0, 200))
def test_clone_and_dict_round_trip_continue_identically(config, seed, cut):
    game = Battlecards(**config)
    rng = np.random.default_rng(seed)
    state = game.new_state(np.random.default_rng(seed))
    for _ in range(cut):
        if state.is_over:
            break
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    twins = [state.clone(), game.state_from_dict(state.to_dict())]
    actions_rng = np.random.default_rng(seed + 1)
    while not state.is_over:
        legal = state.legal_actions()
        action = legal[int(actions_rng.integers(len(legal)))]
        for s in [state, *twins]:
            s.apply(action)
    assert all(t == state for t in twins)


@settings(max_examples=20, deadline=None)
@given(config=VARIANT_FLAGS, seed=st.integers(0, 2**31), cut=st.integers(0, 150))
def test_sample_hidden_keeps_the_view(config, seed, cut):  # section 7: no leak
    game = Battlecards(**config)
    rng = np.random.default_rng(seed)
    state = game.new_state(np.random.default_rng(seed))
    for _ in range(cut):
        if state.is_over:
            break
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    all_cards = Counter(c for cards in state.card_locations().values() for c in cards)
    for p in range(config["num_players"]):
        twin = state.sample_hidden(p, rng)
        assert twin.view(p) == state.view(p)
        assert np.array_equal(game.encode(twin.view(p)), game.encode(state.view(p)))
        check_invariants(twin, all_cards)


# -- determinizations keep what recycles prove (R5/R6, 7.5) ----------------------------------------------
#
# A pile is only ever refilled by a recycle, whose face-up pile is public, and a seat recycles at most once a
# round. So once a seat has recycled twice, or once in an earlier round, its whole hidden holdings are public
# as kinds: the recycled pile minus what has been shown since. The watcher below sees only the recycles (not
# the engine's knowledge fields); a sample must then agree with the true position on those kinds.


def _watch_recycles(state: BattlecardsState) -> dict[int, list]:
    """Per seat: [recycles so far, round of the last, whether it came mid-round, its pile's kinds]. Under
    key ``("floor", p)``: the lowest retirement level of ``p``'s draws since its hand was last empty (R4:
    every card in its hand survived a draw at that level or higher)."""
    log: dict = {("floor", p): 1 for p in range(len(state.active))}
    recycle, draw = state._recycle, state._draw

    def recording(player: int) -> None:
        count = log.get(player, [0])[0]
        log[player] = [count + 1, state.rounds_completed, bool(state.table),
                       Counter(KIND[c] for c in state.face_up[player])]
        recycle(player)

    def drawing(player: int) -> None:
        if not state.hands[player]:
            log[("floor", player)] = state.retire_level
        draw(player)

    state._recycle, state._draw = recording, drawing
    return log


def _kinds_held(state: BattlecardsState, player: int, hand: bool = True) -> Counter:
    """Kinds of ``player``'s hidden holdings (7.5); without the hand and buried cards: the pile part."""
    cards = list(state.piles[player]) + (list(state.hands[player]) if hand else [])
    cards += [c for c, owner, source, _ in state.table
              if owner == player and source >= FROM_PILE and (hand or source != FROM_HAND)]
    return Counter(KIND[c] for c in cards)


def _check_samples(state: BattlecardsState, log: dict[int, list], rng: np.random.Generator) -> int:
    """Sample for every seat; assert the view and the recycled-pile facts. Returns how many facts were checked."""
    checked = 0
    config = state.game.config
    for viewer in range(len(state.active)):
        twin = state.sample_hidden(viewer, rng)
        assert twin.view(viewer) == state.view(viewer)
        assert invariant_errors(twin) == []
        for p in range(len(state.active)):
            floor = log[("floor", p)]
            if p != viewer and config.retire_lowest_on_flip:  # R4: no hand card is one retired at its draw
                assert not [c for c in twin.hands[p] if 0 < NATURAL_VALUE[c] <= floor], (viewer, p, floor)
                checked += floor > 1
            if p not in log or not state.active[p]:
                continue
            count, round_, mid_round, kinds = log[p]
            determined = count >= 2 or not (mid_round and round_ == state.rounds_completed)
            if p != viewer:
                assert not Counter(KIND[c] for c in twin.piles[p]) - kinds  # the pile is of its recycled pile
                if determined:
                    assert _kinds_held(twin, p) == _kinds_held(state, p), (viewer, p)
                    checked += 1
            elif determined:  # the viewer knows its hand: the rest of the recycled pile is its pile part
                assert _kinds_held(twin, p, hand=False) == _kinds_held(state, p, hand=False), p
                checked += 1
            if not config.shuffle_mid_game:  # R23 test hook: an unshuffled pile is public card by card
                assert twin.piles[p] == state.piles[p]
    return checked


@settings(max_examples=25, deadline=None)
@given(config=VARIANT_FLAGS, seed=st.integers(0, 2**31), cut=st.integers(0, 400))
def test_samples_keep_the_view_and_the_recycled_piles(config, seed, cut):  # R4, R5/R6, 7.5
    game = Battlecards(**config)
    rng = np.random.default_rng(seed)
    state = game.new_state(np.random.default_rng(seed))
    log = _watch_recycles(state)
    for step in range(cut):
        if state.is_over:
            break
        if step % 25 == 0:
            _check_samples(state, log, rng)
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    if not state.is_over:
        _check_samples(state, log, rng)


@pytest.mark.parametrize("config", [{"num_players": 2}, {"num_players": 4, "war_facedown_count": 1},
                                    {"num_players": 3, "retire_lowest_on_flip": True, "jokers": True},
                                    {"num_players": 2, "shuffle_mid_game": False}])
def test_samples_keep_recycled_piles_through_wars(config):  # R4, R5, R11a, R11d, 7.5
    """Random games, sampled at every 5th decision and at every one in the round of a war-time recycle
    (the hidden cards from before the recycle are the earlier recycled pile's rest, or from the deal), and
    in the retirement variant no hand holds a card retired at its draws."""
    game = Battlecards(**config)
    rng = np.random.default_rng(7)
    checked = war_recycles = 0
    for seed in range(6):
        state = game.new_state(np.random.default_rng(seed))
        log = _watch_recycles(state)
        for step in range(250):
            if state.is_over:
                break
            war_recycle = any(state.recycle_mark)
            if war_recycle or step % 5 == 0:
                checked += _check_samples(state, log, rng)
            war_recycles += war_recycle
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 50 and war_recycles > 0  # the facts were in play, in wars too


def test_samples_arrange_a_recycled_pile_uniformly():  # R5 / R23: the recycle shuffle is uniform
    from scipy.stats import chisquare

    game = Battlecards(num_players=2)
    rng = np.random.default_rng(0)
    for seed in range(50):  # a LEAD with the opponent holding a recycled pile of several kinds
        state = game.new_state(np.random.default_rng(seed))
        log = _watch_recycles(state)
        while not state.is_over and state.rounds_completed < 200:
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
            viewer = state.current_player
            if state.phase == LEAD and 1 - viewer in log and len(state.piles[1 - viewer]) >= 4:
                if len(_kinds_held(state, 1 - viewer)) >= 4:
                    break
        else:
            continue
        break
    opponent = 1 - viewer
    held = _kinds_held(state, opponent)
    on_top, in_hand = Counter(), Counter()
    draws = 1500
    for _ in range(draws):
        twin = state.sample_hidden(viewer, rng)
        on_top[KIND[twin.piles[opponent][0]]] += 1
        in_hand.update(KIND[c] for c in twin.hands[opponent])
    kinds = sorted(held)
    total = sum(held.values())
    hand = len(state.hands[opponent])
    assert set(on_top) <= set(kinds) and set(in_hand) <= set(kinds)  # only kinds of its recycled pile's rest
    # every arrangement of the recycled pile's rest over hand and pile is equally likely
    assert chisquare([on_top[k] for k in kinds], [draws * held[k] / total for k in kinds]).pvalue > 1e-4
    assert chisquare([in_hand[k] for k in kinds], [draws * hand * held[k] / total for k in kinds]).pvalue > 1e-4


# -- the environment: eliminated players leave (PettingZoo dead-agent convention) -------------------------


def test_eliminated_agent_leaves_with_its_reward_and_the_rest_play_on():  # R17, section 9, RULES.md
    from card_envs import battlecards_v0

    env = battlecards_v0.env(num_players=3, shuffle_mid_game=False)
    env.reset(options={"deck": codes("AC 2D 10H KC 3D JH 5C 4D QH")})  # S17
    for action in ("A", "2", "10", "K", "3", "J", "5", "4", "Q"):
        env.step(kind(action))
    assert env.agent_selection == "player_1"  # the dead agent is selected first
    _obs, reward, terminated, truncated, _info = env.last()
    assert terminated and not truncated and reward == pytest.approx(-0.5)
    env.step(None)
    assert env.agents == ["player_0", "player_2"] and env.agent_selection == "player_2"
    assert env.observe("player_2")["action_mask"].any()


@pytest.mark.parametrize("n", [3, 4, 6])
def test_rewards_seen_through_last_are_the_returns_and_zero_sum(n):  # section 9 with eliminations
    from card_envs import battlecards_v0

    env = battlecards_v0.env(num_players=n, retire_lowest_on_flip=True)
    rng = np.random.default_rng(n)
    early_exits = 0
    for episode in range(6):
        env.reset(seed=episode)
        seen = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            seen[agent] += reward
            if (terminated or truncated) and not env.unwrapped.state_.is_over:
                early_exits += 1
            legal = np.flatnonzero(obs["action_mask"])
            env.step(None if terminated or truncated else int(rng.choice(legal)))
        returns = env.unwrapped.state_.returns()
        assert [seen[a] for a in env.possible_agents] == pytest.approx(returns)
        assert sum(returns) == pytest.approx(0.0, abs=1e-9)
    assert early_exits > 0  # the check covered eliminations
