"""Where the time of a batched random-play loop goes: our harness against Pgx-style loops, part by part.

Run from the repository root (needs the ``jax`` extra)::

    python -m benchmarks.jax_loop_cost                              # Pgx leduc_holdem, batch 1024 and 4096
    python -m benchmarks.jax_loop_cost --games leduc_holdem,revolutionary_war_v0 --batch-sizes 4096
    python -m benchmarks.jax_loop_cost --games revolutionary_war_v0 --layout first

It answers "why does ``benchmarks.jax_throughput`` give Pgx ``leduc_holdem`` about 2M decisions/s when
figures of 13-26M/s circulate for the same game on the same machine?". Every row is one jitted
``fori_loop`` over a batch of ``B`` games (the batch axis first, ``jax.vmap(env.step)``; by default our
``batch_last`` engines run the harness and part rows with ``env.step_batch_last``); rates are per second of wall
time and per second of this process's CPU time (all threads), with their ratio (the cores used):

===============================  ==========================================================================
row                              what one iteration of the loop does (what is counted)
===============================  ==========================================================================
``harness``                      ``benchmarks.jax_throughput``'s timed loop (``make_runner``): a random
                                 legal action per game (``random_legal_actions``), the step, finished
                                 games re-dealt ``slots`` at a time (``reset_finished``, ``slots`` from
                                 ``L`` below); counts decisions only
``pgx loop``                     the loop of Pgx's own examples: ``act_randomly`` (``jax.random.categorical``
                                 on the log of the mask, a fresh key per step), ``jax.vmap(auto_reset(
                                 env.step, env.init))`` with a fresh key per game (``pgx.experimental``);
                                 counts every game-step (each is a decision: auto-reset never waits)
``pgx loop, key reused``         the same with the key never advanced: the action noise and the deals are
                                 loop-invariant, so XLA computes them once, before the loop (every episode
                                 is then the same deal); not a fair measure, shown because it is how a
                                 loop reaches the much higher figures
``pgx loop, no reset``           the same without ``auto_reset``: games end after a few steps and are then
                                 stepped without effect, yet counted; not a fair measure either
``part: step``                   the step alone (legal mask and observation included) on a fixed batch of
                                 live positions of random play, the first legal action (no random draw)
``part: categorical``            ``jax.random.categorical`` on the log mask of that batch, a fresh key a step
``part: random_legal_actions``   our harness's random legal action (``card_envs.jax.core``)
``part: deal``                   ``jax.vmap(env.init)`` of ``B`` fresh games with keys from one split; per
                                 decision it weighs ``1 / L`` of a game (``L`` = mean decisions per episode,
                                 counted in the ``pgx loop``), but ``auto_reset`` under ``vmap`` deals every
                                 game on every step (``lax.cond`` becomes a select)
``part: reset_finished``         the harness's lazy re-deal of ``slots`` finished games (the deals, and
                                 their copy into the batch); per decision it weighs ``1 / L`` of a game
===============================  ==========================================================================

The ``part`` rows report nanoseconds of CPU time per game (per decision for ``step``, the action rows;
per dealt game for ``deal`` and ``reset_finished``) and the share of the ``harness`` row's CPU time per
decision they explain. Results: ``results/jax_loop_cost.md`` and ``.json`` (written atomically).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python benchmarks/jax_loop_cost.py``: make card_envs importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.jax_throughput import make_runner, slots_for  # noqa: E402
from benchmarks.throughput import (  # noqa: E402
    _version,
    add_output_arguments,
    log,
    machine_description,
    machine_lines,
    output_dir,
    run_stamp,
    write_atomic,
)
from card_envs.core.commands import CommandParser, guarded  # noqa: E402

DEFAULT_GAMES = ("leduc_holdem",)
DEFAULT_BATCH_SIZES = (1024, 4096)
LOOP_ROWS = ("harness", "pgx loop", "pgx loop, key reused", "pgx loop, no reset")
PART_ROWS = ("part: step", "part: categorical", "part: random_legal_actions", "part: deal", "part: reset_finished")


def make_env(name: str) -> Any:
    import pgx

    from card_envs.jax.core import make

    return pgx.make(name) if name in pgx.available_envs() else make(name)


def barrier(tree: Any, i: Any) -> Any:
    """``tree`` made opaque to XLA's loop-invariant code motion (it depends on the loop counter ``i``)."""
    import jax

    return jax.lax.optimization_barrier((tree, i))[0]


def pgx_loop(env: Any, batch: int, reuse_key: bool = False, reset: bool = True) -> Callable[..., Any]:
    """``run(state, key, steps) -> (state, key, episodes)``: the loop of Pgx's examples (see the module table)."""
    import jax
    import jax.numpy as jnp
    from pgx.experimental import act_randomly, auto_reset

    step = jax.vmap(auto_reset(env.step, env.init) if reset else env.step)

    def body(_, carry):
        state, key, episodes = carry
        next_key, act_key, step_key = jax.random.split(key, 3)
        action = act_randomly(act_key, state.legal_action_mask)
        state = step(state, action, jax.random.split(step_key, batch))
        episodes += state.terminated.sum(dtype=jnp.int32)  # auto_reset keeps the ending step's flag
        return state, key if reuse_key else next_key, episodes

    return jax.jit(lambda state, key, steps: jax.lax.fori_loop(0, steps, body, (state, key, jnp.int32(0))))


