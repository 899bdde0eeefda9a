"""Lockstep: the JAX engine against the Python engine, decision by decision, over random games.

``run(name, options, games, seed)`` plays ``games`` random games on the Python engine (uniform legal
moves), records every decision, and replays them through the batched JAX engine:

=======================  ==========================================================================
check                    what must agree at every decision (and after the last step)
=======================  ==========================================================================
``step``                 ``env.step`` of the recorded action from the JAX state of the step before:
                         current player, legal mask (while playing), every seat's observation,
                         the step's rewards, terminated, truncated
``from_state``           ``env.from_state`` of the Python state (same items), at every decision
=======================  ==========================================================================

Where the Python step drew randomness (a shuffle or a deal: its generator moved), the JAX side
cannot follow -- its shuffles come from the step's key --, so that step's comparison is skipped and
the JAX state is re-synchronised with ``from_state`` of the Python state after it. Observations and
masks must be equal exactly; rewards to 1e-6 (the JAX engine sums float32, Python float64).

Games run in chunks (``chunk`` games replayed through one vmapped step per decision), so 10,000
games take minutes. The result lists every divergence (the first per game and check) with the
seed, the decision, what differed and both values, enough to replay the game on the Python side
(``card_envs.core.engine.replay(game, actions, seed=seed)``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import card_envs
from card_envs.core.engine import GameState
from card_envs.jax.core import CardEnv, make

REWARD_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Divergence:
    """One disagreement between the engines."""

    seed: int  #: the game's seed (``replay(game, actions[:decision], seed=seed)`` reaches the position)
    decision: int  #: decisions applied before it (0: the deal)
    check: str  #: ``"step"`` or ``"from_state"``
    what: str  #: ``current_player``, ``legal_action_mask``, ``observation[p]``, ``rewards``, ...
    python: Any
    jax: Any
    actions: tuple[int, ...]  #: the game's actions up to and including the step that diverged

    def __str__(self) -> str:
        return (f"seed {self.seed}, decision {self.decision}, {self.check}: {self.what} differs\n"
                f"  python: {self.python}\n  jax:    {self.jax}\n  actions: {list(self.actions)}")


@dataclass
class Report:
    """What a lockstep run compared and where the engines disagreed."""

    name: str
    options: dict[str, Any]
    games: int = 0
    decisions: int = 0
    resyncs: int = 0  #: steps where Python drew randomness (compared via ``from_state`` only)
    divergences: list[Divergence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.divergences

    def summary(self) -> str:
        head = (f"{self.name} {self.options}: {self.games} games, {self.decisions} decisions, "
                f"{self.resyncs} re-synchronised after a Python shuffle, {len(self.divergences)} divergences")
        return "\n".join([head, *(str(d) for d in self.divergences[:5])])


@dataclass
class _Episode:
    """One recorded Python game: the state before every decision and after the last one."""

    seed: int
    states: list[GameState]  #: len(actions) + 1 states
    actions: list[int]
    drew: list[bool]  #: the Python step drew randomness


def run(name: str, options: Mapping[str, Any] | None = None, games: int = 100, seed: int = 0,
        chunk: int = 256, check_from_state: bool = True, max_divergences: int = 20) -> Report:
    """Play ``games`` random Python games (seeds ``seed``, ``seed + 1``, ...) and compare them with the
    JAX engine; see the module docstring. Stops early once ``max_divergences`` are found."""
    options = dict(options or {})
    env = make(name, **options)
    game = card_envs.make_game(name, **options)
    report = Report(name, options)
    step = jax.jit(jax.vmap(env.step))
    observe_all = jax.jit(jax.vmap(lambda s: jax.vmap(lambda p: env.observe(s, p))(jnp.arange(env.num_players))))
    for first in range(seed, seed + games, chunk):
        episodes = [_record(game, s) for s in range(first, min(first + chunk, seed + games))]
        _compare_chunk(env, episodes, step, observe_all, report, check_from_state)
        report.games += len(episodes)
        if len(report.divergences) >= max_divergences:
            break
    return report


def _record(game: Any, seed: int) -> _Episode:
    """A random game on the Python engine (deal from ``seed``, moves from a second generator)."""
    state = game.new_state(np.random.default_rng(seed))
    mover = np.random.default_rng([seed, 1])
    states, actions, drew = [state.clone()], [], []
    while not state.is_over:
        legal = state.legal_actions()
        action = int(legal[mover.integers(len(legal))])
        before = state.rng.bit_generator.state
        state.apply(action)
        drew.append(state.rng.bit_generator.state != before)
        actions.append(action)
        states.append(state.clone())
    return _Episode(seed, states, actions, drew)


def _expected(states: list[GameState], num_players: int, num_actions: int) -> dict[str, np.ndarray]:
    """What the Python engine says of each state, stacked."""
    game = states[0].game
    return {
        "current_player": np.array([s.current_player for s in states], np.int32),
        "legal_action_mask": np.stack([s.legal_mask().astype(bool) for s in states]),
        "observation": np.stack([np.stack([game.encode(s.view(p)) for p in range(num_players)]) for s in states]),
        "rewards": np.array([s.rewards for s in states], np.float32),
        "terminated": np.array([s.terminated for s in states]),
        "truncated": np.array([s.truncated for s in states]),
    }


def _compare_chunk(env: CardEnv, episodes: list[_Episode], step: Any, observe_all: Any, report: Report,
                   check_from_state: bool) -> None:
    # Every batch has one row per episode (a finished episode repeats its last state), so each jitted
    # function compiles once per chunk size rather than once per number of games still running.
    size = len(episodes)
    longest = max(len(e.actions) for e in episodes)
    key = jax.random.PRNGKey(episodes[0].seed)
    jax_state = None
    last_states: dict[int, Any] = {}  # the converted last state of each finished episode (it repeats)
    for t in range(longest + 1):
        live = [i for i, e in enumerate(episodes) if t < len(e.states)]
        expected = _expected([episodes[i].states[t] for i in live], env.num_players, env.num_actions)
        report.decisions += sum(1 for i in live if t < len(episodes[i].actions))
        resync = [i for i in live if t > 0 and episodes[i].drew[t - 1]]
        converted = None
        if check_from_state or t == 0 or resync:
            converted = _from_states(env, episodes, t, last_states)
        if t > 0:
            # the JAX step of the recorded action, from the JAX state of the step before
            actions = np.array([e.actions[t - 1] if t - 1 < len(e.actions) else 0 for e in episodes], np.int32)
            key, sub = jax.random.split(key)
            jax_state = step(jax_state, jnp.asarray(actions), jax.random.split(sub, size))
            stepped = [i for i in live if i not in set(resync)]
            report.resyncs += len(resync)
            _check(report, "step", episodes, t, live, stepped, expected, jax_state, observe_all)
            # re-synchronise where Python drew randomness (a shuffle the JAX side cannot follow)
            if resync:
                jax_state = _replace(jax_state, resync, converted)
        else:
            jax_state = converted
        if check_from_state:
            _check(report, "from_state", episodes, t, live, live, expected, converted, observe_all)


def _from_states(env: CardEnv, episodes: list[_Episode], t: int, last_states: dict[int, Any]) -> Any:
    """``env.from_states`` of every episode's state ``t`` (its last state once finished, converted once)."""
    rows = []
    for i, episode in enumerate(episodes):
        if t < len(episode.states) - 1:
            rows.append(env._converted(episode.states[t]))
        else:
            if i not in last_states:
                last_states[i] = env._converted(episode.states[-1])
            rows.append(last_states[i])
    return env._finish_conversions(jax.tree.map(lambda *leaves: np.stack(leaves), *rows))


