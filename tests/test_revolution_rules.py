"""Revolution rules: every rule R1-R24, the worked scenarios of spec section 10, the rulings of section 5.

Spec: ``shared/specs/revolution.md``. Scenario tests replay the spec's moves on its stacked decks and
compare with the legal sets, winners, counts and rewards written in the spec. Property tests compare the
engine with small independent oracles (the spec's quick-reference table of legal sets, the R9/R11
trick winner) over random play.
"""

from __future__ import annotations

import numpy as np
import pytest

from card_envs import revolution_v0
from card_envs.core.errors import ConfigError, DeckError, IllegalActionError, StateError
from card_envs.revolution import encoding
from card_envs.revolution.rules import (
    ACTION_NAMES,
    CARD_CODES,
    DESIGNATED,
    FOLLOW,
    FORCED,
    OFFERED,
    OPENING,
    PASS,
    Revolution,
    RevolutionState,
)

# -- helpers -------------------------------------------------------------------------------------------


def codes(text: str) -> list[str]:
    return text.split()


def deck_for_dealer_3(holdings: dict[int, str]) -> list[str]:
    """Section 3.4: with dealer player_3, ``deck[4j + m] = Hm[j]``."""
    hands = {m: codes(h) for m, h in holdings.items()}
    return [hands[i % 4][i // 4] for i in range(52)]


SORTED = list(CARD_CODES)  # Deal C: index = idx

DEAL_A = {
    0: "AS 5S 9H KH 2H 3H AD QD 6D 7D 9C 10C JC",
    1: "5H 7H JH QH 4C AC KC QC 6S KS QS JS 10S",
    2: "2C 3C 5C 6C 7C 8C 2D 4D 5D JD 2S 3S 4S",
    3: "AH 4H 6H 8H 10H 3D 8D 9D 10D KD 8S 7S 9S",
}
DECK_A = codes("AS 5H 2C AH 5S 7H 3C 4H 9H JH 5C 6H KH QH 6C 8H 2H 4C 7C 10H 3H AC 8C 3D AD KC 2D 8D QD QC 4D "
               "9D 6D 6S 5D 10D 7D KS JD KD 9C QS 2S 8S 10C JS 3S 7S JC 10S 4S 9S")
DEAL_B = {
    0: "AD QD JD 10D 5C 4C 3C AH KH QH JH 10H 9H",
    1: "KD 9D 8D 7D 9C 8C 7C 2C 8H 7H 6H 5H 4H",
    2: "AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S",
    3: "3D 2D 4D 5D 6D 10C JC QC KC AC 3H 2H 6C",
}
DECK_B = codes("AD KD AS 3D QD 9D KS 2D JD 8D QS 4D 10D 7D JS 5D 5C 9C 10S 6D 4C 8C 9S 10C 3C 7C 8S JC AH 2C 7S QC "
               "KH 8H 6S KC QH 7H 5S AC JH 6H 4S 3H 10H 5H 3S 2H 9H 4H 2S 6C")
DELTA = "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S 10S AS"  # Deal C packet with AS: always the dealer's

SCENARIO_2_MOVES = ["AS", "3S", "4S", "5S", "KC", "2C", "3C", "4C", "QD", "5D", "2D", "3D", "JH", "4H", "5H", "2H"]
SCENARIO_3_MOVES = ["9H", "5H", "2C", "AH"]
SCENARIO_4_MOVES = ["2D", "3D", "AD", "4C"]
SCENARIO_5_MOVES = ["pass", "pass", "KD", "QD", "7H", "JD"]
SCENARIO_6_MOVES = ["pass", "pass", "pass", "pass", "AC", "3C", "8S", "KH"]


def action(move: str) -> int:
    return PASS if move == "pass" else CARD_CODES.index(move)


def start(deck: list[str] | None = None, decks: list | None = None, seed: int = 0, **config) -> RevolutionState:
    options = {}
    if deck is not None:
        options["deck"] = deck
    if decks is not None:
        options["decks"] = decks
    return Revolution(**config).new_state(np.random.default_rng(seed), options)


def deal_a(**config) -> RevolutionState:
    return start(DECK_A, first_dealer=3, num_hands=1, **config)


def deal_b(**config) -> RevolutionState:
    return start(DECK_B, first_dealer=3, num_hands=1, **config)


def play(state: RevolutionState, moves) -> None:
    for move in moves:
        state.apply(action(move))


def legal(state: RevolutionState) -> list[str]:
    """The legal set as the spec writes it: idx order, ``PASS`` last."""
    return ["PASS" if a == PASS else CARD_CODES[a] for a in state.legal_actions()]


def cards(text: str) -> list[str]:
    """Cards in idx order (the spec's listing order for legal sets)."""
    return sorted(codes(text), key=CARD_CODES.index)


def holding(state: RevolutionState, seat: int) -> list[str]:
    return [CARD_CODES[c] for c in state.holding(seat)]


def counts(state: RevolutionState) -> list[int]:
    return list(state.tricks_won)


# -- section 3: dealing (A2-A5) --------------------------------------------------------------------------


def test_explicit_decks_deal_the_listed_holdings():  # A3, section 3.4
    for deck, holdings in ((DECK_A, DEAL_A), (DECK_B, DEAL_B)):
        assert deck == deck_for_dealer_3(holdings)
        state = start(deck, first_dealer=3, num_hands=1)
        for seat, text in holdings.items():
            assert holding(state, seat) == cards(text)


def test_deal_starts_left_of_the_dealer_and_the_dealer_gets_the_last_card():  # A3
    state = start(SORTED)  # dealer player_0
    assert holding(state, 1)[0] == "2C" and holding(state, 2)[0] == "3C" and holding(state, 3)[0] == "4C"
    assert "5C" in holding(state, 0) and "AS" in holding(state, 0)
    for dealer in range(4):
        state = start(SORTED, first_dealer=dealer)
        assert holding(state, dealer) == cards(DELTA)
        assert state.current_player == dealer  # R2 / A5: the AS holder


def test_first_dealer_random_is_seeded_and_varies():  # A2
    dealers = {start(seed=seed, first_dealer="random").dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert [start(seed=s, first_dealer="random").dealer for s in range(10)] == \
        [start(seed=s, first_dealer="random").dealer for s in range(10)]


def test_unstacked_hands_are_shuffled_from_the_seed():  # A4
    first = [holding(start(seed=5), s) for s in range(4)]
    assert first == [holding(start(seed=5), s) for s in range(4)]
    assert first != [holding(start(seed=6), s) for s in range(4)]
    # every card is dealt, 13 to each seat
    assert sorted(c for h in first for c in h) == sorted(CARD_CODES)
    assert all(len(h) == 13 for h in first)


def test_shuffle_is_uniform_enough_over_seats():  # A4: where AS lands, over 4000 deals
    holders = np.bincount([start(seed=s).current_player for s in range(4000)], minlength=4)
    assert holders.min() > 900  # expectation 1000, sd ~27


@pytest.mark.parametrize("bad, message", [
    (SORTED[:51], "exactly 52"),
    (SORTED[:51] + ["2C"], "duplicated"),
    (SORTED[:51] + ["X1"], "not in this game's deck"),
    (SORTED[:51] + ["ZZ"], "unknown card code"),
])
def test_malformed_stacked_deck_is_rejected(bad, message):  # section 3.3
    with pytest.raises(DeckError, match=message):
        start(bad)
    with pytest.raises(DeckError, match=r"decks\[1\]"):
        start(decks=[SORTED, bad])


def test_deck_and_decks_together_are_rejected():
    with pytest.raises(DeckError, match="not both"):
        start(SORTED, decks=[SORTED])


def test_decks_stack_each_hand_and_missing_hands_are_shuffled():  # section 3.3, R19
    state = start(decks=[SORTED, None], num_hands=3)
    play(state, SCENARIO_2_MOVES)  # hand 1 on the sorted deck
    assert state.hand_number == 2
    assert holding(state, 1) != cards(DELTA)  # hand 2 (None) was shuffled, not sorted


# -- scenario 1 and 2: Deal C ----------------------------------------------------------------------------


def test_scenario_1_dealing_and_first_leader():  # R2, A3, A5, A7
    env = revolution_v0.env()
    env.reset(seed=0, options={"deck": SORTED})
    assert env.agent_selection == "player_0"
    state = env.unwrapped.state_
    assert holding(state, 1) == cards("2C 6C 10C AC 5D 9D KD 4H 8H QH 3S 7S JS")  # alpha
    assert holding(state, 2) == cards("3C 7C JC 2D 6D 10D AD 5H 9H KH 4S 8S QS")  # beta
    assert holding(state, 3) == cards("4C 8C QC 3D 7D JD 2H 6H 10H AH 5S 9S KS")  # gamma
    assert holding(state, 0) == cards(DELTA)
    assert state.phase == OPENING
    mask = env.observe("player_0")["action_mask"]
    assert np.flatnonzero(mask).tolist() == list(range(3, 52, 4))
    assert mask[52] == 0
    assert counts(state) == [0, 0, 0, 0] and state.scores == [0, 0, 0, 0]
    assert state.prev_led_suit == -1
    obs = env.observe("player_0")["observation"]
    assert not obs[289:293].any()  # PL none


def test_scenario_2_four_trick_sweep_ends_the_hand_and_game():  # R3, R13, R18, A45, section 9
    state = start(SORTED, num_hands=1)
    expected_legal = {
        4: cards("5C 9C KC 4D 8D QD 3H 7H JH") + ["PASS"],
        5: cards("2C 6C 10C AC"),
        8: cards("4D 8D QD 3H 7H JH 2S 6S 10S") + ["PASS"],
        12: cards("5C 9C 3H 7H JH 2S 6S 10S") + ["PASS"],
    }
    expected_legal[1] = cards("3S 7S JS")
    expected_legal[2] = cards("4S 8S QS")
    expected_legal[3] = cards("5S 9S KS")
    for i, move in enumerate(SCENARIO_2_MOVES):
        if i in expected_legal:
            assert legal(state) == expected_legal[i], f"decision {i}"
        state.apply(action(move))
    assert state.terminated and not state.truncated
    assert len(state.history) == 16
    assert state.scores == [4, 0, 0, 0]
    assert sum(len(holding(state, s)) for s in range(4)) == 36  # A26: 36 cards unplayed
    assert state.returns() == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])
    assert state.rewards == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])  # paid in the final step
    assert state.winners() == [0]


