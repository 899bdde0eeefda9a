"""What every game shares: the rules-engine protocol, the PettingZoo adapter, configs, errors, and the
pictures of the table (``table``: the table as data from views, each game's ``picture.py`` fills it;
``render``: ``rgb_array`` frames drawn with Pillow, replays as frames, GIFs).

=========================  ==========================================================================
module                     what it holds
=========================  ==========================================================================
``engine``                 the rules-engine protocol (``Game``, ``GameState``, ``replay``)
``aec``                    the PettingZoo AEC environment over any game (``CardGameEnv``)
``single_agent``           the Gymnasium single-agent view (``SingleAgentEnv``)
``decision``, ``config``   a decision facing a seat; config dataclass helpers
``errors``                 the errors every game raises
``table``, ``render``      ``render_mode="rgb_array"``: the table as data (``Table``, from views only),
                           ``frame(state, seat=None)``, ``game_frames(game, actions, ...)``,
                           ``save_gif(frames, path, fps)`` (Pillow and imageio: extra ``render``)
=========================  ==========================================================================
"""

from card_envs.core.aec import CardGameEnv, ClassicWrapper, make_env_functions
from card_envs.core.config import GameConfig, check_choice, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState, replay
from card_envs.core.errors import CardEnvsError, ConfigError, DeckError, IllegalActionError, StateError

__all__ = [
    "NO_PLAYER", "CardEnvsError", "CardGameEnv", "ClassicWrapper", "ConfigError", "DeckError", "Game",
    "GameConfig", "GameState", "IllegalActionError", "StateError", "check_choice", "check_range",
    "make_env_functions", "replay",
]
