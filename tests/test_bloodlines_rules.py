"""Bloodlines rules (spec ``shared/specs/bloodlines.md``): setup S1-S7, rules R1-R18, rulings A1-A52,
the options of section 6, the information of section 7, the action names of section 8 and every worked
scenario of section 10. Expected values are taken from the spec's text, not from the engine.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from card_envs import bloodlines_v0
from card_envs.bloodlines import encoding
from card_envs.bloodlines.rules import (
    ACTION_NAMES,
    DECOY_PHASE,
    DISCARD_PHASE,
    K_OF,
    MAIN,
    NUMBER_CARDS,
    STEP1,
    VALUE,
    Z_DISCARD,
    Z_HAND,
    Z_HEART,
    Z_PILE,
    Z_POOL,
    Z_UNIT,
    Bloodlines,
    BloodlinesState,
    next_starting_player,
)
from card_envs.cards import card_code, card_codes, card_id
from card_envs.core.errors import ConfigError, DeckError, IllegalActionError

SUITS = "CDHS"
PAIRS = [a + b for a, b in itertools.permutations(SUITS, 2)]  # the 12 ordered bloodline pairs
ID = {name: index for index, name in enumerate(ACTION_NAMES)}
CANONICAL = [f"{rank}{suit}" for suit in SUITS for rank in range(2, 11)]


# -- helpers -----------------------------------------------------------------------------------------


def deal(p0=(), p1=(), *, seed=0, **config) -> BloodlinesState:
    """A new game with stacked piles (a tuple/list prefix; None = shuffled) and starting player 0."""
    config.setdefault("starting_player", 0)
    decks = [list(p) if isinstance(p, tuple) else p for p in (p0, p1)]
    return Bloodlines(**config).new_state(np.random.default_rng(seed), {"decks": decks})


def play(state: BloodlinesState, *names: str) -> None:
    for name in names:
        state.apply(ID[name])


def legal(state: BloodlinesState) -> set[int]:
    return set(state.legal_actions())


def hand(state: BloodlinesState, player: int) -> set[str]:
    return set(card_codes(state.hands[player]))


def discard(state: BloodlinesState, player: int) -> Counter:
    return Counter(card_codes(state.discards[player]))


def value(code: str, bloodline: str) -> int:
    """Section 2, computed from the spec's table: rank + 1 in the owner's suit, rank - 1 otherwise."""
    rank, suit = int(code[:-1]), code[-1]
    return rank + 1 if suit == bloodline else rank - 1


def assert_consistent(state: BloodlinesState) -> None:
    """Section 4 invariants: every owner's 54 cards once; derived totals agree with the cards."""
    locations = state.card_locations()
    for p in (0, 1):
        owned = Counter(card for zone, cards in locations.items() if zone.endswith(f"_{p}") for card in cards)
        assert owned == Counter(range(54)), f"player_{p}'s deck is not conserved"
        b = SUITS[state.bloodlines[p]]
        for r in range(3):
            assert state.defense[p][r] == sum(value(card_code(c), b) for c in state.hearts[p][r])  # R2
        assert state.attack[p] == [sum(value(card_code(c), b) for c in unit) for unit in state.units[p]]
        assert state.pool_values[p] == sum(value(card_code(c), b) for c in state.pools[p])
        expected_zone = {K_OF[c]: Z_PILE for c in state.piles[p]}
        expected_zone.update({K_OF[c]: Z_HAND for c in state.hands[p]})
        expected_zone.update({K_OF[c]: Z_HEART + r for r in range(3) for c in state.hearts[p][r]})
        expected_zone.update({K_OF[c]: Z_UNIT + u for u, unit in enumerate(state.units[p]) for c in unit})
        expected_zone.update({K_OF[c]: Z_POOL for c in state.pools[p]})
        expected_zone.update({K_OF[c]: Z_DISCARD for c in state.discards[p] if K_OF[c] >= 0})
        assert [expected_zone[k] for k in range(36)] == state.zones[p]
        if b != "D":
            assert not state.pools[p] and not state.jokers[p] and not state.supply[p]
        if not state.is_over:
            assert state.royals[p], "both players keep a royal while the game runs"
            if state.phase != DISCARD_PHASE:
                assert len(state.hands[p]) <= state.game.config.hand_limit  # R13


def random_game(state: BloodlinesState, rng: np.random.Generator, check=assert_consistent) -> BloodlinesState:
    while not state.is_over:
        check(state)
        actions = state.legal_actions()
        state.apply(actions[int(rng.integers(len(actions)))])
    check(state)
    return state


# -- section 2 and 8: notation, values, action names ------------------------------------------------


def test_action_names_and_indices_follow_section_8():  # section 8, A28: only royals are ever targets
    assert len(ACTION_NAMES) == 215
    expected = {
        0: "cycle 2C", 1: "cycle 3C", 8: "cycle 10C", 9: "cycle 2D", 17: "cycle 10D",
        18: "power 2C", 23: "power 7C", 26: "power 10C", 27: "pool 2D", 35: "pool 10D",
        36: "discard 2C", 45: "discard 2D", 61: "discard 9H", 71: "discard 10S",
        72: "heart 2H on J", 78: "heart 4H on J", 85: "heart 6H on Q", 98: "heart 10H on K",
        99: "new unit 2S", 102: "new unit 5S", 107: "new unit 10S",
        108: "add 2S to unit 0", 156: "add 8S to unit 0", 179: "add 10S to unit 7",
        180: "unit 0 attacks J", 182: "unit 0 attacks K", 206: "unit 8 attacks K",
        207: "joker attacks J", 209: "joker attacks K",
        210: "buy joker", 211: "end step 1", 212: "pass", 213: "decoy", 214: "no decoy",
    }
    for index, name in expected.items():
        assert ACTION_NAMES[index] == name
    assert bloodlines_v0.raw_env().action_names == ACTION_NAMES


def test_number_card_index_and_canonical_order():  # section 2
    assert [K_OF[card_id(code)] for code in CANONICAL] == list(range(36))
    assert card_codes(NUMBER_CARDS) == CANONICAL


@pytest.mark.parametrize("bloodline", SUITS)
def test_values_follow_the_owners_bloodline_only(bloodline):  # section 2, R2, A10, A11
    b = SUITS.index(bloodline)
    own = [VALUE[b][card_id(f"{rank}{bloodline}")] for rank in range(2, 11)]
    assert own == [3, 4, 5, 6, 7, 8, 9, 10, 11] and sum(own) == 63
    for other in SUITS.replace(bloodline, ""):
        foreign = [VALUE[b][card_id(f"{rank}{other}")] for rank in range(2, 11)]
        assert foreign == [1, 2, 3, 4, 5, 6, 7, 8, 9] and sum(foreign) == 45
    assert all(VALUE[b][card_id(f"{r}{s}")] == 0 for r in "AJQK" for s in SUITS)
    assert VALUE[b][card_id("X1")] == VALUE[b][card_id("X2")] == 0


def test_the_opponents_bloodline_never_changes_a_value():  # A10
    for opponent in "CDH":
        state = deal(["9H", "8S", "2C", "3C"], [], bloodlines=("S", opponent))
        play(state, "end step 1", "heart 9H on J")
        assert state.defense[0][0] == 8


