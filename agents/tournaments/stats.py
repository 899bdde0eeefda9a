"""Statistics of a tournament (:mod:`agents.tournaments.evaluate`): CIs, head-to-head, ratings, SPRT, variance.

====================  =============================================================================
statistic             how
====================  =============================================================================
win rate              share of an agent's seats among the winners (shared wins count), 95% Wilson
                      interval over those seats (``agents.tournaments.match.wilson``)
mean return, score    over the agent's seats; 95% BCa bootstrap interval resampling whole *deals*
                      (scipy.stats.bootstrap), so the correlation inside a deal is respected. Score:
                      the game's own points (``state.scores``), where the game keeps them
head-to-head          row agent against column agent, over every pair of seats they held in one game:
                      1 if the row placed better, 1/2 on the same placing, 0 if worse. Placing: winners
                      first, then by return. Bootstrap over deals as above
ratings               openskill's Plackett-Luce model (tau = 0: the agents do not change), every game a
                      ranking of its seats, games in a seeded random order; 95% interval mu +- 1.96 sigma
variance removed      design effect ``m * Var(per-deal mean) / Var(per-game value)`` (``m``: the
                      agent's, or pair's, games per deal; a game's value: the mean over the agent's
                      seats, or the pair's seat pairs): the variance of the duplicate estimate relative
                      to plain rotation with a fresh deal per game; 1 - design effect of it was removed
SPRT                  fishtest's generalized SPRT (Van den Bergh): the per-deal head-to-head score of
                      agent 1 vs agent 2 (pentanomial for two seats), empirical distribution on the
                      lattice of possible deal scores (unseen ones regularized), MLE under logistic
                      elo0/elo1, Wald bounds from alpha/beta. Exact for that multinomial, so with the
                      finer lattices of 3-6 seats it is conservative: it takes more deals than a
                      normal approximation would
====================  =============================================================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from openskill.models import PlackettLuce
from scipy.optimize import brentq
from scipy.stats import bootstrap

from agents.tournaments.match import wilson
from agents.tournaments.records import AgentFailure, GameRecord, Interval, Schedule, SprtResult, Tournament
from card_envs.core.errors import ConfigError

# -- one game ------------------------------------------------------------------------------------


def placings(record: GameRecord) -> list[int]:
    """1 = best; equal results share a placing. Winners first, then by return."""
    winners = set(record.winners)
    keys = [(seat in winners, value) for seat, value in enumerate(record.returns)]
    return [1 + sum(other > key for other in keys) for key in keys]


def pair_points(record: GameRecord, ranks: Sequence[int] | None = None) -> list[tuple[int, int, float]]:
    """(agent a, agent b, a's point) for every pair of seats held by different agents (a < b)."""
    ranks = placings(record) if ranks is None else ranks
    seating = record.seating
    points = []
    for i in range(len(seating)):
        for j in range(len(seating)):
            a, b = seating[i], seating[j]
            if a < b:
                points.append((a, b, 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0))
    return points


# -- per-deal tables -----------------------------------------------------------------------------


class GameMoments:
    """Per-deal sums of a per-game value (one per game and agent, or pair), for the design effect."""

    def __init__(self, deals: int, shape: tuple[int, ...]) -> None:
        self.games = np.zeros((deals, *shape))
        self.sums = np.zeros((deals, *shape))
        self.squares = np.zeros(shape)

    def add(self, deal: int, index: tuple[int, ...], value: float) -> None:
        self.games[(deal, *index)] += 1
        self.sums[(deal, *index)] += value
        self.squares[index] += value * value

    def design_effect(self, index: tuple[int, ...]) -> float | None:
        return design_effect(self.sums[(slice(None), *index)], self.games[(slice(None), *index)],
                             float(self.squares[index]))


@dataclass
class DealTable:
    """Sums per (deal, agent) and (deal, agent, agent): everything the intervals resample."""

    seats: np.ndarray  #: [deal, agent] seats held
    wins: np.ndarray
    returns: np.ndarray
    scores: np.ndarray
    pair_points: np.ndarray  #: [deal, a, b] a's head-to-head points against b (a < b)
    pair_count: np.ndarray
    game_returns: GameMoments  #: per game: the mean return of the agent's seats
    game_wins: GameMoments
    game_points: GameMoments  #: per game: a's mean point against b
    has_scores: bool

    @classmethod
    def of(cls, records: Sequence[GameRecord], deals: int, agents: int) -> DealTable:
        shape = (deals, agents)
        table = cls(np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape),
                    np.zeros((deals, agents, agents)), np.zeros((deals, agents, agents)),
                    GameMoments(deals, (agents,)), GameMoments(deals, (agents,)),
                    GameMoments(deals, (agents, agents)), all(r.scores is not None for r in records) and bool(records))
        for record in records:
            d = record.deal
            winners = set(record.winners)
            for seat, agent in enumerate(record.seating):
                table.seats[d, agent] += 1
                table.wins[d, agent] += seat in winners
                table.returns[d, agent] += record.returns[seat]
                if table.has_scores:
                    table.scores[d, agent] += record.scores[seat]
            for agent in set(record.seating):
                mine = [seat for seat, who in enumerate(record.seating) if who == agent]
                table.game_returns.add(d, (agent,), sum(record.returns[seat] for seat in mine) / len(mine))
                table.game_wins.add(d, (agent,), sum(seat in winners for seat in mine) / len(mine))
            points: dict[tuple[int, int], list[float]] = {}
            for a, b, point in pair_points(record):
                table.pair_points[d, a, b] += point
                table.pair_count[d, a, b] += 1
                points.setdefault((a, b), []).append(point)
            for pair, values in points.items():
                table.game_points.add(d, pair, sum(values) / len(values))
        return table


