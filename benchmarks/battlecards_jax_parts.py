"""Where a decision of the batched Battlecards engine goes: the timed loop against the same loop without a part.

Run from the repository root (needs the ``jax`` extra)::

    python -m benchmarks.battlecards_jax_parts                  # six players, batch 512, one device
    python -m benchmarks.battlecards_jax_parts --players 2 --batch 1024 --repeats 7
    taskset -c 0 python -m benchmarks.battlecards_jax_parts     # one core: no other thread in the figures

Every row runs ``benchmarks.jax_throughput``'s batch-last loop (``make_runner``: ``env.step_batch_last``, a
random legal action per game, ``reset_finished(..., lazy=True)``) on an engine of the same config, for ``--steps``
steps per timed call, rows round-robin, repeat by repeat; each figure is the median of this process's CPU time
per game-step.

=========================  ==========================================================================================
row                        the engine
=========================  ==========================================================================================
``engine``                 ``card_envs.jax.battlecards.Env``, as shipped
``no rare step``           the common step's result for every game: decisions it does not cover (wars, multi-card
                           refills, ...) are left wrong. **Not the rules**: a bound on what the rare step costs
``no observation``         the observation is zeros (the step, mask and rewards as shipped): a bound on what the
                           533 observation entries cost
``neither``                both of the above: what the common step, the mask and the loop cost
=========================  ==========================================================================================

Also printed: the share of the running games' next decisions (a random legal action, at ``--steps`` positions of
the loop) that the common step does not cover, which the rare step takes. The bounds say how far a faster part
could take the engine: issue 23's six-player 10x (against the Python engine) needs the whole loop about 1.4-1.6x
faster than in its benchmark runs.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python benchmarks/battlecards_jax_parts.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from card_envs.core.commands import CommandParser, guarded  # noqa: E402


def engines(players: int) -> dict[str, Any]:
    """The four engines of the rows, for ``players`` seats (the config's other options at their defaults)."""
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

    return {name: kind(num_players=players) for name, kind in (
        ("engine", battlecards.Env), ("no rare step", NoRareStep), ("no observation", NoObservation),
        ("neither", Neither))}


def uncovered_share(env: Any, states: Any, steps: int, run: Any) -> float:
    """The share of running games whose next decision (a random legal action) the common step does not cover,
    over ``steps`` positions of the loop ``run`` (``jax_throughput.make_runner``: one step between positions)."""
    import jax
    import jax.numpy as jnp

    from card_envs.jax.core import random_legal_actions

    @jax.jit
    def counts(states: Any, key: jax.Array) -> jax.Array:
        pick, step_key = jax.random.split(key)
        actions = random_legal_actions(pick, states.legal_action_mask, action_axis=0)
        keys = jax.random.split(step_key, states.current_player.shape[-1])
        seeds = jax.vmap(lambda k: jax.random.bits(k, (), jnp.uint32))(keys)
        _, covered = env._common_step(env._game(states), actions, seeds)
        running = ~(states.terminated | states.truncated)
        return jnp.stack([(running & ~covered).sum(), running.sum()])

    total = jnp.zeros(2, jnp.int32)
    for step in range(steps):
        key = jax.random.PRNGKey(10_000 + step)
        total = total + counts(states, key)
        states, _ = run(states, key, 1)
    return int(total[0]) / max(1, int(total[1]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="python -m benchmarks.battlecards_jax_parts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=6, help="Battlecards' num_players (default 6)")
    parser.add_argument("--batch", type=int, default=512, help="games at once (default 512, the best a device)")
    parser.add_argument("--steps", type=int, default=200, help="steps per timed call (default 200)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--slots", type=int, default=64, help="deal slots of reset_finished (default 64)")
    args = parser.parse_args(argv)
    if not 2 <= args.players <= 6 or args.batch < 1 or args.steps < 1 or args.repeats < 1 or args.slots < 1:
        parser.error("--players must be 2-6; --batch, --steps, --repeats and --slots positive")
    import jax

    from benchmarks.jax_throughput import make_runner

    rows = engines(args.players)
    runs, states = {}, {}
    for name, env in rows.items():
        print(f"compiling {name} ...", file=sys.stderr, flush=True)
        runs[name] = make_runner(env, args.batch, min(args.slots, args.batch), layout="last")
        start = jax.jit(env.init_batch_last)(jax.random.split(jax.random.PRNGKey(0), args.batch))
        states[name] = jax.block_until_ready(runs[name](start, jax.random.PRNGKey(1), args.steps)[0])  # warm up
    samples: dict[str, list[float]] = {name: [] for name in rows}
    for repeat in range(args.repeats):
        for name in rows:
            cpu = time.process_time()
            states[name], _ = runs[name](states[name], jax.random.PRNGKey(2 + repeat), args.steps)
            jax.block_until_ready(states[name])
            samples[name].append((time.process_time() - cpu) / (args.steps * args.batch) * 1e9)
    share = uncovered_share(rows["engine"], states["engine"], args.steps, runs["engine"])
    engine = statistics.median(samples["engine"])
    print(f"Battlecards, {args.players} players, batch {args.batch} batch-last, {args.repeats} repeats of "
          f"{args.steps} steps; CPU ns per game-step (median, min-max); decisions the common step does not cover: "
          f"{share:.1%}\n")
    print("| row | CPU ns per game-step | engine / row |")
    print("|---|---:|---:|")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name} | {median:,.0f} ({min(values):,.0f}-{max(values):,.0f}) | {engine / median:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.battlecards_jax_parts"))
