"""Bloodlines balance report: equal rule-based players on every ordered pair of bloodline suits.

    python -m benchmarks.bloodlines_balance                     # 2,000 games per ordered pair, 2 workers
    python -m benchmarks.bloodlines_balance --games 200 --quick # a smoke run into results/quick/

The author asked for it ("I suck at number crunching, so creating a balanced game is not my strong
point"). Both seats are played by the same agent (default: the strongest rule-based player,
``agents.players.bloodlines.STRONGEST``), so every difference comes from the suits and the seats. For each of
the 12 ordered pairs (player_0's suit, player_1's suit) it plays ``--games`` games; each deal (the
two shuffled piles) is played twice, once with each player starting, so the first-player effect
cancels out of the suit comparison and is measured on its own.

Written (each to a temporary file renamed into place), under ``--out`` (default benchmarks/results):

=============================  ===============================================================
``bloodlines_balance.md``      win rates by suit matchup with 95% Wilson intervals, the 4 x 4
                               suit-against-suit matrix (both orders pooled), first-player
                               advantage, outcome types, the game-length distribution
``bloodlines_balance.json``    the same numbers, the settings and every pair's raw counts
``bloodlines_balance.png``     heat map of the suit matrix, first-player win rate by pair, and
                               the game-length histogram
=============================  ===============================================================

Deterministic for a given ``--seed`` whatever ``--workers`` or ``--backend`` (``ray [--address ADDR]``: chunks of
games as Ray tasks, ``agents/tournaments/backends.py``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import card_envs
from agents.players.registry import make_agent, strongest_heuristic
from agents.tournaments.backends import BACKENDS, Backend, ordered_results
from agents.tournaments.match import ProgressBar, play_game, wilson
from benchmarks.throughput import add_output_arguments, machine_description, output_dir, write_atomic
from card_envs.core.commands import CommandParser, guarded

GAME = "bloodlines_v0"
SUITS = "CDHS"
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
PAIRS: tuple[str, ...] = tuple(a + b for a, b in itertools.permutations(SUITS, 2))
OUTCOMES = ("kill", "stalemate", "turn_limit")


# -- playing -------------------------------------------------------------------------------------------

def play_chunk(job: tuple[str, str, int, int, int]) -> list[tuple[int, int, int, int, str]]:
    """Games ``first .. last-1`` of one pair: (winner, starter, turns, decisions, outcome) each.

    Game ``g`` plays deal ``g // 2`` with starting player ``g % 2``; seeds derive from
    (seed, pair index, deal), so the result does not depend on how games are split over workers.
    """
    agent, pair, seed, first, last = job
    pair_index = PAIRS.index(pair)
    games = {starter: card_envs.make_game(GAME, bloodlines=(pair[0], pair[1]), starting_player=starter)
             for starter in (0, 1)}
    records = []
    for g in range(first, last):
        deal, starter = divmod(g, 2)
        streams = np.random.SeedSequence([seed, pair_index, deal]).generate_state(3)
        lineup = [make_agent(GAME, agent, seed=int(streams[s])) for s in (0, 1)]
        state = play_game(games[starter], lineup, deal_seed=int(streams[2]))
        records.append((state.winner, starter, state.turn, len(state.history), state.outcome))
    return records


def play_all(agent: str, games: int, seed: int, workers: int, progress: bool,
             backend: Backend | None = None) -> dict[str, list[tuple]]:
    """``games`` games (rounded up to even) for each ordered pair; chunks run on ``backend`` (default local
    processes, ``workers`` of them; ``agents/tournaments/backends.py``), the games do not depend on it."""
    games += games % 2
    chunk = max(2, (games // 8) // 2 * 2)
    jobs = [(agent, pair, seed, first, min(first + chunk, games)) for pair in PAIRS for first in range(0, games, chunk)]
    records: dict[str, list[tuple]] = {pair: [] for pair in PAIRS}
    bar = ProgressBar(games * len(PAIRS), f"{agent} self-play, 12 suit pairs", progress)
    for index, part in ordered_results(play_chunk, len(jobs), jobs.__getitem__, backend or Backend("local", workers)):
        records[jobs[index][1]].extend(part)
        bar.update(len(part))
    bar.close()
    return records


# -- statistics -----------------------------------------------------------------------------------------

def rate(successes: int, trials: int) -> dict[str, float]:
    low, high = wilson(successes, trials)
    return {"count": successes, "of": trials, "rate": successes / trials if trials else 0.0, "low": low, "high": high}


def pair_summary(records: Sequence[tuple]) -> dict[str, Any]:
    """Win rates of player_0's suit, draws, the starter's record and game lengths for one ordered pair."""
    n = len(records)
    p0 = sum(w == 0 for w, *_ in records)
    p1 = sum(w == 1 for w, *_ in records)
    starter_wins = sum(w == s for w, s, *_ in records)
    decisive = p0 + p1
    turns = [t for _, _, t, _, _ in records]
    return {
        "games": n,
        "first_suit_wins": rate(p0, n),
        "second_suit_wins": rate(p1, n),
        "draws": rate(n - decisive, n),
        "first_suit_share_of_decisive": rate(p0, decisive),
        "starter_wins": rate(starter_wins, n),
        "starter_share_of_decisive": rate(starter_wins, decisive),
        "outcomes": {o: sum(r[4] == o for r in records) for o in OUTCOMES},
        "turns": length_summary(turns),
    }


def length_summary(turns: Sequence[int]) -> dict[str, Any]:
    values = np.asarray(turns)
    p5, p25, p50, p75, p95 = np.percentile(values, [5, 25, 50, 75, 95])
    return {"mean": float(values.mean()), "min": int(values.min()), "p5": float(p5), "p25": float(p25),
            "median": float(p50), "p75": float(p75), "p95": float(p95), "max": int(values.max())}


def suit_matrix(records: dict[str, list[tuple]]) -> dict[str, dict[str, dict[str, float]]]:
    """``matrix[a][b]``: how often suit ``a`` beats suit ``b``, both seat orders pooled (draws count as not won)."""
    matrix: dict[str, dict[str, dict[str, float]]] = {a: {} for a in SUITS}
    for a, b in itertools.permutations(SUITS, 2):
        wins = sum(w == 0 for w, *_ in records[a + b]) + sum(w == 1 for w, *_ in records[b + a])
        trials = len(records[a + b]) + len(records[b + a])
        matrix[a][b] = rate(wins, trials)
    return matrix


def suit_overall(records: dict[str, list[tuple]]) -> dict[str, dict[str, float]]:
    """Each suit's win rate against the three others together (equal weight)."""
    overall = {}
    for suit in SUITS:
        wins = trials = 0
        for pair, rows in records.items():
            if suit in pair:
                seat = pair.index(suit)
                wins += sum(w == seat for w, *_ in rows)
                trials += len(rows)
        overall[suit] = rate(wins, trials)
    return overall


