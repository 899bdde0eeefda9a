"""Rule and scenario tests of Revolutionary War (spec ``specs/revolutionary_war.md``).

* Every worked scenario of spec section 10 is a test named ``test_S<n>_...``, driven through the raw engine
  (``card_envs.make_game``) and, for S1, S2, S10, S14 and S16, through the PettingZoo env as well.
* Every rule R0-R23 is cited by a test name or a ``# R<n>`` comment; so is every testable ruling of section 5
  (``# A<n>``).
* Expected values come from the spec's own text: the six decks of section 10, the strength table of R0 and the
  action names of section 8 are transcribed below verbatim and parsed here, never taken from the code under test.
  The random-play tests check the engine against :class:`Referee`, an independent re-statement of R9-R16, R23
  and section 9 that sees only public information.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs import revolutionary_war_v0
from card_envs.cards import card_codes
from card_envs.core.errors import ConfigError, DeckError, IllegalActionError, StateError

NAME = "revolutionary_war_v0"
P0, P1 = 0, 1
AGENTS = ("player_0", "player_1")

# -- spec text, verbatim ----------------------------------------------------------------------------------------

#: spec section 10, "Decks" (line 1 holds indices 0-12 | 13-25; line 2 holds 26-38 | 39-51)
SPEC_DECKS = """
Deck A: 2H AC 5D 4S 9C 7H JS 10D KH QC 6S 8C 3H | 5C 8D 6H 9S 3C 2C 4C 6C 7C 10C JC KC AD
        2D 3D 4D 6D 7D 9D JD QD KD AH 4H 5H 8H  | 9H 10H JH QH AS 2S 3S 5S 7S 8S 10S QS KS
Deck B: 3C 4C 3D 8D 8H 8S QH JC AS KD 2D KS 9H  | 4H 2S 10C AC 2C 5C 6C 7C 8C 9C QC KC AD
        4D 5D 6D 7D 9D 10D JD QD AH 2H 3H 5H 6H | 7H 10H JH KH 3S 4S 5S 6S 7S 9S 10S JS QS
Deck C: AH QC 2C 4D 3C 5S JD 9H KS AD 3S 7C 10H | 3D 6C AC 4C 5C 8C 9C 10C JC KC 2D 5D 6D
        7D 8D 9D 10D QD KD 2H 3H 4H 5H 6H 7H 8H | JH QH KH AS 2S 4S 6S 7S 8S 9S 10S JS QS
Deck D: AD KS KC AS QC 2H 2D 6D 7H 8H AH 5C 9S  | 3D 4D 10S AC 2C 3C 4C 6C 7C 8C 9C 10C JC
        5D 7D 8D 9D 10D JD QD KD 3H 4H 5H 6H 9H | 10H JH QH KH 2S 3S 4S 5S 6S 7S 8S JS QS
Deck E: 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QS QC QH | AC KC AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD
        AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH AS 2S | 3S 4S 5S 6S 7S 8S 9S 10S JS QD KS KH KD
Deck F: 2C 3C 4C 5C 6C 7C 8C 9C 10C AC QS QC QH | JC KC AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD
        AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH AS 2S | 3S 4S 5S 6S 7S 8S 9S 10S JS QD KS KH KD
"""

#: spec R0, the ordering for every trump
SPEC_STRENGTH_TABLE = """
| Trump | Weakest → strongest |
|---|---|
| A | 2 3 4 5 6 7 8 9 10 J Q K A |
| 2 | 3 4 5 6 7 8 9 10 J Q K A 2 |
| 3 | 4 5 6 7 8 9 10 J Q K A 2 3 |
| 4 | 5 6 7 8 9 10 J Q K A 2 3 4 |
| 5 | 6 7 8 9 10 J Q K A 2 3 4 5 |
| 6 | 7 8 9 10 J Q K A 2 3 4 5 6 |
| 7 | 8 9 10 J Q K A 2 3 4 5 6 7 |
| 8 | 9 10 J Q K A 2 3 4 5 6 7 8 |
| 9 | 10 J Q K A 2 3 4 5 6 7 8 9 |
| 10 | J Q K A 2 3 4 5 6 7 8 9 10 |
| J | Q K A 2 3 4 5 6 7 8 9 10 J |
| Q | K A 2 3 4 5 6 7 8 9 10 J Q |
| K | A 2 3 4 5 6 7 8 9 10 J Q K |
"""

RANKS = "A 2 3 4 5 6 7 8 9 10 J Q K".split()  # section 2
VALUE = {rank: i + 1 for i, rank in enumerate(RANKS)}  # section 2: A=1 .. K=13
SUITS = "CDHS"  # section 2: C < D < H < S
STANDARD_ORDER = [rank + suit for suit in SUITS for rank in RANKS]  # section 2
#: section 8: index = rank value - 1, then concede
SPEC_ACTION_NAMES = tuple(f"play {rank}" for rank in RANKS) + ("concede",)


def parse_decks(text: str) -> dict[str, list[str]]:
    """``{"A": [52 codes, index 0 first], ...}`` from the spec's deck listing."""
    decks: dict[str, list[str]] = {}
    name = ""
    for line in text.strip().splitlines():
        head, colon, rest = line.partition(":")
        if colon:
            name = head.split()[1]
            decks[name] = []
        else:
            rest = line
        decks[name].extend(rest.replace("|", " ").split())
    return decks


def parse_strength_table(text: str) -> dict[int, list[int]]:
    """``{trump value: [rank values, weakest first]}`` from the spec's R0 table."""
    table = {}
    for line in text.strip().splitlines()[2:]:
        trump, order = (cell.strip() for cell in line.strip().strip("|").split("|"))
        table[VALUE[trump]] = [VALUE[rank] for rank in order.split()]
    return table


_DECKS = parse_decks(SPEC_DECKS)
DECK_A, DECK_B, DECK_C, DECK_D, DECK_E, DECK_F = (_DECKS[n] for n in "ABCDEF")
WEAKEST_TO_STRONGEST = parse_strength_table(SPEC_STRENGTH_TABLE)


def table_strength(rank: int, trump: int) -> int:
    """Position of ``rank`` in the spec's R0 row of ``trump`` (0 = weakest)."""
    return WEAKEST_TO_STRONGEST[trump].index(rank)


def rank_of(code: str) -> int:
    return VALUE[code[:-1]]


def is_black(code: str) -> bool:
    return code[-1] in "CS"  # section 2


def stacked(positions: dict[int, str]) -> list[str]:
    """A deck with the given codes at the given indices, the rest in standard order (section 10 convention)."""
    rest = [code for code in STANDARD_ORDER if code not in positions.values()]
    return [positions[i] if i in positions else rest.pop(0) for i in range(52)]


def names(text: str) -> list[str]:
    """``"play A, concede"`` -> ``["play A", "concede"]`` (the spec's way of listing legal sets)."""
    return text.split(", ")


# -- raw-engine helpers -----------------------------------------------------------------------------------------


def deal(deck: list[str] | None = None, *, decks: list | None = None, seed: int = 0, **config):
    game = card_envs.make_game(NAME, **config)
    options = {"decks": decks} if decks is not None else ({"deck": deck} if deck is not None else None)
    return game.new_state(np.random.default_rng(seed), options)


def legal(state) -> list[str]:
    return [state.game.action_names[a] for a in state.legal_actions()]


def act(state, player: int, action: str) -> None:
    assert state.current_player == player, f"expected player_{player} to act, not player_{state.current_player}"
    state.apply(state.game.action_names.index(action))


def play_line(state, line: list[tuple[int, str]]) -> None:
    for player, action in line:
        act(state, player, action)


def hand(state, seat: int) -> set[str]:
    return set(card_codes(state.view(seat).hand))


def stack(state) -> list[str]:
    return card_codes(state.view(0).trump_stack)


def deck_size(state) -> int:
    return state.view(0).deck_size


def scores(state) -> tuple[int, int]:
    piles = state.view(0).score_piles
    return len(piles[0]), len(piles[1])


def pile(state, seat: int) -> set[str]:
    return set(card_codes(state.view(0).score_piles[seat]))


def played(state) -> list[str]:
    return card_codes(state.view(0).played)


def draw_deck(state) -> list[str]:
    return card_codes(state.card_locations()["deck"])


