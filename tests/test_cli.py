"""``card-envs``: one console script with a subcommand per tool, each with ``--help`` and an example; the
``python -m`` forms it fronts keep working."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from train.cli import COMMANDS

CARD_ENVS = Path(sys.executable).with_name("card-envs")
ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, command: Path | str = CARD_ENVS) -> subprocess.CompletedProcess:
    return subprocess.run([str(command), *args], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)


def test_the_top_help_lists_every_command() -> None:
    done = run("--help")
    assert done.returncode == 0, done.stderr
    for name, (module, _) in COMMANDS.items():
        assert f"  {name} " in done.stdout and module.removesuffix(".__main__") in done.stdout


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help_with_an_example(name: str) -> None:
    done = run(name, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: card-envs {name}")
    assert f"card-envs {name} " in done.stdout.split("usage:", 1)[1].split("\n", 1)[1]  # an example, not the usage


def test_an_unknown_command_is_one_line_and_status_2() -> None:
    done = run("tarin")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "'tarin'" in done.stderr and "train" in done.stderr


def test_no_command_prints_the_usage_and_status_2() -> None:
    done = run()
    assert done.returncode == 2 and "commands:" in done.stderr


def test_a_subcommand_is_the_module_it_fronts() -> None:
    short = run("zoo", "list", "--game", "bloodlines_v0")
    long = run("-m", "agents.zoo", "list", "--game", "bloodlines_v0", command=sys.executable)
    assert short.returncode == long.returncode == 0, short.stderr + long.stderr
    assert short.stdout == long.stdout and "zoo:bloodlines_v0/jax_ppo" in short.stdout


@pytest.mark.parametrize("old", ["agents.match", "agents.evaluate", "agents.ladder", "agents.zoo"])
def test_the_old_module_names_still_run_and_import(old: str) -> None:
    done = run("-m", old, "--help", command=sys.executable)
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m "), done.stderr
    import importlib

    assert importlib.import_module(old).__name__ != old  # the same module object as its new home, not a copy


def test_the_library_tells_which_extra_a_missing_module_needs() -> None:
    from card_envs.extras import missing_message

    message = missing_message(ModuleNotFoundError("No module named 'scipy'", name="scipy"), "card-envs match")
    assert message is not None and "pip install 'card-envs[eval]'" in message
    assert missing_message(ModuleNotFoundError("nope", name="not_a_dependency"), "x") is None
