"""The README's main job (``bash .ci/main``, train/main_job.py): its config, its commands, its summary. The default run
trains nothing; the slow test runs the whole job."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from train import main_job
from train.config import differences, load_config

ROOT = Path(__file__).resolve().parents[1]
#: the keys configs/main.yaml shortens; everything else is configs/revolutionary_war_jax.yaml's, but for n_envs (half
#: the games in parallel: as many decisions per second on 2 cores, twice the updates in the short budget)
SHORTENED = {"total_timesteps", "checkpoint_interval", "eval.interval", "eval.final_games", "n_envs"}


class Called(Exception):
    """Raised by a stub in place of the real work, carrying what it was called with."""


def test_the_main_config_is_the_jax_config_with_a_shorter_budget():
    main = load_config(ROOT / "configs" / "main.yaml").to_dict()
    full = load_config(ROOT / "configs" / "revolutionary_war_jax.yaml").to_dict()
    changed = set(differences(full, main)) - {"run_dir"}
    assert changed == SHORTENED
    assert main["total_timesteps"] < full["total_timesteps"]
    assert main["eval"]["final_games"] >= 2000 and main["eval"]["opponents"] is None  # every rule-based player


def test_the_ci_script_sets_up_then_runs_the_main_job_with_the_callers_arguments():
    script = (ROOT / ".ci" / "main").read_text()
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "main")]).returncode == 0
    lines = [line for line in script.splitlines() if line and not line.startswith("#")]
    assert lines[-3].startswith(f'export {main_job.STARTED}="$(date +%s.%N)"')  # so the summary counts the setup
    assert lines[-2:] == ["bash .ci/setup", 'exec .venv/bin/python -m train.main_job "$@"']


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="the full setup would install chromium")
def test_the_setup_check_is_skipped_while_pyproject_and_the_script_are_unchanged_since_it_last_completed(tmp_path):
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "setup").write_text((ROOT / ".ci" / "setup").read_text())
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/../pip-calls"\n')  # stands in for pip
    python.chmod(0o755)

    def pip_calls() -> int:  # the installs so far (pip's torch, uv's card-envs)
        subprocess.run(["bash", str(tmp_path / ".ci" / "setup")], check=True, capture_output=True)
        calls = tmp_path / ".venv" / "pip-calls"
        return sum("install" in line.split() for line in calls.read_text().splitlines()) if calls.exists() else 0

    assert pip_calls() == 2  # torch, then card-envs and its extras
    assert pip_calls() == 2  # nothing changed: no pip
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = '2'\n")
    assert pip_calls() == 4


def test_the_setup_time_is_counted_from_the_scripts_start_when_it_gave_one():
    assert main_job.setup_seconds({main_job.STARTED: "1000.5"}, 1012.0) == {"setup": 11.5}
    assert main_job.setup_seconds({}, 1012.0) == {}
    assert main_job.setup_seconds({main_job.STARTED: "soon"}, 1012.0) == {}


def test_the_train_command_parses_into_the_main_config_with_the_runs_folder(monkeypatch):
    from train.__main__ import main as train_main

    def stub(config, **options):
        raise Called(config)

    # the JAX trainer's module, stubbed (jax is not imported: a test process that forks stays free of its threads)
    monkeypatch.setitem(sys.modules, "train.jax_ppo", types.SimpleNamespace(train=stub))
    command = main_job.train_command(main_job.CONFIG, ["run_dir=runs/main/x", "seed=3"], ["--no-progress"])
    assert command[:3] == [sys.executable, "-m", "train"]
    monkeypatch.chdir(ROOT)
    with pytest.raises(Called) as called:
        train_main(command[3:])
    config = called.value.args[0]
    assert (config.run_dir, config.seed) == ("runs/main/x", 3)
    assert config.total_timesteps == load_config(ROOT / main_job.CONFIG).total_timesteps


def test_the_ladder_command_places_the_runs_checkpoint_on_fresh_deals(monkeypatch, tmp_path):
    from agents.tournaments import ladder

    def stub(game, agent, **options):
        raise Called(game, agent, options)

    monkeypatch.setattr(ladder, "place", stub)
    config = load_config(ROOT / main_job.CONFIG, ["run_dir=runs/main/x", "seed=3"])
    command = main_job.ladder_command(config, 800, tmp_path / "ladder.json", progress=False)
    assert command[:3] == [sys.executable, "-m", "agents.tournaments.ladder"]
    with pytest.raises(Called) as called:
        ladder.main(command[3:])
    game, agent, options = called.value.args
    assert (game, agent) == ("revolutionary_war_v0", "checkpoint:runs/main/x/checkpoint.zip")
    assert options["games"] == 800 and options["seed"] == 4  # not the ladder's own deals (seed 0)
    assert options["backend"].workers == 2 and options["progress"] is False


LADDER = {"players": [{"label": label, "elo": {"value": elo}} for label, elo in
                      [("ismcts-100ms", 555), ("zoo:sb3_ppo", 550), ("heuristic:endgame", 511), ("random", 0)]]}


def result(opponent: str, rate: float, low: float, high: float) -> dict:
    return {"opponent": opponent, "win_rate": rate, "ci_low": low, "ci_high": high, "games": 2000, "fair_share": 0.5}


def fake_summary(run_dir: Path) -> dict:
    return {"config": {"game": "revolutionary_war_v0", "seed": 0}, "num_timesteps": 9_000_000, "wall_time": 150.0,
            "checkpoint": str(run_dir / "checkpoint.zip"), "pretrain": {"teacher": "heuristic:endgame"},
            "results": [result("random", 0.96, 0.95, 0.97), result("heuristic:pot", 0.51, 0.49, 0.53),
                        result("heuristic:endgame", 0.45, 0.43, 0.47)]}


PLACEMENT = {"elo": {"value": 530.4, "low": 501.0, "high": 561.0}, "games": 780,
             "neighbours": {"above": {"label": "zoo:sb3_ppo", "elo": {"value": 550}},
                            "below": {"label": "heuristic:endgame", "elo": {"value": 511}}}}


TIMES = {"setup": 9.0, "train": 200.0, "evaluate": 25.0, "ladder": 56.0}
TRAINING = {"warm_start": 36.0, "compile": 21.0, "ppo": 150.0}


def row(text: str, opponent: str) -> list[str]:
    """The summary table's row of ``opponent``, split into its columns."""
    [line] = [line for line in text.splitlines() if line.split()[:1] == [opponent]]
    return [column.strip() for column in line.strip().split("  ") if column.strip()]


