"""Tables: the games a person plays or watches, kept and checked on the server side.

Plain Python (no web framework): the web server (:mod:`agents.play.server`) and the terminal
table (:mod:`agents.play.terminal`) both drive these classes.

=================  ====================================================================================
class              what it is
=================  ====================================================================================
:class:`PlayTable`   a person in one seat against agents in the others. Its :meth:`~PlayTable.snapshot`
                     is built from ``state.view(seat)`` alone (never the state, never the deal seed);
                     :meth:`~PlayTable.move` checks the turn number and the legal set before anything
                     changes; :meth:`~PlayTable.advance` lets the agent whose turn it is act once.
:class:`WatchTable`  agents against agents, or a saved game: a list of frames, each drawn from all
                     hands or from one seat's view only.
:class:`Tables`      the open tables by id (one per browser tab), least recently used dropped first.
=================  ====================================================================================

Every refused request raises :class:`TableError` with an HTTP status and a message naming what was
wrong; the table is unchanged. Each table has a *turn* number that grows with every decision and
every new deal: a request for another turn than the table's is stale (409).
"""

from __future__ import annotations

import importlib
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

import card_envs
from agents.play.layout import seat_name
from agents.players.base import Agent, Decision
from agents.players.registry import make_agent
from agents.tournaments.saved_games import SavedGame, game_record
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import CardEnvsError

#: log entries sent with a snapshot (the newest); ``log_skipped`` counts the older ones
LOG_TAIL = 400
HUMAN = "human"
DEAL_KINDS = ("new", "same", "swap")


class TableError(Exception):
    """A refused request: ``status`` is the HTTP status (4xx), ``message`` says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def game_module(game: Game) -> ModuleType:
    """The game's table module ``agents.play.<game>`` (board, status, narrate, opening, result)."""
    return importlib.import_module(f"agents.play.{game.name.rsplit('_v', 1)[0]}")


def make_game(name: str, config: Mapping[str, Any] | None) -> Game:
    if name not in card_envs.ENV_NAMES:
        raise TableError(400, f"unknown game {name!r}; known: {', '.join(card_envs.ENV_NAMES)}")
    try:
        return card_envs.make_game(name, **dict(config or {}))
    except (CardEnvsError, TypeError) as error:
        raise TableError(400, f"bad game config {dict(config or {})}: {error}") from error


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers (table seed, deal number, seat, ...)."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def _check_int(name: str, value: Any) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TableError(422, f"'{name}' must be an integer, got {value!r}")
    return int(value)


class Narrator:
    """The log in words of one seat's (or everyone's) view of a game, built from views only."""

    def __init__(self, game: Game, names: Sequence[str]) -> None:
        self.game = game
        self.module = game_module(game)
        self.names = list(names)

    def opening(self, view: Any) -> list[dict[str, Any]]:
        return [{"n": 0, "seat": None, "text": text} for text in self.module.opening(self.game, view)]

    def step(self, n: int, before: Any, after: Any, actor: int, action: int, reveal: bool) -> list[dict[str, Any]]:
        lines = self.module.narrate(self.game, before, after, actor, action, reveal)
        return [{"n": n, "seat": actor if i == 0 else None, "text": text} for i, text in enumerate(lines)]

    def result(self, view: Any, state_winners: Sequence[int], truncated: bool) -> str:
        return self.module.result(self.game, view, state_winners, truncated)


def outcome(state: GameState, narrator: Narrator, view: Any) -> dict[str, Any]:
    """The public result of a finished game: words, winners, each seat's return."""
    winners = state.rules_winners()
    return {"text": narrator.result(view, winners, bool(state.truncated)), "winners": list(state.winners()),
            "returns": [round(float(r), 6) for r in state.returns()], "truncated": bool(state.truncated)}


# -- a person against agents ---------------------------------------------------------------------


