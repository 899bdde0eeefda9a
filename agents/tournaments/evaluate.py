"""Tournaments researchers can trust: duplicate deals, balanced seating, CIs, ratings, SPRT.

    card-envs evaluate --game revolutionary_war_v0 --agents random heuristic:pot \\
        --games 10000 --seed 0 --workers 2 --out benchmarks/results/evaluation_revolutionary_war_v0

``--agents`` takes agent specs (``random``, ``heuristic:<name>``, ``checkpoint:<path>``; see
``agents.players.registry``), optionally labelled ``label=spec`` (e.g. ``a=random b=random`` to play an
agent against itself). Default: random and every rule-based player of the game.

The design (generic over the game and its player count ``S``; ``K`` agents)
=====================  ================================================================================
lineup                 who sits at the table: every set of ``S`` distinct agents when ``K >= S`` (all
                       pairs for two seats), else every multiset of ``S`` that holds each agent at
                       least once (2 agents at 4 seats: AAAB, AABB, ABBB). Symmetric in the agents.
seating                a lineup is replayed over a Williams design: ``S`` seatings (``2S`` for odd
                       ``S``) in which every lineup member sits in every seat equally often and follows
                       every other member equally often (all rotations for two seats, all 6 orders for
                       three, a balanced Latin square for 4 and 6).
deal                   one seed for all of an episode's chance (``deal_seed``): the state's generator
                       deals the same cards, and every later shuffle, in every game of the deal. Every
                       deal is played by every lineup in every seating, so the luck of the cards cancels
                       (each game's starting state is fingerprinted and the report checks they agree).
agent randomness       every agent is reseeded per (deal, lineup, seating, seat): reproducible.
``--games``            total games, rounded up to whole deals (lineups x seatings games each).
=====================  ================================================================================

Results depend only on ``--seed`` (not on ``--workers``, ``--backend`` or the chunking): games are played
in deal chunks in parallel, in local processes or on a Ray cluster (``--backend ray [--address ADDR]``,
:mod:`agents.tournaments.backends`), and consumed in deal order. An agent that returns an illegal action (or
raises) stops its lineup cleanly at that deal; the report names the agent, seat, action and state,
and the rest of the tournament goes on. ``--sprt ELO0 ELO1`` (two agents) stops as soon as a
fishtest-style GSPRT on per-deal head-to-head scores accepts H0 or H1. The statistics are in
:mod:`agents.tournaments.stats`, the Markdown/CSV/JSON/PNG writers in :mod:`agents.tournaments.report`.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import card_envs
from agents.players.base import Agent
from agents.tournaments.backends import BACKENDS, Backend
from agents.tournaments.match import AgentError, ProgressBar, add_table_arguments, checked_table, play_out
from agents.tournaments.records import (
    AgentFailure,
    Contestant,
    GameRecord,
    Schedule,
    Tournament,
    agent_seeds,
    check_contestants,
    deal_seed,
    parse_contestant,
)
from agents.tournaments.stats import Evaluation, SprtSpec
from card_envs.core.commands import CommandParser, command_line, positive_int
from card_envs.core.engine import GameState
from card_envs.core.errors import ConfigError

EXAMPLES = """examples:
  card-envs evaluate --game bloodlines_v0 --games 2000 --workers 2
  card-envs evaluate --game battlecards_v0 --config '{"num_players": 4}' --agents random heuristic:counter \\
      zoo:battlecards_v0/jax_ppo --games 4000 --out results/battlecards_4p
"""

#: games per parallel chunk (rounded to whole deals): small enough for a smooth progress bar
CHUNK_GAMES = 240


# -- playing ------------------------------------------------------------------------------------


def state_fingerprint(state: GameState) -> str:
    """A short hash of the whole position (``to_dict``: cards, scores, generator state)."""
    text = json.dumps(state.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def final_scores(state: GameState) -> tuple[float, ...] | None:
    """The game's own points per seat (``scores()`` or ``scores``), or None if it keeps none."""
    scores = getattr(state, "scores", None)
    if callable(scores):
        scores = scores()
    if not isinstance(scores, (list, tuple)) or len(scores) != state.game.num_players:
        return None
    return tuple(float(s) for s in scores)


@dataclass(frozen=True)
class _Job:
    game: str
    config: Mapping[str, Any]
    contestants: tuple[Contestant, ...]
    schedule: Schedule
    seed: int
    first: int
    last: int
    skip: frozenset[int]  #: lineups already stopped by an agent failure
    save_games: str | None = None  #: write every game played to this directory (agents.tournaments.saved_games)


