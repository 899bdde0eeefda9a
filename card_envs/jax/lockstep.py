"""Lockstep: the JAX engine against the Python engine, decision by decision, over random games.

``Lockstep(name, options).run(games, seed)`` plays ``games`` random games on the Python engine (uniform
legal moves), records every position, and replays them through the batched JAX engine:

=================  ==========================================================================
check              what must agree at every decision (and after the last step)
=================  ==========================================================================
``step``           ``env.step`` of the recorded action from the JAX state of the step before
                   (the JAX engine's own trajectory): current player, legal mask (while
                   playing), every seat's observation, the step's rewards, terminated,
                   truncated, step count, and every game array (but the ``chance_fields``)
                   with those of ``from_state`` of the Python position
``from_state``     ``env.from_state`` of the Python position (the same items but the arrays)
=================  ==========================================================================

Where the Python step drew randomness (a shuffle for the next deal: its generator moved), the JAX
side cannot follow -- its shuffles come from its own key --, so that step's comparison is skipped and
the JAX state is re-synchronised with ``from_state`` of the Python position after it. Observations,
masks and arrays must be equal exactly; rewards to 1e-6 (the JAX engine sums float32, Python float64).
Once the episode is over the current player is ``0`` on the JAX side (Pgx) where Python says ``-1``,
and the masks are not compared (Pgx: all True; Python: all False).

``max_decisions`` cuts every game off after that many decisions (its positions up to there compared, the rest
of it not played): a quick check whose time no single long game sets (a default Battlecards game runs up to 1,000
rounds, some random ones over 2,000 decisions).

Games are replayed in chunks of fixed size (``chunk`` games through one vmapped step per decision;
fixed shapes, so nothing is compiled twice), so 10,000 games take minutes. The report lists the first
divergence per game and check with the seed, the decision, what differed and both values, enough to
replay the game on the Python side: the deal is ``game.new_state(numpy.random.default_rng(seed))``.

Command line: ``python -m card_envs.jax.lockstep revolutionary_war_v0 --games 1000 [--config JSON]``.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import card_envs
from card_envs.core.commands import CommandParser, checked_game, command_line, json_object, positive_int
from card_envs.core.engine import GameState
from card_envs.jax.core import OVER_PLAYER, CardEnv, make

REWARD_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Divergence:
    """One disagreement between the engines."""

    seed: int  #: the game's seed (``game.new_state(default_rng(seed))`` deals it)
    decision: int  #: decisions applied before the compared position (0: the deal)
    check: str  #: ``"step"`` or ``"from_state"``
    what: str  #: ``current_player``, ``legal_action_mask``, ``observation[p] at ...``, ``_hands``, ...
    python: Any
    jax: Any
    actions: tuple[int, ...]  #: the game's actions up to the compared position

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
    compared_steps: int = 0  #: JAX steps compared with the Python step
    resyncs: int = 0  #: steps where Python drew randomness (compared via ``from_state`` only)
    cut: int = 0  #: games cut off at ``max_decisions`` before their end
    seconds: float = 0.0
    divergences: list[Divergence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.divergences

    def summary(self) -> str:
        head = (f"{self.name} {self.options or '{}'}: {self.games} games, {self.decisions} decisions, "
                f"{self.compared_steps} JAX steps compared, {self.resyncs} re-synchronised after a Python "
                f"shuffle, {len(self.divergences)} divergences ({self.seconds:.1f} s)"
                + (f", {self.cut} games cut off at the decision limit" if self.cut else ""))
        return "\n".join([head, *(str(d) for d in self.divergences[:5])])


class _Game:
    """One random game on the Python engine, played along with the comparison (no position is stored: the
    chunk converts each live position once, at its decision). Deal from ``seed``, moves from a second
    generator, as ``game.new_state(default_rng(seed))`` and ``default_rng([seed, 1])``."""

    def __init__(self, game: Any, seed: int) -> None:
        self.seed = seed
        self.state: GameState = game.new_state(np.random.default_rng(seed))
        self.mover = np.random.default_rng([seed, 1])
        self.actions: list[int] = []
        self.drew = False  #: the last Python step drew randomness (a shuffle)

    def play(self) -> int:
        """Apply a uniform random legal move; returns it."""
        legal = self.state.legal_actions()
        action = int(legal[self.mover.integers(len(legal))])
        before = self.state.rng.bit_generator.state
        self.state.apply(action)
        self.drew = self.state.rng.bit_generator.state != before
        self.actions.append(action)
        return action


class Lockstep:
    """The compiled functions of one engine under one config, reused across runs (compiling is slow)."""

    def __init__(self, name: str, options: Mapping[str, Any] | None = None, chunk: int = 256) -> None:
        self.name = name
        self.options = dict(options or {})
        self.chunk = chunk
        self.env: CardEnv = make(name, **self.options)
        self.game = card_envs.make_game(name, **self.options)
        env = self.env
        seats = jnp.arange(env.num_players)
        self._step = jax.jit(jax.vmap(env.step))
        self._observe_all = jax.jit(jax.vmap(lambda s: jax.vmap(lambda p: env.observe(s, p))(seats)))
        self._select = jax.jit(lambda rows, a, b: jax.tree.map(
            lambda x, y: jnp.where(rows.reshape(rows.shape + (1,) * (x.ndim - 1)), x, y), a, b))
        self._step_keys = jax.jit(lambda key, t: jax.random.split(jax.random.fold_in(key, t), chunk))
        self.compared_fields = tuple(f for f in env.game_fields() if f not in env.chance_fields)

    def run(self, games: int = 100, seed: int = 0, check_from_state: bool = True, max_divergences: int = 20,
            progress: Callable[[str], None] | None = None, max_decisions: int | None = None) -> Report:
        """Play ``games`` random Python games (seeds ``seed``, ``seed + 1``, ...) and compare them with the
        JAX engine; see the module docstring. Stops early once ``max_divergences`` are found; ``max_decisions``
        (``None``: no limit) cuts each game off after that many decisions."""
        if max_decisions is not None and max_decisions < 1:
            raise ValueError(f"max_decisions must be at least 1, got {max_decisions}")
        report = Report(self.name, self.options)
        start = time.perf_counter()
        for first in range(seed, seed + games, self.chunk):
            seeds = range(first, min(first + self.chunk, seed + games))
            self._compare_chunk([_Game(self.game, s) for s in seeds], report, check_from_state, max_decisions)
            report.games += len(seeds)
            report.seconds = time.perf_counter() - start
            if progress is not None:
                progress(f"{self.name}: {report.games}/{games} games, {len(report.divergences)} divergences, "
                         f"{report.seconds:.0f} s")
            if len(report.divergences) >= max_divergences:
                break
        report.seconds = time.perf_counter() - start
        return report

    def _compare_chunk(self, games: list[_Game], report: Report, check_from_state: bool,
                       max_decisions: int | None = None) -> None:
        """Play ``games`` on the Python engine and replay them through the vmapped JAX step, decision by
        decision. Only the live games' positions are converted and encoded at each decision (a finished game
        keeps its last rows, which are not compared again): a chunk costs its decisions, not its longest game
        times its size."""
        env, size = self.env, len(games)
        rows = np.array(list(range(size)) + [size - 1] * (self.chunk - size))  # pad to the compiled batch size
        fields: dict[str, np.ndarray] = {}  # the chunk's converted positions, as stacked numpy arrays
        expected: dict[str, np.ndarray] = {}  # what the Python engine says of them
        finished_before = np.zeros(self.chunk, bool)  # games already over (and compared) at an earlier decision
        jax_state = None
        key = jax.random.PRNGKey(games[0].seed)
        for t in itertools.count():
            live = ~finished_before & (np.arange(self.chunk) < size)
            changed = np.flatnonzero(live[:size])
            _put_rows(fields, changed, [env._base_fields(games[r].state, (games[0].seed, t, int(r))) for r in changed],
                      size, self.chunk)
            _put_rows(expected, changed, [_expected(games[r].state, env.num_players) for r in changed], size,
                      self.chunk)
            converted = env._finish_conversions({name: value.copy() for name, value in fields.items()})
            at_limit = t == max_decisions  # the last position compared: the rest of every game is not played
            if not at_limit:  # a decision to be made (and compared after it)
                report.decisions += sum(1 for r in changed if not games[r].state.is_over)
            stepped = np.zeros(self.chunk, bool)
            if jax_state is not None:
                drew = live & np.array([games[r].drew for r in rows])
                stepped = live & ~drew
                report.resyncs += int(drew.sum())
                report.compared_steps += int(stepped.sum())
                diverged = self._check(report, "step", games, t, stepped, expected, jax_state, converted)
                stepped &= ~diverged
            if check_from_state:
                self._check(report, "from_state", games, t, live, expected, converted, None)
            finished_before |= live & expected["over"]
            if at_limit:
                report.cut += int((live & ~expected["over"]).sum())
                finished_before[:] = True
            if finished_before[:size].all():
                break
            if jax_state is None:
                jax_state = converted
            elif not (stepped | ~live).all():  # a live row re-synchronised (or diverged): it continues from Python
                jax_state = self._select(jnp.asarray(stepped), jax_state, converted)
            # (rows no longer live, finished or padding, are never compared again: what they hold does not matter)
            actions = np.zeros(self.chunk, np.int32)
            for r in np.flatnonzero(live & ~expected["over"]):
                actions[r] = games[r].play()
            jax_state = self._step(jax_state, jnp.asarray(actions), self._step_keys(key, 1_000_000 + t))

    def _check(self, report: Report, check: str, games: list[_Game], t: int, rows: np.ndarray,
               expected: dict[str, np.ndarray], jax_state: Any, reference: Any) -> np.ndarray:
        """Compare ``jax_state`` with ``expected`` (and its game arrays with ``reference``'s) on ``rows``;
        record the first divergence per game and check. Returns the rows that diverged."""
        diverged = np.zeros(len(rows), bool)
        if not rows.any():
            return diverged
        got = {
            "current_player": np.asarray(jax_state.current_player),
            "legal_action_mask": np.asarray(jax_state.legal_action_mask),
            "observation": np.asarray(self._observe_all(jax_state)),
            "rewards": np.asarray(jax_state.rewards),
            "terminated": np.asarray(jax_state.terminated),
            "truncated": np.asarray(jax_state.truncated),
            "_step_count": np.asarray(jax_state._step_count),
        }
        arrays = {}
        if reference is not None:
            arrays = {name: (np.asarray(getattr(reference, name)), np.asarray(getattr(jax_state, name)))
                      for name in self.compared_fields}
        seen = {(d.seed, d.check) for d in report.divergences}
        suspects = rows & _rows_that_differ(expected, got, arrays)  # the per-row report below only where needed
        for r in np.flatnonzero(suspects).tolist():
            episode = games[r]
            differences = list(_differences(expected, got, r))
            differences += [(name, want[r].tolist(), have[r].tolist()) for name, (want, have) in arrays.items()
                            if not _same_array(want[r], have[r])]
            if differences:
                diverged[r] = True
                if (episode.seed, check) not in seen:
                    what, python, mine = differences[0]
                    report.divergences.append(Divergence(episode.seed, t, check, what, python, mine,
                                                         tuple(episode.actions[:t])))
        return diverged


def run(name: str, options: Mapping[str, Any] | None = None, games: int = 100, seed: int = 0, chunk: int = 256,
        **kwargs: Any) -> Report:
    """``Lockstep(name, options, chunk).run(games, seed, **kwargs)`` (compiles the engine each call)."""
    return Lockstep(name, options, chunk).run(games, seed, **kwargs)


def _expected(state: GameState, num_players: int) -> dict[str, np.ndarray]:
    """What the Python engine says of a position (current player ``0`` once over, as Pgx)."""
    return {
        "current_player": np.int32(OVER_PLAYER if state.is_over else state.current_player),
        "legal_action_mask": state.legal_mask().astype(bool),
        "observation": np.stack([state.game.encode(state.view(p)) for p in range(num_players)]),
        "rewards": np.asarray(state.rewards, np.float32),
        "terminated": np.bool_(state.terminated),
        "truncated": np.bool_(state.truncated),
        "_step_count": np.int32(len(state.history)),
        "over": np.bool_(state.is_over),
    }


def _put_rows(stacked: dict[str, np.ndarray], changed: np.ndarray, values: list[dict[str, Any]], size: int,
              chunk: int) -> None:
    """Write the per-game ``values`` into the rows ``changed`` of ``stacked``: ``chunk`` rows, created on the
    first call (when all ``size`` games change); the padding rows after the last game repeat it."""
    if not stacked:
        padded = values + [values[-1]] * (chunk - size)
        stacked.update({name: np.stack([np.asarray(value[name]) for value in padded]) for name in values[0]})
        return
    if not values:
        return
    for name, array in stacked.items():
        array[changed] = np.stack([value[name] for value in values])
        array[size:] = array[size - 1]


def _same_array(want: np.ndarray, have: np.ndarray) -> bool:
    """Game arrays agree: exactly, or for float arrays (running sums of rewards) to the reward tolerance."""
    return not _differ(want[None], have[None])[0]


def _differ(want: np.ndarray, have: np.ndarray, exact: bool = False) -> np.ndarray:
    """Per row (leading axis): the arrays differ (exactly, or floats beyond the reward tolerance; never less
    strict than ``np.allclose`` with that tolerance)."""
    if np.issubdtype(want.dtype, np.floating) and not exact:
        bad = np.abs(want - have) > REWARD_TOLERANCE * (1 + np.minimum(np.abs(want), np.abs(have)))
    else:
        bad = want != have
    return bad.reshape(len(bad), -1).any(axis=1)


def _rows_that_differ(expected: dict[str, np.ndarray], got: dict[str, np.ndarray],
                      arrays: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The rows where :func:`_differences` or a game array could report something (vectorised over rows)."""
    bad = np.zeros(len(expected["over"]), bool)
    for what in ("current_player", "terminated", "truncated", "_step_count", "rewards"):
        bad |= _differ(expected[what], got[what])
    bad |= _differ(expected["observation"], got["observation"], exact=True)
    bad |= ~expected["over"] & _differ(expected["legal_action_mask"], got["legal_action_mask"])
    for want, have in arrays.values():
        bad |= _differ(want, have)
    return bad


def _differences(expected: dict[str, np.ndarray], got: dict[str, np.ndarray], r: int) -> Iterator[tuple]:
    for what in ("current_player", "terminated", "truncated", "_step_count"):
        if expected[what][r] != got[what][r]:
            yield what, expected[what][r].item(), got[what][r].item()
    if not expected["over"][r] and not np.array_equal(expected["legal_action_mask"][r], got["legal_action_mask"][r]):
        yield ("legal_action_mask", np.flatnonzero(expected["legal_action_mask"][r]).tolist(),
               np.flatnonzero(got["legal_action_mask"][r]).tolist())
    if not np.allclose(expected["rewards"][r], got["rewards"][r], rtol=REWARD_TOLERANCE, atol=REWARD_TOLERANCE):
        yield "rewards", expected["rewards"][r].tolist(), got["rewards"][r].tolist()
    for p, (want, have) in enumerate(zip(expected["observation"][r], got["observation"][r], strict=True)):
        if not np.array_equal(want, have):
            where = np.flatnonzero(want != have)
            yield f"observation[{p}] at indices {where.tolist()}", want[where].tolist(), have[where].tolist()


@command_line("python -m card_envs.jax.lockstep")
def main(argv: Sequence[str] | None, prog: str) -> int:
    parser = CommandParser(prog=prog, description=__doc__.split("\n\n")[0],
                           epilog="example:\n  card-envs lockstep bloodlines_v0 --variants --games 200")
    parser.add_argument("name", choices=card_envs.ENV_NAMES, help="env name, e.g. revolutionary_war_v0")
    parser.add_argument("--config", type=json_object, default={}, help="game options as JSON (default: {})")
    parser.add_argument("--variants", action="store_true", help="every config of the game's variant_configs()")
    parser.add_argument("--games", type=positive_int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=positive_int, default=512)
    parser.add_argument("--max-decisions", type=positive_int, default=None,
                        help="cut every game off after this many decisions (default: play every game to its end)")
    args = parser.parse_args(argv)
    configs = checked_game(args.name).variant_configs() if args.variants else [args.config]
    for config in configs:
        checked_game(args.name, config)  # every table's options, before any game is played
    failed = False
    for config in configs:
        report = Lockstep(args.name, config, args.chunk).run(
            args.games, args.seed, progress=lambda message: print(message, file=sys.stderr, flush=True),
            max_decisions=args.max_decisions)
        print(report.summary(), flush=True)
        failed |= not report.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