# -- the spec itself --------------------------------------------------------------------------------------------


def test_spec_decks_are_permutations_of_the_52_cards():  # R2, section 10
    for name, deck in _DECKS.items():
        assert sorted(deck) == sorted(STANDARD_ORDER), f"deck {name} transcribed wrongly"
    assert DECK_E[48:] == ["QD", "KS", "KH", "KD"] and DECK_F[48:] == ["QD", "KS", "KH", "KD"]


def test_R0_table_agrees_with_the_formula_and_the_two_part_rule():  # R0, A10, A12
    for trump, order in WEAKEST_TO_STRONGEST.items():
        assert sorted(order) == list(range(1, 14)) and order[-1] == trump and order[0] == trump % 13 + 1
        for card, last in itertools.product(range(1, 14), repeat=2):
            same_side = (card <= trump) == (last <= trump)
            two_part = card >= last if same_side else card <= trump  # (a) / (b)
            assert (table_strength(card, trump) >= table_strength(last, trump)) == two_part
            assert table_strength(card, trump) == (card - trump - 1) % 13


def test_section_8_action_names():
    game = card_envs.make_game(NAME)
    assert game.action_names == SPEC_ACTION_NAMES
    assert game.num_actions == 14
    assert revolutionary_war_v0.raw_env().action_names == SPEC_ACTION_NAMES


# -- S1 / S2 (Deck A) -------------------------------------------------------------------------------------------


def test_S1_deal_layout_black_majority_dealer_leads():  # R2, R4, A1, A2, A3, A4, A8
    state = deal(DECK_A)
    assert hand(state, P1) == {"2H", "5D", "9C", "JS", "KH"}  # non-dealer: even indices
    assert hand(state, P0) == {"AC", "4S", "7H", "10D", "QC"}  # dealer: odd indices
    assert stack(state) == ["6S", "8C", "3H"]
    assert card_codes(state.view(P1).trump_stack) == ["6S", "8C", "3H"]  # A4: all of it public
    assert deck_size(state) == 39
    assert draw_deck(state)[0] == "5C"
    assert draw_deck(state) == DECK_A[13:]
    assert scores(state) == (0, 0)
    assert state.view(P1).dealer == P0  # A1: first_dealer defaults to 0
    assert state.current_player == P0 and state.view(P1).leader == P0
    assert legal(state) == names("play A, play 4, play 7, play 10, play Q, concede")
    assert state.legal_actions() == [0, 3, 6, 9, 11, 13]


#: S2: (actor, action, card played, card drawn, actor's hand after, deck after, the opponent's legal set after)
S2_STEPS = [
    (P0, "play 10", "10D", "5C", {"AC", "4S", "7H", "QC", "5C"}, 38, "play 2, play 5, play J, play K, concede"),
    (P1, "play J", "JS", "8D", {"2H", "5D", "9C", "KH", "8D"}, 37, "play A, play 4, play 5, play Q, concede"),
    (P0, "play Q", "QC", "6H", {"AC", "4S", "7H", "5C", "6H"}, 36, "play 2, play 5, play K, concede"),
    (P1, "play 2", "2H", "9S", {"5D", "9C", "KH", "8D", "9S"}, 35, "play 4, play 5, play 6, concede"),
    (P0, "play 6", "6H", "3C", {"AC", "4S", "7H", "5C", "3C"}, 34, "concede"),
]
S2_LINE = [(actor, action) for actor, action, *_ in S2_STEPS] + [(P1, "concede")]


def test_S2_multi_exchange_round_cyclic_legality_draws_capture_replenish_to_bottom():  # A9, A41
    state = deal(DECK_A)
    sequence = []
    for actor, action, card, drawn, hand_after, deck_after, next_legal in S2_STEPS:
        before = hand(state, actor)
        act(state, actor, action)
        sequence.append(card)
        assert played(state) == sequence  # R6: face up into the played sequence
        assert hand(state, actor) == hand_after == (before - {card}) | {drawn}  # R6, A9: drew the top card
        assert deck_size(state) == deck_after
        assert state.current_player == 1 - actor  # R8
        assert state.view(actor).leader == P0  # R8: the round's leader does not change
        assert legal(state) == names(next_legal)  # R7, A11, A12
        assert scores(state) == (0, 0)
    assert state.legal_actions() == [13]  # R21, A35: p1's forced concession is still p1's decision
    act(state, P1, "concede")
    assert pile(state, P0) == {"10D", "JS", "QC", "2H", "6H", "6S"}  # R9: played cards + the trump
    assert scores(state) == (6, 0)
    assert played(state) == []
    assert stack(state) == ["8C", "3H", "2C"] and DECK_A[18] == "2C"  # R10, A6: to the BOTTOM
    assert card_codes(state.view(P1).trump_stack) == ["8C", "3H", "2C"]  # A5: drawn face up, public
    assert deck_size(state) == 33
    assert state.current_player == P0 and state.view(P1).leader == P0  # R12
    assert state.view(P1).last_capturer == P0  # R9
    assert legal(state) == names("play A, play 3, play 4, play 5, play 7, concede")  # active trump 8


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
@pytest.mark.parametrize("weight", [0.5, 2.0])
def test_S2_shaping_pays_the_capture_in_the_conceding_step(reward_mode, weight):  # section 9
    state = deal(DECK_A, shaping_weight=weight, reward_mode=reward_mode)
    for actor, action in S2_LINE[:-1]:
        act(state, actor, action)
        assert state.rewards == [0.0, 0.0]
    act(state, P1, "concede")
    assert state.rewards == pytest.approx([6 * weight / 52, -6 * weight / 52])
    assert state.returns() == pytest.approx([6 * weight / 52, -6 * weight / 52])


# -- S3 / S4 / S5 (Deck B) --------------------------------------------------------------------------------------

S3_LINE = [(P1, "concede")]
S4_LINE = [(P0, "play 8"), (P1, "play 8"), (P0, "concede")]


def test_S3_red_majority_non_dealer_leads_immediate_concession():  # R4, R5, R9, R10, R12, A7, A15, A17
    state = deal(DECK_B)
    assert hand(state, P1) == {"3C", "3D", "8H", "QH", "AS"}
    assert hand(state, P0) == {"4C", "8D", "8S", "JC", "KD"}
    assert stack(state) == ["2D", "KS", "9H"]
    assert state.current_player == P1 and state.view(P0).leader == P1  # R4: 2 of 3 red
    assert legal(state) == names("play A, play 3, play 8, play Q, concede")
    act(state, P1, "concede")  # A15
    assert pile(state, P0) == {"2D"} and scores(state) == (1, 0)  # A17: only the trump
    assert stack(state) == ["KS", "9H", "4H"]
    assert deck_size(state) == 38
    assert hand(state, P1) == {"3C", "3D", "8H", "QH", "AS"} and hand(state, P0) == {"4C", "8D", "8S", "JC", "KD"}
    assert state.current_player == P0  # R12: the capturer leads
    assert legal(state) == names("play 4, play 8, play J, play K, concede")  # A8: any held rank


def test_S4_equal_rank_beats_lowest_suit_voluntary_concession():  # R7, A10, A14, A34
    state = deal(DECK_B)
    play_line(state, S3_LINE)
    assert legal(state) == names("play 4, play 8, play J, play K, concede")
    act(state, P0, "play 8")
    assert played(state) == ["8D"]  # A34: D < S
    assert hand(state, P0) == {"4C", "8S", "JC", "KD", "2S"}
    assert deck_size(state) == 37
    assert legal(state) == names("play 8, play Q, concede")  # A10: the equal 8 beats
    act(state, P1, "play 8")
    assert played(state) == ["8D", "8H"]
    assert hand(state, P1) == {"3C", "3D", "QH", "AS", "10C"}
    assert deck_size(state) == 36
    assert legal(state) == names("play 8, play J, play K, concede")
    act(state, P0, "concede")  # A14: legal although p0 holds 8S, JC, KD
    assert pile(state, P1) == {"8D", "8H", "KS"}
    assert scores(state) == (1, 3)
    assert stack(state) == ["9H", "4H", "AC"] and DECK_B[16] == "AC"
    assert deck_size(state) == 35
    assert state.current_player == P1