def histogram(turns: Sequence[int], width: int = 5) -> list[dict[str, int]]:
    counts = Counter(t // width for t in turns)
    return [{"from": k * width, "to": k * width + width - 1, "games": counts[k]}
            for k in range(min(counts), max(counts) + 1)]


def build_report(records: dict[str, list[tuple]], settings: dict[str, Any], seconds: float) -> dict[str, Any]:
    every = [r for rows in records.values() for r in rows]
    turns = [r[2] for r in every]
    starters = sum(w == s for w, s, *_ in every)
    decisive = sum(w >= 0 for w, *_ in every)
    return {
        "schema": 1,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "command": "python -m benchmarks.bloodlines_balance " + " ".join(sys.argv[1:]),
        "settings": settings,
        "machine": machine_description(),
        "seconds": round(seconds, 1),
        "games": len(every),
        "pairs": {pair: pair_summary(rows) for pair, rows in records.items()},
        "suit_matrix": suit_matrix(records),
        "suit_overall": suit_overall(records),
        "first_player": {"starter_wins": rate(starters, len(every)),
                         "starter_share_of_decisive": rate(starters, decisive),
                         "draws": rate(len(every) - decisive, len(every))},
        "outcomes": {o: sum(r[4] == o for r in every) for o in OUTCOMES},
        "turns": length_summary(turns),
        "decisions": length_summary([r[3] for r in every]),
        "turn_histogram": histogram(turns),
    }


# -- writing --------------------------------------------------------------------------------------------

def _ci(cell: dict[str, float]) -> str:
    return f"{cell['rate']:.3f} [{cell['low']:.3f}, {cell['high']:.3f}]"


def render_markdown(report: dict[str, Any]) -> str:
    settings = report["settings"]
    lines = [
        "# Bloodlines balance: equal players, every pair of bloodline suits",
        "",
        f"`{report['command'].strip()}` — {report['date']}, {report['seconds']} s, "
        f"load average at start {report['machine']['load_average_at_start']}.",
        "",
        f"Both seats: `{settings['agent']}`. {settings['games_per_pair']} games per ordered suit pair "
        f"({report['games']} in all), default options; each deal played once with each player starting. "
        "Win rates with 95% Wilson intervals; a draw (stalemate or turn limit with equal royals) is a win for "
        "neither.",
        "",
        "## Suit against suit (both seat orders pooled)",
        "",
        "Row suit's win rate against the column suit:",
        "",
        "| suit | " + " | ".join(SUIT_NAMES[s] for s in SUITS) + " | vs all three |",
        "|---|" + "---|" * (len(SUITS) + 1),
    ]
    matrix, overall = report["suit_matrix"], report["suit_overall"]
    for a in SUITS:
        cells = ["—" if a == b else _ci(matrix[a][b]) for b in SUITS]
        lines.append(f"| **{SUIT_NAMES[a]}** | " + " | ".join(cells) + f" | {_ci(overall[a])} |")
    ranking = sorted(SUITS, key=lambda s: -overall[s]["rate"])
    lopsided = max(itertools.permutations(SUITS, 2), key=lambda ab: matrix[ab[0]][ab[1]]["rate"])
    even = min(itertools.combinations(SUITS, 2), key=lambda ab: abs(matrix[ab[0]][ab[1]]["rate"]
                                                                    - matrix[ab[1]][ab[0]]["rate"]))
    lines += ["", "Ranking by win rate against all three: "
              + " > ".join(f"{SUIT_NAMES[s]} ({overall[s]['rate']:.3f})" for s in ranking) + ". "
              f"Most lopsided: {SUIT_NAMES[lopsided[0]]} beats {SUIT_NAMES[lopsided[1]]} "
              f"{matrix[lopsided[0]][lopsided[1]]['rate']:.3f} of the time. Most even: {SUIT_NAMES[even[0]]} – "
              f"{SUIT_NAMES[even[1]]} ({matrix[even[0]][even[1]]['rate']:.3f} : {matrix[even[1]][even[0]]['rate']:.3f}"
              + (", the rest draws)." if matrix[even[0]][even[1]]["rate"] + matrix[even[1]][even[0]]["rate"] < 0.95
                 else ")."), ""]
    lines += [
        "## Every ordered pair",
        "",
        "| player_0 – player_1 | games | player_0 wins | player_1 wins | draws | starter wins | "
        "starter's share of decisive games | kills / stalemates / turn limits | median turns |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for pair in PAIRS:
        row = report["pairs"][pair]
        outcomes = row["outcomes"]
        lines.append(
            f"| {SUIT_NAMES[pair[0]]} – {SUIT_NAMES[pair[1]]} | {row['games']} | {_ci(row['first_suit_wins'])} | "
            f"{_ci(row['second_suit_wins'])} | {_ci(row['draws'])} | {_ci(row['starter_wins'])} | "
            f"{_ci(row['starter_share_of_decisive'])} | "
            f"{outcomes['kill']} / {outcomes['stalemate']} / {outcomes['turn_limit']} | {row['turns']['median']:.0f} |")
    first = report["first_player"]
    lines += [
        "",
        "## First-player advantage",
        "",
        f"- The starting player wins {_ci(first['starter_wins'])} of all games "
        f"({_ci(first['starter_share_of_decisive'])} of the decisive ones); "
        f"draws: {_ci(first['draws'])}.",
        "- Per pair: the *starter wins* column above.",
        "",
        "## Game length",
        "",
        "| measure | mean | min | 5% | 25% | median | 75% | 95% | max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, key in (("turns (both players)", "turns"), ("decisions", "decisions")):
        t = report[key]
        lines.append(f"| {label} | {t['mean']:.1f} | {t['min']} | {t['p5']:.0f} | {t['p25']:.0f} | {t['median']:.0f} | "
                     f"{t['p75']:.0f} | {t['p95']:.0f} | {t['max']} |")
    outcomes = report["outcomes"]
    lines += ["", f"Endings: {outcomes['kill']} by killing the third royal, {outcomes['stalemate']} stalemates "
              f"(R15), {outcomes['turn_limit']} at the turn limit (R16).", "",
              "| turns | games |", "|---|---|"]
    lines += [f"| {b['from']}–{b['to']} | {b['games']} |" for b in report["turn_histogram"]]
    lines += ["", "![heat map](bloodlines_balance.png)", ""]
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> None:
    """Heat map of the suit matrix, the starter's win rate per pair, and the game-length histogram."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (heat, first, lengths) = plt.subplots(1, 3, figsize=(17, 5.2), gridspec_kw={"width_ratios": [1.1, 1.2, 1]})
    matrix = np.full((4, 4), np.nan)
    for i, a in enumerate(SUITS):
        for j, b in enumerate(SUITS):
            if a != b:
                matrix[i, j] = report["suit_matrix"][a][b]["rate"]
    image = heat.imshow(matrix, cmap="RdBu", vmin=0.0, vmax=1.0)
    for i, a in enumerate(SUITS):
        for j, b in enumerate(SUITS):
            if a != b:
                cell = report["suit_matrix"][a][b]
                heat.text(j, i, f"{cell['rate']:.2f}\n[{cell['low']:.2f}, {cell['high']:.2f}]", ha="center",
                          va="center", fontsize=8)
    names = [SUIT_NAMES[s] for s in SUITS]
    heat.set_xticks(range(4), names)
    heat.set_yticks(range(4), names)
    heat.set_xlabel("opponent's bloodline")
    heat.set_ylabel("bloodline")
    heat.set_title("win rate of the row suit (95% Wilson CI)")
    figure.colorbar(image, ax=heat, fraction=0.046)
    rows = [report["pairs"][p]["starter_wins"] for p in PAIRS]
    draws = [report["pairs"][p]["draws"]["rate"] for p in PAIRS]
    x = np.arange(len(PAIRS))
    first.bar(x, [r["rate"] for r in rows], color="tab:orange", label="starter wins",
              yerr=[[r["rate"] - r["low"] for r in rows], [r["high"] - r["rate"] for r in rows]], capsize=2)
    first.bar(x, draws, bottom=[r["rate"] for r in rows], color="lightgray", label="draws")
    first.axhline(0.5, color="black", linewidth=0.8, linestyle="--")
    first.set_xticks(x, [f"{a}-{b}" for a, b in PAIRS])
    first.set_ylim(0, 1)
    first.set_title("first-player advantage by pair (player_0 suit - player_1 suit)")
    first.legend(loc="lower right", fontsize=8)
    bins = report["turn_histogram"]
    lengths.bar([b["from"] for b in bins], [b["games"] for b in bins], width=4.5, align="edge", color="tab:blue")
    lengths.set_xlabel("turns (both players)")
    lengths.set_ylabel("games")
    lengths.set_title(f"game length (median {report['turns']['median']:.0f} turns)")
    figure.suptitle(f"Bloodlines balance: {report['settings']['agent']} vs itself, {report['games']} games")
    figure.tight_layout()
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(descriptor)
    try:
        figure.savefig(temporary, dpi=110)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        plt.close(figure)


def write_results(report: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"bloodlines_balance.{ext}" for ext in ("json", "md", "png")]
    write_atomic(paths[0], json.dumps(report, indent=2) + "\n")
    write_atomic(paths[1], render_markdown(report))
    plot(report, paths[2])
    return paths


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = CommandParser(prog="python -m benchmarks.bloodlines_balance", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per ordered suit pair (default 2000)")
    parser.add_argument("--agent", default=strongest_heuristic(GAME), help="agent spec for both seats")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where chunks of games run: local processes (default) or ray (tournaments/backends.py)")
    parser.add_argument("--address", help="--backend ray: the cluster to join (default: start Ray here)")
    parser.add_argument("--seed", type=int, default=0)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2")
    make_agent(GAME, args.agent)  # fail fast on an unknown agent
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out_dir = output_dir(args)
    start = time.perf_counter()
    records = play_all(args.agent, args.games, args.seed, args.workers, not args.quiet,
                       Backend(args.backend, args.workers, args.address))
    settings = {"agent": args.agent, "games_per_pair": len(records[PAIRS[0]]), "seed": args.seed,
                "workers": args.workers, "config": {}}
    report = build_report(records, settings, time.perf_counter() - start)
    for path in write_results(report, out_dir):
        print(f"wrote {path}", file=sys.stderr)
    return report


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.bloodlines_balance"))
