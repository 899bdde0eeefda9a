"""Bloodlines in JAX (``card_envs/jax/bloodlines.py``) against the Python engine and the spec.

- lockstep (random Python games replayed through the batched JAX step, every decision compared) is the
  generic ``tests/test_jax_lockstep.py``, which covers every engine and variant config;
- the JAX deal (``init``): S2-S7 and Sc-17's properties, and the same position as the Python engine
  dealing the same piles;
- the spec's worked scenarios (section 10) played through the JAX engine from ``from_state`` of the
  stacked deal, with expected values taken from the spec's text.
"""

from __future__ import annotations

import functools
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from card_envs.bloodlines.rules import ACTION_NAMES, NUMBER_CARDS, Bloodlines
from card_envs.cards import card_code
from card_envs.jax import make
from card_envs.jax.bloodlines import VALUE, card_value
from card_envs.jax.core import batch_first, batch_last, random_legal_actions, reset_finished

NAME = "bloodlines_v0"
ID = {name: index for index, name in enumerate(ACTION_NAMES)}
CODES = [card_code(c) for c in NUMBER_CARDS]  # by k: 2C .. 10S
SUITS = "CDHS"
VARIANTS = Bloodlines.variant_configs()


# -- arithmetic that replaces the Python engine's table --------------------------------------------------


def test_card_value_is_the_rules_value_table():  # section 2, A10
    cards, bloodlines = np.meshgrid(np.arange(36), np.arange(4))
    got = jax.jit(card_value)(jnp.asarray(cards), jnp.asarray(bloodlines))
    np.testing.assert_array_equal(np.asarray(got), VALUE)
    assert VALUE[SUITS.index("S"), CODES.index("5S")] == 6 and VALUE[SUITS.index("H"), CODES.index("10S")] == 9


# -- the JAX engine, read back ------------------------------------------------------------------------


class Table:
    """One JAX engine under fixed options, its jitted functions, and readers of a (single) state."""

    def __init__(self, **options):
        self.env = make(NAME, **options)
        self.game = self.env.game
        self.step = jax.jit(self.env.step)
        self.observe = jax.jit(self.env.observe)

    def deal(self, p0=(), p1=(), bloodlines="SH", starter=0):
        """``from_state`` of the Python deal of these stacked piles under a seed whose random draws (S7)
        give these bloodlines and this starting player (the options leave both random)."""
        for seed in range(10_000):
            state = self.game.new_state(np.random.default_rng(seed), {"decks": [list(p0), list(p1)]})
            if state.bloodlines == [SUITS.index(s) for s in bloodlines] and state.current_player == starter:
                return self.env.from_state(state)
        raise AssertionError("no seed deals these bloodlines")

    def play(self, state, *names):
        for name in names:
            assert state.legal_action_mask[ID[name]], f"{name} is not legal: {legal_names(state)}"
            state = self.step(state, jnp.int32(ID[name]), jax.random.PRNGKey(0))
        return state


@functools.cache
def table(**options) -> Table:
    return Table(**options)


def legal(state) -> set[int]:
    return set(np.flatnonzero(np.asarray(state.legal_action_mask)).tolist())


def legal_names(state) -> list[str]:
    return [ACTION_NAMES[a] for a in sorted(legal(state))]


def zone_cards(state, player, *zones) -> set[str]:
    row = np.asarray(state._zone[player])
    return {CODES[k] for k in range(36) if row[k] in zones}


def hand(state, player) -> set[str]:
    return zone_cards(state, player, 1)


def discard(state, player) -> set[str]:
    return zone_cards(state, player, 15)


def pile_size(state, player) -> int:
    return 36 - int(state._top[player])


def pile_order(state, player) -> list[str]:
    """The pile, top first (the cards with ``_order >= _top``, by ``_order``)."""
    order, top = np.asarray(state._order[player]), int(state._top[player])
    return [CODES[k] for k in np.argsort(order) if order[k] >= top]


def royals(state, player) -> list[int]:
    return np.flatnonzero(np.asarray(state._alive[player])).tolist()


def units(state, player) -> list[set[str]]:
    return [zone_cards(state, player, 5 + u) for u in range(int(state._units[player]))]


def rewards(state) -> list[float]:
    return np.asarray(state.rewards).tolist()