# -- section 3: setup --------------------------------------------------------------------------------


@pytest.mark.parametrize("pair", PAIRS)
def test_deck_composition_royals_and_set_aside(pair):  # S3, A1, A2
    state = deal(None, None, bloodlines=tuple(pair))
    for p, b in enumerate(pair):
        assert Counter(card_codes(state.hands[p] + state.piles[p])) == Counter(CANONICAL)
        assert card_codes(state.card_locations()[f"royals_{p}"]) == [f"J{b}", f"Q{b}", f"K{b}"]
        aside = set(card_codes(state.set_aside[p]))
        removed = {f"{r}{s}" for s in SUITS if s != b for r in "AJQK"} | {f"A{b}"}
        if b == "D":
            assert card_codes(state.supply[p]) == ["X1", "X2"]
            assert aside == removed
        else:
            assert state.supply[p] == []
            assert aside == removed | {"X1", "X2"}


@pytest.mark.parametrize("supply", [0, 1, 2])
def test_joker_supply_option_limits_the_diamonds_supply(supply):  # S5, R9f, A2
    state = deal(bloodlines=("D", "S"), joker_supply=supply)
    assert card_codes(state.supply[0]) == ["X1", "X2"][:supply]
    assert set(card_codes(state.set_aside[0])) >= {"X1", "X2"} - set(["X1", "X2"][:supply])


def test_stacked_piles_partial_with_canonical_fill():  # S4, S5
    state = deal(["5S", "9H", "3C", "7D", "8S"], ["4H", "10S", "6C", "2D", "9H"], bloodlines=("S", "H"))
    assert hand(state, 0) == {"5S", "9H", "3C", "7D"}
    assert card_codes(state.piles[0][:9]) == ["8S", "2C", "4C", "5C", "6C", "7C", "8C", "9C", "10C"]
    assert len(state.piles[0]) == 32 and len(state.piles[1]) == 32
    assert card_codes(state.piles[1][:1]) == ["9H"]


def test_empty_list_is_the_canonical_order_and_none_is_shuffled():  # S4
    state = deal([], None, bloodlines=("C", "D"), seed=5)
    assert card_codes(state.hands[0]) == ["2C", "3C", "4C", "5C"]
    assert card_codes(state.piles[0]) == CANONICAL[4:]
    assert card_codes(state.hands[1] + state.piles[1]) != CANONICAL


@pytest.mark.parametrize("bad, match", [
    (["JS"], "not in this game's deck"),        # a royal
    (["AH"], "not in this game's deck"),        # an ace
    (["X1"], "not in this game's deck"),        # a joker
    (["2C", "2C"], "duplicated"),
    (CANONICAL + ["2C"], "duplicated"),
    (["ZZ"], "unknown card code"),
    ("2C 3C", "list of card codes"),
])
def test_malformed_stacked_pile_is_a_clear_error(bad, match):  # S4
    with pytest.raises(DeckError, match=match):
        deal(bad, None)


@pytest.mark.parametrize("decks", [["2C"], [None], [None, None, None], "2C"])
def test_decks_option_needs_one_pile_per_player(decks):  # S4
    game = Bloodlines()
    with pytest.raises(DeckError, match="two piles"):
        game.new_state(np.random.default_rng(0), {"decks": decks})
    with pytest.raises(ConfigError, match="valid reset options: 'decks'"):  # one pile per player, not one deck
        game.new_state(np.random.default_rng(0), {"deck": CANONICAL})


def test_random_setup_uses_the_generator_in_the_specified_order():  # S2, S6, S7, A4, A8
    for seed in range(5):
        rng = np.random.default_rng(seed)
        first = int(rng.integers(4))
        second = [s for s in range(4) if s != first][int(rng.integers(3))]
        piles = [rng.permutation(36).tolist(), rng.permutation(36).tolist()]
        starter = int(rng.integers(2))
        state = Bloodlines().new_state(np.random.default_rng(seed))
        assert state.bloodlines == [first, second]
        for p in (0, 1):
            assert state.hands[p] + state.piles[p] != []
            order = [NUMBER_CARDS[i] for i in piles[p]]
            assert sorted(order[:4]) == state.hands[p] and order[4:] == state.piles[p]
        assert state.active == starter == state.starting_player


def test_random_bloodlines_cover_the_twelve_ordered_pairs_evenly():  # S2, A4, A7, A50
    counts = Counter()
    for seed in range(2400):
        state = Bloodlines().new_state(np.random.default_rng(seed))
        counts[tuple(state.bloodlines)] += 1
    assert set(counts) == {(SUITS.index(a), SUITS.index(b)) for a, b in PAIRS}
    assert all(140 <= n <= 260 for n in counts.values()), counts  # 200 expected each


def test_random_setup_properties_sc17():  # Sc-17, S2, S5, S6, R11, A5, A46
    starters = Counter()
    for seed in range(200):
        state = Bloodlines().new_state(np.random.default_rng(seed))
        b0, b1 = state.bloodlines
        assert b0 != b1
        for p in (0, 1):
            assert len(state.hands[p]) == 4 and len(state.piles[p]) == 32
            assert sorted(state.hands[p] + state.piles[p]) == list(NUMBER_CARDS)
            assert state.royals[p] == [0, 1, 2]
            jokers = card_codes(state.supply[p])
            assert jokers == (["X1", "X2"] if state.bloodlines[p] == 1 else [])
            assert not state.jokers[p] and not any(c >= 52 for c in state.discards[p])
        starter = state.starting_player
        starters[starter] += 1
        assert state.current_player == starter and state.turn == 1
        usable = [c for c in state.hands[starter] if card_code(c)[-1] in "CD"]
        assert state.phase == (STEP1 if usable else MAIN)
        again = Bloodlines().new_state(np.random.default_rng(seed))
        assert again.to_dict() == state.to_dict()
    assert starters[0] > 60 and starters[1] > 60


def test_configured_starting_player_and_bloodlines():  # S1, S2, S6, A6
    state = Bloodlines(bloodlines=("h", "c"), starting_player=1).new_state(np.random.default_rng(0))
    assert state.bloodlines == [2, 0] and state.active == 1 and state.current_player == 1


# -- section 6: options ------------------------------------------------------------------------------


@pytest.mark.parametrize("options, match", [
    ({"bloodlines": ("S", "S")}, "different"),
    ({"bloodlines": ("S", "X")}, "two suits"),
    ({"bloodlines": ("S",)}, "two suits"),
    ({"bloodlines": "SH"}, "bloodlines"),
    ({"starting_player": 2}, "starting_player"),
    ({"hand_limit": 0}, "hand_limit"),
    ({"joker_cost": 0}, "joker_cost"),
    ({"joker_supply": 3}, "joker_supply"),
    ({"allow_pass": 1}, "allow_pass"),
    ({"max_turns": 0}, "max_turns"),
    ({"unfinished_result": "score"}, "unfinished_result"),
    ({"shaping_weight": -0.1}, "shaping_weight"),
    ({"decks": [[], []]}, "unknown option"),
])
def test_bad_options_are_clear_errors(options, match):  # section 6
    with pytest.raises(ConfigError, match=match):
        Bloodlines(**options)