def test_S5_low_card_beats_higher_numbers_under_wrap_around():  # R0, R7, A12, A34
    state = deal(DECK_B)
    play_line(state, S3_LINE + S4_LINE)
    assert legal(state) == names("play A, play 3, play 10, play Q, concede")
    act(state, P1, "play 3")
    assert played(state) == ["3C"]  # A34: C < D
    assert hand(state, P1) == {"3D", "QH", "AS", "10C", "2C"}
    assert deck_size(state) == 34
    assert hand(state, P0) == {"4C", "8S", "JC", "KD", "2S"}
    assert legal(state) == names("play 4, play 8, concede")  # J, K above trump 9; 2 < 3


# -- S6 (Deck C), S7 (Deck D) -----------------------------------------------------------------------------------


def test_S6_author_example_trump_3_trump_rank_only_matched():  # R0, R7, R9, R10, A10, A12, A13
    state = deal(DECK_C)
    assert hand(state, P1) == {"AH", "2C", "3C", "JD", "KS"}
    assert hand(state, P0) == {"QC", "4D", "5S", "9H", "AD"}
    assert stack(state) == ["3S", "7C", "10H"]
    assert state.current_player == P0  # R4: 2 black
    act(state, P0, "play Q")
    assert played(state) == ["QC"] and hand(state, P0) == {"4D", "5S", "9H", "AD", "3D"}
    assert legal(state) == names("play A, play 2, play 3, play K, concede")  # J is illegal
    act(state, P1, "play 3")
    assert played(state) == ["QC", "3C"]
    assert hand(state, P1) == {"AH", "2C", "JD", "KS", "6C"}
    assert hand(state, P0) == {"4D", "5S", "9H", "AD", "3D"}
    assert legal(state) == names("play 3, concede")
    act(state, P0, "play 3")
    assert hand(state, P0) == {"4D", "5S", "9H", "AD", "AC"}
    assert legal(state) == names("concede")
    act(state, P1, "concede")
    assert pile(state, P0) == {"QC", "3C", "3D", "3S"} and scores(state) == (4, 0)
    assert stack(state) == ["7C", "10H", "4C"]
    assert deck_size(state) == 35
    assert state.current_player == P0
    assert legal(state) == names("play A, play 4, play 5, play 9, concede")


def test_S7_first_dealer_1_trump_ace():  # R0, R4, A1, A2
    state = deal(DECK_D, first_dealer=1)
    assert state.view(P0).dealer == P1
    assert hand(state, P0) == {"AD", "KC", "QC", "2D", "7H"}  # non-dealer p0: even indices
    assert hand(state, P1) == {"KS", "AS", "2H", "6D", "8H"}
    assert stack(state) == ["AH", "5C", "9S"]
    assert state.current_player == P1  # dealer leads: 2 black
    assert legal(state) == names("play A, play 2, play 6, play 8, play K, concede")
    act(state, P1, "play K")
    assert played(state) == ["KS"] and "3D" in hand(state, P1)
    assert legal(state) == names("play A, play K, concede")
    act(state, P0, "play A")
    assert played(state) == ["KS", "AD"] and "4D" in hand(state, P0)
    assert legal(state) == names("play A, concede")
    act(state, P1, "play A")
    assert played(state) == ["KS", "AD", "AS"] and "10S" in hand(state, P1)
    assert hand(state, P0) == {"KC", "QC", "2D", "7H", "4D"}
    assert legal(state) == names("concede")
    act(state, P0, "concede")
    assert pile(state, P1) == {"KS", "AD", "AS", "AH"} and scores(state) == (0, 4)
    assert stack(state) == ["5C", "9S", "AC"]
    assert deck_size(state) == 35
    assert state.current_player == P1
    assert hand(state, P1) == {"2H", "6D", "8H", "3D", "10S"}
    assert legal(state) == names("play 2, play 3, play 6, play 8, play 10, concede")


# -- S8 / S10 / S11 (Deck E) ------------------------------------------------------------------------------------

S8_LINE = [(P0 if k % 2 else P1, "concede") for k in range(1, 40)]  # round k is led by p0 iff k is odd
S10_LINE = [(P1, "concede"), (P0, "concede"), (P1, "concede")]
S11_LINE = [(P1, "play 2"), (P0, "play 3"), (P1, "play 4"), (P0, "play 5"), (P1, "play 6"), (P0, "play 7"),
            (P1, "play 8"), (P0, "play 9"), (P1, "play 10"), (P0, "play J"), (P1, "concede")]
S11_LEGAL = ["play 2, play 4, play 6, play 8, play 10, concede", "play 3, play 5, play 7, play 9, play J, concede",
             "play 4, play 6, play 8, play 10, concede", "play 5, play 7, play 9, play J, concede",
             "play 6, play 8, play 10, concede", "play 7, play 9, play J, concede", "play 8, play 10, concede",
             "play 9, play J, concede", "play 10, concede", "play J, concede", "concede"]
S8_HANDS = ({"3C", "5C", "7C", "9C", "JC"}, {"2C", "4C", "6C", "8C", "10C"})


def test_S8_39_immediate_concessions_empty_the_deck():  # R5, R9, R10, R11, R12, A15, A17, A22
    state = deal(DECK_E)
    assert hand(state, P1) == S8_HANDS[P1] and hand(state, P0) == S8_HANDS[P0]
    assert stack(state) == ["QS", "QC", "QH"]
    assert state.current_player == P0
    for k, (leader, action) in enumerate(S8_LINE, start=1):
        capturer = 1 - leader
        act(state, leader, action)
        assert card_codes(state.view(P0).score_piles[capturer])[-1] == DECK_E[9 + k]
        assert stack(state)[-1] == DECK_E[12 + k]
        assert state.current_player == capturer
    assert deck_size(state) == 0
    assert stack(state) == ["KS", "KH", "KD"]
    assert hand(state, P0) == S8_HANDS[P0] and hand(state, P1) == S8_HANDS[P1]
    assert scores(state) == (19, 20)
    assert not state.terminated and not state.truncated  # R11: hands and stack non-empty
    assert state.current_player == P1
    assert legal(state) == names("play 2, play 4, play 6, play 8, play 10, concede")


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
def test_S10_trump_stack_runs_out_leftover_hands_scored_tie_break(reward_mode):  # R11, R13, R15, R16, A19, A23, A27
    state = deal(DECK_E, reward_mode=reward_mode)
    play_line(state, S8_LINE)
    act(state, P1, "concede")
    assert scores(state) == (20, 20) and stack(state) == ["KH", "KD"]  # A19: nothing to replenish
    assert state.current_player == P0
    act(state, P0, "concede")
    assert scores(state) == (20, 21) and stack(state) == ["KD"]
    assert state.current_player == P1
    assert not state.terminated and state.rewards == [0.0, 0.0]
    act(state, P1, "concede")
    assert state.terminated and not state.truncated
    assert stack(state) == [] and deck_size(state) == 0  # A39: no trump is drawn after the final round
    assert pile(state, P0) >= S8_HANDS[P0] and pile(state, P1) >= S8_HANDS[P1]  # R13, A23
    assert scores(state) == (26, 26)
    assert state.view(P0).last_capturer == P0 and state.winner == P0  # R16, A27
    expected = [1.0, -1.0] if reward_mode == "win_loss" else [0.0, 0.0]
    assert state.rewards == pytest.approx(expected) and state.returns() == pytest.approx(expected)
    assert len(state.history) == 42
    assert state.legal_actions() == [] and not state.legal_mask().any()


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
def test_S11_both_hands_empty_leftover_trumps_removed(reward_mode):  # R6, R11, R14, A19, A20, A24, A40
    state = deal(DECK_E, reward_mode=reward_mode)
    play_line(state, S8_LINE)
    for (player, action), legal_text in zip(S11_LINE, S11_LEGAL, strict=True):
        assert state.current_player == player
        assert legal(state) == names(legal_text)
        sizes = state.view(P0).hand_sizes
        act(state, player, action)
        if action != "concede":
            assert state.view(P0).hand_sizes[player] == sizes[player] - 1  # A19: no draw
    assert state.terminated
    assert scores(state) == (30, 20)
    assert card_codes(state.view(P1).removed) == ["KH", "KD"]  # R14, A24
    assert card_codes(state.card_locations()["removed"]) == ["KH", "KD"]
    assert stack(state) == []
    assert state.winner == P0
    expected = [1.0, -1.0] if reward_mode == "win_loss" else [10 / 52, -10 / 52]
    assert state.rewards == pytest.approx(expected) and state.returns() == pytest.approx(expected)


