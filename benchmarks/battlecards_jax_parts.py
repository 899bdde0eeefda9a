"""Where a decision of the batched Battlecards engine goes: the timed loop against the same loop without a part.

Run from the repository root (needs the ``jax`` extra)::

    python -m benchmarks.battlecards_jax_parts                  # six players, batch 512, one device
    python -m benchmarks.battlecards_jax_parts --players 2 --batch 1024 --repeats 7
    taskset -c 0 python -m benchmarks.battlecards_jax_parts     # one core: no other thread in the figures
    python -m benchmarks.battlecards_jax_parts --config '{"num_players": 4, "retire_lowest_on_flip": true}'
    git worktree add /tmp/before HEAD~1                         # then the engine before a change, in the same run:
    python -m benchmarks.battlecards_jax_parts --rows engine,against --against /tmp/before
    python -m benchmarks.battlecards_jax_parts --config '{"num_players": 4, "retire_lowest_on_flip": true}' --full-step

Every row runs ``benchmarks.jax_throughput``'s batch-last loop (``make_runner``: ``env.step_batch_last``, a
random legal action per game, ``reset_finished(..., lazy=True)``) on an engine of the same config, for ``--steps``
steps per timed call, rows round-robin, repeat by repeat; each figure is the median of this process's CPU time
per game-step.

=========================  ==========================================================================================
row (``--rows`` key)       the engine
=========================  ==========================================================================================
``engine``                 ``card_envs.jax.battlecards.Env``, as shipped
``no rare step``           the common step's result for every game: decisions it does not cover (wars, multi-card
(``no-rare``)              refills, ...) are left wrong. **Not the rules**: a bound on what the rare step costs
``no observation``         the observation is zeros (the step, mask and rewards as shipped): a bound on what the
(``no-observation``)       533 observation entries cost
``neither``                both of the above: what the common step, the mask and the loop cost
``default rules``          the shipped engine with every option at its default but ``num_players`` (with
(``default``)              ``--config`` only): issue 41 asks every config for at least half of its rate
``engine at PATH``         ``PATH/card_envs/jax/battlecards.py`` (``--against PATH``, repeatable: another checkout,
(``against``)              e.g. a ``git worktree`` of the commit before a change), the same config: a change timed
                           against the engine before it in one process, round-robin (runs a minute apart on this
                           shared machine differ by up to 25%; rows of one run, a few percent)
=========================  ==========================================================================================

``--full-step`` (a config with ``retire_lowest_on_flip``) times instead the rare step's own work: the vmapped full
step (``_full_game_step``) on the games one position of the loop leaves to it (after ``--steps`` steps, as many as
the rare step's slots), in CPU us a call, with a part left out in each row (not the rules: bounds):

===========================  ========================================================================================
row                          the full step without
===========================  ========================================================================================
``full step``                nothing: as shipped
``no round-end refill``      the fills at the round's end (R16.2 with R21, ``_refill_retiring``)
``no recycle in the fills``  every fill's recycle and its draws (R5 in R6 and R11a, ``_fill_recycled``)
``war procedure: one pass``  the war procedure's passes after the first (``_war_retiring``: one commitment a pass)
``no war procedure``         any pass of the war procedure (R8-R13 after the decision: ``_war_retiring``)
``no fills``                 every fill, the R11a fill of a war's commitment (``_fill_seat``) and the round-end
                             refill (``_fill_retiring``)
``no commitment moves``      the cards a war's commitments move (the face-down cards, ``_move_seat``)
===========================  ========================================================================================

On 4 players with retirement (cfg2 of ``variant_configs()``: ``taskset -c 0 python -m
benchmarks.battlecards_jax_parts --config CFG2 --full-step --repeats 5``, 51 slots, 2026-11-30): the full step 1,441
us a call; without the war procedure 455 (3.15x), without the fills 716 (1.94x), without the round-end refill 1,172,
without the recycles in the fills 1,085, with one war pass 1,302, without the commitments' moves 1,278. The war
procedure is most of a slot's cost, and in it the R11a fill (``no fills`` less ``no round-end refill``).

Each table also counts the XLA kernels a row launches (``XLA kernels a step`` of the loop, ``a call`` of the full
step: :func:`kernel_launches`, from a ``jax.profiler`` trace). Unlike a time, the count does not move with the
machine's load (the rare step's vmapped full step launches 847 kernels a call, 4 players with retirement, 51 slots,
2026-11-30); it is not a time, though: changes that saved 5-9% of the loop's kernels took 0.98-1.07x its time (each
kernel works on every slot), so a change is still timed, paired (``--against``).

Also printed: the share of the running games' next decisions (a random legal action, at ``--steps`` positions of
the loop) that the common step does not cover, which the rare step takes, by what the step does with them (a
round's end, a war's end, a war level that starts, anything else; and with retirement how many recycle), and how
many games wait for the rare step at a position against its slots (more: a second round). On cfg4 (6 players,
jokers, retirement, ordered piles; 200 positions, a throwaway form of this, 2026-11-30) 15.9% of the decisions:
round ends 4.7% (4.1% with a recycle), war ends 5.0% (1.8%), war levels 2.9%, commitments 3.3%. The bounds say
how far a faster part could take the engine: issue 23's six-player 10x (against the Python engine) needs the whole
loop about 1.4-1.6x faster than in its benchmark runs.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

if __package__ in (None, ""):  # run as ``python benchmarks/battlecards_jax_parts.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from card_envs.core.commands import CommandParser, guarded, json_object  # noqa: E402
from card_envs.core.errors import ConfigError  # noqa: E402

#: calls of the vmapped full step a timed repeat of ``--full-step`` makes
FULL_STEP_CALLS = 20
#: the ``--rows`` keys, in the report's order, and each row's name
ROWS = {"engine": "engine", "no-rare": "no rare step", "no-observation": "no observation", "neither": "neither",
        "default": "default rules", "against": "engine at {path}"}


def engines(config: dict[str, Any], rows: Sequence[str] = ("engine", "no-rare", "no-observation", "neither"),
            against: Sequence[Path] = ()) -> dict[str, Any]:
    """The engines of the ``rows`` (``ROWS`` keys) for Battlecards options ``config`` (``default``: the same
    ``num_players``, every other option at its default; ``against``: the engine module of each checkout in
    ``against``, a row each)."""
    import jax.numpy as jnp

    from card_envs.battlecards.encoding import OBSERVATION_SIZE
    from card_envs.jax import battlecards

    class NoRareStep(battlecards.Env):
        def _rare_steps(self, state, action, keys, common, covered):  # noqa: ANN001, ANN202
            return common

    class NoObservation(battlecards.Env):
        def _encode(self, g, o):  # noqa: ANN001, ANN202
            return jnp.zeros((OBSERVATION_SIZE, *jnp.shape(o)), jnp.float32)

    class Neither(NoRareStep, NoObservation):
        pass

    kinds = {"engine": battlecards.Env, "no-rare": NoRareStep, "no-observation": NoObservation, "neither": Neither}
    made = {}
    for key in rows:
        if key == "default":
            made[ROWS[key]] = battlecards.Env(num_players=config["num_players"])
        elif key == "against":  # main refuses the row without --against
            for root in against:
                made[ROWS[key].format(path=root)] = checkout_engine(Path(root)).Env(**config)
        else:
            made[ROWS[key]] = kinds[key](**config)
    return made


def checkout_engine(root: Path) -> Any:
    """``card_envs/jax/battlecards.py`` of the checkout at ``root``, imported beside the installed one (as the
    module ``battlecards_at_<n>``; its imports are the installed package's, so it must be compatible with this
    ``card_envs.jax.core``)."""
    import importlib.util

    path = Path(root) / "card_envs" / "jax" / "battlecards.py"
    if not path.is_file():
        raise ConfigError(f"--against {root}: no card_envs/jax/battlecards.py there (give a checkout's root)")
    name = f"battlecards_at_{len([m for m in sys.modules if m.startswith('battlecards_at_')])}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the state's dataclass looks its module up while it is made
    spec.loader.exec_module(module)
    return module


def _covered(env: Any, states: Any, key: Any) -> tuple[Any, Any, Any]:
    """A random legal action for each game of ``states`` (batch axis last), its step key, and whether the common
    step covers that decision."""
    import jax

    from card_envs.jax.core import random_legal_actions

    pick, step_key = jax.random.split(key)
    actions = random_legal_actions(pick, states.legal_action_mask, action_axis=0)
    keys = jax.random.split(step_key, states.current_player.shape[-1])
    seeds = jax.vmap(env.step_seed)(keys)
    return actions, keys, env._common_step(env._game(states), actions, seeds)[1]


#: what the full step does with a decision the common step leaves to it (:func:`uncovered_kinds`)
UNCOVERED_KINDS = ("a round's end", "a war's end", "a war level that starts", "a commitment or another decision")


def uncovered_kinds(war_before: np.ndarray, war_after: np.ndarray, round_ended: np.ndarray) -> np.ndarray:
    """Per decision, the index in :data:`UNCOVERED_KINDS` of what its step did: the round ended without a war
    (none before it, none started), a war ended (the round ended in one), a war level started, or anything else
    (a war's commitment, a decision with more to come)."""
    return np.select([round_ended & (war_before == 0) & (war_after == 0), round_ended, war_after > war_before],
                     [0, 1, 2], 3)


class Uncovered(NamedTuple):
    """What the rare step gets over the positions of :func:`uncovered`."""

    share: float  #: of the running games' decisions, those the common step does not cover
    kinds: dict[str, tuple[float, float]]  #: per kind, its share of the decisions and that with a recycle (R21)
    waiting: list[int]  #: per position, the games the rare step steps
    slots: int  #: the rare step's slots a round (``Env._rare_slots``)

    def summary(self) -> str:
        """One line: the share, by kind, and the games waiting per position against the slots."""
        kinds = "; ".join(f"{kind} {part:.1%}" + (f", {recycled:.1%} with a recycle" if recycled else "")
                          for kind, (part, recycled) in self.kinds.items() if part)
        waiting = np.asarray(self.waiting)
        low, median, high = np.percentile(waiting, [10, 50, 90])
        return (f"decisions the common step does not cover: {self.share:.1%} ({kinds}); games waiting for the rare "
                f"step a position: median {median:.0f}, 10-90% {low:.0f}-{high:.0f}, more than its {self.slots} "
                f"slots (a second round) at {(waiting > self.slots).mean():.0%} of the positions")


def uncovered(env: Any, states: Any, steps: int, run: Any) -> Uncovered:
    """The running games' next decisions (a random legal action) that the common step does not cover, over
    ``steps`` positions of the loop ``run`` (``jax_throughput.make_runner``: one step between positions),
    classified by what the step then does (the batch-last step, :func:`uncovered_kinds`; a recycle where the
    retirement level rose)."""
    import jax

    @jax.jit
    def look(states: Any, key: jax.Array) -> dict[str, Any]:
        actions, keys, covered = _covered(env, states, key)
        before, after = env._game(states), env._game(env.step_batch_last(states, actions, keys))
        running = ~(states.terminated | states.truncated)
        return {"waiting": running & ~covered, "running": running, "war_before": before.war_level,
                "war_after": after.war_level, "ended": (after.rounds > before.rounds) | after.terminated
                | after.truncated, "recycled": after.retire_level > before.retire_level}

    counts, recycles, waiting, running = np.zeros(len(UNCOVERED_KINDS)), np.zeros(len(UNCOVERED_KINDS)), [], 0
    for step in range(steps):
        key = jax.random.PRNGKey(10_000 + step)
        seen = {name: np.asarray(value) for name, value in look(states, key).items()}
        rare = seen["waiting"]
        kind = uncovered_kinds(seen["war_before"], seen["war_after"], seen["ended"])[rare]
        counts += np.bincount(kind, minlength=len(UNCOVERED_KINDS))
        recycles += np.bincount(kind[seen["recycled"][rare]], minlength=len(UNCOVERED_KINDS))
        waiting.append(int(rare.sum()))
        running += int(seen["running"].sum())
        states, _ = run(states, key, 1)
    running = max(1, running)
    return Uncovered(sum(waiting) / running, {kind: (counts[i] / running, recycles[i] / running)
                                              for i, kind in enumerate(UNCOVERED_KINDS)},
                     waiting, env._rare_slots(states.current_player.shape[-1]))


def full_step_engines(config: dict[str, Any]) -> dict[str, Any]:
    """The ``--full-step`` rows for Battlecards options ``config`` (with ``retire_lowest_on_flip``): the engine, and
    engines whose full step leaves a part out (not the rules: bounds on what each part costs)."""
    from card_envs.jax import battlecards

    class NoRoundEndRefill(battlecards.Env):
        def _refill_retiring(self, g, flow):  # noqa: ANN001, ANN202
            return g

    class NoRecycleInFills(battlecards.Env):
        def _fill_recycled(self, g, seed, recycle, first_word, level):  # noqa: ANN001, ANN202
            return g

    class WarOnePass(battlecards.Env):
        def _war_retiring(self, g, flow):  # noqa: ANN001, ANN202
            return self._war(g, flow)[:2]

    class NoWar(battlecards.Env):
        def _war_retiring(self, g, flow):  # noqa: ANN001, ANN202
            return g, flow

    class NoFills(battlecards.Env):
        def _fill_retiring(self, g, seed, fill, first_word):  # noqa: ANN001, ANN202
            return g

        def _fill_seat(self, g, seed, fill, first_word):  # noqa: ANN001, ANN202
            return g

    class NoCommitmentMoves(battlecards.Env):
        def _move_seat(self, g, flow, to_table, rest, most):  # noqa: ANN001, ANN202
            return g, flow

    kinds = {"full step": battlecards.Env, "no round-end refill": NoRoundEndRefill,
             "no recycle in the fills": NoRecycleInFills, "war procedure: one pass": WarOnePass,
             "no war procedure": NoWar, "no fills": NoFills, "no commitment moves": NoCommitmentMoves}
    return {name: kind(**config) for name, kind in kinds.items()}


def time_full_step(config: dict[str, Any], args: Any) -> tuple[int, int, dict[str, list[float]], dict[str, float]]:
    """The vmapped full step (``_full_game_step``) of the ``full_step_engines`` on the games of one position of the
    batch-last loop (after ``--steps`` steps of random play) that the common step does not cover, as many as the
    rare step's slots (repeated when fewer wait): CPU us a call, ``--repeats`` repeats round-robin, and the XLA kernels
    a call launches (:func:`kernel_launches`). Returns the games waiting, the slots, the samples and the kernels."""
    import jax
    import jax.numpy as jnp

    from benchmarks.jax_throughput import make_runner
    from card_envs.jax.battlecards import _get_columns

    rows = full_step_engines(config)
    env = rows["full step"]
    run = make_runner(env, args.batch, min(args.slots, args.batch), layout="last")
    states = jax.jit(env.init_batch_last)(jax.random.split(jax.random.PRNGKey(0), args.batch))
    states = run(states, jax.random.PRNGKey(1), args.steps)[0]
    actions, keys, covered = jax.jit(lambda s, k: _covered(env, s, k))(states, jax.random.PRNGKey(2))
    waiting = ~covered & ~(states.terminated | states.truncated)
    if not bool(waiting.any()):
        raise ConfigError("--full-step: no game of this position needs the full step; try other --steps")
    slots = env._rare_slots(args.batch)
    picked = jnp.nonzero(waiting, size=slots, fill_value=int(jnp.argmax(waiting)))[0]
    games = jax.tree.map(lambda leaf: jnp.moveaxis(_get_columns(picked, leaf), -1, 0), env._game(states))
    inputs = (games, actions[picked], keys[picked])
    steps = {name: jax.jit(jax.vmap(engine._full_game_step)) for name, engine in rows.items()}
    for name, step in steps.items():
        print(f"compiling {name} ...", file=sys.stderr, flush=True)
        jax.block_until_ready(step(*inputs))
    calls = {name: (lambda _, step=step: [step(*inputs) for _ in range(FULL_STEP_CALLS)][-1])
             for name, step in steps.items()}
    kernels = {name: kernel_launches(lambda step=step: step(*inputs)) for name, step in steps.items()}
    return int(waiting.sum()), slots, round_robin(calls, args.repeats, 1e6 / FULL_STEP_CALLS), kernels


def kernel_launches(call: Callable[[], Any], calls: int = 1) -> float:
    """The XLA kernels (fusions, copies, scatters, ...: the CPU runtime's thunks) one run of ``call`` launches, the
    mean of ``calls`` runs traced by ``jax.profiler`` (run once before, untraced: compiled). Each kernel is an event of
    the runtime's threads, a loop's body counted once a pass; the loops' own events, the executor's and the completion
    markers (``end: ...``) are left out. A count of work that machine noise does not move (times on this shared machine
    move by 10-30% between runs), not a time: the rare step's vmapped full step launches 847 a call (4 players with
    retirement, 51 slots), and 5-9% fewer of them a step took 0.98-1.07x the loop's time."""
    import tempfile

    import jax
    from jax.profiler import ProfileData

    jax.block_until_ready(call())
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder):
            for _ in range(calls):
                jax.block_until_ready(call())
        data = ProfileData.from_file(str(next(Path(folder).rglob("*.xplane.pb"))))
    # small programs run on the calling thread, large ones on XLA's thread pool: every line of the host
    kernels = sum(1 for plane in data.planes if plane.name == "/host:CPU" for line in plane.lines
                  for event in line.events if _is_kernel(event.name))
    return kernels / calls