# -- the deal (S1-S7) -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dealt():
    """64 JAX deals of the default options."""
    env = table().env
    return env, jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(3), 64))


def test_jax_deal_properties_sc17(dealt):  # Sc-17, S2, S3, S5, S6, R11
    env, states = dealt
    for i in range(64):
        state = jax.tree.map(lambda leaf, i=i: leaf[i], states)
        bloodlines = np.asarray(state._bloodline).tolist()
        assert bloodlines[0] != bloodlines[1]
        for p in (0, 1):
            zones = np.asarray(state._zone[p])
            assert sorted(zones.tolist()) == [0] * 32 + [1] * 4  # hand + pile = the 36 number cards
            assert royals(state, p) == [0, 1, 2] and pile_size(state, p) == 32
            assert int(state._supply[p]) == (2 if bloodlines[p] == SUITS.index("D") else 0)
            assert int(state._jokers[p]) == 0
        starter = int(state._active)
        assert starter in (0, 1) and int(state.current_player) == starter and int(state._turn) == 1
        # the first decision is the starter's, in STEP1, or in MAIN once R11 skipped a forced STEP1
        usable = [a for a in legal(state) if a < 36]  # cycle, power, pool
        assert int(state._phase) == (0 if usable else 1)
        assert legal(state)


def test_jax_deal_is_the_python_deal_of_the_same_piles(dealt):  # S4, S5, S6, R11, section 7
    env, states = dealt
    for i in range(16):
        state = jax.tree.map(lambda leaf, i=i: leaf[i], states)
        bloodlines = tuple(SUITS[b] for b in np.asarray(state._bloodline))
        python = Bloodlines(bloodlines=bloodlines, starting_player=int(state._active)).new_state(
            np.random.default_rng(0), {"decks": [hand_then_pile(state, 0), hand_then_pile(state, 1)]})
        assert int(state.current_player) == python.current_player
        assert legal(state) == set(python.legal_actions())
        for p in (0, 1):  # options that fix bloodlines and starter do not enter the observation
            np.testing.assert_array_equal(np.asarray(env.observe(state, p)), python.game.encode(python.view(p)))


def hand_then_pile(state, player) -> list[str]:
    """The dealt order: the hand (``_order`` -1, any order: a hand is a set), then the pile, top first."""
    order = np.asarray(state._order[player])
    return [CODES[k] for k in np.argsort(order, kind="stable")]


def test_jax_deal_covers_every_bloodline_pair_and_both_starters():  # S2, S6, A4
    env = table().env
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(11), 1200))
    pairs = Counter(map(tuple, np.asarray(states._bloodline).tolist()))
    assert len(pairs) == 12 and min(pairs.values()) > 50  # 100 expected each
    starters = np.asarray(states._active)
    assert 500 < starters.sum() < 700
    top = Counter(k for row in np.asarray(states._order) for k in np.flatnonzero(row[0] == 4))
    assert len(top) == 36 and sum(top.values()) == 1200  # every card can be on top of player_0's pile


def test_same_key_same_deal():  # S7: seeds reproduce
    env = table().env
    init = jax.jit(env.init)
    one, two = init(jax.random.PRNGKey(5)), init(jax.random.PRNGKey(5))
    assert jax.tree.all(jax.tree.map(lambda a, b: bool(jnp.array_equal(a, b)), one, two))


# -- section 10: worked scenarios, through the JAX engine ---------------------------------------------


def sc1(t: Table):
    return t.deal(["5S", "9H", "3C", "7D", "8S"], ["4H", "10S", "6C", "2D", "9H"], "SH")


def test_sc1_setup_values_and_first_turn():  # Sc-1, S5, R3, R4, R6, A45
    t = table()
    state = sc1(t)
    assert hand(state, 0) == {"5S", "9H", "3C", "7D"} and pile_size(state, 0) == 32
    assert pile_order(state, 0)[:15] == ["8S", "2C", "4C", "5C", "6C", "7C", "8C", "9C", "10C",
                                         "2D", "3D", "4D", "5D", "6D", "8D"]
    assert hand(state, 1) == {"4H", "10S", "6C", "2D"} and pile_order(state, 1)[0] == "9H"
    assert legal(state) == {1, 14, 211}
    state = t.play(state, "end step 1")
    assert len(hand(state, 0)) == 4
    assert legal(state) == {1, 14, 93, 94, 95, 102}
    state = t.play(state, "new unit 5S")
    assert units(state, 0) == [{"5S"}] and int(state._attack[0, 0]) == 6
    assert hand(state, 0) == {"9H", "3C", "7D"} and int(state._turn) == 2 and int(state.current_player) == 1
    assert legal(state) == {4, 9, 211}


