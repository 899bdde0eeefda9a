"""ISMCTS strength curve: win rate against each game's strongest rule-based player, per search budget.

    python -m benchmarks.ismcts_strength --games-per-point 300 --workers 2
    python -m benchmarks.ismcts_strength --game revolutionary_war_v0 --budgets 25 100 400
    python -m benchmarks.ismcts_strength --budgets 1600 --backend ray --address 127.0.0.1:6379   # on a Ray cluster

For every game (``--game``, default every registered one) and every simulation budget it plays
``ismcts:sims=<budget>,<game options>`` against a field of the game's strongest rule-based player
(``agents.players.registry.strongest_heuristic``; N-1 copies for N seats). Seats are rotated and each deal is
replayed once per seat of the search player, exactly as ``agents.tournaments.match`` does, so seat and deal luck
cancel. Besides the win rate and its 95% Wilson interval (fair share 1/N), each row records the
search's cost: milliseconds and simulations per searched decision (decisions with one legal action
are answered without search), measured inside the worker processes on this machine.

Results are merged into ``benchmarks/results/ismcts_strength.json`` (rows keyed by game, config and
agent spec; a rerun replaces its own rows) and the Markdown table ``ismcts_strength.md`` is rebuilt
from all rows; both are written to a temporary file and renamed into place.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import card_envs
from agents.files import write_atomically
from agents.players.ismcts import GAME_OPTIONS, ISMCTSAgent
from agents.players.registry import make_agent, strongest_heuristic
from agents.tournaments.backends import BACKENDS, Backend, ordered_results
from agents.tournaments.match import play_game, wilson
from card_envs.core.commands import CommandParser, checked_game, guarded, json_object

DEFAULT_BUDGETS = (25, 100, 400)
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _chunk(job: tuple) -> dict[str, float]:
    """Games ``first..last-1`` of one budget point (deal = k // seats, search seat = k % seats)."""
    name, config, spec, opponent, seed, first, last = job
    game = card_envs.make_game(name, **config)
    seats = game.num_players
    totals = dict.fromkeys(("games", "wins", "shared", "opponent_wins", "nobody", "return", "searched",
                            "decisions", "simulations", "seconds", "cpu_seconds"), 0.0)
    for k in range(first, last):
        deal, rotation = divmod(k, seats)
        streams = np.random.SeedSequence([seed, deal, rotation]).generate_state(seats + 1)
        lineup = [make_agent(name, spec if s == rotation else opponent, seed=int(streams[s])) for s in range(seats)]
        deal_seed = int(np.random.SeedSequence([seed, deal]).generate_state(1)[0])
        state = play_game(game, lineup, deal_seed)
        winners = state.winners()
        totals["games"] += 1
        if rotation in winners:
            totals["wins"] += 1
            totals["shared"] += len(winners) > 1
        elif winners:
            totals["opponent_wins"] += 1
        else:
            totals["nobody"] += 1
        totals["return"] += state.returns()[rotation]
        searcher = lineup[rotation]
        assert isinstance(searcher, ISMCTSAgent)
        stats = searcher.stats
        totals["searched"] += stats.searched
        totals["decisions"] += stats.decisions
        totals["simulations"] += stats.simulations
        totals["seconds"] += stats.seconds
        totals["cpu_seconds"] += stats.cpu_seconds
    return totals


def measure(name: str, spec: str, games: int, *, opponent: str | None = None, config: dict | None = None,
            seed: int = 0, workers: int = 1, backend: Backend | None = None) -> dict[str, Any]:
    """One point of the curve: ``spec`` against a field of ``opponent`` over ``games`` games (chunks run on
    ``backend``, default local processes; the games do not depend on it)."""
    config = dict(config or {})
    game = card_envs.make_game(name, **config)
    seats = game.num_players
    opponent = opponent or strongest_heuristic(name)
    make_agent(name, spec)  # fail fast on a bad spec
    make_agent(name, opponent)
    games = -(-games // seats) * seats
    step = max(seats, (games // (4 * max(workers, 1)) // seats) * seats)
    jobs = [(name, config, spec, opponent, seed, first, min(first + step, games)) for first in range(0, games, step)]
    start = time.perf_counter()
    backend = backend or Backend("local", workers)
    parts = [part for _, part in ordered_results(_chunk, len(jobs), jobs.__getitem__, backend)]
    wall = time.perf_counter() - start
    totals = {key: sum(part[key] for part in parts) for key in parts[0]}
    played = int(totals["games"])
    wins = int(totals["wins"])
    low, high = wilson(wins, played)
    searched = max(totals["searched"], 1)
    return {
        "game": name, "config": config, "agent": spec, "opponent": opponent, "seats": seats, "games": played,
        "wins": wins, "shared": int(totals["shared"]), "opponent_wins": int(totals["opponent_wins"]),
        "nobody": int(totals["nobody"]), "win_rate": wins / played, "ci_low": low, "ci_high": high,
        "fair_share": 1 / seats, "beats_opponent": low > 1 / seats, "mean_return": totals["return"] / played,
        "ms_per_search": 1000.0 * totals["seconds"] / searched,
        "cpu_ms_per_search": 1000.0 * totals["cpu_seconds"] / searched,
        "sims_per_search": totals["simulations"] / searched,
        "searched_per_game": totals["searched"] / played, "decisions_per_game": totals["decisions"] / played,
        "wall_seconds": wall, "workers": workers, "seed": seed,
    }


def _key(row: dict[str, Any]) -> tuple:
    return (row["game"], json.dumps(row["config"], sort_keys=True), row["agent"], row["opponent"])


def merge(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``old`` rows with those ``new`` replaces (same game, config, agent and opponent), then the new ones."""
    replaced = {_key(row) for row in new}
    return [row for row in old if _key(row) not in replaced] + list(new)


def format_markdown(rows: Sequence[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# ISMCTS strength curve",
        "",
        "Win rate of `ismcts:sims=<budget>,...` (agents/players/ismcts.py) against a field of each game's strongest",
        "rule-based player, seats rotated and every deal replayed once per seat of the search player",
        "(`benchmarks/ismcts_strength.py`). A win shared with another seat counts as a win. 95% Wilson",
        "intervals; **bold**: the whole interval is above the fair share 1/N. Cost per searched decision",
        "(one legal action: no search) on the machine below: `CPU ms/move` is the search process's CPU time,",
        "the cost on an idle core; `wall ms/move` is what it took while the machine was shared with other",
        "jobs (see the load average), an upper bound.",
        "",
        "| game | config | agent | vs field of | games | win rate [95% CI] | fair share | CPU ms/move "
        "| wall ms/move | sims/move | searched moves/game |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["game"], json.dumps(r["config"], sort_keys=True),
                                         r.get("sims_per_search", 0), r["agent"])):
        cell = f"{r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        if r["beats_opponent"]:
            cell = f"**{cell}**"
        config = json.dumps(r["config"]) if r["config"] else "default"
        lines.append(f"| {r['game']} | {config} | `{r['agent']}` | `{r['opponent']}` | {r['games']} | {cell} | "
                     f"{r['fair_share']:.3f} | {r.get('cpu_ms_per_search', float('nan')):.1f} | "
                     f"{r['ms_per_search']:.1f} | "
                     f"{r['sims_per_search']:.0f} | "
                     f"{r['searched_per_game']:.1f} |")
    lines += ["", f"Machine: {meta['machine']}. Last run: {meta['date']}, `{meta['command']}`."]
    commands = sorted({(r["command"], r.get("date", "")) for r in rows if r.get("command")})
    if commands:
        lines += ["", "Commands that made the rows (\"backfilled\": reconstructed from the issue notes; results do not "
                  "depend on --workers):", ""]
        lines += [f"- {date}: `{command}`" for command, date in commands]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="python -m benchmarks.ismcts_strength", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", nargs="+", choices=card_envs.ENV_NAMES, help="games (default: all registered)")
    parser.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS),
                        help="simulations per decision, one curve point each (default 25 100 400)")
    parser.add_argument("--options", help="search options after the budget, e.g. 'c=1,rollout=heuristic:pot' "
                                          "(default: GAME_OPTIONS of the game)")
    parser.add_argument("--opponent", help="opponent spec (default: the game's strongest rule-based player)")
    parser.add_argument("--config", type=json_object, default={}, help="game options as a JSON object")
    parser.add_argument("--games-per-point", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where chunks of games run: local processes (default) or ray (tournaments/backends.py)")
    parser.add_argument("--address", help="--backend ray: the cluster to join (default: start Ray here)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=RESULTS, help="folder of ismcts_strength.md/.json (default: results/)")
    args = parser.parse_args(argv)
    if args.games_per_point < 1 or any(b < 1 for b in args.budgets) or args.workers < 1:
        parser.error("--games-per-point, --budgets and --workers must be at least 1")
    config = args.config
    for name in args.game or card_envs.ENV_NAMES:
        checked_game(name, config)  # every table's options, before any game is played
    rows = []
    for name in args.game or card_envs.ENV_NAMES:
        options = args.options if args.options is not None else GAME_OPTIONS.get(name, "")
        for budget in args.budgets:
            spec = f"ismcts:sims={budget}" + (f",{options}" if options else "")
            row = measure(name, spec, args.games_per_point, opponent=args.opponent, config=config, seed=args.seed,
                          workers=args.workers, backend=Backend(args.backend, args.workers, args.address))
            rows.append(row)
            print(f"{name} {spec} vs {row['opponent']}: {row['win_rate']:.3f} [{row['ci_low']:.3f}, "
                  f"{row['ci_high']:.3f}] over {row['games']} games, {row['cpu_ms_per_search']:.1f} CPU ms/move, "
                  f"{row['wall_seconds']:.0f} s", file=sys.stderr, flush=True)
    json_path = os.path.join(args.out, "ismcts_strength.json")
    os.makedirs(args.out, exist_ok=True)
    lock_name = "ismcts_strength_" + os.path.abspath(json_path).replace(os.sep, "_")
    lock_path = os.path.join(tempfile.gettempdir(), lock_name)
    with open(lock_path + ".lock", "w") as lock:  # runs for different games may finish together
        fcntl.flock(lock, fcntl.LOCK_EX)
        _write_merged(json_path, args, argv, rows)
    return 0


def _write_merged(json_path: str, args: argparse.Namespace, argv: Sequence[str] | None,
                  rows: list[dict[str, Any]]) -> None:
    old = []
    command = "python -m benchmarks.ismcts_strength " + shlex.join(argv if argv is not None else sys.argv[1:])
    date = time.strftime("%Y-%m-%d %H:%M")
    rows = [{**row, "command": command, "date": date} for row in rows]
    if os.path.exists(json_path):
        with open(json_path) as handle:
            old = json.load(handle)["rows"]
    merged = merge(old, rows)
    meta = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                   f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the end",
        "date": date,
        "command": command,
    }
    write_atomically(json_path, json.dumps({"meta": meta, "rows": merged}, indent=2) + "\n")
    write_atomically(os.path.join(args.out, "ismcts_strength.md"), format_markdown(merged, meta))
    print(format_markdown(rows, meta))


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.ismcts_strength"))
