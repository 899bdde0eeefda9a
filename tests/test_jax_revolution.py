"""The JAX Revolution engine (``card_envs/jax/revolution.py``) against the spec and the Python engine.

What the generic JAX tests do not cover (they run every engine of ``JAX_GAMES``: ``tests/test_jax_lockstep.py``
compares random games of every config of ``Revolution.variant_configs()`` decision by decision, every game array
included; ``tests/test_jax_api.py`` has Pgx's API test, jit / vmap at batch sizes 1 and 1024, ``from_state`` and
the illegal-action and after-the-end conventions):

* the worked scenarios of spec section 10 replayed through the JAX engine from their stacked decks
  (``init_with_deck``) or from the Python positions (``from_state``), checked against the spec's own legal
  sets, counts and rewards and against the Python engine's observations;
* ``from_state`` of the positions search players start from (``sample_hidden``, ``determinize``) and of
  stacked decks for later hands;
* the deals (partitions of the 52 cards, uniform over seats, the next hand dealt while one is played).

Compiled engines come from ``tests/jax_support.py`` (once per config and process).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from card_envs.core.errors import ConfigError
from card_envs.jax import make
from card_envs.jax import revolution as jax_revolution
from card_envs.jax.core import OVER_PLAYER, random_legal_actions, reset_finished
from card_envs.revolution.rules import CARD_CODES, NUM_CARDS, PASS, Revolution
from tests import jax_support
from tests.test_revolution_rules import (
    DEAL_A,
    DECK_A,
    DECK_B,
    HAND_2_MOVES,
    HAND_3_MOVES,
    SCENARIO_2_MOVES,
    SCENARIO_3_MOVES,
    SCENARIO_4_MOVES,
    SCENARIO_5_MOVES,
    SCENARIO_6_MOVES,
    SORTED,
    _scenario_12_expected_default,
    action,
    cards,
    start,
)

NAME = "revolution_v0"
VARIANTS = Revolution.variant_configs()
KEY = jax.random.PRNGKey(0)
DEAL_A_OPTIONS = {"first_dealer": 3, "num_hands": 1}  # the spec's convention for Deals A and B


Compiled = jax_support.Engine


def compiled(**options: object) -> Compiled:
    """The shared compiled engine of ``options`` (``tests/jax_support.py``)."""
    return jax_support.engine(NAME, **options)


def init_with_deck(engine: Compiled, key: jax.Array, deck: jax.Array):
    """``env.init_with_deck`` jitted once per engine."""
    return _jitted_init_with_deck(engine.env)(key, deck)


@functools.cache
def _jitted_init_with_deck(env):
    return jax.jit(env.init_with_deck)


def deck_indices(codes: list[str]) -> jnp.ndarray:
    return jnp.asarray([CARD_CODES.index(code) for code in codes], jnp.int32)


def jax_legal(state) -> list[str]:
    """The JAX legal set as the spec writes it: idx order, ``PASS`` last."""
    return ["PASS" if a == PASS else CARD_CODES[a] for a in np.flatnonzero(np.asarray(state.legal_action_mask))]


def assert_same(engine: Compiled, jax_state, py_state) -> None:
    """The JAX state shows what the Python state shows: player to act, mask, every seat's observation,
    the last step's rewards, the end flags."""
    game = py_state.game
    assert int(jax_state.current_player) == (OVER_PLAYER if py_state.is_over else py_state.current_player)
    assert bool(jax_state.terminated) == py_state.terminated
    assert bool(jax_state.truncated) == py_state.truncated
    if not py_state.is_over:  # Pgx: all True once over
        np.testing.assert_array_equal(np.asarray(jax_state.legal_action_mask), py_state.legal_mask().astype(bool))
    observations = np.asarray(engine.observe_all(jax_state))
    for seat in range(4):
        np.testing.assert_array_equal(observations[seat], game.encode(py_state.view(seat)), err_msg=f"seat {seat}")
    np.testing.assert_allclose(np.asarray(jax_state.rewards), py_state.rewards, atol=1e-6)