def _is_kernel(name: str) -> bool:
    """Whether a ``jax.profiler`` event of the host is a kernel of XLA's CPU runtime: an HLO instruction's name (lower
    case, such as ``copy.12`` or ``add_select_fusion``), not a loop's own (``while.5``), a completion marker (``end:
    copy.12``), the runtime's or the client's (``ThunkExecutor::Execute``, ``ParseArguments``) or Python's."""
    return _HLO_NAME.fullmatch(name) is not None and not name.startswith(("while", "conditional", "call"))


#: an HLO instruction's name: lower case words with ``_`` or ``-``, an optional ``.N``
_HLO_NAME = re.compile(r"[a-z][a-z0-9_\-]*(\.[0-9]+)?")


def round_robin(calls: dict[str, Callable[[int], Any]], repeats: int, scale: float) -> dict[str, list[float]]:
    """CPU time of each row's ``call(repeat)`` (until its result is ready) times ``scale``, ``repeats`` times,
    the rows back to back in each repeat (so that a repeat's rows share the machine's speed: :func:`paired`)."""
    import jax

    samples: dict[str, list[float]] = {name: [] for name in calls}
    for repeat in range(repeats):
        for name, call in calls.items():
            cpu = time.process_time()
            jax.block_until_ready(call(repeat))
            samples[name].append((time.process_time() - cpu) * scale)
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="python -m benchmarks.battlecards_jax_parts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=6, help="Battlecards' num_players (default 6)")
    parser.add_argument("--config", type=json_object, default=None,
                        help="Battlecards options as a JSON object (its num_players wins over --players); adds the "
                             "row 'default rules'")
    parser.add_argument("--rows", default=None,
                        help=f"comma-separated row keys ({', '.join(ROWS)}; default: the first four, and 'default' "
                             "with --config, 'against' with --against)")
    parser.add_argument("--against", type=Path, action="append", default=[], metavar="PATH",
                        help="a checkout's root: its engine, the same config, as one more row (repeatable)")
    parser.add_argument("--batch", type=int, default=512, help="games at once (default 512, the best a device)")
    parser.add_argument("--steps", type=int, default=200, help="steps per timed call (default 200)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--slots", type=int, default=64, help="deal slots of reset_finished (default 64)")
    parser.add_argument("--full-step", action="store_true",
                        help="with retire_lowest_on_flip in --config: time the vmapped full step on the games one "
                             "position of the loop leaves to it, with a part of it left out in each row")
    args = parser.parse_args(argv)
    config = {"num_players": args.players} | (args.config or {})
    players = config["num_players"]
    if (not isinstance(players, int) or not 2 <= players <= 6 or args.batch < 1 or args.steps < 1 or args.repeats < 1
            or args.slots < 1):
        parser.error("num_players must be 2-6; --batch, --steps, --repeats and --slots positive")
    if args.full_step:
        if not config.get("retire_lowest_on_flip") or args.rows or args.against:
            parser.error("--full-step needs retire_lowest_on_flip in --config, and takes no --rows or --against")
        print(full_step_report(config, *time_full_step(config, args)))
        return 0
    keys = (args.rows.split(",") if args.rows else ["engine", "no-rare", "no-observation", "neither"]
            + (["default"] if args.config else []) + (["against"] if args.against else []))
    unknown = [key for key in keys if key not in ROWS]
    if unknown or "engine" not in keys:
        parser.error(f"--rows takes {', '.join(ROWS)} and includes engine; got {args.rows}")
    if "against" in keys and not args.against:
        parser.error("the row 'against' needs --against PATH")
    import jax

    from benchmarks.jax_throughput import make_runner

    rows = engines(config, keys, args.against)
    runs, states = {}, {}
    for name, env in rows.items():
        print(f"compiling {name} ...", file=sys.stderr, flush=True)
        runs[name] = make_runner(env, args.batch, min(args.slots, args.batch), layout="last")
        start = jax.jit(env.init_batch_last)(jax.random.split(jax.random.PRNGKey(0), args.batch))
        states[name] = jax.block_until_ready(runs[name](start, jax.random.PRNGKey(1), args.steps)[0])  # warm up
    def loop(name: str) -> Callable[[int], Any]:
        def call(repeat: int) -> Any:
            states[name], _ = runs[name](states[name], jax.random.PRNGKey(2 + repeat), args.steps)
            return states[name]
        return call

    samples = round_robin({name: loop(name) for name in rows}, args.repeats, 1e9 / (args.steps * args.batch))
    # the same keys for every row: engines that play the same games (the engine and --against checkouts of the same
    # rules) launch counts that differ by what the engines do, nothing else
    kernels = {name: kernel_launches(functools.partial(loop(name), args.repeats)) / args.steps for name in rows}
    print(report(config, args, uncovered(rows["engine"], states["engine"], args.steps, runs["engine"]), samples,
                 kernels))
    return 0