def test_A20_A40_both_hands_empty_mid_round_game_goes_on_until_the_concession():
    state = deal(DECK_E)
    play_line(state, S8_LINE + S11_LINE[:-1])
    assert state.view(P0).hand_sizes == (0, 0)
    assert not state.terminated  # A20: the end check is made only at the round's end
    assert state.current_player == P1 and legal(state) == ["concede"]  # A16, A40


def test_F_trump_king_ace_is_weakest_forced_concession():  # R0 (trump K row), R21, A35 -- Deck F
    state = deal(DECK_F)
    assert hand(state, P0) == {"3C", "5C", "7C", "9C", "AC"}
    play_line(state, S8_LINE)
    assert stack(state) == ["KS", "KH", "KD"] and scores(state) == (19, 20)
    act(state, P1, "play 10")
    assert state.current_player == P0 and legal(state) == ["concede"]  # A beats nothing under K
    assert state.legal_mask().tolist() == [0] * 13 + [1]


# -- further end-of-game lines from the S8 position (Deck E) ----------------------------------------------------

#: p0 wins 27-25 on score although p1 captured the last round; leftovers 3 vs 2 (R13)
SCORE_BEATS_TIE_BREAK_LINE = [(P1, "play 2"), (P0, "play 3"), (P1, "play 4"), (P0, "play 5"), (P1, "concede"),
                              (P0, "concede"), (P1, "play 6"), (P0, "concede")]
#: 26-26 and p1 captured the last round, so p1 wins (R16)
TIE_PLAYER_1_LAST_LINE = [(P1, "concede"), (P0, "play 3"), (P1, "concede"), (P0, "concede")]
#: p1 plays out its hand; it then leads with an empty hand; both end conditions hold at once at the end
EMPTY_LEADER_LINE = [(P1, "play 2"), (P0, "play 3"), (P1, "play 4"), (P0, "play 5"), (P1, "play 6"),
                     (P0, "play 7"), (P1, "play 8"), (P0, "play 9"), (P1, "play 10"), (P0, "concede")]


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
def test_R16_higher_score_beats_last_capturer_R13_uneven_leftovers(reward_mode):  # R13, R15, R16, A26
    weight = 1.0
    state = deal(DECK_E, reward_mode=reward_mode, shaping_weight=weight)
    play_line(state, S8_LINE + SCORE_BEATS_TIE_BREAK_LINE[:-1])
    assert scores(state) == (24, 21) and stack(state) == ["KD"]
    before = state.returns()
    act(state, P0, "concede")
    assert state.terminated
    assert pile(state, P0) >= {"7C", "9C", "JC"} and pile(state, P1) >= {"8C", "10C"}  # R13
    assert scores(state) == (27, 25)
    assert state.view(P0).last_capturer == P1 and state.winner == P0
    # capture of 6C + KD: p1 +2w/52; R13 leftovers 3 vs 2: p0 +w/52
    step = (1.0 if reward_mode == "win_loss" else 2 / 52) + weight * (-2 + 1) / 52
    assert state.rewards == pytest.approx([step, -step])
    assert state.returns()[0] - before[0] == pytest.approx(step)
    terminal = 1.0 if reward_mode == "win_loss" else 2 / 52
    assert state.returns() == pytest.approx([terminal + weight * 2 / 52, -terminal - weight * 2 / 52])  # section 9


def test_R16_A27_tie_goes_to_player_1_when_it_captured_last():
    state = deal(DECK_E, reward_mode="score_diff")
    play_line(state, S8_LINE + TIE_PLAYER_1_LAST_LINE)
    assert state.terminated
    assert scores(state) == (26, 26)
    assert state.view(P0).last_capturer == P1 and state.winner == P1
    assert state.returns() == pytest.approx([0.0, 0.0])  # section 9: tie-break win gives 0 in score_diff
    win_loss = deal(DECK_E)
    play_line(win_loss, S8_LINE + TIE_PLAYER_1_LAST_LINE)
    assert win_loss.rewards == pytest.approx([-1.0, 1.0])


def test_A16_A22_A25_leader_with_empty_hand_only_concedes_both_end_conditions_at_once():  # R5, R11, R14
    state = deal(DECK_E)
    play_line(state, S8_LINE + EMPTY_LEADER_LINE)
    assert scores(state) == (19, 30)
    assert state.view(P0).hand_sizes == (1, 0) and stack(state) == ["KH", "KD"]
    assert not state.terminated  # A22: one hand empty, stack not empty
    assert state.current_player == P1 and legal(state) == ["concede"]  # A16: leading with an empty hand
    act(state, P1, "concede")
    assert scores(state) == (20, 30) and stack(state) == ["KD"]
    assert legal(state) == names("play J, concede")
    act(state, P0, "play J")
    assert legal(state) == ["concede"]
    act(state, P1, "concede")
    assert state.terminated
    assert scores(state) == (22, 30)  # A25: nothing left over, nothing removed
    assert state.view(P0).removed == ()
    assert state.winner == P1


# -- S14 (Decks E then B) ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
def test_S14_match_continues_dealer_alternates_next_deck_used(reward_mode):  # R23, A29, A31, A46
    state = deal(decks=[DECK_E, DECK_B], target_score=27, reward_mode=reward_mode)
    play_line(state, S8_LINE + S10_LINE)
    assert not state.terminated and not state.truncated
    assert state.returns() == pytest.approx([0.0, 0.0])  # win_loss: nothing until the match ends; tie -> 0
    view = state.view(P0)
    assert view.game_number == 2 and view.dealer == P1  # A29
    assert hand(state, P0) == {"3C", "3D", "8H", "QH", "AS"}  # non-dealer p0: even indices of Deck B
    assert hand(state, P1) == {"4C", "8D", "8S", "JC", "KD"}
    assert stack(state) == ["2D", "KS", "9H"]
    assert state.current_player == P0 and view.leader == P0  # A46: red majority, non-dealer leads
    assert legal(state) == names("play A, play 3, play 8, play Q, concede")
    assert view.totals == (26, 26)
    assert scores(state) == (0, 0)
    assert deck_size(state) == 39
    assert view.last_capturer == -1


def test_A47_match_target_checked_only_at_game_end():  # R23
    state = deal(decks=[DECK_E, DECK_B], target_score=27)
    play_line(state, S8_LINE + S10_LINE + [(P0, "concede")])
    assert scores(state) == (0, 1)  # 26 + 1 >= 27 for p1, but the game is not over
    assert state.view(P1).totals == (26, 26)
    assert not state.terminated and state.current_player == P1


# -- S16 (Deck A) -----------------------------------------------------------------------------------------------


def test_S16_R20_illegal_actions_leave_the_state_unchanged():  # A43
    state = deal(DECK_A)
    act(state, P0, "play 10")
    before = state.to_dict()
    for action in ("play 9", "play 3"):  # 9 is held but weaker than 10; no 3 is held
        with pytest.raises(IllegalActionError) as err:
            act(state, P1, action)
        message = str(err.value)
        assert repr(action) in message
        for name in names("play 2, play 5, play J, play K, concede"):
            assert repr(name) in message
        assert "'play 9'" not in message.split("legal")[-1]
        assert state.to_dict() == before
    for bad in (14, -1, 99, 3.0, "play 9", None, True):
        with pytest.raises(IllegalActionError):
            state.apply(bad)
        assert state.to_dict() == before
    act(state, P1, "play J")  # the state still plays on normally
    assert hand(state, P1) == {"2H", "5D", "9C", "KH", "8D"}


def test_S16_R22_truncation_after_max_steps():  # A42, section 9
    state = deal(DECK_A, max_steps=5, shaping_weight=1.0)
    for actor, action in S2_LINE[:4]:
        act(state, actor, action)
        assert not state.truncated
    act(state, P0, "play 6")
    assert state.truncated and not state.terminated
    assert state.legal_actions() == [] and not state.legal_mask().any()
    assert state.rewards == [0.0, 0.0] and state.returns() == [0.0, 0.0]
    assert scores(state) == (0, 0)
    with pytest.raises(StateError):
        state.apply(13)


