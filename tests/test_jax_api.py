"""The Pgx API of every JAX engine (``card_envs.jax``), and the core's helpers.

Generic over every engine of ``JAX_GAMES`` whose module exists: Pgx's own ``api_test``, jit + vmap at batch
sizes 1 and 8, ``from_state`` against the Python engine, the illegal-action and after-the-end conventions,
errors for bad names and options, and that importing ``card_envs`` never imports jax. Compiled functions come
from ``tests.jax_support`` (one compile per engine per test process).
"""

from __future__ import annotations

import subprocess
import sys
import typing

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest
from scipy.stats import chisquare

import card_envs
from card_envs.core.errors import ConfigError
from card_envs.jax import core
from card_envs.jax.core import (
    OVER_PLAYER,
    ExactRatios,
    available_games,
    batch_last,
    make,
    random_legal_actions,
    reset_finished,
    shuffled,
    step_autoreset,
)
from tests.jax_support import engine, leaf_names, same_leaves

GAMES = available_games()
#: a batch of 8: the shape test_step_batch_last_is_the_vmapped_step_with_the_batch_axis_last steps too, so that the
#: vmapped step is compiled once for both (a batch of 1,024 compiled it again: about 10 s for Bloodlines)
BATCH_SIZES = [1, 8]


def random_positions(name: str, games: int, seed: int) -> list:
    """Every position (before each decision, and the last) of a few random Python games."""
    game = card_envs.make_game(name)
    positions = []
    for s in range(seed, seed + games):
        state = game.new_state(np.random.default_rng(s))
        mover = np.random.default_rng([s, 7])
        positions.append(state.clone())
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(int(legal[mover.integers(len(legal))]))
            positions.append(state.clone())
    return positions


@jax.jit
def rows(batch, index):
    """Row ``index`` of every leaf, in one program (eagerly each leaf's indexing compiles and dispatches alone)."""
    return jax.tree.map(lambda leaf: leaf[index], batch)


# -- Pgx's own API test ---------------------------------------------------------------------------------------


class CompiledOnce:
    """``jax`` as a module that calls ``jax.jit(f)`` sees it, with ``jax.jit`` of the functions in ``compiled`` their
    compiled forms of this process: a new ``jax.jit`` of a bound method traces and compiles it again (every
    ``jax.jit`` object keeps its own cache), which took seconds of the default run a game."""

    def __init__(self, compiled: dict) -> None:
        self._compiled = compiled

    def jit(self, fun, **options):
        return self._compiled[fun] if fun in self._compiled and not options else jax.jit(fun, **options)

    def __getattr__(self, name: str):
        return getattr(jax, name)


@pytest.mark.parametrize("name", GAMES)
def test_pgx_api_test(name, monkeypatch):
    """``pgx.api_test`` as Pgx runs it on its own games, with three things widened that cannot apply outside
    Pgx 2.6.0: its id registry (``EnvId``) lists only Pgx's games, its SVG renderer draws only those, and its
    unbatched random player calls ``jax.random.categorical(..., axis=1)`` on a 1-d mask, which jax 0.10
    rejects (for Pgx's own games too), so it gets ``axis=-1``. One game each (Pgx's loop validates every step with
    eager operations: a Battlecards game took 4.4 s of a run's time); the same dtypes and shapes are checked on 60
    steps of an 8-game batch, each compared with the unbatched step, in test_jit_vmap_random_play. Its
    ``jax.jit(env.init)`` and ``jax.jit(env.step)`` are the engine's compiled ones (:class:`CompiledOnce`)."""
    e = engine(name)
    env = e.env
    monkeypatch.setattr("pgx._src.api_test.jax", CompiledOnce({env.init: e.init, env.step: e.step}))
    original_get_args = typing.get_args
    monkeypatch.setattr("pgx._src.api_test.get_args",
                        lambda tp: (*original_get_args(tp), env.id) if tp is pgx.EnvId else original_get_args(tp))
    monkeypatch.setattr(env.state_class, "save_svg", lambda self, filename, **kwargs: None)
    monkeypatch.setattr("pgx._src.api_test.act_randomly", jax.jit(
        lambda key, mask: jax.random.categorical(key, jnp.log(mask.astype(jnp.float32)), axis=-1)))
    pgx.api_test(env, num=1, use_key=True)