class PlayTable:
    """One person in ``seat`` against agents (``opponents``: one spec for every other seat, or one
    per other seat, in seat order starting after the person's)."""

    mode = "play"

    def __init__(self, game: Game, seat: int, opponents: Sequence[str], seed: int, *, delay_ms: int = 700,
                 on_game_over: Callable[[dict[str, Any]], None] | None = None) -> None:
        seats = game.num_players
        if not 0 <= seat < seats:
            raise TableError(400, f"seat must be 0..{seats - 1} for {game.name}, got {seat}")
        others = seats - 1
        if len(opponents) == 1:
            opponents = list(opponents) * others
        if len(opponents) != others:
            raise TableError(400, f"{game.name} has {seats} seats: give one opponent spec for all {others} other "
                                  f"seats or one per seat, got {len(opponents)}: {list(opponents)}")
        self.game = game
        self.opponent_specs = list(opponents)
        self.seed = int(seed)
        self.delay_ms = int(delay_ms)
        self.on_game_over = on_game_over
        self.lock = threading.RLock()
        self.seat = seat
        self.deal_number = 0
        self.turn = 0
        self.games_finished = 0
        for spec in self.opponent_specs:  # fail fast, with the registry's message
            try:
                make_agent(game.name, spec, 0)
            except Exception as error:
                raise TableError(400, f"opponent {spec!r}: {error}") from error
        self._deal()

    # -- seats and deals -------------------------------------------------------------------------

    def seat_specs(self) -> list[str]:
        """The agent spec in each seat (``"human"`` for the person)."""
        seats = self.game.num_players
        specs = [HUMAN] * seats
        for index, spec in enumerate(self.opponent_specs):
            specs[(self.seat + 1 + index) % seats] = spec
        return specs

    def names(self) -> list[str]:
        return [f"{seat_name(s)} · {'you' if spec == HUMAN else spec}" for s, spec in enumerate(self.seat_specs())]

    def _deal(self) -> None:
        game = self.game
        self.deal_seed = derive_seed(self.seed, self.deal_number)
        self.state = game.new_state(np.random.default_rng(self.deal_seed))
        self.agents: dict[int, Agent] = {}
        self.agent_seeds = [derive_seed(self.seed, self.deal_number, 1 + s) for s in range(game.num_players)]
        for seat, spec in enumerate(self.seat_specs()):
            if spec != HUMAN:
                agent = make_agent(game.name, spec, self.agent_seeds[seat])
                agent.reset(game, seat)
                self.agents[seat] = agent
        self.narrator = Narrator(game, self.names())
        self.log = self.narrator.opening(self.state.view(self.seat))
        self.saved = False

    def new_deal(self, turn: Any, kind: Any) -> dict[str, Any]:
        """``"new"``: a new deal; ``"same"``: this deal again (duplicate replay); ``"swap"``: this deal
        from the next seat, the agents moving round with their seats."""
        with self.lock:
            self._check_turn(turn)
            if kind not in DEAL_KINDS:
                raise TableError(422, f"'deal' must be one of {', '.join(DEAL_KINDS)}, got {kind!r}")
            if kind == "new":
                self.deal_number += 1
            elif kind == "swap":
                self.seat = (self.seat + 1) % self.game.num_players
            self.turn += 1
            self._deal()
            return self.snapshot()

    # -- decisions -------------------------------------------------------------------------------

    def _check_turn(self, turn: Any) -> None:
        turn = _check_int("turn", turn)
        if turn != self.turn:
            raise TableError(409, f"stale request for turn {turn}: the table is at turn {self.turn}; "
                                  "fetch the table again")

    def _check_playing(self) -> None:
        if self.state.is_over:
            raise TableError(409, "the game is over: start a new game")

    def move(self, turn: Any, action: Any) -> dict[str, Any]:
        """The person's decision: refused (state unchanged) unless it is their turn, ``turn`` is the
        table's turn, and ``action`` is legal now."""
        with self.lock:
            self._check_turn(turn)
            self._check_playing()
            state = self.state
            if state.current_player != self.seat:
                raise TableError(409, f"not your turn: {self.names()[state.current_player]} is to act")
            action = _check_int("action", action)
            legal = state.legal_actions()
            if action not in legal:
                names = self.game.action_names
                what = f"{action} {names[action]!r}" if 0 <= action < len(names) else f"{action} (out of range)"
                raise TableError(400, f"illegal action {what}; legal now: "
                                      + ", ".join(f"{a} {names[a]!r}" for a in legal))
            self._apply(action)
            return self.snapshot()

    def advance(self, turn: Any) -> dict[str, Any]:
        """The agent whose turn it is acts once (the page calls this after its visible delay)."""
        with self.lock:
            self._check_turn(turn)
            self._check_playing()
            seat = self.state.current_player
            if seat == self.seat:
                raise TableError(409, "it is your turn: the agents wait for your move")
            agent = self.agents[seat]
            try:
                action = agent.act(Decision.of(self.state))
            except Exception as error:
                raise TableError(500, f"agent {self.seat_specs()[seat]} in {seat_name(seat)} failed: "
                                      f"{type(error).__name__}: {error}") from error
            if action not in self.state.legal_actions():
                raise TableError(500, f"agent {self.seat_specs()[seat]} in {seat_name(seat)} chose the illegal "
                                      f"action {action!r}")
            self._apply(int(action))
            return self.snapshot()

    def _apply(self, action: int) -> None:
        state = self.state
        actor = state.current_player
        before = state.view(self.seat)
        state.apply(action)
        after = state.view(self.seat)
        self.log += self.narrator.step(len(state.history), before, after, actor, action, reveal=actor == self.seat)
        self.turn += 1
        if state.is_over and not self.saved:
            self.saved = True
            self.games_finished += 1
            if self.on_game_over is not None:
                self.on_game_over(self.saved_game())

    # -- what the person sees ----------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, from ``state.view(seat)``: no other seat's hand, no deal seed."""
        with self.lock:
            state = self.state
            game = self.game
            view = state.view(self.seat)
            names = self.names()
            module = self.narrator.module
            you_act = not state.is_over and state.current_player == self.seat
            waiting = None if state.is_over or you_act else state.current_player
            return {
                "mode": self.mode,
                "game": game.name,
                "title": module.TITLE,
                "turn": self.turn,
                "deal": self.deal_number,
                "decisions": len(state.history),
                "seat": self.seat,
                "names": names,
                "board": module.board(game, {self.seat: view}, names, self.seat),
                "you_act": you_act,
                "legal": [{"action": a, "name": game.action_names[a]} for a in state.legal_actions()] if you_act
                else [],
                "waiting_for": waiting,
                "delay_ms": self.delay_ms,
                "log": self.log[-LOG_TAIL:],
                "log_skipped": max(0, len(self.log) - LOG_TAIL),
                "over": state.is_over,
                "result": outcome(state, self.narrator, view) if state.is_over else None,
            }

    def saved_game(self) -> dict[str, Any]:
        """The finished game as a saved game (only once it is over: the seed is the whole deal)."""
        with self.lock:
            if not self.state.is_over:
                raise TableError(409, "the game is still running: it can be saved once it is over")
            return game_record(self.state, seed=self.deal_seed, agents=self.seat_specs(),
                               agent_seeds=self.agent_seeds,
                               source={"tool": "agents.play", "mode": "play", "table_seed": self.seed,
                                       "deal": self.deal_number, "game": self.games_finished, "seat": self.seat})