def test_scenario_2_with_trick_reward():  # section 9 shaping
    state = start(SORTED, num_hands=1, trick_reward=0.1)
    play(state, SCENARIO_2_MOVES[:4])
    assert state.rewards == pytest.approx([0.1, -0.1 / 3, -0.1 / 3, -0.1 / 3])  # in the trick's step
    play(state, SCENARIO_2_MOVES[4:])
    assert state.returns() == pytest.approx([1 + 0.4, -1 / 3 - 0.4 / 3, -1 / 3 - 0.4 / 3, -1 / 3 - 0.4 / 3])
    assert sum(state.returns()) == pytest.approx(0)


# -- scenarios 3-8: Deal A -------------------------------------------------------------------------------


def test_scenario_3_trick_one_follow_void_trump_low_trump_beats_ace():  # R2 R7 R8 R9 R11 A6 A16 A17 A23
    state = deal_a()
    assert state.current_player == 0
    assert legal(state) == cards(DEAL_A[0])  # PASS illegal on trick 1
    play(state, ["9H"])  # not AS: any card (A6)
    assert (state.led_suit, state.trump_suit, state.prev_led_suit) == (2, -1, -1)  # LS = the led card's suit (A16)
    assert legal(state) == cards("5H 7H JH QH")  # R7 (a)
    play(state, ["5H"])
    assert legal(state) == cards(DEAL_A[2])  # void, trick 1: any card (A17)
    play(state, ["2C"])
    assert state.trump_suit == 0  # R9: clubs
    assert legal(state) == cards(DEAL_A[3])  # R8 / A23: P3 holds hearts but need not follow
    play(state, ["AH"])
    assert state.prev_winner == 2 and CARD_CODES[state.prev_winning_card] == "2C"  # R11
    assert counts(state) == [0, 0, 1, 0]
    assert state.current_player == 2 and state.designated == 2 and state.phase == DESIGNATED  # R12


