"""card_envs: PettingZoo environments for four hobbyist card games.

>>> import card_envs
>>> env = card_envs.make("revolutionary_war_v0")      # same as revolutionary_war_v0.env()
>>> game = card_envs.make_game("revolutionary_war_v0")  # the rules engine alone
>>> import gymnasium
>>> env = gymnasium.make("card_envs/Battlecards-v0", num_players=3)  # the single-agent view

``ENV_NAMES`` lists the registered environments; ``GYM_IDS`` the Gymnasium ids registered on import
(:mod:`card_envs.registration`). Importing this package never imports torch, nor the games themselves.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from card_envs.core.errors import ConfigError
from card_envs.registration import GYM_IDS, register_gym_ids

if TYPE_CHECKING:  # the games stay unimported until asked for
    from card_envs.core.aec import CardGameEnv, ClassicWrapper
    from card_envs.core.engine import Game

__version__ = "0.1.0"

#: every registered environment, by versioned name
ENV_NAMES: tuple[str, ...] = ("revolutionary_war_v0", "bloodlines_v0", "revolution_v0", "battlecards_v0")


def _module(name: str) -> Any:
    if name not in ENV_NAMES:
        raise ConfigError(f"unknown environment {name!r}; registered: {', '.join(ENV_NAMES)}")
    return importlib.import_module(f"card_envs.{name}")


def make(name: str, **config: Any) -> ClassicWrapper:
    """``card_envs.make("revolutionary_war_v0", **config)`` is ``revolutionary_war_v0.env(**config)``."""
    return _module(name).env(**config)


def make_raw(name: str, **config: Any) -> CardGameEnv:
    """The unwrapped environment (illegal actions raise instead of ending the game)."""
    return _module(name).raw_env(**config)


def make_game(name: str, **config: Any) -> Game:
    """The rules engine (:class:`card_envs.core.Game`) of an environment, without PettingZoo."""
    return _module(name).raw_env.game_class(**config)


register_gym_ids()

__all__ = ["ENV_NAMES", "GYM_IDS", "make", "make_game", "make_raw"]
