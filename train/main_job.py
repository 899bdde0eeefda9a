"""The README's main job (``bash .ci/main``): train a Revolutionary War agent in minutes, then show how strong it is.

    python -m train.main_job                      # what .ci/main runs once .ci/setup has checked the install
    python -m train.main_job --set seed=1         # other arguments go to `card-envs train`
    python -m train.main_job --ladder-games 2000  # a tighter Elo interval, for a few minutes more

Each run writes into a fresh folder ``runs/main/<timestamp>/`` (the checkpoint, TensorBoard logs, ``summary.md``
/ ``.json``, ``ladder.json`` and ``job.json``: the summary's numbers and the time of each step), and shows its
progress on stderr:

==============  ========================================================================================
step            what it runs
==============  ========================================================================================
train           ``card-envs train --config configs/main.yaml --no-final-eval``: the JAX trainer
                (``train/jax_ppo.py``) on ``configs/revolutionary_war_jax.yaml`` with a budget of a few
                minutes on 2 cores: an imitation warm start from the rule-based endgame player (the loop
                compiles meanwhile, in a thread), then PPO against the warm start's frozen clone, the pot
                player, snapshots and random, and self-play
evaluate        the trainer's final evaluation (``train.summary.evaluate``: the same games for the same
                seed), played here on two processes: the agent against random and every rule-based
                player, ``eval.final_games`` games each, on duplicate deals (each deal replayed with the
                seats swapped), 95% Wilson intervals; ``summary.md`` / ``.json`` as ``card-envs train``
                writes them
ladder          ``card-envs ladder --agent checkpoint:<run>/checkpoint.zip --games N`` (default
                :data:`LADDER_GAMES`): the agent on fresh deals against every player of the published
                ladder (``benchmarks/results/ladder_revolutionary_war_v0.md``), whose ratings stay fixed;
                its Elo (random = 0) with a 95% bootstrap interval and its neighbours
summary         what a newcomer reads last: a table of the win rate against each player with its
                interval and what it means, the Elo and the place on the ladder, where the files are,
                and how long each step took (``.ci/main`` passes its start, so its install check counts)
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
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.files import write_atomically
from card_envs.core.errors import CardEnvsError
from train.checkpoint import CHECKPOINT_NAME, read_checkpoint
from train.config import TrainConfig, load_config
from train.summary import Summary, evaluate

CONFIG = "configs/main.yaml"
#: games of the ladder placement (450 once rounded to whole deals): the costly search players play only their share
#: of the deals (agents/tournaments/ladder.py), so this is under a minute on 2 cores (most of it the 100 ms search
#: player's 22 games) for an Elo interval of about +-35; 800 took 75-95 s for +-30
LADDER_GAMES = 500
WORKERS = 2
#: set by .ci/main to its start (seconds since the epoch), so that the time of its install check is counted
STARTED = "CARD_ENVS_MAIN_STARTED"


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


def duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 100 else f"{seconds / 60:.1f} min"


def step_lines(times: Mapping[str, float], training: Mapping[str, float]) -> list[str]:
    """How long each step took (wall clock), training broken down into its warm start, compile and PPO."""
    parts = {"setup": "the install check (.ci/setup)",
             "train": (f"warm start {duration(training['warm_start'])} (the loop compiled alongside it, in "
                       f"{duration(training['compile'])}), PPO {duration(training['ppo'])}, the rest starting "
                       f"Python and JAX"),
             "evaluate": "the games against each player, on 2 processes",
             "ladder": "the ladder's games and its Elo fit, on 2 processes"}
    lines = [f"  {step:<9} {duration(seconds):>8}   {parts[step]}" for step, seconds in times.items()
             if step in parts]
    return [*lines, f"  {'total':<9} {duration(sum(times.values())):>8}"]


def summary_text(summary: Mapping[str, Any], placement: Mapping[str, Any], ladder: Mapping[str, Any],
                 times: Mapping[str, float], training: Mapping[str, float], load: float | None = None) -> str:
    """The main job's last lines: how strong the trained agent is, in words a newcomer reads, and how long it took.
    ``times``: wall seconds of each step; ``training``: the train step's warm start, compile and PPO seconds."""
    config = summary["config"]
    pretrain = summary.get("pretrain") or {}
    warm = f"a warm start imitating {pretrain['teacher']}, then " if pretrain else ""
    results = summary["results"]
    lines = ["", "== The main job: summary ==", "",
             f"Trained a PPO agent on {config['game']} (seed {config['seed']}): {warm}"
             f"{summary['num_timesteps']:,} decisions of PPO.", "",
             "How it fares: every deal is played twice, seats swapped (duplicate deals); 95% intervals. The agent",
             "is stronger than a player when the whole interval lies above 0.5.", ""]
    width = max(len("opponent"), *(len(r["opponent"]) for r in results))
    lines.append(f"  {'opponent':<{width}}  {'games':>6}  {'win rate [95% CI]':<20}  verdict")
    for r in results:
        rate = f"{r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        lines.append(f"  {r['opponent']:<{width}}  {r['games']:>6,}  {rate:<20}  "
                     f"{verdict(r['ci_low'], r['ci_high'], r['fair_share'])}")
    rule_based = [r for r in results if r["opponent"].startswith("heuristic:")]
    short = [r["opponent"] for r in rule_based if r["ci_low"] <= r["fair_share"]]
    lines += ["", "Beats every rule-based player: " + ("yes" if not short else f"no (not {', '.join(short)})")]
    elo = placement["elo"]
    place, places = ladder_place(elo["value"], ladder)
    lines += ["", f"On the published ladder (benchmarks/results/ladder_{config['game']}.md; Elo, random = 0):",
              f"  this agent  {elo['value']:+.0f} [{elo['low']:+.0f}, {elo['high']:+.0f}] over {placement['games']:,} "
              f"games: place {place} of {places}"]
    for side, word in (("above", "above it"), ("below", "below it")):
        neighbour = placement["neighbours"][side]
        if neighbour:
            lines.append(f"  {word:<10}  {neighbour['elo']['value']:+.0f} {neighbour['label']}")
    folder = Path(summary["checkpoint"]).parent
    lines += ["", f"Files in {folder}/: checkpoint.zip, summary.md, ladder.json, job.json, tensorboard/",
              f"  play it:  .venv/bin/card-envs match --game {config['game']} --agents "
              f"checkpoint:{folder}/checkpoint.zip heuristic:endgame",
              f"  curves:   .venv/bin/tensorboard --logdir {folder}"]
    under = f" (load average {load:.1f} when it ended, on {os.cpu_count()} cores)" if load is not None else ""
    lines += ["", f"Time taken{under}:", *step_lines(times, training)]
    return "\n".join(lines)