def test_option_defaults_match_section_6():
    config = Bloodlines().config
    assert (config.bloodlines, config.starting_player, config.hand_limit, config.joker_cost, config.joker_supply,
            config.allow_pass, config.auto_skip_forced, config.max_turns, config.unfinished_result,
            config.shaping_weight) == (None, None, 4, 25, 2, False, True, 200, "royals", 0.0)


def test_bloodlines_given_as_a_list_round_trips_through_json():  # section 6 (YAML/JSON configs)
    game = Bloodlines(bloodlines=["D", "S"])
    state = game.new_state(np.random.default_rng(0))
    restored = game.state_from_dict(json.loads(json.dumps(state.to_dict())))
    assert restored == state and game.config.bloodlines == ("D", "S")


def test_hand_limit_option_sets_hand_draw_and_discard_target():  # section 6, S5, R4, R8
    state = deal(["10C", "2H", "3H"], [], bloodlines=("C", "S"), hand_limit=3)
    assert hand(state, 0) == {"10C", "2H", "3H"}
    play(state, "power 10C")  # draws 2C .. 9C 2D 3D 4D: hand 13 > 3
    assert state.owed == 10
    play(state, *[f"discard {c}" for c in "2C 3C 4C 5C 6C 7C 8C 9C 2D 3D".split()])
    assert hand(state, 0) == {"2H", "3H", "4D"} and state.phase == STEP1
    play(state, "end step 1")
    assert len(state.hands[0]) == 3  # no draw at the limit of 3


def test_joker_cost_option():  # section 6, R9f
    state = deal(["10D", "2S"], [], bloodlines=("D", "S"), joker_cost=11)
    play(state, "pool 10D")
    play(state, "end step 1")
    assert ID["buy joker"] in legal(state)


# -- section 10: worked scenarios ---------------------------------------------------------------------


def sc1() -> BloodlinesState:
    return deal(["5S", "9H", "3C", "7D", "8S"], ["4H", "10S", "6C", "2D", "9H"], bloodlines=("S", "H"))


def test_sc1_setup_values_and_first_turn():  # Sc-1, S5, R3, R4, R6, A45
    state = sc1()
    assert state.royals[0] == [0, 1, 2] and state.defense[0] == [0, 0, 0]
    assert hand(state, 0) == {"5S", "9H", "3C", "7D"}
    assert len(state.piles[0]) == 32
    assert card_codes(state.piles[0][:15]) == ["8S", "2C", "4C", "5C", "6C", "7C", "8C", "9C", "10C",
                                               "2D", "3D", "4D", "5D", "6D", "8D"]
    assert hand(state, 1) == {"4H", "10S", "6C", "2D"} and card_codes(state.piles[1][:1]) == ["9H"]
    assert [value(c, "S") for c in ("5S", "9H", "8S")] == [6, 8, 9]
    assert [value(c, "H") for c in ("4H", "10S", "9H")] == [5, 9, 10]
    assert state.current_player == 0 and state.phase == STEP1
    assert legal(state) == {1, 14, 211}
    play(state, "end step 1")
    assert len(state.hands[0]) == 4  # R4: no draw at the limit
    assert legal(state) == {1, 14, 93, 94, 95, 102}  # pass (212) is illegal: a main action exists
    play(state, "new unit 5S")
    assert [card_codes(u) for u in state.units[0]] == [["5S"]] and state.attack[0] == [6]
    assert hand(state, 0) == {"9H", "3C", "7D"}
    assert state.turn == 2 and state.current_player == 1 and state.idle == 0
    assert legal(state) == {4, 9, 211}


def sc2(state: BloodlinesState) -> None:
    play(state, "end step 1", "heart 4H on J", "end step 1")


def test_sc2_hearts_a_legal_attack_and_its_resolution():  # Sc-2, R2, R9a, R9d, R10, A26, A29
    state = sc1()
    play(state, "end step 1", "new unit 5S", "end step 1")
    assert len(state.hands[1]) == 4  # T2: no draw
    play(state, "heart 4H on J")
    assert state.defense[1][0] == 5 and hand(state, 1) == {"10S", "6C", "2D"}
    play(state, "end step 1")
    assert hand(state, 0) == {"9H", "3C", "7D", "8S"} and len(state.piles[0]) == 31
    assert legal(state) == {1, 14, 93, 94, 95, 105, 156, 180, 181, 182}
    play(state, "unit 0 attacks J")
    assert discard(state, 0) == Counter(["5S"]) and state.units[0] == []
    assert discard(state, 1) == Counter(["4H", "JH"])
    assert state.royals[1] == [1, 2] and state.phase == STEP1 and state.current_player == 1
    assert legal(state) == {4, 9, 211}
    play(state, "end step 1")
    assert hand(state, 1) == {"10S", "6C", "2D", "9H"}
    assert {94, 95} <= legal(state) and 93 not in legal(state)  # A23: hearts only on surviving own royals
    assert state.returns() == [0.0, 0.0]


def test_sc2_shaping_pays_each_kill():  # Sc-2 step 4, section 9
    state = deal(["5S", "9H", "3C", "7D", "8S"], ["4H", "10S", "6C", "2D", "9H"], bloodlines=("S", "H"),
                 shaping_weight=0.1)
    play(state, "end step 1", "new unit 5S", "end step 1", "heart 4H on J", "end step 1")
    state.apply(ID["unit 0 attacks J"])
    assert state.rewards == pytest.approx([0.1, -0.1])


def test_sc3_strictly_greater_and_growing_a_unit():  # Sc-3, R9c, R9d, A26
    state = deal(["6S", "2S", "3D", "4D", "7D"], ["5H", "2H", "5D", "6D", "3H"], bloodlines=("C", "H"))
    assert [value("6S", "C"), value("2S", "C"), value("5H", "H"), value("2H", "H")] == [5, 1, 6, 3]
    assert legal(state) == {10, 11, 211}
    play(state, "end step 1", "new unit 6S")
    assert state.attack[0] == [5]
    play(state, "end step 1", "heart 5H on K")
    assert state.defense[1][2] == 6
    play(state, "end step 1")
    assert hand(state, 0) == {"2S", "3D", "4D", "7D"}
    attacks = {a for a in legal(state) if 180 <= a <= 206}
    assert attacks == {180, 181}  # 182: 5 <= 6
    play(state, "add 2S to unit 0")
    assert ID["add 2S to unit 0"] == 108 and state.attack[0] == [6]
    play(state, "end step 1")
    assert hand(state, 1) == {"2H", "5D", "6D", "3H"}
    play(state, "heart 2H on J")
    assert state.defense[1][0] == 3
    play(state, "end step 1")
    assert hand(state, 0) == {"3D", "4D", "7D", "2C"}
    actions = legal(state)
    assert {a for a in actions if 180 <= a <= 206} == {180, 181}  # 6 = 6 is not greater
    assert {0, 18} <= actions


