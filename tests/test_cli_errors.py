"""Bad input at every command line: one line on stderr naming what is wrong, exit status 2, never a traceback.

Every entry point is tried with each kind of bad input it takes: an unknown game, an unknown agent spec, malformed
``--config`` JSON, an option out of range, a missing or foreign checkpoint, a zoo agent at a table it cannot read,
a corrupt saved game, a missing config file, an agent ``card-envs exploit`` cannot seat.

How the cases run (a subprocess per case re-imported numpy, JAX, torch, ... each time: ~50 CPU-seconds in all):

* In-process, most of them. ``python -m MODULE ARGS`` is ``runpy.run_module(MODULE, run_name="__main__")`` with
  ``sys.argv`` set, so the module's own ``__main__`` block runs as it does from a shell (the shims of the old
  names, the ``guarded`` wrapper of a benchmark, the ``chdir`` of ``benchmarks.exploitability``), and ``card-envs
  COMMAND ARGS`` is ``train.cli.main([COMMAND, *ARGS])``, what the console script calls. ``SystemExit`` gives the
  status and ``capfd`` the stderr (at the file descriptor, so what C code or a child process writes counts too);
  the checks are those of a subprocess. Nothing may leak into later tests: the working directory and ``sys.argv``
  are restored (monkeypatch); a worker process may not be started (bad input is refused before any pool is); and
  the environment variables, JAX's config, the root logger's handlers and the signal handlers must be as they
  were, with no thread left running that the call started. A case running more than a minute fails (the
  subprocess's timeout).
* As real subprocesses, :data:`SUBPROCESS`: the ``card-envs`` console script (an unknown command, and a
  subcommand's bad input) and one ``python -m agents.match`` (an old module name, a shim), so that the installed
  entry points stay covered end to end; and ``benchmarks.jax_throughput``'s unknown game and option out of range,
  which it checks only after setting JAX's device count and importing Pgx (which starts JAX's backends): in-process
  that would set the devices of every later JAX test in the worker; and ``benchmarks.training_throughput``'s
  unknown game, whose import of torch sets an environment variable (``KMP_DUPLICATE_LIB_OK``).

No case meets its error in a worker process (none may start one): that path, an exception raised in a worker
reaching the user as one line, is checked on :func:`~card_envs.core.commands.guarded` itself at the end.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import multiprocessing.process
import os
import runpy
import signal
import subprocess
import sys
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import agents.evaluate  # noqa: F401 - the old names' aliases, as any earlier test that imports them leaves them:
import agents.ladder  # noqa: F401   run_in_process must run the shims all the same
import agents.match  # noqa: F401
import agents.zoo  # noqa: F401
from card_envs.core.commands import guarded
from card_envs.core.errors import ConfigError
from train import cli

ROOT = Path(__file__).resolve().parent.parent
CARD_ENVS = Path(sys.executable).with_name("card-envs")
BL = ["--game", "bloodlines_v0"]
REV_ZOO = "zoo:revolution_v0/jax_ppo"

#: the kinds of bad input, each with its arguments and a word the one error line must hold
BAD_TABLE_INPUT = {
    "unknown game": (["--game", "nope_v0", "--agents", "random", "random"], "nope_v0"),
    "unknown agent": (BL + ["--agents", "heuristic:nope", "random"], "heuristic:nope"),
    "malformed JSON": (BL + ["--config", "{bad", "--agents", "random", "heuristic:defender"], "JSON"),
    "option out of range": (BL + ["--config", '{"max_turns": 0}', "--agents", "random", "heuristic:defender"],
                            "max_turns"),
    "missing checkpoint": (BL + ["--agents", "checkpoint:/no/such/checkpoint.zip", "random"], "does not exist"),
    "foreign checkpoint": (BL + ["--agents", "checkpoint:README.md", "random"], "README.md"),
    "zoo agent of another game": (BL + ["--agents", REV_ZOO, "random"], "revolution_v0"),
    "zoo agent at a table it cannot read": (["--game", "revolution_v0", "--agents", REV_ZOO, "random"],
                                            '--config \'{"full_recall": true}\''),
    "games below one": (BL + ["--agents", "random", "heuristic:defender", "--games", "0"], "--games"),
}


def corrupt_saved_game(tmp_path: Path) -> str:
    path = tmp_path / "corrupt.json"
    path.write_text(json.dumps({"format": "card_envs.saved_game", "version": 1, "game": "bloodlines_v0",
                                "actions": [10**6]}))
    return str(path)


def cases() -> list[tuple[str, list[str], str]]:
    """(entry point, arguments, a word of the expected error) for every entry point and bad input it takes."""
    found = []
    for module in ("agents.match", "agents.evaluate"):
        found += [(f"{module}: {kind}", ["-m", module, *args], word) for kind, (args, word) in BAD_TABLE_INPUT.items()]
    found += [
        ("card-envs match: unknown agent", ["match", *BAD_TABLE_INPUT["unknown agent"][0]], "heuristic:nope"),
        ("card-envs: unknown command", ["mtach"], "mtach"),
        ("agents.ladder: unknown game", ["-m", "agents.ladder", "--game", "nope_v0", "--agent", "random"], "nope_v0"),
        ("agents.ladder: unknown agent", ["-m", "agents.ladder", *BL, "--agent", "heuristic:nope"], "heuristic:nope"),
        ("agents.ladder: missing checkpoint", ["-m", "agents.ladder", *BL, "--agent", "checkpoint:/no.zip"],
         "does not exist"),
        ("agents.ladder: missing ladder file", ["-m", "agents.ladder", "show", *BL, "--ladder", "/no.json"],
         "/no.json"),
        ("agents.zoo: unknown entry", ["-m", "agents.zoo", "show", "zoo:bloodlines_v0/nope"], "nope"),
        ("agents.zoo: missing checkpoint", ["-m", "agents.zoo", "add", "--checkpoint", "/no.zip", "--name", "x"],
         "does not exist"),
        ("agents.play: unknown game", ["-m", "agents.play", "--game", "nope_v0"], "nope_v0"),
        ("agents.play: malformed JSON", ["-m", "agents.play", *BL, "--config", "[1"], "JSON"),
        ("agents.play: option out of range", ["-m", "agents.play", *BL, "--config", '{"max_turns": 0}', "--ui",
                                              "terminal"], "max_turns"),
        ("agents.play: unknown agent", ["-m", "agents.play", *BL, "--opponents", "heuristic:nope", "--ui",
                                        "terminal"], "heuristic:nope"),
        ("agents.play: corrupt saved game", ["-m", "agents.play", "--replay", "CORRUPT"], "saved game"),
        ("agents.play: missing saved game", ["-m", "agents.play", "--replay", "/no/game.json"], "/no/game.json"),
        ("train: missing config", ["-m", "train", "--config", "/no/config.yaml"], "/no/config.yaml"),
        ("train: unknown key", ["-m", "train", "--config", "configs/bloodlines.yaml", "--set", "nope=1"], "nope"),
        ("train: option out of range", ["-m", "train", "--config", "configs/bloodlines.yaml", "--set",
                                        "env_options.max_turns=0"], "max_turns"),
        ("lockstep: unknown game", ["-m", "card_envs.jax.lockstep", "nope_v0"], "nope_v0"),
        ("lockstep: option out of range", ["-m", "card_envs.jax.lockstep", "bloodlines_v0", "--config",
                                           '{"max_turns": 0}'], "max_turns"),
        ("train.exploit: unknown game", ["-m", "train.exploit", "--game", "nope_v0", "--agent", "random"], "nope_v0"),
        ("train.exploit: unknown agent", ["-m", "train.exploit", *BL, "--agent", "heuristic:nope"], "heuristic:nope"),
        ("train.exploit: search player", ["-m", "train.exploit", "--game", "revolution_v0", "--agent",
                                          "ismcts:sims=50"], "ismcts:sims=50"),
        ("train.exploit: rule-based player without a JAX port", ["-m", "train.exploit", "--game",
                                                                 "revolutionary_war_v0", "--agent",
                                                                 "heuristic:endgame"], "heuristic:pot (ported)"),
        ("train.exploit: missing checkpoint", ["-m", "train.exploit", *BL, "--agent", "checkpoint:/no.zip"],
         "does not exist"),
        ("train.exploit: zoo agent of another game", ["-m", "train.exploit", *BL, "--agent", REV_ZOO],
         "revolution_v0"),
        ("train.exploit: budget below one", ["-m", "train.exploit", *BL, "--agent", "random", "--budget", "0"],
         "--budget"),
        ("train.exploit: unknown key", ["-m", "train.exploit", *BL, "--agent", "random", "--set", "nope=1"], "nope"),
        ("train.exploit: option out of range", ["-m", "train.exploit", *BL, "--agent", "random", "--set",
                                                "env_options.max_turns=0"], "max_turns"),
        ("train.exploit: missing recipe", ["-m", "train.exploit", *BL, "--agent", "random", "--config",
                                           "/no/recipe.yaml"], "/no/recipe.yaml"),
        ("train.exploit: recipe of another game", ["-m", "train.exploit", *BL, "--agent", "random", "--config",
                                                   "configs/revolution_jax.yaml"], "revolution_v0"),
        ("train.exploit: resume without a checkpoint", ["-m", "train.exploit", *BL, "--agent", "random", "--resume",
                                                        "--run-dir", "/no/such/run"], "/no/such/run"),
        ("card-envs exploit: unknown agent", ["exploit", *BL, "--agent", "heuristic:nope"], "heuristic:nope"),
        ("benchmarks.exploitability: unknown row", ["-m", "benchmarks.exploitability", "list", "--agent", "nope"],
         "nope"),
        ("benchmarks.profile_env: unknown game", ["-m", "benchmarks.profile_env", "nope_v0"], "nope_v0"),
        ("benchmarks.ismcts_strength: malformed JSON", ["-m", "benchmarks.ismcts_strength", "--config", "{bad"],
         "JSON"),
        ("benchmarks.jax_throughput: unknown game", ["-m", "benchmarks.jax_throughput", "--games", "nope_v0"],
         "nope_v0"),
        ("benchmarks.jax_throughput: malformed JSON", ["-m", "benchmarks.jax_throughput", "--config",
                                                       "revolution_v0={bad"], "JSON"),
        ("benchmarks.jax_throughput: option out of range", ["-m", "benchmarks.jax_throughput", "--config",
                                                            'revolution_v0={"num_hands": 0}'], "num_hands"),
        ("benchmarks.training_throughput: unknown game", ["-m", "benchmarks.training_throughput", "--games", "nope_v0"],
         "nope_v0"),
        ("benchmarks.jax_throughput: unknown layout", ["-m", "benchmarks.jax_throughput", "--layout", "first,vmap"],
         "vmap"),
    ]
    return found


CASES = cases()

#: the cases that run as real subprocesses (see the module docstring)
SUBPROCESS = {
    "card-envs: unknown command",
    "card-envs match: unknown agent",
    "agents.match: option out of range",
    "benchmarks.jax_throughput: unknown game",
    "benchmarks.jax_throughput: option out of range",
    "benchmarks.training_throughput: unknown game",  # imports torch, which sets KMP_DUPLICATE_LIB_OK in os.environ
}
assert SUBPROCESS <= {case[0] for case in CASES}
IN_PROCESS_SECONDS = 60


def run_in_a_subprocess(args: list[str]) -> tuple[int, str]:
    command = [sys.executable, *args] if args[0] == "-m" else [str(CARD_ENVS), *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)
    return done.returncode, done.stderr


def exit_status(code: object) -> int:
    """The status of a process ended by ``SystemExit(code)``; a message (not an int) is printed as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def state_a_command_must_leave() -> dict[str, object]:
    """What a call that refuses its input must not change for the tests that follow it in this process."""
    import jax

    return {
        "environment variables": dict(os.environ),
        "JAX config": dict(jax.config.values),
        "root logger handlers": list(logging.getLogger().handlers),
        "root logger level": logging.getLogger().level,
        "signal handlers": {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)},
    }