# -- agents against agents, and saved games ---------------------------------------------------------


class WatchTable:
    """Frames of one game: ``frame(k)`` is the table before decision ``k`` (the last one: the end).

    Either ``agents`` play it (frames computed as they are asked for) or ``saved`` replays a saved
    game. ``view="all"`` shows every hand; a seat number shows that seat's view only.
    """

    def __init__(self, game: Game, *, agents: Sequence[str] | None = None, seed: int = 0,
                 saved: SavedGame | None = None, on_game_over: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.game = game
        self.lock = threading.RLock()
        self.on_game_over = on_game_over
        self.seed = int(seed)
        if saved is not None:
            self.mode = "replay"
            self.specs = list(saved.agents)
            self.deal_seed = saved.seed
            self.options = saved.options
            self.recorded: tuple[int, ...] | None = saved.actions
            self.agents: list[Agent] = []
            self.agent_seeds: list[int] | None = saved.record.get("agent_seeds")
            state = saved.new_state()
        else:
            self.mode = "watch"
            specs = list(agents or [])
            seats = game.num_players
            if len(specs) == 1:
                specs *= seats
            if len(specs) != seats:
                raise TableError(400, f"{game.name} has {seats} seats: give one agent spec for all seats or one "
                                      f"per seat, got {len(specs)}: {specs}")
            self.specs = specs
            self.deal_seed = derive_seed(self.seed, 0)
            self.options = None
            self.recorded = None
            self.agent_seeds = [derive_seed(self.seed, 0, 1 + s) for s in range(seats)]
            try:
                self.agents = [make_agent(game.name, spec, agent_seed)
                               for spec, agent_seed in zip(specs, self.agent_seeds, strict=True)]
            except Exception as error:
                raise TableError(400, f"agent spec: {error}") from error
            for seat, agent in enumerate(self.agents):
                agent.reset(game, seat)
            state = game.new_state(np.random.default_rng(self.deal_seed))
        self.names = [f"{seat_name(s)} · {spec}" for s, spec in enumerate(self.specs)]
        self.narrator = Narrator(game, self.names)
        self.states: list[GameState] = [state.clone()]
        self.actions: list[int] = []
        self.actors: list[int] = []
        self.current = state
        self.logs: dict[str, list[list[dict[str, Any]]]] = {}
        self.turn = 0
        if self.recorded is not None:
            self._extend_to(len(self.recorded))

    @property
    def complete(self) -> bool:
        return self.current.is_over

    def _extend_to(self, frame: int) -> None:
        """Play (or replay) until ``frame`` exists or the game is over."""
        state = self.current
        limit = self.game.max_decisions()
        while len(self.states) <= frame and not state.is_over:
            if limit is not None and len(self.actions) >= limit:
                raise TableError(500, f"the game did not end within {limit} decisions")
            seat = state.current_player
            if self.recorded is not None:
                if len(self.actions) >= len(self.recorded):
                    break
                action = self.recorded[len(self.actions)]
            else:
                action = self.agents[seat].act(Decision.of(state))
            state.apply(action)
            self.actions.append(int(action))
            self.actors.append(seat)
            self.states.append(state.clone())
            if state.is_over and self.on_game_over is not None and self.recorded is None:
                self.on_game_over(self.saved_game())

    def _perspective(self, view: Any) -> tuple[str, list[int]]:
        seats = self.game.num_players
        if view in (None, "all"):
            return "all", list(range(seats))
        try:
            seat = int(view)
        except (TypeError, ValueError):
            raise TableError(422, f"'view' must be 'all' or a seat 0..{seats - 1}, got {view!r}") from None
        if not 0 <= seat < seats:
            raise TableError(422, f"'view' must be 'all' or a seat 0..{seats - 1}, got {view!r}")
        return str(seat), [seat]

    def _log(self, key: str, shown: list[int], frame: int) -> list[dict[str, Any]]:
        """The log of ``frame`` as seen from ``shown`` (the first shown seat's views drive the words)."""
        steps = self.logs.setdefault(key, [])
        viewer = shown[0]
        if not steps:
            steps.append(self.narrator.opening(self.states[0].view(viewer)))
        while len(steps) <= frame:
            k = len(steps) - 1
            actor = self.actors[k]
            steps.append(self.narrator.step(k + 1, self.states[k].view(viewer), self.states[k + 1].view(viewer),
                                            actor, self.actions[k], reveal=key == "all" or actor == viewer))
        return [entry for entries in steps[:frame + 1] for entry in entries]

    def frame(self, frame: Any, view: Any = "all") -> dict[str, Any]:
        with self.lock:
            frame = _check_int("frame", frame)
            if frame < 0:
                raise TableError(422, f"'frame' must be 0 or more, got {frame}")
            key, shown = self._perspective(view)
            self._extend_to(frame)
            last = len(self.states) - 1
            if frame > last:
                raise TableError(404, f"frame {frame} does not exist: the game ended at frame {last}")
            state = self.states[frame]
            views = {seat: state.view(seat) for seat in shown}
            module = self.narrator.module
            log = self._log(key, shown, frame)
            final = self.complete and frame == last
            you = None if key == "all" else shown[0]
            acting = None if state.is_over else state.current_player
            return {
                "mode": self.mode,
                "game": self.game.name,
                "title": module.TITLE,
                "names": self.names,
                "view": key,
                "frame": frame,
                "frames_known": last,
                "final_frame": last if self.complete else None,
                "board": module.board(self.game, views, self.names, you),
                "next_move": (f"{seat_name(acting)}: {self.game.action_names[self.actions[frame]]}"
                              if acting is not None and frame < len(self.actions) and (key == "all" or acting == you)
                              else None),
                "log": log[-LOG_TAIL:],
                "log_skipped": max(0, len(log) - LOG_TAIL),
                "over": final,
                "result": outcome(state, self.narrator, views[shown[0]]) if final else None,
            }

    def saved_game(self) -> dict[str, Any]:
        with self.lock:
            if not self.complete:
                raise TableError(409, "the game is not finished yet: step to its end first")
            return game_record(self.current, seed=self.deal_seed, agents=self.specs, agent_seeds=self.agent_seeds,
                               options=self.options, source={"tool": "agents.play", "mode": self.mode,
                                                             "table_seed": self.seed})


# -- the open tables ---------------------------------------------------------------------------------


class Tables:
    """Open tables by id (random, unguessable); at most ``limit``, least recently used dropped first."""

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._tables: OrderedDict[str, PlayTable | WatchTable] = OrderedDict()
        self._lock = threading.Lock()
        self.created = 0

    def add(self, table: PlayTable | WatchTable) -> str:
        table_id = secrets.token_urlsafe(12)
        with self._lock:
            self._tables[table_id] = table
            self.created += 1
            while len(self._tables) > self.limit:
                self._tables.popitem(last=False)
        return table_id

    def get(self, table_id: str) -> PlayTable | WatchTable:
        with self._lock:
            table = self._tables.get(table_id)
            if table is None:
                raise TableError(404, f"no table {table_id!r} (it may have been closed): start a new one")
            self._tables.move_to_end(table_id)
            return table

    def __len__(self) -> int:
        return len(self._tables)
