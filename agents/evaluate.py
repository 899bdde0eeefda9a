"""Tournaments researchers can trust: duplicate deals, balanced seating, CIs, ratings, SPRT.

    python -m agents.evaluate --game revolutionary_war_v0 --agents random heuristic:pot \\
        --games 10000 --seed 0 --workers 2 --out benchmarks/results/evaluation_revolutionary_war_v0

``--agents`` takes agent specs (``random``, ``heuristic:<name>``, ``checkpoint:<path>``; see
``agents.registry``), optionally labelled ``label=spec`` (e.g. ``a=random b=random`` to play an
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
:mod:`agents.parallel`), and consumed in deal order. An agent that returns an illegal action (or
raises) stops its lineup cleanly at that deal; the report names the agent, seat, action and state,
and the rest of the tournament goes on. ``--sprt ELO0 ELO1`` (two agents) stops as soon as a
fishtest-style GSPRT on per-deal head-to-head scores accepts H0 or H1. The statistics are in
:mod:`agents.evaluation_stats`, the Markdown/CSV/JSON/PNG writers in :mod:`agents.evaluation_report`.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

import card_envs
from agents.base import Agent
from agents.match import AgentError, ProgressBar, play_out
from agents.parallel import BACKENDS, Backend
from agents.registry import agent_names, make_agent
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import CardEnvsError, ConfigError

if TYPE_CHECKING:  # the statistics module imports this one
    from agents.evaluation_stats import Evaluation, SprtResult, SprtSpec

#: games per parallel chunk (rounded to whole deals): small enough for a smooth progress bar
CHUNK_GAMES = 240


class AgentSpecError(ConfigError):
    """An agent spec that cannot be built for this game (unknown name, wrong or broken checkpoint)."""


# -- who plays ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contestant:
    """One agent of a tournament: a table ``label`` and how to build it.

    ``spec`` goes through :func:`agents.registry.make_agent`; the Python API may instead pass a
    ``factory(seed) -> Agent`` (a module-level callable, so worker processes can import it).
    """

    label: str
    spec: str
    factory: Callable[[int], Agent] | None = None

    def build(self, game: str, seed: int) -> Agent:
        return self.factory(seed) if self.factory is not None else make_agent(game, self.spec, seed)


def parse_contestant(text: str) -> Contestant:
    """``"heuristic:pot"`` or ``"label=spec"`` (a label has no ``:``, so ``ismcts:sims=200`` is a spec)."""
    label, sep, spec = text.partition("=")
    if not sep or ":" in label:
        return Contestant(text, text)
    if not label or not spec:
        raise AgentSpecError(f"agent {text!r}: expected 'label=spec' with both parts, e.g. 'a=random'")
    return Contestant(label, spec)


def check_contestants(game: Game, contestants: Sequence[Contestant]) -> None:
    """Build every agent once and seat it, before any game: bad specs fail here with a clear error."""
    labels = [c.label for c in contestants]
    if len(contestants) < 2:
        raise AgentSpecError(f"a tournament needs at least two agents, got {labels}")
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise AgentSpecError(f"agent label(s) {repeated} listed twice; label copies, e.g. 'a=random b=random'")
    for contestant in contestants:
        try:
            contestant.build(game.name, 0).reset(game, 0)
        except Exception as error:  # a checkpoint loader may raise anything (missing file, wrong game, ...)
            detail = str(error) if isinstance(error, CardEnvsError) else f"{type(error).__name__}: {error}"
            raise AgentSpecError(f"agent {contestant.label!r} cannot play {game.name}: {detail}") from error


# -- the design ---------------------------------------------------------------------------------


def williams_design(seats: int) -> tuple[tuple[int, ...], ...]:
    """Seatings: ``row[seat]`` = lineup slot in that seat. Latin (each slot once per seat) and
    carry-over balanced (each slot directly follows each other slot equally often)."""
    first = [0]
    low, high = 1, seats - 1
    while low <= high:
        first.append(low)
        if low != high:
            first.append(high)
        low, high = low + 1, high - 1
    rows = [tuple((slot + shift) % seats for slot in first) for shift in range(seats)]
    if seats % 2:  # odd orders need the mirrored square too
        rows += [row[::-1] for row in rows]
    return tuple(rows)


def make_lineups(num_agents: int, seats: int) -> tuple[tuple[int, ...], ...]:
    """Agent index per lineup slot, symmetric in the agents (see the module docstring)."""
    if num_agents >= seats:
        return tuple(itertools.combinations(range(num_agents), seats))
    return tuple(c for c in itertools.combinations_with_replacement(range(num_agents), seats)
                 if len(set(c)) == num_agents)


@dataclass(frozen=True)
class Schedule:
    """Every deal is played by every lineup in every seating."""

    seats: int
    lineups: tuple[tuple[int, ...], ...]
    seatings: tuple[tuple[int, ...], ...]
    deals: int

    @classmethod
    def plan(cls, num_agents: int, seats: int, games: int) -> Schedule:
        lineups, seatings = make_lineups(num_agents, seats), williams_design(seats)
        per_deal = len(lineups) * len(seatings)
        return cls(seats, lineups, seatings, max(1, -(-games // per_deal)))

    @property
    def games_per_deal(self) -> int:
        return len(self.lineups) * len(self.seatings)

    def seating(self, lineup: int, permutation: int) -> tuple[int, ...]:
        """Agent index in each seat."""
        members = self.lineups[lineup]
        return tuple(members[slot] for slot in self.seatings[permutation])


def deal_seed(seed: int, deal: int) -> int:
    """The seed of all chance in every game of ``deal``."""
    return int(np.random.SeedSequence(seed, spawn_key=(0, deal)).generate_state(1, np.uint64)[0])


def agent_seeds(seed: int, deal: int, lineup: int, permutation: int, seats: int) -> list[int]:
    """One seed per seat for the agents' own randomness in one game."""
    sequence = np.random.SeedSequence(seed, spawn_key=(1, deal, lineup, permutation))
    return [int(s) for s in sequence.generate_state(seats, np.uint64)]