def part_loop(env: Any, batch: int, last: bool, part: str, slots: int) -> Callable[..., Any]:
    """``run(state, key, steps)``: one part of the loop, ``steps`` times on ``state`` (a live batch) made
    loop-variant by :func:`barrier`; the outputs go to the carry so that nothing is dead code."""
    import jax
    import jax.numpy as jnp

    from card_envs.jax.core import random_legal_actions, reset_finished

    axis = 0 if last else -1
    uses_key = getattr(env, "step_uses_key", True)
    step = env.step_batch_last if last else jax.vmap(env.step)
    deal = jax.vmap(env.init, out_axes=-1 if last else 0)

    def body(i, carry):
        out, key, _ = carry
        key, sub = jax.random.split(key)
        state = barrier(carry[2], i)
        mask = state.legal_action_mask
        if part == "part: step":
            action = jnp.argmax(mask, axis=axis).astype(jnp.int32)
            out = step(state, action, jax.random.split(sub, batch) if uses_key else None)
        elif part == "part: categorical":
            out = jax.random.categorical(sub, jnp.log(mask.astype(jnp.float32)), axis=axis)
        elif part == "part: random_legal_actions":
            out = random_legal_actions(sub, mask, action_axis=axis)
        elif part == "part: deal":
            out = deal(jax.random.split(sub, batch))
        else:  # reset_finished with exactly ``slots`` games finished
            done = jnp.arange(batch) < slots
            out = reset_finished(env, state.replace(terminated=done), sub, slots, lazy=True,
                                 batch_axis=-1 if last else 0)
        return out, key, carry[2]

    def run(state, key, steps):
        first = body(0, (None, key, state))[0]
        return jax.lax.fori_loop(1, steps, lambda i, c: body(i, c), (first, key, state))[0]

    return jax.jit(run)


def timed(run: Callable[..., Any], args: tuple[Any, ...], seconds: float, repeats: int) -> dict[str, float]:
    """Calibrate ``steps`` to about ``seconds``, then the best of ``repeats`` calls by CPU time."""
    import jax

    state, key = args
    jax.block_until_ready(run(state, key, 20))
    start = time.perf_counter()
    jax.block_until_ready(run(state, key, 20))
    steps = max(20, int(seconds / max((time.perf_counter() - start) / 20, 1e-7)))
    best: dict[str, float] | None = None
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(run(state, key, steps))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        if best is None or cpu < best["cpu"]:
            best = {"steps": steps, "wall": wall, "cpu": cpu, "out": out}
    assert best is not None
    return best


def measure_game(name: str, batch: int, layout: str, seconds: float, repeats: int, seed: int,
                 progress: Callable[[str], None]) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp

    env = make_env(name)
    if layout == "auto":
        layout = "last" if getattr(env, "batch_last", False) else "first"
    last = layout == "last"
    if last and not getattr(env, "batch_last", False):
        raise SystemExit(f"{name} has no batch-last step (layout last is for engines with batch_last = True)")
    key = jax.random.PRNGKey(seed)
    first_states = jax.jit(jax.vmap(env.init))(jax.random.split(key, batch))
    rows: dict[str, dict[str, float]] = {}

    # L, the mean decisions per episode: the fair Pgx loop on a small batch, long enough for many episodes
    count = min(batch, 256)
    _, _, episodes = pgx_loop(env, count)(jax.tree.map(lambda leaf: leaf[:count], first_states), key, 1000)
    mean_episode = count * 1000 / max(int(episodes), 1)

    for label, options in (("pgx loop", {}), ("pgx loop, key reused", {"reuse_key": True}),
                           ("pgx loop, no reset", {"reset": False})):
        best = timed(pgx_loop(env, batch, **options), (first_states, key), seconds, repeats)
        decisions = batch * best["steps"]
        rows[label] = {"decisions": decisions, "wall": best["wall"], "cpu": best["cpu"]}
        progress(f"{name} B={batch} {label}: {decisions / best['wall']:,.0f} decisions/s")

    # the harness, as jax_throughput runs it (finished games re-dealt ``slots`` at a time)
    slots = slots_for(batch, mean_episode)
    runner = make_runner(env, batch, slots, layout)
    states = jax.jit(env.init_batch_last if last else jax.vmap(env.init))(jax.random.split(key, batch))
    states, _, _ = runner(states, key, 200)  # the games' starts drift apart
    live = jax.tree.map(jnp.copy, states)  # positions of random play, every game at its own point of an episode

    def harness(state: Any, key: Any, steps: int) -> Any:
        return runner(jax.tree.map(jnp.copy, state), key, steps)  # the runner donates its state

    best = timed(harness, (states, key), seconds, repeats)
    rows["harness"] = {"decisions": int(best["out"][2]), "wall": best["wall"], "cpu": best["cpu"],
                       "slots": slots}
    progress(f"{name} B={batch} harness: {rows['harness']['decisions'] / best['wall']:,.0f} decisions/s")

    part_slots = slots
    for part in PART_ROWS:
        best = timed(part_loop(env, batch, last, part, part_slots), (live, key), seconds, repeats)
        per = part_slots if part == "part: reset_finished" else batch
        rows[part] = {"games": per * best["steps"], "wall": best["wall"], "cpu": best["cpu"]}
        progress(f"{name} B={batch} {part}: {best['cpu'] / (per * best['steps']) * 1e9:.1f} ns CPU per game")
    return {"game": name, "batch": batch, "layout": layout, "mean_episode": mean_episode, "slots": slots,
            "part_slots": part_slots, "rows": rows}