# -- jit and vmap ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [pytest.param(b, marks=pytest.mark.slow) if b == 1 else b for b in BATCH_SIZES])
@pytest.mark.parametrize("name", GAMES)
def test_jit_vmap_random_play(name, batch):
    """Random play of a vmapped batch, row by row the unbatched step. A batch of one is opt-in (``-m slow``): the
    default run steps single games unbatched in ``test_pgx_api_test`` and compares rows of the 8-game batch."""
    e = engine(name)
    env = e.env
    state = e.batch_init(e.keys(batch, batch))
    key = jax.random.PRNGKey(batch)
    for step in range(60):
        assert state.observation.shape == (batch, *env.observation_shape)
        assert state.observation.dtype == jnp.float32
        assert state.legal_action_mask.shape == (batch, env.num_actions) and state.legal_action_mask.dtype == bool
        assert state.rewards.shape == (batch, env.num_players) and state.rewards.dtype == jnp.float32
        assert state.current_player.dtype == jnp.int32
        assert bool(state.legal_action_mask.any(axis=1).all())
        over = np.asarray(state.terminated | state.truncated)
        assert np.asarray(state.legal_action_mask)[over].all()  # Pgx: all True once over
        assert (np.asarray(state.current_player)[over] == OVER_PLAYER).all()
        assert ((0 <= state.current_player) & (state.current_player < env.num_players)).all()
        # the observation field is the current player's
        index = step % batch
        assert np.array_equal(state.observation[index], e.observe_all(rows(state, index))[state.current_player[index]])
        key, pick, step_keys = jax.random.split(key, 3)
        actions = random_legal_actions(pick, state.legal_action_mask)
        before = state
        state = e.batch_step(state, actions, jax.random.split(step_keys, batch))
        # a vmapped step is the unbatched step of each row
        single = e.step(rows(before, index), actions[index], jax.random.split(step_keys, batch)[index])
        row = rows(state, index)
        assert all(jax.tree.leaves(jax.tree.map(np.array_equal, single, row)))


#: batch-last engines whose own tests check step_batch_last against the full step more closely in the default run
#: (test_jax_battlecards: the common and the rare step at every decision): here opt-in, with the engines that just
#: vmap step (slow compiles)
OWN_BATCH_LAST_TESTS = {"battlecards_v0"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow)
                                  if not make(name).batch_last or name in OWN_BATCH_LAST_TESTS else name
                                  for name in GAMES])
def test_step_batch_last_is_the_vmapped_step_with_the_batch_axis_last(name):
    e = engine(name)
    batch = 8
    state = e.batch_init(e.keys(3, batch))
    leaves = leaf_names(state)
    last = jax.jit(e.env.init_batch_last)(e.keys(3, batch))
    assert all(jax.tree.leaves(jax.tree.map(np.array_equal, batch_last(state), last)))
    key = jax.random.PRNGKey(4)
    ended_at = None  # batch-last engines: on until some games ended, and a few steps past (a step changes nothing)
    for step in range(1_000):
        key, pick, step_key = jax.random.split(key, 3)
        actions = random_legal_actions(pick, state.legal_action_mask)
        assert np.array_equal(actions, random_legal_actions(pick, last.legal_action_mask, action_axis=0))
        keys = jax.random.split(step_key, batch)
        state = e.batch_step(state, actions, keys)
        last = e.batch_step_last(last, actions, keys)
        equal = np.asarray(same_leaves(state, last))
        assert equal.all(), f"step {step}: {[leaf for leaf, ok in zip(leaves, equal, strict=True) if not ok]} differ"
        if ended_at is None and bool((state.terminated | state.truncated).any()):
            ended_at = step
        if step >= 59 and (not e.env.batch_last or (ended_at is not None and step >= ended_at + 5)):
            break
    if e.env.batch_last:
        assert ended_at is not None


