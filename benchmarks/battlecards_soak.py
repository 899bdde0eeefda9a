"""Battlecards soak run: many random games across player counts and variants, every invariant checked
at every step, and how many games hit the round limit with and without the retirement speed-up.

    python -m benchmarks.battlecards_soak --games 100000 --workers 2

Game ``i`` (deterministic from ``--seed`` and ``i``): ``num_players = 2 + (i // 2) % 5``, the retirement
speed-up (``retire_lowest_on_flip``) on when ``(i // 10) % 2``; even ``i`` play the default rules
otherwise ("default" group), odd ``i`` draw every other option at random ("variants" group: jokers,
joker value, cease fire, hand size, face-down war cards, shuffle hook, first leader, retirement cap,
truncation scoring, shaping). ``max_rounds`` keeps its default (1000). Actions are uniformly random
legal actions. After every step :func:`card_envs.battlecards.invariants.invariant_errors` runs (card
conservation, mask == legal set, hand limit, the 7.5 knowledge identities, public counts, zero-sum,
round limit); the first violations are recorded with their game, config and step.

Results: ``benchmarks/results/battlecards_soak.md`` and ``.json`` (written through a temporary file
and renamed into place), per group x player count x speed-up: games, round-limit hits, sole wins,
draws, rounds (mean, median, 99th percentile, max), decisions per game.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from card_envs.battlecards.invariants import invariant_errors
from card_envs.battlecards.rules import Battlecards
from card_envs.core.commands import CommandParser, guarded

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
MAX_VIOLATIONS = 20


def game_config(index: int, seed: int) -> tuple[str, dict[str, Any]]:
    """(group, config) of game ``index`` (see the module docstring)."""
    n = 2 + (index // 2) % 5
    config: dict[str, Any] = {"num_players": n, "retire_lowest_on_flip": bool((index // 10) % 2)}
    if index % 2 == 0:
        return "default", config
    rng = np.random.default_rng([seed, index, 1])
    config.update(
        jokers=bool(rng.integers(2)),
        joker_initial_value=int(rng.integers(1, 15)),
        cease_fire=bool(rng.integers(2)),
        hand_size=int(rng.choice([1, 2, 3, 5, 5, 5, 7, 10])),
        war_facedown_count=int(rng.choice([0, 1, 2, 3, 3, 3, 4, 5])),
        shuffle_mid_game=bool(rng.random() < 0.8),
        first_leader=None if rng.random() < 0.5 else int(rng.integers(n)),
        retire_max_rank=int(rng.integers(2, 14)),
        truncation_scoring=str(rng.choice(["most_cards", "card_share"])),
        shaping_weight=float(rng.choice([0.0, 0.0, 0.5, 1.0])),
    )
    return "variants", config


def play_one(index: int, seed: int) -> dict[str, Any]:
    """Play game ``index`` with random legal actions, checking the invariants after every step."""
    group, config = game_config(index, seed)
    game = Battlecards(**config)
    state = game.new_state(np.random.default_rng([seed, index]))
    policy = np.random.default_rng([seed, index, 2])
    violations = [(0, error) for error in invariant_errors(state)]
    steps = 0
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[int(policy.integers(len(legal)))])
        steps += 1
        for error in invariant_errors(state):
            if len(violations) < 3:
                violations.append((steps, error))
    if abs(sum(state.returns())) > 1e-9:
        violations.append((steps, f"zero-sum: returns {state.returns()}"))
    winners = state.winner_set  # W of R18 / R19 (a draw lists every drawn seat)
    return {
        "key": (group, config["num_players"], config["retire_lowest_on_flip"]),
        "rounds": state.rounds_completed,
        "steps": steps,
        "truncated": state.truncated,
        "sole": state.terminated and len(winners) == 1,
        "draw": state.terminated and len(winners) > 1,
        "violations": [{"game": index, "config": config, "step": s, "error": e} for s, e in violations],
    }


def play_chunk(args: tuple[int, int, int]) -> list[dict[str, Any]]:
    first, last, seed = args
    return [play_one(index, seed) for index in range(first, last)]


def summarize(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (group, player count, speed-up)."""
    by_key: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_key[tuple(record["key"])].append(record)
    rows = []
    for (group, n, retire), games in sorted(by_key.items()):
        rounds = np.array([g["rounds"] for g in games])
        rows.append({
            "group": group, "num_players": n, "speed_up": retire, "games": len(games),
            "round_limit_hits": sum(g["truncated"] for g in games),
            "sole_wins": sum(g["sole"] for g in games), "draws": sum(g["draw"] for g in games),
            "rounds_mean": float(rounds.mean()), "rounds_median": float(np.median(rounds)),
            "rounds_p99": float(np.percentile(rounds, 99)), "rounds_max": int(rounds.max()),
            "decisions_mean": float(np.mean([g["steps"] for g in games])),
            "violations": sum(len(g["violations"]) for g in games),
        })
    return rows