def test_scenario_4_restricted_lead_equal_rank_trump_rank_bound_avoid_pl():  # R3, R7(b), R11, A8, A9, A43
    state = deal_a()
    play(state, SCENARIO_3_MOVES)
    assert legal(state) == ["2D", "2S", "PASS"]
    before = state.to_dict()
    with pytest.raises(IllegalActionError, match="play 4D"):  # R22: rank above PW
        state.apply(action("4D"))
    assert state.to_dict() == before
    play(state, ["2D"])
    assert legal(state) == cards("3D 8D 9D 10D KD")
    play(state, ["3D"])
    assert legal(state) == cards("6D 7D QD AD")
    play(state, ["AD"])
    assert legal(state) == cards("4C QC KC AC 6S 10S JS QS KS")  # hearts (PL) excluded
    play(state, ["4C"])
    assert state.prev_winner == 1 and state.prev_trump_suit == 0
    assert counts(state) == [0, 1, 1, 0]


def test_scenario_5_forced_yield_offers_right_unrestricted_offer_ls_equals_pl():  # R3 R4 R6 R7 R9 A1 A14 A21 A22
    state = deal_a()
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES)
    assert holding(state, 1) == cards("7H JH QH AC KC QC 6S KS QS JS 10S")
    assert legal(state) == ["PASS"]  # no card of rank <= 4 outside diamonds
    play(state, ["pass"])
    assert state.current_player == 0 and state.phase == OFFERED  # P1's right
    assert legal(state) == cards("9C 10C JC 6D 7D QD 2H 3H KH 5S AS") + ["PASS"]
    play(state, ["pass"])
    assert state.current_player == 3 and state.phase == OFFERED
    assert legal(state) == cards("8D 9D 10D KD 4H 6H 8H 10H 7S 8S 9S") + ["PASS"]
    play(state, ["KD"])  # previous-led suit, above PW: fine for an offered leader
    assert (state.trick_leader, state.led_suit, state.prev_led_suit) == (3, 1, 1)
    assert state.current_player == 0  # R6: clockwise from T
    assert legal(state) == cards("6D 7D QD")
    play(state, ["QD"])
    assert legal(state) == cards(" ".join(holding(state, 1)))  # A22: void in LS = PL, all 11
    assert len(legal(state)) == 11
    play(state, ["7H"])
    assert state.trump_suit == 2  # hearts, led two tricks ago (A21)
    assert len(legal(state)) == 11
    play(state, ["JD"])
    assert state.prev_winner == 1 and counts(state) == [0, 2, 1, 0]
    assert len(state.history) == 8 + 6  # the trick took 6 decisions


def test_scenario_6_voluntary_yield_full_circle_forced_unrestricted_lead():  # R3 R4 R5 R9 A10 A11 A13 A14 A20 A44
    state = deal_a()
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES)
    assert legal(state) == ["6S", "PASS"]
    play(state, ["pass"])
    assert legal(state) == cards("9C 10C JC 6D 7D 2H 3H KH 5S AS") + ["PASS"]
    play(state, ["pass"])
    assert legal(state) == cards("8D 9D 10D 4H 6H 8H 10H 7S 8S 9S") + ["PASS"]
    play(state, ["pass"])
    assert legal(state) == cards("3C 5C 6C 7C 8C 4D 5D 2S 3S 4S") + ["PASS"]
    play(state, ["pass"])
    assert state.current_player == 1 and state.phase == FORCED
    assert legal(state) == cards("QC KC AC JH QH 6S 10S JS QS KS")  # no PASS
    play(state, ["AC"])
    assert (state.led_suit, state.prev_led_suit) == (0, 1)
    assert legal(state) == cards("3C 5C 6C 7C 8C")
    play(state, ["3C"])
    assert legal(state) == cards("4H 6H 8H 10H 7S 8S 9S")  # diamonds (PL) excluded
    play(state, ["8S"])
    assert state.trump_suit == 3
    assert legal(state) == cards("9C 10C JC 6D 7D 2H 3H KH 5S AS")  # all 10, clubs not required
    play(state, ["KH"])
    assert state.prev_trump_suit == 3  # unchanged by KH (A20)
    assert state.prev_winner == 3 and counts(state) == [0, 2, 1, 1]
    assert len(state.history) == 8 + 6 + 8  # the maximum, 8 decisions
    assert state.designated == 3
    assert legal(state) == cards("8D 4H 6H 8H 7S") + ["PASS"]  # trick 5: PL C, PW 8S (A42)


def test_forced_lead_restricted_option_uses_the_restricted_set_when_held():  # R5, A14 (forced_lead_restricted)
    state = deal_a(forced_lead_restricted=True)
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES + ["pass"] * 4)
    assert state.phase == FORCED and legal(state) == ["6S"]
    # ...and any card when no restricted-legal card is held: trick 3, P1 holds no card of rank <= 4
    state = deal_a(forced_lead_restricted=True)
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + ["pass"] * 4)
    assert state.phase == FORCED and state.current_player == 1
    assert legal(state) == cards("7H JH QH AC KC QC 6S KS QS JS 10S")


def test_scenario_8_allow_yield_first_trick():  # R2, A7
    state = deal_a(allow_yield_first_trick=True)
    assert legal(state) == cards(DEAL_A[0]) + ["PASS"]
    play(state, ["pass"])
    assert state.current_player == 3 and state.phase == OFFERED
    assert legal(state) == cards(DEAL_A[3]) + ["PASS"]
    # all decline: the opening leader must lead, any card (no restrictions on trick 1)
    play(state, ["pass", "pass", "pass"])
    assert state.current_player == 0 and state.phase == FORCED
    assert legal(state) == cards(DEAL_A[0])
    default = deal_a()
    with pytest.raises(IllegalActionError, match="'pass' is illegal"):
        default.apply(PASS)


def test_forced_lead_on_trick_one_is_unrestricted_even_with_forced_lead_restricted():  # R2, R5
    state = deal_a(allow_yield_first_trick=True, forced_lead_restricted=True)
    play(state, ["pass"] * 4)
    assert legal(state) == cards(DEAL_A[0])


# -- scenarios 9-10: Deal B -------------------------------------------------------------------------------


