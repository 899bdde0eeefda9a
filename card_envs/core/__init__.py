"""What every game shares: the rules-engine protocol, the PettingZoo adapter, configs, errors."""

from card_envs.core.aec import CardGameEnv, ClassicWrapper, make_env_functions
from card_envs.core.config import GameConfig, check_choice, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState, replay
from card_envs.core.errors import CardEnvsError, ConfigError, DeckError, IllegalActionError, StateError

__all__ = [
    "NO_PLAYER", "CardEnvsError", "CardGameEnv", "ClassicWrapper", "ConfigError", "DeckError", "Game",
    "GameConfig", "GameState", "IllegalActionError", "StateError", "check_choice", "check_range",
    "make_env_functions", "replay",
]
