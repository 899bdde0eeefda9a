"""The terminal table, driven by scripted sessions: the app's own driver, and a real process on a pipe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rich", reason="the terminal table needs the extra 'play'")
from rich.console import Console  # noqa: E402

import card_envs  # noqa: E402
from agents.play.tables import PlayTable, WatchTable, make_game  # noqa: E402
from agents.play.terminal import TerminalTable  # noqa: E402
from agents.players.registry import strongest_heuristic  # noqa: E402
from tests.play_helpers import QUICK_CONFIGS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Script:
    """Answers the table's prompts: moves by number (after one bad answer), then a script at the end."""

    def __init__(self, at_end: list[str], bad_first: str = "zz") -> None:
        self.at_end = list(at_end)
        self.bad = bad_first
        self.prompts: list[str] = []
        self.moves = 0

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if prompt.startswith("your move"):
            if self.bad:
                answer, self.bad = self.bad, ""
                return answer
            self.moves += 1
            return "2" if self.moves % 3 == 0 else "1"
        if not self.at_end:
            raise EOFError
        return self.at_end.pop(0)


def session(table, script, **kwargs) -> tuple[TerminalTable, str]:
    out = io.StringIO()
    terminal = TerminalTable(Console(file=out, width=140, color_system=None), read=script, sleep=lambda s: None)
    (terminal.play if isinstance(table, PlayTable) else terminal.watch)(table, **kwargs)
    return terminal, out.getvalue()


@pytest.mark.parametrize("name", card_envs.ENV_NAMES)
def test_a_scripted_terminal_session_plays_to_the_end_and_deals_again(name):
    game = make_game(name, QUICK_CONFIGS[name])
    table = PlayTable(game, 0, [strongest_heuristic(name)], 7, delay_ms=0)
    script = Script(at_end=["x", "s", "q"])  # a bad choice, the same deal again, quit
    _terminal, text = session(table, script)
    assert "'zz' is not a move here" in text  # refused, asked again
    assert text.count("Result: ") >= 1 and "new deal" in text
    first_result = text.split("Result: ", 1)[1].splitlines()[0]
    assert first_result  # the result line names the winner or the draw, with the score
    assert "» player_0" in text and "you" in text
    assert script.prompts.count("n new game · s same deal again · w swap seats · q quit > ") >= 2
    assert table.deal_number == 0 and table.seat == 0  # "s": the same deal again, from the same seat


def test_moves_by_name_and_swapping_seats():
    game = make_game("revolutionary_war_v0", {})
    table = PlayTable(game, 0, ["heuristic:pot"], 3, delay_ms=0)
    answers = iter(["concede"] * 200)

    def read(prompt: str) -> str:
        if prompt.startswith("your move"):
            return next(answers)
        if table.seat == 0:
            return "w"
        raise EOFError

    _terminal, text = session(table, read)
    assert table.seat == 1 and "» player_0 concedes" in text and "» player_1 concedes" in text


def test_watching_in_the_terminal_steps_back_switches_view_and_plays_to_the_end():
    game = make_game("revolution_v0", {"num_hands": 1})
    table = WatchTable(game, agents=["heuristic:counting", "random", "random", "heuristic:cheap"], seed=1)
    answers = iter(["", "", "b", "v 2", "v 9", "", "p", "", "q"])
    _terminal, text = session(table, lambda prompt: next(answers), delay=0)
    assert "decision 1" in text and "decision 2" in text
    assert "view must be 'all' or a seat 0..3" in text
    assert "player_2 · random" in text and "Result: " in text
    last = len(table.actions)
    assert f"decision {last} of {last}" in text


def test_the_terminal_table_as_a_real_process_on_a_pipe():
    """``python -m agents.play --ui terminal`` with its input piped: numbers until the end, then quit."""
    env = {**os.environ, "COLUMNS": "120", "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run([sys.executable, "-m", "agents.play", "--game", "revolutionary_war_v0", "--ui", "terminal",
                             "--delay", "0", "--seed", "5", "--opponents", "heuristic:cheapest"],
                            input="1\n" * 120 + "q\n", capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Result: " in result.stdout and "seed 5" in result.stderr
    assert "1) play" in result.stdout and "player_1 · heuristic:cheapest" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--game", "revolution_v0", "--opponents", "heuristic:nope"], "heuristic:nope"),
    (["--game", "revolution_v0", "--seat", "4"], "seat must be 0..3"),
    (["--game", "revolution_v0", "--config", '{"num_hands": 0}'], "bad game config"),
    (["--game", "bloodlines_v0", "--watch", "random", "random", "random"], "one agent spec for all seats"),
    (["--replay", "/nonexistent.json"], "cannot read saved game"),
])
def test_bad_command_lines_fail_with_a_message(args, message, capsys):
    from agents.play.__main__ import main

    assert main([*args, "--ui", "terminal"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    ([], "--game is required"), (["--game", "revolution_v0", "--config", "[1]"], "a JSON object is needed"),
    (["--game", "revolution_v0", "--delay", "-1"], "--delay must be 0 or more"),
])
def test_command_line_usage_errors(args, message, capsys):
    from agents.play.__main__ import main

    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2 and message in capsys.readouterr().err
