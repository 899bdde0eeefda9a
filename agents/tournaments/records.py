"""What a tournament is made of, below both the harness that plays it and the statistics that read it.

Who plays (:class:`Contestant`, built through :func:`agents.players.registry.make_agent`, and checked by
:func:`check_contestants` before any game), the design (:class:`Schedule`: lineups x Williams seatings x
deals, with their seeds), what each game leaves (:class:`GameRecord`, :class:`AgentFailure`) and the raw
result (:class:`Tournament`, with its sequential test's :class:`SprtResult`). ``agents.tournaments.evaluate``
plays tournaments, ``agents.tournaments.stats`` summarizes them and ``agents.tournaments.ladder`` builds on
both; none of them is imported here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from agents.players.base import Agent
from agents.players.registry import make_agent
from agents.tournaments.backends import Backend
from card_envs.core.engine import Game
from card_envs.core.errors import CardEnvsError, ConfigError

# -- who plays ---------------------------------------------------------------------------------


class AgentSpecError(ConfigError):
    """An agent spec that cannot be built for this game (unknown name, wrong or broken checkpoint)."""


@dataclass(frozen=True)
class Contestant:
    """One agent of a tournament: a table ``label`` and how to build it.

    ``spec`` goes through :func:`agents.players.registry.make_agent`; the Python API may instead pass a
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
        check_agent(game, contestant)


def check_agent(game: Game, contestant: Contestant) -> None:
    """Build the agent and seat it at ``game``'s table (as every game will): an unknown spec, a missing or foreign
    checkpoint, a model that cannot read this table's views, all fail here, before any game is played."""
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


# -- what a game leaves -------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def flipped(self) -> Interval:
        """``1 - x`` (the opponent's side of a head-to-head score)."""
        return Interval(1 - self.value, 1 - self.high, 1 - self.low)


@dataclass
class SprtResult:
    elo0: float
    elo1: float
    alpha: float
    beta: float
    verdict: str  #: "H1" (agent 1 stronger by elo1), "H0", "inconclusive" (game cap) or "stopped" (failure)
    llr: float
    lower: float
    upper: float
    deals: int
    games: int
    score: float  #: agent 1's mean head-to-head score
    elo: Interval  #: logistic elo of agent 1 over agent 2, 95% normal interval over deals
    outcomes: list[int]  #: deals per deal score k / (len - 1); two seats: the pentanomial LL .. WW


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
    save_games: str | None = None  #: every game played is also written here (agents.tournaments.saved_games)
    backend: Backend = field(default_factory=Backend)  #: where chunks ran (results do not depend on it)

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.contestants]

    @property
    def seats(self) -> int:
        return self.schedule.seats