def evaluated_summary(config: TrainConfig, *, progress: bool) -> tuple[Summary, dict[str, float]]:
    """The trained run's final evaluation, as ``card-envs train`` ends with it (the same games: seed + 2), on
    :data:`WORKERS` processes; written to ``<run_dir>/summary.md`` / ``.json``. Also the training's warm start,
    compile and PPO seconds (from the checkpoint)."""
    checkpoint = Path(config.run_dir or "") / CHECKPOINT_NAME
    meta = read_checkpoint(checkpoint).meta
    run = meta.get("run", {})  # the JAX trainer's times and warm start
    config = dataclasses.replace(config, eval=dataclasses.replace(config.eval, workers=WORKERS))
    results = evaluate(config, checkpoint, config.eval.final_games, seed=config.seed + 2, progress=progress)
    method = "PPO (JAX, train/jax_ppo.py)" if meta.get("backend") == "jax" else "MaskablePPO"
    summary = Summary(config, int(meta["num_timesteps"]), float(run.get("wall_time", 0.0)),
                      float(run.get("cpu_time", 0.0)), results, str(checkpoint), run.get("pretrain", {}), method)
    summary.write(checkpoint.parent / "summary")
    warm_start = float(run.get("pretrain", {}).get("seconds", 0.0))
    training = {"warm_start": warm_start, "compile": float(run.get("compile_time", 0.0)),
                "ppo": summary.wall_time - warm_start}
    return summary, training


def run_step(step: str, command: list[str], parser: argparse.ArgumentParser, prog: str) -> float:
    """Run one step's command, showing it first; its wall seconds. A failure ends the job with the step's exit
    status."""
    print(f"\n== {step}: {shlex.join(['python', *command[1:]])}\n", file=sys.stderr, flush=True)
    started = time.perf_counter()
    code = subprocess.run(command).returncode
    if code != 0:
        parser.exit(code, f"{prog}: error: the {step} step failed (exit status {code}); see above\n")
    return time.perf_counter() - started


def run_dir_now() -> str:
    return f"runs/main/{time.strftime('%Y%m%d-%H%M%S')}"


def setup_seconds(environ: Mapping[str, str], now: float) -> dict[str, float]:
    """The install check's seconds, when .ci/main passed its start (``now``: seconds since the epoch)."""
    try:
        return {"setup": max(0.0, now - float(environ[STARTED]))}
    except (KeyError, ValueError):
        return {}


def main(argv: Sequence[str] | None = None, prog: str = "python -m train.main_job") -> int:
    times = setup_seconds(os.environ, time.time())
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
    run_dir = Path(config.run_dir or "")
    progress = [] if not args.no_progress else ["--no-progress"]
    times["train"] = run_step("train", train_command(args.config, overrides, [*progress, "--no-final-eval", *extra]),
                              parser, prog)
    print("\n== evaluate: the trained agent against random and every rule-based player\n", file=sys.stderr,
          flush=True)
    started = time.perf_counter()
    summary, training = evaluated_summary(config, progress=not args.no_progress)
    times["evaluate"] = time.perf_counter() - started
    print(f"\n{summary.table()}", flush=True)
    out = run_dir / "ladder.json"
    times["ladder"] = run_step("ladder", ladder_command(config, args.ladder_games, out, progress=not args.no_progress),
                               parser, prog)
    from agents.tournaments.ladder import load_ladder

    placement = json.loads(out.read_text())
    load = os.getloadavg()[0]
    write_atomically(str(run_dir / "job.json"), json.dumps({
        "summary": summary.to_dict(), "elo": placement["elo"], "neighbours": placement["neighbours"],
        "seconds": times, "training_seconds": training, "load_average": load, "cpus": os.cpu_count()}, indent=2)
        + "\n")
    print(summary_text(summary.to_dict(), placement, load_ladder(config.game), times, training, load), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