def replay(options: dict, deck: list[str], moves: list[str], check=None):
    """Play ``moves`` on both engines from the stacked ``deck``; ``check(i, jax_state)`` before move ``i``
    (and with ``i = len(moves)`` at the end). Returns the final JAX and Python states."""
    engine = compiled(**options)
    py_state = start(deck, **options)
    jax_state = init_with_deck(engine, KEY, deck_indices(deck))
    for i, move in enumerate([*moves, None]):
        assert_same(engine, jax_state, py_state)
        if check is not None:
            check(i, jax_state)
        if move is None:
            break
        py_state.apply(action(move))
        jax_state = engine.step(jax_state, jnp.int32(action(move)), jax.random.fold_in(KEY, i))
    return jax_state, py_state


# -- options ------------------------------------------------------------------------------------------------


def test_every_option_of_the_python_engine_runs():
    assert jax_revolution.Env.unsupported_options == {}
    for options in VARIANTS:
        env = make(NAME, **options)
        assert env.config == Revolution(**options).config
        assert env.observation_shape == (Revolution(**options).observation_size,)


def test_step_needs_no_key_the_later_deals_come_from_the_init_seed():  # A4: the deals are fixed by init's key
    engine = compiled()
    state = engine.init(KEY)
    action = jnp.int32(int(np.flatnonzero(np.asarray(state.legal_action_mask))[0]))
    without = jax.jit(lambda s, a: engine.env.step(s, a))(state, action)
    with_key = engine.step(state, action, jax.random.PRNGKey(99))
    assert all(jax.tree.leaves(jax.tree.map(np.array_equal, without, with_key)))
    assert not np.array_equal(engine.init(jax.random.PRNGKey(1))._deal_seed, state._deal_seed)


@pytest.mark.parametrize(("option", "value"), [("num_hands", 0), ("first_dealer", 4), ("max_steps", 0),
                                               ("void_inferences", True), ("reward_mode", "score")])
def test_bad_options_are_refused_as_by_the_python_engine(option, value):
    with pytest.raises(ConfigError):
        make(NAME, **{option: value})


# -- the worked scenarios of spec section 10 ----------------------------------------------------------------


def test_scenarios_1_and_2_sweep_from_the_sorted_deck():  # R2, R3, R13, R18, A3, A5, A45, section 9
    """With ``trick_reward = 0.1``: scenario 2's shaping is checked too (the legal sets do not depend on it)."""
    expected = {0: [CARD_CODES[i] for i in range(3, 52, 4)],  # scenario 1: P0's 13 cards, no PASS
                4: cards("5C 9C KC 4D 8D QD 3H 7H JH") + ["PASS"],
                8: cards("4D 8D QD 3H 7H JH 2S 6S 10S") + ["PASS"],
                12: cards("5C 9C 3H 7H JH 2S 6S 10S") + ["PASS"]}
    rewards = []

    def check(i, state):
        if i in expected:
            assert jax_legal(state) == expected[i], f"decision {i}"
        rewards.append(np.asarray(state.rewards))

    final, _ = replay({"num_hands": 1, "trick_reward": 0.1}, SORTED, SCENARIO_2_MOVES, check)
    assert bool(final.terminated) and int(final._step_count) == 16
    np.testing.assert_array_equal(final._scores, [4, 0, 0, 0])
    np.testing.assert_allclose(rewards[4], [0.1, -0.1 / 3, -0.1 / 3, -0.1 / 3], atol=1e-6)  # trick 1's step
    # the final step pays the last trick and the win: +1, -1/3 each, plus 4 tricks' shaping in total
    np.testing.assert_allclose(final.rewards, [1.1, -1 / 3 - 0.1 / 3, -1 / 3 - 0.1 / 3, -1 / 3 - 0.1 / 3], atol=1e-6)
    np.testing.assert_allclose(np.sum(rewards, axis=0), [1.4, -1 / 3 - 0.4 / 3, -1 / 3 - 0.4 / 3, -1 / 3 - 0.4 / 3],
                               atol=1e-6)


