"""What every command line of the project shares: bad input is one line on stderr and exit status 2.

==========================  =======================================================================================
:class:`CommandParser`      ``argparse.ArgumentParser`` whose usage errors are one line, ``PROG: error: MESSAGE (see
                            PROG --help)``, exit status 2 (argparse prints the whole usage first)
:func:`json_object`         the ``type=`` of a ``--config`` option: a JSON object, or a usage error naming the flaw
:func:`positive_int`        the ``type=`` of a count (``--games``, ``--workers``): at least 1
:func:`checked_game`        the rules engine of a game and its options, built before any work: an unknown game or
                            option, or a value out of range, is a :class:`~card_envs.core.errors.ConfigError`
:func:`guarded`             runs a command's work: bad input raised while it runs (any
                            :class:`~card_envs.core.errors.CardEnvsError`, in a worker process too; a file that
                            cannot be read or written; a missing optional dependency, with the extra that installs
                            it) becomes one line and exit status 2, never a traceback
:func:`command_line`        the decorator of a ``main(argv, prog)`` that runs it :func:`guarded`
==========================  =======================================================================================

Every ``main`` of ``card_envs``, ``agents``, ``train`` and ``benchmarks`` takes ``(argv, prog)``: ``prog`` is
``python -m <module>`` by default and ``card-envs <command>`` from the console script.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from card_envs.core.errors import CardEnvsError
from card_envs.extras import missing_message

#: the exit status of every refused input (argparse's own)
BAD_INPUT = 2

Main = Callable[[Sequence[str] | None, str], int]


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line naming the problem and where help is."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def json_object(text: str) -> dict[str, Any]:
    """``--config`` text -> a dict; anything but a JSON object is a usage error naming what was wrong."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error.msg} at character {error.pos}): {text!r}; "
                                         "write a JSON object, e.g. '{\"num_players\": 4}'") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"a JSON object is needed, e.g. '{{\"num_players\": 4}}'; got {text!r}")
    return value


def positive_int(text: str) -> int:
    """The ``type=`` of a count option (games, workers, ...): a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number is needed, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def checked_game(name: str, config: Mapping[str, Any] | None = None) -> Any:
    """``card_envs.make_game(name, **config)``: the table exists and its options are valid (ConfigError if not)."""
    import card_envs

    return card_envs.make_game(name, **dict(config or {}))


def one_line(error: BaseException) -> str:
    """An error's message on one line (a multi-line message keeps its lines, joined)."""
    return " ".join(line.strip() for line in str(error).strip().splitlines() if line.strip()) or type(error).__name__


def refuse(prog: str, message: str) -> int:
    """Print ``PROG: error: MESSAGE`` on stderr; the exit status of bad input."""
    print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
    return BAD_INPUT


def guarded(call: Callable[[], Any], prog: str) -> int:
    """Run ``call()``; bad input raised inside it is one line on stderr and exit status 2, never a traceback.

    Caught: :class:`~card_envs.core.errors.CardEnvsError` (config, deck, agent spec, checkpoint, saved game, ...;
    an exception raised in a worker process reaches here as itself), ``OSError`` (a file that cannot be read or
    written) and a ``ModuleNotFoundError`` of an optional dependency (named with its extra). Anything else is a
    bug and keeps its traceback. Returns ``call()``'s status (an int), or 0 when it returns something else."""
    try:
        status = call()
    except CardEnvsError as error:
        return refuse(prog, one_line(error))
    except ModuleNotFoundError as error:
        message = missing_message(error, prog)
        if message is None:
            raise
        return refuse(prog, message)
    except OSError as error:
        return refuse(prog, one_line(error))
    return status if isinstance(status, int) else 0


def command_line(default_prog: str) -> Callable[[Main], Main]:
    """Decorate ``main(argv, prog)`` so that bad input raised inside it is one line and exit status 2
    (:func:`guarded`); ``prog`` defaults to ``default_prog``."""

    def decorate(body: Main) -> Main:
        @functools.wraps(body)
        def main(argv: Sequence[str] | None = None, prog: str = default_prog) -> int:
            return guarded(lambda: body(argv, prog), prog)

        return main

    return decorate


def run_main(module: str, prog: str, argv: Sequence[str] | None = None) -> int:
    """Import ``module`` and run its ``main(argv, prog)``, :func:`guarded`: a missing optional dependency met while
    importing it is one line naming the extra, as bad input met while running it is."""
    import importlib

    return guarded(lambda: importlib.import_module(module).main(argv, prog=prog), prog)