def test_sc2_hearts_a_legal_attack_and_its_resolution():  # Sc-2, R2, R9a, R9d, R10, A26, A29
    t = table()
    state = t.play(sc1(t), "end step 1", "new unit 5S", "end step 1", "heart 4H on J")
    assert int(state._defense[1, 0]) == 5 and hand(state, 1) == {"10S", "6C", "2D"}
    state = t.play(state, "end step 1")
    assert hand(state, 0) == {"9H", "3C", "7D", "8S"} and pile_size(state, 0) == 31
    assert legal(state) == {1, 14, 93, 94, 95, 105, 156, 180, 181, 182}
    state = t.play(state, "unit 0 attacks J")
    assert discard(state, 0) == {"5S"} and units(state, 0) == []
    assert discard(state, 1) == {"4H"} and royals(state, 1) == [1, 2]  # JH discarded with its heart
    assert int(state.current_player) == 1 and legal(state) == {4, 9, 211}
    assert rewards(state) == [0.0, 0.0]
    state = t.play(state, "end step 1")
    assert hand(state, 1) == {"10S", "6C", "2D", "9H"}


def test_sc2_shaping_and_sc15_truncation_at_the_turn_limit():  # Sc-2 step 4, Sc-15, R16, section 9
    t = table(max_turns=3, shaping_weight=0.1)
    state = t.play(sc1(t), "end step 1", "new unit 5S", "end step 1", "heart 4H on J", "end step 1")
    state = t.play(state, "unit 0 attacks J")  # T3 ends at the limit: royals 3 : 2
    assert bool(state.truncated) and not bool(state.terminated)
    assert rewards(state) == pytest.approx([1.1, -1.1])  # +0.1 for the kill, +1 for the truncation


def test_sc15_truncation_with_unfinished_result_draw_and_equal_royals():  # Sc-15, R16
    t = table(max_turns=3, unfinished_result="draw")
    state = t.play(sc1(t), "end step 1", "new unit 5S", "end step 1", "heart 4H on J", "end step 1")
    attacked = t.play(state, "unit 0 attacks J")
    assert bool(attacked.truncated) and rewards(attacked) == [0.0, 0.0]
    t = table(max_turns=3, shaping_weight=0.1)  # no kill, so shaping pays nothing
    hearted = t.play(sc1(t), "end step 1", "new unit 5S", "end step 1", "heart 4H on J", "end step 1",
                     "heart 9H on J")
    assert bool(hearted.truncated) and rewards(hearted) == [0.0, 0.0]  # royals 3 : 3


def test_sc3_strictly_greater_and_growing_a_unit():  # Sc-3, R9c, R9d, A26
    t = table()
    state = t.deal(["6S", "2S", "3D", "4D", "7D"], ["5H", "2H", "5D", "6D", "3H"], "CH")
    assert legal(state) == {10, 11, 211}
    state = t.play(state, "end step 1", "new unit 6S", "end step 1", "heart 5H on K")
    assert int(state._attack[0, 0]) == 5 and int(state._defense[1, 2]) == 6
    state = t.play(state, "end step 1")
    assert {a for a in legal(state) if 180 <= a <= 206} == {180, 181}  # 182: 5 <= 6
    state = t.play(state, "add 2S to unit 0")
    assert int(state._attack[0, 0]) == 6
    state = t.play(state, "end step 1", "heart 2H on J", "end step 1")
    assert hand(state, 0) == {"3D", "4D", "7D", "2C"}
    assert {a for a in legal(state) if 180 <= a <= 206} == {180, 181}  # 6 = 6 is not greater
    assert {0, 18} <= legal(state)