def test_scenarios_3_to_6_on_deal_a():  # R2-R12, A1, A6-A23, A44
    moves = SCENARIO_3_MOVES + SCENARIO_4_MOVES + SCENARIO_5_MOVES + SCENARIO_6_MOVES
    expected = {
        0: cards(DEAL_A[0]),  # scenario 3: PASS illegal on trick 1
        1: cards("5H 7H JH QH"),
        2: cards(DEAL_A[2]),  # void on trick 1: any card
        3: cards(DEAL_A[3]),  # trump fixed: any card
        4: ["2D", "2S", "PASS"],  # scenario 4: restricted lead, equal rank allowed
        5: cards("3D 8D 9D 10D KD"),
        7: cards("4C QC KC AC 6S 10S JS QS KS"),  # void, must avoid PL = H
        8: ["PASS"],  # scenario 5: no restricted-legal card
        9: cards("9C 10C JC 6D 7D QD 2H 3H KH 5S AS") + ["PASS"],  # offered: any card
        10: cards("8D 9D 10D KD 4H 6H 8H 10H 7S 8S 9S") + ["PASS"],
        11: cards("6D 7D QD"),
        14: ["6S", "PASS"],  # scenario 6: voluntary yield
        18: cards("QC KC AC JH QH 6S 10S JS QS KS"),  # forced lead: any card, no PASS
        19: cards("3C 5C 6C 7C 8C"),
        20: cards("4H 6H 8H 10H 7S 8S 9S"),  # void in C, PL = D excluded
        22: cards("8D 4H 6H 8H 7S") + ["PASS"],  # trick 5: P3 designated, PW 8S
    }
    counts = {4: [0, 0, 1, 0], 8: [0, 1, 1, 0], 14: [0, 2, 1, 0], 22: [0, 2, 1, 1]}

    def check(i, state):
        if i in expected:
            assert jax_legal(state) == expected[i], f"decision {i}"
        if i in counts:
            assert np.asarray(state._tricks_won).tolist() == counts[i], f"decision {i}"

    replay(DEAL_A_OPTIONS, DECK_A, moves, check)


def test_scenario_8_yield_on_the_first_trick():  # R2, A7
    options = {**DEAL_A_OPTIONS, "allow_yield_first_trick": True}
    expected = {0: cards(DEAL_A[0]) + ["PASS"], 1: cards(DEAL_A[3]) + ["PASS"]}

    def check(i, state):
        if i in expected:
            assert jax_legal(state) == expected[i]
        if i == 1:
            assert int(state.current_player) == 3  # the offer goes to P0's right

    replay(options, DECK_A, ["pass"], check)


def test_scenarios_9_and_10_the_spade_wall():  # R3, R7(c), R9, R11, A19, A24, A25
    moves = ["2S", "3D", "AD", "KD", "5C", "9C", "AS", "10C", "2H", "9H", "4H", "3S"]
    expected = {0: cards("AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S"),
                6: cards("AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S"),  # case (c): every card, all spades
                8: cards("2D 4D 5D 6D 2H 3H") + ["PASS"],
                11: cards("KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S"),  # spades are not PL now: case (b)
                12: ["PASS"]}  # T4: P2's spades all outrank 3S

    def check(i, state):
        if i in expected:
            assert jax_legal(state) == expected[i], f"decision {i}"
        if i == 8:
            assert np.asarray(state._tricks_won).tolist() == [1, 0, 0, 1]  # AS fixed no trump, 10C won

    final, _ = replay(DEAL_A_OPTIONS, DECK_B, moves, check)
    assert np.asarray(final._tricks_won).tolist() == [1, 0, 1, 1] and int(final._prev_trump_suit) == 3  # R9: S


@pytest.mark.parametrize("full_recall", [False, True])
def test_scenario_12_what_player_1_observes(full_recall):  # R24, A33-A36, section 7.4
    options = {**DEAL_A_OPTIONS, "full_recall": full_recall}
    final, _ = replay(options, DECK_A, SCENARIO_3_MOVES + SCENARIO_4_MOVES)
    observation = np.asarray(compiled(**options).env.observe(final, 1))
    np.testing.assert_array_equal(observation[:541], _scenario_12_expected_default())
    assert jax_legal(final) == ["PASS"]
    if full_recall:
        expected = np.zeros(212, np.float32)
        for seat, card in ((0, "9H"), (1, "5H"), (2, "2C"), (3, "AH"), (2, "2D"), (3, "3D"), (0, "AD"), (1, "4C")):
            expected[52 * ((seat - 1) % 4) + CARD_CODES.index(card)] = 1
        np.testing.assert_array_equal(observation[541:], expected)


@pytest.mark.parametrize(("reward_mode", "returns"), [("win", [1, -1 / 3, -1 / 3, -1 / 3]),
                                                      ("margin", [5 / 12, 1 / 12, -1 / 4, -1 / 4])])
