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


def random_legal(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniform legal action per row from one uniform float each (the index of the j-th legal action)."""
    count = mask.sum(axis=-1)
    pick = (jax.random.uniform(key, count.shape) * count).astype(jnp.int32)
    ranks = jnp.cumsum(mask, axis=-1) - 1
    return jnp.argmax(mask & (ranks == pick[..., None]), axis=-1).astype(jnp.int32)


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


def timed(function: Any, *args: Any, repeats: int = 3) -> float:
    """Best wall time of ``function(*args)`` (already compiled), results blocked on."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(function(*args))
        best = min(best, time.perf_counter() - start)
    return best


def python_engine_rate(options: dict[str, Any], seconds: float) -> float:
    """Decisions/s of the Python engine (random legal play, new games as needed) on one core."""
    game = card_envs.make_game("bloodlines_v0", **options)
    rng = np.random.default_rng(0)
    decisions, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_state(rng)
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[int(rng.random() * len(legal))])
            decisions += 1
    return decisions / (time.perf_counter() - start)


def profile(options: dict[str, Any], batch: int, steps: int) -> dict[str, float]:
    env = make("bloodlines_v0", **options)
    key = jax.random.PRNGKey(0)
    play = scan_play(env, batch, steps)
    start = time.perf_counter()
    play.lower(key).compile()
    compile_seconds = time.perf_counter() - start
    jax.block_until_ready(play(key))
    seconds = timed(play, key)
    decisions = int(play(key))
    # the pieces, each jitted alone over a batch of mid-game states
    init = jax.jit(jax.vmap(env.init))
    keys = jax.random.split(key, batch)
    state = init(keys)
    step = jax.jit(jax.vmap(env.step))
    for i in range(8):  # move a few decisions into the game
        state = step(state, jax.vmap(random_legal)(jax.random.split(jax.random.PRNGKey(i), batch),
                                                   state.legal_action_mask), keys)
    actions = jax.vmap(random_legal)(keys, state.legal_action_mask)
    pieces = {
        "init": (init, keys),
        "step": (step, state, actions, keys),
        "observe": (jax.jit(jax.vmap(env.observe)), state, state.current_player),
        "mask": (jax.jit(jax.vmap(env._legal_action_mask)), state),
        "apply": (jax.jit(jax.vmap(env._apply)), state, actions),
        "forced steps": (jax.jit(jax.vmap(env._take_forced_steps)), jax.vmap(env._apply)(state, actions)),
    }
    result = {"batch": batch, "decisions_per_s": decisions / seconds, "compile_s": compile_seconds}
    for name, (function, *args) in pieces.items():
        jax.block_until_ready(function(*args))
        result[f"{name}_us_per_env"] = timed(function, *args) / batch * 1e6
    return result


def leduc_rate(batch: int, steps: int) -> float:
    play = scan_play(pgx.make("leduc_holdem"), batch, steps)
    key = jax.random.PRNGKey(0)
    jax.block_until_ready(play(key))
    seconds = timed(play, key)
    return int(play(key)) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", default="1024,4096", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=200, help="scan length per measurement")
    parser.add_argument("--config", default="{}", help="Bloodlines options as JSON")
    parser.add_argument("--python-seconds", type=float, default=3.0)
    args = parser.parse_args()
    options = json.loads(args.config)
    print(f"load average {os.getloadavg()}, jax {jax.__version__}, devices {jax.devices()}, options {options}")
    python = python_engine_rate(options, args.python_seconds)
    print(f"python engine: {python:,.0f} decisions/s")
    for batch in (int(b) for b in args.batch.split(",")):
        row = profile(options, batch, args.steps)
        leduc = leduc_rate(batch, args.steps)
        print(f"batch {batch}: {row['decisions_per_s']:,.0f} decisions/s "
              f"({row['decisions_per_s'] / python:.1f}x python, {row['decisions_per_s'] / leduc:.3f}x leduc "
              f"{leduc:,.0f}/s), compile {row['compile_s']:.1f} s")
        print("  us per env: " + ", ".join(f"{k[:-10]} {v:.3f}" for k, v in row.items() if k.endswith("_us_per_env")))
        print(f"  load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