def test_sc4_cycling_and_the_mandatory_main_action():  # Sc-4, R6, R7a, A21, section 7
    t = table()
    state = t.deal(["2C", "3C", "4D", "5D", "6H", "7C"], [], "HS")
    assert legal(state) == {0, 1, 11, 12, 211}
    state = t.play(state, "end step 1")
    assert legal(state) == {0, 1, 11, 12, 212}
    state = t.play(state, "cycle 2C")
    assert hand(state, 0) == {"3C", "4D", "5D", "6H"} and legal(state) == {1, 11, 12, 84, 85, 86}
    state = t.play(state, "cycle 3C")
    assert legal(state) == {5, 11, 12, 84, 85, 86}
    state = t.play(state, "heart 6H on Q")
    assert int(state._defense[0, 1]) == 7 and hand(state, 0) == {"4D", "5D", "7C"} and pile_size(state, 0) == 30
    seen = np.asarray(t.observe(state, 1))  # player_1's observation of player_0's cards
    assert {CODES[k] for k in range(36) if seen[350 + k]} == {"2C", "3C"}  # the discard pile
    assert {CODES[k] for k in range(36) if seen[448 + k]} == set(CODES) - {"2C", "3C", "6H"}  # U(O), 33
    assert seen[77 + 9 * 1 + 4] == 1.0 and seen[391] == pytest.approx(3 / 4)  # 6H under Q; hand size 3


def test_sc4_allow_pass_makes_pass_legal_in_every_main_state():  # Sc-4 variant, R6
    t = table(allow_pass=True)
    state = t.play(t.deal(["2C", "3C", "4D", "5D", "6H", "7C"], [], "HS"), "end step 1")
    assert ID["pass"] in legal(state)
    state = t.play(state, "cycle 2C")
    assert ID["pass"] in legal(state) and {84, 85, 86} <= legal(state)


def test_sc5_club_power_owes_discards():  # Sc-5, R7b, R8, R11, A15, A48
    t = table()
    state = t.deal(["4C", "9H", "2D", "3S", "5S", "6S", "7S", "8S", "10H"], [], "CS")
    assert legal(state) == {2, 9, 20, 211}
    state = t.play(state, "power 4C")
    assert hand(state, 0) == {"9H", "2D", "3S", "5S", "6S", "7S", "8S", "10H"}
    assert int(state._owed) == 4 and int(state._phase) == 2
    assert legal(state) == {61, 45, 64, 66, 67, 68, 69, 62}
    state = t.play(state, "discard 2D", "discard 3S", "discard 5S", "discard 9H")
    # back in STEP1 only end step 1 is legal: taken automatically, no draw at 4 cards
    assert hand(state, 0) == {"6S", "7S", "8S", "10H"} and pile_size(state, 0) == 27
    assert int(state._phase) == 1 and legal(state) == {103, 104, 105, 96, 97, 98}
    state = t.play(state, "new unit 8S")
    assert int(state._attack[0, 0]) == 7 and discard(state, 0) == {"4C", "2D", "3S", "5S", "9H"}


def test_sc6_exhausting_the_pile_with_the_club_power():  # Sc-6, R7b, R12, A14, A36
    t = table()
    state = t.deal(["10C", "9C", "8C", "7C"], [], "CH")
    state = t.play(state, "power 10C")
    assert len(hand(state, 0)) == 14 and int(state._owed) == 10
    state = t.play(state, *[f"discard {c}" for c in "2C 3C 4C 5C 2D 3D 4D 5D 6D 7D".split()])
    assert hand(state, 0) == {"9C", "8C", "7C", "6C"} and pile_size(state, 0) == 21
    state = t.play(state, "power 9C", *[f"discard {c}" for c in "8D 9D 10D 2H 3H 4H 5H 6H 7H".split()])
    assert hand(state, 0) == {"8C", "7C", "6C", "8H"} and pile_size(state, 0) == 11
    state = t.play(state, "power 8C", *[f"discard {c}" for c in "8H 9H 2S 3S 4S 5S 6S 7S".split()])
    assert hand(state, 0) == {"7C", "6C", "10H", "8S"} and pile_size(state, 0) == 2
    state = t.play(state, "power 7C")
    assert hand(state, 0) == {"6C", "10H", "8S", "9S", "10S"} and int(state._owed) == 1
    state = t.play(state, "discard 8S")  # then cycle/power are illegal: end step 1 is automatic
    assert pile_size(state, 0) == 0 and int(state._phase) == 1
    assert legal(state) == {96, 97, 98, 106, 107}
    state = t.play(state, "new unit 10S")
    assert int(state._attack[0, 0]) == 9 and len(discard(state, 0)) == 32


