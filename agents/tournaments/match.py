"""Play agents against each other and report win rates with 95% confidence intervals.

    card-envs match --game revolutionary_war_v0 --games 2000 --workers 2

For every pair of agents (``--agents``, default: random and every rule-based player of the game)
it plays ``--games`` games of ``A`` against the field ``B`` (for N seats: one ``A`` and N-1 copies
of ``B``). ``A`` sits in every seat equally often, and each deal is replayed once per seat of
``A`` with the same cards, so seat and deal luck cancel. A win is being among the players with
the best result (R16 of each game); shared wins count for every sharer. Intervals are Wilson
score intervals; a fair share for ``A`` is ``1/N``.

``--save-games DIR`` also writes every game as JSON (seed, agents, actions; :mod:`agents.tournaments.saved_games`);
``card-envs play --replay FILE`` steps through one.

Deterministic for a given ``--seed`` whatever ``--workers``. The full evaluation harness,
``card-envs evaluate`` (duplicate permutations, ratings, SPRT), builds on :func:`play_out`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import binomtest

import card_envs
from agents.files import write_atomically
from agents.players.base import Agent, Decision
from agents.players.registry import agent_names, make_agent
from agents.tournaments.records import Contestant, check_agent, check_contestants, parse_contestant
from agents.tournaments.saved_games import file_name, save_played
from card_envs.core.commands import CommandParser, checked_game, command_line, json_object, positive_int
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import IllegalActionError


class AgentError(RuntimeError):
    """An agent broke the protocol: it returned an illegal action, or ``act`` raised.

    Names the agent and its seat, the action (id and name) and the state (its ``render()``,
    unchanged by the refused action), so a tournament can report it and go on without it.
    """

    def __init__(self, agent: str, seat: int, action: str, reason: str, table: str) -> None:
        self.agent, self.seat, self.action, self.reason, self.table = agent, seat, action, reason, table
        super().__init__(f"agent {agent} in seat player_{seat} {reason}\nin this state:\n{table}")

    def __reduce__(self) -> tuple:  # picklable across worker processes
        return (AgentError, (self.agent, self.seat, self.action, self.reason, self.table))


def play_game(game: Game, agents: Sequence[Agent], deal_seed: int) -> GameState:
    """One episode with ``agents[seat]`` in each seat; the deal comes from ``deal_seed``."""
    return play_out(game.new_state(np.random.default_rng(deal_seed)), agents)


def play_out(state: GameState, agents: Sequence[Agent]) -> GameState:
    """Play ``state`` to its end with ``agents[seat]`` in each seat (each is ``reset`` first).

    Raises :class:`AgentError` when an agent returns an illegal action or raises.
    """
    game = state.game
    for seat, agent in enumerate(agents):
        agent.reset(game, seat)
    while not state.is_over:
        seat = state.current_player
        agent = agents[seat]
        try:
            action = agent.act(Decision.of(state))
        except Exception as error:
            raise AgentError(agent.name, seat, "-", f"raised {type(error).__name__}: {error}",
                             state.render()) from error
        try:
            state.apply(action)
        except IllegalActionError as error:
            raise AgentError(agent.name, seat, _action_label(game, action), f"chose an illegal action: {error}",
                             state.render()) from error
    return state


def _action_label(game: Game, action: Any) -> str:
    """``13 'concede'`` for a valid id, the repr otherwise."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < game.num_actions:
        return f"{int(action)} {game.action_name(int(action))!r}"
    return repr(action)


@dataclass
class ContestResult:
    """``agent`` against a field of ``opponent`` over ``games`` games."""

    game: str
    agent: str
    opponent: str
    seats: int
    games: int
    wins: int  #: games where ``agent`` was among the winners
    shared: int  #: of those, wins shared with another seat
    opponent_wins: int  #: games won by some ``opponent`` seat and not by ``agent``
    nobody: int  #: games without a winner (truncated episodes scored as no result)
    mean_return: float

    @property
    def win_rate(self) -> float:
        return self.wins / self.games

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.games)

    def row(self) -> dict[str, Any]:
        low, high = self.interval
        return {**asdict(self), "win_rate": self.win_rate, "ci_low": low, "ci_high": high,
                "fair_share": 1 / self.seats}


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if trials == 0:
        return (0.0, 1.0)
    ci = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return (float(ci.low), float(ci.high))


def _chunk(args: tuple) -> tuple[int, int, int, int, int, float]:
    name, config, agent_spec, opponent_spec, seed, first, last, save_games = args
    game = card_envs.make_game(name, **config)
    seats = game.num_players
    wins = shared = opponent_wins = nobody = 0
    total_return = 0.0
    for k in range(first, last):
        deal, rotation = divmod(k, seats)
        streams = np.random.SeedSequence([seed, deal, rotation]).generate_state(seats + 1)
        lineup = [
            make_agent(name, agent_spec if s == rotation else opponent_spec, seed=int(streams[s]))
            for s in range(seats)
        ]
        deal_seed = int(np.random.SeedSequence([seed, deal]).generate_state(1)[0])
        state = play_game(game, lineup, deal_seed)
        if save_games:
            specs = [agent_spec if s == rotation else opponent_spec for s in range(seats)]
            save_played(save_games, file_name(name, f"s{seed}", agent_spec, "vs", opponent_spec, f"{k:06d}"), state,
                        seed=deal_seed, agents=specs, agent_seeds=[int(streams[s]) for s in range(seats)],
                        source={"tool": "agents.tournaments.match", "seed": seed, "deal": deal, "rotation": rotation})
        winners = state.winners()
        if rotation in winners:
            wins += 1
            shared += len(winners) > 1
        elif winners:
            opponent_wins += 1
        else:
            nobody += 1
        total_return += state.returns()[rotation]
    return wins, shared, opponent_wins, nobody, last - first, total_return


