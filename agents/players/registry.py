"""Every agent by name, for every game.

Names: ``random`` (any game) and ``heuristic:<name>`` for the rule-based players a game's module
``agents/players/<game>.py`` lists in its ``AGENTS`` dict (weakest first; ``STRONGEST`` names the best), and
``ismcts[:key=value,...]``, the search player of ``agents/players/ismcts.py`` (e.g. ``ismcts:sims=400,rollout=random``),
and ``checkpoint:<path>``, a model trained by ``card-envs train`` (``agents/players/checkpoint.py``), and
``zoo:<game>/<name>``, a trained model shipped with the package (``agents/players/zoo``; ``card-envs zoo`` lists them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from agents.players.base import Agent, RandomAgent
from card_envs import ENV_NAMES
from card_envs.core.errors import ConfigError


def _game_module(game: str) -> ModuleType:
    if game not in ENV_NAMES:
        raise ConfigError(f"unknown game {game!r}; registered: {', '.join(ENV_NAMES)}")
    return importlib.import_module(f"agents.players.{game.rsplit('_v', 1)[0]}")


def heuristic_agents(game: str) -> dict[str, Callable[..., Agent]]:
    """The game's rule-based players, weakest first (none while ``agents/players/<game>.py`` does not exist yet)."""
    try:
        module = _game_module(game)
    except ModuleNotFoundError as error:
        if error.name == f"agents.players.{game.rsplit('_v', 1)[0]}":
            return {}
        raise
    return dict(module.AGENTS)


def strongest_heuristic(game: str) -> str:
    """Spec name (``heuristic:<name>``) of the game's strongest rule-based player."""
    return f"heuristic:{_game_module(game).STRONGEST}"


def agent_names(game: str) -> list[str]:
    """``random`` and every ``heuristic:<name>`` of the game."""
    return ["random"] + [f"heuristic:{name}" for name in heuristic_agents(game)]


def is_trained_model(spec: str) -> bool:
    """``spec`` names a trained model, ``checkpoint:<path>`` or ``zoo:<game>/<name>``: a policy network."""
    return spec.startswith(("checkpoint:", "zoo:"))


def make_agent(game: str, spec: str, seed: int | None = None) -> Agent:
    """Build an agent from its spec name, e.g. ``make_agent("revolutionary_war_v0", "heuristic:pot")``."""
    if spec == "random":
        return RandomAgent(seed)
    kind, _, name = spec.partition(":")
    if kind == "ismcts":  # search player, options after the colon (agents/players/ismcts.py)
        from agents.players.ismcts import make_ismcts

        return make_ismcts(game, name, seed, make_agent=make_agent)
    if kind == "checkpoint":  # a trained model (agents/players/checkpoint.py); numpy only, no torch
        from agents.players.checkpoint import make_checkpoint_agent

        return make_checkpoint_agent(game, spec, seed, make_agent=make_agent)
    if kind == "zoo":  # a shipped trained model (agents/players/zoo); numpy only
        from agents.players.zoo import make_zoo_agent

        return make_zoo_agent(game, spec, seed, make_agent=make_agent)
    if kind == "heuristic":
        agents = heuristic_agents(game)
        if name in agents:
            return agents[name](seed)
    raise ConfigError(f"unknown agent {spec!r} for {game}; known: {', '.join(agent_names(game))}, "
                      "ismcts[:key=value,...], checkpoint:<path>, zoo:<game>/<name>")
