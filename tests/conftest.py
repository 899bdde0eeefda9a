"""Test-run setup shared by every test process.

JAX compiles the same programs in several tests and in both test workers (``pytest -n auto``): one persistent
compilation cache per run, in a temporary directory that the controller creates before it starts the workers
(they inherit its environment) and removes at the end, lets a program compiled once be loaded elsewhere.
Programs are keyed by their HLO, the jax/jaxlib versions and the compile options, so what a test runs is
unchanged; a size limit makes JAX read and write the cache under a file lock (both workers use it at once).
A ``JAX_COMPILATION_CACHE_DIR`` set by the caller is kept as it is. Importing jax stays lazy: only environment
variables are set here.

The default run (``-m 'not slow'``) compiles with LLVM's optimizations off and XLA's older CPU fusion emitters
(``XLA_FLAGS`` :data:`XLA_FLAGS_OF_THE_DEFAULT_RUN`, unless the caller sets ``XLA_FLAGS``): the same XLA programs,
lowered to machine code by cheaper passes. Most JAX tests compile far more than they run: the first flag cut their
compile time by about a third (Battlecards' lockstep of cfg2: 19.2 s -> 13.5 s; Revolution's batch-last check under
every option: 27.1 s -> 17.6 s), the second by a third again (the full step of Battlecards with retirement: 5.3 s ->
3.0-3.8 s). The code they make runs slower, which costs nothing in tests that play a few hundred steps; a test that
runs a long compiled loop runs it in a child process that compiles as users do (``tests.jax_support.optimized``: the
exact best-response check's 40,000 training decisions took 40 s here against 3 s; opt-in now). With both, that check
opt-in and fewer Battlecards games in the default lockstep, the default run on 2 cores went from 653 s to 384-526 s
(the tests' own times: 1,247 s -> 717-978 s; the machine's speed moves by a fifth from hour to hour: tests that
compile nothing took 199-281 s of it). The opt-in run (``-m slow``: long training, the lockstep acceptance) and
every benchmark compile as users do.

The files of the longest tests (JAX compiles, lockstep, training, the browser) run first, each file whole and in
its own order: ``--dist worksteal`` hands each worker a half of the run and a worker that runs out steals from
the end of the other's, so with the long tests at the front the run ends on short ones instead of one worker
finishing a half-minute test while the other waits (about 35 s of a 590 s run on 2 cores were that wait).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

CACHE_VARIABLE = "JAX_COMPILATION_CACHE_DIR"
XLA_FLAGS_OF_THE_DEFAULT_RUN = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
_SETTINGS = {
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5",  # programs that take longer to compile are cached
    "JAX_COMPILATION_CACHE_MAX_SIZE": str(4 << 30),  # bytes; any limit turns on the file lock
}


#: test files whose tests take longest (CPU seconds of the default run), longest first
LONGEST_FILES = ("test_jax_lockstep.py", "test_jax_api.py", "test_jax_battlecards.py",
                 "test_all_games.py", "test_jax_revolution.py", "test_docs.py", "test_play_browser.py",
                 "test_train_jax.py", "test_ismcts.py", "test_jax_devices.py", "test_jax_bloodlines.py",
                 "test_jax_revolutionary_war.py", "test_train_jax_games.py", "test_train_resume.py",
                 "test_ray_backend.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`LONGEST_FILES` first, longest first; the rest after them, in collection order."""
    rank = {name: index for index, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's tests keep their order


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # a test worker: it inherited the controller's environment
    if config.getoption("markexpr") == "not slow" and "XLA_FLAGS" not in os.environ:
        config._card_envs_xla_flags = True  # type: ignore[attr-defined]
        os.environ["XLA_FLAGS"] = XLA_FLAGS_OF_THE_DEFAULT_RUN
    if "SB3_LOGDIR" not in os.environ:  # SB3 makes a folder for every learn() without a log folder, in /tmp, kept
        logs = tempfile.mkdtemp(prefix="card_envs-sb3-logs-")
        config._card_envs_sb3_logs = logs  # type: ignore[attr-defined]
        os.environ["SB3_LOGDIR"] = logs
    if CACHE_VARIABLE in os.environ:
        return  # the caller chose a cache
    directory = tempfile.mkdtemp(prefix="card_envs-jax-cache-")
    config._card_envs_jax_cache = directory  # type: ignore[attr-defined]
    os.environ[CACHE_VARIABLE] = directory
    for name, value in _SETTINGS.items():
        os.environ.setdefault(name, value)


def pytest_unconfigure(config: pytest.Config) -> None:
    if getattr(config, "_card_envs_xla_flags", False):
        os.environ.pop("XLA_FLAGS", None)
    logs = getattr(config, "_card_envs_sb3_logs", None)
    if logs is not None:
        os.environ.pop("SB3_LOGDIR", None)
        shutil.rmtree(logs, ignore_errors=True)
    directory = getattr(config, "_card_envs_jax_cache", None)
    if directory is not None:
        os.environ.pop(CACHE_VARIABLE, None)
        shutil.rmtree(directory, ignore_errors=True)
