"""The JAX Battlecards engine (``card_envs/jax/battlecards.py``): the spec's worked scenarios (section 10)
played through the JAX engine from stacked decks, the chance the JAX engine draws itself (the deal, the lazily
shuffled recycled piles), and the invariants of its own games.

Lockstep with the Python engine over random games of every variant config (every player count 2-6) is the
generic ``tests/test_jax_lockstep.py`` (default run: 240 games of the default config, 24 of each other; ``-m
slow``: 10,000 and 1,000), which picks this engine up; ``python -m card_envs.jax.lockstep battlecards_v0
--variants`` runs it from the command line. Lockstep never reaches a shuffled pile (the JAX state is re-synchronised
after every Python shuffle), so the shuffled piles are checked here: drawn uniformly, and every invariant holds
along the engine's own games.

Scenario steps are written as in the spec (``"P0: lead 9"``): the named player must be the one to act, the
decision kind must match the verb. The JAX engine keeps kinds, not suits (its module docstring), so hands and
piles are compared as kinds. Compiled engines come from ``tests/jax_support.py`` (once per config and process).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("pgx")

import jax.numpy as jnp  # noqa: E402

from card_envs.battlecards.rules import BURY, FOLLOW, KIND, KIND_NAMES, LEAD, OVER, WAR_UP, Battlecards  # noqa: E402
from card_envs.cards import card_id  # noqa: E402
from card_envs.jax.core import make, random_legal_actions  # noqa: E402
from tests import jax_support  # noqa: E402

NAME = "battlecards_v0"
VERB_PHASE = {"lead": LEAD, "follow": FOLLOW, "bury": BURY, "war-up": WAR_UP}
VARIANTS = Battlecards.variant_configs()
KEY = jax.random.PRNGKey(0)


# -- compiled engines, once per config and test process (shared with the other JAX test modules) -------------


def engine(**options: Any) -> Any:
    return jax_support.engine(NAME, **options)


# -- scenario helpers --------------------------------------------------------------------------------------


def kinds_of(codes: str) -> Counter:
    """Spec card codes as a multiset of kind names (the JAX engine keeps no suits)."""
    return Counter(KIND_NAMES[KIND[card_id(code)]] for code in codes.split())


def deal(deck: str, **options: Any) -> tuple[jax_support.Engine, Any]:
    """The JAX state of a stacked deck (3.2), through ``from_state`` of the Python deal."""
    eng = engine(**options)
    py_state = Battlecards(**options).new_state(np.random.default_rng(0), {"deck": deck.split()})
    return eng, eng.env.from_state(py_state)


def play(eng: jax_support.Engine, state: Any, script: str, key: jax.Array = KEY) -> Any:
    """Apply steps like ``"P0: lead 9, P1: follow 9"``, checking the actor, the decision kind and the mask."""
    for step in re.split(r"[,;]\s*", script.strip()):
        match = re.fullmatch(r"P(\d): (lead|follow|bury|war-up) (\w+)", step.strip())
        assert match, f"bad step {step!r}"
        player, verb, name = int(match[1]), match[2], match[3]
        assert int(state.current_player) == player, f"{step}: player_{int(state.current_player)} is to act"
        assert int(state._phase) == VERB_PHASE[verb], f"{step}: decision is {int(state._phase)}"
        action = KIND_NAMES.index(name)
        assert bool(state.legal_action_mask[action]), f"{step}: {name} is not in the mask"
        key, sub = jax.random.split(key)
        state = eng.step(state, jnp.int32(action), sub)
    return state


def hand(state: Any, p: int) -> Counter:
    return Counter({KIND_NAMES[k]: int(c) for k, c in enumerate(np.asarray(state._hand[p])) if c})


def pile(state: Any, p: int) -> list[str]:
    """The ordered face-down pile, top first."""
    size = int(state._pile_n[p])
    assert int(state._pile_rand[p].sum()) == 0, "a shuffled pile has no order"
    return [KIND_NAMES[k] for k in np.asarray(state._pile[p, :size])[::-1]]


def face_up(state: Any, p: int) -> Counter:
    return Counter({KIND_NAMES[k]: int(c) for k, c in enumerate(np.asarray(state._face_up[p])) if c})


def face_up_order(state: Any, p: int) -> list[str]:
    """``U_p`` oldest first (``shuffle_mid_game=False`` only)."""
    size = int(state._face_up[p].sum())
    return [KIND_NAMES[k] for k in np.asarray(state._up_order[p, :size])]


def held(state: Any) -> list[int]:
    return (np.asarray(state._hand.sum(1) + state._pile_n + state._pile_rand.sum(1) + state._face_up.sum(1))
            .tolist())


def mask_kinds(state: Any) -> set[str]:
    return {KIND_NAMES[a] for a in np.flatnonzero(np.asarray(state.legal_action_mask))}


def names(codes: str) -> list[str]:
    return [KIND_NAMES[KIND[card_id(code)]] for code in codes.split()]


SORTED = " ".join(f"{rank}{suit}" for suit in "CDHS" for rank in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J",
                                                                   "Q", "K", "A"))


# -- section 10: the worked scenarios -------------------------------------------------------------------------


def test_s1_deal_plain_round_and_mask():  # S1, R4, R7, R8, R14, R16, A3, A44
    eng, s = deal(SORTED)
    assert hand(s, 0) == kinds_of("2C 4C 6C 8C 10C") and pile(s, 0)[:4] == names("QC AC 3D 5D")
    assert len(pile(s, 0)) == 21 and pile(s, 0)[-1] == "K"
    assert hand(s, 1) == kinds_of("3C 5C 7C 9C JC") and pile(s, 1)[:3] == names("KC 2D 4D")
    assert int(s._set_aside) == 0 and int(s.current_player) == 0 and int(s._phase) == LEAD
    assert mask_kinds(s) == {"2", "4", "6", "8", "10"}
    s = play(eng, s, "P0: lead 10, P1: follow J")
    assert face_up(s, 1) == kinds_of("10C JC")
    assert hand(s, 1) == kinds_of("3C 5C 7C 9C KC") and hand(s, 0) == kinds_of("2C 4C 6C 8C QC")
    assert len(pile(s, 0)) == len(pile(s, 1)) == 20
    assert int(s.current_player) == 1 and int(s._phase) == LEAD and mask_kinds(s) == {"3", "5", "7", "9", "K"}
    illegal = eng.step(s, jnp.int32(KIND_NAMES.index("A")), KEY)  # R25 / A44: the Pgx illegal-action ending
    assert bool(illegal.terminated) and float(illegal.rewards[1]) == -1.0


@pytest.mark.parametrize(("options", "each", "aside", "bottoms"), [
    ({"num_players": 5}, 10, 2, {}),
    ({"num_players": 5, "jokers": True}, 10, 4, {}),
    ({"num_players": 6, "jokers": True}, 9, 0, {4: "X", 5: "X"}),
])
def test_s2_deal_with_remainder(options, each, aside, bottoms):  # S2, A4, A38
    deck = SORTED + (" X1 X2" if options.get("jokers") else "")
    _eng, s = deal(deck, **options)
    assert held(s) == [each] * options["num_players"] and int(s._set_aside) == aside
    if options["num_players"] == 5:
        assert hand(s, 0) == kinds_of("2C 7C QC 4D 9D") and pile(s, 0) == names("AD 6H JH 3S 8S")
        assert hand(s, 4) == kinds_of("6C JC 3D 8D KD") and pile(s, 4) == names("5H 10H 2S 7S QS")
    for p, kind in bottoms.items():
        assert pile(s, p)[-1] == kind


def test_s3_which_physical_card():  # S3, R22 (kinds only: the suit never shows)
    eng, s = deal("9H 2D 9C 3D")
    s = play(eng, s, "P0: lead 9, P1: follow 3")
    assert face_up(s, 0) == kinds_of("9C 3D") and hand(s, 0) == kinds_of("9H") and hand(s, 1) == kinds_of("2D")


def test_s4_simple_war_and_empty_pile_rule():  # S4, R6, R9, R11, R12, R14, A8, A12, A16
    eng, s = deal("9C 9D 2C 2D 3C 3D 4C 4D AC KD 5C 5D 6C 6D 7C 7D 8C 8D")
    s = play(eng, s, "P0: lead 9, P1: follow 9")
    assert int(s._war_level) == 1 and np.asarray(s._entry).tolist() == [1, 2]
    assert np.asarray(s._table_down).sum(1).tolist() == [3, 3]  # face-down, automatic
    assert int(s.current_player) == 1 and int(s._phase) == WAR_UP and mask_kinds(s) == {"2", "3", "4", "K"}
    s = play(eng, s, "P1: war-up K")
    assert mask_kinds(s) == {"2", "3", "4", "A"}
    s = play(eng, s, "P0: war-up A")
    assert face_up(s, 0) == kinds_of("9C 9D 5D 6D 7D 5C 6C 7C KD AC")  # A12: all ten, face up
    assert hand(s, 0) == kinds_of("2C 3C 4C 8C") and pile(s, 0) == []
    assert hand(s, 1) == kinds_of("2D 3D 4D 8D")
    s = play(eng, s, "P0: lead 8, P1: follow 2")
    assert sum(face_up(s, 0).values()) == 12
    assert hand(s, 0) == kinds_of("2C 3C 4C") and hand(s, 1) == kinds_of("3D 4D 8D")  # A8: nobody draws
    assert int(s.current_player) == 0 and mask_kinds(s) == {"2", "3", "4"} and held(s) == [15, 3]


def test_s6_war_with_a_bystander_and_low_tie():  # S6, R1, R8, R9, A13, A14, A34, A46
    eng, s = deal("9C 4D 9H 2C 2D 2H 3C 3D 3H 4C 10D 4H AC JD KH 5C 5D 5H 6C 6D 6H 7C 7D 7H 8C 8D 8H",
                  num_players=3, shuffle_mid_game=False)
    s = play(eng, s, "P0: lead 9, P1: follow 4, P2: follow 9")
    assert np.asarray(s._entry).tolist() == [1, 0, 2]
    assert np.asarray(s._table_down).sum(1).tolist() == [3, 0, 3]  # A46: P1 idle
    s = play(eng, s, "P2: war-up K, P0: war-up A")
    assert sum(face_up(s, 0).values()) == 11 and face_up(s, 0)["4"] == 1  # P1's 4D included
    assert hand(s, 0).total() == 4 and pile(s, 0) == []
    assert hand(s, 1).total() == 5 and pile(s, 1) == names("6D 7D 8D")
    assert hand(s, 2).total() == 4 and pile(s, 2) == []
    s = play(eng, s, "P0: lead 3, P1: follow 3, P2: follow 8")  # A13: a low tie is no war
    assert face_up_order(s, 2) == names("3C 3D 8H") and pile(s, 1) == names("7D 8D")
    assert int(s.current_player) == 2 and int(s._phase) == LEAD and held(s) == [14, 7, 6]


S7_DECK = "AC 9D KC 8D QC 7D 2C 6D 3C 5D JC 4D 10C 2D"
S7_ROUNDS = ("P0: lead A, P1: follow 5, P0: lead 2, P1: follow 9, P1: lead 2, P0: follow 3, "
             "P0: lead K, P1: follow 4, P0: lead 10, P1: follow 6, P0: lead J, P1: follow 8, "
             "P0: lead Q, P1: follow 7")


def test_s7_empty_pile_and_recycle_timing():  # S7, R5, R6, R23, A8, A9, A10, A11, A41
    eng, s = deal(S7_DECK, shuffle_mid_game=False)
    s = play(eng, s, S7_ROUNDS[:S7_ROUNDS.index(", P1: lead 2")])
    assert face_up_order(s, 1) == names("2C 9D") and pile(s, 0) == pile(s, 1) == []
    s = play(eng, s, "P1: lead 2, P0: follow 3")
    assert hand(s, 0).total() == hand(s, 1).total() == 4 and sum(face_up(s, 0).values()) == 4  # A8
    s = play(eng, s, "P0: lead K, P1: follow 4, P0: lead 10, P1: follow 6, P0: lead J, P1: follow 8")
    assert mask_kinds(s) == {"Q"}  # A41: still a decision
    s = play(eng, s, "P0: lead Q, P1: follow 7")
    # A9: R7's cards are in the recycled pile; A11: oldest on top
    assert hand(s, 0) == kinds_of("AC 5D 2D 3C KC") and pile(s, 0) == names("4D 10C 6D JC 8D QC 7D")
    assert hand(s, 1) == kinds_of("2C 9D") and pile(s, 1) == []
    assert int(s.current_player) == 0 and int(s._phase) == LEAD and held(s) == [12, 2]


def test_s8_retirement_variant():  # S8, R21, A39, A40
    eng, s = deal(S7_DECK, shuffle_mid_game=False, retire_lowest_on_flip=True)
    s = play(eng, s, S7_ROUNDS)
    assert int(s._retire_level) == 3
    assert hand(s, 0) == kinds_of("AC 5D 3C KC 4D") and pile(s, 0) == names("10C 6D JC 8D QC 7D")
    assert hand(s, 1) == kinds_of("9D") and pile(s, 1) == []
    assert np.asarray(s._discard).tolist()[0] == 2  # 2D and 2C retired
    assert held(s) == [11, 1]  # A40: P0 keeps its 3C although 3s are retired


def test_s9_short_pile_bury_from_hand():  # S9, R11b, R11c, A17, A18, A21
    eng, s = deal("8C 8D 2C JD 3C QD 4C 2D KC 3D 5C 9D")
    s = play(eng, s, "P0: lead 8, P1: follow 8")
    assert int(s._phase) == BURY and int(s.current_player) == 1 and int(s._bury_left) == 2
    assert mask_kinds(s) == {"J", "Q", "2", "3"}
    s = play(eng, s, "P1: bury 2")
    assert mask_kinds(s) == {"J", "Q", "3"}
    s = play(eng, s, "P1: bury 3")
    assert int(s.current_player) == 0 and int(s._phase) == BURY and mask_kinds(s) == {"2", "3", "4", "K"}
    s = play(eng, s, "P0: bury 2, P0: bury 3")
    assert int(s._phase) == WAR_UP and mask_kinds(s) == {"J", "Q"}
    s = play(eng, s, "P1: war-up Q, P0: war-up K")
    assert face_up(s, 0) == kinds_of("8C 8D 9D 2D 3D 5C 2C 3C QD KC")
    assert hand(s, 0) == kinds_of("4C") and hand(s, 1) == kinds_of("JD") and held(s) == [11, 1]
    s = play(eng, s, "P0: lead 4, P1: follow J")
    assert hand(s, 1).total() == 2 and hand(s, 0).total() == 5 and held(s) == [10, 2]
    assert int(s.current_player) == 1 and int(s._phase) == LEAD


S11_DECK = "AC 7H KC 2D QC 3D JC 4D 7C 7D"
S11_START = ("P0: lead A, P1: follow 7, P0: lead K, P1: follow 2, P0: lead Q, P1: follow 3, "
             "P0: lead J, P1: follow 4, P0: lead 7, P1: follow 7")


def test_s11_stuck_player_and_war_recycle():  # S11, R10, R11a, A19, A22, A31
    eng, s = deal(S11_DECK, shuffle_mid_game=False)
    s = play(eng, s, S11_START)
    assert np.asarray(s._stuck).tolist() == [False, True] and np.asarray(s._active).tolist() == [True, True]
    assert hand(s, 0) == kinds_of("AC 7D KC 2D QC") and np.asarray(s._table_down).sum(1).tolist() == [3, 0]
    assert int(s.current_player) == 0 and int(s._phase) == WAR_UP and mask_kinds(s) == {"2", "7", "Q", "K", "A"}
    a = play(eng, s, "P0: war-up A")  # S11a
    assert bool(a.terminated) and np.asarray(a.rewards).tolist() == [1.0, -1.0]
    b = play(eng, s, "P0: war-up 2")  # S11b: the stuck 7 beats a 2
    assert hand(b, 1) == kinds_of("7C 7H 3D JC 4D") and pile(b, 1) == ["2"]
    assert hand(b, 0) == kinds_of("AC 7D KC QC") and pile(b, 0) == [] and held(b) == [4, 6]
    assert int(b.current_player) == 1 and int(b._phase) == LEAD
    c = play(eng, s, "P0: war-up 7")  # S11c: level 2, P1 still stuck
    assert int(c._war_level) == 2 and np.asarray(c._stuck).tolist() == [False, True] and int(c._bury_left) == 3
    c = play(eng, c, "P0: bury 2, P0: bury Q, P0: bury K")
    assert mask_kinds(c) == {"A"}
    c = play(eng, c, "P0: war-up A")
    assert bool(c.terminated) and np.asarray(c.rewards).tolist() == [1.0, -1.0]


def test_s11d_and_s15_cease_fire_and_two_player_last_card_tie():  # S11d, S15, R10.1, R15.1, A29, A30
    eng, s = deal(S11_DECK, shuffle_mid_game=False, cease_fire=True)
    s = play(eng, s, S11_START)
    assert bool(s.terminated) and int(s._phase) == OVER and np.asarray(s.rewards).tolist() == [0.0, 0.0]
    assert np.asarray(s._winners).tolist() == [True, True]
    for options in ({}, {"shuffle_mid_game": False, "cease_fire": True}):
        eng, s = deal("9C 9D", **options)
        s = play(eng, s, "P0: lead 9, P1: follow 9")
        assert bool(s.terminated) and np.asarray(s._winners).tolist() == [True, True]
        assert np.asarray(s.rewards).tolist() == [0.0, 0.0]


def test_s14_last_card_tie_and_cease_fire_after_an_elimination():  # S14, R15, A24-A28, A30, R16, R17
    eng, s = deal("9C 9D 5H", num_players=3, shuffle_mid_game=False)
    s = play(eng, s, "P0: lead 9, P1: follow 9, P2: follow 5")  # designated P1 gets the extra 5H
    assert hand(s, 1) == kinds_of("9D 5H") and hand(s, 0) == kinds_of("9C")
    assert np.asarray(s._active).tolist() == [True, True, False]
    assert np.asarray(s.rewards) == pytest.approx([0.25, 0.25, -0.5])  # RULES.md: paid at elimination
    assert int(s.current_player) == 1 and int(s._phase) == LEAD
    s = play(eng, s, "P1: lead 9, P0: follow 9")
    assert np.asarray(s._stuck).tolist() == [True, False, False] and mask_kinds(s) == {"5"}
    s = play(eng, s, "P1: war-up 5")
    assert bool(s.terminated) and np.asarray(s._winners).tolist() == [True, False, False]
    assert np.asarray(s.rewards) == pytest.approx([0.75, -0.75, 0.0])  # totals +1, -0.5, -0.5
    eng, s = deal("9C 9D 5H", num_players=3, cease_fire=True)
    s = play(eng, s, "P0: lead 9, P1: follow 9, P2: follow 5")  # three active: no cease fire
    s = play(eng, s, "P1: lead 9, P0: follow 9")
    assert bool(s.terminated) and np.asarray(s._winners).tolist() == [True, True, False]
    assert np.asarray(s.rewards) == pytest.approx([0.0, 0.0, 0.0])  # totals +0.25, +0.25, -0.5 (RULES.md)


S16_DECK = "X1 2D 9C 9D 5C X2 2C 3D 4C 4D 6C 5D 7C 6D 8C 7D 10C 8D JC 10D QC JD KC QD AC KD"


def test_s16_jokers():  # S16, R9, R20, A15, A36, A37
    eng, s = deal(S16_DECK, jokers=True)
    assert hand(s, 0) == kinds_of("X1 9C 5C 2C 4C") and hand(s, 1) == kinds_of("2D 9D X2 3D 4D")
    assert int(s._joker_value) == 1
    s = play(eng, s, "P0: lead X, P1: follow 2")
    assert int(s._joker_value) == 2 and face_up(s, 1) == kinds_of("X1 2D")
    s = play(eng, s, "P1: lead 9, P0: follow 9")
    assert np.asarray(s._entry).tolist() == [2, 1]
    s = play(eng, s, "P0: war-up 2, P1: war-up X")
    assert int(s._war_level) == 2  # the joker is worth 2 the whole round
    s = play(eng, s, "P0: war-up 5, P1: war-up 3")
    assert int(s._joker_value) == 5 and sum(face_up(s, 0).values()) == 18
    assert hand(s, 0) == kinds_of("4C 6C AC") and hand(s, 1) == kinds_of("4D 5D KD")
    assert held(s) == [21, 5] and face_up(s, 1) == kinds_of("X1 2D")
    obs = np.asarray(s.observation)
    assert obs[483 + 5 - 1] == 1.0 and obs[483:497].sum() == 1.0


def test_s17_elimination_and_skipping_a_seat():  # S17, R1, R16, R17
    eng, s = deal("AC 2D 10H KC 3D JH 5C 4D QH", num_players=3, shuffle_mid_game=False)
    s = play(eng, s, "P0: lead A, P1: follow 2, P2: follow 10, P0: lead K, P1: follow 3, P2: follow J")
    s = play(eng, s, "P0: lead 5, P1: follow 4, P2: follow Q")
    assert hand(s, 2) == kinds_of("5C 4D QH")
    assert hand(s, 0) == kinds_of("AC 2D 10H KC 3D") and pile(s, 0) == ["J"]
    assert np.asarray(s._active).tolist() == [True, False, True] and not bool(s.terminated)
    assert np.asarray(s.rewards) == pytest.approx([0.25, -0.5, 0.25])
    assert int(s.current_player) == 2 and int(s._phase) == LEAD
    s = play(eng, s, "P2: lead Q, P0: follow A")
    assert int(s.current_player) == 0


@pytest.mark.parametrize(("scoring", "expected"), [("most_cards", [-1.0, 1.0]), ("card_share", [-1 / 13, 1 / 13])])
def test_s19_truncation_scoring(scoring, expected):  # S19, R19, A43
    eng, s = deal(SORTED, max_rounds=2, truncation_scoring=scoring)
    s = play(eng, s, "P0: lead 10, P1: follow J, P1: lead 3, P0: follow 2")
    assert bool(s.truncated) and not bool(s.terminated) and int(s._rounds) == 2
    assert held(s) == [24, 28]
    assert np.asarray(s.rewards) == pytest.approx(expected)


# -- chance drawn by the JAX engine -----------------------------------------------------------------------------


def test_the_deal_is_a_uniform_shuffle():  # 3.2-3.4: every seat gets k cards, hands are uniform samples
    eng = engine(num_players=5, jokers=True)
    env = eng.env
    states = eng.batch_init(eng.keys(7, 4000))
    assert np.asarray(states._hand.sum(-1) + states._pile_n).tolist() == [[10] * 5] * 4000
    assert set(np.asarray(states._set_aside).tolist()) == {4}
    hands = np.asarray(states._hand, np.float64)
    expected = 5 * np.asarray(env.composition) / 54  # each card is in a given 5-card hand with p = 5/54
    assert np.abs(hands.mean(0) - expected).max() < 0.03
    assert len({tuple(h) for h in np.asarray(states._hand[:, 0]).tolist()}) > 2000  # not a few fixed deals


def test_a_recycled_pile_is_drawn_uniformly():  # R5, R23, A11: the lazily shuffled pile
    # S7 with shuffling: after R7 P0 recycles 12 cards of 12 different kinds and draws 5 of them
    eng, s = deal(S7_DECK)
    s = play(eng, s, S7_ROUNDS[:S7_ROUNDS.index(", P0: lead Q")])
    action = jnp.int32(KIND_NAMES.index("Q"))
    s = eng.step(s, action, KEY)  # P0: lead Q; the next step recycles
    keys = jax.random.split(jax.random.PRNGKey(3), 6000)
    after = jax.jit(jax.vmap(eng.env.step, in_axes=(None, None, 0)))(s, jnp.int32(KIND_NAMES.index("7")), keys)
    hands = np.asarray(after._hand[:, 0])
    assert (hands.sum(1) == 5).all() and (np.asarray(after._pile_rand[:, 0].sum(1)) == 7).all()
    present = (hands[:, :13] > 0).mean(0)
    won = [KIND_NAMES.index(k) for k in names("AC 5D 2D 3C KC 4D 10C 6D JC 8D QC 7D")]
    assert np.abs(present[won] - 5 / 12).max() < 0.03  # each card in the hand with p = 5/12
    pairs = ((hands[:, won[0]] > 0) & (hands[:, won[1]] > 0)).mean()
    assert abs(pairs - 5 / 12 * 4 / 11) < 0.03


def one_card_at_a_time(seed: int, first_word: int, pile: np.ndarray, wanted: int, level: int) -> np.ndarray:
    """R4 with R21 from a shuffled pile, as the rules say it: one card a draw, draw ``j`` at the uniform index of
    word ``first_word + j`` among the cards left in the order of kinds, until ``wanted`` are kept or the pile is
    empty (retired cards, R21's ``_retired``, are not kept). The cards drawn, per kind."""
    from card_envs.jax.battlecards import _below, _retired, _word_at

    pile, drawn, kept, j = pile.copy(), np.zeros_like(pile), 0, 0
    while kept < wanted and pile.sum() > 0:
        word = _word_at(jnp.uint32(seed), np.uint32(first_word + j))
        index = int(_below(word, jnp.int32(pile.sum())))
        kind = int(np.searchsorted(np.cumsum(pile), index, side="right"))
        pile[kind], drawn[kind], j = pile[kind] - 1, drawn[kind] + 1, j + 1
        kept += not bool(_retired(np.int32(kind), jnp.int32(level)))
    return drawn


def test_the_draw_loop_draws_as_one_card_at_a_time():  # R4, R21: several draws a pass, the same cards
    from card_envs.jax.battlecards import _draws_until_kept

    rng = np.random.default_rng(41)
    cases = [(int(rng.integers(2**32)), int(rng.integers(2**20)), rng.integers(0, 5, 14) * (rng.random(14) < 0.6),
              int(rng.integers(0, 11)), int(rng.integers(0, 15))) for _ in range(120)]
    seed, first, pile, wanted, level = (np.array([case[i] for case in cases]) for i in range(5))
    loop = jax.jit(jax.vmap(_draws_until_kept))(jnp.asarray(seed, jnp.uint32), jnp.asarray(first, jnp.uint32),
                                                jnp.asarray(pile, jnp.int32), jnp.asarray(wanted, jnp.int32),
                                                jnp.asarray(level, jnp.int32))
    expected = np.stack([one_card_at_a_time(*case) for case in cases])
    assert (expected.sum(1) >= 8).sum() > 20  # long fills: several passes of the loop
    np.testing.assert_array_equal(np.asarray(loop), expected)


def test_marked_before_counts_the_earlier_marked_slots_of_a_slots_group():  # R23, A25-A28: chronological order
    from card_envs.jax.battlecards import _marked_before

    rng = np.random.default_rng(23)
    for size in (1, 5, 32, 33, 54):  # one side and both sides of the halves its sums are split in
        marked, group = rng.random(size) < 0.7, rng.integers(0, 13, size)
        expected = [sum(marked[j] and group[j] == group[i] for j in range(i)) for i in range(size)]
        np.testing.assert_array_equal(np.asarray(_marked_before(jnp.asarray(marked), jnp.asarray(group))), expected)
        np.testing.assert_array_equal(np.asarray(_marked_before(jnp.asarray(marked))), np.cumsum(marked) - marked)


@pytest.mark.parametrize("max_rank, levels", [(10, [3, 1, 2]), (2, [2, 1, 2])])
def test_a_fills_seats_draw_at_the_level_the_recycles_before_them_left(max_rank, levels):  # R6, R21, A34, A39
    """The full step fills every seat at once (``_fill_levels``): clockwise from the leader, each seat at the level
    after the recycles of the seats before it, and a seat recycles when it keeps nothing of its pile there."""
    from card_envs.jax.battlecards import Env

    env = Env(num_players=3, jokers=True, retire_lowest_on_flip=True, retire_max_rank=max_rank)
    g = env._game(jax.jit(env.init)(KEY))  # compiled: eagerly, seconds of dispatches
    hand, pile_rand, face_up = (np.zeros((3, 14), np.int32) for _ in range(3))
    pile, pile_n = np.zeros((3, env.deck_size), np.int8), np.array([0, 0, 2], np.int32)
    face_up[:, 12] = 1  # every seat has won an ace, so it can recycle
    pile[2, :2] = 0  # seat 2: an ordered pile of two 2s
    pile_rand[0, 1] = 2  # seat 0: a shuffled pile of two 3s
    g = g._replace(hand=jnp.asarray(hand), pile=jnp.asarray(pile), pile_n=jnp.asarray(pile_n),
                   pile_rand=jnp.asarray(pile_rand), face_up=jnp.asarray(face_up), leader=jnp.int32(1),
                   retire_level=jnp.int32(1))
    level, recycle = env._fill_levels(g, jnp.ones(3, jnp.bool_))
    # seat 1 (the leader) has no pile: it recycles at level 1 (2s retire); seat 2 then keeps neither of its 2s and
    # recycles at level 2 (3s retire, unless the cap keeps the level at 2); seat 0 keeps no 3 at level 3
    assert np.asarray(level).tolist() == levels
    assert np.asarray(recycle).tolist() == [max_rank > 2, True, True]
    # a joker is never retired (R20, A39): seat 0 with a joker among its 3s keeps it and does not recycle
    g = g._replace(pile_rand=g.pile_rand.at[0, 13].set(1))
    assert not bool(env._fill_levels(g, jnp.ones(3, jnp.bool_))[1][0])
    # a seat that does not fill neither recycles nor raises the level: seat 2 then keeps its 2s at level 1
    level, recycle = env._fill_levels(g, jnp.array([True, False, True]))
    assert np.asarray(recycle).tolist() == [False, False, False] and int(level[2]) == 1


# -- invariants of the JAX engine's own games (its shuffled piles never occur in lockstep) --------------------


def invariant_errors(env: Any, s: Any) -> list[str]:
    """Broken invariants of a batch of JAX states (numpy), like ``card_envs/battlecards/invariants.py``."""
    errors = []
    a = {name: np.asarray(getattr(s, name)) for name in env.game_fields()}
    size = a["_pile"].shape[-1]
    in_pile = np.stack([(a["_pile"] == k) & (np.arange(size) < a["_pile_n"][..., None]) for k in range(14)], -1).sum(-2)
    pile = in_pile + a["_pile_rand"]
    face_down = a["_table_down"] + a["_table_buried"]
    zones = a["_hand"] + pile + a["_face_up"] + a["_table_up"] + face_down
    total = zones.sum(1) + a["_discard"]
    if (total > a["_composition"]).any() or (total.sum(-1) != a["_composition"].sum(-1) - a["_set_aside"]).any():
        errors.append("conservation: the zones do not hold the dealt cards once each")
    counts = [value for name, value in a.items() if np.issubdtype(value.dtype, np.integer) and value.size
              and name not in ("_phase", "_round_card", "_fighting")]
    if min(value.min() for value in counts) < 0:
        errors.append("a count is negative")
    if (a["_hand"].sum(-1) > env.config.hand_size).any():
        errors.append("hand limit (A47)")
    hidden = a["_hand"] + pile + face_down
    if (a["_known"].sum(-1) + a["_unknown"] != hidden.sum(-1)).any() or (a["_known"] > hidden).any():
        errors.append("knowledge: K_p / u_p (7.5)")
    pile_hidden = pile + a["_table_down"]
    pile_known = a["_pile_known"]
    if (pile_known.sum(-1) + a["_pile_unknown"] != pile_hidden.sum(-1)).any() or (pile_known > pile_hidden).any():
        errors.append("knowledge: F_p / f_p (7.5)")
    out = ~a["_active"]
    if (zones.sum(-1)[out] != 0).any():
        errors.append("eliminated: a player who is out holds cards")
    observation = np.asarray(s.observation)
    if (observation[:, 514:528] < 0).any():
        errors.append("unaccounted (7.5) is negative")
    if np.abs(np.asarray(s.rewards).sum(-1)).max() > 1e-5:
        errors.append("rewards are not zero-sum")
    return errors


def random_play(eng: jax_support.Engine, games: int, decisions: int, seed: int) -> Any:
    """Batches of states along random legal play from fresh deals, every tenth decision."""
    states = eng.batch_init(eng.keys(seed, games))
    key = jax.random.PRNGKey(seed + 1)
    for t in range(decisions):
        key, act_key, step_key = jax.random.split(key, 3)
        actions = random_legal_actions(act_key, states.legal_action_mask)
        states = eng.batch_step(states, actions, jax.random.split(step_key, games))
        if t % 10 == 9:
            yield t, states


@pytest.mark.parametrize("index", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(6, marks=pytest.mark.slow)],
                         ids=lambda i: f"cfg{i}")  # the variants opt-in: each compiles its own engine (a minute)