def test_the_summary_says_what_each_interval_means_and_the_place_on_the_ladder():
    text = main_job.summary_text(fake_summary(Path("runs/main/x")), PLACEMENT, LADDER, TIMES, TRAINING, 3.2)
    assert row(text, "opponent") == ["opponent", "games", "win rate [95% CI]", "verdict"]
    assert row(text, "random") == ["random", "2,000", "0.960 [0.950, 0.970]", "stronger"]
    assert row(text, "heuristic:pot")[-1] == "not decided (the interval holds the fair share)"
    assert row(text, "heuristic:endgame")[-1] == "weaker"
    assert "Beats every rule-based player: no (not heuristic:pot, heuristic:endgame)" in text
    assert "  this agent  +530 [+501, +561] over 780 games: place 3 of 5" in text
    assert "  above it    +550 zoo:sb3_ppo" in text and "  below it    +511 heuristic:endgame" in text
    assert "Files in runs/main/x/: checkpoint.zip" in text and "checkpoint:runs/main/x/checkpoint.zip" in text
    assert "load average 3.2 when it ended" in text
    steps = {line.split()[0]: line.split()[1:3] for line in text.splitlines()[-5:]}
    assert steps == {"setup": ["9", "s"], "train": ["3.3", "min"], "evaluate": ["25", "s"], "ladder": ["56", "s"],
                     "total": ["4.8", "min"]}
    assert "warm start 36 s (the loop compiled alongside it, in 21 s), PPO 2.5 min" in text


def test_the_summary_says_yes_when_every_rule_based_interval_is_above_a_half():
    summary = fake_summary(Path("runs/main/x"))
    summary["results"] = [result("random", 0.96, 0.95, 0.97), result("heuristic:endgame", 0.53, 0.505, 0.55)]
    text = main_job.summary_text(summary, PLACEMENT, LADDER, {"train": 1.0}, TRAINING)
    assert "Beats every rule-based player: yes" in text and "load average" not in text


class FakeSummary:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def table(self) -> str:
        return "| trained agent vs field of |"

    def to_dict(self) -> dict:
        return fake_summary(self.run_dir)


