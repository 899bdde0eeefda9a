"""Revolutionary War's JAX engine against the spec (``specs/revolutionary_war.md``), beyond the generic lockstep.

* The worked scenarios of spec section 10, replayed through the JAX engine from the stacked decks (the Python
  engine deals them; ``from_state`` converts the deal, and every later step is the JAX engine's own). Expected
  values are the spec's text (decks, hands, legal sets, scores), transcribed in ``test_revolutionary_war_rules``;
  the JAX engine keeps ranks only (suits never matter after the deal), so hands are compared as rank multisets.
* The deal (R2, R4, A2, A3) of the JAX ``init`` and of later match games, card conservation (R18) and the match
  transitions (R23, A29, A31, A46) over batched random play.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import card_envs
import card_envs.jax.revolutionary_war as rw
from card_envs.cards import card_id
from card_envs.jax.core import random_legal_actions
from tests.jax_support import engine
from tests.test_revolutionary_war_rules import (
    DECK_A,
    DECK_B,
    DECK_C,
    DECK_D,
    DECK_E,
    RANKS,
    SPEC_ACTION_NAMES,
    is_black,
    names,
    rank_of,
    stacked,
)

NAME = "revolutionary_war_v0"
P0, P1 = 0, 1


# -- helpers: the JAX state in the spec's words -----------------------------------------------------------------


def jax_deal(deck=None, *, decks=None, **config):
    """The JAX state of the deal of ``deck`` (or of ``decks``, one per match game) and its engine."""
    e = engine(NAME, **config)
    options = {"decks": decks} if decks is not None else {"deck": deck}
    python_state = card_envs.make_game(NAME, **config).new_state(np.random.default_rng(0), options)
    return e, e.env.from_state(python_state)


def legal(state) -> list[str]:
    return [SPEC_ACTION_NAMES[a] for a in np.flatnonzero(np.asarray(state.legal_action_mask))]


def act(e, state, player: int, action: str):
    assert int(state.current_player) == player, f"expected player_{player}, not player_{int(state.current_player)}"
    assert action in legal(state), f"{action!r} not legal: {legal(state)}"
    return e.step(state, jnp.int32(SPEC_ACTION_NAMES.index(action)), jax.random.PRNGKey(0))


def play_line(e, state, line):
    for player, action in line:
        state = act(e, state, player, action)
    return state


def ranks(codes) -> Counter:
    """The rank multiset of card codes (A=1 .. K=13)."""
    return Counter(rank_of(code) for code in codes)


def hand(state, seat: int) -> Counter:
    counts = np.asarray(state._hands)[seat]
    return Counter({r + 1: int(n) for r, n in enumerate(counts) if n})


def stack(state) -> list[int]:
    return [int(r) + 1 for r in np.asarray(state._trump_stack) if r >= 0]


def deck_size(state) -> int:
    return int((np.asarray(state._deck) >= 0).sum())


def scores(state) -> tuple[int, int]:
    piles = np.asarray(state._piles).sum(axis=1)
    return int(piles[0]), int(piles[1])


def values(text: str) -> list[int]:
    """``"8C 3H 2C"`` -> rank values ``[8, 3, 2]``."""
    return [rank_of(code) for code in text.split()]


# -- section 10 scenarios -----------------------------------------------------------------------------------------


def test_S1_deal_layout_black_majority_dealer_leads():  # R2, R4, A2, A3, A4
    e, state = jax_deal(DECK_A)
    assert hand(state, P1) == ranks("2H 5D 9C JS KH".split())
    assert hand(state, P0) == ranks("AC 4S 7H 10D QC".split())
    assert stack(state) == values("6S 8C 3H") and deck_size(state) == 39 and scores(state) == (0, 0)
    assert int(state.current_player) == P0
    assert legal(state) == names("play A, play 4, play 7, play 10, play Q, concede")


@pytest.mark.parametrize("weight", [0.0, 0.5])
def test_S2_multi_exchange_round_capture_and_replenish_to_the_bottom(weight):  # R6-R10, A6, A9, A12, section 9
    e, state = jax_deal(DECK_A, shaping_weight=weight)
    state = act(e, state, P0, "play 10")
    assert hand(state, P0) == ranks("AC 4S 7H QC 5C".split()) and deck_size(state) == 38
    assert legal(state) == names("play 2, play 5, play J, play K, concede")
    state = act(e, state, P1, "play J")
    assert hand(state, P1) == ranks("2H 5D 9C KH 8D".split()) and deck_size(state) == 37
    assert legal(state) == names("play A, play 4, play 5, play Q, concede")
    state = act(e, state, P0, "play Q")
    assert legal(state) == names("play 2, play 5, play K, concede")
    state = act(e, state, P1, "play 2")
    assert legal(state) == names("play 4, play 5, play 6, concede")
    state = act(e, state, P0, "play 6")
    assert hand(state, P0) == ranks("AC 4S 7H 5C 3C".split()) and deck_size(state) == 34
    assert legal(state) == names("concede")
    state = act(e, state, P1, "concede")
    assert scores(state) == (6, 0)
    assert stack(state) == values("8C 3H 2C") and deck_size(state) == 33
    assert int(state.current_player) == P0
    assert legal(state) == names("play A, play 3, play 4, play 5, play 7, concede")
    assert np.allclose(state.rewards, [6 * weight / 52, -6 * weight / 52])  # paid in the conceding step


def test_S3_to_S5_red_majority_equal_rank_lowest_suit_wrap_around():  # R4, R7, R9, A7, A10, A14, A17, A34
    e, state = jax_deal(DECK_B)
    assert hand(state, P1) == ranks("3C 3D 8H QH AS".split()) and stack(state) == values("2D KS 9H")
    assert int(state.current_player) == P1  # S3: red majority, the non-dealer leads
    assert legal(state) == names("play A, play 3, play 8, play Q, concede")
    state = act(e, state, P1, "concede")
    assert scores(state) == (1, 0) and stack(state) == values("KS 9H 4H") and deck_size(state) == 38
    assert legal(state) == names("play 4, play 8, play J, play K, concede")  # S4
    state = act(e, state, P0, "play 8")
    assert hand(state, P0) == ranks("4C 8S JC KD 2S".split())
    assert legal(state) == names("play 8, play Q, concede")
    state = act(e, state, P1, "play 8")
    assert legal(state) == names("play 8, play J, play K, concede")
    state = act(e, state, P0, "concede")
    assert scores(state) == (1, 3) and stack(state) == values("9H 4H AC") and deck_size(state) == 35
    assert legal(state) == names("play A, play 3, play 10, play Q, concede")  # S5
    state = act(e, state, P1, "play 3")
    assert hand(state, P1) == ranks("3D QH AS 10C 2C".split())
    assert legal(state) == names("play 4, play 8, concede")


def test_S6_author_example_trump_3():  # R0, A12, A13
    e, state = jax_deal(DECK_C)
    state = act(e, state, P0, "play Q")
    assert legal(state) == names("play A, play 2, play 3, play K, concede")
    state = act(e, state, P1, "play 3")
    assert legal(state) == names("play 3, concede")
    state = act(e, state, P0, "play 3")
    assert legal(state) == names("concede")
    state = act(e, state, P1, "concede")
    assert scores(state) == (4, 0) and stack(state) == values("7C 10H 4C") and deck_size(state) == 35
    assert legal(state) == names("play A, play 4, play 5, play 9, concede")


def test_S7_first_dealer_1_trump_ace():  # R4, A1, A2
    e, state = jax_deal(DECK_D, first_dealer=1)
    assert hand(state, P0) == ranks("AD KC QC 2D 7H".split()) and int(state.current_player) == P1
    state = play_line(e, state, [(P1, "play K"), (P0, "play A"), (P1, "play A")])
    assert legal(state) == names("concede")
    state = act(e, state, P0, "concede")
    assert scores(state) == (0, 4) and stack(state) == values("5C 9S AC") and deck_size(state) == 35
    assert legal(state) == names("play 2, play 3, play 6, play 8, play 10, concede")


def concede_39_times(e, state):
    for k in range(1, 40):  # S8: round k is led by p0 if k is odd
        state = act(e, state, P0 if k % 2 else P1, "concede")
    return state


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
def test_S8_S10_stack_runs_out_leftover_hands_scored_tie_break(reward_mode):  # R11, R13, R16, A22, A23, A27
    e, state = jax_deal(DECK_E, reward_mode=reward_mode)
    state = concede_39_times(e, state)
    assert deck_size(state) == 0 and stack(state) == values("KS KH KD") and scores(state) == (19, 20)
    assert not bool(state.terminated) and int(state.current_player) == P1
    assert legal(state) == names("play 2, play 4, play 6, play 8, play 10, concede")
    state = play_line(e, state, [(P1, "concede"), (P0, "concede"), (P1, "concede")])
    assert bool(state.terminated) and int(state._step_count) == 42
    assert scores(state) == (26, 26) and hand(state, P0) == Counter() == hand(state, P1)
    assert np.allclose(state.rewards, [1, -1] if reward_mode == "win_loss" else [0, 0])


@pytest.mark.parametrize("reward_mode", ["win_loss", "score_diff"])
def test_S11_both_hands_empty_leftover_trumps_removed(reward_mode):  # R11, R14, A24, A40
    e, state = jax_deal(DECK_E, reward_mode=reward_mode)
    state = concede_39_times(e, state)
    for rank in "2 3 4 5 6 7 8 9 10 J".split():
        state = act(e, state, P1 if rank in "2 4 6 8 10".split() else P0, f"play {rank}")
    assert legal(state) == names("concede") and hand(state, P1) == Counter()
    state = act(e, state, P1, "concede")
    assert bool(state.terminated) and scores(state) == (30, 20) and stack(state) == []
    assert np.allclose(state.rewards, [1, -1] if reward_mode == "win_loss" else [10 / 52, -10 / 52])


def test_S14_match_continues_dealer_alternates_next_deck_used():  # R23, A29, A31, A46
    e, state = jax_deal(decks=[DECK_E, DECK_B], target_score=27)
    state = concede_39_times(e, state)
    state = play_line(e, state, [(P1, "concede"), (P0, "concede"), (P1, "concede")])
    assert not bool(state.terminated) and not bool(state.rewards.any())
    assert int(state._dealer) == P1 and int(state._game_number) == 2
    assert hand(state, P0) == ranks("3C 3D 8H QH AS".split()) and hand(state, P1) == ranks("4C 8D 8S JC KD".split())
    assert stack(state) == values("2D KS 9H") and int(state.current_player) == P0
    assert legal(state) == names("play A, play 3, play 8, play Q, concede")
    assert list(np.asarray(state._totals)) == [26, 26] and scores(state) == (0, 0) and deck_size(state) == 39
    assert np.isclose(state.observation[128], 26 / 27) and state.observation[127] == 1  # section 7: match totals


def test_S16_illegal_action_and_truncation():  # R20, R22, A42, A43 (Pgx: an illegal action ends the episode)
    e, state = jax_deal(DECK_A, max_steps=5)
    state = act(e, state, P0, "play 10")
    for illegal in ("play 9", "play 3"):
        refused = e.step(state, jnp.int32(SPEC_ACTION_NAMES.index(illegal)), jax.random.PRNGKey(0))
        assert bool(refused.terminated) and list(np.asarray(refused.rewards)) == [1.0, -1.0]
        assert hand(refused, P1) == hand(state, P1) and stack(refused) == stack(state)
    state = play_line(e, state, [(P1, "play J"), (P0, "play Q"), (P1, "play 2"), (P0, "play 6")])
    assert bool(state.truncated) and not bool(state.terminated) and not bool(state.rewards.any())
    assert scores(state) == (0, 0) and state.observation[156] == 0  # nobody's turn once truncated


# -- the deal, conservation, the match --------------------------------------------------------------------------


@pytest.mark.parametrize("dealer", [0, 1])
@pytest.mark.parametrize("colours", ["".join(c) for c in itertools.product("BR", repeat=3)])
def test_R4_deal_first_leader_for_every_colour_combination(colours, dealer):  # R4, A2, A3, A7
    black = iter(["AC", "2S", "3C"])
    red = iter(["AD", "2H", "3D"])
    positions = {10 + i: next(black) if colour == "B" else next(red) for i, colour in enumerate(colours)}
    deck = stacked(positions)
    dealt = jax.jit(rw._deal)(jnp.asarray([card_id(c) for c in deck]), jnp.int32(dealer))
    assert int(dealt["_leader"]) == (dealer if colours.count("B") >= 2 else 1 - dealer)
    hands = np.asarray(dealt["_hands"])
    non_dealer = Counter(rank_of(c) for c in deck[0:10:2])
    assert Counter({r + 1: int(n) for r, n in enumerate(hands[1 - dealer]) if n}) == non_dealer
    assert [int(r) + 1 for r in np.asarray(dealt["_trump_stack"])] == [rank_of(c) for c in deck[10:13]]
    assert [int(r) + 1 for r in np.asarray(dealt["_deck"])] == [rank_of(c) for c in deck[13:]]
    assert all(is_black(c) == (colour == "B") for c, colour in zip(deck[10:13], colours, strict=True))


def conservation(state) -> np.ndarray:
    """Cards of each rank in hands, deck, stack, played cards and piles (R18), per state of a batch."""
    stack_counts = (np.asarray(state._trump_stack)[..., None] == np.arange(13)).sum(axis=-2)
    return (np.asarray(state._hands).sum(axis=-2) + np.asarray(state._deck_counts) + stack_counts
            + np.asarray(state._played) + np.asarray(state._piles).sum(axis=-2))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_R17_R18_R19_invariants_over_batched_random_play(seed):  # R17, R18, R19
    e = engine(NAME)
    batch = 1024
    state = e.batch_init(e.keys(seed, batch))
    key = jax.random.PRNGKey(seed)
    for _ in range(60):
        live = ~np.asarray(state.terminated)
        counts = conservation(state)
        assert (counts[live] == 4).all()  # R18: nothing leaves the game before it ends
        full = live & (np.asarray(state._deck_counts).sum(axis=1) > 0) & (np.asarray(state._played).sum(axis=1) == 0)
        assert (np.asarray(state._hands).sum(axis=2)[full] == 5).all()  # R17: a round starts with 5 + 5 and 3
        assert ((np.asarray(state._trump_stack) >= 0).sum(axis=1)[full] == 3).all()
        over = ~live
        totals = np.asarray(state._piles).sum(axis=(1, 2))[over]
        assert np.isin(totals, [50, 51, 52]).all()  # R18: at most two trumps are removed
        assert (np.asarray(state._step_count)[over] <= 52).all()  # R19
        key, pick = jax.random.split(key)
        state = e.batch_step(state, random_legal_actions(pick, state.legal_action_mask), e.keys(seed + 1, batch))
    assert bool(state.terminated.all())  # R19: every game is over within 52 decisions


@pytest.mark.parametrize("config", [{"target_score": 60, "dealer_rotation": "alternate"},
                                    {"target_score": 80, "dealer_rotation": "fixed", "first_dealer": 1}])
def test_R23_match_transitions_over_batched_random_play(config):  # R23, A29, A31, A32, A33, A46, A47
    e = engine(NAME, **config)
    batch, target = 256, config["target_score"]
    state = e.batch_init(e.keys(5, batch))
    key = jax.random.PRNGKey(6)
    games = np.ones(batch, int)
    while not bool(state.terminated.all()):
        key, pick = jax.random.split(key)
        before = state
        state = e.batch_step(state, random_legal_actions(pick, state.legal_action_mask), e.keys(7, batch))
        new_game = np.asarray(state._game_number) > np.asarray(before._game_number)
        ended = np.asarray(state.terminated) & ~np.asarray(before.terminated)
        if new_game.any():  # A31: dealt at once; the totals add the finished game's scores (R23)
            assert (np.asarray(state._game_number)[new_game] == np.asarray(before._game_number)[new_game] + 1).all()
            flipped = np.asarray(state._dealer)[new_game] != np.asarray(before._dealer)[new_game]
            assert flipped.all() if config["dealer_rotation"] == "alternate" else not flipped.any()  # A29
            assert (np.asarray(state._totals)[new_game].max(axis=1) < target).all()
            assert (np.asarray(state._piles)[new_game] == 0).all() and (conservation(state)[new_game] == 4).all()
            assert not np.asarray(state.rewards)[new_game].any()  # win_loss: nothing until the match ends
        if ended.any():
            totals = np.asarray(state._totals)[ended]
            rewards = np.asarray(state.rewards)[ended]
            winner = rewards.argmax(axis=1)
            assert (np.abs(rewards) == 1).all() and (totals.max(axis=1) >= target).all()
            assert (totals[np.arange(len(winner)), winner] >= target).all()  # A33: a winner reached the target
            both = (totals >= target).all(axis=1) & (totals[:, 0] != totals[:, 1])
            assert (winner[both] == totals[both].argmax(axis=1)).all()  # A32: the larger total
        games = np.maximum(games, np.asarray(state._game_number))
    assert games.max() <= math.ceil(target / 25) and games.max() >= 2  # R23: at most ceil(T / 25) games


def test_later_match_decks_are_shuffled_decks_and_differ_between_deals():  # A30
    e = engine(NAME, target_score=100)
    state = e.batch_init(e.keys(9, 8))
    decks = np.asarray(state._decks)
    assert decks.shape == (8, 3, 52)
    assert (np.sort(decks, axis=2) == np.arange(52)).all()
    assert len({d.tobytes() for d in decks.reshape(-1, 52)}) == 24


def test_observation_ranks_block_names_the_spec_layout():  # section 7 layout, read back from a JAX deal
    e, state = jax_deal(DECK_A)
    observation = np.asarray(e.observe_all(state))
    assert [RANKS[r] for r in np.flatnonzero(observation[P0][13:26])] == ["6"]  # active trump
    assert observation[P0][117] == np.float32(39 / 39) and observation[P1][118] == np.float32(5 / 5)
    assert observation[P0][122] == 1 and observation[P1][122] == 0  # p0 leads round 1
    assert observation[P0][124] == 1 and observation[P1][124] == 0  # p0 deals