def test_sc4_cycling_mandatory_main_action_and_information():  # Sc-4, R6, R7a, A19, A21, A37, A38, section 7
    state = deal(["2C", "3C", "4D", "5D", "6H", "7C"], [], bloodlines=("H", "S"))
    assert legal(state) == {0, 1, 11, 12, 211}
    play(state, "end step 1")
    assert legal(state) == {0, 1, 11, 12, 212}
    play(state, "cycle 2C")
    assert hand(state, 0) == {"3C", "4D", "5D", "6H"}
    assert legal(state) == {1, 11, 12, 84, 85, 86}
    play(state, "cycle 3C")
    assert hand(state, 0) == {"4D", "5D", "6H", "7C"}
    assert legal(state) == {5, 11, 12, 84, 85, 86}
    play(state, "heart 6H on Q")
    assert state.defense[0][1] == 7 and hand(state, 0) == {"4D", "5D", "7C"} and len(state.piles[0]) == 30
    seen = state.view(1)
    assert Counter(card_codes(seen.discards[0])) == Counter(["2C", "3C"])
    assert card_codes(seen.hearts[0][1]) == ["6H"] and seen.defense[0][1] == 7
    assert seen.hand_sizes[0] == 3 and seen.pile_sizes[0] == 30
    assert set(card_codes(seen.hand)) == hand(state, 1)
    unseen = set(card_codes(seen.opponent_unseen))
    assert unseen == set(CANONICAL) - {"2C", "3C", "6H"} and len(unseen) == 33
    assert not {"4D", "5D", "7C"} & set(card_codes(seen.hand))


def test_sc4_allow_pass_makes_pass_legal_in_every_main_state():  # Sc-4 variant, R6
    state = deal(["2C", "3C", "4D", "5D", "6H", "7C"], [], bloodlines=("H", "S"), allow_pass=True)
    play(state, "end step 1")
    assert ID["pass"] in legal(state)
    play(state, "cycle 2C")
    assert ID["pass"] in legal(state) and {84, 85, 86} <= legal(state)
    play(state, "cycle 3C")
    assert ID["pass"] in legal(state)


def sc5() -> BloodlinesState:
    return deal(["4C", "9H", "2D", "3S", "5S", "6S", "7S", "8S", "10H"], [], bloodlines=("C", "S"))


def test_sc5_club_power_owes_discards():  # Sc-5, R7b, R8, A14, A15, A48, A49
    state = sc5()
    assert legal(state) == {2, 9, 20, 211}
    play(state, "power 4C")
    assert hand(state, 0) == {"9H", "2D", "3S", "5S", "6S", "7S", "8S", "10H"}
    assert state.owed == 4 and state.phase == DISCARD_PHASE
    assert legal(state) == {61, 45, 64, 66, 67, 68, 69, 62}
    play(state, "discard 2D", "discard 3S", "discard 5S")
    assert state.owed == 1 and ID["end step 1"] not in legal(state)
    play(state, "discard 9H")
    assert hand(state, 0) == {"6S", "7S", "8S", "10H"} and len(state.piles[0]) == 27
    assert state.phase == MAIN  # only end step 1 was left in STEP1: taken automatically, no draw
    assert legal(state) == {103, 104, 105, 96, 97, 98}
    play(state, "new unit 8S")
    assert state.attack[0] == [7]
    assert discard(state, 0) == Counter(["4C", "2D", "3S", "5S", "9H"])
    # the spec says "hand size 4" here, but 8S has just left the 4-card hand: 3 (RULES.md, spec errata)
    assert hand(state, 0) == {"6S", "7S", "10H"} and len(state.piles[0]) == 27


def test_sc5_cycle_draws_one_and_a_non_clubs_player_has_no_power():  # Sc-5 steps 7-8, R7a, A12, A13
    state = sc5()
    play(state, "cycle 4C")
    assert hand(state, 0) == {"9H", "2D", "3S", "5S"} and state.phase == STEP1
    other = sc5()
    play(other, "end step 1", "heart 9H on J")
    assert hand(other, 1) == {"2C", "3C", "4C", "5C"}  # spades player holding clubs
    actions = legal(other)
    assert {0, 1, 2, 3} <= actions and not actions & set(range(18, 27))


def test_sc6_exhausting_the_pile_with_the_club_power():  # Sc-6, R7b, R12, A14, A36
    state = deal(["10C", "9C", "8C", "7C"], [], bloodlines=("C", "H"))
    assert hand(state, 1) == {"2C", "3C", "4C", "5C"}
    play(state, "power 10C")
    assert len(state.hands[0]) == 14 and state.owed == 10
    play(state, *[f"discard {c}" for c in "2C 3C 4C 5C 2D 3D 4D 5D 6D 7D".split()])
    assert hand(state, 0) == {"9C", "8C", "7C", "6C"} and len(state.piles[0]) == 21
    assert card_code(state.piles[0][0]) == "8D"
    play(state, "power 9C")
    assert state.owed == 9
    play(state, *[f"discard {c}" for c in "8D 9D 10D 2H 3H 4H 5H 6H 7H".split()])
    assert hand(state, 0) == {"8C", "7C", "6C", "8H"} and len(state.piles[0]) == 11
    play(state, "power 8C")
    assert state.owed == 8
    play(state, *[f"discard {c}" for c in "8H 9H 2S 3S 4S 5S 6S 7S".split()])
    assert hand(state, 0) == {"7C", "6C", "10H", "8S"} and card_codes(state.piles[0]) == ["9S", "10S"]
    play(state, "power 7C")
    assert hand(state, 0) == {"6C", "10H", "8S", "9S", "10S"} and state.owed == 1
    play(state, "discard 8S")
    assert state.piles[0] == [] and hand(state, 0) == {"6C", "10H", "9S", "10S"}
    assert state.phase == MAIN  # cycle 6C (4) and power 6C (22) illegal: end step 1 was forced
    assert legal(state) == {96, 97, 98, 106, 107}
    play(state, "new unit 10S")
    assert state.attack[0] == [9] and len(state.discards[0]) == 32


def sc8() -> BloodlinesState:
    return deal(["10D", "9D", "4D", "2S", "2D"], ["10H", "9H", "2C", "3C"], bloodlines=("D", "H"))


def test_sc8_the_pool_threshold_and_buying_a_joker():  # Sc-8, R4, R7c, R9f, A17, A18, A30, A31, A32
    state = sc8()
    assert legal(state) == {17, 16, 11, 35, 34, 29, 211}
    play(state, "pool 10D", "pool 9D")
    assert state.pool_values[0] == 21 and hand(state, 0) == {"4D", "2S"}
    play(state, "end step 1")
    assert hand(state, 0) == {"4D", "2S", "2D"}  # exactly one card although the hand was 2
    assert legal(state) == {11, 9, 29, 27, 99}
    play(state, "pool 2D")
    assert state.pool_values[0] == 24 and ID["buy joker"] not in legal(state)
    play(state, "pool 4D")
    assert state.pool_values[0] == 29 and ID["buy joker"] in legal(state)
    assert state.view(1).pools[0] == state.view(0).pools[0]  # the pool is public (A32)
    play(state, "buy joker")
    assert discard(state, 0) == Counter(["10D", "9D", "2D", "4D"]) and state.pool_values[0] == 0
    assert card_codes(state.jokers[0]) == ["X1"] and card_codes(state.supply[0]) == ["X2"]
    assert hand(state, 0) == {"2S"}
    assert state.current_player == 1 and state.turn == 2  # the buy was the main action