def test_the_job_trains_evaluates_places_then_summarises_and_stops_at_a_failed_step(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(main_job.STARTED, raising=False)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "main.yaml").write_text((ROOT / "configs" / "main.yaml").read_text())
    ran = []

    def fake_run(command):
        ran.append(command[2])
        if command[2] == "train":
            assert "--no-final-eval" in command  # the job evaluates on two processes itself
        else:
            out = Path(command[command.index("--out") + 1])
            out.parent.mkdir(parents=True)
            out.write_text(json.dumps(PLACEMENT))
        return subprocess.CompletedProcess(command, 0)

    def fake_evaluation(config, *, progress):
        ran.append("evaluate")
        return FakeSummary(Path(config.run_dir)), TRAINING

    monkeypatch.setattr(main_job.subprocess, "run", fake_run)
    monkeypatch.setattr(main_job, "evaluated_summary", fake_evaluation)
    assert main_job.main(["--set", "run_dir=runs/main/x", "--no-progress"]) == 0
    assert ran == ["train", "evaluate", "agents.tournaments.ladder"]
    out = capsys.readouterr().out
    assert out.index("| trained agent vs field of |") < out.index("== The main job: summary ==")
    job = json.loads((tmp_path / "runs" / "main" / "x" / "job.json").read_text())
    assert list(job["seconds"]) == ["train", "evaluate", "ladder"] and job["elo"] == PLACEMENT["elo"]

    monkeypatch.setattr(main_job.subprocess, "run", lambda command: subprocess.CompletedProcess(command, 3))
    with pytest.raises(SystemExit) as stopped:
        main_job.main(["--set", "run_dir=runs/main/y"])
    assert stopped.value.code == 3
    assert "the train step failed" in capsys.readouterr().err


def test_the_job_evaluates_the_trainers_final_games_and_writes_its_summary(tmp_path, monkeypatch):
    # one process: this test's process may have run JAX (other tests), and the games do not depend on the count
    monkeypatch.setattr(main_job, "WORKERS", 1)
    from train.checkpoint import Checkpoint, PolicyNet, game_signature, write_checkpoint
    from train.summary import evaluate

    config = load_config(ROOT / main_job.CONFIG, [f"run_dir={tmp_path}", "eval.final_games=6", "seed=5"])
    signature = game_signature(config.game, config.env_options)
    rng = np.random.default_rng(0)
    net = PolicyNet([rng.normal(size=(signature["observation_size"], signature["num_actions"]))],
                    [np.zeros(signature["num_actions"])], "tanh")
    warm = {"teacher": "heuristic:endgame", "decisions": 10, "accuracy": 0.9, "seconds": 20.0}
    meta = {"game": signature, "config": config.to_dict(), "num_timesteps": 1234, "backend": "jax",
            "policy": {"activation": "tanh", "deterministic": True},
            "run": {"wall_time": 60.0, "cpu_time": 90.0, "compile_time": 15.0, "pretrain": warm}}
    write_checkpoint(tmp_path / "checkpoint.zip", Checkpoint(meta, net))
    summary, training = main_job.evaluated_summary(config, progress=False)
    assert training == {"warm_start": 20.0, "compile": 15.0, "ppo": 40.0}
    trainers = evaluate(config, tmp_path / "checkpoint.zip", 6, seed=config.seed + 2)  # as the trainer does
    assert [r.row() for r in summary.results] == [r.row() for r in trainers]
    assert [r.opponent for r in summary.results] == ["random", "heuristic:cheapest", "heuristic:pot",
                                                     "heuristic:endgame"]
    written = json.loads((tmp_path / "summary.json").read_text())
    assert (written["num_timesteps"], written["wall_time"], written["pretrain"]) == (1234, 60.0, warm)
    assert "PPO (JAX" in (tmp_path / "summary.md").read_text()


def test_a_bad_override_fails_before_anything_runs(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(main_job.subprocess, "run", lambda command: pytest.fail("ran " + command[2]))
    with pytest.raises(SystemExit) as stopped:
        main_job.main(["--set", "ppo.learning_rate=-1"])
    assert stopped.value.code == 2 and "ppo.learning_rate must be > 0" in capsys.readouterr().err


@pytest.mark.slow
def test_the_whole_main_job_beats_every_rule_based_player(tmp_path):
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "train.main_job", "--no-progress", "--set", f"run_dir={run_dir}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert {r["opponent"] for r in summary["results"]} == {"random", "heuristic:cheapest", "heuristic:pot",
                                                            "heuristic:endgame"}
    for r in summary["results"]:
        assert r["games"] >= 2000 and r["ci_low"] > 0.5, r
    placement = json.loads((run_dir / "ladder.json").read_text())
    assert placement["elo"]["low"] < placement["elo"]["value"] < placement["elo"]["high"]
    assert "== The main job: summary ==" in done.stdout and "place " in done.stdout
