"""The web table: a FastAPI app serving one page and a small JSON API (extra ``play``).

Every table lives on the server (:mod:`agents.play.tables`); the page only ever receives what the
person's seat may see, and every request is checked before anything changes.

=============================================  ===========================================================
route                                          what it does
=============================================  ===========================================================
``GET /``                                      the page (HTML, CSS and JS from ``static/``; nothing external)
``GET /api/setup``                             the session: mode, game, seats, agents
``POST /api/tables``                           a new table for this tab (play, watch or replay, as started)
``GET /api/tables/{id}``                       play: the snapshot; watch/replay: frame 0
``POST /api/tables/{id}/move``                 ``{"turn": t, "action": a}``: the person's move
``POST /api/tables/{id}/advance``              ``{"turn": t}``: the agent to act moves once
``POST /api/tables/{id}/new``                  ``{"turn": t, "deal": "new" | "same" | "swap"}``
``GET /api/tables/{id}/frames/{k}?view=all``   watch/replay: frame ``k`` from all hands or one seat (``view=1``)
``GET /api/tables/{id}/saved``                 the finished game as a saved game (JSON)
``POST /api/replays``                          body: a saved game; opens it as a replay table
=============================================  ===========================================================

Errors: 400 illegal move or bad value, 404 unknown table or frame, 409 stale turn / not your turn /
game over, 422 malformed request (wrong types, unknown fields); the body is ``{"detail": message}``.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import Body, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, StrictInt

from agents.play.tables import PlayTable, TableError, Tables, WatchTable, derive_seed, game_module, make_game
from agents.tournaments.saved_games import SavedGame, SavedGameError, file_name, load_game, save_to_dir

STATIC = Path(__file__).with_name("static")
ASSETS = {"app.js": "text/javascript", "style.css": "text/css"}


@dataclass
class Setup:
    """What ``card-envs play`` was started with."""

    game: str
    config: dict[str, Any] = field(default_factory=dict)
    mode: Literal["play", "watch", "replay"] = "play"
    seat: int = 0
    opponents: list[str] = field(default_factory=lambda: ["random"])
    watch: list[str] = field(default_factory=list)
    replay: str | None = None  #: a saved game file (mode "replay")
    seed: int = 0
    delay_ms: int = 700
    save_games: str | None = None  #: write every finished game here
    _saved: SavedGame | None = field(default=None, repr=False)

    def saved(self) -> SavedGame:
        """The saved game of a replay session (read and checked once)."""
        if self._saved is None:
            try:
                self._saved = load_game(self.replay or "")
            except SavedGameError as error:
                raise TableError(400, str(error)) from error
        return self._saved

    def check(self) -> None:
        """Fail before serving: the game, its config, the agent specs and the saved game must all work."""
        new_table(self, 0)


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turn: StrictInt
    action: StrictInt


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turn: StrictInt


class NewDeal(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turn: StrictInt
    deal: Literal["new", "same", "swap"]


def new_table(setup: Setup, number: int) -> PlayTable | WatchTable:
    """Table ``number`` of the session (its own seed, so two tabs play different deals)."""
    seed = derive_seed(setup.seed, number)
    saver = _saver(setup)
    if setup.mode == "replay":
        return WatchTable(setup.saved().game, saved=setup.saved())
    game = make_game(setup.game, setup.config)
    if setup.mode == "watch":
        return WatchTable(game, agents=setup.watch, seed=seed, on_game_over=saver)
    return PlayTable(game, setup.seat, setup.opponents, seed, delay_ms=setup.delay_ms, on_game_over=saver)


def _saver(setup: Setup):
    if not setup.save_games:
        return None
    directory = setup.save_games

    def save(record: dict[str, Any]) -> None:
        source = record["source"]
        save_to_dir(directory, file_name(record["game"], source.get("mode", "play"), source.get("table_seed"),
                                         f"deal{source.get('deal', 0)}", f"game{source.get('game', 0)}"), record)

    return save


def _view(table: PlayTable | WatchTable) -> dict[str, Any]:
    return table.snapshot() if isinstance(table, PlayTable) else table.frame(0, "all")


def create_app(setup: Setup) -> FastAPI:
    """The app of one session; ``app.state.tables`` holds its open tables."""
    app = FastAPI(title="card_envs table", docs_url=None, redoc_url=None, openapi_url=None)
    tables = app.state.tables = Tables()
    app.state.setup = setup

    @app.exception_handler(TableError)
    async def table_error(request: Request, error: TableError) -> JSONResponse:
        return JSONResponse({"detail": error.message}, status_code=error.status)

    @app.get("/", response_class=HTMLResponse)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/static/{name}")
    def asset(name: str) -> FileResponse:
        if name not in ASSETS:
            raise TableError(404, f"no asset {name!r}")
        return FileResponse(STATIC / name, media_type=ASSETS[name])

    @app.get("/api/setup")
    def session() -> dict[str, Any]:
        game = setup.saved().game if setup.mode == "replay" else make_game(setup.game, setup.config)
        return {"mode": setup.mode, "game": game.name, "title": game_module(game).TITLE,
                "seats": game.num_players, "delay_ms": setup.delay_ms}

    def opened(table: PlayTable | WatchTable) -> dict[str, Any]:
        table_id = tables.add(table)
        return {"table": table_id, **_view(table)}

    @app.post("/api/tables")
    def create() -> dict[str, Any]:
        return opened(new_table(setup, tables.created))

    @app.post("/api/replays")
    def open_replay(record: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008 - FastAPI's idiom
        try:
            saved = load_game(record)
        except SavedGameError as error:
            raise TableError(422, str(error)) from error
        return opened(WatchTable(saved.game, saved=saved))

    def play_table(table_id: str) -> PlayTable:
        table = tables.get(table_id)
        if not isinstance(table, PlayTable):
            raise TableError(409, "this table is for watching: it takes no moves")
        return table

    def watch_table(table_id: str) -> WatchTable:
        table = tables.get(table_id)
        if not isinstance(table, WatchTable):
            raise TableError(409, "this table is played, not watched: it has no frames")
        return table

    @app.get("/api/tables/{table_id}")
    def show(table_id: str) -> dict[str, Any]:
        return {"table": table_id, **_view(tables.get(table_id))}

    @app.post("/api/tables/{table_id}/move")
    def move(table_id: str, body: Move) -> dict[str, Any]:
        return {"table": table_id, **play_table(table_id).move(body.turn, body.action)}

    @app.post("/api/tables/{table_id}/advance")
    def advance(table_id: str, body: Turn) -> dict[str, Any]:
        return {"table": table_id, **play_table(table_id).advance(body.turn)}

    @app.post("/api/tables/{table_id}/new")
    def new_deal(table_id: str, body: NewDeal) -> dict[str, Any]:
        return {"table": table_id, **play_table(table_id).new_deal(body.turn, body.deal)}

    @app.get("/api/tables/{table_id}/frames/{frame}")
    def frame(table_id: str, frame: int, view: str = "all") -> dict[str, Any]:
        return {"table": table_id, **watch_table(table_id).frame(frame, view)}

    @app.get("/api/tables/{table_id}/saved")
    def saved(table_id: str) -> dict[str, Any]:
        return tables.get(table_id).saved_game()

    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (``port`` 0: any free port), so the URL can be printed before serving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def make_server(app: FastAPI, log_level: str = "warning"):
    """A uvicorn server of ``app``; ``server.run(sockets=[sock])`` serves on a socket from :func:`bind`."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, lifespan="off", ws="none")
    return uvicorn.Server(config)


def serve(setup: Setup, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the table until Ctrl+C, printing its URL first."""
    app = create_app(setup)
    sock = bind(host, port)
    print(f"card_envs table ({setup.mode}, {setup.game}): open {url_of(sock)}  (Ctrl+C to stop)", flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {host}, not only on this machine", file=sys.stderr)
    make_server(app).run(sockets=[sock])
