"""Compiled JAX engines shared by the JAX test modules (not a test module itself).

Compiling a JAX engine takes seconds on 2 cores, so every test module asks here: each (game, config) is
made and compiled once per test process, whatever module asks first.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any
from unittest import mock

import jax
import jax.numpy as jnp

import card_envs
from card_envs.jax.core import CardEnv, available_games, batch_first, make
from card_envs.jax.lockstep import Lockstep
from tests.conftest import XLA_FLAGS_OF_THE_DEFAULT_RUN

#: every (env name, config index, config) with a JAX engine in this checkout: index 0 is the default config
JAX_CASES: list[tuple[str, int, dict[str, Any]]] = [
    (name, index, config)
    for name in available_games()
    for index, config in enumerate(card_envs.make_game(name).variant_configs())
]


def case_id(case: tuple[str, int, dict[str, Any]]) -> str:
    return f"{case[0]}-cfg{case[1]}"


@dataclass(frozen=True)
class Engine:
    """One engine and its jitted entry points (unbatched and vmapped)."""

    env: CardEnv
    init: Any
    step: Any
    batch_init: Any
    batch_step: Any
    batch_step_last: Any  #: ``env.step_batch_last``: the batch axis last
    observe_all: Any  #: every seat's observation of one state, ``(num_players, obs_size)``

    def keys(self, seed: int, count: int) -> jax.Array:
        return jax.random.split(jax.random.PRNGKey(seed), count)


@functools.cache
def _engine(name: str, options_json: str) -> Engine:
    env = make(name, **json.loads(options_json))
    seats = jnp.arange(env.num_players)
    return Engine(
        env=env,
        init=jax.jit(env.init),
        step=jax.jit(env.step),
        batch_init=jax.jit(jax.vmap(env.init)),
        batch_step=jax.jit(jax.vmap(env.step)),
        batch_step_last=jax.jit(env.step_batch_last),
        observe_all=jax.jit(lambda state: jax.vmap(lambda p: env.observe(state, p))(seats)),
    )


def engine(name: str, **options: Any) -> Engine:
    return _engine(name, json.dumps(options, sort_keys=True))


@jax.jit
def same_leaves(first: Any, last: Any) -> jax.Array:
    """Whether each leaf of a batch-first state equals that of a batch-last one, in one program (eagerly each
    leaf's moveaxis and comparison is an operation dispatched, and the first time compiled, on its own)."""
    return jnp.stack(jax.tree.leaves(jax.tree.map(jnp.array_equal, first, batch_first(last))))


def leaf_names(state: Any) -> list[str]:
    """The path of each leaf of ``state``, in the order of :func:`same_leaves`."""
    return [jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_leaves_with_path(state)]


@functools.cache
def _lockstep(name: str, options_json: str, chunk: int) -> Lockstep:
    return Lockstep(name, json.loads(options_json), chunk)


def lockstep(name: str, options: dict[str, Any], chunk: int) -> Lockstep:
    return _lockstep(name, json.dumps(options, sort_keys=True), chunk)


def optimized(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a child process that compiles as users do, for a test that runs a long compiled loop:
    the default run's XLA flags (``tests/conftest.py``: LLVM's optimizations off, the older fusion emitters) cut
    compile times but make the code run slower (the exact best-response check's 40,000 training decisions: 40 s
    against 3 s); the child runs without them. It is spawned (a fresh interpreter: XLA reads its flags once
    per process) with the run's other settings, the compilation cache among them; ``function`` and ``args`` are
    pickled, so ``function`` is importable by name."""
    flags = os.environ.get("XLA_FLAGS", "").replace(XLA_FLAGS_OF_THE_DEFAULT_RUN, "").strip()
    with mock.patch.dict(os.environ, {"XLA_FLAGS": flags}), \
            ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()