def test_scenario_9_spade_wall_is_ineligible_and_fixes_no_trump():  # R7(c), R9, R11, A19, A24, A25
    state = deal_b()
    assert state.current_player == 2
    assert legal(state) == cards(DEAL_B[2])
    play(state, ["2S"])
    assert legal(state) == cards(DEAL_B[3])
    play(state, ["3D", "AD", "KD"])
    assert state.prev_trump_suit == 1  # 3D fixed diamonds; AD overtrumps it (A24)
    assert state.prev_winner == 0 and counts(state) == [1, 0, 0, 0]  # AD: highest diamond
    assert legal(state) == cards(DEAL_B[0].replace("AD", "")) + ["PASS"]
    play(state, ["5C"])
    assert legal(state) == cards("2C 7C 8C 9C")
    play(state, ["9C"])
    assert legal(state) == cards(DEAL_B[2].replace("2S", ""))  # case (c): all 12 spades
    play(state, ["AS"])
    assert state.trump_suit == -1  # the ineligible AS fixes nothing
    assert legal(state) == cards("6C 10C JC QC KC AC")
    play(state, ["10C"])
    assert state.prev_trump_suit == -1
    assert state.prev_winner == 3 and counts(state) == [1, 0, 0, 1]  # AS cannot win


def test_scenario_10_spades_become_trumps_when_pl_changes_and_pass_only_lead():  # R3, R7(b), R9, R21, A11
    state = deal_b()
    play(state, ["2S", "3D", "AD", "KD", "5C", "9C", "AS", "10C"])
    assert legal(state) == cards("2D 4D 5D 6D 2H 3H") + ["PASS"]
    play(state, ["2H"])
    assert legal(state) == cards("9H 10H JH QH KH AH")
    play(state, ["9H"])
    assert legal(state) == cards("4H 5H 6H 7H 8H")
    play(state, ["4H"])
    assert legal(state) == cards("KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S")  # case (b) now
    play(state, ["3S"])
    assert state.prev_trump_suit == 3 and state.prev_winner == 2
    assert counts(state) == [1, 0, 1, 1]
    assert state.current_player == 2 and legal(state) == ["PASS"]


def test_single_legal_action_is_still_presented_to_the_agent():  # R21, A38
    env = revolution_v0.env(first_dealer=3, num_hands=1)
    env.reset(options={"deck": DECK_B})
    for move in ["2S", "3D", "AD", "KD", "5C", "9C", "AS", "10C", "2H", "9H", "4H", "3S"]:
        env.step(action(move))
    assert env.agent_selection == "player_2"
    assert np.flatnonzero(env.observe("player_2")["action_mask"]).tolist() == [PASS]
    env.step(PASS)
    assert env.agent_selection == "player_1"  # offered to P2's right


# -- scenario 12: observation ----------------------------------------------------------------------------


def _scenario_12_expected_default() -> np.ndarray:
    """Player_1's observation after scenario 4, written out from the spec (section 7.4 layout)."""
    obs = np.zeros(541, np.float32)
    for card in codes("7H JH QH AC KC QC 6S KS QS JS 10S"):
        obs[CARD_CODES.index(card)] = 1
    obs[264 + 0] = 1  # designated: me
    obs[272 + 1] = 1  # phase: designated lead
    obs[277 + 0] = 1  # acting: me
    obs[289 + 1] = 1  # PL = D
    obs[293 + 2] = 1  # rank of PW 4C
    for seat, card in ((2, "2D"), (3, "3D"), (0, "AD"), (1, "4C")):
        obs[306 + 52 * ((seat - 1) % 4) + CARD_CODES.index(card)] = 1
    obs[514 + 1] = 1  # previous leader P2 = my left neighbour
    obs[518 + 0] = 1  # previous winner: me
    obs[522 + 0] = 1  # previous trump: clubs
    obs[526 + 0] = obs[526 + 1] = 0.25  # my 1 trick, P2's 1 trick
    obs[534] = 2 / 12  # trick 3
    obs[535 + 2] = 1  # dealer P3 sits opposite P1
    return obs


def test_scenario_12_default_observation_shows_only_current_and_previous_trick():  # R24, A33, A34
    env = revolution_v0.env(first_dealer=3, num_hands=1)
    env.reset(options={"deck": DECK_A})
    for move in SCENARIO_3_MOVES + SCENARIO_4_MOVES:
        env.step(action(move))
    assert env.agent_selection == "player_1"
    observed = env.observe("player_1")
    np.testing.assert_array_equal(observed["observation"], _scenario_12_expected_default())
    assert np.flatnonzero(observed["action_mask"]).tolist() == [52]
    view = env.unwrapped.state_.view(1)
    trick_1 = {CARD_CODES.index(c) for c in ("9H", "5H", "2C", "AH")}
    assert not trick_1 & (set(view.hand) | set(view.trick) | set(view.prev_trick))
    assert view.recall == () and view.passes_this_hand is None


def test_scenario_12_full_recall_adds_the_hand_so_far_and_passes():  # A34, A36
    env = revolution_v0.env(first_dealer=3, num_hands=1, full_recall=True)
    env.reset(options={"deck": DECK_A})
    for move in SCENARIO_3_MOVES + SCENARIO_4_MOVES:
        env.step(action(move))
    obs = env.observe("player_1")["observation"]
    assert obs.shape == (753,)
    np.testing.assert_array_equal(obs[:541], _scenario_12_expected_default())
    expected = np.zeros(212, np.float32)
    for seat, card in ((0, "9H"), (1, "5H"), (2, "2C"), (3, "AH"), (2, "2D"), (3, "3D"), (0, "AD"), (1, "4C")):
        expected[52 * ((seat - 1) % 4) + CARD_CODES.index(card)] = 1
    np.testing.assert_array_equal(obs[541:], expected)  # pass counts all 0
    env.step(PASS)  # scenario 5: P1 yields
    for seat in range(4):
        agent = f"player_{seat}"
        relative = (1 - seat) % 4
        assert env.observe(agent)["observation"][268 + relative] == 1  # A35
        assert env.observe(agent)["observation"][749 + relative] == pytest.approx(1 / 13)
    plain = revolution_v0.env(first_dealer=3, num_hands=1)
    plain.reset(options={"deck": DECK_A})
    for move in SCENARIO_3_MOVES + SCENARIO_4_MOVES + ["pass"]:
        plain.step(action(move))
    assert plain.observe("player_0")["observation"][268 + 1] == 1  # A35: current passes are public anyway


def test_earlier_passes_are_shown_only_with_full_recall():  # A36
    for recall in (False, True):
        state = deal_a(full_recall=recall)
        play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES)  # P1, P0 passed in trick 3
        view = state.view(2)
        assert view.passed == (False, False, False, False)  # a new trick
        if recall:
            assert view.passes_this_hand == (1, 1, 0, 0)
        else:
            assert view.passes_this_hand is None
        obs = state.game.encode(view)
        assert obs.shape == (753 if recall else 541,)