def test_sc8_a_hearts_player_can_never_pool():  # Sc-8 step 5, R7c, A12
    state = sc8()
    play(state, "pool 10D", "pool 9D", "end step 1", "pool 2D", "pool 4D", "buy joker")
    assert not legal(state) & set(range(27, 36))


def test_sc9_a_joker_attack_ignores_defense():  # Sc-9, R9e, R10, A29, A30
    state = sc8()
    play(state, "pool 10D", "pool 9D", "end step 1", "pool 2D", "pool 4D", "buy joker")
    assert legal(state) == {0, 1, 211}
    play(state, "end step 1", "heart 10H on K")
    assert state.defense[1][2] == 11
    assert state.current_player == 0 and state.phase == MAIN  # STEP1 forced: hand {2S}
    assert hand(state, 0) == {"2S", "2C"}
    assert legal(state) == {0, 99, 207, 208, 209}
    play(state, "joker attacks K")
    assert discard(state, 0)["X1"] == 1 and state.jokers[0] == []
    assert discard(state, 1) == Counter(["10H", "KH"]) and state.royals[1] == [0, 1]
    assert card_codes(state.supply[0]) == ["X2"]
    play(state, "end step 1")
    assert hand(state, 1) == {"9H", "2C", "3C", "4C"}


def sc10() -> BloodlinesState:
    state = deal(["10D", "9D", "5D", "5H", "2C", "3C"], ["10S", "2C", "3C", "4C", "5C"], bloodlines=("D", "S"))
    play(state, "pool 10D", "pool 9D", "pool 5D")
    assert state.pool_values[0] == 27 and hand(state, 0) == {"5H", "2C"}  # auto end step 1 drew 2C
    assert legal(state) == {0, 81, 82, 83, 210}
    play(state, "buy joker", "end step 1", "new unit 10S")
    assert state.attack[1] == [11]
    play(state, "end step 1")
    assert hand(state, 0) == {"5H", "2C", "3C"}
    assert {207, 208, 209} <= legal(state)
    play(state, "heart 5H on J")
    assert state.defense[0][0] == 4
    play(state, "end step 1")
    assert hand(state, 1) == {"2C", "3C", "4C", "5C"}
    play(state, "unit 0 attacks J")
    return state


def test_sc10_the_decoy_decision_is_the_defenders():  # Sc-10 step 4, R10.3, A33, A52
    state = sc10()
    assert discard(state, 1) == Counter(["10S"]) and Counter(card_codes(state.discards[0]))["5H"] == 1
    assert state.phase == DECOY_PHASE and state.current_player == 0 and state.active == 1
    assert legal(state) == {213, 214}
    env = bloodlines_v0.env(bloodlines=("D", "S"), starting_player=0)
    env.reset(options={"decks": [["10D", "9D", "5D", "5H", "2C", "3C"], ["10S", "2C", "3C", "4C", "5C"]]})
    for name in ("pool 10D", "pool 9D", "pool 5D", "buy joker", "end step 1", "new unit 10S", "end step 1",
                 "heart 5H on J", "end step 1", "unit 0 attacks J"):
        env.step(ID[name])
    assert env.agent_selection == "player_0"
    assert np.flatnonzero(env.observe("player_0")["action_mask"]).tolist() == [213, 214]
    assert not env.observe("player_1")["action_mask"].any()


def test_sc10_branch_a_decoy_saves_the_royal():  # Sc-10 step 5, R10.3, A33
    state = sc10()
    play(state, "decoy")
    assert state.royals[0] == [0, 1, 2] and state.defense[0][0] == 0 and state.jokers[0] == []
    assert state.turn == 5 and state.current_player == 0 and state.active == 0
    assert discard(state, 0) == Counter(["10D", "9D", "5D", "5H", "X1"])
    assert discard(state, 1) == Counter(["10S"])


def test_sc10_branch_b_no_decoy_loses_the_royal():  # Sc-10 step 6, R10.4
    state = sc10()
    play(state, "no decoy")
    assert state.royals[0] == [1, 2] and "JD" in discard(state, 0)
    assert card_codes(state.jokers[0]) == ["X1"]
    assert state.turn == 5 and state.current_player == 0
    play(state, "end step 1")
    assert {207, 208, 209} <= legal(state)


def test_sc13_immediate_stalemate_with_equal_royals_is_a_draw():  # Sc-13, R15, R16, A40, A51
    state = deal(["2C", "3C", "4D", "5D"], ["2C", "3C", "4D", "5D"], bloodlines=("H", "S"))
    assert legal(state) == {0, 1, 11, 12, 211}
    play(state, "end step 1")
    assert legal(state) == {0, 1, 11, 12, 212}
    play(state, "pass")
    assert state.idle == 1 and state.current_player == 1
    assert legal(state) == {0, 1, 11, 12, 211}
    play(state, "end step 1", "pass")
    assert state.terminated and not state.truncated and state.outcome == "stalemate"
    assert state.returns() == [0.0, 0.0] and state.winners() == []


def test_sc13_variant_a_cycle_resets_the_idle_counter():  # Sc-13 step 4, R15
    state = deal(["2C", "3C", "4D", "5D"], ["2C", "3C", "4D", "5D"], bloodlines=("H", "S"))
    play(state, "end step 1", "pass", "cycle 2C")
    assert hand(state, 1) == {"3C", "4D", "5D", "4C"}
    play(state, "end step 1", "pass")
    assert not state.is_over and state.idle == 0 and state.turn == 3 and state.current_player == 0


def sc15(**config) -> BloodlinesState:
    state = deal(["5S", "9H", "3C", "7D", "8S"], ["4H", "10S", "6C", "2D", "9H"], bloodlines=("S", "H"),
                 max_turns=3, **config)
    play(state, "end step 1", "new unit 5S", "end step 1", "heart 4H on J", "end step 1")
    return state


def test_sc15_truncation_at_the_turn_limit_scored_on_royals():  # Sc-15, R16, A41, section 9
    state = sc15()
    play(state, "unit 0 attacks J")
    assert state.truncated and not state.terminated and state.outcome == "turn_limit"
    assert state.returns() == [1.0, -1.0] and state.winners() == [0]


def test_sc15_truncation_with_unfinished_result_draw():  # Sc-15, R16
    state = sc15(unfinished_result="draw")
    play(state, "unit 0 attacks J")
    assert state.truncated and state.returns() == [0.0, 0.0]


def test_sc15_truncation_with_equal_royals_is_a_draw():  # Sc-15, R16
    state = sc15()
    play(state, "heart 9H on J")
    assert state.truncated and state.returns() == [0.0, 0.0]


def test_sc15_env_flags_truncations_for_both_agents():  # Sc-15, section 9
    env = bloodlines_v0.env(bloodlines=("S", "H"), starting_player=0, max_turns=3)
    env.reset(options={"decks": [["5S", "9H", "3C", "7D", "8S"], ["4H", "10S", "6C", "2D", "9H"]]})
    for name in ("end step 1", "new unit 5S", "end step 1", "heart 4H on J", "end step 1", "unit 0 attacks J"):
        env.step(ID[name])
    assert env.truncations == {"player_0": True, "player_1": True}
    assert env.terminations == {"player_0": False, "player_1": False}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