def bootstrap_ratio(sums: np.ndarray, counts: np.ndarray, *, seed: int, resamples: int) -> Interval:
    """``sum(sums) / sum(counts)`` with a 95% BCa bootstrap interval over the rows (deals)."""
    used = counts > 0
    sums, counts = sums[used], counts[used]
    value = float(sums.sum() / counts.sum())
    if len(sums) < 2 or np.allclose(sums / counts, value):
        return Interval(value, value, value)

    def ratio(s: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        return s.sum(axis=axis) / c.sum(axis=axis)

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = bootstrap((sums, counts), ratio, paired=True, vectorized=True, n_resamples=resamples,
                           method=method, rng=np.random.default_rng(seed)).confidence_interval
        if np.isfinite(ci.low) and np.isfinite(ci.high):
            return Interval(value, float(ci.low), float(ci.high))
    return Interval(value, value, value)


def design_effect(deal_sums: np.ndarray, deal_games: np.ndarray, total_squares: float) -> float | None:
    """``m * Var(per-deal mean) / Var(per-game value)`` (``m``: games per deal): the variance of the
    duplicate-deal mean relative to independent games; < 1 when replaying deals cancels their luck."""
    used = deal_games > 0
    sums, games = deal_sums[used], deal_games[used]
    n = games.sum()
    if len(sums) < 2 or n < 2:
        return None
    mean = sums.sum() / n
    per_game_var = (total_squares - n * mean**2) / (n - 1)
    if per_game_var <= 1e-12:
        return None
    return float(games.mean() * np.var(sums / games, ddof=1) / per_game_var)


# -- ratings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rating:
    label: str
    mu: float
    sigma: float
    low: float  #: mu - 1.96 sigma
    high: float
    ordinal: float  #: openskill's conservative estimate mu - 3 sigma


def openskill_ratings(records: Sequence[GameRecord], labels: Sequence[str], *, seed: int) -> list[Rating]:
    """Plackett-Luce ratings from every game (best first). The updates are online, so the games are
    taken in a seeded random order (no lineup always last). An agent holding several seats of one
    game (fewer agents than seats) takes the mean of its seats' updated ratings."""
    model = PlackettLuce(tau=0.0)
    current = [model.rating(name=label) for label in labels]
    for index in np.random.default_rng(seed).permutation(len(records)):
        record = records[index]
        teams = [[current[agent]] for agent in record.seating]
        updated = model.rate(teams, ranks=placings(record))
        for agent in set(record.seating):
            seats = [team[0] for team, who in zip(updated, record.seating, strict=True) if who == agent]
            current[agent] = model.rating(mu=float(np.mean([r.mu for r in seats])),
                                          sigma=float(np.mean([r.sigma for r in seats])), name=labels[agent])
    ratings = [Rating(label, r.mu, r.sigma, r.mu - 1.96 * r.sigma, r.mu + 1.96 * r.sigma, r.ordinal())
               for label, r in zip(labels, current, strict=True)]
    return sorted(ratings, key=lambda r: -r.mu)


# -- sequential test -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SprtSpec:
    """H0: elo <= elo0, H1: elo >= elo1 (logistic elo of agent 1 over agent 2), error rates alpha/beta."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ConfigError(f"SPRT needs elo0 < elo1, got elo0={self.elo0}, elo1={self.elo1}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ConfigError(f"SPRT {name} must be in (0, 0.5), got {getattr(self, name)}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper) log-likelihood-ratio bounds."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)


def logistic_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def logistic_elo(score: float) -> float:
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def _mle_with_mean(values: np.ndarray, probs: np.ndarray, mean: float) -> np.ndarray:
    """The distribution on ``values`` closest (max likelihood) to ``probs`` with expectation ``mean``:
    ``probs / (1 + x (values - mean))``, ``x`` the root of the secular equation."""
    shifted = values - mean
    low, high = -1 / shifted.max(), -1 / shifted.min()
    margin = 1e-12 * (high - low)

    def secular(x: float) -> float:
        return float(np.sum(probs * shifted / (1 + x * shifted)))

    x = brentq(secular, low + margin, high - margin, xtol=1e-14)
    fitted = probs / (1 + x * shifted)
    return fitted / fitted.sum()


def gsprt_llr(counts: np.ndarray, values: np.ndarray, score0: float, score1: float) -> float:
    """Generalized log-likelihood ratio of H1 (mean ``score1``) vs H0 (``score0``) for outcome counts
    on ``values`` (0..1), empty outcomes regularized to 1e-3 as fishtest does."""
    counts = np.where(counts > 0, counts, 1e-3)
    total = counts.sum()
    probs = counts / total
    fitted0 = _mle_with_mean(values, probs, score0)
    fitted1 = _mle_with_mean(values, probs, score1)
    return float(total * np.sum(probs * np.log(fitted1 / fitted0)))


class SequentialTest:
    """Feeds whole deals, in order, to the GSPRT; says at which deal it decided."""

    def __init__(self, spec: SprtSpec, schedule: Schedule) -> None:
        self.spec = spec
        pairs = sum(seating.count(0) * seating.count(1)
                    for lineup in range(len(schedule.lineups)) for permutation in range(len(schedule.seatings))
                    for seating in [schedule.seating(lineup, permutation)])
        self.steps = 2 * pairs  #: a deal's score is k / steps, k = 0..steps
        self.values = np.arange(self.steps + 1) / self.steps
        self.counts = np.zeros(self.steps + 1)
        self.games_per_deal = schedule.games_per_deal
        self.verdict = "inconclusive"
        self.llr = 0.0
        self.deals = 0

    def consume(self, records: Sequence[GameRecord], stopped: dict[int, int]) -> int | None:
        """Add the deals of ``records`` (whole deals, in order); the deal of the decision, or None."""
        by_deal: dict[int, list[GameRecord]] = {}
        for record in records:
            by_deal.setdefault(record.deal, []).append(record)
        failed_at = min(stopped.values(), default=None)  # a stopped lineup ends the test at that deal
        lower, upper = self.spec.bounds
        for deal in sorted(by_deal):
            if failed_at is not None and deal >= failed_at:
                break
            # agent 0's points against agent 1 (other pairs of a larger field, as when placing on a ladder, aside)
            points = sum(point for r in by_deal[deal] for a, b, point in pair_points(r) if (a, b) == (0, 1))
            self.counts[int(round(2 * points))] += 1
            self.deals += 1
            self.llr = gsprt_llr(self.counts, self.values, logistic_score(self.spec.elo0),
                                 logistic_score(self.spec.elo1))
            if self.llr >= upper or self.llr <= lower:
                self.verdict = "H1" if self.llr >= upper else "H0"
                return deal
        if failed_at is not None:
            self.verdict = "stopped"
            return failed_at - 1
        return None

    def result(self) -> SprtResult:
        lower, upper = self.spec.bounds
        n = self.counts.sum()
        if n:
            mean = float(self.counts @ self.values / n)
            spread = math.sqrt(float(self.counts @ (self.values - mean) ** 2) / max(n - 1, 1) / n)
            elo = Interval(logistic_elo(mean), logistic_elo(mean - 1.96 * spread), logistic_elo(mean + 1.96 * spread))
        else:
            mean, elo = 0.5, Interval(0.0, -math.inf, math.inf)
        return SprtResult(self.spec.elo0, self.spec.elo1, self.spec.alpha, self.spec.beta, self.verdict,
                          self.llr, lower, upper, self.deals, self.deals * self.games_per_deal, mean, elo,
                          [int(c) for c in self.counts])


# -- the summary ---------------------------------------------------------------------------------


@dataclass
class AgentSummary:
    label: str
    spec: str
    games: int  #: seats held (games played, counting each copy)
    wins: int
    shared_wins: int
    win_rate: Interval  #: Wilson
    mean_return: Interval  #: bootstrap over deals
    mean_score: Interval | None
    return_design_effect: float | None
    win_design_effect: float | None


@dataclass
class HeadToHead:
    agent: str
    opponent: str
    score: Interval  #: agent's head-to-head score (win 1, same placing 1/2)
    comparisons: int
    design_effect: float | None  #: of the score, duplicate deals vs plain rotation


@dataclass
class SeatSummary:
    seat: int
    games: int
    win_rate: Interval
    mean_return: float


@dataclass
class Evaluation:
    """Everything the report shows (JSON: ``dataclasses.asdict``)."""

    game: str
    config: dict[str, Any]
    seats: int
    seed: int
    workers: int
    command: str
    agents: list[AgentSummary]
    ratings: list[Rating]
    head_to_head: list[HeadToHead]
    seat_stats: list[SeatSummary]
    lineups: list[list[str]]
    seatings: list[list[int]]
    deals_planned: int
    deals_played: int
    games: int
    games_per_deal: int
    same_start_per_deal: bool  #: every game of a deal started from the identical state
    distinct_deals: int  #: different starting states over the deals
    truncated_games: int
    mean_decisions: float
    sprt: SprtResult | None
    failures: list[AgentFailure] = field(default_factory=list)
    stopped_lineups: dict[str, int] = field(default_factory=dict)  #: lineup -> deals it completed

    def agent(self, label: str) -> AgentSummary:
        return next(a for a in self.agents if a.label == label)

    def pair(self, agent: str, opponent: str) -> HeadToHead:
        return next(h for h in self.head_to_head if h.agent == agent and h.opponent == opponent)

    def rating(self, label: str) -> Rating:
        return next(r for r in self.ratings if r.label == label)


def summarize(tournament: Tournament, *, resamples: int = 2000) -> Evaluation:
    """Compute every statistic of a tournament (deterministic: resampling is seeded from its seed)."""
    labels = tournament.labels
    records = tournament.records
    deals = max(tournament.deals_played, 1)
    table = DealTable.of(records, deals, len(labels))
    agents = [_agent_summary(tournament, table, k, resamples) for k in range(len(labels))]
    head_to_head = []
    for a in range(len(labels)):
        for b in range(a + 1, len(labels)):
            if table.pair_count[:, a, b].sum() == 0:
                continue
            score = bootstrap_ratio(table.pair_points[:, a, b], table.pair_count[:, a, b],
                                    seed=tournament.seed + 1000 + a * len(labels) + b, resamples=resamples)
            comparisons = int(table.pair_count[:, a, b].sum())
            effect = table.game_points.design_effect((a, b))
            head_to_head.append(HeadToHead(labels[a], labels[b], score, comparisons, effect))
            head_to_head.append(HeadToHead(labels[b], labels[a], score.flipped(), comparisons, effect))
    starts: dict[int, set[str]] = {}
    for record in records:
        starts.setdefault(record.deal, set()).add(record.start)
    schedule = tournament.schedule
    return Evaluation(
        game=tournament.game, config=tournament.config, seats=tournament.seats, seed=tournament.seed,
        workers=tournament.workers, command=tournament.command, agents=agents,
        ratings=openskill_ratings(records, labels, seed=tournament.seed), head_to_head=head_to_head,
        seat_stats=_seat_stats(records, tournament.seats),
        lineups=[[labels[a] for a in lineup] for lineup in schedule.lineups],
        seatings=[list(row) for row in schedule.seatings], deals_planned=schedule.deals,
        deals_played=tournament.deals_played, games=len(records), games_per_deal=schedule.games_per_deal,
        same_start_per_deal=all(len(s) == 1 for s in starts.values()),
        distinct_deals=len({s for group in starts.values() for s in group}),
        truncated_games=sum(r.truncated for r in records),
        mean_decisions=float(np.mean([r.decisions for r in records])) if records else 0.0,
        sprt=tournament.sprt, failures=list(tournament.failures),
        stopped_lineups={" ".join(labels[a] for a in schedule.lineups[f.lineup]): f.deal
                         for f in tournament.failures},
    )


def _agent_summary(tournament: Tournament, table: DealTable, k: int, resamples: int) -> AgentSummary:
    contestant = tournament.contestants[k]
    seats = int(table.seats[:, k].sum())
    wins = int(table.wins[:, k].sum())
    shared = sum(1 for r in tournament.records for seat, agent in enumerate(r.seating)
                 if agent == k and seat in r.winners and len(r.winners) > 1)
    low, high = wilson(wins, seats)
    seed = tournament.seed + 10 * k
    score = (bootstrap_ratio(table.scores[:, k], table.seats[:, k], seed=seed + 1, resamples=resamples)
             if table.has_scores and seats else None)
    return AgentSummary(
        label=contestant.label, spec=contestant.spec, games=seats, wins=wins, shared_wins=shared,
        win_rate=Interval(wins / seats if seats else 0.0, low, high),
        mean_return=(bootstrap_ratio(table.returns[:, k], table.seats[:, k], seed=seed, resamples=resamples)
                     if seats else Interval(0.0, 0.0, 0.0)),
        mean_score=score,
        return_design_effect=table.game_returns.design_effect((k,)),
        win_design_effect=table.game_wins.design_effect((k,)),
    )


def _seat_stats(records: Sequence[GameRecord], seats: int) -> list[SeatSummary]:
    stats = []
    for seat in range(seats):
        games = len(records)
        wins = sum(seat in r.winners for r in records)
        low, high = wilson(wins, games)
        mean = float(np.mean([r.returns[seat] for r in records])) if records else 0.0
        stats.append(SeatSummary(seat, games, Interval(wins / games if games else 0.0, low, high), mean))
    return stats
