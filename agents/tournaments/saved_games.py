"""Saved games: one JSON file per game, enough to replay it exactly.

``card-envs match ... --save-games DIR`` and ``card-envs evaluate ... --save-games DIR``
write one file per game played; ``card-envs play --replay FILE`` (or "open saved game" on the
page) steps through one. A game replays from its deal seed and its actions alone
(:func:`card_envs.core.engine.replay`): all chance comes from the state's generator, seeded once.

================  ========================================================================================
key               meaning
================  ========================================================================================
``format``        ``"card_envs.saved_game"``; ``version`` is 1
``game``          the environment name, e.g. ``"revolutionary_war_v0"``
``config``        the game's full configuration (``game.config.to_dict()``)
``seed``          the deal seed: ``game.new_state(numpy.random.default_rng(seed), options)``
``options``       reset options of the deal (a stacked ``deck``/``decks``), or null
``agents``        the agent spec in each seat (``"human"`` for a person at ``agents.play``)
``agent_seeds``   each seat's agent seed, or null
``actions``       every action id, in order; ``moves`` has their names (for reading; checked on load)
``returns``       each seat's total reward; ``winners`` the winning seats (empty on a draw or an
                  unscored truncation); ``truncated``
``source``        where the game comes from (tool, seed, deal, lineup, ...), free-form
================  ========================================================================================

Files are written atomically (a temporary file renamed into place), so a directory never holds a
half-written game.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import card_envs
from agents.files import write_atomically
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import CardEnvsError

FORMAT = "card_envs.saved_game"
VERSION = 1


class SavedGameError(CardEnvsError):
    """A saved game that cannot be read or does not replay; the message says what is wrong."""


@dataclass(frozen=True)
class SavedGame:
    """A validated saved game; :meth:`replay` rebuilds its final state."""

    game: Game
    seed: int
    options: Mapping[str, Any] | None
    agents: tuple[str, ...]
    actions: tuple[int, ...]
    record: Mapping[str, Any]

    def new_state(self) -> GameState:
        return self.game.new_state(np.random.default_rng(self.seed), self.options)


def game_record(state: GameState, *, seed: int, agents: Sequence[str], agent_seeds: Sequence[int] | None = None,
                options: Mapping[str, Any] | None = None, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The saved-game dict of a game dealt with ``seed``/``options`` and played to ``state``."""
    game = state.game
    if len(agents) != game.num_players:
        raise ValueError(f"{game.name} has {game.num_players} seats, got {len(agents)} agents: {list(agents)}")
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": game.name,
        "config": game.config.to_dict(),
        "seed": int(seed),
        "options": dict(options) if options else None,
        "agents": list(agents),
        "agent_seeds": [int(s) for s in agent_seeds] if agent_seeds is not None else None,
        "actions": list(state.history),
        "moves": [game.action_name(a) for a in state.history],
        "returns": [float(r) for r in state.returns()],
        "winners": list(state.winners()),
        "truncated": bool(state.truncated),
        "source": dict(source or {}),
    }


def save_game(path: str, record: Mapping[str, Any]) -> None:
    """Write one saved game to ``path`` atomically."""
    write_atomically(path, json.dumps(record, separators=(",", ":")) + "\n")


def file_name(*parts: Any) -> str:
    """A portable file name from parts (agent specs may hold ``:``, ``/``, ``=``): ``a-b-c.json``."""
    text = "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", str(part)).strip("_")[:48] for part in parts)
    return text + ".json"


def save_to_dir(directory: str, name: str, record: Mapping[str, Any]) -> str:
    path = os.path.join(directory, name)
    save_game(path, record)
    return path


def save_played(directory: str, name: str, state: GameState, *, seed: int, agents: Sequence[str],
                agent_seeds: Sequence[int] | None = None, source: Mapping[str, Any] | None = None) -> str:
    """Save a game played to ``state`` from ``seed`` as ``directory/name``; the path written."""
    return save_to_dir(directory, name, game_record(state, seed=seed, agents=agents, agent_seeds=agent_seeds,
                                                    source=source))