def paired(mine: Sequence[float], theirs: Sequence[float]) -> float:
    """The median of the repeats' ratios ``mine / theirs`` (a repeat times its rows back to back, so they share
    the machine's speed, which drifts by up to 25% within a run)."""
    return statistics.median(m / t for m, t in zip(mine, theirs, strict=True))


def table(samples: dict[str, list[float]], unit: str, first: str, kernels: dict[str, float] | None = None,
          per: str = "a call") -> list[str]:
    """Markdown rows: each row's median (min-max) in ``unit`` and the first row's time over its own (paired); with
    ``kernels``, the XLA kernels each row launches ``per`` call or step (:func:`kernel_launches`)."""
    reference = samples[first]
    launched = f" XLA kernels {per} |" if kernels else ""
    lines = [f"| row | {unit} | {first} / row |{launched}", "|---|---:|---:|" + ("---:|" if kernels else "")]
    for name, values in samples.items():
        lines.append(f"| {name} | {statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f}) "
                     f"| {paired(reference, values):.2f}x |" + (f" {kernels[name]:,.0f} |" if kernels else ""))
    return lines


def full_step_report(config: dict[str, Any], waiting: int, slots: int, samples: dict[str, list[float]],
                     kernels: dict[str, float]) -> str:
    """The ``--full-step`` table: CPU us a call of the vmapped full step, with a part left out in each row, and the
    XLA kernels a call launches."""
    return "\n".join([f"Battlecards {json.dumps(config, sort_keys=True)}: the full step under vmap on {slots} slots "
                      f"({waiting} games of the position wait for it); rows other than the first leave a part out "
                      "(not the rules: what a part costs)", "",
                      *table(samples, "CPU us a call", "full step", kernels)])


def report(config: dict[str, Any], args: Any, rare: Uncovered, samples: dict[str, list[float]],
           kernels: dict[str, float] | None = None) -> str:
    """The table of the rows: CPU ns per game-step (median, min-max), the engine's time over the row's (the median
    of the repeats' ratios) and, with ``kernels``, the XLA kernels each row launches a step; with the row ``default
    rules``, issue 41's ratio (the config's rate over the default rules', CPU time, paired the same way)."""
    lines = [f"Battlecards {json.dumps(config, sort_keys=True)}, batch {args.batch} batch-last, {args.repeats} "
             f"repeats of {args.steps} steps; CPU ns per game-step (median, min-max); engine / row: the median of "
             "the repeats' ratios (rows are timed round-robin, so a repeat's rows share the machine's speed)", "",
             *table(samples, "CPU ns per game-step", "engine", kernels, "a step")]
    if "default rules" in samples:
        ratio = paired(samples["default rules"], samples["engine"])
        lines += ["", f"The config's rate over the default rules' (issue 41: at least 0.5x): {ratio:.2f}x"]
    return "\n".join([*lines, "", f"The engine's rare step: {rare.summary()}."])


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.battlecards_jax_parts"))