def test_sc16_match_sequencing():  # Sc-16, R18, A9
    assert next_starting_player(previous_starter=0, previous_winner=1) == 0  # the loser starts
    assert next_starting_player(previous_starter=1, previous_winner=0) == 1
    assert next_starting_player(previous_starter=0, previous_winner=-1) == 1  # draw: the other starts
    assert next_starting_player(previous_starter=1, previous_winner=-1) == 0


# -- section 4: the rules one by one --------------------------------------------------------------------


def to_main(state: BloodlinesState) -> None:
    if state.phase == STEP1:
        play(state, "end step 1")


def test_r1_turns_alternate_and_are_numbered():  # R1, R9a, A20, A52
    state = deal(["2H", "3H", "4H", "5H"], ["2H", "3H", "4H", "5H"], bloodlines=("S", "C"))
    seen = []
    for heart in ("2H", "2H", "3H", "3H", "4H", "4H"):
        seen.append((state.turn, state.active))
        to_main(state)
        play(state, f"heart {heart} on J")
    assert seen == [(1, 0), (2, 1), (3, 0), (4, 1), (5, 0), (6, 1)]
    assert state.defense == [[1 + 2 + 3, 0, 0], [1 + 2 + 3, 0, 0]]  # any number of hearts on one royal


def test_r1_starting_player_one_moves_first():  # R1, S6
    state = deal([], [], bloodlines=("S", "C"), starting_player=1)
    assert state.active == 1 and state.current_player == 1 and state.turn == 1


def test_r3_no_main_action_in_step1():  # R3
    state = sc1()
    assert not legal(state) & set(range(72, 211)) and ID["pass"] not in legal(state)


def test_r4_no_draw_when_the_pile_is_empty():  # R4, R12
    state = deal(["10C", "9C", "8C", "7C"], [], bloodlines=("C", "H"))
    play(state, "power 10C", *[f"discard {c}" for c in "2C 3C 4C 5C 2D 3D 4D 5D 6D 7D".split()])
    play(state, "power 9C", *[f"discard {c}" for c in "8D 9D 10D 2H 3H 4H 5H 6H 7H".split()])
    play(state, "power 8C", *[f"discard {c}" for c in "8H 9H 2S 3S 4S 5S 6S 7S".split()])
    play(state, "power 7C", "discard 6C")  # hand 10H 8S 9S 10S, pile empty
    play(state, "new unit 10S")
    play(state, "end step 1", "pass")  # p1
    assert state.phase == MAIN and hand(state, 0) == {"10H", "8S", "9S"} and state.piles[0] == []


def test_r5_resource_actions_in_main_then_exactly_one_main_action():  # R5, A16
    state = deal(["2C", "3D", "4H", "5S", "6C", "7C"], [], bloodlines=("S", "H"))
    play(state, "end step 1", "cycle 2C", "cycle 3D")
    assert state.current_player == 0 and state.phase == MAIN and state.turn == 1
    play(state, "heart 4H on Q")
    assert state.current_player == 1 and state.turn == 2 and hand(state, 0) == {"5S", "6C", "7C"}


def test_r6_pass_needs_no_main_action_then_ends_the_turn():  # R6, A21, A22
    state = deal(["2C", "3C", "4D", "5D"], [], bloodlines=("H", "S"))
    play(state, "end step 1")
    assert ID["pass"] in legal(state)
    play(state, "pass")
    assert state.turn == 2 and state.current_player == 1


def test_r7_resource_actions_never_while_discards_are_owed_or_in_decoy():  # R7, R8, A43
    state = sc5()
    play(state, "power 4C")
    assert legal(state) <= set(range(36, 72))
    decoy = sc10()
    assert legal(decoy) == {213, 214}


def test_r7b_power_in_main_returns_to_main():  # R7b, R8, A15
    state = deal(["2H", "3H", "4H", "5H", "2C", "6S", "7S", "3C", "9S"], [], bloodlines=("C", "S"))
    assert state.phase == MAIN  # T1: STEP1 forced (no club or diamond)
    play(state, "heart 2H on J", "end step 1", "pass")
    assert state.phase == MAIN and hand(state, 0) == {"3H", "4H", "5H", "2C"}  # T3: drew 2C
    play(state, "power 2C")  # value 3: draws 6S 7S 3C
    assert state.phase == DISCARD_PHASE and state.owed == 2
    play(state, "discard 3H", "discard 4H")
    assert state.phase == MAIN and state.turn == 3 and hand(state, 0) == {"5H", "6S", "7S", "3C"}
    assert ID["new unit 7S"] in legal(state) and ID["end step 1"] not in legal(state)


def test_r7c_pooling_is_legal_with_an_empty_pile():  # R7c, R12, A31, A36
    state = deal([], [], bloodlines=("D", "S"), hand_limit=36)
    assert state.piles[0] == [] and len(state.hands[0]) == 36
    actions = legal(state)
    assert set(range(27, 36)) <= actions and not actions & set(range(0, 27))