# -- the PettingZoo env: S1, S2, S10, S14, S16 -------------------------------------------------------------------

ENV_MAKERS = [pytest.param(revolutionary_war_v0.raw_env, id="raw_env"),
              pytest.param(revolutionary_war_v0.env, id="env")]


def env_reset(make, options, **config):
    env = make(**config)
    env.reset(seed=0, options=options)
    return env


def env_legal(env, agent: str) -> list[str]:
    mask = env.observe(agent)["action_mask"]
    return [env.unwrapped.action_names[i] for i in np.flatnonzero(mask)]


def env_step(env, agent: str, action: str, legal_text: str | None = None) -> None:
    """Check whose turn it is and both masks (R1, section 8), then step the named action."""
    assert env.agent_selection == agent
    other = AGENTS[1 - AGENTS.index(agent)]
    mask = env.observe(agent)["action_mask"]
    assert mask.dtype == np.int8 and mask[13] == 1  # concede is always legal
    assert np.array_equal(env.infos[agent]["action_mask"], mask)
    assert not env.observe(other)["action_mask"].any()
    assert not env.infos[other]["action_mask"].any()
    if legal_text is not None:
        assert env_legal(env, agent) == names(legal_text)
    env.step(env.unwrapped.action_names.index(action))


def env_line(env, line) -> None:
    for player, action in line:
        env_step(env, AGENTS[player], action)


def assert_env_over(env, *, terminated: bool, rewards: list[float]) -> None:
    """All agents done the right way, masks all zeros, then every agent leaves with ``step(None)``."""
    assert env.terminations == dict.fromkeys(AGENTS, terminated)
    assert env.truncations == dict.fromkeys(AGENTS, not terminated)
    assert env.rewards == pytest.approx(dict(zip(AGENTS, rewards, strict=True)))
    for agent in AGENTS:
        assert not env.observe(agent)["action_mask"].any()
        assert not env.infos[agent]["action_mask"].any()
    while env.agents:
        _, reward, term, trunc, _ = env.last()
        assert (term, trunc) == (terminated, not terminated)
        env.step(None)


@pytest.mark.parametrize("make", ENV_MAKERS)
def test_S1_env_deal_masks_and_observation(make):  # R1, R3, R4, section 7, section 8
    env = env_reset(make, {"deck": DECK_A})
    assert env.possible_agents == list(AGENTS)
    assert env.agent_selection == "player_0"
    assert env_legal(env, "player_0") == names("play A, play 4, play 7, play 10, play Q, concede")
    assert np.flatnonzero(env.observe("player_0")["action_mask"]).tolist() == [0, 3, 6, 9, 11, 13]
    assert not env.observe("player_1")["action_mask"].any()
    obs0 = env.observe("player_0")["observation"]
    obs1 = env.observe("player_1")["observation"]
    assert np.flatnonzero(obs0[0:13]).tolist() == [0, 3, 6, 9, 11]  # own hand AC 4S 7H 10D QC (section 7)
    assert np.flatnonzero(obs1[0:13]).tolist() == [1, 4, 8, 10, 12]  # 2H 5D 9C JS KH
    for obs in (obs0, obs1):
        assert np.flatnonzero(obs[13:26]).tolist() == [5]  # active trump 6
        assert np.flatnonzero(obs[26:39]).tolist() == [7] and np.flatnonzero(obs[39:52]).tolist() == [2]
        assert obs[117] == pytest.approx(1.0)  # deck 39 / 39
    assert obs0[124] == 1.0 and obs1[124] == 0.0  # p0 is the dealer
    assert obs0[122] == 1.0 and obs1[122] == 0.0  # p0 leads


@pytest.mark.parametrize("make", ENV_MAKERS)
def test_S2_env_round_with_shaping(make):  # R6-R10, section 9
    weight = 0.5
    env = env_reset(make, {"deck": DECK_A}, shaping_weight=weight)
    for actor, action, *_, next_legal in S2_STEPS:
        env_step(env, AGENTS[actor], action)
        assert env.rewards == dict.fromkeys(AGENTS, 0.0)
        assert env_legal(env, AGENTS[1 - actor]) == names(next_legal)
    env_step(env, "player_1", "concede", "concede")
    assert env.rewards == pytest.approx({"player_0": 6 * weight / 52, "player_1": -6 * weight / 52})
    assert env.terminations == dict.fromkeys(AGENTS, False)
    assert env.truncations == dict.fromkeys(AGENTS, False)
    assert env.agent_selection == "player_0"
    _, reward, term, trunc, _ = env.last()
    assert reward == pytest.approx(6 * weight / 52) and not term and not trunc
    assert env_legal(env, "player_0") == names("play A, play 3, play 4, play 5, play 7, concede")
    assert not env.observe("player_1")["action_mask"].any()


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
@pytest.mark.parametrize("make", ENV_MAKERS)
def test_S10_env_game_end_tie_break(make, reward_mode):  # R13, R16
    env = env_reset(make, {"deck": DECK_E}, reward_mode=reward_mode)
    env_line(env, S8_LINE + S10_LINE[:-1])
    assert env.terminations == dict.fromkeys(AGENTS, False)
    env_step(env, "player_1", "concede")
    expected = [1.0, -1.0] if reward_mode == "win_loss" else [0.0, 0.0]
    assert env.unwrapped.state_.scores() == [26, 26]
    assert_env_over(env, terminated=True, rewards=expected)


@pytest.mark.parametrize("make", ENV_MAKERS)
def test_S14_env_match_continues(make):  # R23, A29, A46
    env = env_reset(make, {"decks": [DECK_E, DECK_B]}, target_score=27)
    env_line(env, S8_LINE + S10_LINE)
    assert env.terminations == dict.fromkeys(AGENTS, False)
    assert env.truncations == dict.fromkeys(AGENTS, False)
    assert env.rewards == dict.fromkeys(AGENTS, 0.0)
    assert env.agent_selection == "player_0"
    assert env_legal(env, "player_0") == names("play A, play 3, play 8, play Q, concede")
    assert not env.observe("player_1")["action_mask"].any()
    obs = env.observe("player_0")["observation"]
    assert obs[124] == 0.0 and obs[127] == 1.0  # p1 deals game 2; match mode
    assert obs[128] == pytest.approx(26 / 27) and obs[129] == pytest.approx(26 / 27)
    assert obs[117] == pytest.approx(1.0) and obs[120] == 0.0 and obs[121] == 0.0
    assert env.unwrapped.state_.view(0).dealer == P1


def test_S16_raw_env_illegal_action_raises_and_changes_nothing():  # R20, A43
    env = env_reset(revolutionary_war_v0.raw_env, {"deck": DECK_A})
    env_step(env, "player_0", "play 10")
    state_before = env.unwrapped.state_.to_dict()
    obs_before = {a: env.observe(a)["observation"].copy() for a in AGENTS}
    rewards_before = dict(env.rewards)
    for action in ("play 9", "play 3"):
        with pytest.raises(IllegalActionError, match=repr(action)):
            env.step(env.unwrapped.action_names.index(action))
        assert env.unwrapped.state_.to_dict() == state_before
        assert env.agent_selection == "player_1" and env.rewards == rewards_before
        for agent in AGENTS:
            assert np.array_equal(env.observe(agent)["observation"], obs_before[agent])
    assert env_legal(env, "player_1") == names("play 2, play 5, play J, play K, concede")


def test_S16_env_illegal_action_follows_pettingzoo_convention():  # R20 under env(): TerminateIllegalWrapper
    env = env_reset(revolutionary_war_v0.env, {"deck": DECK_A})
    env_step(env, "player_0", "play 10")
    env.step(SPEC_ACTION_NAMES.index("play 9"))
    assert env.terminations == dict.fromkeys(AGENTS, True)
    assert env.rewards == {"player_0": 0, "player_1": -1.0}