def test_scenario_13_series_and_tie_break_hand(reward_mode, returns):  # R15-R19, A5, A18, A31, A32
    """Stacked decks for three hands. ``from_state`` carries the Python state's next (stacked) hand, so the
    JAX engine deals hand 2 itself from the converted start, and hand 3 from hand 2's converted start."""
    options = {"num_hands": 2, "reward_mode": reward_mode}
    engine = compiled(**options)
    py_state = start(decks=[SORTED] * 3, **options)
    jax_state = engine.env.from_state(py_state)
    total = np.zeros(4)
    for i, move in enumerate(SCENARIO_2_MOVES + HAND_2_MOVES + HAND_3_MOVES):
        assert_same(engine, jax_state, py_state)
        if i == 16:
            assert jax_legal(jax_state) == [CARD_CODES[c] for c in range(3, 52, 4)]  # hand 2: P1 holds delta
            assert int(jax_state.current_player) == 1 and int(jax_state._dealer) == 1
            jax_state = engine.env.from_state(py_state)  # carries hand 3's stacked deck in turn
        if i == 32:
            assert int(jax_state._hand_number) == 3 and int(jax_state.current_player) == 2  # the tie-break hand
        py_state.apply(action(move))
        jax_state = engine.step(jax_state, jnp.int32(action(move)), jax.random.fold_in(KEY, i))
        total += np.asarray(jax_state.rewards)
    assert_same(engine, jax_state, py_state)
    assert bool(jax_state.terminated) and np.asarray(jax_state._scores).tolist() == [8, 4, 0, 0]
    np.testing.assert_allclose(total, returns, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_hands_the_engine_deals_itself_under_recall_and_inferences(seed):  # R2, R19, A18, section 7.3
    """Lockstep re-synchronises at every new hand (the Python deal draws chance), so it never sees the JAX engine
    start a hand itself: here hand 1 comes from ``init_with_deck`` and hands 2 and 3 from the deals the JAX state
    carries (set to the Python state's stacked decks), and every decision through the three hands agrees with
    the Python engine: observations of every seat (the recall and the inference blocks) and every game array."""
    options = {"num_hands": 3, "first_dealer": 0, "full_recall": True, "void_inferences": True}
    engine = compiled(**options)
    env = engine.env
    rng = np.random.default_rng(seed)
    decks = [[CARD_CODES[c] for c in rng.permutation(NUM_CARDS)] for _ in range(5)]
    py_state = start(decks=decks, **options)
    jax_state = init_with_deck(engine, KEY, deck_indices(decks[0]))
    hand = decisions = 0
    while True:
        if py_state.hand_number != hand:  # the deal the JAX engine will start the next hand from
            hand = py_state.hand_number
            carried = env.from_state(py_state)
            jax_state = jax_state.replace(**{name: getattr(carried, name) for name in env.chance_fields})
        assert_same(engine, jax_state, py_state)
        expected = env.from_state(py_state)
        for name in env.game_fields():
            if name not in env.chance_fields:
                np.testing.assert_array_equal(getattr(jax_state, name), getattr(expected, name), err_msg=name)
        if py_state.is_over:
            break
        move = int(rng.choice(py_state.legal_actions()))
        py_state.apply(move)
        jax_state = engine.step(jax_state, jnp.int32(move), KEY)
        decisions += 1
    assert hand >= 3 and decisions > 3 * 16


@pytest.mark.parametrize(("max_steps", "returns"), [(4, [-1 / 3, -1 / 3, 1, -1 / 3]), (3, [0, 0, 0, 0])])
def test_scenario_15_truncation(max_steps, returns):  # R23, A41
    options = {**DEAL_A_OPTIONS, "max_steps": max_steps}
    final, _ = replay(options, DECK_A, SCENARIO_3_MOVES[:max_steps])
    assert bool(final.truncated) and not bool(final.terminated) and int(final.current_player) == OVER_PLAYER
    np.testing.assert_allclose(final.rewards, returns, atol=1e-6)
    # a step after a truncation changes nothing and pays nothing (Pgx): no seat is penalised, though the
    # Python legal set of a truncated position is empty
    after = compiled(**options).step(final, jnp.int32(0), KEY)
    assert bool(after.truncated) and not bool(after.terminated) and int(after.current_player) == OVER_PLAYER
    np.testing.assert_array_equal(after.rewards, [0, 0, 0, 0])
    np.testing.assert_array_equal(after.observation, final.observation)


# -- from_state -----------------------------------------------------------------------------------------------------


def test_from_state_draws_the_unstacked_next_hand_from_its_key():  # A4, R19: chance not yet drawn
    """The next hand is chance the Python state has not drawn: ``from_state`` shuffles it from its key (the same
    key, the same hand; another key, another hand), and takes a pending stacked deck as it is (section 3.3)."""
    env = compiled().env
    state = Revolution().new_state(np.random.default_rng(3))
    hands = [_seat_of_cards(np.asarray(env.from_state(state, jax.random.PRNGKey(k))._next_holdings)) for k in (1, 1, 2)]
    for hand in hands:
        assert (hand >= 0).all() and [(hand == seat).sum() for seat in range(4)] == [13] * 4
    assert np.array_equal(hands[0], hands[1]) and not np.array_equal(hands[0], hands[2])
    options = {"num_hands": 2, "reward_mode": "win"}  # scenario 13's engine
    stacked = start(decks=[SORTED, DECK_A], **options)
    engine = compiled(**options)
    for k in (1, 2):  # hand 2's deck is stacked: the key does not matter; the next dealer's left gets index 0
        seats = _seat_of_cards(np.asarray(engine.env.from_state(stacked, jax.random.PRNGKey(k))._next_holdings))
        dealer = (stacked.dealer + 1) % 4
        assert [seats[CARD_CODES.index(code)] for code in DECK_A] == [(dealer + 1 + i) % 4 for i in range(NUM_CARDS)]


# -- search positions -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [VARIANTS[0], VARIANTS[1]],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_from_state_of_sampled_positions(options):
    """Search players start from ``sample_hidden`` / ``determinize`` positions (hidden cards redealt,
    anonymous trick records): ``from_state`` converts them too, and a JAX step from there is Python's step."""
    engine = compiled(**options)
    game = Revolution(**options)
    rng = np.random.default_rng(5)
    state = game.new_state(np.random.default_rng(5))
    for _ in range(23):  # into trick 3 or later
        legal = state.legal_actions()
        state.apply(int(legal[rng.integers(len(legal))]))
    player = state.current_player
    for position in (state.sample_hidden(player, rng), game.determinize(state.view(player), rng)):
        converted = engine.env.from_state(position)
        assert_same(engine, converted, position)
        move = int(position.legal_actions()[0])
        position.apply(move)
        assert_same(engine, engine.step(converted, jnp.int32(move), KEY), position)


# -- deals ---------------------------------------------------------------------------------------------------------


def _seat_of_cards(holdings: np.ndarray) -> np.ndarray:
    """``[..., seat, suit]`` words -> the seat of every card index ``[..., 52]`` (-1 if nobody holds it)."""
    bits = (holdings[..., :, :, None] >> np.arange(13)) & 1  # [..., seat, suit, rank]
    held = bits.reshape(*holdings.shape[:-2], 4, NUM_CARDS)
    assert (held.sum(-2) <= 1).all(), "a card held twice"
    return np.where(held.any(-2), held.argmax(-2), -1)


def test_deals_are_partitions_uniform_over_seats():  # A4: every card equally likely at every seat
    batch = 4096
    keys = jax.random.split(jax.random.PRNGKey(1), batch)
    env = compiled().env
    states = jax.jit(jax.vmap(env.init))(keys)
    seats = _seat_of_cards(np.asarray(states._holdings))
    # the next hand, dealt a rank (four cards) per step over 13 steps, from the words the step draws from the seed
    deal_steps = jax.jit(jax.vmap(lambda s: jax.lax.fori_loop(
        0, 13, lambda i, s: jax_revolution._deal_next_cards(s, jax_revolution._deal_words(s._deal_seed, i)), s)))
    dealt = deal_steps(states)
    assert (np.asarray(dealt._next_dealt) == NUM_CARDS).all() and (np.asarray(dealt._next_need) == 0).all()
    next_seats = _seat_of_cards(np.asarray(dealt._next_holdings))
    for deal in (seats, next_seats):
        assert (deal >= 0).all()
        assert all((deal == seat).sum(-1).tolist() == [13] * batch for seat in range(4))
        frequency = np.stack([(deal == seat).mean(0) for seat in range(4)])  # [seat, card]
        assert np.abs(frequency - 0.25).max() < 5 * np.sqrt(0.25 * 0.75 / batch)
    ace_holders = np.asarray(states.current_player)
    np.testing.assert_array_equal(ace_holders, seats[:, 51])  # R2: the AS holder leads
    assert np.abs(np.bincount(ace_holders, minlength=4) / batch - 0.25).max() < 5 * np.sqrt(0.25 * 0.75 / batch)


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(NUM_CARDS)), st.integers(0, 2**31 - 1))
def test_stacked_deck_is_dealt_as_section_3_4(deck, seed):  # A2, A3: deck index i goes to seat (dealer + 1 + i) % 4
    engine = compiled(first_dealer="random")
    state = init_with_deck(engine, jax.random.PRNGKey(seed), jnp.asarray(deck, jnp.int32))
    dealer = int(state._dealer)
    seats = _seat_of_cards(np.asarray(state._holdings))
    assert [seats[card] for card in deck] == [(dealer + 1 + i) % 4 for i in range(NUM_CARDS)]
    # the observations do not depend on how the dealer was chosen: compare with that dealer's Python deal
    assert_same(engine, state, start([CARD_CODES[c] for c in deck], first_dealer=dealer))