def sc8(t: Table):
    return t.deal(["10D", "9D", "4D", "2S", "2D"], ["10H", "9H", "2C", "3C"], "DH")


def test_sc8_the_pool_threshold_and_buying_a_joker():  # Sc-8, R4, R7c, R9f, A17, A18, A30, A31
    t = table()
    state = sc8(t)
    assert legal(state) == {17, 16, 11, 35, 34, 29, 211}
    state = t.play(state, "pool 10D", "pool 9D")
    assert int(state._pool_value[0]) == 21 and hand(state, 0) == {"4D", "2S"}
    state = t.play(state, "end step 1")
    assert hand(state, 0) == {"4D", "2S", "2D"} and legal(state) == {11, 9, 29, 27, 99}
    state = t.play(state, "pool 2D")
    assert int(state._pool_value[0]) == 24 and ID["buy joker"] not in legal(state)
    state = t.play(state, "pool 4D")
    assert ID["buy joker"] in legal(state)
    state = t.play(state, "buy joker")
    assert discard(state, 0) == {"10D", "9D", "2D", "4D"} and int(state._pool_value[0]) == 0
    assert int(state._jokers[0]) == 1 and int(state._supply[0]) == 1 and hand(state, 0) == {"2S"}
    assert int(state.current_player) == 1 and int(state._turn) == 2


def test_sc9_a_joker_attack_ignores_defense():  # Sc-9, R9e, R10, A29, A30
    t = table()
    state = t.play(sc8(t), "pool 10D", "pool 9D", "end step 1", "pool 2D", "pool 4D", "buy joker")
    assert legal(state) == {0, 1, 211}
    state = t.play(state, "end step 1", "heart 10H on K")
    # T3: p0's STEP1 is automatic (hand {2S}), the draw gives 2C
    assert hand(state, 0) == {"2S", "2C"} and legal(state) == {0, 99, 207, 208, 209}
    state = t.play(state, "joker attacks K")
    assert int(state._jokers_discarded[0]) == 1 and int(state._jokers[0]) == 0 and int(state._supply[0]) == 1
    assert discard(state, 1) == {"10H"} and royals(state, 1) == [0, 1]
    state = t.play(state, "end step 1")
    assert hand(state, 1) == {"9H", "2C", "3C", "4C"}


def sc10(t: Table):
    state = t.deal(["10D", "9D", "5D", "5H", "2C", "3C"], ["10S", "2C", "3C", "4C", "5C"], "DS")
    state = t.play(state, "pool 10D", "pool 9D", "pool 5D")  # pool 27; end step 1 automatic, draws 2C
    assert int(state._pool_value[0]) == 27 and hand(state, 0) == {"5H", "2C"}
    assert legal(state) == {0, 81, 82, 83, 210}
    state = t.play(state, "buy joker", "end step 1", "new unit 10S", "end step 1")
    assert {207, 208, 209} <= legal(state)
    state = t.play(state, "heart 5H on J")
    assert int(state._defense[0, 0]) == 4
    state = t.play(state, "end step 1", "unit 0 attacks J")
    assert int(state._phase) == 3 and int(state.current_player) == 0 and legal(state) == {213, 214}
    assert discard(state, 1) == {"10S"} and "5H" in discard(state, 0)
    return t, state


def test_sc10_branch_a_decoy_saves_the_royal():  # Sc-10, R10.3, A33, A52
    t, state = sc10(table())
    obs = np.asarray(t.observe(state, 0))
    assert obs[398:401].tolist() == [1.0, 0.0, 0.0] and obs[484] == 1.0 and obs[396] == 0.0  # decides, not active
    state = t.play(state, "decoy")
    assert royals(state, 0) == [0, 1, 2] and int(state._defense[0, 0]) == 0
    assert int(state._jokers[0]) == 0 and int(state._jokers_discarded[0]) == 1
    assert discard(state, 0) == {"10D", "9D", "5D", "5H"} and discard(state, 1) == {"10S"}
    assert int(state._turn) == 5 and int(state._active) == 0 and int(state.current_player) == 0


