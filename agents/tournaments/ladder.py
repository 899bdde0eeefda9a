"""The strength ladder of each game: fixed reference players, their ratings, and placing a new agent on it.

    card-envs ladder --game revolutionary_war_v0 --agent checkpoint:runs/rw/checkpoint.zip
    card-envs ladder --game bloodlines_v0 --agent zoo:bloodlines_v0/jax_ppo --sprt heuristic:defender
    card-envs ladder --game revolutionary_war_v0 --agent zoo:revolutionary_war_v0/NEW --record
    card-envs ladder build --game revolutionary_war_v0 [--games N] [--backend ray] [--state DIR]
    card-envs ladder calibrate --game revolutionary_war_v0      # ISMCTS simulations per millisecond
    card-envs ladder show [--game G]

A ladder is a fixed, versioned set of players per game (:data:`LADDERS`): random, every rule-based
player, ISMCTS at three simulation budgets calibrated to about 1, 10 and 100 ms a move on the 2-core
reference machine (simulation counts, not times, so the players are deterministic; the calibration is
in ``benchmarks/results/ladder_calibration.md``), and the shipped ``zoo:`` agents. ``build`` rates them
in one large duplicate-deal tournament (``agents.tournaments.evaluate``'s design: every lineup of players replays
every deal in a balanced set of seatings) and writes ``benchmarks/results/ladder_<game>.{md,json,png}``
and each zoo agent's rating into its manifest. Placing an agent plays it on fresh deals in every lineup
it would have had as a ladder member, the ladder's ratings held fixed, and prints its rating with a
95% interval, its nearest neighbours and its head-to-head row. Everything is deterministic for a seed
and identical whatever the backend (local processes or ``--backend ray``, :mod:`agents.tournaments.backends`).

==================  ==========================================================================================
rating              how
==================  ==========================================================================================
Elo (random = 0)    Bradley-Terry on the logistic Elo scale (``P(a beats b) = 1 / (1 + 10^((b - a) / 400))``),
                    fitted by maximum likelihood to every head-to-head comparison of the tournament: each
                    pair of seats held by two players in one game, placed better 1, same placing 1/2,
                    worse 0 (``agents.tournaments.stats.pair_points``); one virtual drawn comparison per
                    pair that met keeps a clean sweep finite. Random is fixed at 0. 95% interval: percentile
                    bootstrap resampling whole deals. Placing: the same likelihood in the new agent's Elo
                    alone, the ladder's Elos fixed
openskill           Plackett-Luce (``agents.tournaments.stats.openskill_ratings``), mu +- 1.96 sigma. Placing:
                    the new agent's rating updated game by game, the ladder players' ratings fixed
==================  ==========================================================================================

==================  ==========================================================================================
design              why
==================  ==========================================================================================
costly players      a search player with ``deals`` set plays only in the ladder's first ``deals`` deals (so
                    the 100 ms player costs hours, not days); every lineup holding it stops there, every
                    other lineup plays every deal. Placing scales the caps to its own deal count
chunks, resuming    the tournament is cut into jobs of whole deals (cheap lineups together, each costly
                    lineup on its own); each finished job is written to ``--state`` (default
                    ``runs/ladder/<game>-v<version>``), so a killed build resumes where it stopped, and
                    jobs run on local processes or a Ray cluster. The result does not depend on either.
                    Placing cuts a costly lineup into chunks of a few games (:data:`PLACING_GAMES`), so
                    that the workers share its few games (with ``--sprt``: one job per range of deals)
placing lineups     in two-player games the new agent against each ladder player; with more seats, the new
                    agent with every set of seats-1 ladder players (the lineups it would have had on the
                    ladder), each in every seating of a Williams design
compute             the search players dominate: games x searched moves a game x ms a move. Estimated CPU
                    for a whole ladder on the reference machine (searched moves a game from
                    ``benchmarks/results/ismcts_strength.md``): Revolutionary War ~1 h (100 ms player: 1,120
                    games x 18 moves), Bloodlines ~1.5 h (1,080 x 38), Revolution ~3.5 h (1,120 x 41, and
                    20,000 games of the rest), Battlecards ~11 h (1,080 x ~300 moves: long games). Halve for
                    two local workers; divide by the CPUs of a Ray cluster (the largest job is a few deals of
                    one lineup, a minute or two)
``--sprt LABEL``    stops placing as soon as a GSPRT on the per-deal head-to-head score against ``LABEL``
                    decides whether the new agent is ``--elo1`` Elo stronger (H1) or not stronger than
                    ``--elo0`` (H0); its lineups with ``LABEL`` are not capped
==================  ==========================================================================================
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import platform
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import card_envs
from agents.files import write_atomically
from agents.players.ismcts import GAME_OPTIONS
from agents.tournaments.backends import BACKENDS, Backend, ordered_results
from agents.tournaments.evaluate import CHUNK_GAMES, _Job, _play_chunk
from agents.tournaments.match import ProgressBar
from agents.tournaments.records import (
    AgentFailure,
    Contestant,
    GameRecord,
    Schedule,
    Tournament,
    check_contestants,
    make_lineups,
    williams_design,
)
from card_envs.core.commands import CommandParser, command_line, positive_int
from card_envs.core.errors import ConfigError

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
#: the ISMCTS budgets of every ladder, in milliseconds a move on the reference machine
SEARCH_MS = (1, 10, 100)
ELO_SCALE = 400 / math.log(10)  #: logistic Elo: P = 1 / (1 + exp(-(a - b) / ELO_SCALE))
BOOTSTRAP = 1000  #: bootstrap resamples of the Elo intervals


# -- the ladders ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rung:
    """One ladder player: its table label, its agent spec, and (costly players) the deals it plays."""

    label: str
    spec: str
    deals: int | None = None  #: plays only in the ladder's first ``deals`` deals (None: every deal)
    note: str = ""


@dataclass(frozen=True)
class LadderSpec:
    """A game's ladder: its players and the tournament that rates them. A new version for any change."""

    game: str
    version: int
    rungs: tuple[Rung, ...]
    games: int  #: the tournament's size (games, rounded up to whole deals)
    config: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    calibration: str = ""  #: how the search budgets were chosen

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.rungs]

    def rung(self, label: str) -> Rung:
        for rung in self.rungs:
            if rung.label == label:
                return rung
        raise ConfigError(f"{label!r} is not on the {self.game} ladder; its players: {', '.join(self.labels)}")


#: simulations a move that cost about 1, 10 and 100 ms of CPU on the 2-core reference machine, from a
#: least-squares line through ``card-envs ladder calibrate`` (benchmarks/results/ladder_calibration.md;
#: measured while the machine was shared, load 8-26, which inflates CPU time somewhat). A budget of 1 is the
#: least there is: Revolution's search (``root=cycle``) simulates every legal move once per round, so its
#: cheapest player costs about 4.5 ms a move; Bloodlines' about 0.5 ms.
CALIBRATED_SIMS: dict[str, tuple[int, int, int]] = {
    "revolutionary_war_v0": (21, 136, 1292),
    "revolution_v0": (1, 9, 123),
    "battlecards_v0": (2, 18, 180),
    "bloodlines_v0": (1, 19, 197),
}


