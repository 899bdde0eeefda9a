"""The generic PettingZoo AEC environment over any :class:`~card_envs.core.engine.Game`.

A game's ``env.py`` only subclasses :class:`CardGameEnv`, naming its ``game_class`` and its
docstring, and calls :func:`make_env_functions` to get PettingZoo's ``env`` / ``raw_env``.

=================  ============================================================================
``raw_env``        the unwrapped :class:`CardGameEnv`: an illegal or out-of-range action raises
                   :class:`~card_envs.core.errors.IllegalActionError` naming the action and the
                   legal set, and leaves the state unchanged.
``env()``          ``raw_env`` inside :class:`ClassicWrapper`, which behaves exactly like
                   PettingZoo's classic-env stack ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
                   TerminateIllegalWrapper(raw, illegal_reward=-1)))`` (tested against it), but
                   in one layer, because the three stock layers alone cost more per step than a
                   whole game step here.
=================  ============================================================================

Conventions (shared by every game):

* agents are ``player_0 .. player_{n-1}``; ``observation_space(agent)`` is
  ``Dict(observation=Box(low, high, (size,), float32), action_mask=Box(0, 1, (num_actions,), int8))``
  with the finite bounds of the game's encoding (``game.observation_bounds()``, its layout table),
  ``action_space(agent)`` is ``Discrete(num_actions)``;
* the mask is all zeros for every agent not to act and for everyone once the episode is over;
  ``infos[agent]["action_mask"]`` carries the same mask;
* ``rewards`` holds every agent's reward for the step that earned it; ``terminations`` /
  ``truncations`` are set for all agents together when the game ends or hits its limit;
  an eliminated player (``state.is_out``) is terminated early and removed by its ``step(None)``,
  following PettingZoo's dead-agent convention;
* ``keep_eliminated=True`` (games with eliminations only, e.g. Battlecards with 3+ players): an
  eliminated player instead stays in ``agents``, never selected and with an all-zero mask, its
  ``rewards`` still reported, until the game ends; then every agent, it too, is terminated and stepped
  once with ``None``, and its ``last()`` carries every reward it earned since its last move (the
  elimination payment included). This is the spec's own convention (players leave the agent list only
  at the end). Use it with libraries that assume a fixed agent list: Tianshou's ``PettingZooEnv`` (which
  ends the whole episode at the first termination) and TorchRL's ``PettingZooWrapper`` (which fails when
  an agent leaves early). The default (``False``) is PettingZoo's convention, which RLlib's
  ``PettingZooEnv``, SuperSuit and PettingZoo's own tests expect. Rewards are the same either way;
* ``observe(agent)`` is valid for every agent at any time, side-effect free and cached until
  the next ``step``/``reset``;
* ``render_mode``: ``"ansi"`` returns the table as text, ``"human"`` prints it at every reset and step,
  ``"rgb_array"`` returns an ``H x W x 3`` uint8 picture of it (:mod:`card_envs.core.render`, extra
  ``render``; one size per game config): every hand face up, or with ``render_seat=k`` only what
  ``player_k`` sees, drawn from ``state.view(k)`` alone (hidden cards are backs);
* ``reset(seed=s)`` reseeds; ``reset()`` continues the generator; ``reset(options={"deck": [...]})``
  (or ``"decks"``) stacks the deal as the game's spec says; any other key raises
  :class:`~card_envs.core.errors.ConfigError` naming the valid ones, except ``"options"``, the key
  PettingZoo's ``api_test`` passes to probe the signature (ignored: ``engine.PROBE_RESET_OPTIONS``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from card_envs.core.engine import Game, GameState
from card_envs.core.errors import ConfigError, StateError
from card_envs.core.render import check_render_seat, frame

RENDER_MODES = ("ansi", "human", "rgb_array")


class CardGameEnv(AECEnv):
    """PettingZoo AEC environment for one game; subclass and set ``game_class``."""

    game_class: ClassVar[type[Game]]
    metadata: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "game_class" in cls.__dict__:
            cls.metadata = {
                "name": cls.game_class.name,
                "render_modes": list(RENDER_MODES),
                "is_parallelizable": False,
                "render_fps": 1,
            }

    def __init__(self, render_mode: str | None = None, keep_eliminated: bool = False, render_seat: int | None = None,
                 **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ConfigError(f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
        if not isinstance(keep_eliminated, (bool, np.bool_)):
            raise ConfigError(f"keep_eliminated must be True or False, got {keep_eliminated!r}")
        self.render_mode = render_mode
        self.game = self.game_class(**options)
        n = self.game.num_players
        #: the seat whose view ``rgb_array`` draws (None: every hand face up); see the module docstring
        self.render_seat = check_render_seat(render_seat, render_mode, n)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        num_actions = self.game.num_actions
        low, high = self.game.observation_bounds()  # finite: the ranges of the encoding's layout table
        obs_space = spaces.Dict({
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8),
        })
        self.observation_spaces = {agent: obs_space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(num_actions) for agent in self.possible_agents}
        self.np_random = np.random.default_rng()
        # games without eliminations skip the per-step scan for players who left
        self._has_eliminations = self.game.state_class.is_out is not GameState.is_out
        if keep_eliminated and not self._has_eliminations:
            raise ConfigError(f"keep_eliminated=True: {self.game.name} has no eliminations (players never leave "
                              f"before the end); leave it False")
        #: knocked-out players stay in ``agents`` until the game ends (see the module docstring)
        self.keep_eliminated = bool(keep_eliminated)
        self._drops_eliminated = self._has_eliminations and not self.keep_eliminated
        self.state_: GameState | None = None
        self._obs_cache: dict[str, dict[str, np.ndarray]] = {}
        # one all-zero mask shared by every agent not to act; read-only, so sharing is safe
        self._no_mask = np.zeros(num_actions, np.int8)
        self._no_mask.setflags(write=False)
        self._mask = self._no_mask  # nobody acts before the first reset

    # -- PettingZoo API ---------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def action_names(self) -> tuple[str, ...]:
        """Every action's name, index = action id (spec section 8)."""
        return self.game.action_names

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if options:
            self.game.check_reset_options(options)  # before anything changes
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.state_ = self.game.new_state(self.np_random, options)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._sync()
        self._render_if_human()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._dealt()
        state.apply(action)  # raises IllegalActionError, state and env untouched
        rewards, cumulative = self.rewards, self._cumulative_rewards
        cumulative[agent] = 0.0
        for name, reward in zip(self.possible_agents, state.rewards, strict=True):
            if name in rewards:  # an agent that has left gets nothing more
                rewards[name] = reward
                cumulative[name] += reward
        if state.is_over:
            done = self.truncations if state.truncated else self.terminations
            for name in self.agents:
                done[name] = True
        elif self._drops_eliminated:
            for name in self.agents:
                if state.is_out(self._seat[name]):
                    self.terminations[name] = True
        self._sync()
        self._render_if_human()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        cached = self._obs_cache.get(agent)
        if cached is None:
            seat = self._seat[agent]
            state = self._dealt()
            mask = self._mask if seat == state.current_player else self._no_mask
            cached = {"observation": self.game.encode(state.view(seat)), "action_mask": mask}
            self._obs_cache[agent] = cached
        return cached

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode. "
                f"Pass render_mode='ansi', 'human' or 'rgb_array' when creating {self.metadata['name']}."
            )
            return None
        if self.state_ is None:
            raise RuntimeError("render() needs reset() first")
        if self.render_mode == "rgb_array":
            return frame(self.state_, self.render_seat)
        text = self.state_.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # -- helpers ---------------------------------------------------------------------------------

    @property
    def legal_mask(self) -> np.ndarray:
        """Mask of the agent to act (the shared read-only zero mask once over)."""
        return self._mask

    def _dealt(self) -> GameState:
        """``state_``, the episode's state; a :class:`StateError` before the first ``reset``."""
        state = self.state_
        if state is None:
            raise StateError(f"{self.game.name}: call reset() before stepping or observing")
        return state

    def _sync(self) -> None:
        """Point ``agent_selection``, masks and infos at the state after a reset or step."""
        state = self._dealt()
        self._obs_cache = {}
        if state.is_over:
            # as PettingZoo's classic envs: the selection moves on to the next seat, and every
            # agent is then stepped once with None to leave
            self._mask = self._no_mask
            selected = getattr(self, "agent_selection", "")  # none before the first reset ends
            previous = self._seat.get(selected, -1)
            following = [a for a in self.agents if self._seat[a] > previous]
            self.agent_selection = (following or self.agents)[0]
        else:
            self._mask = state.legal_mask()
            self.agent_selection = self.possible_agents[state.current_player]
        acting = self.agent_selection
        self.infos = {name: {"action_mask": self._mask if name == acting else self._no_mask} for name in self.agents}
        if self._drops_eliminated and not state.is_over and any(self.terminations[n] for n in self.agents):
            self._deads_step_first()

    def _render_if_human(self) -> None:
        if self.render_mode == "human":
            self.render()