def test_r9b_r17_units_are_appended_and_close_gaps():  # R9b, R10.1, R17, A24, A25, A27
    state = deal(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S"], [], bloodlines=("S", "C"))
    play(state, "new unit 2S", "end step 1", "pass")
    play(state, "new unit 3S", "end step 1", "pass")
    play(state, "new unit 4S", "end step 1", "pass")
    assert [card_codes(u) for u in state.units[0]] == [["2S"], ["3S"], ["4S"]] and state.attack[0] == [3, 4, 5]
    play(state, "unit 1 attacks J")
    assert [card_codes(u) for u in state.units[0]] == [["2S"], ["4S"]] and state.attack[0] == [3, 5]
    assert "3S" in discard(state, 0) and state.royals[1] == [1, 2]
    play(state, "end step 1", "pass")
    assert ID["add 6S to unit 1"] in legal(state) and ID["unit 2 attacks Q"] not in legal(state)
    play(state, "add 6S to unit 1")
    assert state.attack[0] == [3, 12]
    assert_consistent(state)


def kill_two_then_face_a_joker(**config) -> BloodlinesState:
    """p0 (spades) kills JD and QD; p1 (diamonds) then buys X1; p0 attacks KD (A33 on the last royal)."""
    state = deal(["10S", "9S", "8S", "7S", "6S", "5S"], ["10D", "9D", "5D", "2C"], bloodlines=("S", "D"),
                 allow_pass=True, **config)
    play(state, "new unit 10S", "end step 1", "pass")
    play(state, "new unit 9S", "end step 1", "pass")
    play(state, "unit 0 attacks J", "end step 1", "pass")
    play(state, "unit 0 attacks Q")
    assert state.royals[1] == [2]
    play(state, "pool 10D", "pool 9D", "pool 5D", "end step 1", "buy joker")
    play(state, "new unit 8S", "end step 1", "pass")
    play(state, "unit 0 attacks K")
    return state


def test_r14_a_decoy_saves_even_the_last_royal():  # R10.3, R14, A33
    state = kill_two_then_face_a_joker()
    assert state.phase == DECOY_PHASE and state.current_player == 1
    play(state, "decoy")
    assert not state.is_over and state.royals[1] == [2] and state.current_player == 1


def test_r14_killing_the_third_royal_ends_the_game_at_once():  # R10.4, R14, A39, section 9
    state = kill_two_then_face_a_joker(shaping_weight=0.1)
    state.apply(ID["no decoy"])
    assert state.terminated and not state.truncated and state.outcome == "kill"
    assert state.current_player == -1 and state.legal_actions() == [] and not state.legal_mask().any()
    assert state.rewards == pytest.approx([1.1, -1.1])
    assert state.returns() == pytest.approx([1.3, -1.3])  # 3 kills x 0.1 + the win
    assert state.winners() == [0]


def test_r14_win_without_any_joker():  # R14, R10.4
    state = deal(["10S", "9S", "8S", "7S"], [], bloodlines=("S", "C"))
    play(state, "new unit 10S", "end step 1", "pass")
    play(state, "new unit 9S", "end step 1", "pass")
    play(state, "end step 1", "new unit 8S", "end step 1", "pass")
    for royal in "JQ":
        play(state, "end step 1", f"unit 0 attacks {royal}", "end step 1", "pass")
    assert not state.is_over
    play(state, "end step 1", "unit 0 attacks K")
    assert state.terminated and state.returns() == [1.0, -1.0] and state.royals[1] == []
    assert Counter(card_codes(state.discards[1])) >= Counter(["JC", "QC", "KC"])


def test_a47_a_lone_joker_attack_is_mandatory():  # A47, R6
    state = sc10()
    play(state, "no decoy", "end step 1")
    actions = legal(state)
    assert {207, 208, 209} <= actions and ID["pass"] not in actions
    assert actions - {207, 208, 209} <= set(range(18))  # otherwise only cycles


def test_a3_a35_a44_jokers_in_order_and_the_supply_runs_out():  # A3, A35, A44, R9e, R9f, R10.3
    state = deal(["10D", "9D", "2S", "3S", "4D", "5D", "6D", "7D"], ["10S", "2C", "3C", "4C"],
                 bloodlines=("D", "S"), joker_cost=10, allow_pass=True)
    play(state, "pool 10D", "end step 1", "buy joker", "end step 1", "new unit 10S")
    assert card_codes(state.jokers[0]) == ["X1"]
    play(state, "pool 9D", "pool 4D")  # hand 2S 3S: STEP1 forced, draws 5D
    play(state, "buy joker", "end step 1", "pass")
    assert card_codes(state.jokers[0]) == ["X1", "X2"] and state.supply[0] == []
    play(state, "pool 5D")  # hand 2S 3S: STEP1 forced, draws 6D
    play(state, "pool 6D")
    assert state.pool_values[0] == 13 and ID["buy joker"] not in legal(state)  # the supply is empty
    play(state, "pass", "end step 1", "unit 0 attacks J", "decoy")
    assert card_codes(state.jokers[0]) == ["X2"] and discard(state, 0)["X1"] == 1  # X1 decoys first
    play(state, "joker attacks J")
    assert state.jokers[0] == [] and discard(state, 0)["X2"] == 1 and state.royals[1] == [1, 2]


def test_r10_hearts_are_discarded_even_on_a_decoy():  # R10.2, A33
    state = sc10()
    play(state, "decoy")
    assert state.hearts[0][0] == [] and state.defense[0][0] == 0 and "5H" in discard(state, 0)
    assert state.rewards == [0.0, 0.0]  # a decoyed attack pays no shaping


def test_r11_forced_steps_become_decisions_without_auto_skip():  # R11
    state = deal(["2H", "3H", "4S", "5S"], [], bloodlines=("S", "H"), auto_skip_forced=False)
    assert state.phase == STEP1 and state.legal_actions() == [ID["end step 1"]]
    state = deal(["2C", "3C", "4D", "5D"], [], bloodlines=("H", "S"), auto_skip_forced=False)
    play(state, "cycle 2C", "cycle 3C", "cycle 4D", "cycle 5D")  # draws 6C 7C 8C 9C
    play(state, "end step 1")
    assert state.phase == MAIN and ID["pass"] in legal(state)
    auto = deal(["2H", "3H", "4S", "5S"], [], bloodlines=("S", "H"))
    assert auto.phase == MAIN and auto.history == []  # R11 right after the reset, not in the history


def test_r11_a_whole_turn_can_run_without_a_decision():  # R11, R12
    whole_turns = 0
    game = Bloodlines()
    for seed in range(30):
        state = game.new_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_over:
            before = (state.turn, state.current_player)
            actions = state.legal_actions()
            state.apply(actions[int(rng.integers(len(actions)))])
            if state.current_player == before[1] and state.turn == before[0] + 2:
                whole_turns += 1  # the opponent's turn went by with no decision
    assert whole_turns > 0


def test_r15_idle_turn_counter_and_r16_stalemate_precedence():  # R15, R16
    state = deal(["2C", "3C", "4D", "5D"], ["2C", "3C", "4D", "5D"], bloodlines=("H", "S"), max_turns=2)
    play(state, "end step 1", "pass", "end step 1", "pass")
    assert state.terminated and not state.truncated and state.outcome == "stalemate"


def test_r15_stalemate_scored_on_royals():  # R15, R16
    state = deal(["10S", "2C", "3C", "4C"], ["2C", "3C", "4D", "5D"], bloodlines=("S", "H"))
    play(state, "end step 1", "new unit 10S", "end step 1", "pass")
    play(state, "end step 1", "unit 0 attacks J")  # p0 drew 5C
    play(state, "end step 1", "pass")  # p1 idle
    assert state.idle == 1 and not state.is_over
    play(state, "end step 1", "pass")  # p0 idle: hand 2C 3C 4C 5C -> stalemate, royals 3 : 2
    assert state.terminated and state.outcome == "stalemate" and state.returns() == [1.0, -1.0]
    draw = deal(["10S", "2C", "3C", "4C"], ["2C", "3C", "4D", "5D"], bloodlines=("S", "H"),
                unfinished_result="draw")
    play(draw, "end step 1", "new unit 10S", "end step 1", "pass", "end step 1", "unit 0 attacks J")
    play(draw, "end step 1", "pass", "end step 1", "pass")
    assert draw.terminated and draw.returns() == [0.0, 0.0]


def test_r16_no_turn_limit_still_terminates():  # R15, R16
    game = Bloodlines(max_turns=None)
    for seed in range(20):
        state = random_game(game.new_state(np.random.default_rng(seed)), np.random.default_rng(seed),
                            check=lambda s: None)
        assert state.terminated and state.turn < 460


# -- section 7: the observation ------------------------------------------------------------------------


def observation(state: BloodlinesState, player: int) -> np.ndarray:
    return state.game.encode(state.view(player))


def k(code: str) -> int:
    return K_OF[card_id(code)]


def test_observation_at_sc1_reset():  # section 7
    state = sc1()
    obs = observation(state, 0)
    assert obs.shape == (encoding.OBSERVATION_SIZE,) and obs.dtype == np.float32
    assert obs[0:8].tolist() == [0, 0, 0, 1, 0, 0, 1, 0]  # own S, opponent H
    assert set(np.flatnonzero(obs[8:44])) == {k("5S"), k("9H"), k("3C"), k("7D")}
    assert obs[44:50].tolist() == [1] * 6 and not obs[50:104].any() and not obs[104:110].any()
    assert obs[388] == pytest.approx(32 / 36) and obs[389] == pytest.approx(32 / 36)
    assert obs[390] == obs[391] == 1.0
    assert obs[392:396].tolist() == [1, 0, 0, 0] and obs[396] == 1 and obs[484] == 1
    assert obs[402] == pytest.approx(1 / 200) and obs[404] == 0 and obs[405] == 1
    pile = set(np.flatnonzero(obs[412:448]))
    assert pile == set(range(36)) - {k("5S"), k("9H"), k("3C"), k("7D")}
    assert obs[448:484].sum() == 36  # nothing of the opponent's is visible yet
    other = observation(state, 1)
    assert set(np.flatnonzero(other[8:44])) == {k("4H"), k("10S"), k("6C"), k("2D")}
    assert other[396] == 0 and other[484] == 0


def test_observation_after_sc2_attack():  # section 7
    state = sc1()
    play(state, "end step 1", "new unit 5S")
    p0 = observation(state, 0)
    assert p0[110 + 3] == 1 and p0[272] == pytest.approx(6 / 63)
    assert observation(state, 1)[191 + 3] == 1 and observation(state, 1)[281] == pytest.approx(6 / 63)
    play(state, "end step 1", "heart 4H on J")
    p1 = observation(state, 1)
    assert p1[50 + 2] == 1 and p1[104] == pytest.approx(5 / 63)
    assert observation(state, 0)[77 + 2] == 1 and observation(state, 0)[107] == pytest.approx(5 / 63)
    play(state, "end step 1", "unit 0 attacks J")
    p0, p1 = observation(state, 0), observation(state, 1)
    assert p0[314 + k("5S")] == 1 and p0[350 + k("4H")] == 1 and p0[47:50].tolist() == [0, 1, 1]
    assert p1[314 + k("4H")] == 1 and p1[350 + k("5S")] == 1 and p1[44:47].tolist() == [0, 1, 1]
    assert not p0[110:191].any() and not p0[77:110].any()
    assert p1[448 + k("5S")] == 0 and p1[448:484].sum() == 35  # U(p0): all but the discarded 5S


def test_observation_of_pool_jokers_and_decoy():  # section 7
    state = sc10()
    p0, p1 = observation(state, 0), observation(state, 1)
    assert p0[395] == 1 and p0[398:401].tolist() == [1, 0, 0] and p0[401] == 0
    assert p0[396] == 0 and p0[484] == 1 and p1[396] == 1 and p1[484] == 0
    assert p0[290] == 0.5 and p0[292] == 0.5 and p1[291] == 0.5 and p1[293] == 0.5
    assert p0[314 + k("10D")] == 1 and p0[312] == 0  # the spent pool is in the discard pile
    fresh = sc8()
    play(fresh, "pool 10D", "pool 9D")
    obs = observation(fresh, 1)
    assert obs[303 + 8] == obs[303 + 7] == 1 and obs[313] == pytest.approx(21 / 63)
    play(fresh, "end step 1", "pool 2D", "pool 4D", "buy joker")
    assert observation(fresh, 0)[386] == 0
    view = fresh.view(0)._replace(decoy_royal=1, decoy_by_joker=True)  # A34: unreachable, encoded anyway
    assert encoding.encode(view, fresh.game.config)[398:402].tolist() == [0, 1, 0, 1]


def test_sample_hidden_keeps_the_view():  # section 7
    state = sc1()
    play(state, "end step 1", "new unit 5S", "cycle 6C")
    rng = np.random.default_rng(0)
    for player in (0, 1):
        twin = state.sample_hidden(player, rng)
        assert twin.view(player) == state.view(player)
        assert_consistent(twin)


def test_render_shows_the_table():  # A42: the table layout is only a picture
    state = sc10()
    text = state.render()
    assert "player_0" in text and "JD" in text and "decoy" in text and "X1" in text


# -- property tests over the 12 ordered bloodline pairs ----------------------------------------------------


@pytest.mark.parametrize("pair", PAIRS)
def test_random_play_keeps_every_invariant(pair):  # R2, R8, R13, R14, R15, section 4 invariants
    game = Bloodlines(bloodlines=tuple(pair))
    rng = np.random.default_rng(PAIRS.index(pair))
    for seed in range(8):
        state = random_game(game.new_state(np.random.default_rng(seed)), rng)
        assert state.is_over and sum(state.returns()) == 0
        assert len(state.history) <= game.max_decisions()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**31), hand_limit=st.integers(1, 8),
       joker_cost=st.sampled_from([5, 12, 25]), allow_pass=st.booleans(), auto=st.booleans(),
       supply=st.sampled_from([0, 1, 2]))