def search_rungs(game: str, deals: tuple[int | None, int | None, int | None]) -> tuple[Rung, ...]:
    """The three ISMCTS players of ``game``'s ladder (game-tuned options, calibrated budgets)."""
    options = GAME_OPTIONS.get(game, "")
    return tuple(Rung(f"ismcts-{ms}ms", f"ismcts:sims={sims}" + (f",{options}" if options else ""), cap,
                      f"about {ms} ms a move")
                 for ms, sims, cap in zip(SEARCH_MS, CALIBRATED_SIMS[game], deals, strict=True))


def _base_rungs(game: str) -> tuple[Rung, ...]:
    from agents.players.registry import heuristic_agents

    return (Rung("random", "random"),) + tuple(Rung(f"heuristic:{name}", f"heuristic:{name}")
                                               for name in heuristic_agents(game))


def _ladders() -> dict[str, LadderSpec]:
    rw, bl, bc, rev = "revolutionary_war_v0", "bloodlines_v0", "battlecards_v0", "revolution_v0"
    return {
        # 8 players, 2 seats: 28 lineups x 2 seatings; each player is in 7 lineups (14 games a deal)
        rw: LadderSpec(rw, 1, _base_rungs(rw) + search_rungs(rw, (None, 160, 80))
                       + (Rung("zoo:sb3_ppo", f"zoo:{rw}/sb3_ppo"),), games=10_000),
        # 7 players, 2 seats: 21 lineups x 2 seatings; each player is in 6 lineups (12 games a deal)
        # the shipped agent is the JAX trainer's (no SB3 agent of Bloodlines is shipped)
        bl: LadderSpec(bl, 1, _base_rungs(bl) + search_rungs(bl, (None, 200, 90))
                       + (Rung("zoo:jax_ppo", f"zoo:{bl}/jax_ppo"),), games=10_000),
        # the shipped agent is the JAX trainer's (configs/battlecards_jax.yaml; stronger than the SB3 config's)
        bc: LadderSpec(bc, 1, _base_rungs(bc) + search_rungs(bc, (None, 200, 90))
                       + (Rung("zoo:jax_ppo", f"zoo:{bc}/jax_ppo"),), games=10_000),
        # 7 players, 4 seats: 35 lineups x 4 seatings; each player is in 20 lineups (80 games a deal).
        # Played with full_recall and void_inferences (the shipped JAX agent's observation); they change no
        # other player: the rule-based players and the search remember the hand and its voids anyway.
        rev: LadderSpec(rev, 1, _base_rungs(rev) + search_rungs(rev, (None, 40, 14))
                        + (Rung("zoo:jax_ppo", f"zoo:{rev}/jax_ppo"),), games=20_000,
                        config={"full_recall": True, "void_inferences": True}),
    }


LADDERS: dict[str, LadderSpec] = _ladders()


def ladder_of(game: str) -> LadderSpec:
    if game not in LADDERS:
        raise ConfigError(f"no ladder for {game!r}; ladders: {', '.join(LADDERS)}")
    return LADDERS[game]


# -- jobs: whole deals, cheap lineups together, costly ones alone ------------------------------------


@dataclass(frozen=True)
class Plan:
    """Which lineups play which deals, cut into jobs (deal range, lineups)."""

    contestants: tuple[Contestant, ...]
    schedule: Schedule
    caps: tuple[int, ...]  #: per lineup: it plays deals 0 .. cap-1
    jobs: tuple[tuple[int, int, tuple[int, ...]], ...]  #: (first deal, last deal, lineups)

    @property
    def games(self) -> int:
        return sum(cap * len(self.schedule.seatings) for cap in self.caps)


#: games of a search player's chunk when placing an agent: placing plays few of them (tens, not the build's hundreds),
#: so chunks of the build's size would leave them all to one worker
PLACING_GAMES = 6