def _play_chunk(job: _Job) -> tuple[list[GameRecord], list[AgentFailure]]:
    """Play deals ``first..last-1`` for every lineup not in ``skip``, in every seating."""
    game = card_envs.make_game(job.game, **job.config)
    schedule = job.schedule
    cast: dict[tuple[int, int], Agent] = {}  # (agent index, copy) -> instance, built once per chunk
    records: list[GameRecord] = []
    failures: list[AgentFailure] = []
    stopped = set(job.skip)
    for deal in range(job.first, job.last):
        seed_of_deal = deal_seed(job.seed, deal)
        for lineup in range(len(schedule.lineups)):
            if lineup in stopped:
                continue
            played: list[GameRecord] = []
            for permutation in range(len(schedule.seatings)):
                seating = schedule.seating(lineup, permutation)
                agents = _seat_agents(job, cast, seating)
                seeds = agent_seeds(job.seed, deal, lineup, permutation, game.num_players)
                for agent, agent_seed in zip(agents, seeds, strict=True):
                    agent.reseed(agent_seed)
                state = game.new_state(np.random.default_rng(seed_of_deal))
                start = state_fingerprint(state)
                try:
                    play_out(state, agents)
                except AgentError as error:
                    culprit = job.contestants[seating[error.seat]]
                    failures.append(AgentFailure(culprit.label, culprit.spec, error.seat, deal, lineup, permutation,
                                                 error.action, error.reason, error.table))
                    stopped.add(lineup)
                    break
                played.append(GameRecord(deal, lineup, permutation, seating, tuple(state.returns()),
                                         tuple(state.winners()), final_scores(state), len(state.history),
                                         bool(state.truncated), start))
                if job.save_games:
                    _save_game(job, state, seed_of_deal, seating, seeds, deal, lineup, permutation)
            else:
                records.extend(played)  # a lineup's deal counts only when all its seatings finished
    return records, failures


def _save_game(job: _Job, state: GameState, seed_of_deal: int, seating: Sequence[int], seeds: Sequence[int],
               deal: int, lineup: int, permutation: int) -> None:
    from agents.tournaments.saved_games import file_name, save_played

    labels = [job.contestants[index].label for index in seating]
    save_played(job.save_games, file_name(job.game, f"s{job.seed}", f"deal{deal:06d}", f"lineup{lineup}",
                                          f"seating{permutation}"), state, seed=seed_of_deal,
                agents=[job.contestants[index].spec for index in seating], agent_seeds=seeds,
                source={"tool": "agents.tournaments.evaluate", "seed": job.seed, "deal": deal, "lineup": lineup,
                        "seating": permutation, "labels": labels})


def _seat_agents(job: _Job, cast: dict[tuple[int, int], Agent], seating: Sequence[int]) -> list[Agent]:
    agents = []
    copies: dict[int, int] = {}
    for index in seating:
        copy = copies[index] = copies.get(index, -1) + 1
        if (index, copy) not in cast:
            cast[index, copy] = job.contestants[index].build(job.game, 0)
        agents.append(cast[index, copy])
    return agents


# -- the tournament -----------------------------------------------------------------------------


def run_tournament(game: str, contestants: Sequence[Contestant | str], games: int, *, seed: int = 0,
                   config: Mapping[str, Any] | None = None, workers: int = 1, sprt: SprtSpec | None = None,
                   progress: bool = False, save_games: str | None = None, backend: str = "local",
                   address: str | None = None) -> Tournament:
    """Play the tournament; see the module docstring. ``sprt``: an
    :class:`agents.tournaments.stats.SprtSpec` (two agents), or None. ``save_games``: also write every
    game played to this directory, one JSON file each (:mod:`agents.tournaments.saved_games`). ``backend``/``address``:
    where the chunks run (:mod:`agents.tournaments.backends`; the result does not depend on it)."""
    from agents.tournaments.stats import SequentialTest

    if games < 1:
        raise ConfigError(f"games must be at least 1, got {games}")
    config = dict(config or {})
    engine = card_envs.make_game(game, **config)
    cast = tuple(parse_contestant(c) if isinstance(c, str) else c for c in contestants)
    check_contestants(engine, cast)
    if sprt is not None and len(cast) != 2:
        raise ConfigError(f"the sequential test compares exactly two agents, got {len(cast)}: "
                          f"{', '.join(c.label for c in cast)}")
    schedule = Schedule.plan(len(cast), engine.num_players, games)
    result = Tournament(game, config, cast, seed, workers, schedule, save_games=save_games,
                        backend=Backend(backend, workers, address))
    test = SequentialTest(sprt, schedule) if sprt is not None else None
    bar = ProgressBar(schedule.deals * schedule.games_per_deal, f"{game}: {len(cast)} agents", progress)
    stopped: dict[int, int] = {}
    for games_done, (records, failures) in _chunks_in_order(result, stopped):
        for failure in failures:
            if failure.lineup not in stopped:
                stopped[failure.lineup] = failure.deal
                result.failures.append(failure)
        kept = [r for r in records if r.deal < stopped.get(r.lineup, schedule.deals)]
        verdict_deal = test.consume(kept, stopped) if test is not None else None
        if verdict_deal is not None:  # the test decided: later games and failures never happened
            kept = [r for r in kept if r.deal <= verdict_deal]
            result.failures = [f for f in result.failures if f.deal <= verdict_deal]
        result.records.extend(kept)
        bar.update(games_done)
        if verdict_deal is not None or len(stopped) == len(schedule.lineups):
            break
    bar.close()
    result.deals_played = 1 + max((r.deal for r in result.records), default=-1)
    result.sprt = test.result() if test is not None else None
    return result