def _check(report: Report, check: str, episodes: list[_Episode], t: int, live: list[int], compared: list[int],
           expected: dict[str, np.ndarray], jax_state: Any, observe_all: Any, batch: list[int] | None = None) -> None:
    """Compare ``jax_state`` (rows = all episodes, or ``batch``) with ``expected`` (rows = ``live``)."""
    if not compared:
        return
    rows = batch if batch is not None else list(range(len(episodes)))
    row_of = {episode: r for r, episode in enumerate(rows)}
    got = {
        "current_player": np.asarray(jax_state.current_player),
        "legal_action_mask": np.asarray(jax_state.legal_action_mask),
        "observation": np.asarray(observe_all(jax_state)),
        "rewards": np.asarray(jax_state.rewards),
        "terminated": np.asarray(jax_state.terminated),
        "truncated": np.asarray(jax_state.truncated),
    }
    position = {episode: k for k, episode in enumerate(live)}
    seen = {(d.seed, d.check) for d in report.divergences}
    for i in compared:
        episode = episodes[i]
        if (episode.seed, check) in seen:
            continue
        for what, python, mine in _differences(expected, got, position[i], row_of[i]):
            report.divergences.append(Divergence(episode.seed, t, check, what, python, mine,
                                                 tuple(episode.actions[:t])))
            break


def _differences(expected: dict[str, np.ndarray], got: dict[str, np.ndarray], e: int, g: int) -> Iterator[tuple]:
    over = bool(expected["terminated"][e])
    for what in ("current_player", "terminated", "truncated"):
        if expected[what][e] != got[what][g]:
            yield what, expected[what][e], got[what][g]
    if not over and not np.array_equal(expected["legal_action_mask"][e], got["legal_action_mask"][g]):
        yield ("legal_action_mask", np.flatnonzero(expected["legal_action_mask"][e]).tolist(),
               np.flatnonzero(got["legal_action_mask"][g]).tolist())
    if not np.allclose(expected["rewards"][e], got["rewards"][g], rtol=REWARD_TOLERANCE, atol=REWARD_TOLERANCE):
        yield "rewards", expected["rewards"][e].tolist(), got["rewards"][g].tolist()
    for p, (want, have) in enumerate(zip(expected["observation"][e], got["observation"][g], strict=True)):
        if not np.array_equal(want, have):
            where = np.flatnonzero(want != have)
            yield f"observation[{p}] at indices {where.tolist()}", want[where].tolist(), have[where].tolist()


def _replace(batch: Any, rows: list[int], replacements: Any) -> Any:
    """``batch`` with rows ``rows`` taken from the same rows of ``replacements`` (same batch size)."""
    take = np.zeros(len(batch.current_player), np.bool_)
    take[rows] = True
    take = jnp.asarray(take)

    def pick(whole: Any, part: Any) -> Any:
        return jnp.where(take.reshape(-1, *([1] * (whole.ndim - 1))), part, whole)

    return jax.tree.map(pick, batch, replacements)