def make_plan(contestants: Sequence[Contestant], schedule: Schedule, caps: Sequence[int], *,
              alone: Sequence[int] = (), alone_games: int = 24, by_deal: bool = False) -> Plan:
    """Jobs of whole deals: the lineups of cheap players together, in chunks of about ``CHUNK_GAMES`` games,
    each lineup in ``alone`` (those of costly players) on its own in chunks of about ``alone_games`` games;
    sorted by first deal. ``by_deal``: one job per deal range holding every lineup that plays it (what a
    sequential test needs: whole deals in order)."""
    seatings = len(schedule.seatings)
    jobs: list[tuple[int, int, tuple[int, ...]]] = []
    if by_deal:
        bounds = sorted({0, schedule.deals, *caps})
        step = max(1, CHUNK_GAMES // schedule.games_per_deal)
        for low, high in zip(bounds, bounds[1:], strict=False):
            playing = tuple(i for i, cap in enumerate(caps) if cap > low)
            for first in range(low, high, step):
                jobs.append((first, min(first + step, high), playing))
        return Plan(tuple(contestants), schedule, tuple(caps), tuple(jobs))
    together = [i for i in range(len(caps)) if i not in set(alone) and caps[i] > 0]
    if together:
        step = max(1, CHUNK_GAMES // (len(together) * seatings))
        bounds = sorted({0, *(caps[i] for i in together)})
        for low, high in zip(bounds, bounds[1:], strict=False):
            playing = tuple(i for i in together if caps[i] > low)
            jobs += [(first, min(first + step, high), playing) for first in range(low, high, step)]
    step = max(1, alone_games // seatings)
    for lineup in alone:
        jobs += [(first, min(first + step, caps[lineup]), (lineup,)) for first in range(0, caps[lineup], step)]
    jobs.sort(key=lambda job: (job[0], job[2]))
    return Plan(tuple(contestants), schedule, tuple(caps), tuple(jobs))


def lineup_caps(schedule: Schedule, member_caps: Sequence[int | None]) -> tuple[int, ...]:
    """Per lineup: the deals it plays, the smallest cap of its members (None: every deal)."""
    return tuple(min([schedule.deals] + [member_caps[a] for a in lineup if member_caps[a] is not None])
                 for lineup in schedule.lineups)


class ChunkStore:
    """Finished jobs on disk (one JSON file each, written atomically), so a killed run resumes.

    ``folder`` None: nothing is kept. The plan's fingerprint is stored too; a folder of another plan is an
    error rather than a silent mix."""

    def __init__(self, folder: str | Path | None, fingerprint: str) -> None:
        self.folder = Path(folder) if folder else None
        self.resumed = 0  # chunks this run took from the folder instead of playing them
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        marker = self.folder / "plan.json"
        if marker.exists():
            stored = json.loads(marker.read_text()).get("fingerprint")
            if stored != fingerprint:
                raise ConfigError(f"{self.folder} holds chunks of another tournament (players, seed, size or "
                                  f"version differ); choose another --state folder or delete it")
        else:
            write_atomically(str(marker), json.dumps({"fingerprint": fingerprint}) + "\n")

    def add_run(self, wall: float) -> tuple[float, int]:
        """Count one more run of the build, ``wall`` seconds long; the wall time and runs of all of them.

        A build killed and resumed spans several runs: the folder's ``plan.json`` keeps their sum."""
        if self.folder is None:
            return wall, 1
        marker = self.folder / "plan.json"
        data = json.loads(marker.read_text())
        data["wall_time_s"] = round(data.get("wall_time_s", 0.0) + wall, 1)
        data["runs"] = data.get("runs", 0) + 1
        write_atomically(str(marker), json.dumps(data) + "\n")
        return data["wall_time_s"], data["runs"]

    def _path(self, job: tuple[int, int, tuple[int, ...]]) -> Path:
        first, last, lineups = job
        tag = hashlib.blake2b(json.dumps(lineups).encode(), digest_size=6).hexdigest()
        return self.folder / f"deals_{first:06d}_{last:06d}_{tag}.json"

    def load(self, job: tuple[int, int, tuple[int, ...]]) -> tuple[list[GameRecord], list[AgentFailure]] | None:
        if self.folder is None:
            return None
        path = self._path(job)
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        self.resumed += 1
        return ([GameRecord(*[tuple(v) if isinstance(v, list) else v for v in row]) for row in data["records"]],
                [AgentFailure(**row) for row in data["failures"]])

    def save(self, job: tuple[int, int, tuple[int, ...]], result: tuple[list[GameRecord], list[AgentFailure]]) -> None:
        if self.folder is None:
            return
        records, failures = result
        data = {"records": [list(r) for r in records], "failures": [dataclasses.asdict(f) for f in failures]}
        write_atomically(str(self._path(job)), json.dumps(data, separators=(",", ":")) + "\n")


def fingerprint(game: str, config: Mapping[str, Any], plan: Plan, seed: int) -> str:
    text = json.dumps([game, dict(config), [c.spec for c in plan.contestants], seed, plan.schedule.deals,
                       plan.caps, [list(lineup) for lineup in plan.schedule.lineups]], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=10).hexdigest()


def play_plan(game: str, config: Mapping[str, Any], plan: Plan, seed: int, *, backend: Backend,
              store: ChunkStore | None = None, progress: bool = False, sprt: Any = None) -> Tournament:
    """Play every job of ``plan`` (or until the sequential test ``sprt`` decides); the tournament, its
    records in canonical (deal, lineup, seating) order whatever ran where."""
    schedule = plan.schedule
    seatings = len(schedule.seatings)
    tournament = Tournament(game, dict(config), plan.contestants, seed, backend.workers, schedule, backend=backend)
    results: dict[int, tuple[list, list]] = {}
    todo = []
    for index, job in enumerate(plan.jobs):
        stored = store.load(job) if store is not None else None
        if stored is None:
            todo.append(index)
        else:
            results[index] = stored
    total = plan.games
    bar = ProgressBar(total, f"{game}: {len(plan.contestants)} players", progress)
    bar.update(sum(len(results[i][0]) for i in results))

    def make_job(k: int) -> _Job:
        first, last, lineups = plan.jobs[todo[k]]
        skip = frozenset(range(len(schedule.lineups))) - frozenset(lineups)
        return _Job(game, dict(config), plan.contestants, schedule, seed, first, last, skip)

    verdict_deal = None
    stopped: dict[int, int] = {}
    for k, result in ordered_results(_play_chunk, len(todo), make_job, backend, in_order=sprt is not None):
        index = todo[k]
        results[index] = result
        if store is not None:
            store.save(plan.jobs[index], result)
        first, last, lineups = plan.jobs[index]
        bar.update((last - first) * len(lineups) * seatings)
        if sprt is not None:
            records, failures = result
            for failure in failures:
                stopped.setdefault(failure.lineup, failure.deal)
            kept = [r for r in records if r.deal < stopped.get(r.lineup, schedule.deals)]
            verdict_deal = sprt.consume(kept, stopped)
            if verdict_deal is not None:
                break
    bar.close()
    failures: dict[int, AgentFailure] = {}
    for _, found in results.values():
        for failure in found:
            if failure.lineup not in failures or failure.deal < failures[failure.lineup].deal:
                failures[failure.lineup] = failure
    records = [r for chunk, _ in results.values() for r in chunk
               if r.deal < (failures[r.lineup].deal if r.lineup in failures else schedule.deals)]
    if verdict_deal is not None:
        records = [r for r in records if r.deal <= verdict_deal]
    tournament.records = sorted(records, key=lambda r: (r.deal, r.lineup, r.permutation))
    tournament.failures = sorted((f for f in failures.values() if verdict_deal is None or f.deal <= verdict_deal),
                                 key=lambda f: (f.deal, f.lineup))
    tournament.deals_played = 1 + max((r.deal for r in tournament.records), default=-1)
    if sprt is not None:
        tournament.sprt = sprt.result()
    return tournament


# -- Elo ------------------------------------------------------------------------------------------


def pair_totals(records: Sequence[GameRecord], deals: int, agents: int) -> tuple[np.ndarray, np.ndarray]:
    """``points[deal, a, b]``: a's head-to-head points against b in that deal; ``count[deal, a, b]``."""
    from agents.tournaments.stats import pair_points

    points = np.zeros((deals, agents, agents))
    count = np.zeros((deals, agents, agents))
    for record in records:
        for a, b, point in pair_points(record):
            points[record.deal, a, b] += point
            points[record.deal, b, a] += 1 - point
            count[record.deal, a, b] += 1
            count[record.deal, b, a] += 1
    return points, count


def fit_elo(points: np.ndarray, count: np.ndarray, anchor: int, *, prior: float = 1.0) -> np.ndarray:
    """Bradley-Terry maximum likelihood on the logistic Elo scale, ``anchor`` fixed at 0 (Newton's method).

    ``points[a, b]``: a's points against b (``points + points.T == count``). ``prior`` virtual drawn
    comparisons per pair that met keep a clean sweep finite. Players that met nobody get NaN."""
    met = count > 0
    wins = points + prior / 2 * met
    games = count + prior * met
    agents = len(points)
    playing = met.any(axis=1)
    free = np.array([i for i in range(agents) if i != anchor and playing[i]])
    elo = np.zeros(agents)
    for _ in range(100):
        expected = 1 / (1 + np.exp(-(elo[:, None] - elo[None, :]) / ELO_SCALE))
        gradient = (wins - games * expected).sum(axis=1) / ELO_SCALE
        weights = games * expected * (1 - expected) / ELO_SCALE**2
        hessian = weights - np.diag(weights.sum(axis=1))
        step = np.linalg.solve(hessian[np.ix_(free, free)], gradient[free])
        elo[free] -= step
        if np.max(np.abs(step)) < 1e-7:
            break
    elo[~playing] = np.nan
    elo[anchor] = 0.0
    return elo


def bootstrap_weights(deals: int, resamples: int, seed: int) -> np.ndarray:
    """How often each deal is drawn in each bootstrap resample: (resamples, deals)."""
    draws = np.random.default_rng(seed).integers(0, deals, size=(resamples, deals))
    weights = np.zeros((resamples, deals))
    np.add.at(weights, (np.repeat(np.arange(resamples), deals), draws.ravel()), 1)
    return weights


@dataclass(frozen=True)
class EloRating:
    label: str
    value: float
    low: float
    high: float

    def row(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


def elo_ratings(records: Sequence[GameRecord], labels: Sequence[str], deals: int, *, anchor: str = "random",
                seed: int = 0, resamples: int = BOOTSTRAP) -> list[EloRating]:
    """Every player's Elo (``anchor`` = 0) with a 95% bootstrap interval over deals, in ``labels`` order."""
    points, count = pair_totals(records, deals, len(labels))
    zero = labels.index(anchor)
    estimate = fit_elo(points.sum(axis=0), count.sum(axis=0), zero)
    weights = bootstrap_weights(deals, resamples, seed)
    samples = np.array([fit_elo(np.tensordot(w, points, 1), np.tensordot(w, count, 1), zero) for w in weights])
    low, high = np.nanpercentile(samples, [2.5, 97.5], axis=0)
    return [EloRating(label, float(estimate[i]), float(low[i]), float(high[i])) for i, label in enumerate(labels)]


def fit_placed_elo(points: np.ndarray, count: np.ndarray, fixed: np.ndarray, *, prior: float = 1.0) -> float:
    """The Elo of one new agent with ``points[j]`` of ``count[j]`` against players of fixed Elo ``fixed[j]``."""
    met = count > 0
    wins, games, fixed = points[met] + prior / 2, count[met] + prior, fixed[met]
    elo = float(np.mean(fixed))
    for _ in range(100):
        expected = 1 / (1 + np.exp(-(elo - fixed) / ELO_SCALE))
        gradient = float(np.sum(wins - games * expected)) / ELO_SCALE
        curvature = float(np.sum(games * expected * (1 - expected))) / ELO_SCALE**2
        step = gradient / curvature
        elo += step
        if abs(step) < 1e-7:
            break
    return elo


# -- building a ladder ------------------------------------------------------------------------------


def ladder_plan(spec: LadderSpec, games: int | None = None) -> Plan:
    """The ladder tournament: every lineup of the ladder's players, costly players on their first deals."""
    contestants = tuple(Contestant(r.label, r.spec) for r in spec.rungs)
    engine = card_envs.make_game(spec.game, **spec.config)
    schedule = Schedule.plan(len(contestants), engine.num_players, 1)
    caps_of = [r.deals for r in spec.rungs]
    target = spec.games if games is None else games
    per_deal = [len(schedule.seatings)] * len(schedule.lineups)
    # the fewest deals whose games (the costly lineups stopping at their caps) reach the target
    deals = 1
    while True:
        schedule = dataclasses.replace(schedule, deals=deals)
        caps = lineup_caps(schedule, [None if c is None else min(c, deals) for c in caps_of])
        if sum(cap * n for cap, n in zip(caps, per_deal, strict=True)) >= target:
            break
        deals = max(deals + 1, int(deals * 1.02))
    costly = [i for i, lineup in enumerate(schedule.lineups) if any(caps_of[a] is not None for a in lineup)]
    return make_plan(contestants, schedule, caps, alone=costly)


def build(spec: LadderSpec, *, games: int | None = None, backend: Backend | None = None,
          state: str | Path | None = None, progress: bool = True, resamples: int = 2000,
          command: str = "") -> dict[str, Any]:
    """Play (or resume) the ladder tournament and rate it; returns the ladder's JSON document."""
    backend = backend or Backend()
    return play_ladder(spec, ladder_plan(spec, games), backend, state, progress=progress, resamples=resamples,
                       command=command)[2]


def play_ladder(spec: LadderSpec, plan: Plan, backend: Backend, state: str | Path | None, *, progress: bool,
                resamples: int, command: str) -> tuple[Tournament, Any, dict[str, Any]]:
    """Play (or resume) ``plan`` and rate it: the tournament, its evaluation and the ladder's JSON document."""
    from agents.tournaments.stats import summarize

    engine = card_envs.make_game(spec.game, **spec.config)
    check_contestants(engine, plan.contestants)
    store = ChunkStore(state, fingerprint(spec.game, spec.config, plan, spec.seed))
    started = time.perf_counter()
    tournament = play_plan(spec.game, spec.config, plan, spec.seed, backend=backend, store=store, progress=progress)
    wall, runs = store.add_run(time.perf_counter() - started)
    tournament.command = command
    evaluation = summarize(tournament, resamples=resamples)
    elo = elo_ratings(tournament.records, spec.labels, tournament.deals_played, seed=spec.seed)
    # a killed build resumed from its --state folder spans several runs: their wall time, and this run's resumed
    timing = {"wall_time_s": round(wall, 1), "build_runs": runs, "chunks": len(plan.jobs),
              "chunks_resumed": store.resumed}
    return tournament, evaluation, ladder_document(spec, plan, evaluation, elo, timing, backend)


def ladder_document(spec: LadderSpec, plan: Plan, evaluation: Any, elo: Sequence[EloRating],
                    timing: Mapping[str, Any], backend: Backend) -> dict[str, Any]:
    from agents.tournaments.report import _finite

    players = []
    for rung, rating in zip(spec.rungs, elo, strict=True):
        summary = evaluation.agent(rung.label)
        skill = evaluation.rating(rung.label)
        players.append({
            "label": rung.label, "spec": rung.spec, "deals": rung.deals, "note": rung.note,
            "elo": rating.row(), "openskill": {"mu": skill.mu, "sigma": skill.sigma, "low": skill.low,
                                               "high": skill.high},
            "games": summary.games, "win_rate": dataclasses.asdict(summary.win_rate),
            "mean_return": dataclasses.asdict(summary.mean_return),
        })
    players.sort(key=lambda p: -p["elo"]["value"])
    return _finite({
        "format": "card_envs-ladder", "format_version": 1,
        "game": spec.game, "version": spec.version, "config": dict(spec.config), "seed": spec.seed,
        "players": players, "games": evaluation.games, "deals": evaluation.deals_played,
        "games_per_deal_full": evaluation.games_per_deal, "lineup_deals": dict(zip(
            [" ".join(plan.contestants[a].label for a in lineup) for lineup in plan.schedule.lineups],
            plan.caps, strict=True)),
        "command": evaluation.command, **timing, "backend": backend.describe(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, load average "
                   f"{os.getloadavg()[0]:.1f} at the end",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "calibration": calibration_rows(spec.game),
        "evaluation": dataclasses.asdict(evaluation),
    })


def calibration_rows(game: str) -> list[dict[str, Any]]:
    path = RESULTS / "ladder_calibration.json"
    if not path.exists():
        return []
    return [row for row in json.loads(path.read_text())["rows"] if row["game"] == game]


def build_time(document: Mapping[str, Any]) -> str:
    """The build's wall time in words: one run, or several runs of a killed and resumed build."""
    minutes = f"{document['wall_time_s'] / 60:.0f} min wall"
    runs = document.get("build_runs")  # absent in ladders built before resumed runs were counted
    if runs is None:
        return minutes
    if runs == 1:
        return minutes + " in one run"
    return (f"{minutes} over {runs} runs of the build (killed and resumed; the last took "
            f"{document['chunks_resumed']} of its {document['chunks']} chunks from the earlier runs)")


def ladder_markdown(document: Mapping[str, Any], evaluation_markdown: str = "",
                    exploitability: str | Path | None = None) -> str:
    d = document
    responses = best_responses(d["game"], exploitability)
    config = json.dumps(d["config"]) if d["config"] else "defaults"
    lines = [f"# Ladder: {d['game']} (version {d['version']})", "",
             "Made with (resumable: a rerun continues from the finished chunks in its `--state` folder):", "",
             "```bash", d["command"], "```", "",
             f"- game options: {config}; seed {d['seed']}; {d['games']:,} games over {d['deals']:,} deals "
             f"({d['games_per_deal_full']} games a deal with every lineup); {build_time(d)} "
             f"({d['backend']}; {d['machine']}), {d['date']}",
             "- place an agent on it: `card-envs ladder --game " + d["game"] + " --agent SPEC` "
             "(agents/tournaments/ladder.py)", "",
             "Elo: Bradley-Terry on every head-to-head comparison (each pair of seats in a game: placed better "
             "1, same 1/2, worse 0), random fixed at 0, 95% bootstrap interval over deals. openskill: "
             "Plackett-Luce mu with mu +- 1.96 sigma. Games: seats played (each game counts for every player in "
             "it). Costly search players play only the first deals (column `deals`). " + BEST_RESPONSE_NOTE, "",
             "| rank | player | Elo [95% CI] | openskill mu [95% CI] | games | deals | win rate [95% CI] | "
             f"{BEST_RESPONSE_COLUMN} | spec |",
             "|---|---|---|---|---|---|---|---|---|"]
    for rank, p in enumerate(d["players"], 1):
        e, s, w = p["elo"], p["openskill"], p["win_rate"]
        lines.append(f"| {rank} | {p['label']} | {e['value']:+.0f} [{e['low']:+.0f}, {e['high']:+.0f}] | "
                     f"{s['mu']:.2f} [{s['low']:.2f}, {s['high']:.2f}] | {p['games']:,} | "
                     f"{p['deals'] or d['deals']} | {w['value']:.3f} [{w['low']:.3f}, {w['high']:.3f}] | "
                     f"{best_response_cell(responses.get(p['spec']))} | `{p['spec']}` |")
    if d.get("calibration"):
        lines += ["", "## Search budgets", "",
                  "ISMCTS simulations a move against CPU time per searched move (`card-envs ladder calibrate`;"
                  " CPU time of the searching process, which load on the machine inflates less than wall time):",
                  "", "| sims | CPU ms/move | wall ms/move | searched moves | load |", "|---|---|---|---|---|"]
        for row in d["calibration"]:
            lines.append(f"| {row['sims']} | {row['cpu_ms']:.2f} | {row['wall_ms']:.2f} | {row['searched']} | "
                         f"{row['load']:.1f} |")
    if evaluation_markdown:
        body = evaluation_markdown.split("\n", 1)[1]  # without its title
        lines += ["", "## The tournament (agents.tournaments.evaluate's report)", "",
                  body.replace("\n## ", "\n### ")]
    return "\n".join(lines) + "\n"


def best_responses(game: str, path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Agent spec -> its row of ``benchmarks/results/exploitability.json`` (or ``path``) for ``game``: what a best
    response trained against it wins (``train.exploit``; a lower bound on its exploitability). Only finished rows;
    empty when there is no such file."""
    path = Path(path) if path else RESULTS / "exploitability.json"
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {row["agent"]: row for row in report.get("rows", []) if row.get("game") == game
            and row.get("status") == "done"}


def best_response_cell(row: Mapping[str, Any] | None) -> str:
    """A best response's win rate with its 95% interval, or a dash."""
    if row is None:
        return "-"
    w = row["win_rate"]
    return f"{w['value']:.3f} [{w['low']:.3f}, {w['high']:.3f}]"


#: the best-response column's header and what it means
BEST_RESPONSE_COLUMN = "best response wins [95% CI]"
BEST_RESPONSE_NOTE = ("Best response wins: the win rate of a best response trained against the player (fair share "
                      "1/seats), a lower bound on its exploitability (`card-envs exploit`; "
                      "[exploitability report](exploitability.md)); a dash: not measured.")


def compact_table(document: Mapping[str, Any], exploitability: str | Path | None = None) -> str:
    """The ladder as a small Markdown table (the README's), with the best responses' win rates where measured
    (``exploitability``: that report's JSON instead of the published one)."""
    d = document
    responses = best_responses(d["game"], exploitability)
    lines = [f"**{d['game']}** (ladder v{d['version']}, {d['games']:,} games, "
             f"[report](benchmarks/results/ladder_{d['game']}.md))", "",
             f"| player | Elo [95% CI] | games | {BEST_RESPONSE_COLUMN} |", "|---|---|---|---|"]
    for p in d["players"]:
        e = p["elo"]
        lines.append(f"| {p['label']} | {e['value']:+.0f} [{e['low']:+.0f}, {e['high']:+.0f}] | {p['games']:,} | "
                     f"{best_response_cell(responses.get(p['spec']))} |")
    return "\n".join(lines) + "\n"


def placed_table(document: Mapping[str, Any], zoo_dir: str | Path | None = None,
                 exploitability: str | Path | None = None) -> str:
    """The zoo agents placed on this ladder (``--record``; not among its players), one line each, or nothing."""
    from agents.players.zoo import entries

    responses = best_responses(document["game"], exploitability)
    lines = []
    for placed in entries(document["game"], zoo_dir=None if zoo_dir is None else Path(zoo_dir)):
        rating = placed.ladder or {}
        if rating.get("placed") and rating.get("version") == document["version"]:
            e = rating["elo"]
            response = responses.get(placed.spec)
            lines.append(f"- `{placed.spec}`: {e['value']:+.0f} [{e['low']:+.0f}, {e['high']:+.0f}] over "
                         f"{rating['games']:,} games (`{rating['source']}`, {rating['date'][:10]})"
                         + (f"; a best response wins {best_response_cell(response)}" if response else ""))
    if not lines:
        return ""
    return "\n".join(["Placed on it, the ladder's ratings fixed (zoo agents that are not among its players):", "",
                      *lines]) + "\n"


def plot_ladder(document: Mapping[str, Any], path: str) -> None:
    """Elo with 95% intervals (left), head-to-head scores (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.tournaments.report import draw_head_to_head, save_figure

    players = document["players"][::-1]
    labels = [p["label"] for p in document["players"]]
    n = len(labels)
    figure, (left, right) = plt.subplots(1, 2, figsize=(8 + 1.0 * n, 1.5 + 0.7 * max(n, 3)),
                                         gridspec_kw={"width_ratios": [1, 1.2]})
    y = np.arange(len(players))
    values = np.array([p["elo"]["value"] for p in players])
    errors = np.array([[v - p["elo"]["low"] for v, p in zip(values, players, strict=True)],
                       [p["elo"]["high"] - v for v, p in zip(values, players, strict=True)]])
    left.errorbar(values, y, xerr=errors, fmt="o", capsize=4)
    left.set_yticks(y, [p["label"] for p in players])
    left.set_xlabel("Elo, random = 0 (95% interval)")
    left.set_title(f"{document['game']} ladder v{document['version']}")
    left.grid(axis="x", alpha=0.3)
    draw_head_to_head(figure, right, labels, {(h["agent"], h["opponent"]): h["score"]["value"]
                                              for h in document["evaluation"]["head_to_head"]})
    figure.suptitle(f"{document['games']:,} games over {document['deals']:,} deals")
    save_figure(figure, path, dpi=100)


def write_ladder(document: Mapping[str, Any], evaluation: Any, prefix: str | Path, *,
                 published: bool = True) -> list[str]:
    """``prefix``.md/.json/.png, and (``published``: the game's ladder of record) each zoo player's rating into its
    manifest. A trial build (fewer games, or written elsewhere) leaves the manifests alone."""
    from agents.players.zoo import entry, set_ladder_rating
    from agents.tournaments.report import markdown

    prefix = str(prefix)
    write_atomically(prefix + ".json", json.dumps(document, indent=2) + "\n")
    write_atomically(prefix + ".md", ladder_markdown(document, markdown(evaluation) if evaluation else ""))
    plot_ladder(document, prefix + ".png")
    for player in [p for p in document["players"] if published and p["spec"].startswith("zoo:")]:
        set_ladder_rating(entry(player["spec"]), {
            "version": document["version"], "elo": player["elo"], "openskill": player["openskill"],
            "games": player["games"], "source": f"benchmarks/results/ladder_{document['game']}.json",
            "date": document["date"]})
    return [prefix + suffix for suffix in (".md", ".json", ".png")]


def refresh_report(game: str, folder: str | Path | None = None) -> Path:
    """Rewrite the head of the published ``ladder_<game>.md`` in ``folder`` (everything before its first section:
    the table, with the best responses of ``exploitability.json`` there) from its JSON; the sections after it
    (search budgets, the tournament's report) are kept as they are."""
    folder = Path(folder) if folder else RESULTS
    document = load_ladder(game, folder / f"ladder_{game}.json")
    path = folder / f"ladder_{game}.md"
    _, section, rest = path.read_text().partition("\n## ")
    head = ladder_markdown(document, exploitability=folder / "exploitability.json").partition("\n## ")[0]
    write_atomically(str(path), head + (section + rest if section else "\n"))
    return path


def load_ladder(game: str, path: str | Path | None = None) -> dict[str, Any]:
    """The published ladder of ``game`` (``benchmarks/results/ladder_<game>.json`` unless ``path``)."""
    path = Path(path) if path else RESULTS / f"ladder_{game}.json"
    if not path.exists():
        raise ConfigError(f"no published ladder for {game} at {path}; build it with card-envs ladder build "
                          f"--game {game}, or pass --ladder PATH")
    document = json.loads(path.read_text())
    if document.get("format") != "card_envs-ladder" or document.get("game") != game:
        raise ConfigError(f"{path} is not the ladder of {game}")
    return document


# -- placing a new agent ------------------------------------------------------------------------------


@dataclass
class Placement:
    """A new agent's place on a ladder."""

    game: str
    agent: str
    spec: str
    ladder_version: int
    seed: int
    games: int
    deals: int
    elo: EloRating
    openskill: dict[str, float]
    neighbours: dict[str, Any]
    head_to_head: list[dict[str, Any]]
    sprt: dict[str, Any] | None
    sprt_against: str | None = None
    command: str = ""
    failures: list[dict[str, Any]] = field(default_factory=list)


def place(game: str, agent: str, *, games: int = 2000, seed: int = 1, players: Sequence[str] | None = None,
          sprt_against: str | None = None, elo0: float = 0.0, elo1: float = 20.0, alpha: float = 0.05,
          beta: float = 0.05, backend: Backend | None = None, ladder_path: str | Path | None = None,
          progress: bool = False, resamples: int = 2000, label: str | None = None) -> Placement:
    """Play ``agent`` (a spec) on fresh deals against the ladder of ``game`` (its ratings fixed); see the module
    docstring. ``players``: only these ladder players (labels); ``sprt_against``: stop when decided."""
    from agents.tournaments.stats import SequentialTest, SprtSpec, summarize

    backend = backend or Backend()
    document = load_ladder(game, ladder_path)
    spec = ladder_of(game)
    if document["version"] != spec.version:
        raise ConfigError(f"the published {game} ladder is version {document['version']}, this code defines version "
                          f"{spec.version}: rebuild it (card-envs ladder build --game {game})")
    published = {p["label"]: p for p in document["players"]}
    chosen = list(players) if players else [r.label for r in spec.rungs]
    for name in chosen + ([sprt_against] if sprt_against else []):
        spec.rung(name)
    if sprt_against and sprt_against not in chosen:
        chosen.append(sprt_against)
    if sprt_against:  # the SPRT pair first: agents 0 and 1
        chosen.remove(sprt_against)
        chosen.insert(0, sprt_against)
    label = label or agent
    if label in chosen:
        label = f"new:{label}"
    contestants = (Contestant(label, agent),) + tuple(Contestant(n, spec.rung(n).spec) for n in chosen)
    engine = card_envs.make_game(game, **spec.config)
    check_contestants(engine, contestants)
    seats = engine.num_players
    lineups = tuple(lineup for lineup in make_lineups(len(contestants), seats) if lineup[0] == 0) \
        if len(contestants) > seats else make_lineups(len(contestants), seats)
    seatings = williams_design(seats)
    per_deal = len(lineups) * len(seatings)
    deals = max(1, -(-games // per_deal))
    schedule = Schedule(seats, lineups, seatings, deals)
    ladder_deals = document["deals"]
    member_caps = [None] + [None if spec.rung(n).deals is None or n == sprt_against
                            else max(1, math.ceil(deals * spec.rung(n).deals / ladder_deals)) for n in chosen]
    caps = lineup_caps(schedule, member_caps)
    if sprt_against:  # the sequential test reads whole deals, in order
        plan = make_plan(contestants, schedule, caps, by_deal=True)
    else:  # each search player's lineup on its own, in small chunks: the workers share its few costly games
        costly = [i for i, lineup in enumerate(lineups) if any(member_caps[a] is not None for a in lineup)]
        plan = make_plan(contestants, schedule, caps, alone=costly, alone_games=PLACING_GAMES)
    test = None
    if sprt_against:
        test = SequentialTest(SprtSpec(elo0, elo1, alpha, beta), schedule)
    tournament = play_plan(game, spec.config, plan, seed, backend=backend, progress=progress, sprt=test)
    played = tournament.deals_played
    evaluation = summarize(tournament, resamples=resamples)
    # Elo: the new agent's points against each ladder player, the ladder's Elos fixed
    points, count = pair_totals(tournament.records, max(played, 1), len(contestants))
    fixed = np.array([np.nan] + [published[n]["elo"]["value"] for n in chosen])
    value = fit_placed_elo(points.sum(axis=0)[0, 1:], count.sum(axis=0)[0, 1:], fixed[1:])
    weights = bootstrap_weights(max(played, 1), BOOTSTRAP, seed)
    samples = [fit_placed_elo(np.tensordot(w, points, 1)[0, 1:], np.tensordot(w, count, 1)[0, 1:], fixed[1:])
               for w in weights]
    low, high = np.percentile(samples, [2.5, 97.5])
    elo = EloRating(label, value, float(low), float(high))
    skill = placed_openskill(tournament.records, [published[n]["openskill"] for n in chosen], seed=seed)
    ladder_rows = sorted(document["players"], key=lambda p: -p["elo"]["value"])
    above = [p for p in ladder_rows if p["elo"]["value"] >= value]
    below = [p for p in ladder_rows if p["elo"]["value"] < value]
    neighbours = {"above": _brief(above[-1]) if above else None, "below": _brief(below[0]) if below else None}
    rows = []
    for n in chosen:
        pair = evaluation.pair(label, n)
        expected = 1 / (1 + 10 ** ((published[n]["elo"]["value"] - value) / 400))
        rows.append({"opponent": n, "ladder_elo": published[n]["elo"]["value"], "comparisons": pair.comparisons,
                     "score": dataclasses.asdict(pair.score), "expected": expected})
    rows.sort(key=lambda r: -r["ladder_elo"])
    return Placement(game, label, agent, spec.version, seed, evaluation.games, played, elo, skill, neighbours, rows,
                     dataclasses.asdict(tournament.sprt) if tournament.sprt else None, sprt_against,
                     failures=[dataclasses.asdict(f) for f in tournament.failures])


def _brief(player: Mapping[str, Any]) -> dict[str, Any]:
    return {"label": player["label"], "elo": player["elo"]}


def placed_openskill(records: Sequence[GameRecord], fixed: Sequence[Mapping[str, float]], *,
                     seed: int) -> dict[str, float]:
    """Agent 0's Plackett-Luce rating, game by game in a seeded order, the others' held at ``fixed`` (several
    seats of agent 0 in one game: the mean of their updates, as ``openskill_ratings`` does)."""
    from openskill.models import PlackettLuce

    from agents.tournaments.stats import placings

    model = PlackettLuce(tau=0.0)
    ladder = [model.rating(mu=f["mu"], sigma=f["sigma"]) for f in fixed]
    mine = model.rating()
    for index in np.random.default_rng(seed).permutation(len(records)):
        record = records[index]
        teams = [[mine if who == 0 else model.rating(mu=ladder[who - 1].mu, sigma=ladder[who - 1].sigma)]
                 for who in record.seating]
        updated = model.rate(teams, ranks=placings(record))
        seats = [team[0] for team, who in zip(updated, record.seating, strict=True) if who == 0]
        mine = model.rating(mu=float(np.mean([r.mu for r in seats])), sigma=float(np.mean([r.sigma for r in seats])))
    return {"mu": mine.mu, "sigma": mine.sigma, "low": mine.mu - 1.96 * mine.sigma,
            "high": mine.mu + 1.96 * mine.sigma}


def placement_text(p: Placement) -> str:
    e = p.elo
    lines = [f"{p.agent} on the {p.game} ladder (version {p.ladder_version}): {p.games:,} games over {p.deals:,} "
             f"deals, seed {p.seed}", "",
             f"- Elo (random = 0): **{e.value:+.0f} [{e.low:+.0f}, {e.high:+.0f}]** (95%, bootstrap over deals; "
             "the ladder's Elos fixed)",
             f"- openskill mu: {p.openskill['mu']:.2f} [{p.openskill['low']:.2f}, {p.openskill['high']:.2f}]"]
    for side in ("above", "below"):
        n = p.neighbours[side]
        if n:
            lines.append(f"- nearest {side}: {n['label']} {n['elo']['value']:+.0f} "
                         f"[{n['elo']['low']:+.0f}, {n['elo']['high']:+.0f}]")
        else:
            lines.append(f"- nearest {side}: none ({'top' if side == 'above' else 'bottom'} of the ladder)")
    if p.sprt:
        t = p.sprt
        meaning = {"H1": f"stronger than the opponent by at least {t['elo1']:g} Elo (H1 accepted)",
                   "H0": f"not stronger than the opponent by {t['elo1']:g} Elo (H0: elo <= {t['elo0']:g} accepted)",
                   "inconclusive": "inconclusive at the game cap", "stopped": "stopped by an agent failure"}
        lines.append(f"- SPRT against {p.sprt_against}: {meaning[t['verdict']]} after "
                     f"{t['deals']} deals, LLR {t['llr']:.2f} in [{t['lower']:.2f}, {t['upper']:.2f}]")
    lines += ["", "| vs ladder player | ladder Elo | comparisons | score [95% CI] | expected from the Elos |",
              "|---|---|---|---|---|"]
    for r in p.head_to_head:
        s = r["score"]
        lines.append(f"| {r['opponent']} | {r['ladder_elo']:+.0f} | {r['comparisons']:,} | {s['value']:.3f} "
                     f"[{s['low']:.3f}, {s['high']:.3f}] | {r['expected']:.3f} |")
    if p.failures:
        lines += ["", f"{len(p.failures)} lineup(s) stopped by an agent failure: "
                  + "; ".join(f"{f['label']} at deal {f['deal']}: {f['reason']}" for f in p.failures)]
    return "\n".join(lines) + "\n"


# -- calibrating the search budgets -----------------------------------------------------------------


def calibrate(game: str, budgets: Sequence[int], *, moves: int = 200, seed: int = 0) -> list[dict[str, Any]]:
    """CPU and wall ms per searched move of ``ismcts:sims=<budget>,<GAME_OPTIONS>`` against a field of random
    and the strongest rule-based player (at least ``moves`` searched moves per budget)."""
    from agents.players.ismcts import ISMCTSAgent
    from agents.players.registry import make_agent, strongest_heuristic
    from agents.tournaments.match import play_game

    spec = ladder_of(game)
    engine = card_envs.make_game(game, **spec.config)
    options = GAME_OPTIONS.get(game, "")
    rows = []
    for sims in budgets:
        searcher = make_agent(game, f"ismcts:sims={sims}" + (f",{options}" if options else ""), seed)
        assert isinstance(searcher, ISMCTSAgent)
        deal = 0
        while searcher.stats.searched < moves:
            seat = deal % engine.num_players
            field_spec = "random" if (deal // engine.num_players) % 2 else strongest_heuristic(game)
            lineup = [searcher if s == seat else make_agent(game, field_spec, seed + s)
                      for s in range(engine.num_players)]
            play_game(engine, lineup, seed * 1_000_003 + deal // engine.num_players)
            deal += 1
        stats = searcher.stats
        rows.append({"game": game, "sims": sims, "cpu_ms": stats.cpu_ms_per_search, "wall_ms": stats.ms_per_search,
                     "searched": stats.searched, "sims_per_move": stats.simulations / stats.searched,
                     "load": os.getloadavg()[0]})
        print(f"{game} sims={sims}: {stats.cpu_ms_per_search:.2f} CPU ms / {stats.ms_per_search:.2f} wall ms a "
              f"searched move over {stats.searched} moves (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    return rows


def sims_for(rows: Sequence[Mapping[str, Any]], ms: float) -> int:
    """The budget that costs ``ms`` CPU ms a move, by a least-squares line through the calibration rows."""
    sims = np.array([r["sims"] for r in rows], float)
    cost = np.array([r["cpu_ms"] for r in rows], float)
    slope, intercept = np.polyfit(sims, cost, 1)
    return max(1, int(round((ms - intercept) / slope)))


def write_calibration(rows: Sequence[dict[str, Any]], command: str) -> None:
    path = RESULTS / "ladder_calibration.json"
    old = json.loads(path.read_text())["rows"] if path.exists() else []
    games = {r["game"] for r in rows}
    merged = [r for r in old if r["game"] not in games] + [{**r, "command": command} for r in rows]
    write_atomically(str(path), json.dumps({"rows": merged}, indent=2) + "\n")
    lines = ["# Ladder search budgets: ISMCTS cost per move", "",
             "`card-envs ladder calibrate`: CPU (and wall) milliseconds per searched move of the ladder's "
             "ISMCTS options (`ismcts.GAME_OPTIONS`) at each simulation budget, against a field of random "
             "and the strongest rule-based player; the budgets of about 1, 10 and 100 ms a move come from a "
             "least-squares line through these points (`agents/tournaments/ladder.py`, `CALIBRATED_SIMS`). The ladder "
             "players use the simulation counts, not times, so they are deterministic.", "",
             "| game | sims | CPU ms/move | wall ms/move | searched moves | sims/move | load | command |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(merged, key=lambda r: (r["game"], r["sims"])):
        lines.append(f"| {r['game']} | {r['sims']} | {r['cpu_ms']:.2f} | {r['wall_ms']:.2f} | {r['searched']} | "
                     f"{r['sims_per_move']:.1f} | {r['load']:.1f} | `{r['command']}` |")
    lines += ["", "| game | ~1 ms | ~10 ms | ~100 ms |", "|---|---|---|---|"]
    for game in sorted({r["game"] for r in merged}):
        game_rows = [r for r in merged if r["game"] == game]
        lines.append(f"| {game} | " + " | ".join(f"sims={sims_for(game_rows, ms)}" for ms in SEARCH_MS) + " |")
    write_atomically(str(RESULTS / "ladder_calibration.md"), "\n".join(lines) + "\n")


# -- command line ------------------------------------------------------------------------------------


def _backend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=positive_int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where chunks of deals run: local processes (default) or ray; results are the same")
    parser.add_argument("--address", help="--backend ray: the cluster to join (default: start Ray here)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


EXAMPLES = """examples:
  card-envs ladder show
  card-envs ladder --game bloodlines_v0 --agent zoo:bloodlines_v0/jax_ppo --games 600
"""


@command_line("python -m agents.ladder")
def main(argv: Sequence[str] | None, prog: str) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = f"{prog} " + shlex.join(argv)
    if argv and argv[0] in ("build", "calibrate", "show"):
        action, argv = argv[0], argv[1:]
    else:
        action = "place"
    parser = CommandParser(prog=f"{prog}{'' if action == 'place' else ' ' + action}", description=__doc__,
                           epilog=EXAMPLES)
    parser.add_argument("--game", required=action != "show", choices=list(LADDERS))
    if action == "place":
        return _place_command(parser, argv, command)
    if action == "build":
        return _build_command(parser, argv, command)
    if action == "calibrate":
        parser.add_argument("--budgets", nargs="+", type=positive_int, required=True, help="simulation budgets to time")
        parser.add_argument("--moves", type=positive_int, default=200, help="searched moves per budget (default 200)")
        args = parser.parse_args(argv)
        rows = calibrate(args.game, args.budgets, moves=args.moves)
        write_calibration(rows, command)
        print(" ".join(f"~{ms} ms: sims={sims_for(rows, ms)}" for ms in SEARCH_MS))
        return 0
    parser.add_argument("--ladder", help="a ladder JSON (default benchmarks/results/ladder_<game>.json)")
    args = parser.parse_args(argv)
    for game in [args.game] if args.game else list(LADDERS):
        try:
            document = load_ladder(game, args.ladder)
            print(compact_table(document))
            if placed := placed_table(document):
                print(placed)
        except ConfigError as error:
            if args.ladder or args.game:  # the ladder asked for by name must be there
                raise
            print(f"{game}: {error}\n")
    return 0


def _build_command(parser: argparse.ArgumentParser, argv: list[str], command: str) -> int:
    parser.add_argument("--games", type=positive_int, help="games in all (default: the ladder's, >= 10,000)")
    parser.add_argument("--state", help="folder of finished chunks, to resume (default runs/ladder/<game>-v<N>)")
    parser.add_argument("--out", help="prefix of the .md/.json/.png (default benchmarks/results/ladder_<game>)")
    parser.add_argument("--resamples", type=positive_int, default=2000)
    parser.add_argument("--plan", action="store_true", help="print the plan (games per player, jobs) and stop")
    _backend_arguments(parser)
    args = parser.parse_args(argv)
    spec = ladder_of(args.game)
    backend = Backend(args.backend, args.workers, args.address)
    state = args.state or f"runs/ladder/{spec.game}-v{spec.version}" + (f"-{args.games}" if args.games else "")
    plan = ladder_plan(spec, args.games)
    print(f"{spec.game} ladder v{spec.version}: {len(plan.contestants)} players, {plan.schedule.deals} deals, "
          f"{plan.games:,} games in {len(plan.jobs)} jobs; chunks in {state}; {backend.describe()}", file=sys.stderr)
    if args.plan:
        seatings = len(plan.schedule.seatings)
        for index, rung in enumerate(spec.rungs):
            games = sum(cap * seatings for lineup, cap in zip(plan.schedule.lineups, plan.caps, strict=True)
                        if index in lineup)
            print(f"{rung.label:>20}: {games:>6,} games on {rung.deals or plan.schedule.deals} deals  ({rung.spec})")
        return 0
    tournament, evaluation, document = play_ladder(spec, plan, backend, state, progress=not args.quiet,
                                                   resamples=args.resamples, command=command)
    default_prefix = RESULTS / f"ladder_{spec.game}"
    prefix = Path(args.out) if args.out else default_prefix
    of_record = args.games is None and prefix.resolve() == default_prefix.resolve()
    paths = write_ladder(document, evaluation, prefix, published=of_record)
    print(ladder_markdown(document).split("\n## ")[0])
    if not of_record:
        print("a trial build (--games or --out): the zoo manifests' ladder ratings are left as they are",
              file=sys.stderr)
    print(f"wrote {', '.join(paths)}; {len(tournament.records):,} games, {build_time(document)}", file=sys.stderr)
    return 1 if tournament.failures else 0


def _place_command(parser: argparse.ArgumentParser, argv: list[str], command: str) -> int:
    parser.add_argument("--agent", required=True, help="the agent spec to place (as in agents.players.registry)")
    parser.add_argument("--games", type=positive_int, default=2000, help="games in all (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="deals and agent randomness (default 1; the ladder used 0)")
    parser.add_argument("--players", nargs="+", metavar="LABEL", help="only these ladder players (default: all)")
    parser.add_argument("--sprt", metavar="LABEL", help="stop when 'stronger than LABEL' is decided (GSPRT)")
    parser.add_argument("--elo0", type=float, default=0.0, help="SPRT H0: elo <= ELO0 (default 0)")
    parser.add_argument("--elo1", type=float, default=20.0, help="SPRT H1: elo >= ELO1 (default 20)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--ladder", help="a ladder JSON (default benchmarks/results/ladder_<game>.json)")
    parser.add_argument("--out", help="also write the placement as JSON to this path")
    parser.add_argument("--record", action="store_true",
                        help="a zoo: agent placed on the whole ladder: write its rating into its manifest")
    _backend_arguments(parser)
    args = parser.parse_args(argv)
    if args.record and (not args.agent.startswith("zoo:") or args.players or args.sprt or args.ladder):
        parser.error("--record needs a zoo: agent placed against every ladder player of the published ladder "
                     "(no --players, --sprt or --ladder)")
    placement = place(args.game, args.agent, games=args.games, seed=args.seed, players=args.players,
                      sprt_against=args.sprt, elo0=args.elo0, elo1=args.elo1, alpha=args.alpha, beta=args.beta,
                      backend=Backend(args.backend, args.workers, args.address), ladder_path=args.ladder,
                      progress=not args.quiet)
    placement.command = command
    sys.stdout.write(placement_text(placement))
    if args.out:
        write_atomically(args.out, json.dumps(dataclasses.asdict(placement), indent=2) + "\n")
    if args.record and not placement.failures:
        record_placement(placement)
    return 1 if placement.failures else 0


def record_placement(placement: Placement, zoo_dir: str | Path | None = None) -> None:
    """Write a ``zoo:`` agent's placement into its manifest: the same fields as a ladder member's rating, marked
    ``placed`` (rated against the ladder's fixed ratings, not a member of the ladder's tournament)."""
    from agents.players.zoo import entry, set_ladder_rating

    e = placement.elo
    found = entry(placement.spec) if zoo_dir is None else entry(placement.spec, zoo_dir=zoo_dir)
    set_ladder_rating(found, {
        "version": placement.ladder_version, "placed": True, "seed": placement.seed,
        "elo": {"value": e.value, "low": e.low, "high": e.high}, "openskill": placement.openskill,
        "games": placement.games, "source": placement.command,
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime())})


if __name__ == "__main__":
    raise SystemExit(main())