def _chunks_in_order(result: Tournament, stopped: dict[int, int]) -> Iterator[tuple[int, tuple[list, list]]]:
    """(games planned, chunk result) in deal order; the consumer may stop early (pending work is cancelled)."""
    from agents.tournaments.backends import ordered_results

    schedule = result.schedule
    step = max(1, CHUNK_GAMES // schedule.games_per_deal)
    bounds = [(first, min(first + step, schedule.deals)) for first in range(0, schedule.deals, step)]

    def job(index: int) -> _Job:
        first, last = bounds[index]
        return _Job(result.game, result.config, result.contestants, schedule, result.seed, first, last,
                    frozenset(stopped), result.save_games)

    for index, chunk in ordered_results(_play_chunk, len(bounds), job, result.backend):
        first, last = bounds[index]
        yield (last - first) * schedule.games_per_deal, chunk


def evaluate(game: str, contestants: Sequence[Contestant | str], games: int, **options: Any) -> Evaluation:
    """Run a tournament and summarize it: an :class:`agents.tournaments.stats.Evaluation`.

    Options: ``seed``, ``config``, ``workers``, ``sprt`` (see :func:`run_tournament`), ``progress``,
    ``bootstrap_resamples``.
    """
    from agents.tournaments.stats import summarize

    resamples = options.pop("bootstrap_resamples", 2000)
    return summarize(run_tournament(game, contestants, games, **options), resamples=resamples)


# -- command line -------------------------------------------------------------------------------


@command_line("python -m agents.evaluate")
def main(argv: Sequence[str] | None, prog: str) -> int:
    from agents.tournaments.report import markdown, write_all
    from agents.tournaments.stats import SprtSpec, summarize

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = CommandParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    add_table_arguments(parser, games=10000, games_help="total games, rounded up to whole deals (default 10000)")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where chunks of deals run: local processes (default) or ray (tournaments/backends.py); "
                             "the results are the same")
    parser.add_argument("--address", help="--backend ray: the cluster to join (e.g. 127.0.0.1:6379); default: "
                                          "start Ray here with --workers CPUs")
    parser.add_argument("--out", metavar="PREFIX", help="write PREFIX.md, .csv, .json and .png")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                        help="two agents: stop when the GSPRT accepts H0 (elo <= ELO0) or H1 (elo >= ELO1)")
    parser.add_argument("--alpha", type=float, default=0.05, help="SPRT false-positive rate (default 0.05)")
    parser.add_argument("--beta", type=float, default=0.05, help="SPRT false-negative rate (default 0.05)")
    parser.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")
    args = parser.parse_args(argv)
    sprt = SprtSpec(args.sprt[0], args.sprt[1], args.alpha, args.beta) if args.sprt else None
    _, contestants = checked_table(args)
    started = time.perf_counter()
    tournament = run_tournament(args.game, contestants, args.games, seed=args.seed, config=args.config,
                                workers=args.workers, sprt=sprt, progress=not args.quiet,
                                save_games=args.save_games, backend=args.backend, address=args.address)
    tournament.command = f"{prog} " + shlex.join(argv)
    evaluation = summarize(tournament, resamples=args.resamples)
    sys.stdout.write(markdown(evaluation))
    if args.out:
        paths = write_all(evaluation, args.out)
        print(f"wrote {', '.join(paths)}", file=sys.stderr)
    print(f"{len(tournament.records)} games in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 1 if tournament.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