def test_invariants_hold_for_every_option(pair, seed, hand_limit, joker_cost, allow_pass, auto, supply):
    game = Bloodlines(bloodlines=tuple(pair), hand_limit=hand_limit, joker_cost=joker_cost, allow_pass=allow_pass,
                      auto_skip_forced=auto, joker_supply=supply, max_turns=120)
    state = game.new_state(np.random.default_rng(seed))

    def check(position: BloodlinesState) -> None:
        assert_consistent(position)
        actions = position.legal_actions()
        if position.is_over:
            assert actions == []
            return
        assert actions, "a live decision always has a legal action"
        assert actions == sorted(actions)
        assert np.flatnonzero(position.legal_mask()).tolist() == actions
        if auto and position.phase in (STEP1, MAIN):
            assert actions not in ([211], [212])  # R11: forced steps never reach the agent
        b = SUITS[position.bloodlines[position.active]]
        if b != "C":
            assert not set(actions) & set(range(18, 27))
        if b != "D":
            assert not set(actions) & set(range(27, 36)) and 210 not in actions

    random_game(state, np.random.default_rng(seed), check=check)
    assert state.turn <= 120


def test_illegal_actions_raise_and_change_nothing():  # section 4 "Illegal actions"
    state = sc1()
    before = state.to_dict()
    for name in ("heart 9H on J", "pass", "power 3C", "pool 7D", "decoy", "unit 0 attacks J"):
        with pytest.raises(IllegalActionError, match=f"'{name}' is illegal.*legal: 1 'cycle 3C'"):
            play(state, name)
        assert state.to_dict() == before


def test_clone_copies_every_field_and_shares_no_list():
    state = sc10()  # units, hearts, pools, jokers and a pending decoy
    twin = state.clone()
    assert twin == state and twin.rng.bit_generator.state == state.rng.bit_generator.state
    for name in BloodlinesState.fields:
        assert getattr(twin, name) == getattr(state, name), name
        if isinstance(getattr(state, name), list):
            assert getattr(twin, name) is not getattr(state, name), name
    before = state.to_dict()
    random_game(twin, np.random.default_rng(0))
    assert state.to_dict() == before  # playing the copy to the end left the original untouched
    again = state.clone()
    random_game(again, np.random.default_rng(0))
    assert again.to_dict() == twin.to_dict()