def test_the_engines_own_games_keep_every_invariant(index):  # R3, R5, R6, R17, R21, 7.5, section 9
    eng = engine(**VARIANTS[index])
    recycled = False
    for t, states in random_play(eng, 32, 200, seed=index):
        env = eng.env
        errors = invariant_errors(env, states)
        assert not errors, f"decision {t}: {errors}"
        recycled |= bool((np.asarray(states._pile_rand).sum(-1) > 0).any())
    assert recycled  # the shuffled piles were exercised


def test_the_invariant_checker_catches_corruption():
    eng = engine()
    env = eng.env
    _, states = next(random_play(eng, 4, 10, seed=0))
    assert invariant_errors(env, states) == []
    assert invariant_errors(env, states.replace(_known=states._known.at[0, 0, 0].add(1))) != []
    assert invariant_errors(env, states.replace(_hand=states._hand.at[1, 0, 3].add(1))) != []
    assert invariant_errors(env, states.replace(_pile_unknown=states._pile_unknown.at[2, 1].add(-1))) != []


# -- the batch-last step: the common step and the rare one (step_batch_last) --------------------------------------


def batch_last_matches_vmapped_step(options: dict[str, Any], games: int, decisions: int, seed: int,
                                    slots: int | None = None) -> dict[str, int]:
    """Random play of ``games`` games (re-dealt when they end): at every decision ``step_batch_last`` (the common
    step vectorised across games, the rest through the full step in ``slots``) must give the same states as
    ``vmap(step)`` (the full step of each game). Returns how often each path ran."""
    from card_envs.jax.core import batch_first, batch_last

    env = make(NAME, **options)
    if slots is not None:  # few slots: the rare step's loop runs several rounds
        env._rare_slots = lambda batch: slots
    # which games the common step covers, read off the batch-last step's own trace (_step calls _common_step in
    # it): one program, not the common step traced and compiled again on its own
    common_step, seen = env._common_step, {}

    def watched_common_step(g: Any, action: jax.Array, seed: jax.Array) -> Any:
        common, seen["covered"] = common_step(g, action, seed)
        return common, seen["covered"]

    env._common_step = watched_common_step
    vmapped, init = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.init))
    # the layouts' conversions jitted too: eagerly each leaf's moveaxis (and each re-deal's where) compiles on its own
    last_step = jax.jit(lambda s, a, k: (batch_first(env.step_batch_last(batch_last(s), a, k)), seen["covered"]))
    redeal = jax.jit(lambda done, fresh, old: jax.tree.map(
        lambda new, was: jnp.where(done.reshape((-1,) + (1,) * (was.ndim - 1)), new, was), fresh, old))
    states = init(jax.random.split(jax.random.PRNGKey(seed), games))
    key = jax.random.PRNGKey(seed + 1)
    counts = {"common": 0, "rare": 0, "most_rare": 0, "ends": 0, "war_starts": 0, "commitments_ended": 0,
              "refused": 0}
    for t in range(decisions):
        key, act_key, step_key, deal_key = jax.random.split(key, 4)
        actions = random_legal_actions(act_key, states.legal_action_mask)
        running = ~np.asarray(states.terminated | states.truncated)
        if t % 20 == 19:  # an illegal action in one game (Pgx: it ends the episode): out of the mask, out of range
            game, refusals = (t // 20) % games, (t // 20) % 3
            outside = np.flatnonzero(~np.asarray(states.legal_action_mask[game]))
            action = outside[0] if refusals == 0 and outside.size else (-1, env.num_actions)[refusals % 2]
            actions = actions.at[game].set(action)
            counts["refused"] += int(running[game])
        keys = jax.random.split(step_key, games)
        got, covered = last_step(states, actions, keys)
        common = np.asarray(covered) & running
        counts["common"] += int(common.sum())
        counts["rare"] += int((~common & running).sum())
        counts["most_rare"] = max(counts["most_rare"], int((~common & running).sum()))
        expected = vmapped(states, actions, keys)
        # the common step's wars (with retirement): a level started, or a BURY decision's commitment ended
        started = np.asarray(expected._war_level) > np.asarray(states._war_level)
        ended = (np.asarray(states._phase) == BURY) & (np.asarray(states._bury_left) == 1)
        counts["war_starts"] += int((common & started).sum())
        counts["commitments_ended"] += int((common & ended).sum())
        for (path, want), have in zip(jax.tree_util.tree_leaves_with_path(expected), jax.tree.leaves(got),
                                      strict=True):
            assert np.array_equal(want, have), f"decision {t}: {jax.tree_util.keystr(path)} differs"
        done = np.asarray(expected.terminated | expected.truncated)
        counts["ends"] += int(done.sum())
        states = redeal(done, init(jax.random.split(deal_key, games)), expected)
    return counts


#: cfg4 (six players, jokers, retirement, no mid-game shuffle: the retiring refill and the ordered collection in the
#: common step) in the default run; the default config and cfg3 (five players, cease-fire, wars with one face-down
#: card) opt-in (run time)
@pytest.mark.parametrize("index", [pytest.param(0, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow), 4],
                         ids=lambda i: f"cfg{i}")
def test_step_batch_last_is_the_full_step_at_every_decision(index):  # R7-R19 through both paths
    counts = batch_last_matches_vmapped_step(VARIANTS[index], games=16, decisions=120, seed=index, slots=3)
    assert counts["common"] > 0 and counts["most_rare"] > 3  # both paths ran, the rare loop several rounds
    assert counts["refused"] > 0  # and illegal actions (Pgx: the episode ends), through both paths


#: opt-in (run time: cfg6 took 31-45 s of the default run, most of it compiling; cfg4's ordered war commitments also
#: run at every decision of test_step_batch_last_is_the_full_step_at_every_decision[cfg4], in the default run)
@pytest.mark.slow
@pytest.mark.parametrize("index", [4, 6], ids=lambda i: f"cfg{i}")
def test_the_common_step_starts_wars_and_ends_commitments_as_the_full_step(index):  # R9-R12, R21, R23
    """With retirement the common step makes a war level's commitments, or those after a BURY decision, up to the
    next decision, where every seat commits from its hand and pile (cfg4: ordered piles and the chronological table;
    cfg6: shuffled piles after recycles, the cards drawn with the words of the full step's passes, and the R11d
    recycle of a seat's face-up pile after its BURY decisions; and a round-end refill that recycles a small face-up
    pile, R16.2, R5)."""
    counts = batch_last_matches_vmapped_step(VARIANTS[index], games=32, decisions=80, seed=20 + index, slots=4)
    assert counts["war_starts"] > 0 and counts["commitments_ended"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(VARIANTS)), ids=lambda i: f"cfg{i}")
def test_step_batch_last_is_the_full_step_through_whole_games(index):
    options = dict(VARIANTS[index], max_rounds=60) if index == 0 else VARIANTS[index]
    counts = batch_last_matches_vmapped_step(options, games=32, decisions=600, seed=10 + index, slots=4)
    assert counts["common"] > 0 and counts["rare"] > 0 and counts["ends"] > 0
