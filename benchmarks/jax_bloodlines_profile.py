"""Bloodlines in JAX: what a batched step costs, piece by piece, against the Python engine and Pgx's leduc.

    .venv/bin/python -m benchmarks.jax_bloodlines_profile [--batch 1024,4096] [--steps 200] [--config JSON]

Prints, for each batch size, decisions/s of random legal play with auto-reset inside one jitted
``lax.scan`` (``step``, then ``init`` where the episode ended, as ``pgx.experimental.auto_reset``), and
the time of each piece alone, jitted over the batch: ``init``, ``step``, ``observe``, the legal mask,
the apply (``_apply`` of the chosen action) and R11's forced steps after it; the compile time of the
scan; and, in the same run, the Python engine (one core, random legal play) and Pgx's ``leduc_holdem``
through the same scan. Compare ratios against these anchors across runs, not absolute rates: the
machine is shared (the load is printed). The generic all-games benchmark is
``benchmarks/jax_throughput.py``; this script profiles one game.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pgx

import card_envs
from card_envs.jax import make
from card_envs.jax.core import uniform_legal_action


def random_legal(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniform legal action per row of a batch of masks (``uniform_legal_action`` per state)."""
    return jax.vmap(uniform_legal_action)(jax.random.split(key, mask.shape[0]), mask)


def scan_play(env: Any, batch: int, steps: int) -> Any:
    """A jitted ``(key) -> decisions`` running ``steps`` batched random steps with auto-reset."""
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    def body(carry: Any, _: Any) -> Any:
        state, key, decisions = carry
        key, act, stepping, resetting = jax.random.split(key, 4)
        decisions = decisions + (~(state.terminated | state.truncated)).sum()
        state = step(state, random_legal(act, state.legal_action_mask), jax.random.split(stepping, batch))
        fresh = init(jax.random.split(resetting, batch))
        done = state.terminated | state.truncated
        state = jax.tree.map(lambda new, old: jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new, old),
                             fresh, state)
        return (state, key, decisions), None

    def run(key: jax.Array) -> jax.Array:
        state = init(jax.random.split(key, batch))
        (_, _, decisions), _ = jax.lax.scan(body, (state, key, jnp.int32(0)), None, length=steps)
        return decisions

    return jax.jit(run)


def timed(function: Any, *args: Any, repeats: int = 3) -> tuple[float, float]:
    """Best wall time and best process CPU time of ``function(*args)`` (already compiled)."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(function(*args))
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def python_engine_rate(options: dict[str, Any], seconds: float) -> tuple[float, float]:
    """Decisions per wall second and per CPU second of the Python engine (random legal play) on one core."""
    game = card_envs.make_game("bloodlines_v0", **options)
    rng = np.random.default_rng(0)
    decisions, start, start_cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        state = game.new_state(rng)
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[int(rng.random() * len(legal))])
            decisions += 1
    return decisions / (time.perf_counter() - start), decisions / (time.process_time() - start_cpu)


def profile(options: dict[str, Any], batch: int, steps: int) -> dict[str, float]:
    env = make("bloodlines_v0", **options)
    key = jax.random.PRNGKey(0)
    play = scan_play(env, batch, steps)
    start = time.perf_counter()
    play.lower(key).compile()
    compile_seconds = time.perf_counter() - start
    jax.block_until_ready(play(key))
    seconds, cpu_seconds = timed(play, key)
    decisions = int(play(key))
    # the pieces, each jitted alone over a batch of mid-game states
    init = jax.jit(jax.vmap(env.init))
    keys = jax.random.split(key, batch)
    state = init(keys)
    step = jax.jit(jax.vmap(env.step))
    for i in range(8):  # move a few decisions into the game
        state = step(state, random_legal(jax.random.PRNGKey(i), state.legal_action_mask), keys)
    actions = random_legal(key, state.legal_action_mask)
    pieces = {
        "init": (init, keys),
        "step": (step, state, actions, keys),
        "observe": (jax.jit(jax.vmap(env.observe)), state, state.current_player),
        "mask": (jax.jit(jax.vmap(env._legal_action_mask)), state),
        "apply": (jax.jit(jax.vmap(env._apply)), state, actions),
        "forced steps": (jax.jit(jax.vmap(env._take_forced_steps)), jax.vmap(env._apply)(state, actions)),
    }
    result = {"batch": batch, "decisions_per_s": decisions / seconds, "decisions_per_cpu_s": decisions / cpu_seconds,
              "compile_s": compile_seconds}
    for name, (function, *args) in pieces.items():
        jax.block_until_ready(function(*args))
        result[f"{name}_us_per_env"] = timed(function, *args)[1] / batch * 1e6  # CPU time
    return result


def leduc_rate(batch: int, steps: int) -> tuple[float, float]:
    """Decisions per wall second and per CPU second of Pgx's leduc_holdem through the same scan."""
    play = scan_play(pgx.make("leduc_holdem"), batch, steps)
    key = jax.random.PRNGKey(0)
    jax.block_until_ready(play(key))
    seconds, cpu_seconds = timed(play, key)
    decisions = int(play(key))
    return decisions / seconds, decisions / cpu_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", default="1024,4096", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=200, help="scan length per measurement")
    parser.add_argument("--config", default="{}", help="Bloodlines options as JSON")
    parser.add_argument("--python-seconds", type=float, default=3.0)
    args = parser.parse_args()
    options = json.loads(args.config)
    print(f"load average {os.getloadavg()}, jax {jax.__version__}, devices {jax.devices()}, options {options}")
    python, python_cpu = python_engine_rate(options, args.python_seconds)
    print(f"python engine: {python:,.0f} decisions/s ({python_cpu:,.0f} per CPU second)")
    for batch in (int(b) for b in args.batch.split(",")):
        row = profile(options, batch, args.steps)
        leduc, leduc_cpu = leduc_rate(batch, args.steps)
        wall, cpu = row["decisions_per_s"], row["decisions_per_cpu_s"]
        print(f"batch {batch}: {wall:,.0f} decisions/s ({wall / python:.1f}x python, {wall / leduc:.4f}x leduc "
              f"{leduc:,.0f}/s); per CPU second {cpu:,.0f} ({cpu / python_cpu:.1f}x python, "
              f"{cpu / leduc_cpu:.4f}x leduc); compile {row['compile_s']:.1f} s")
        pieces = {k[:-len("_us_per_env")]: v for k, v in row.items() if k.endswith("_us_per_env")}
        print("  CPU us per env: " + ", ".join(f"{name} {us:.3f}" for name, us in pieces.items()))
        print(f"  load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
