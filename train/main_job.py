"""The README's main job (``bash .ci/main``): train a Revolutionary War agent in minutes, then show how strong it is.

    python -m train.main_job                      # what .ci/main runs once .ci/setup has checked the install
    python -m train.main_job --set seed=1         # other arguments go to `card-envs train`
    python -m train.main_job --ladder-games 2000  # a tighter ladder interval, for a minute more

Each run writes into a fresh folder ``runs/main/<timestamp>/`` (the checkpoint, TensorBoard logs, ``summary.md``
/ ``.json`` and ``ladder.json``), and shows its progress on stderr:

==============  ========================================================================================
step            what it runs
==============  ========================================================================================
train           ``card-envs train --config configs/main.yaml --no-final-eval``: the JAX trainer
                (``train/jax_ppo.py``) on ``configs/revolutionary_war_jax.yaml`` shortened to a few minutes
                on 2 cores: an imitation warm start from the rule-based endgame player (the loop compiles
                meanwhile), then PPO against the warm start's frozen clone, the pot player, snapshots and
                random, and self-play
evaluate        the trainer's final evaluation (``train.summary.evaluate``: the same games for the same
                seed), played here on two processes: the agent against random and every rule-based
                player, ``eval.final_games`` games each, on duplicate deals (each deal replayed with the
                seats swapped), 95% Wilson intervals; ``summary.md`` / ``.json`` as ``card-envs train``
                writes them
ladder          ``card-envs ladder --agent checkpoint:<run>/checkpoint.zip --games N`` (default
                :data:`LADDER_GAMES`): the agent on fresh deals against every player of the published
                ladder (``benchmarks/results/ladder_revolutionary_war_v0.md``), whose ratings stay fixed;
                its Elo (random = 0) with a 95% bootstrap interval and its neighbours
summary         what a newcomer reads last: the win rate against each player with its interval and what
                it means, the Elo, the place on the ladder, the time taken
==============  ========================================================================================

Reproducible for its seed (``--set seed=N``; the ladder's deals use ``seed + 1``): the same seed gives the same
agent, win rates and placement on the same machine. Training runs in its own process, so that the evaluation's
and the ladder's worker processes are not forked from a process that ran JAX's threads (which is why the trainer's
own final evaluation plays on one process).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from card_envs.core.errors import CardEnvsError
from train.checkpoint import CHECKPOINT_NAME, read_checkpoint
from train.config import TrainConfig, load_config
from train.summary import Summary, evaluate

CONFIG = "configs/main.yaml"
#: games of the ladder placement: the costly search players play only their share of the deals
#: (agents/tournaments/ladder.py), so this is about 45 s on 2 cores for an Elo interval of about +-40
LADDER_GAMES = 800
WORKERS = 2


def train_command(config_path: str, overrides: Sequence[str], extra: Sequence[str]) -> list[str]:
    """``card-envs train`` of the main job (the run folder is among ``overrides``)."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    return [sys.executable, "-m", "train", "--config", config_path, *sets, *extra]


def ladder_command(config: TrainConfig, games: int, out: Path, *, progress: bool) -> list[str]:
    """``card-envs ladder`` placing the run's checkpoint, its JSON written to ``out``."""
    checkpoint = Path(config.run_dir or "") / "checkpoint.zip"
    return [sys.executable, "-m", "agents.tournaments.ladder", "--game", config.game, "--agent",
            f"checkpoint:{checkpoint}", "--games", str(games), "--seed", str(config.seed + 1), "--workers",
            str(WORKERS), "--out", str(out), *([] if progress else ["--quiet"])]


def verdict(low: float, high: float, fair: float) -> str:
    """What a win-rate interval says against a fair share."""
    if low > fair:
        return "stronger"
    if high < fair:
        return "weaker"
    return "not decided (the interval holds the fair share)"


def ladder_place(elo: float, ladder: Mapping[str, Any]) -> tuple[int, int]:
    """The agent's place among the published ladder's players by Elo, and how many places there are."""
    above = sum(player["elo"]["value"] > elo for player in ladder["players"])
    return above + 1, len(ladder["players"]) + 1