# -- scenario 13 and the series ---------------------------------------------------------------------------

HAND_2_MOVES = ["AS", "3S", "4S", "5S", "KC", "2C", "3C", "4C", "QD", "5D", "2D", "3D", "JH", "4H", "5H", "2H"]
HAND_3_MOVES = ["2S", "3S", "QS", "5S", "JC", "4C", "5C", "2C", "10D", "3D", "4D", "5D", "9H", "2H", "3H", "4H"]


def test_scenario_13_tie_after_the_scheduled_hands_means_one_more_hand():  # R5..R19, A5, A18, A31, A32
    state = start(decks=[SORTED] * 3, num_hands=2)
    play(state, SCENARIO_2_MOVES)
    assert state.scores == [4, 0, 0, 0] and not state.is_over
    assert state.hand_number == 2 and state.dealer == 1  # R19
    assert state.current_player == 1 and state.phase == OPENING  # A5: the new AS holder
    assert state.prev_leader == -1 and state.prev_led_suit == -1  # A18
    assert counts(state) == [0, 0, 0, 0]
    play(state, HAND_2_MOVES[:4])
    assert legal(state) == cards("5C 9C KC 4D 8D QD 3H 7H JH") + ["PASS"]
    play(state, HAND_2_MOVES[4:])
    assert state.scores == [4, 4, 0, 0] and not state.is_over  # R17: tied, one more hand
    assert state.hand_number == 3 and state.dealer == 2 and state.current_player == 2  # A32
    assert state.view(0).is_tie_break
    play(state, HAND_3_MOVES[:4])
    assert state.prev_winner == 0
    assert legal(state) == cards("3C 7C JC 2D 6D 10D 5H 9H") + ["PASS"]
    play(state, HAND_3_MOVES[4:8])
    assert legal(state) == cards("2D 6D 10D 5H 9H 4S 8S") + ["PASS"]
    play(state, HAND_3_MOVES[8:12])
    assert legal(state) == cards("3C 7C 5H 9H 4S 8S") + ["PASS"]
    play(state, HAND_3_MOVES[12:])
    assert state.terminated and state.scores == [8, 4, 0, 0]
    assert state.winners() == [0]
    assert state.returns() == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])


def test_scenario_13_margin_rewards():  # section 9 margin
    state = start(decks=[SORTED] * 3, num_hands=2, reward_mode="margin")
    play(state, SCENARIO_2_MOVES + HAND_2_MOVES + HAND_3_MOVES)
    assert state.returns() == pytest.approx([5 / 12, 1 / 12, -1 / 4, -1 / 4])


def test_tie_break_cap_ends_in_a_shared_win():  # R17, A31 (max_extra_hands), section 9 k = 2
    state = start(decks=[SORTED] * 2, num_hands=2, max_extra_hands=0)
    play(state, SCENARIO_2_MOVES + HAND_2_MOVES)
    assert state.terminated and state.scores == [4, 4, 0, 0]
    assert state.winners() == [0, 1]
    assert state.returns() == pytest.approx([1 / 3, 1 / 3, -1 / 3, -1 / 3])


def test_tied_tie_break_hand_is_followed_by_another_until_the_cap():  # R17, A31, A32
    # hand 3 on the sorted deck: dealer P2 sweeps with the scenario-2 moves -> 4,4,4,0: tied again
    state = start(decks=[SORTED] * 4, num_hands=2, max_extra_hands=2)
    play(state, SCENARIO_2_MOVES + HAND_2_MOVES + HAND_2_MOVES)
    assert state.scores == [4, 4, 4, 0] and state.hand_number == 4 and state.dealer == 3
    play(state, HAND_2_MOVES)  # dealer P3 sweeps: 4,4,4,4 -> cap reached, four-way share
    assert state.terminated and state.rules_winners() == [0, 1, 2, 3]  # four-way shared result
    assert state.winners() == []  # which is a draw: every seat gets 0
    assert state.returns() == pytest.approx([0, 0, 0, 0])


def test_a_player_outside_the_tie_can_win_the_tie_break():  # A31
    # 4,4,0,0 after two hands; hand 3 dealer P2 sweeps: 4,4,4,0 -> still tied; hand 4 dealer P3 ...
    state = start(decks=[SORTED] * 5, num_hands=2, max_extra_hands=3)
    play(state, SCENARIO_2_MOVES + HAND_2_MOVES + HAND_2_MOVES + HAND_2_MOVES)
    assert state.scores == [4, 4, 4, 4] and not state.is_over
    play(state, HAND_2_MOVES)  # hand 5, dealer P0 again
    assert state.terminated and state.scores == [8, 4, 4, 4] and state.winners() == [0]


def test_three_way_share_rewards():  # section 9, k = 3
    state = start(decks=[SORTED] * 3, num_hands=3, max_extra_hands=0)
    play(state, SCENARIO_2_MOVES + HAND_2_MOVES + HAND_2_MOVES)
    assert state.winners() == [0, 1, 2]
    assert state.returns() == pytest.approx([1 / 9, 1 / 9, 1 / 9, -1 / 3])


def test_every_trick_won_scores_a_point_with_no_bonus():  # R12, R15, A28, A29
    game = Revolution(num_hands=2, max_extra_hands=0)
    for seed in range(30):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        expected = [0, 0, 0, 0]
        while not state.is_over:
            pile = state.hand_log  # the trick pile of the hand being played; the last trick joins it
            hand = state.hand_number
            acts = state.legal_actions()
            state.apply(acts[int(rng.integers(len(acts)))])
            if state.hand_number != hand or state.is_over:
                for record in pile:
                    expected[record[5]] += 1
                assert sorted(record[5] for record in pile).count(pile[-1][5]) == 4  # R13
                assert state.scores == expected


def test_single_hand_game_winner_is_the_hand_winner():  # R18
    game = Revolution(num_hands=1)
    for seed in range(50):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed + 1)
        while not state.is_over:
            acts = state.legal_actions()
            state.apply(acts[int(rng.integers(len(acts)))])
        assert state.terminated and max(state.scores) == 4 and sorted(state.scores)[-2] <= 3
        assert state.hand_number == 1 and state.winners() == [state.scores.index(4)]


def test_num_hands_schedules_that_many_hands():  # R16, A30
    game = Revolution(num_hands=3, max_extra_hands=0)
    for seed in range(10):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_over:
            acts = state.legal_actions()
            state.apply(acts[int(rng.integers(len(acts)))])
        assert state.hand_number == 3 and sum(state.scores) >= 12


