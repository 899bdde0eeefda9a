"""The result of a training run (either backend): the final evaluation, its table and files.

:func:`evaluate` plays a checkpoint against every baseline of the config with
:func:`agents.tournaments.match.contest` (the existing harness on the Python env: seats rotated, each deal replayed
once per seat); :class:`Summary` holds the results with the run's size and times, renders the table
``card-envs train`` prints last, and writes ``<prefix>.md`` / ``.json`` atomically. Needs no torch and
no jax, so both trainers (``train/trainer.py``, ``train/jax_ppo.py``) share it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import card_envs
from agents.files import write_atomically
from agents.tournaments.match import ContestResult, contest
from card_envs.core.errors import ConfigError
from train.checkpoint import Checkpoint, CheckpointError, read_checkpoint
from train.config import TrainConfig, config_from_dict, differences


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (evaluation workers, subprocess envs)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def checkpoint_to_resume(config: TrainConfig, path: Path, resumable: tuple[str, ...]) -> Checkpoint:
    """The checkpoint ``--resume`` continues (model included), after checking that ``config`` differs from the
    one it was written with only in the top-level keys ``resumable``."""
    if not path.exists():
        raise CheckpointError(f"--resume: no checkpoint at {path} (run_dir {str(path.parent)!r}); "
                              f"start the run without --resume")
    checkpoint = read_checkpoint(path, with_model=True)
    stored = config_from_dict(checkpoint.meta["config"])
    changed = differences(stored.to_dict(), config.to_dict())
    fixed = [key for key in changed if key.split(".")[0] not in resumable]
    if fixed:
        raise ConfigError(f"--resume: the config differs from the checkpoint's in {', '.join(fixed)}; a resumed run "
                          f"may change only {', '.join(resumable)}")
    return checkpoint


def evaluate(config: TrainConfig, checkpoint_path: Path, games: int, *, seed: int,
             progress: bool = False) -> list[ContestResult]:
    """The checkpoint against every baseline of ``config`` (:func:`agents.tournaments.match.contest`)."""
    return [contest(config.game, f"checkpoint:{checkpoint_path}", opponent, games, seed=seed,
                    config=config.env_options, workers=config.eval.workers, progress=progress)
            for opponent in config.eval_opponents()]



@dataclass
class Summary:
    """The result of a run: final evaluation and how long it took."""

    config: TrainConfig
    num_timesteps: int
    wall_time: float
    cpu_time: float
    results: list[ContestResult]
    checkpoint: str
    pretrain: dict[str, Any] = field(default_factory=dict)
    #: the training method, as the table's first line names it
    method: str = "MaskablePPO"

    def table(self) -> str:
        seats = card_envs.make_game(self.config.game, **self.config.env_options).num_players
        options = f" {self.config.env_options}" if self.config.env_options else ""
        lines = [
            f"{self.config.game}{options}: {self.method}, {self.num_timesteps:,} learner "
            f"decisions in {self.wall_time / 60:.1f} min wall time, {self.cpu_time / 60:.1f} min CPU time "
            f"({self.num_timesteps / max(self.wall_time, 1e-9):,.0f} "
            f"decisions/s), checkpoint {self.checkpoint}",
            "",
        ]
        if self.pretrain:
            warm = (f"Warm start: imitation of {self.pretrain['teacher']} over {self.pretrain['decisions']:,} "
                    f"decisions (agreement {self.pretrain['accuracy']:.3f}).")
            rounds = self.pretrain.get("student_agreement")
            if rounds:
                warm += (" DAgger: in each round, the share of its own positions where the student chose as "
                         f"the teacher would: {', '.join(f'{share:.3f}' for share in rounds)}.")
            lines += [warm, ""]
        lines += [
            "| trained agent vs field of | seats | games | win rate [95% CI] | fair share | CI above fair share | "
            "won by the field | no winner | mean return |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in self.results:
            low, high = r.interval
            lines.append(f"| {r.opponent} | {seats} | {r.games} | {r.win_rate:.3f} [{low:.3f}, {high:.3f}] | "
                         f"{1 / seats:.3f} | {'yes' if low > 1 / seats else 'no'} | {r.opponent_wins / r.games:.3f} | "
                         f"{r.nobody / r.games:.3f} | {r.mean_return:+.3f} |")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "num_timesteps": self.num_timesteps, "wall_time": self.wall_time,
                "cpu_time": self.cpu_time,
                "checkpoint": self.checkpoint, "pretrain": self.pretrain, "results": [r.row() for r in self.results]}

    def write(self, prefix: str | Path) -> None:
        write_atomically(f"{prefix}.md", self.table() + "\n")
        write_atomically(f"{prefix}.json", json.dumps(self.to_dict(), indent=2) + "\n")


__all__ = ["Summary", "checkpoint_to_resume", "cpu_seconds", "evaluate"]