# -- the batch-last step ---------------------------------------------------------------------------------------------

#: every option off its default at once, a short series so that tie-break hands and the step limit come soon
EVERY_OPTION = {"num_hands": 2, "max_extra_hands": 1, "first_dealer": "random", "allow_yield_first_trick": True,
                "forced_lead_restricted": True, "full_recall": True, "void_inferences": True, "trick_reward": 0.1,
                "reward_mode": "margin", "max_steps": 90}


#: the default config opt-in (default run time): every option's games reach every kind of end and more paths
@pytest.mark.parametrize("options", [pytest.param({}, marks=pytest.mark.slow), EVERY_OPTION],
                         ids=["default", "every-option"])
def test_step_batch_last_is_the_vmapped_step_through_every_kind_of_end(options):  # R13, R15-R19, R23
    """``step_batch_last`` (one pass over the batch, batch axis last) leaves the same states as ``vmap(step)`` at
    every step of random play, past new hands, tie-break hands, series ends, the step limit, illegal actions and
    steps after the end; finished games are re-dealt every 16 steps (``reset_finished``, both layouts)."""
    engine = compiled(**options)
    env, batch, config = engine.env, 16, engine.env.config
    reset = jax.jit(reset_finished, static_argnums=(0, 3, 4, 5))
    first = engine.batch_init(engine.keys(7, batch))
    last = jax.jit(env.init_batch_last)(engine.keys(7, batch))
    key = jax.random.PRNGKey(8)
    seen = {"new hand": False, "tie-break hand": False, "terminated": False, "truncated": False, "illegal": False,
            "after the end": False}
    for step in range(2_000):
        key, pick, deal = jax.random.split(key, 3)
        actions = np.array(random_legal_actions(pick, first.legal_action_mask))
        over = np.asarray(first.terminated | first.truncated)
        if step % 50 == 49:  # an illegal action in one running game: the episode ends with the penalty
            row = int(np.argmin(over))
            illegal = np.flatnonzero(~np.asarray(first.legal_action_mask[row]))
            if not over[row] and len(illegal):
                actions[row] = illegal[0]
                seen["illegal"] = True
        seen["after the end"] |= bool(over.any())
        hands = np.asarray(first._hand_number)
        first = engine.batch_step(first, jnp.asarray(actions), None)
        last = engine.batch_step_last(last, jnp.asarray(actions), None)
        assert np.asarray(jax_support.same_leaves(first, last)).all(), f"step {step}"
        seen["new hand"] |= bool((np.asarray(first._hand_number) > hands).any())
        seen["tie-break hand"] |= bool((np.asarray(first._hand_number) > config.num_hands).any())
        seen["terminated"] |= bool(np.asarray(first.terminated).any())
        seen["truncated"] |= bool(np.asarray(first.truncated).any())
        if step % 16 == 15:
            first = reset(env, first, deal, None, False, 0)
            last = reset(env, last, deal, None, False, -1)
            assert np.asarray(jax_support.same_leaves(first, last)).all(), f"reset after step {step}"
        expected = [what for what in seen if what != "truncated" or config.max_steps is not None]
        if all(seen[what] for what in expected):
            break
    assert [what for what in expected if not seen[what]] == [], f"{step + 1} steps"
    # a new deal's state has the leaf types of a stepped one (void_inferences' limits were weakly typed after init):
    # each jitted step traced and compiled once, not again at the second step
    assert (engine.batch_step._cache_size(), engine.batch_step_last._cache_size()) == (1, 1)