# -- scenario 15: truncation -----------------------------------------------------------------------------


def test_scenario_15_truncation_scores_this_hands_tricks():  # R23, A41
    state = deal_a(max_steps=4)
    play(state, SCENARIO_3_MOVES)
    assert state.truncated and not state.terminated
    assert counts(state) == [0, 0, 1, 0]  # the fourth decision completed trick 1 first
    assert state.returns() == pytest.approx([-1 / 3, -1 / 3, 1, -1 / 3])
    with pytest.raises(StateError, match="over"):
        state.apply(0)
    state = deal_a(max_steps=3)
    play(state, SCENARIO_3_MOVES[:3])
    assert state.truncated and state.returns() == pytest.approx([0, 0, 0, 0])


def test_truncation_marks_every_agent_truncated_not_terminated():  # R23
    env = revolution_v0.env(first_dealer=3, num_hands=1, max_steps=4)
    env.reset(options={"deck": DECK_A})
    for move in SCENARIO_3_MOVES:
        env.step(action(move))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.rewards == pytest.approx({"player_0": -1 / 3, "player_1": -1 / 3, "player_2": 1,
                                         "player_3": -1 / 3})


def test_truncation_in_margin_mode_counts_the_unfinished_hand():  # R23, A41, section 9
    state = deal_a(max_steps=8, reward_mode="margin")
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES)
    # S = 0,1,1,0; mean 0.5; Hs = 1
    assert state.returns() == pytest.approx([-0.125, 0.125, 0.125, -0.125])


def test_truncation_with_trick_reward_adds_both():  # R23, section 9
    state = deal_a(max_steps=4, trick_reward=0.3)
    play(state, SCENARIO_3_MOVES)
    assert state.returns() == pytest.approx([-1 / 3 - 0.1, -1 / 3 - 0.1, 1 + 0.3, -1 / 3 - 0.1])


def test_max_steps_counts_decisions_over_the_whole_series():  # R23: passes count, hands accumulate
    state = start(decks=[SORTED] * 2, num_hands=2, max_steps=20)
    play(state, SCENARIO_2_MOVES + HAND_2_MOVES[:4])
    assert state.truncated and state.scores == [4, 0, 0, 0] and counts(state) == [0, 1, 0, 0]
    assert state.returns() == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])  # 4 vs 1 (A41)


# -- lead phase rules R1-R6 -----------------------------------------------------------------------------


def test_every_player_plays_one_card_per_trick_including_decliners():  # R1, A15
    state = deal_a()
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES + SCENARIO_6_MOVES)
    record = state.hand_log[-1]
    assert all(card >= 0 for card in record[1:5])
    assert [len(holding(state, s)) for s in range(4)] == [9, 9, 9, 9]  # 14 - t at the start of trick 5


def test_offers_go_right_once_each_and_return_to_the_designated_leader():  # R4, R5, R6, A12, A13
    state = deal_a()
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES)
    seen = []
    while state.phase != FORCED:
        seen.append(state.current_player)
        play(state, ["pass"])
    assert seen == [1, 0, 3, 2]  # D, then (D+3), (D+2), (D+1)
    assert state.current_player == 1 and PASS not in state.legal_actions()


def test_lead_phase_takes_one_to_five_decisions():  # R6, section 8.1
    game = Revolution(allow_yield_first_trick=True)
    longest = 0
    for seed in range(60):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_over:
            decisions = 0
            while state.phase in (OPENING, DESIGNATED, OFFERED, FORCED):
                acts = state.legal_actions()
                state.apply(acts[int(rng.integers(len(acts)))])
                decisions += 1
            assert 1 <= decisions <= 5
            longest = max(longest, decisions)
            follows = 0
            while state.phase == FOLLOW and not state.is_over:
                acts = state.legal_actions()
                state.apply(acts[int(rng.integers(len(acts)))])
                follows += 1
            assert follows == 3 or state.is_over
    assert longest == 5


def test_designated_pass_is_always_legal_after_trick_one():  # R3, A11
    game = Revolution()
    for seed in range(30):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_over:
            if state.phase == DESIGNATED:
                assert PASS in state.legal_actions()
            if state.phase in (FOLLOW, FORCED) or (state.phase == OPENING):
                assert PASS not in state.legal_actions()
            acts = state.legal_actions()
            state.apply(acts[int(rng.integers(len(acts)))])


# -- oracles: the quick-reference table and the trick winner over random play ----------------------------


