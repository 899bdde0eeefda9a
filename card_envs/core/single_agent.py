"""A single-agent Gymnasium view of any game: one learner seat, opponents in every other seat.

Built for training a learner with masked policy-gradient methods (sb3-contrib's MaskablePPO,
or anything that reads ``action_masks()``) against a pool of opponents. It drives the rules
engine directly (``card_envs.make_game`` + ``GameState``), not the AEC env, for speed.

>>> from card_envs.core.single_agent import SingleAgentEnv
>>> from agents.players.base import RandomAgent
>>> env = SingleAgentEnv("battlecards_v0", opponents=[RandomAgent(0)], num_players=3)  # game options as keywords
>>> observation, info = env.reset(seed=0)
>>> mask = env.action_masks()                      # int8, 1 = legal for the learner

The same through Gymnasium (ids registered on ``import card_envs``; see :mod:`card_envs.registration`)::

    env = gymnasium.make("card_envs/Battlecards-v0", opponents=[RandomAgent(0)], num_players=3)

=====================  ======================================================================
Seats                  the learner takes one seat, drawn uniformly at random every episode
                       (``seat=k`` fixes it); every other seat is played by an opponent
                       drawn from ``opponents`` at each reset
Game options           keyword arguments (``SingleAgentEnv("battlecards_v0", opponents,
                       num_players=4)``), or a dict ``options=``, or a built ``Game``
Observation space      ``Box(low, high, (game.observation_size,), float32)``: ``game.encode`` of
                       the learner's view (the game's observation table, whose range column gives
                       the finite bounds: ``game.observation_bounds()``); with an ``advisor``,
                       ``game.num_actions`` more entries in [0, 1] follow: the advice (below)
Action space           ``Discrete(game.num_actions)``; ``action_masks()`` gives the legal set
                       (all zeros once the episode is over). Not repeated in ``info``:
                       SB3's vector envs deep-copy every info dict on every step
Reward                 the learner's own reward (the game's ``rewards`` for its seat), summed
                       over every decision since its previous step: whatever it earns during
                       the opponents' moves arrives with its next step, or with the final step
                       (what it earns before its first decision, with its first step).
                       Every episode ends with the learner's final reward: wins, losses and
                       draws alike (an episode can end on an opponent's move)
``draw_reward``        added to the final reward of a game that ends without a winner
                       (``state.winners()`` empty); default 0. ``-1`` pays a two-player draw
                       like a loss, so the learner maximises its win rate (what the evaluation
                       counts) rather than its expected result
terminated/truncated   the game ended / hit its limit (``state.terminated`` / ``truncated``)
final ``info``         ``returns`` (every seat), ``winners``, ``seat``, ``opponents`` (names),
                       ``won`` and ``is_success`` (the learner is among the winners)
duplicate baseline     ``baseline=<agent>``: every deal is also played with that agent in the
                       learner's seat and the same opponents (same cards, same later shuffles,
                       the opponents' generators reseeded alike), and the final step pays the
                       learner its return *minus* that agent's return on the deal. The shift does
                       not depend on the learner's actions, so the expected policy gradient is
                       unchanged, while the card luck common to both plays cancels: the variance
                       reduction of duplicate bridge (a rollout baseline, as in Kool, van Hoof &
                       Welling 2019). ``info["baseline_return"]`` has it. Costs one more game per
                       episode
``advisor``, ``advise``  ``advisor``: an agent (e.g. the game's strongest rule-based player) whose
                       choice in the learner's position is appended to the observation as a
                       one-hot (all zeros once the episode is over): residual policy learning,
                       where a policy that copies the advice plays as the advisor does.
                       ``advise(decision, advisor) -> observation`` is the hook that builds the
                       advised observation (``agents.players.base.advised_observation``; the trainer
                       passes it), so this module imports nothing from ``agents``. Every seat has
                       its own copy of the advisor, reseeded and reset each episode, and callable
                       opponents (snapshots of the learner) read advised observations of their
                       own seat too
illegal action         ``illegal_action="raise"`` (default of this class): :class:`IllegalActionError`
                       naming the action and the legal set, nothing changes. ``"lose"`` (default
                       of the ``gymnasium.make`` ids): as PettingZoo's classic envs, the episode
                       ends (terminated) with reward -1 for the learner and
                       ``info["illegal_action"]`` set -- for learners without masking, and for
                       Gymnasium's and SB3's ``check_env``, which step with unmasked samples
rendering              ``render_mode="ansi"``: the table as text. ``"rgb_array"``: an ``H x W x 3``
                       uint8 picture of the table (:mod:`card_envs.core.render`, extra ``render``),
                       every hand face up; ``render_seat=k`` draws seat ``k``'s view and
                       ``render_seat="learner"`` the learner's (hidden cards face down, drawn from
                       that seat's view alone). One size per game config, ``metadata["render_fps"]``
                       1: Gymnasium's ``RenderCollection`` collects an episode's frames, and
                       ``RecordVideo`` writes them as mp4 once moviepy is installed
                       (``pip install "gymnasium[other]"``); ``card_envs.core.render.save_gif`` as GIF
=====================  ======================================================================

Opponents. Each is either an agent (``agents.players.base.Agent``: ``reset(game, seat)`` at the start of
an episode, then ``act(decision)`` with a :class:`~card_envs.core.decision.Decision`; it reads only
its seat's view) or any callable policy ``policy(observation, mask) -> action`` on that seat's
observation vector and int8 mask. They are passed as objects, never as names: this module cannot
import ``agents`` (layers point down), so the caller builds them (``agents.players.registry.make_agent(game,
"heuristic:counting")``, a trained policy, ...). Without ``opponents`` every other seat plays
:class:`RandomPolicy` (uniformly random legal actions), so ``gymnasium.make(id)`` works as is.
``opponents`` is a sequence of them (one is drawn uniformly per seat and episode) or a pool
object with ``sample(rng, seat) -> opponent`` (``train.pool.OpponentPool``); the env's seeded
generator makes every draw, and reseeds every opponent's ``rng`` attribute (an ``Agent`` has one)
at each reset, so ``reset(seed=s)`` fixes the deal, the seat, the line-up and the opponents' play.
An agent instance drawn for several seats of one episode is reset once per seat, so agents
that keep per-episode memory should come from a pool that gives each seat its own instance.

Episodes. If the game ends before the learner's first decision (possible in games with early
eliminations), the deal is replayed from the next draw of the generator, since a Gymnasium
episode cannot end at ``reset``. A learner eliminated early (``state.is_out``) has no more
decisions: the opponents play the game out and the final step carries its result.

This module imports neither torch nor any RL library.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces

from card_envs.core.config import finite_number
from card_envs.core.decision import Decision
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import ConfigError, StateError
from card_envs.core.render import check_render_seat, frame

#: redeals allowed when games keep ending before the learner's first decision
MAX_REDEALS = 100


class SingleAgentEnv(gymnasium.Env):
    """One learner seat of ``game`` against ``opponents``; see the module docstring."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}

    def __init__(self, game: str | Game, opponents: Any = None, *, seat: int | None = None,
                 options: Mapping[str, Any] | None = None, illegal_action: str = "raise",
                 render_mode: str | None = None, baseline: Any = None, draw_reward: float = 0.0,
                 advisor: Any = None, advise: Callable[[Decision, Any], np.ndarray] | None = None,
                 render_seat: int | str | None = None, **game_options: Any) -> None:
        super().__init__()
        self.game = _make_game(game, options, game_options)
        players = self.game.num_players
        if players < 2:
            raise ConfigError(f"{self.game.name}: a single-agent view needs at least 2 seats, the game has {players}")
        if seat is not None and not (isinstance(seat, (int, np.integer)) and 0 <= seat < players):
            raise ConfigError(f"seat must be None (random) or a seat 0..{players - 1}, got {seat!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}")
        #: whose view ``rgb_array`` draws: None (every hand face up), a seat, or ``"learner"`` (the learner's seat)
        self.render_seat: int | Literal["learner"] | None = "learner" \
            if render_seat == "learner" and render_mode == "rgb_array" else \
            check_render_seat(render_seat, render_mode, players)
        if illegal_action not in ("raise", "lose"):
            raise ConfigError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.opponents = _check_opponents([RandomPolicy()] if opponents is None else opponents)
        if baseline is not None and not hasattr(baseline, "act"):
            raise ConfigError(f"baseline must be an Agent (with act(decision)), got {baseline!r}")
        self.baseline = baseline
        self.draw_reward = finite_number("draw_reward", draw_reward)
        self._replay: tuple[GameState, list[int | None]] | None = None  # the deal and the opponents' seeds
        self.fixed_seat = None if seat is None else int(seat)
        if advisor is not None and not hasattr(advisor, "act"):
            raise ConfigError(f"advisor must be an Agent (with act(decision)), got {advisor!r}")
        if (advisor is None) != (advise is None) or (advise is not None and not callable(advise)):
            raise ConfigError("advisor and advise go together: advisor=<Agent>, advise=<hook (decision, advisor) -> "
                              "observation>, e.g. agents.players.base.advised_observation")
        #: one copy of the advisor per seat (an advisor may remember the episode), or None
        self.advisors = None if advisor is None else [copy.deepcopy(advisor) for _ in range(players)]
        self.advise = advise
        low, high = self.game.observation_bounds()
        if advisor is not None:  # the advice: a one-hot over the actions
            low = np.concatenate([low, np.zeros(self.game.num_actions, np.float32)])
            high = np.concatenate([high, np.ones(self.game.num_actions, np.float32)])
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self.state: GameState | None = None
        self.ended = True  # no episode under way until reset
        self._carried = 0.0  # reward earned during reset, paid with the first step
        self.seat = 0
        self.lineup: list[Any] = []
        self._mask = np.zeros(self.game.num_actions, np.int8)
        self._no_mask = self._mask
        self._advisor_seeds: list[int] = []

    # -- Gymnasium API ------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal (``options`` are the game's reset options, e.g. ``{"deck": [...]}``), pick the
        learner's seat and the opponents, and play until the learner's first decision."""
        if options:
            self.game.check_reset_options(options)  # before anything changes
        super().reset(seed=seed)
        rng = self.np_random
        for _ in range(MAX_REDEALS):
            self.seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(self.game.num_players))
            self.lineup = [None if s == self.seat else self._draw_opponent(rng, s)
                           for s in range(self.game.num_players)]
            self.state = self.game.new_state(rng, options)
            seeds = [int(rng.integers(2**63)) if isinstance(getattr(o, "rng", None), np.random.Generator) else None
                     for o in self.lineup]
            # drawn before the replay's copy: the state deals its later hands from this same generator
            self._advisor_seeds = [int(rng.integers(2**63)) for _ in self.advisors or ()]
            if self.baseline is not None:
                self._replay = (self.state.clone(), seeds)
            self._seat_opponents(seeds)
            self._seat_advisors()
            self._carried = self._play_opponents()
            if not self.state.is_over:
                self.ended = False
                return self._observation(), {}
        raise StateError(f"{self.game.name}: {MAX_REDEALS} deals in a row ended before the learner's first decision")

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self.state
        if self.ended or state is None:  # no state: not started, so ended
            raise StateError(f"{self.game.name}: step() needs reset() first (the episode is over or not started)")
        if isinstance(action, (np.integer, np.ndarray)) and np.ndim(action) == 0:
            action = int(action)
        if self.illegal_action == "lose" and not (isinstance(action, int) and 0 <= action < len(self._mask)
                                                   and self._mask[action]):
            return self._lose_on_illegal(action)
        state.apply(action)
        reward = self._carried + state.rewards[self.seat]
        self._carried = 0.0
        reward += self._play_opponents()
        observation = self._observation()
        if state.is_over:
            self.ended = True
            info = self._final_info()
            if not info["winners"]:
                reward += self.draw_reward
            if self.baseline is not None:
                info["baseline_return"] = self._baseline_return()
                reward -= info["baseline_return"]
            return observation, float(reward), state.terminated, state.truncated, info
        return observation, float(reward), False, False, {}

    def _lose_on_illegal(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.ended = True
        self._mask = self._no_mask
        reward, self._carried = self._carried - 1.0, 0.0
        info = {"illegal_action": action, "seat": self.seat, "won": False, "is_success": False}
        return self._observation(), reward, True, False, info

    def action_masks(self) -> np.ndarray:
        """int8 mask of the learner's legal actions (all zeros once the episode is over)."""
        return self._mask

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without render_mode; create the env with render_mode='ansi' or "
                                  "'rgb_array'")
            return None
        if self.state is None:
            raise StateError("render() needs reset() first")
        if self.render_mode == "rgb_array":
            return frame(self.state, self.seat if self.render_seat == "learner" else self.render_seat)
        return self.state.render()

    # -- the other seats ----------------------------------------------------------------------------

    def _seat_opponents(self, seeds: list[int | None]) -> None:
        """Reseed (from ``seeds``) and reset the lineup's opponents for the game in ``self.state``."""
        for s, opponent in enumerate(self.lineup):
            if opponent is None:
                continue
            if seeds[s] is not None:
                opponent.rng = np.random.default_rng(seeds[s])
            if hasattr(opponent, "act"):
                opponent.reset(self.game, s)

    def _seat_advisors(self) -> None:
        """Reseed (from the episode's seeds) and reset every seat's advisor for the game in ``self.state``."""
        for s, advisor in enumerate(self.advisors or ()):
            advisor.reseed(self._advisor_seeds[s])
            advisor.reset(self.game, s)

    def _baseline_return(self) -> float:
        """The baseline agent's return on this episode's deal, in the learner's seat, against the same
        opponents (reseeded as they were); ``self.state`` is left as the learner's game ended."""
        assert self._replay is not None, "reset() keeps the deal whenever there is a baseline"
        played, seeds = self._replay
        replay = played.clone()
        learner_state, self.state = self.state, replay
        lineup = self.lineup
        try:
            self._seat_opponents(seeds)
            self._seat_advisors()
            self.baseline.reset(self.game, self.seat)
            while not replay.is_over:
                player = replay.current_player
                if player == self.seat:
                    replay.apply(self._agent_action(self.baseline, player))
                else:
                    replay.apply(self._opponent_action(lineup[player], player))
        finally:
            self.state = learner_state
        return float(replay.cumulative[self.seat])

    def _play_opponents(self) -> float:
        """Let opponents act until the learner is to act or the game is over; the learner's reward meanwhile."""
        state, seat, lineup = self._dealt(), self.seat, self.lineup
        earned = 0.0
        while not state.is_over:
            player = state.current_player
            if player == seat:
                self._mask = state.legal_mask()
                return earned
            state.apply(self._opponent_action(lineup[player], player))
            earned += state.rewards[seat]
        self._mask = self._no_mask
        return earned

    def _opponent_action(self, opponent: Any, player: int) -> int:
        if hasattr(opponent, "act"):
            return self._agent_action(opponent, player)
        state = self._dealt()
        return int(opponent(self._encode(player), state.legal_mask()))

    def _agent_action(self, agent: Any, player: int) -> int:
        return agent.act(self._decision(player))

    def _decision(self, player: int) -> Decision:
        """The decision facing ``player`` (the one to act)."""
        state = self._dealt()
        return Decision(self.game, player, state.view(player), state.legal_actions())

    def _draw_opponent(self, rng: np.random.Generator, seat: int) -> Any:
        if hasattr(self.opponents, "sample"):
            return _check_opponent(self.opponents.sample(rng, seat))
        return self.opponents[int(rng.integers(len(self.opponents)))]

    def _dealt(self) -> GameState:
        """``state``, the episode's state; a :class:`StateError` before the first ``reset``."""
        state = self.state
        if state is None:
            raise StateError(f"{self.game.name}: call reset() first")
        return state

    # -- what the learner sees -----------------------------------------------------------------------

    def _observation(self) -> np.ndarray:
        return self._encode(self.seat)

    def _encode(self, player: int) -> np.ndarray:
        """``player``'s observation vector: its encoded view, then the advice if there is an advisor."""
        state, advise = self._dealt(), self.advise
        if self.advisors is None or advise is None:  # the two come together (checked in __init__)
            return self.game.encode(state.view(player))
        if state.is_over or state.current_player != player:
            return np.concatenate([self.game.encode(state.view(player)), np.zeros(self.game.num_actions, np.float32)])
        return advise(self._decision(player), self.advisors[player])

    def _final_info(self) -> dict[str, Any]:
        state = self._dealt()
        winners = state.winners()
        won = self.seat in winners
        return {"returns": state.returns(), "winners": winners, "seat": self.seat,
                "opponents": [_name(o) for o in self.lineup if o is not None], "won": won, "is_success": won}