def totals(rows: Sequence[dict[str, Any]], **where: Any) -> dict[str, int]:
    chosen = [r for r in rows if all(r[k] == v for k, v in where.items())]
    return {"games": sum(r["games"] for r in chosen), "round_limit_hits": sum(r["round_limit_hits"] for r in chosen)}


def markdown(report: dict[str, Any]) -> str:
    rows = report["rows"]
    lines = [
        "# Battlecards soak run",
        "",
        f"`{report['command']}` -- {report['date']}, {report['elapsed_s']:.0f} s, {report['workers']} workers, "
        f"load average {report['load_average']}, {report['machine']}",
        "",
        f"**{report['games']:,} games, {report['decisions']:,} decisions, every invariant checked after every "
        f"step: {report['violation_count']} violations.** Random legal play; `max_rounds` = 1000 (default).",
        "",
        "Round-limit hits (truncated at 1000 rounds):",
        "",
        "| rules | speed-up off | speed-up on |",
        "|---|---|---|",
    ]
    for group in ("default", "variants"):
        off, on = totals(rows, group=group, speed_up=False), totals(rows, group=group, speed_up=True)
        lines.append(f"| {group} | {off['round_limit_hits']:,} of {off['games']:,} "
                     f"({off['round_limit_hits'] / max(off['games'], 1):.2%}) | {on['round_limit_hits']:,} of "
                     f"{on['games']:,} ({on['round_limit_hits'] / max(on['games'], 1):.2%}) |")
    lines += [
        "",
        "| group | players | speed-up | games | round-limit hits | sole wins | draws | rounds mean | median | "
        "p99 | max | decisions/game | violations |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['group']} | {r['num_players']} | {'on' if r['speed_up'] else 'off'} | {r['games']:,} | "
            f"{r['round_limit_hits']:,} ({r['round_limit_hits'] / r['games']:.2%}) | {r['sole_wins']:,} | "
            f"{r['draws']:,} | {r['rounds_mean']:.1f} | {r['rounds_median']:.0f} | {r['rounds_p99']:.0f} | "
            f"{r['rounds_max']} | {r['decisions_mean']:.0f} | {r['violations']} |")
    if report["violations"]:
        lines += ["", "## First violations", ""]
        lines += [f"- game {v['game']} step {v['step']}: {v['error']} (config {v['config']})"
                  for v in report["violations"]]
    lines.append("")
    return "\n".join(lines)


def write_atomically(path: str, text: str) -> None:
    """Write through a temporary file in the same folder, then rename (never half-written)."""
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w") as handle:
        handle.write(text)
    os.replace(temporary, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="python -m benchmarks.battlecards_soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=50, help="games per work item")
    parser.add_argument("--out", default=RESULTS, help="folder for battlecards_soak.md/.json")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    jobs = [(first, min(first + args.chunk, args.games), args.seed) for first in range(0, args.games, args.chunk)]
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=args.games, desc="battlecards soak", unit="game", file=sys.stderr, smoothing=0.05)
    start = time.time()
    records: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for part in pool.map(play_chunk, jobs):
            records.extend(part)
            if bar is not None:
                bar.update(len(part))
    if bar is not None:
        bar.close()
    violations = [v for r in records for v in r["violations"]]
    rows = summarize(records)
    report = {
        "command": "python -m benchmarks.battlecards_soak " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "elapsed_s": time.time() - start,
        "workers": args.workers,
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
                   f"{platform.python_version()}",
        "games": len(records),
        "decisions": sum(r["steps"] for r in records),
        "violation_count": len(violations),
        "violations": violations[:MAX_VIOLATIONS],
        "rows": rows,
        "round_limit_hits": {
            group: {"speed_up_off": totals(rows, group=group, speed_up=False),
                    "speed_up_on": totals(rows, group=group, speed_up=True)}
            for group in ("default", "variants")
        },
    }
    os.makedirs(args.out, exist_ok=True)
    write_atomically(os.path.join(args.out, "battlecards_soak.json"), json.dumps(report, indent=1) + "\n")
    write_atomically(os.path.join(args.out, "battlecards_soak.md"), markdown(report))
    print(markdown(report))
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.battlecards_soak"))