# -- from_state -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_from_state_equals_the_python_position(name):
    """Observation of every seat, mask, current player, flags and rewards of random positions (the lockstep
    tests step through them; here every conversion path: from_state, from_states, card_envs.jax.from_state)."""
    e = engine(name)
    env = e.env
    game = card_envs.make_game(name)
    positions = random_positions(name, games=3, seed=11)
    stacked = env.from_states(positions)
    for i, position in enumerate(positions[:: max(1, len(positions) // 25)] + [positions[-1]]):
        one = env.from_state(position)
        assert bool(one.terminated) == position.terminated and bool(one.truncated) == position.truncated
        assert int(one._step_count) == len(position.history)
        assert np.allclose(one.rewards, position.rewards, atol=1e-6)
        if not position.is_over:
            assert int(one.current_player) == position.current_player
            assert np.array_equal(one.legal_action_mask, position.legal_mask().astype(bool))
        for seat in range(env.num_players):
            assert np.array_equal(e.observe_all(one)[seat], game.encode(position.view(seat))), (i, seat)
    for i in (0, len(positions) // 2, len(positions) - 1):
        one = env.from_state(positions[i])
        for field in ("current_player", "observation", "legal_action_mask", "rewards", *env.game_fields()):
            if field not in env.chance_fields:
                assert np.array_equal(getattr(one, field), getattr(stacked, field)[i]), field
    via_module = card_envs.jax.from_state(positions[-1])
    assert np.array_equal(via_module.observation, env.from_state(positions[-1]).observation)
    dealt = e.init(jax.random.PRNGKey(0))  # a converted state runs in the programs compiled for dealt ones
    for field in ("current_player", "observation", "legal_action_mask", "rewards", *env.game_fields()):
        assert getattr(one, field).dtype == getattr(dealt, field).dtype, field
        assert getattr(stacked, field).dtype == getattr(dealt, field).dtype, field


@pytest.mark.parametrize("name", GAMES)
def test_from_state_refuses_a_state_of_other_options(name):
    other = next(config for config in card_envs.make_game(name).variant_configs() if config)
    state = card_envs.make_game(name, **other).new_state(np.random.default_rng(0))
    with pytest.raises(ConfigError, match="make the engine with the state's options"):
        engine(name).env.from_state(state)


# -- the Pgx conventions ----------------------------------------------------------------------------------------


def _state_with_an_illegal_action(e, name):
    state = e.init(jax.random.PRNGKey(3))
    key = jax.random.PRNGKey(4)
    while bool(state.legal_action_mask.all()):
        key, pick = jax.random.split(key)
        state = e.step(state, random_legal_actions(pick, state.legal_action_mask[None])[0], key)
        assert not bool(state.terminated | state.truncated), f"{name}: no position with an illegal action found"
    return state


@pytest.mark.parametrize("name", GAMES)
def test_illegal_action_ends_the_episode_and_leaves_the_position(name):
    e = engine(name)
    env = e.env
    state = _state_with_an_illegal_action(e, name)
    mover = int(state.current_player)
    illegal = int(np.flatnonzero(~np.asarray(state.legal_action_mask))[0])
    for action in (illegal, env.num_actions, -1):  # not in the mask, and out of range on both sides
        after = e.step(state, jnp.int32(action), jax.random.PRNGKey(5))
        assert bool(after.terminated) and not bool(after.truncated)
        expected = np.full(env.num_players, 1.0 / (env.num_players - 1), np.float32)
        expected[mover] = -1.0
        assert np.allclose(after.rewards, expected) and abs(float(after.rewards.sum())) < 1e-6
        assert bool(after.legal_action_mask.all())
        assert int(after._step_count) == int(state._step_count) + 1
        for field in env.game_fields():
            assert np.array_equal(getattr(after, field), getattr(state, field)), field


@pytest.mark.parametrize("name", GAMES)
def test_step_after_the_end_changes_nothing_but_zero_rewards(name):
    e = engine(name)
    state = e.init(jax.random.PRNGKey(8))
    key = jax.random.PRNGKey(9)
    while not bool(state.terminated | state.truncated):
        key, pick, step_key = jax.random.split(key, 3)
        state = e.step(state, random_legal_actions(pick, state.legal_action_mask[None])[0], step_key)
    assert bool(state.legal_action_mask.all()) and int(state.current_player) == OVER_PLAYER
    after = e.step(state, jnp.int32(0), key)
    assert not bool(after.rewards.any())
    for field in ("current_player", "observation", "terminated", "truncated", "legal_action_mask", "_step_count",
                  *e.env.game_fields()):
        assert np.array_equal(getattr(after, field), getattr(state, field)), field


# -- make, options, errors ----------------------------------------------------------------------------------------


def test_make_rejects_unknown_names_and_names_without_engine(monkeypatch):
    with pytest.raises(ConfigError, match="unknown environment 'chess_v0'"):
        make("chess_v0")
    name = GAMES[0]
    monkeypatch.setitem(core.JAX_GAMES, name, "card_envs.jax.no_such_engine")
    with pytest.raises(ConfigError, match=f"{name} has no JAX engine yet"):
        make(name)


@pytest.mark.parametrize("name", GAMES)
def test_make_validates_options_like_the_python_engine(name):
    with pytest.raises(ConfigError, match="unknown option.*'no_such_option'.*valid options"):
        make(name, no_such_option=1)
    with pytest.raises(ConfigError, match="max_steps"):
        make(name, max_steps="many")
    env = engine(name).env
    assert env.id == name and env.version == "v0"
    assert env.num_actions == card_envs.make_game(name).num_actions
    assert env.observation_shape == (card_envs.make_game(name).observation_size,)
    assert repr(env).startswith(f"card_envs.jax.make({name!r}")


def test_an_unsupported_option_is_refused_at_make_naming_it():
    env_class = type(engine(GAMES[0]).env)

    class Restricted(env_class):
        unsupported_options = {"max_steps": "for this test"}

    Restricted()  # the default value is accepted
    with pytest.raises(ConfigError, match=r"option max_steps=5 is not supported by the JAX engine \(for this test\)"):
        Restricted(max_steps=5)


def test_step_without_a_key_needs_a_game_that_draws_nothing():
    class Drawing(type(engine(GAMES[0]).env)):
        step_uses_key = True

    env = Drawing()
    state = engine(GAMES[0]).init(jax.random.PRNGKey(0))  # compiled (eagerly: seconds of dispatches)
    with pytest.raises(ValueError, match="needs a PRNG key"):
        env.step(state, jnp.int32(0))


JAX_MODULES_LOADED = ("sys.exit(1 if [m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'pgx') "
                      "or m.startswith('card_envs.jax')] else 0)")


@pytest.mark.parametrize("also", ["", "import card_envs.jax; "])
def test_importing_card_envs_and_the_pettingzoo_envs_does_not_import_jax(also):
    code = ("import sys, importlib, card_envs; "
            "[importlib.import_module(f'card_envs.{n}').env() for n in card_envs.ENV_NAMES]; "
            f"[card_envs.make_game(n) for n in card_envs.ENV_NAMES]; {also}{JAX_MODULES_LOADED}")
    # the second case shows that the check sees an import of card_envs.jax
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == (1 if also else 0)


# -- auto-reset and the core helpers --------------------------------------------------------------------------


def _finished_batch(e, batch: int = 64):
    """A batch in which some episodes are over and some are not."""
    state = e.batch_init(e.keys(21, batch))
    key = jax.random.PRNGKey(22)
    while not bool((state.terminated | state.truncated).any()):
        key, pick, step_key = jax.random.split(key, 3)
        state = e.batch_step(state, random_legal_actions(pick, state.legal_action_mask),
                             jax.random.split(step_key, batch))
    return state


def test_reset_finished_redeals_at_most_slots_finished_states():
    e = engine(GAMES[0])
    state = _finished_batch(e)
    done = np.asarray(state.terminated | state.truncated)
    assert 0 < done.sum() < len(done)
    for slots in (None, 1):
        fresh = jax.jit(reset_finished, static_argnums=(0, 3))(e.env, state, jax.random.PRNGKey(0), slots)
        redealt = done & (np.asarray(fresh._step_count) == 0)
        assert redealt.sum() == (done.sum() if slots is None else 1)
        assert not np.asarray(fresh.terminated | fresh.truncated)[redealt].any()
        assert (np.asarray(fresh.rewards)[redealt] == 0).all()
        for field in ("observation", "_step_count", *e.env.game_fields()):  # the others are untouched
            assert np.array_equal(np.asarray(getattr(fresh, field))[~done], np.asarray(getattr(state, field))[~done])


def test_reset_finished_with_the_batch_axis_last_redeals_the_same_states():
    e = engine(GAMES[0])
    state = _finished_batch(e)
    reset = jax.jit(reset_finished, static_argnums=(0, 3, 4, 5))
    for slots in (1,):  # the scatter into the last axis (slots=None is one jnp.where either way)
        first = reset(e.env, state, jax.random.PRNGKey(5), slots, False, 0)
        last = reset(e.env, batch_last(state), jax.random.PRNGKey(5), slots, False, -1)
        assert all(jax.tree.leaves(jax.tree.map(np.array_equal, batch_last(first), last)))


def test_step_autoreset_keeps_the_ending_steps_rewards_on_the_next_deal():
    e = engine(GAMES[0])
    step = jax.jit(jax.vmap(step_autoreset(e.env)))
    batch = 32
    state = e.batch_init(e.keys(31, batch))
    key = jax.random.PRNGKey(32)
    seen_end = False
    for _ in range(400):
        key, pick, step_key = jax.random.split(key, 3)
        before = state
        state = step(state, random_legal_actions(pick, state.legal_action_mask), jax.random.split(step_key, batch))
        ended = np.asarray(state.terminated | state.truncated)
        assert (np.asarray(state._step_count)[ended] == 0).all()  # already the next episode's deal
        if ended.any():
            seen_end = True
            assert np.abs(np.asarray(state.rewards)[ended]).sum() > 0  # the last step's result is kept
        previously = np.asarray(before.terminated | before.truncated)
        assert (np.asarray(state._step_count)[previously & ~ended] == 1).all()  # flags cleared, the episode goes on
    assert seen_end


@pytest.mark.parametrize("hashed", [False, True])
def test_shuffled_is_a_uniform_permutation(hashed):
    deal = jax.jit(jax.vmap(lambda k: shuffled(k, 52, hashed=hashed)))
    permutations = np.asarray(deal(jax.random.split(jax.random.PRNGKey(0), 60_000)))
    assert (np.sort(permutations, axis=1) == np.arange(52)).all()
    assert chisquare(np.bincount(np.argmax(permutations == 0, axis=1), minlength=52)).pvalue > 1e-4  # position
    pairs = np.zeros((52, 52))
    np.add.at(pairs, (permutations[:, 0], permutations[:, 1]), 1)  # the first two cards together
    assert chisquare(pairs[~np.eye(52, dtype=bool)]).pvalue > 1e-4


def test_random_legal_actions_are_legal_and_uniform():
    mask = np.zeros((60_000, 14), bool)
    mask[:, [0, 3, 7, 13]] = True
    mask[::2, 5] = True
    actions = np.asarray(jax.jit(random_legal_actions)(jax.random.PRNGKey(1), jnp.asarray(mask)))
    assert mask[np.arange(len(mask)), actions].all()
    for half, legal in ((actions[1::2], [0, 3, 7, 13]), (actions[::2], [0, 3, 5, 7, 13])):
        assert chisquare(np.bincount(half, minlength=14)[legal]).pvalue > 1e-4


def test_random_legal_actions_play_the_only_legal_action_and_every_position_of_the_batch_differs():
    batch = 4096
    only = np.random.default_rng(0).integers(0, 14, batch)
    mask = np.zeros((batch, 14), bool)
    mask[np.arange(batch), only] = True
    pick = jax.jit(random_legal_actions, static_argnums=2)
    assert np.array_equal(pick(jax.random.PRNGKey(2), jnp.asarray(mask), -1), only)
    assert np.array_equal(pick(jax.random.PRNGKey(2), jnp.asarray(mask.T), 0), only)
    # every state draws its own choice: all-legal masks spread over every action, position by position
    actions = np.asarray(pick(jax.random.PRNGKey(3), jnp.ones((batch, 14), bool), -1))
    assert chisquare(np.bincount(actions, minlength=14)).pvalue > 1e-4
    assert chisquare(np.bincount(actions[::2] * 14 + actions[1::2], minlength=196)).pvalue > 1e-4  # neighbours


def test_random_legal_actions_refuses_other_axes():
    with pytest.raises(ValueError, match="action_axis"):
        random_legal_actions(jax.random.PRNGKey(0), jnp.ones((4, 3, 2), bool), action_axis=1)


def test_exact_ratios_round_as_the_python_encoding():
    """XLA turns ``n / d`` into ``n * (1 / d)``; the table must give float32(n / d) computed in float64."""
    parts = [(39, 39), (5, 52), (52, 52), (60, 112), (27, 79), (100, 152)]
    ratios = ExactRatios(parts)
    top = max(t for _, t in parts)
    numerators = jnp.asarray(np.repeat(np.arange(top + 1)[:, None], len(parts), axis=1), jnp.int32)
    got = np.asarray(jax.jit(jax.vmap(ratios))(numerators))
    rows = np.asarray(jax.jit(ratios.rows)(numerators.T))  # without the table's gather, batch last
    for column, (denominator, largest) in enumerate(parts):
        n = np.arange(largest + 1)
        assert np.array_equal(got[: largest + 1, column], (n / denominator).astype(np.float32)), denominator
        assert np.array_equal(rows[column, : largest + 1], (n / denominator).astype(np.float32)), denominator