class ClassicWrapper(OrderEnforcingWrapper):
    """PettingZoo's classic-env wrapper stack in one layer (see the module docstring).

    An illegal move by the acting agent ends the game: that agent gets ``illegal_reward``
    (-1), every agent is marked terminated and truncated, and a warning is logged --
    exactly as ``TerminateIllegalWrapper``. An action outside ``Discrete(n)`` fails the
    same assertion as ``AssertOutOfBoundsWrapper``; calls before ``reset`` fail as in
    ``OrderEnforcingWrapper``.
    """

    def __init__(self, env: CardGameEnv, illegal_reward: float = -1.0) -> None:
        super().__init__(env)
        self._illegal_value = illegal_reward
        self._terminated = False

    def _reset_first(name: str) -> property:  # noqa: N805 - builds properties at class creation
        def read(self: ClassicWrapper) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self.env, name)

        return property(read, doc=f"the raw env's ``{name}`` (AttributeError before reset)")

    # the hot attributes as properties: OrderEnforcingWrapper's __getattr__ costs a failed lookup each time
    agents = _reset_first("agents")
    agent_selection = _reset_first("agent_selection")
    rewards = _reset_first("rewards")
    terminations = _reset_first("terminations")
    truncations = _reset_first("truncations")
    infos = _reset_first("infos")
    del _reset_first

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self.env._cumulative_rewards

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._terminated = False
        self._has_reset = True
        self._has_updated = True
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        raw = self.env
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        assert (action is None and dead) or _in_discrete(action, raw.game.num_actions), \
            "action is not in action space"
        if dead:
            raw._was_dead_step(action)
        elif not raw._mask[action]:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.truncations, 0)
            raw.rewards[agent] = float(self._illegal_value)
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
        else:
            raw.step(action)

    def __str__(self) -> str:
        return str(self.env)


def _in_discrete(action: Any, n: int) -> bool:
    """``gymnasium.spaces.Discrete(n).contains(action)``, without its overhead."""
    if isinstance(action, int):
        return 0 <= action < n
    if isinstance(action, (np.generic, np.ndarray)) and np.issubdtype(action.dtype, np.integer) \
            and action.shape == ():
        return bool(0 <= action.item() < n)
    return False


def make_env_functions(env_class: type[CardGameEnv]) -> tuple[Callable[..., ClassicWrapper], type[CardGameEnv]]:
    """PettingZoo's pair: ``env(**config)`` (wrapped) and ``raw_env`` (the class)."""

    def env(**config: Any) -> ClassicWrapper:
        return ClassicWrapper(env_class(**config), illegal_reward=-1)

    env.__doc__ = f"{env_class.metadata['name']} wrapped like PettingZoo's classic environments.\n\n" \
                  f"{env_class.__doc__ or ''}"
    return env, env_class