@pytest.mark.parametrize("make", ENV_MAKERS)
def test_S16_env_truncation(make):  # R22, A42
    env = env_reset(make, {"deck": DECK_A}, max_steps=5)
    env_line(env, S2_LINE[:4])
    assert env.truncations == dict.fromkeys(AGENTS, False)
    env_step(env, "player_0", "play 6")
    assert env.unwrapped.state_.scores() == [0, 0]
    assert_env_over(env, terminated=False, rewards=[0.0, 0.0])


# -- R0: the strength table, every trump, every pair of ranks ---------------------------------------------------


def probe_deck(trump: int, last: int, responder: list[int]) -> list[str]:
    """Dealer p0 leads (stack positions 2 and 3 black) holding a card of rank ``last``; the non-dealer p1 holds
    cards of the ``responder`` ranks; the active trump has rank ``trump``."""
    free = list(STANDARD_ORDER)

    def take(rank: int | None = None, black: bool = False) -> str:
        code = next(c for c in free if (rank is None or rank_of(c) == rank) and (is_black(c) or not black))
        free.remove(code)
        return code

    p1 = [take(r) for r in responder]
    lead = take(last)
    trump_card = take(trump)
    below = [take(black=True), take(black=True)]
    p0 = [lead] + [take() for _ in range(4)]
    hands = [card for pair in zip(p1, p0, strict=True) for card in pair]  # A2: non-dealer first
    return hands + [trump_card] + below + free


@pytest.mark.parametrize("trump", range(1, 14), ids=RANKS)
def test_R0_strength_table_every_trump_every_pair(trump):  # R0, R7, A10, A11, A12, A13
    for last in range(1, 14):
        for responder in ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 11, 12]):
            state = deal(probe_deck(trump, last, responder))
            assert stack(state)[0][:-1] == RANKS[trump - 1] and state.current_player == P0
            act(state, P0, f"play {RANKS[last - 1]}")
            expected = [f"play {RANKS[r - 1]}" for r in sorted(set(responder))
                        if table_strength(r, trump) >= table_strength(last, trump)]
            assert legal(state) == expected + ["concede"], f"trump {RANKS[trump - 1]}, last {RANKS[last - 1]}"


def test_R0_rules_strength_and_beats_helpers_follow_the_table():  # R0, A10 (the helpers agents use)
    from card_envs.revolutionary_war.rules import beats, strength

    for trump, card, last in itertools.product(range(1, 14), repeat=3):
        assert strength(card, trump) == table_strength(card, trump)
        assert beats(card, last, trump) == (table_strength(card, trump) >= table_strength(last, trump))


# -- R1-R5 ------------------------------------------------------------------------------------------------------


def test_R1_two_players_acting_one_at_a_time():
    game = card_envs.make_game(NAME)
    assert game.num_players == 2
    with pytest.raises(ConfigError, match="num_players"):
        card_envs.make_game(NAME, num_players=3)  # the game is not defined for more (section 6)
    state = deal(DECK_A)
    assert state.legal_mask().tolist() == [1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1]  # only p0's options


def test_R2_A44_jokers_are_not_used():
    with pytest.raises(DeckError, match="X1"):
        deal(DECK_A[:51] + ["X1"])
    with pytest.raises(DeckError):
        deal(DECK_A + ["X1", "X2"])


def test_R3_hands_private_view_independent_of_hidden_cards():  # A36, A37, section 7
    swapped = list(DECK_A)
    for i, j in zip((0, 2, 4, 6, 8), (20, 25, 30, 35, 40), strict=True):  # exchange p1's hand with draw-deck cards
        swapped[i], swapped[j] = swapped[j], swapped[i]
    for line in ([], [(P0, "play 4")]):  # "play 4": 4S is never redealt by the swap above
        original, other = deal(DECK_A), deal(swapped)
        play_line(original, line)
        play_line(other, line)
        assert hand(original, P1) != hand(other, P1)
        assert original.view(P0) == other.view(P0)
        assert np.array_equal(original.game.encode(original.view(P0)), other.game.encode(other.view(P0)))
    view = deal(DECK_A).view(P0)
    assert view.hand_sizes == (5, 5) and view.score_piles == ((), ())  # A37, A36: sizes public
    assert len(view.hand) == 5


@pytest.mark.parametrize("first_dealer", [0, 1])
@pytest.mark.parametrize("colours", ["".join(c) for c in itertools.product("BR", repeat=3)])
def test_R4_first_leader_for_every_colour_combination(colours, first_dealer):  # A7
    codes = [("2C", "3S", "4C")[i] if c == "B" else ("2D", "3H", "4D")[i] for i, c in enumerate(colours)]
    state = deal(stacked({10: codes[0], 11: codes[1], 12: codes[2]}), first_dealer=first_dealer)
    assert stack(state) == codes
    dealer = first_dealer
    leader = dealer if colours.count("B") >= 2 else 1 - dealer
    assert state.view(P0).dealer == dealer
    assert state.current_player == leader and state.view(P1).leader == leader


def test_R5_A8_leader_may_play_any_card_even_the_weakest():
    state = deal(DECK_A)  # trump 6: 7 is the weakest rank
    act(state, P0, "play 7")
    assert played(state) == ["7H"]
    assert legal(state) == names("play 2, play 5, play 9, play J, play K, concede")  # p1 holds no A


# -- R17-R19, R22, R23 and section 9 over random games (hypothesis) ---------------------------------------------