def test_sc10_branch_b_no_decoy_loses_the_royal():  # Sc-10, R10.4
    t, state = sc10(table())
    state = t.play(state, "no decoy")
    assert royals(state, 0) == [1, 2] and int(state._jokers[0]) == 1
    assert int(state._turn) == 5 and int(state.current_player) == 0
    assert {207, 208, 209} <= legal(t.play(state, "end step 1"))  # T5: the joker can attack


def test_sc13_immediate_stalemate_and_its_variant():  # Sc-13, R15, R16, A40
    t = table()
    state = t.deal(["2C", "3C", "4D", "5D"], ["2C", "3C", "4D", "5D"], "HS")
    assert legal(state) == {0, 1, 11, 12, 211}
    state = t.play(state, "end step 1")
    assert legal(state) == {0, 1, 11, 12, 212}
    idle = t.play(state, "pass", "end step 1", "pass")
    assert bool(idle.terminated) and not bool(idle.truncated) and rewards(idle) == [0.0, 0.0]
    cycled = t.play(state, "pass", "end step 1", "cycle 2C")
    assert hand(cycled, 1) == {"3C", "4D", "5D", "4C"}
    cycled = t.play(cycled, "pass")
    assert not bool(cycled.terminated) and int(cycled._idle) == 0 and int(cycled._turn) == 3


# -- the batched rules (custom_vmap) against one state at a time ------------------------------------------


@pytest.mark.slow  # opt-in (run time); the default run compares step_batch_last with vmap(step) in test_jax_api
def test_batched_step_and_observation_equal_one_state_at_a_time():  # R11, section 7
    """``vmap(step)`` and ``step_batch_last`` (R11's loop over the states gathered into slots, here one slot
    so that several rounds run, and the observation's flattened-batch gather) against ``lax.map(step)``,
    which steps one state at a time through the plain loop, on random play with re-deals: every array of
    every state equal."""
    env = make(NAME)
    env._forced_slots = lambda batch: 1  # every state left in R11's loop after its first turn: its own round
    batch = 32
    batched = jax.jit(jax.vmap(env.step))
    batched_last = jax.jit(lambda states, actions: batch_first(env.step_batch_last(batch_last(states), actions)))
    one_by_one = jax.jit(lambda states, actions: jax.lax.map(lambda pair: env.step(*pair), (states, actions)))
    observe = jax.jit(jax.vmap(env.observe, in_axes=(0, None)))
    observe_one_by_one = jax.jit(lambda states, p: jax.lax.map(lambda s: env.observe(s, p), states))
    redeal = jax.jit(functools.partial(reset_finished, env))
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(7), batch))
    key = jax.random.PRNGKey(8)
    looped = 0  # steps in which several states went on to R11's loop (more than one round of slots)

    @jax.jit
    @jax.vmap
    def left_in_loop(state, action):
        state = env._apply(state.replace(rewards=jnp.zeros(2, jnp.float32)), action)
        state = env._forced_turn(state, env._forced(state)[0])
        return (env._forced(state)[0] | env._forced(state)[1]) & ~(state.terminated | state.truncated)

    for step in range(400):  # at least 40 steps, and on until the multi-round path has run twice
        if step >= 40 and looped >= 2:
            break
        key, act_key, deal_key = jax.random.split(key, 3)
        actions = random_legal_actions(act_key, states.legal_action_mask)
        looped += int(left_in_loop(states, actions).sum()) > 1
        stepped = batched(states, actions)
        expected = one_by_one(states, actions)
        for name in stepped.__dataclass_fields__:
            np.testing.assert_array_equal(np.asarray(getattr(stepped, name)), np.asarray(getattr(expected, name)),
                                          err_msg=name)
        assert all(jax.tree.leaves(jax.tree.map(np.array_equal, batched_last(states, actions), expected)))
        for seat in (0, 1):
            np.testing.assert_array_equal(np.asarray(observe(stepped, seat)),
                                          np.asarray(observe_one_by_one(stepped, seat)))
        states = redeal(stepped, deal_key)
    assert looped >= 2  # the rounds of R11's batched loop ran