def render_markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Where the time of a batched random-play loop goes",
        "",
        f"Generated by `{report['command']}` on {report['date']}, JAX device `{report['settings']['device']}`; "
        "each row is the best of its repeats by CPU time. See `benchmarks/jax_loop_cost.py` for what every row "
        "does. `L` is the mean decisions per episode (counted in the `pgx loop`).",
        "",
    ]
    for result in report["results"]:
        rows, per_decision = result["rows"], {}
        harness_ns = rows["harness"]["cpu"] / rows["harness"]["decisions"] * 1e9
        lines += [f"## {result['game']}, B={result['batch']}, layout {result['layout']} (L = "
                  f"{result['mean_episode']:.1f}, harness slots {result['slots'] or 'all'})", "",
                  "| row | decisions/s (wall) | decisions/s (CPU time) | CPU / wall | ns CPU per decision |",
                  "|---|---:|---:|---:|---:|"]
        for label in LOOP_ROWS:
            row = rows[label]
            lines.append(f"| {label} | {row['decisions'] / row['wall']:,.0f} | {row['decisions'] / row['cpu']:,.0f} | "
                         f"{row['cpu'] / row['wall']:.2f} | {row['cpu'] / row['decisions'] * 1e9:.1f} |")
        lines += ["", "| part | ns CPU per game | ns CPU per decision | share of the harness's CPU time |",
                  "|---|---:|---:|---:|"]
        for label in PART_ROWS:
            row = rows[label]
            per_game = row["cpu"] / row["games"] * 1e9
            weight = 1 / result["mean_episode"] if label in ("part: deal", "part: reset_finished") else 1.0
            per_decision[label] = per_game * weight
            lines.append(f"| {label} | {per_game:.1f} | {per_game * weight:.1f} | "
                         f"{per_game * weight / harness_ns:.0%} |")
        lines.append("")
    machine = report["machine"]
    lines += ["## Machine", "", *machine_lines(machine),
              f"- load average at end: {report['settings']['load_average_at_end']}",
              f"- jax: {report['settings']['jax']}, pgx: {report['settings']['pgx']}", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="python -m benchmarks.jax_loop_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES),
                        help="comma-separated: Pgx env ids (e.g. leduc_holdem) or our env names (default leduc_holdem)")
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCH_SIZES)))
    parser.add_argument("--layout", choices=("auto", "first", "last"), default="auto",
                        help="batch axis of the harness and part rows: first (jax.vmap), last (env.step_batch_last),"
                             " auto (default: last for engines built for it); the Pgx loops always vmap")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per timed call (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per row, the best counts (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    stamp = run_stamp("benchmarks.jax_loop_cost", argv)
    if args.quick:
        args.seconds, args.repeats = min(args.seconds, 0.2), min(args.repeats, 1)
    import jax
    import pgx

    progress = (lambda message: None) if args.quiet else log
    machine = machine_description()
    results = [measure_game(name, int(batch), args.layout, args.seconds, args.repeats, args.seed, progress)
               for name in args.games.split(",") for batch in args.batch_sizes.split(",")]
    settings = {"device": str(jax.devices()[0]), "jax": jax.__version__, "jaxlib": _version("jaxlib"),
                "pgx": pgx.__version__, "seconds": args.seconds, "repeats": args.repeats, "seed": args.seed,
                "load_average_at_end": machine_description()["load_average_at_start"]}
    report = {"schema": 1, **stamp, "settings": settings, "machine": machine, "results": results}
    out = output_dir(args)
    write_atomic(out / "jax_loop_cost.json", json.dumps(report, indent=2) + "\n")
    write_atomic(out / "jax_loop_cost.md", render_markdown(report))
    print(render_markdown(report).split("## Machine")[0])
    progress(f"wrote {out / 'jax_loop_cost.md'} and {out / 'jax_loop_cost.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.jax_loop_cost"))