def summary_text(summary: Mapping[str, Any], placement: Mapping[str, Any], ladder: Mapping[str, Any],
                 seconds: float) -> str:
    """The main job's last lines: how strong the trained agent is, in words a newcomer reads."""
    config = summary["config"]
    pretrain = summary.get("pretrain") or {}
    warm = f"a warm start imitating {pretrain['teacher']}, then " if pretrain else ""
    lines = ["", "== The main job: summary ==", "",
             f"Trained a PPO agent on {config['game']} (seed {config['seed']}): {warm}"
             f"{summary['num_timesteps']:,} decisions of training in {summary['wall_time'] / 60:.1f} min.",
             "", "Its win rate against each player: duplicate deals (every deal played twice, seats swapped), "
             "95% intervals:", ""]
    width = max(len(r["opponent"]) for r in summary["results"])
    for r in summary["results"]:
        lines.append(f"  vs {r['opponent']:<{width}}  {r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] "
                     f"over {r['games']:,} games: {verdict(r['ci_low'], r['ci_high'], r['fair_share'])}")
    elo = placement["elo"]
    place, places = ladder_place(elo["value"], ladder)
    lines += ["", f"On the published ladder (benchmarks/results/ladder_{config['game']}.md, random = 0): "
              f"Elo {elo['value']:+.0f} [{elo['low']:+.0f}, {elo['high']:+.0f}] over {placement['games']:,} games, "
              f"place {place} of {places}."]
    for side, word in (("above", "above it"), ("below", "below it")):
        neighbour = placement["neighbours"][side]
        if neighbour:
            lines.append(f"  {word}: {neighbour['label']} {neighbour['elo']['value']:+.0f}")
    lines += ["", f"Files in {Path(summary['checkpoint']).parent}/ (checkpoint.zip, summary.md, ladder.json, "
              f"tensorboard/). The main job took {seconds / 60:.1f} min."]
    return "\n".join(lines)


def evaluated_summary(config: TrainConfig, *, progress: bool) -> Summary:
    """The trained run's final evaluation, as ``card-envs train`` ends with it (the same games: seed + 2), on
    :data:`WORKERS` processes; written to ``<run_dir>/summary.md`` / ``.json``."""
    checkpoint = Path(config.run_dir or "") / CHECKPOINT_NAME
    meta = read_checkpoint(checkpoint).meta
    run = meta.get("run", {})  # the JAX trainer's times and warm start
    config = dataclasses.replace(config, eval=dataclasses.replace(config.eval, workers=WORKERS))
    results = evaluate(config, checkpoint, config.eval.final_games, seed=config.seed + 2, progress=progress)
    method = "PPO (JAX, train/jax_ppo.py)" if meta.get("backend") == "jax" else "MaskablePPO"
    summary = Summary(config, int(meta["num_timesteps"]), float(run.get("wall_time", 0.0)),
                      float(run.get("cpu_time", 0.0)), results, str(checkpoint), run.get("pretrain", {}), method)
    summary.write(checkpoint.parent / "summary")
    return summary


def run_step(step: str, command: list[str], parser: argparse.ArgumentParser, prog: str) -> None:
    """Run one step's command, showing it first; a failure ends the job with the step's exit status."""
    print(f"\n== {step}: {shlex.join(['python', *command[1:]])}\n", file=sys.stderr, flush=True)
    code = subprocess.run(command).returncode
    if code != 0:
        parser.exit(code, f"{prog}: error: the {step} step failed (exit status {code}); see above\n")


def run_dir_now() -> str:
    return f"runs/main/{time.strftime('%Y%m%d-%H%M%S')}"


def main(argv: Sequence[str] | None = None, prog: str = "python -m train.main_job") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Other arguments (e.g. --set seed=1) go to `card-envs train`.")
    parser.add_argument("--config", default=CONFIG, help=f"the training config (default {CONFIG})")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key, as `card-envs train --set`; repeatable")
    parser.add_argument("--ladder-games", type=int, default=LADDER_GAMES,
                        help=f"games of the ladder placement (default {LADDER_GAMES})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args, extra = parser.parse_known_args(argv)
    if args.ladder_games < 1:
        parser.error("--ladder-games must be at least 1")
    overrides = [f"run_dir={run_dir_now()}", *args.overrides]  # a run_dir of the caller's wins
    try:
        config = load_config(args.config, overrides)  # a bad override fails here, before anything runs
    except CardEnvsError as error:
        parser.exit(2, f"{prog}: error: {error}\n")
    started = time.perf_counter()
    run_dir = Path(config.run_dir or "")
    progress = [] if not args.no_progress else ["--no-progress"]
    run_step("train", train_command(args.config, overrides, [*progress, "--no-final-eval", *extra]), parser, prog)
    print("\n== evaluate: the trained agent against random and every rule-based player\n", file=sys.stderr,
          flush=True)
    summary = evaluated_summary(config, progress=not args.no_progress)
    print(f"\n{summary.table()}", flush=True)
    out = run_dir / "ladder.json"
    run_step("ladder", ladder_command(config, args.ladder_games, out, progress=not args.no_progress), parser, prog)
    from agents.tournaments.ladder import load_ladder

    placement = json.loads(out.read_text())
    print(summary_text(summary.to_dict(), placement, load_ladder(config.game), time.perf_counter() - started),
          flush=True)
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
