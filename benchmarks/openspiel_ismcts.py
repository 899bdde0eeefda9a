"""OpenSpiel's Python ISMCTS bot on our games (through ``card_envs.openspiel``), next to ``agents.players.ismcts``.

    python -m benchmarks.openspiel_ismcts --games 200 --sims 25 --workers 2
    python -m benchmarks.openspiel_ismcts --game battlecards_v0 --games 200 --sims 25
    python -m benchmarks.openspiel_ismcts --cfr 100 --game battlecards_v0     # the tabular part only

For every game (short configs, ``CONFIGS``: OpenSpiel's Python search replays whole games per simulation,
so the full-length games would take hours per point) it plays ``--games`` games in which one seat is a
search player and every other seat the game's strongest rule-based player (one instance per seat). The
search seat rotates (game ``k``: seat ``k mod N``, deal ``k div N``, every deal played once per seat) and
both searchers play exactly the same deals and seats against identically seeded opponents:

=================  =================================================================================
``openspiel``      ``open_spiel.python.algorithms.ismcts.ISMCTSBot``: UCT ``c=1``, ``--sims``
                   simulations, random rollouts (``RandomRolloutEvaluator(1)``), the move with the most
                   visits; determinizations from ``state.resample_from_infostate`` (seeded sampler)
``ours``           ``agents.players.ismcts`` as ``ismcts:sims=<sims>,c=1,rollout=random``: the same budget and
                   the same plain configuration (our tuned options are in ``ismcts_strength.md``)
=================  =================================================================================

A win is the search seat being among ``state.winners()``; 95% Wilson intervals; fair share 1/N.
``--cfr K`` also runs K iterations of OpenSpiel's CFR on the smallest Battlecards configs whose tree can be
enumerated (a stacked deck of 4 or 5 cards dealt as explicit chance, ``TINY_CONFIGS``) and records NashConv
along the way. The other games are out of reach for tabular methods: their only chance mode is sampled
(52! deals, shuffles mid-game) and even one deal's tree is far too large.

Results are merged into ``benchmarks/results/openspiel_ismcts.json`` (rows keyed by game, config, searcher
and budget) and ``openspiel_ismcts.md`` is rebuilt from all rows, both written atomically.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

import card_envs
from agents.files import write_atomically
from agents.players.registry import make_agent, strongest_heuristic
from agents.tournaments.match import play_game, wilson
from card_envs.core.commands import CommandParser, guarded

#: short configs per game (engine options), so that OpenSpiel's Python search finishes 200 games
CONFIGS: dict[str, dict[str, Any]] = {
    "revolutionary_war_v0": {},
    "revolution_v0": {"num_hands": 1},
    "battlecards_v0": {"hand_size": 3, "max_rounds": 30},
    "bloodlines_v0": {"max_turns": 60},
}
#: Battlecards configs with a tree small enough for CFR (OpenSpiel parameters)
TINY_CONFIGS: tuple[dict[str, Any], ...] = (
    {"deck": "2C 3C 4D 5D", "shuffle_mid_game": False, "hand_size": 2, "war_facedown_count": 0, "max_rounds": 3},
    {"deck": "2C 3C 4D 5D 6D", "shuffle_mid_game": False, "hand_size": 2, "war_facedown_count": 0,
     "max_rounds": 3},
)
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
SEARCHERS = ("openspiel", "ours")


def _openspiel_bot(name: str, config: dict[str, Any], sims: int, seed: int) -> tuple[Any, Any]:
    import pyspiel
    from open_spiel.python.algorithms.ismcts import ISMCTSBot
    from open_spiel.python.algorithms.mcts import RandomRolloutEvaluator

    import card_envs.openspiel as cos

    short_name = next(short for short, env in cos.GAME_NAMES.items() if env == name)
    game = pyspiel.load_game(short_name, dict(config))  # CONFIGS hold no None: no mapping needed
    rng = np.random.RandomState(seed % 2**32)
    bot = ISMCTSBot(game, RandomRolloutEvaluator(1, rng), uct_c=1.0, max_simulations=sims, random_state=rng)
    sampler = pyspiel.UniformProbabilitySampler(seed % 2**31, 0.0, 1.0)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    return game, bot


def _play_openspiel(name: str, config: dict[str, Any], sims: int, deal_seed: int, lineup: list[Any],
                    searcher_seat: int, seed: int) -> tuple[Any, float, int]:
    """One game through pyspiel: the bot in ``searcher_seat``, ``lineup`` agents elsewhere."""
    from agents.players.base import Decision

    game, bot = _openspiel_bot(name, config, sims, seed)
    state = game.new_initial_state_from_seed(deal_seed)
    state.apply_action(0)  # the deal, as the engine's new_state(default_rng(deal_seed))
    for seat, agent in enumerate(lineup):
        if agent is not None:
            agent.reset(game.engine, seat)
    seconds, searched = 0.0, 0
    while not state.is_terminal():
        seat = state.current_player()
        if seat == searcher_seat:
            start = time.process_time()
            action = bot.step(state)
            if len(state.legal_actions()) > 1:
                seconds += time.process_time() - start
                searched += 1
        else:
            action = lineup[seat].act(Decision.of(state.engine_state))
        state.apply_action(action)
    return state.engine_state, seconds, searched


def _chunk(job: tuple) -> dict[str, float]:
    """Games ``first..last-1`` for one searcher (deal = k // seats, search seat = k % seats)."""
    name, config, searcher, sims, seed, first, last = job
    game = card_envs.make_game(name, **config)
    seats = game.num_players
    opponent = strongest_heuristic(name)
    totals = dict.fromkeys(("games", "wins", "return", "cpu_seconds", "searched"), 0.0)
    for k in range(first, last):
        deal, rotation = divmod(k, seats)
        streams = np.random.SeedSequence([seed, deal, rotation]).generate_state(seats + 1)
        deal_seed = int(np.random.SeedSequence([seed, deal]).generate_state(1)[0])
        lineup = [None if s == rotation else make_agent(name, opponent, seed=int(streams[s])) for s in range(seats)]
        if searcher == "openspiel":
            state, seconds, searched = _play_openspiel(name, config, sims, deal_seed, lineup, rotation,
                                                       int(streams[rotation]))
        else:
            agent = make_agent(name, f"ismcts:sims={sims},c=1,rollout=random", seed=int(streams[rotation]))
            lineup[rotation] = agent
            state = play_game(game, lineup, deal_seed)
            seconds, searched = agent.stats.cpu_seconds, agent.stats.searched
        totals["games"] += 1
        totals["wins"] += rotation in state.winners()
        totals["return"] += state.returns()[rotation]
        totals["cpu_seconds"] += seconds
        totals["searched"] += searched
    return totals


def measure(name: str, searcher: str, sims: int, games: int, *, seed: int = 0, workers: int = 1) -> dict[str, Any]:
    config = CONFIGS[name]
    seats = card_envs.make_game(name, **config).num_players
    games = -(-games // seats) * seats
    step = seats * max(1, games // seats // (4 * workers))
    jobs = [(name, config, searcher, sims, seed, first, min(first + step, games)) for first in range(0, games, step)]
    start = time.perf_counter()
    parts = []
    with ProcessPoolExecutor(workers) as pool:
        for done, part in enumerate(pool.map(_chunk, jobs), 1):
            parts.append(part)
            print(f"  {name} {searcher} sims={sims}: {done}/{len(jobs)} chunks, "
                  f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    totals = {key: sum(part[key] for part in parts) for key in parts[0]}
    played, wins = int(totals["games"]), int(totals["wins"])
    low, high = wilson(wins, played)
    return {"game": name, "config": config, "searcher": searcher, "sims": sims,
            "opponent": strongest_heuristic(name), "seats": seats, "games": played, "wins": wins,
            "win_rate": wins / played, "ci_low": low, "ci_high": high, "fair_share": 1 / seats,
            "mean_return": totals["return"] / played,
            "cpu_ms_per_search": 1000 * totals["cpu_seconds"] / max(totals["searched"], 1),
            "wall_seconds": time.perf_counter() - start, "workers": workers, "seed": seed}


def run_cfr(iterations: int) -> list[dict[str, Any]]:
    """CFR on each tiny explicit-chance config: NashConv of the average policy along the way."""
    import pyspiel
    from open_spiel.python.algorithms import cfr, exploitability

    import card_envs.openspiel  # noqa: F401 - registers the games

    rows = []
    for params in TINY_CONFIGS:
        game = pyspiel.load_game("python_card_envs_battlecards", params)
        start = time.perf_counter()
        solver = cfr.CFRSolver(game)
        curve = [(0, exploitability.nash_conv(game, solver.average_policy()))]
        for i in range(1, iterations + 1):
            solver.evaluate_and_update_policy()
            if i in (1, 2, 5) or i % 10 == 0 or i == iterations:
                curve.append((i, exploitability.nash_conv(game, solver.average_policy())))
                print(f"  CFR {params['deck']}: iteration {i}, NashConv {curve[-1][1]:.4f}", file=sys.stderr,
                      flush=True)
        rows.append({"game": "battlecards_v0", "parameters": params, "iterations": iterations,
                     "infosets": len(solver.average_policy().state_lookup), "nash_conv": curve,
                     "seconds": time.perf_counter() - start})
    return rows


def _key(row: dict[str, Any]) -> tuple:
    return row["game"], json.dumps(row["config"], sort_keys=True), row["searcher"], row["sims"]


def format_markdown(data: dict[str, Any]) -> str:
    lines = ["# OpenSpiel's Python ISMCTS on card_envs, next to agents.players.ismcts", "",
             "Win rate of a search seat against a field of the game's strongest rule-based player, seats rotated,",
             "the same deals for both searchers (`benchmarks/openspiel_ismcts.py`). `openspiel`: "
             "`open_spiel.python.algorithms.ismcts.ISMCTSBot` through `card_envs.openspiel` (UCT c=1, random "
             "rollouts); `ours`: `ismcts:sims=<sims>,c=1,rollout=random`. 95% Wilson intervals. CPU ms per "
             "searched move (more than one legal action) in the worker process.", "",
             "| game | config | searcher | sims | vs field of | games | win rate [95% CI] | fair share | "
             "CPU ms/move |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(data["rows"], key=lambda r: (r["game"], r["sims"], r["searcher"])):
        lines.append(f"| {r['game']} | {json.dumps(r['config'])} | {r['searcher']} | {r['sims']} | "
                     f"`{r['opponent']}` | {r['games']} | {r['win_rate']:.3f} [{r['ci_low']:.3f}, "
                     f"{r['ci_high']:.3f}] | {r['fair_share']:.3f} | {r['cpu_ms_per_search']:.0f} |")
    if data.get("cfr"):
        lines += ["", "## CFR on the smallest Battlecards configs (explicit chance: a stacked deck)", "",
                  "| parameters | information sets | NashConv by iteration | seconds |", "|---|---|---|---|"]
        for r in data["cfr"]:
            curve = ", ".join(f"{i}: {v:.4f}" for i, v in r["nash_conv"])
            lines.append(f"| `{json.dumps(r['parameters'])}` | {r['infosets']} | {curve} | {r['seconds']:.0f} |")
        lines += ["", "Revolutionary War, Revolution and Bloodlines are out of reach for tabular methods: their "
                  "decks cannot be stacked to a few cards (fixed 52-card or 36-card compositions), so chance is "
                  "sampled (52! deals, reshuffles between games and hands) and even a single deal's tree is far "
                  "too large; Battlecards' full deck is likewise out of reach."]
    lines += ["", f"Machine: {data['machine']}. Commands:", ""]
    lines += [f"- {c}" for c in data["commands"]]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="python -m benchmarks.openspiel_ismcts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", nargs="+", choices=card_envs.ENV_NAMES, help="games (default: all)")
    parser.add_argument("--games", type=int, default=200, help="games per searcher and game (default 200)")
    parser.add_argument("--sims", type=int, default=25, help="simulations per decision, both searchers")
    parser.add_argument("--searchers", nargs="+", choices=SEARCHERS, default=list(SEARCHERS))
    parser.add_argument("--cfr", type=int, default=0, help="also run this many CFR iterations on TINY_CONFIGS")
    parser.add_argument("--no-ismcts", action="store_true", help="skip the ISMCTS matches (e.g. with --cfr)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    if args.games < 1 or args.sims < 1 or args.workers < 1:
        parser.error("--games, --sims and --workers must be at least 1")
    path = os.path.join(args.out, "openspiel_ismcts.json")
    data = {"rows": [], "cfr": [], "commands": []}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    load = os.getloadavg()[0]
    command = f"`python -m benchmarks.openspiel_ismcts {shlex.join(argv if argv is not None else sys.argv[1:])}` " \
              f"({time.strftime('%Y-%m-%d')}, load {load:.1f} on {os.cpu_count()} cores)"
    data["commands"] = [*data.get("commands", []), command]
    data["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    os.makedirs(args.out, exist_ok=True)

    def save() -> None:  # after every row: a long run interrupted keeps what it measured
        write_atomically(path, json.dumps(data, indent=1))
        write_atomically(os.path.join(args.out, "openspiel_ismcts.md"), format_markdown(data))

    if not args.no_ismcts:
        for name in args.game or card_envs.ENV_NAMES:
            for searcher in args.searchers:
                row = measure(name, searcher, args.sims, args.games, seed=args.seed, workers=args.workers)
                row["command"] = command
                data["rows"] = [r for r in data["rows"] if _key(r) != _key(row)] + [row]
                save()
                print(f"{name} {searcher} sims={args.sims}: {row['win_rate']:.3f} [{row['ci_low']:.3f}, "
                      f"{row['ci_high']:.3f}] over {row['games']} games vs {row['opponent']}, "
                      f"{row['cpu_ms_per_search']:.0f} CPU ms/move", flush=True)
    if args.cfr:
        data["cfr"] = run_cfr(args.cfr)
    save()
    print(f"wrote {path} and openspiel_ismcts.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.openspiel_ismcts"))