class Referee:
    """An independent statement of R9-R16, R23 and section 9 from public information; checks the engine's step."""

    def __init__(self, config: dict):
        self.config = config
        self.weight = config.get("shaping_weight", 0.0)
        self.target = config.get("target_score")
        self.scores = [0, 0]
        self.totals = [0, 0]
        self.last_capturer = -1
        self.dealer = config.get("first_dealer", 0)
        self.games = 1
        self.steps = 0
        self.game_steps = 0
        self.game_rounds = 0
        self.game_rewards = [0.0, 0.0]

    def check_deal(self, state) -> None:  # section 3, R4, R17
        view = state.view(P0)
        assert view.dealer == self.dealer and view.game_number == self.games
        assert view.hand_sizes == (5, 5) and len(view.trump_stack) == 3 and view.deck_size == 39
        assert view.score_piles == ((), ()) and view.removed == () and view.last_capturer == -1
        blacks = sum(is_black(code) for code in card_codes(view.trump_stack))
        leader = self.dealer if blacks >= 2 else 1 - self.dealer
        assert state.current_player == leader == view.leader

    def step(self, state, action: int) -> None:
        """Apply ``action`` to ``state`` and check everything the spec says about the step."""
        actor = state.current_player
        mine = state.view(actor)
        played_before = card_codes(mine.played)
        stack_before = card_codes(mine.trump_stack)
        deck_before, sizes_before = mine.deck_size, mine.hand_sizes
        expected = [0.0, 0.0]
        name = SPEC_ACTION_NAMES[action]
        state.apply(action)
        self.steps += 1
        self.game_steps += 1
        after = state.view(actor)
        if name != "concede":
            rank = name.split()[1]
            card = min((c for c in card_codes(mine.hand) if c[:-1] == rank), key=lambda c: SUITS.index(c[-1]))
            assert card_codes(after.played) == played_before + [card]  # R6, A34
            assert card not in card_codes(after.hand)
            assert after.deck_size == max(deck_before - 1, 0)  # R6, A19
            assert after.hand_sizes[actor] == sizes_before[actor] - (deck_before == 0)
            assert card_codes(after.trump_stack) == stack_before
            assert state.current_player == 1 - actor or state.truncated  # R8
            self.check_rewards(state, expected)
            return
        capturer, n = 1 - actor, len(played_before) + 1  # R9, A17, A18
        self.scores[capturer] += n
        self.last_capturer = capturer
        self.game_rounds += 1
        expected[capturer] += self.weight * n / 52
        expected[actor] -= self.weight * n / 52
        game_over = deck_before == 0 and (len(stack_before) == 1 or sizes_before == (0, 0))  # R11, A21
        if not game_over:
            view = state.view(P0)
            new_stack = card_codes(view.trump_stack)
            assert new_stack[: len(stack_before) - 1] == stack_before[1:]  # R10, A6
            assert len(new_stack) == len(stack_before) - 1 + (deck_before > 0)  # A19
            assert view.deck_size == max(deck_before - 1, 0)
            assert view.score_piles[capturer][-n:] == tuple(mine.played) + (mine.trump_stack[0],)
            assert [len(p) for p in view.score_piles] == self.scores
            assert view.played == () and view.last_capturer == capturer
            assert state.current_player == capturer == view.leader or state.truncated  # R12
            self.check_rewards(state, expected)
            return
        removed = 0
        if len(stack_before) == 1:  # R13: leftover hands to their holders, automatically (A23)
            self.scores = [self.scores[0] + sizes_before[0], self.scores[1] + sizes_before[1]]
            leftover = self.weight * (sizes_before[0] - sizes_before[1]) / 52
            expected = [expected[0] + leftover, expected[1] - leftover]
        else:  # R14: both hands empty; the remaining trumps count for nobody
            removed = len(stack_before) - 1
        assert sum(self.scores) + removed == 52 and removed <= 2  # R18
        diff = self.scores[0] - self.scores[1]
        if self.config.get("reward_mode") == "score_diff":
            expected = [expected[0] + diff / 52, expected[1] - diff / 52]
        game_winner = (0 if diff > 0 else 1) if diff else self.last_capturer  # R16
        assert self.game_steps <= 52 and self.game_rounds <= 42  # R19
        match_winner = game_winner
        if self.target is not None:  # R23
            self.totals = [self.totals[0] + self.scores[0], self.totals[1] + self.scores[1]]
            reached = [t >= self.target for t in self.totals]
            if all(reached):
                gap = self.totals[0] - self.totals[1]
                match_winner = (0 if gap > 0 else 1) if gap else self.last_capturer  # A32
            elif any(reached):
                match_winner = reached.index(True)  # A33
            else:
                match_winner = None  # A31
        if match_winner is not None and self.config.get("reward_mode", "win_loss") == "win_loss":
            expected[match_winner] += 1.0
            expected[1 - match_winner] -= 1.0
        self.check_rewards(state, expected)
        # section 9: summed over a game, the score-based rewards and the shaping follow the final scores
        mode_part = diff / 52 if self.config.get("reward_mode") == "score_diff" else (
            0.0 if match_winner is None else (1.0 if match_winner == 0 else -1.0))
        assert self.game_rewards[0] == pytest.approx(mode_part + self.weight * diff / 52, abs=1e-9)
        if match_winner is not None:
            assert state.terminated and not state.truncated and state.winner == match_winner
            assert [len(p) for p in state.view(P0).score_piles] == self.scores
            assert len(state.view(P0).removed) == removed
            return
        assert not state.terminated
        assert state.view(P1).totals == tuple(self.totals)
        self.games += 1
        self.game_steps = self.game_rounds = 0
        self.game_rewards = [0.0, 0.0]
        self.scores = [0, 0]
        self.last_capturer = -1
        if self.config.get("dealer_rotation", "alternate") == "alternate":  # A29
            self.dealer = 1 - self.dealer
        if not state.truncated:
            self.check_deal(state)  # A46

    def check_rewards(self, state, expected: list[float]) -> None:
        assert state.rewards == pytest.approx(expected, abs=1e-9)
        assert sum(state.rewards) == pytest.approx(0.0, abs=1e-9)  # zero-sum
        self.game_rewards = [self.game_rewards[0] + state.rewards[0], self.game_rewards[1] + state.rewards[1]]
        limit = self.config.get("max_steps")
        if limit is not None and self.steps >= limit and not state.terminated:
            assert state.truncated and state.current_player == -1  # R22
        else:
            assert not state.truncated


def check_invariants(state) -> None:
    """R17, R18 and the legal set (R0, R5, R7, A16) at a decision point."""
    locations = state.card_locations()
    cards = [card for zone in locations.values() for card in zone]
    assert sorted(cards) == list(range(52))  # R18
    assert len(locations["removed"]) <= 2
    actor = state.current_player
    view = state.view(actor)
    if not view.played:  # start of a round (R17)
        assert view.trump_stack and view.leader == actor
        if view.deck_size:
            assert view.hand_sizes == (5, 5) and len(view.trump_stack) == 3
    trump = rank_of(card_codes(view.trump_stack)[0])
    ranks = {rank_of(c) for c in card_codes(view.hand)}
    if view.played:
        floor = table_strength(rank_of(card_codes(view.played)[-1]), trump)
        ranks = {r for r in ranks if table_strength(r, trump) >= floor}
    assert legal(state) == [f"play {RANKS[r - 1]}" for r in sorted(ranks)] + ["concede"]
    assert state.legal_mask().tolist() == [int(a in state.legal_actions()) for a in range(14)]


def run_random_episode(config: dict, seed: int, options: dict | None = None) -> Referee:
    game = card_envs.make_game(NAME, **config)
    state = game.new_state(np.random.default_rng(seed), options)
    policy = np.random.default_rng(seed + 1)
    referee = Referee(config)
    referee.check_deal(state)
    while not state.is_over:
        check_invariants(state)
        referee.step(state, int(policy.choice(state.legal_actions())))
    assert state.legal_actions() == [] and state.current_player == -1
    if config.get("target_score") is not None:
        assert referee.games <= math.ceil(config["target_score"] / 25)  # R23
    return referee


CONFIGS = st.fixed_dictionaries({}, optional={
    "first_dealer": st.sampled_from([0, 1]),
    "reward_mode": st.sampled_from(["win_loss", "score_diff"]),
    "shaping_weight": st.sampled_from([0.0, 0.25, 1.0]),
    "target_score": st.sampled_from([1, 51, 60, 100]),
    "dealer_rotation": st.sampled_from(["alternate", "fixed"]),
})
SEEDS = st.integers(0, 2**32 - 1)
RANDOM_PLAY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RANDOM_PLAY
@given(config=CONFIGS, seed=SEEDS)
def test_R17_R18_R19_R9_to_R16_R23_section_9_over_random_games(config, seed):
    run_random_episode(config, seed)


@settings(max_examples=30, deadline=None)
@given(config=CONFIGS, seed=SEEDS, max_steps=st.integers(1, 120))
def test_R22_truncation_over_random_games(config, seed, max_steps):  # A42
    referee = run_random_episode({**config, "max_steps": max_steps}, seed)
    assert referee.steps <= max_steps


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, weight=st.sampled_from([0.5, 1.0, 3.0]))
def test_section_9_sums_over_a_game(seed, weight):
    """score_diff summed over a game is (difference)/52; shaping summed is w x difference / 52."""
    plain = deal(seed=seed, reward_mode="score_diff")
    shaped = deal(seed=seed, reward_mode="score_diff", shaping_weight=weight)
    policy = np.random.default_rng(seed)
    while not plain.is_over:
        action = int(policy.choice(plain.legal_actions()))
        plain.apply(action)
        shaped.apply(action)
    s0, s1 = (len(p) for p in plain.view(P0).score_piles)
    assert plain.returns() == pytest.approx([(s0 - s1) / 52, (s1 - s0) / 52], abs=1e-9)
    shaping = shaped.returns()[0] - plain.returns()[0]
    assert shaping == pytest.approx(weight * (s0 - s1) / 52, abs=1e-9)
    if s0 == s1:
        assert plain.returns() == [0.0, 0.0]


# -- R23 match mode -------------------------------------------------------------------------------------------


def test_R23_both_reach_target_tie_on_totals_last_capturer_wins():  # A32
    state = deal(DECK_E, target_score=26)
    play_line(state, S8_LINE + S10_LINE)
    assert state.terminated and state.view(P0).totals == (26, 26)
    assert state.winner == P0 and state.rewards == pytest.approx([1.0, -1.0])


def test_R23_both_reach_larger_total_wins_over_last_capturer():
    state = deal(DECK_E, target_score=25)
    play_line(state, S8_LINE + SCORE_BEATS_TIE_BREAK_LINE)
    assert state.terminated and state.view(P0).totals == (27, 25)
    assert state.view(P0).last_capturer == P1
    assert state.winner == P0 and state.rewards == pytest.approx([1.0, -1.0])


MIRRORED_S8_LINE = [(1 - player, action) for player, action in S8_LINE]
MIRRORED_SCORE_LINE = [(1 - player, action) for player, action in SCORE_BEATS_TIE_BREAK_LINE]