def no_worker_process(process: multiprocessing.process.BaseProcess) -> None:
    pytest.fail(f"a worker process ({process.name}) was started before the bad input was refused")


def took_too_long(signum: int, frame: object) -> None:
    pytest.fail(f"still running after {IN_PROCESS_SECONDS} s: the bad input was not refused")


def run_in_process(args: list[str], capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """``python -m MODULE ARGS`` or ``card-envs ARGS`` in this process: its exit status and stderr."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", no_worker_process)
    if args[0] == "-m":
        module = args[1]
        monkeypatch.setattr(sys, "argv", [module, *args[2:]])
        # an old name imported by an earlier test is its shim's alias of the moved module (agents.match ->
        # agents.tournaments.match) in sys.modules, which runpy cannot run under the old name: as in a fresh
        # interpreter, the shim's own file runs (the alias comes back after the test)
        if getattr(sys.modules.get(module), "__name__", module) != module:
            monkeypatch.delitem(sys.modules, module)

        def call() -> None:
            with warnings.catch_warnings():  # runpy: "found in sys.modules ... prior to execution" (imported before)
                warnings.filterwarnings("ignore", category=RuntimeWarning, module="runpy")
                runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        monkeypatch.setattr(sys, "argv", [str(CARD_ENVS), *args])

        def call() -> None:
            sys.exit(cli.main(args))

    before, threads = state_a_command_must_leave(), set(threading.enumerate())
    capfd.readouterr()
    previous = signal.signal(signal.SIGALRM, took_too_long)
    signal.alarm(IN_PROCESS_SECONDS)
    try:
        call()
        status = 0
    except SystemExit as end:
        status = exit_status(end.code)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    stderr = capfd.readouterr().err
    after = state_a_command_must_leave()
    for what, value in before.items():
        assert after[what] == value, f"the call changed the {what}: {changes(value, after[what])}"
    assert set(threading.enumerate()) <= threads, f"the call left threads running: {threading.enumerate()}"
    return status, stderr


def changes(before: object, after: object) -> str:
    """What differs: the changed keys of a dict (names and values: a few, not the whole environment)."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = sorted((key for key in before.keys() | after.keys() if before.get(key, KeyError) != after.get(key,
                       KeyError)), key=str)
        return ", ".join(f"{key}: {before.get(key, '(unset)')!r} -> {after.get(key, '(unset)')!r}" for key in keys)
    return f"{before!r} -> {after!r}"