def contest(name: str, agent: str, opponent: str, games: int, *, seed: int = 0, config: dict | None = None,
            workers: int = 1, progress: bool = True, save_games: str | None = None) -> ContestResult:
    """Play ``games`` games (rounded up to a multiple of the seat count) of ``agent`` against ``opponent``;
    ``save_games``: also write every game to this directory (:mod:`agents.tournaments.saved_games`)."""
    config = dict(config or {})
    game = card_envs.make_game(name, **config)
    seats = game.num_players
    for spec in dict.fromkeys((agent, opponent)):  # built and seated here: a bad spec fails before any game
        check_agent(game, Contestant(spec, spec))
    games = -(-games // seats) * seats
    step = max(seats, (games // (8 * max(workers, 1)) // seats) * seats) or seats
    jobs = [(name, config, agent, opponent, seed, first, min(first + step, games), save_games)
            for first in range(0, games, step)]
    totals = [0, 0, 0, 0, 0, 0.0]
    bar = ProgressBar(games, f"{agent} vs {opponent}", progress)
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for part in pool.map(_chunk, jobs):
                totals = [a + b for a, b in zip(totals, part, strict=True)]
                bar.update(part[4])
    else:
        for job in jobs:
            part = _chunk(job)
            totals = [a + b for a, b in zip(totals, part, strict=True)]
            bar.update(part[4])
    bar.close()
    wins, shared, opponent_wins, nobody, played, total_return = totals
    return ContestResult(name, agent, opponent, seats, int(played), int(wins), int(shared), int(opponent_wins),
                         int(nobody), total_return / played)


class ProgressBar:
    """tqdm on stderr when installed and wanted, otherwise silent."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=label, unit="game", file=sys.stderr, leave=False)
            except ImportError:
                print(f"playing {total} games: {label}", file=sys.stderr)

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def round_robin(name: str, agents: Sequence[str], games: int, *, seed: int = 0, config: dict | None = None,
                workers: int = 1, progress: bool = True, save_games: str | None = None) -> list[ContestResult]:
    """Every ordered-by-list pair ``(a, b)``, ``a`` listed first, as :func:`contest`."""
    results = []
    for index, (a, b) in enumerate(itertools.combinations(agents, 2)):
        results.append(contest(name, b, a, games, seed=seed + index, config=config, workers=workers,
                               progress=progress, save_games=save_games))
    return results


def format_table(results: Sequence[ContestResult]) -> str:
    """A Markdown table, one row per contest."""
    lines = ["| agent | vs field of | seats | games | agent win rate [95% CI] | fair share | field wins | "
             "no result | agent mean return |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        low, high = r.interval
        lines.append(f"| {r.agent} | {r.opponent} | {r.seats} | {r.games} | {r.win_rate:.3f} [{low:.3f}, {high:.3f}] | "
                     f"{1 / r.seats:.3f} | {r.opponent_wins / r.games:.3f} | {r.nobody} | {r.mean_return:+.3f} |")
    return "\n".join(lines)


EXAMPLES = """examples:
  card-envs match --game bloodlines_v0 --games 500
  card-envs match --game revolutionary_war_v0 --agents zoo:revolutionary_war_v0/jax_ppo heuristic:endgame --games 2000
"""


def add_table_arguments(parser: argparse.ArgumentParser, *, games: int, games_help: str) -> None:
    """The options ``match`` and ``evaluate`` share: the table, who plays, how many games and where."""
    parser.add_argument("--game", default="revolutionary_war_v0", choices=card_envs.ENV_NAMES)
    parser.add_argument("--config", type=json_object, default={},
                        help='the table\'s options as a JSON object, e.g. \'{"num_players": 4}\' (default: {})')
    parser.add_argument("--agents", nargs="+", metavar="SPEC",
                        help="agent specs, optionally 'label=spec' (default: random and every rule-based player)")
    parser.add_argument("--games", type=positive_int, default=games, help=games_help)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=positive_int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: 2, or 1 on a one-core machine)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--save-games", metavar="DIR",
                        help="write every game to DIR as JSON (seed, options, agents, actions); "
                             "replay with card-envs play --replay FILE")


def checked_table(args: argparse.Namespace) -> tuple[Game, tuple[Contestant, ...]]:
    """The table and its contestants from the shared options, every agent built and seated once: bad input
    (game options, agent specs, checkpoints, a model at a table it cannot read) fails here, before any game."""
    game = checked_game(args.game, args.config)
    contestants = tuple(parse_contestant(text) for text in args.agents or agent_names(args.game))
    check_contestants(game, contestants)
    if args.save_games:
        os.makedirs(args.save_games, exist_ok=True)  # an unwritable folder fails now, not after the games
    return game, contestants


@command_line("python -m agents.match")
def main(argv: Sequence[str] | None, prog: str) -> int:
    parser = CommandParser(prog=prog, description=__doc__.split("\n\n")[0], epilog=EXAMPLES)
    add_table_arguments(parser, games=2000, games_help="games per pair (default 2000)")
    parser.add_argument("--out", help="also write the table (.md) and rows (.json) under this path prefix")
    args = parser.parse_args(argv)
    _, contestants = checked_table(args)
    config = args.config
    agents = [contestant.spec for contestant in contestants]
    results = round_robin(args.game, agents, args.games, seed=args.seed, config=config, workers=args.workers,
                          progress=not args.quiet, save_games=args.save_games)
    table = format_table(results)
    print(f"{args.game} {config or ''}: {args.games} games per pair, seats rotated, seed {args.seed}\n")
    print(table)
    if args.out:
        write_atomically(args.out + ".md", table + "\n")
        write_atomically(args.out + ".json", json.dumps([r.row() for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