def _reference_legal(state: RevolutionState) -> list[int]:
    """Section 4 quick reference, written independently of the engine (suit = idx // 13, rank = idx % 13)."""
    config = state.game.config
    hand = state.holding(state.current_player)
    if state.phase == FOLLOW:
        if state.trump_suit >= 0:
            return hand
        same = [c for c in hand if c // 13 == state.led_suit]
        if same:
            return same
        other = [c for c in hand if c // 13 != state.prev_led_suit]
        return other or hand
    restricted = hand
    if state.trick_number > 1:
        pw_rank = state.prev_winning_card % 13
        restricted = [c for c in hand if c // 13 != state.prev_led_suit and c % 13 <= pw_rank]
    if state.phase == OPENING:
        return hand + ([PASS] if config.allow_yield_first_trick else [])
    if state.phase == DESIGNATED:
        return restricted + [PASS]
    if state.phase == OFFERED:
        return hand + [PASS]
    if config.forced_lead_restricted and restricted:
        return restricted
    return hand


def _reference_winner(leader: int, cards_by_seat: list[int], prev_led: int) -> int:
    """R9/R11 from the play order alone."""
    order = [(leader + k) % 4 for k in range(4)]
    led = cards_by_seat[leader] // 13
    trump = -1
    for seat in order[1:]:
        suit = cards_by_seat[seat] // 13
        if trump < 0 and suit != led and suit != prev_led:
            trump = suit
    suit = trump if trump >= 0 else led
    eligible = [s for s in order if cards_by_seat[s] // 13 == suit]
    return max(eligible, key=lambda s: cards_by_seat[s] % 13)


@pytest.mark.parametrize("config", [{}, {"allow_yield_first_trick": True, "forced_lead_restricted": True}])
def test_legal_sets_and_trick_winners_match_independent_oracles(config):  # R2-R11, A17-A25
    game = Revolution(num_hands=2, **config)
    tricks = trumps = 0
    for seed in range(80):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed + 1000)
        prev_led = -1
        hand = state.hand_number
        while not state.is_over:
            assert state.legal_actions() == _reference_legal(state)
            before = len(state.hand_log)
            if state.hand_number != hand:
                prev_led, hand = -1, state.hand_number
            acts = state.legal_actions()
            state.apply(acts[int(rng.integers(len(acts)))])
            if state.hand_log and len(state.hand_log) == before + 1:
                record = state.hand_log[-1]
                assert record[5] == _reference_winner(record[0], record[1:5], prev_led)
                assert record[6] != record[1 + record[0]] // 13 and record[6] != prev_led or record[6] == -1  # R10
                prev_led = record[1 + record[0]] // 13
                tricks += 1
                trumps += record[6] >= 0
    assert tricks > 500 and trumps > 100


def test_hand_lasts_at_most_13_tricks_and_trick_13_only_after_3_each():  # R13, R14, A27
    game = Revolution(num_hands=1)
    reached_13 = 0
    for seed in range(400):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_over:
            if state.trick_number == 13 and state.cards_in_trick == 0 and state.phase != FOLLOW:
                assert state.tricks_won == [3, 3, 3, 3]
                assert all(len(state.holding(s)) == 1 for s in range(4))
                reached_13 += 1
            assert state.trick_number <= 13
            acts = state.legal_actions()
            state.apply(acts[int(rng.integers(len(acts)))])
        assert max(state.tricks_won) == 4 or state.truncated
    assert reached_13 >= 1


# -- R20-R22: turns, no auto-play, illegal actions ----------------------------------------------------------


def test_exactly_one_player_to_act_and_follow_order_is_clockwise_from_the_leader():  # R6, R20
    state = deal_a()
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + ["pass", "pass", "KD"])
    assert [state.current_player] == [0]
    for expected in (0, 1, 2):
        assert state.current_player == expected
        state.apply(state.legal_actions()[0])


def test_illegal_and_out_of_range_actions_raise_and_change_nothing():  # R22, A39
    state = deal_a()
    before = state.to_dict()
    for bad in (PASS, action("5H"), 53, -1, True, 2.0, "9H"):
        with pytest.raises(IllegalActionError, match="legal: "):
            state.apply(bad)
        assert state.to_dict() == before
    state.apply(np.int64(action("9H")))  # numpy integers are accepted
    assert state.trick[0] == action("9H")


def test_illegal_move_through_env_follows_pettingzoo_convention(caplog):  # R22
    env = revolution_v0.env(first_dealer=3, num_hands=1)
    env.reset(options={"deck": DECK_A})
    env.step(PASS)
    assert "Illegal move" in caplog.text
    assert env.rewards["player_0"] == -1 and all(env.terminations.values())


# -- R24 / A26 / A37: what is on the table ----------------------------------------------------------------


def test_only_the_previous_trick_stays_visible():  # R24, A34
    state = deal_a()
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES)
    for seat in range(4):
        view = state.view(seat)
        assert [CARD_CODES[c] for c in view.prev_trick] == ["QD", "7H", "JD", "KD"]
        assert view.recall == ()
        obs = state.game.encode(view)
        assert obs[306:514].sum() == 4 and obs[52:260].sum() == 0


def test_new_hand_shows_no_previous_trick_but_scores_and_dealer():  # A18, A37
    env = revolution_v0.env(num_hands=2)
    env.reset(options={"decks": [SORTED]})
    for move in SCENARIO_2_MOVES:
        env.step(action(move))
    obs = env.observe("player_2")["observation"]
    assert not obs[289:306].any() and not obs[306:526].any()  # no PL, PW, previous trick
    assert obs[530 + 2] == pytest.approx(4 / 8)  # P0's score, seen from P2 (relative seat 2)
    assert obs[535 + 3] == 1  # dealer P1 is P2's right neighbour
    assert obs[539] == pytest.approx(1 / 2)  # one hand of two completed


def test_unplayed_cards_are_never_revealed():  # A26
    state = start(SORTED, num_hands=1)
    play(state, SCENARIO_2_MOVES)
    for seat in range(4):
        view = state.view(seat)
        assert set(view.hand) == set(state.holding(seat))
        assert view.hand_sizes == (9, 9, 9, 9)
        assert view.over and view.current_player == -1


# -- section 6: options --------------------------------------------------------------------------------------


def test_defaults_match_the_spec():
    config = Revolution().config
    assert config.to_dict() == {
        "num_hands": 4, "first_dealer": 0, "allow_yield_first_trick": False, "forced_lead_restricted": False,
        "full_recall": False, "max_extra_hands": 10, "max_steps": None, "reward_mode": "win", "trick_reward": 0.0,
        "void_inferences": False,  # ours, not the spec's: off by default
    }


@pytest.mark.parametrize("option, value", [
    ("num_hands", 0), ("num_hands", 1.5), ("first_dealer", 4), ("first_dealer", -1), ("first_dealer", "left"),
    ("allow_yield_first_trick", 1), ("forced_lead_restricted", "yes"), ("full_recall", None),
    ("max_extra_hands", -1), ("max_steps", 0), ("reward_mode", "score"), ("trick_reward", -0.1),
    ("num_players", 3),  # A40: fixed at 4
    ("void_inferences", "yes"),
])
def test_bad_option_values_are_rejected_by_name(option, value):
    with pytest.raises(ConfigError, match=option):
        Revolution(**{option: value})


def test_action_names_are_the_spec_names():  # section 8.2
    assert ACTION_NAMES[0] == "play 2C" and ACTION_NAMES[21] == "play 10D" and ACTION_NAMES[33] == "play 9H"
    assert ACTION_NAMES[12] == "play AC" and ACTION_NAMES[51] == "play AS" and ACTION_NAMES[52] == "pass"
    assert len(ACTION_NAMES) == 53
    assert revolution_v0.raw_env().action_names == ACTION_NAMES


def test_layouts_tile_the_observations():  # section 7.4
    for layout, size in ((encoding.LAYOUT, 541), (encoding.RECALL_LAYOUT, 753), (encoding.INFERENCE_LAYOUT, 909)):
        assert layout[0][0] == 0 and layout[-1][1] == size
        assert all(a[1] == b[0] for a, b in zip(layout, layout[1:], strict=False))
    assert Revolution().observation_size == 541 and Revolution(full_recall=True).observation_size == 753
    assert Revolution(full_recall=True, void_inferences=True).observation_size == 909


# -- void_inferences: what the tricks prove about the opponents' holdings (section 7.3), observed ---------


def _card_bits(text: str) -> np.ndarray:
    bits = np.zeros(52, np.float32)
    bits[[CARD_CODES.index(c) for c in cards(text)]] = 1
    return bits


ALL_CARDS = " ".join(CARD_CODES)


def _unseen(seen: str) -> np.ndarray:
    return _card_bits(ALL_CARDS) - _card_bits(seen)


def test_void_inferences_show_a_void_in_the_led_suit_and_the_known_ace_holder():  # section 7.3, R7(b), R9, R2
    state = deal_a(full_recall=True, void_inferences=True)
    play(state, SCENARIO_3_MOVES + SCENARIO_4_MOVES)  # state of scenario 12: P1 to act
    obs = state.game.encode(state.view(1))
    assert obs.shape == (909,)
    np.testing.assert_array_equal(obs[:753], Revolution(first_dealer=3, num_hands=1, full_recall=True).encode(
        state.view(1)))  # the full_recall observation, unchanged
    unseen = _unseen(DEAL_A[1] + " 9H AH 2C 2D 3D AD")  # P1's 13 cards and the others' 6 played cards
    hearts = _card_bits("2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH")
    ace = _card_bits("AS")
    # P2 (left of P1) played 2C on a heart lead before trump was fixed: void in hearts; P0 (right)
    # holds AS (it was the designated leader of trick 1 and AS is unplayed); P3 played AH after trump
    # was fixed, which proves nothing
    np.testing.assert_array_equal(obs[753:805], unseen * (1 - hearts) * (1 - ace))
    np.testing.assert_array_equal(obs[805:857], unseen * (1 - ace))
    np.testing.assert_array_equal(obs[857:909], unseen)


def test_void_inferences_show_a_wall():  # section 7.3, R7(c), A19
    state = deal_b(full_recall=True, void_inferences=True)
    play(state, ["2S", "3D", "AD", "KD", "5C", "9C", "AS", "10C"])  # scenario 9
    obs = state.game.encode(state.view(0))
    unseen = _unseen(DEAL_B[0] + " 2S 3D KD 9C AS 10C")
    spades = _card_bits("2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS")
    np.testing.assert_array_equal(obs[753:805], unseen)  # P1 followed suit both times
    np.testing.assert_array_equal(obs[805:857], unseen * spades)  # P2 played AS, a PL card, void in clubs: a wall
    np.testing.assert_array_equal(obs[857:909], unseen * (1 - spades))  # P3 played 3D on a spade lead


def test_void_inferences_need_full_recall():
    with pytest.raises(ConfigError, match="void_inferences.*needs full_recall"):
        Revolution(void_inferences=True)


# -- section 7.3: what the hidden deal must respect (no-leak sampling for search) --------------------------


def _assert_uniform_over_splits(pool, sizes, allows, deal, repeats):
    """``deal(rng)`` draws every split of ``pool`` into parts of ``sizes`` (part ``i`` holding only cards
    with ``allows(i, card)``, the rest to the pile) and nothing else, uniformly (chi-square)."""
    import itertools
    from collections import Counter

    from scipy.stats import chisquare

    splits = set()
    for a in itertools.combinations(pool, sizes[0]):
        for b in itertools.combinations([c for c in pool if c not in a], sizes[1]):
            for c in itertools.combinations([x for x in pool if x not in a + b], sizes[2]):
                if all(allows(0, x) for x in a) and all(allows(1, x) for x in b):
                    splits.add((frozenset(a), frozenset(b), frozenset(c)))
    rng = np.random.default_rng(0)
    counts = Counter(tuple(frozenset(p) for p in deal(rng)[:3]) for _ in range(repeats * len(splits)))
    assert set(counts) == splits
    assert chisquare([counts[s] for s in splits]).pvalue > 1e-4


def test_hidden_deals_are_uniform_over_every_split_the_constraints_allow():  # section 7.3
    from card_envs.revolution.rules import deal_by_suit

    pool = [0, 1, 2, 13, 14, 26, 39, 40]  # 3 clubs, 2 diamonds, 1 heart, 2 spades
    sizes, allowed = [3, 2, 2], [0b1110, 0b1000, 0b1111]  # void in clubs; spades only; free; the pile gets 1
    _assert_uniform_over_splits(pool, sizes, lambda i, card: allowed[i] >> (card // 13) & 1,
                                lambda rng: deal_by_suit(pool, sizes, allowed, rng), repeats=60)


def test_hidden_deals_are_uniform_under_card_level_limits():  # section 7.3 with R5's variant (forced-lead limits)
    from card_envs.revolution.rules import SUIT_BITS, deal_within_limits

    pool = [0, 1, 9, 13, 20, 25, 39, 40]  # clubs 2 3 J, diamonds 2 9 A, spades 2 3
    low = sum(1 << c for c in pool if c % 13 <= 7)  # ranks 2..9
    limits = [(1 << 52) - 1 & ~(low & ~SUIT_BITS[3]), SUIT_BITS[1] | SUIT_BITS[3], (1 << 52) - 1]
    sizes = [2, 2, 2]  # no low club or diamond; diamonds or spades only; free; the pile gets 2
    _assert_uniform_over_splits(pool, sizes, lambda i, card: limits[i] >> card & 1,
                                lambda rng: deal_within_limits(pool, sizes, limits, rng), repeats=40)


def test_sampled_positions_keep_the_voids_walls_and_ace_the_view_proves():  # section 7.3, R2, R7(c)
    state = deal_b()
    play(state, ["2S", "3D", "AD", "KD", "5C", "9C", "AS"])  # P2's AS: a case-(c) card, P2 holds only spades
    rng = np.random.default_rng(3)
    for _ in range(25):
        sample = state.sample_hidden(3, rng)
        assert sample.view(3) == state.view(3)
        assert all(c // 13 == 3 for c in sample.holding(2))  # the wall
    opening = deal_b()
    for _ in range(25):
        assert ACTION_NAMES.index("play AS") in opening.sample_hidden(0, rng).holding(2)  # R2: D holds AS
    moved = sum(opening.sample_hidden(0, rng).holding(1) != opening.holding(1) for _ in range(10))
    assert moved == 10