class RandomPolicy:
    """The default opponent: a uniformly random legal action, as a callable policy ``(observation, mask)
    -> action``. Its ``rng`` is reseeded by the env at every reset (so ``reset(seed=s)`` fixes its play)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(len(legal))])

    def __repr__(self) -> str:
        return self.name


def _make_game(game: str | Game, options: Mapping[str, Any] | None, game_options: Mapping[str, Any]) -> Game:
    if options and game_options:
        raise ConfigError(f"give game options as keywords or as options=, not both (got options={dict(options)} "
                          f"and {', '.join(game_options)})")
    options = {**(options or {}), **game_options}
    if isinstance(game, Game):
        if options:
            raise ConfigError(f"pass game options either to the Game or here, not both (got {', '.join(options)})")
        return game
    import card_envs

    return card_envs.make_game(game, **options)


def _check_opponent(opponent: Any) -> Any:
    if not (hasattr(opponent, "act") or callable(opponent)):
        raise ConfigError(f"an opponent must be an Agent (with act(decision)) or a callable policy "
                          f"(observation, mask) -> action, got {opponent!r}")
    return opponent


def _check_opponents(opponents: Any) -> Any:
    if hasattr(opponents, "sample"):
        return opponents
    if hasattr(opponents, "act") or callable(opponents):
        return [opponents]
    if isinstance(opponents, Sequence) and not isinstance(opponents, str) and len(opponents) > 0:
        return [_check_opponent(o) for o in opponents]
    raise ConfigError(f"opponents must be an opponent, a non-empty sequence of opponents or a pool with "
                      f"sample(rng, seat), got {opponents!r}")


def _name(opponent: Any) -> str:
    return str(getattr(opponent, "name", None) or getattr(opponent, "__name__", None) or type(opponent).__name__)


OpponentPolicy = Callable[[np.ndarray, np.ndarray], int]

__all__ = ["MAX_REDEALS", "OpponentPolicy", "RandomPolicy", "SingleAgentEnv"]