@pytest.mark.parametrize(("target", "totals_reached"), [(52, "one"), (51, "both")])
def test_R23_second_game_decides_exactly_one_or_both_reach(target, totals_reached):  # A29, A31, A33
    # game 1: S10 (26-26); game 2 on Deck E dealt by p1 mirrors S8, then p1 wins 27-25 while p0 captures last
    state = deal(decks=[DECK_E, DECK_E], target_score=target, reward_mode="win_loss")
    play_line(state, S8_LINE + S10_LINE)
    assert not state.terminated and state.view(P0).dealer == P1
    assert hand(state, P1) == S8_HANDS[P0] and hand(state, P0) == S8_HANDS[P1]
    assert state.current_player == P1  # dealer p1 leads: QS QC QH are 2 black
    play_line(state, MIRRORED_S8_LINE + MIRRORED_SCORE_LINE)
    view = state.view(P0)
    assert state.terminated and view.totals == (51, 53) and view.last_capturer == P0
    assert (view.totals[0] >= target) == (totals_reached == "both")
    assert state.winner == P1 and state.rewards == pytest.approx([-1.0, 1.0])


def test_R23_A32_tie_on_totals_goes_to_last_capturer_of_the_final_game():
    state = deal(decks=[DECK_E, DECK_E], target_score=50, reward_mode="score_diff")
    play_line(state, S8_LINE + S10_LINE)  # game 1: 26-26, p0 captured last
    play_line(state, MIRRORED_S8_LINE + [(P0, "concede"), (P1, "concede"), (P0, "concede")])  # game 2: p1 last
    view = state.view(P0)
    assert state.terminated and view.totals == (52, 52) and view.last_capturer == P1
    assert state.winner == P1
    assert state.returns() == pytest.approx([0.0, 0.0])  # score_diff: 0 per tied game


def test_R23_dealer_rotation_fixed_keeps_the_dealer():  # A29, A46
    state = deal(decks=[DECK_E, DECK_B], target_score=27, dealer_rotation="fixed")
    play_line(state, S8_LINE + S10_LINE)
    assert state.view(P0).dealer == P0 and state.view(P0).game_number == 2
    assert hand(state, P1) == {"3C", "3D", "8H", "QH", "AS"} and hand(state, P0) == {"4C", "8D", "8S", "JC", "KD"}
    assert state.current_player == P1  # red majority: non-dealer p1 leads (the S3 layout)


def test_R23_A30_decks_list_with_none_entries():
    game2_hands = []
    for seed in (3, 4):
        state = deal(decks=[DECK_E, None, DECK_B], target_score=100, seed=seed)
        play_line(state, S8_LINE + S10_LINE)
        assert state.view(P0).game_number == 2
        game2_hands.append(tuple(sorted(state.view(P0).hand)))
        policy = np.random.default_rng(seed)
        while state.view(P0).game_number == 2:
            state.apply(int(policy.choice(state.legal_actions())))
        assert not state.terminated and state.view(P0).game_number == 3
        assert state.view(P0).dealer == P0  # alternate: p0, p1, p0
        assert hand(state, P1) == {"3C", "3D", "8H", "QH", "AS"} and stack(state) == ["2D", "KS", "9H"]
        assert state.current_player == P1
    assert game2_hands[0] != game2_hands[1]  # game 2 was shuffled by the seeded generator


def test_R23_A30_first_game_shuffled_second_given():
    state = deal(decks=[None, DECK_B], target_score=100, seed=7)
    assert sorted(card for zone in state.card_locations().values() for card in zone) == list(range(52))
    policy = np.random.default_rng(7)
    while state.view(P0).game_number == 1:
        state.apply(int(policy.choice(state.legal_actions())))
    assert state.view(P0).dealer == P1
    assert hand(state, P0) == {"3C", "3D", "8H", "QH", "AS"} and hand(state, P1) == {"4C", "8D", "8S", "JC", "KD"}


def test_R23_A30_later_games_shuffled_reproducibly_from_the_seed():
    def game_two(seed: int):
        state = deal(DECK_E, target_score=27, seed=seed)
        play_line(state, S8_LINE + S10_LINE)
        assert state.view(P0).game_number == 2
        return [state.view(P0).hand, state.view(P1).hand, state.view(P0).trump_stack, state.card_locations()["deck"]]

    assert game_two(11) == game_two(11)
    assert game_two(11) != game_two(12)


def test_A28_default_is_a_single_game():
    state = deal(DECK_E)
    play_line(state, S8_LINE + S10_LINE)
    assert state.terminated and state.view(P0).game_number == 1 and state.view(P0).target_score is None


# -- configuration and deck errors (section 6) ------------------------------------------------------------------


def test_section_6_defaults():
    config = card_envs.make_game(NAME).config
    assert config.to_dict() == {"first_dealer": 0, "target_score": None, "dealer_rotation": "alternate",
                                "reward_mode": "win_loss", "shaping_weight": 0.0, "max_steps": None}


BAD_OPTIONS = [
    ({"first_dealers": 1}, "first_dealers"),  # unknown option
    ({"seed": 3}, "seed"),
    ({"first_dealer": "1"}, "first_dealer"),  # wrong type
    ({"first_dealer": True}, "first_dealer"),
    ({"target_score": 2.5}, "target_score"),
    ({"dealer_rotation": "random"}, "dealer_rotation"),
    ({"reward_mode": "points"}, "reward_mode"),
    ({"shaping_weight": "0.5"}, "shaping_weight"),
    ({"max_steps": 10.0}, "max_steps"),
    ({"first_dealer": 2}, "first_dealer"),  # out of range
    ({"first_dealer": -1}, "first_dealer"),
    ({"target_score": 0}, "target_score"),
    ({"target_score": -100}, "target_score"),
    ({"shaping_weight": -0.1}, "shaping_weight"),
    ({"max_steps": 0}, "max_steps"),
]


@pytest.mark.parametrize(("options", "named"), BAD_OPTIONS, ids=[repr(o) for o, _ in BAD_OPTIONS])
def test_config_errors_name_the_option(options, named):
    for make in (lambda **o: card_envs.make_game(NAME, **o), revolutionary_war_v0.raw_env,
                 revolutionary_war_v0.env):
        with pytest.raises(ConfigError, match=named):
            make(**options)


def test_config_accepts_valid_values():
    game = card_envs.make_game(NAME, first_dealer=1, target_score=100, dealer_rotation="fixed",
                               reward_mode="score_diff", shaping_weight=1, max_steps=52)
    assert game.config.shaping_weight == 1 and game.config.target_score == 100


DUPLICATE = DECK_A[:51] + ["2H"]
BAD_DECKS = [
    ({"deck": DECK_A[:51]}, "52"),  # wrong length
    ({"deck": DECK_A + ["AC"]}, "AC"),
    ({"deck": []}, "52"),
    ({"deck": DUPLICATE}, "2H"),  # duplicate
    ({"deck": DECK_A[:51] + ["1S"]}, "1S"),  # unknown code
    ({"deck": ["ZZ"] + DECK_A[1:]}, "ZZ"),
    ({"deck": "AC 2C"}, "deck"),
    ({"deck": DECK_A, "decks": [DECK_B]}, "both"),  # deck and decks both given
    ({"decks": [DECK_A, DUPLICATE]}, r"decks\[1\]"),
    ({"decks": "AC"}, "decks"),
]


@pytest.mark.parametrize(("options", "named"), BAD_DECKS, ids=[str(i) for i in range(len(BAD_DECKS))])
def test_deck_errors_are_clear(options, named):
    game = card_envs.make_game(NAME, target_score=100)
    with pytest.raises(DeckError, match=named):
        game.new_state(np.random.default_rng(0), options)
    env = revolutionary_war_v0.raw_env()
    with pytest.raises(DeckError, match=named):
        env.reset(seed=0, options=options)


def test_unknown_reset_option_keys_are_errors():
    env = revolutionary_war_v0.env()
    with pytest.raises(ConfigError, match="'whatever'; valid reset options: 'deck', 'decks'"):
        env.reset(seed=0, options={"deck": DECK_A, "whatever": 1})
    env.reset(seed=0, options={"deck": DECK_A, "options": 1})  # PettingZoo api_test's probe key is ignored
    assert env_legal(env, "player_0") == names("play A, play 4, play 7, play 10, play Q, concede")