@pytest.mark.parametrize(("name", "args", "word"), CASES, ids=[case[0] for case in CASES])
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, capfd: pytest.CaptureFixture,
                                            monkeypatch: pytest.MonkeyPatch, name: str, args: list[str],
                                            word: str) -> None:
    args = [corrupt_saved_game(tmp_path) if arg == "CORRUPT" else arg for arg in args]
    status, stderr = (run_in_a_subprocess(args) if name in SUBPROCESS else run_in_process(args, capfd, monkeypatch))
    lines = stderr.strip().splitlines()
    assert status == 2, stderr
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    assert "error:" in lines[0] and word in lines[0], lines[0]


def _refused_in_a_worker() -> None:
    raise ConfigError("option 'x' must be at least 1, got 0")


def _work_in_a_worker() -> int:
    # spawned, not forked: the in-process cases above leave JAX's threads running in this process
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_refused_in_a_worker).result()


def test_an_error_inside_a_worker_process_reaches_the_user_as_one_line(capsys: pytest.CaptureFixture) -> None:
    assert guarded(_work_in_a_worker, "prog") == 2
    assert capsys.readouterr().err == "prog: error: option 'x' must be at least 1, got 0\n"


def test_a_missing_optional_dependency_names_its_extra(capsys: pytest.CaptureFixture) -> None:
    def needs_scipy() -> int:
        raise ModuleNotFoundError("No module named 'scipy'", name="scipy")

    assert guarded(needs_scipy, "card-envs match") == 2
    assert "pip install 'card-envs[eval]'" in capsys.readouterr().err


def test_a_bug_keeps_its_traceback() -> None:
    def broken() -> int:
        raise KeyError("a bug, not bad input")

    with pytest.raises(KeyError):
        guarded(broken, "prog")