# -- playing ------------------------------------------------------------------------------------


class GameRecord(NamedTuple):
    """The outcome of one game, everything the statistics need."""

    deal: int
    lineup: int
    permutation: int
    seating: tuple[int, ...]  #: agent index in each seat
    returns: tuple[float, ...]
    winners: tuple[int, ...]  #: seats
    scores: tuple[float, ...] | None  #: the game's own points, when it keeps them
    decisions: int
    truncated: bool
    start: str  #: fingerprint of the dealt state (cards, generator, everything)


@dataclass(frozen=True)
class AgentFailure:
    """An agent returned an illegal action (or raised); its lineup stopped at ``deal``."""

    label: str
    spec: str
    seat: int
    deal: int
    lineup: int
    permutation: int
    action: str
    reason: str
    table: str  #: the state's render() when it happened


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
    save_games: str | None = None  #: write every game played to this directory (agents.saved_games)


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
    from agents.saved_games import file_name, save_played

    labels = [job.contestants[index].label for index in seating]
    save_played(job.save_games, file_name(job.game, f"s{job.seed}", f"deal{deal:06d}", f"lineup{lineup}",
                                          f"seating{permutation}"), state, seed=seed_of_deal,
                agents=[job.contestants[index].spec for index in seating], agent_seeds=seeds,
                source={"tool": "agents.evaluate", "seed": job.seed, "deal": deal, "lineup": lineup,
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


@dataclass
class Tournament:
    """Raw results: every game played (in deal order), every agent failure, the SPRT verdict."""

    game: str
    config: dict[str, Any]
    contestants: tuple[Contestant, ...]
    seed: int
    workers: int
    schedule: Schedule
    records: list[GameRecord] = field(default_factory=list)
    failures: list[AgentFailure] = field(default_factory=list)
    deals_played: int = 0
    sprt: SprtResult | None = None  #: the sequential test's result, when one ran
    command: str = ""
    save_games: str | None = None  #: every game played is also written here (agents.saved_games)
    backend: Backend = field(default_factory=Backend)  #: where chunks ran (results do not depend on it)

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.contestants]

    @property
    def seats(self) -> int:
        return self.schedule.seats


def run_tournament(game: str, contestants: Sequence[Contestant | str], games: int, *, seed: int = 0,
                   config: Mapping[str, Any] | None = None, workers: int = 1, sprt: SprtSpec | None = None,
                   progress: bool = False, save_games: str | None = None, backend: str = "local",
                   address: str | None = None) -> Tournament:
    """Play the tournament; see the module docstring. ``sprt``: an
    :class:`agents.evaluation_stats.SprtSpec` (two agents), or None. ``save_games``: also write every
    game played to this directory, one JSON file each (:mod:`agents.saved_games`). ``backend``/``address``:
    where the chunks run (:mod:`agents.parallel`; the result does not depend on it)."""
    from agents.evaluation_stats import SequentialTest

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
    from agents.parallel import ordered_results

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
    """Run a tournament and summarize it: an :class:`agents.evaluation_stats.Evaluation`.

    Options: ``seed``, ``config``, ``workers``, ``sprt`` (see :func:`run_tournament`), ``progress``,
    ``bootstrap_resamples``.
    """
    from agents.evaluation_stats import summarize

    resamples = options.pop("bootstrap_resamples", 2000)
    return summarize(run_tournament(game, contestants, games, **options), resamples=resamples)


# -- command line -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    from agents.evaluation_report import markdown, write_all
    from agents.evaluation_stats import SprtSpec, summarize

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m agents.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="revolutionary_war_v0", choices=card_envs.ENV_NAMES)
    parser.add_argument("--agents", nargs="+", metavar="SPEC",
                        help="agent specs, optionally 'label=spec' (default: random and every heuristic)")
    parser.add_argument("--games", type=int, default=10000, help="total games, rounded up to whole deals")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where chunks of deals run: local processes (default) or ray (agents/parallel.py); "
                             "the results are the same")
    parser.add_argument("--address", help="--backend ray: the cluster to join (e.g. 127.0.0.1:6379); default: "
                                          "start Ray here with --workers CPUs")
    parser.add_argument("--config", default="{}", help='game options as JSON, e.g. \'{"target_score": 100}\'')
    parser.add_argument("--out", metavar="PREFIX", help="write PREFIX.md, .csv, .json and .png")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                        help="two agents: stop when the GSPRT accepts H0 (elo <= ELO0) or H1 (elo >= ELO1)")
    parser.add_argument("--alpha", type=float, default=0.05, help="SPRT false-positive rate (default 0.05)")
    parser.add_argument("--beta", type=float, default=0.05, help="SPRT false-negative rate (default 0.05)")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--save-games", metavar="DIR",
                        help="write every game played to DIR as JSON (seed, options, agents, actions); "
                             "replay with python -m agents.play --replay FILE")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    try:
        config = json.loads(args.config)
    except json.JSONDecodeError as error:
        parser.error(f"--config is not JSON: {error}")
    if not isinstance(config, dict):
        parser.error(f"--config must be a JSON object, got {args.config}")
    started = time.perf_counter()
    try:
        sprt = SprtSpec(args.sprt[0], args.sprt[1], args.alpha, args.beta) if args.sprt else None
        specs = args.agents or agent_names(args.game)
        tournament = run_tournament(args.game, specs, args.games, seed=args.seed, config=config,
                                    workers=args.workers, sprt=sprt, progress=not args.quiet,
                                    save_games=args.save_games, backend=args.backend, address=args.address)
    except ConfigError as error:  # bad agent spec, game option or SPRT parameter: nothing was played
        print(f"error: {error}", file=sys.stderr)
        return 2
    tournament.command = "python -m agents.evaluate " + shlex.join(argv)
    evaluation = summarize(tournament, resamples=args.resamples)
    sys.stdout.write(markdown(evaluation))
    if args.out:
        paths = write_all(evaluation, args.out)
        print(f"wrote {', '.join(paths)}", file=sys.stderr)
    print(f"{len(tournament.records)} games in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 1 if tournament.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
