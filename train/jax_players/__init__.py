"""JAX ports of the rule-based players, for the opponents and the advisor inside the jitted training loop.

A port plays exactly as the Python player of ``agents/players/<game>.py`` does (the tests compare their moves
on random positions of the Python engine), but it reads the *observation vector* of its seat
(``game.encode(view)``) and the legal mask instead of the view object, so it runs on any engine whose
observations are the Python engine's -- the contract of ``card_envs.jax`` -- without depending on how an
engine stores its state. Everything a Python player reads from the view is in that vector for the
ported players (each port's docstring says where). Every port is deterministic (its key is unused, as
the Python players' choices are): the trainer reuses the advisor's moves as the moves of the opponent
block that seats the same player (``train/jax_ppo.py``), and the tests check it.

==========================  =================================================================
function                    what it gives
==========================  =================================================================
``ported(game_name)``       the agent specs with a port, e.g. ``["heuristic:pot"]`` (no jax
                            import: the config check uses it)
``make_port(game, spec)``   ``act(observation, mask, key) -> action`` of one seat (int32;
                            vmap it for a batch) for ``game`` (a Python ``Game``: its options
                            fix the observation layout), or a ``ConfigError`` naming the ports;
                            also for a trained model, ``zoo:<game>/<name>`` or
                            ``checkpoint:<path>``: its policy network, frozen (``network.py``)
==========================  =================================================================

Only players worth training against or learning from are ported (a player too slow to port
faithfully, such as Revolutionary War's exact endgame search, stays Python: it can still be the
``pretrain.teacher``, whose games are played by the Python engine, and the ``pretrained`` opponent of the JAX
trainer then seats its clone, the policy after the warm start).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from agents.players.registry import is_trained_model
from card_envs.core.engine import Game
from card_envs.core.errors import ConfigError

#: game -> {agent spec: "module:function"} of the ported players (the function builds ``act`` for a Game)
PORTS: dict[str, dict[str, str]] = {
    "revolutionary_war_v0": {"heuristic:cheapest": "train.jax_players.revolutionary_war:make_cheapest",
                             "heuristic:pot": "train.jax_players.revolutionary_war:make_pot"},
    "battlecards_v0": {"heuristic:cheapest": "train.jax_players.battlecards:make_cheapest",
                       "heuristic:counter": "train.jax_players.battlecards:make_counter"},
    "bloodlines_v0": {"heuristic:defender": "train.jax_players.bloodlines:make_defender"},
    "revolution_v0": {"heuristic:counting": "train.jax_players.revolution:make_counting"},
}
#: game options a port needs (``make_port`` refuses a game without them): the observation it reads
PORT_OPTIONS: dict[str, dict[str, Any]] = {"revolution_v0": {"full_recall": True, "void_inferences": True}}


def ported(game_name: str) -> list[str]:
    """The agent specs of ``game_name`` that have a JAX port."""
    return list(PORTS.get(game_name, {}))


def make_port(game: Game, spec: str) -> Callable[[Any, Any, Any], Any]:
    """``act(observation, mask, key) -> action`` of the port of ``spec`` for ``game``'s options."""
    if is_trained_model(spec):
        from train.jax_players.network import make_network_port

        return make_network_port(game, spec)
    where = PORTS.get(game.name, {}).get(spec)
    if where is None:
        raise ConfigError(f"{spec} has no JAX port for {game.name} (the jax backend seats only ported players and "
                          f"trained models); ported: {', '.join(['random', *ported(game.name)])}, "
                          f"zoo:<game>/<name>, checkpoint:<path>")
    module, _, function = where.partition(":")
    return getattr(importlib.import_module(module), function)(game)


__all__ = ["PORTS", "PORT_OPTIONS", "make_port", "ported"]