def load_game(source: str | os.PathLike | Mapping[str, Any]) -> SavedGame:
    """Read (a path) or take (a dict) a saved game, check it, and replay it once to prove it is exact:
    every action must be legal in turn, and the replay must end with the recorded returns."""
    if isinstance(source, Mapping):
        record = source
    else:
        try:
            with open(source, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            raise SavedGameError(f"cannot read saved game {os.fspath(source)!r}: {error}") from error
    saved = _parse(record)
    final = replay_saved(saved)
    recorded = record.get("returns")
    if recorded is not None and [float(r) for r in recorded] != [float(r) for r in final.returns()]:
        raise SavedGameError(f"saved game does not replay exactly: recorded returns {recorded}, "
                             f"the replay ends with {final.returns()}")
    return saved


def save_replay_gif(saved: SavedGame, path: str | os.PathLike, *, seat: int | None = None, fps: float = 2.0) -> int:
    """Write the saved game as an animated GIF (extra ``render``): the deal, then the table after every action,
    every hand face up or ``seat``'s view (:func:`card_envs.core.render.game_frames`); returns the frame count."""
    from card_envs.core.render import game_frames, save_gif

    frames = game_frames(saved.game, saved.actions, seed=saved.seed, options=saved.options, seat=seat)
    save_gif(frames, path, fps=fps)
    return len(frames)


def replay_saved(saved: SavedGame) -> GameState:
    """The final state of a saved game (every action checked for legality on the way)."""
    try:
        state = saved.new_state()
    except CardEnvsError as error:
        raise SavedGameError(f"saved game: the deal cannot be rebuilt: {error}") from error
    for index, action in enumerate(saved.actions):
        if state.is_over:
            raise SavedGameError(f"saved game: action {index} ({action}) comes after the end of the game")
        try:
            state.apply(action)
        except CardEnvsError as error:
            raise SavedGameError(f"saved game: action {index} does not replay: {error}") from error
    return state


def _parse(record: Any) -> SavedGame:
    if not isinstance(record, Mapping):
        raise SavedGameError(f"a saved game is a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise SavedGameError(f"not a saved game: 'format' is {record.get('format')!r}, expected {FORMAT!r}")
    if record.get("version") != VERSION:
        raise SavedGameError(f"saved game version {record.get('version')!r} is not supported (this reads {VERSION})")
    name = record.get("game")
    if name not in card_envs.ENV_NAMES:
        raise SavedGameError(f"saved game: unknown game {name!r}; known: {', '.join(card_envs.ENV_NAMES)}")
    config = record.get("config") or {}
    if not isinstance(config, Mapping):
        raise SavedGameError(f"saved game: 'config' must be an object, got {config!r}")
    try:
        game = card_envs.make_game(name, **config)
    except (CardEnvsError, TypeError) as error:
        raise SavedGameError(f"saved game: bad config {dict(config)}: {error}") from error
    seed = record.get("seed")
    if not _is_int(seed) or seed < 0:
        raise SavedGameError(f"saved game: 'seed' must be a non-negative integer, got {seed!r}")
    actions = record.get("actions")
    if not isinstance(actions, list) or not all(_is_int(a) for a in actions):
        raise SavedGameError("saved game: 'actions' must be a list of action ids (integers)")
    moves = record.get("moves")
    if moves is not None and moves != [game.action_name(a) if 0 <= a < game.num_actions else None for a in actions]:
        raise SavedGameError("saved game: 'moves' do not name the 'actions' (the file was edited or is corrupt)")
    agents = record.get("agents")
    if not isinstance(agents, list) or len(agents) != game.num_players or not all(isinstance(a, str) for a in agents):
        raise SavedGameError(f"saved game: 'agents' must list one agent name per seat ({game.num_players})")
    options = record.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise SavedGameError(f"saved game: 'options' must be an object or null, got {options!r}")
    return SavedGame(game, int(seed), options, tuple(agents), tuple(int(a) for a in actions), record)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
