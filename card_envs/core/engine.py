"""The rules-engine protocol every game implements (in the spirit of OpenSpiel's Game/State).

A game is two classes:

* :class:`Game` -- the static description under one configuration: name, player count,
  action count and names, observation size, ``new_state`` (the deal) and ``encode`` (the
  observation vector of a player's view).
* :class:`GameState` -- one position: ``current_player``, ``legal_actions()``,
  ``legal_mask()``, ``apply(action)``, ``terminated``/``truncated``, the rewards the last
  action earned (``rewards``) and the sum so far (``returns()``), ``view(player)``,
  ``clone()``, ``to_dict()`` / ``Game.state_from_dict``, and ``render()``.

Everything a player may know is in ``view(player)``: a small immutable object. Observation
vectors, rule-based agents and search agents all read views, never the state, so an
information leak is structurally impossible and testable (permute hidden cards; the view
must not change).

Chance comes only from ``state.rng`` (a seeded :class:`numpy.random.Generator`), which
is cloned and serialized with the state, so a game replays exactly from its seed and its
actions (:func:`replay`).

State fields are plain ints, floats, bools, ``None`` and (nested) lists of those, named in
the class attribute ``fields``; clone and (de)serialization are generic over them.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from card_envs.core.config import GameConfig
from card_envs.core.errors import ConfigError, IllegalActionError, StateError

NO_PLAYER = -1  #: ``current_player`` once the game is over

#: Reset-option keys every game accepts and ignores. PettingZoo's ``api_test`` and ``parallel_test`` call
#: ``reset(seed=0, options={"options": 1})`` to check that ``reset`` takes ``options``; that exact key is
#: let through so the stock checks pass, and every other unknown key is an error.
PROBE_RESET_OPTIONS = frozenset({"options"})


class _EncodingModule:
    """``Game._encoding``: the game's encoding module (``<game package>.encoding``), looked up on first use
    and then cached on the game's *class*.

    The encoding depends on the rules, not vice versa, so rules.py cannot import it; and a module kept on
    the instance would make every game, state and environment unpicklable (``cannot pickle 'module'
    object``: no ``copy.deepcopy``, no Ray task, no multiprocessing). On the class it costs one plain
    attribute lookup, and an instance pickles as its config alone.
    """

    def __get__(self, game: Game | None, cls: type[Game]) -> Any:
        module = cls._encoding_module()
        cls._encoding = module  # shadows this descriptor for ``cls`` from now on
        return module


class Game(ABC):
    """A game under one validated configuration. Cheap to build; holds no position."""

    _encoding: Any = _EncodingModule()

    #: versioned environment name, e.g. ``"revolutionary_war_v0"``
    name: ClassVar[str]
    #: the game's option dataclass
    config_class: ClassVar[type[GameConfig]]
    #: the game's state class
    state_class: ClassVar[type[GameState]]
    #: ``Discrete(num_actions)``
    num_actions: ClassVar[int]
    #: name of every action, index = action id (spec section 8)
    action_names: ClassVar[tuple[str, ...]]
    #: the reset-option keys ``new_state`` reads (the spec's stacked decks, e.g. ``("deck", "decks")``)
    reset_options: ClassVar[tuple[str, ...]] = ()
    #: options that change a seat's observation vector but not the play (e.g. Revolution's ``full_recall``): a
    #: model trained under other values of them encodes its own observation of this table's views
    #: (:meth:`encoder_for`)
    observation_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        self.config = self.config_class.from_options(**options)

    @property
    @abstractmethod
    def num_players(self) -> int:
        """Number of seats."""

    @property
    def observation_size(self) -> int:
        """Length of the float32 observation vector (the encoding module's ``OBSERVATION_SIZE``)."""
        return self._encoding.OBSERVATION_SIZE

    def new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None = None) -> GameState:
        """Deal a new episode. ``options`` are reset options: the keys in ``reset_options`` (stacked decks);
        any other key raises :class:`ConfigError` naming the valid ones (``"options"``, PettingZoo's
        signature probe, is the one key ignored: see :data:`PROBE_RESET_OPTIONS`)."""
        if options:
            self.check_reset_options(options)
        return self._new_state(rng, options)

    @abstractmethod
    def _new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None) -> GameState:
        """Deal a new episode under checked reset ``options`` (only keys of ``reset_options``, or None)."""

    def check_reset_options(self, options: Mapping[str, Any]) -> None:
        """Raise :class:`ConfigError` unless every key of ``options`` is a reset option of this game."""
        if not isinstance(options, Mapping):
            raise ConfigError(f"{self.name}: reset options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(self.reset_options) - PROBE_RESET_OPTIONS, key=str)
        if unknown:
            game_options = [key for key in unknown if key in self.config.to_dict()]
            hint = f" ({', '.join(map(repr, game_options))}: a game option, given to the constructor)" \
                if game_options else ""
            raise ConfigError(
                f"{self.name}: unknown reset option(s) {', '.join(map(repr, unknown))}{hint}; valid reset "
                f"options: {', '.join(map(repr, self.reset_options)) or 'none'}"
            )

    def encode(self, view: Any) -> np.ndarray:
        """The float32 observation vector of a player's view (the encoding module's ``encode``)."""
        return self._encoding.encode(view)

    def encoder_for(self, options: Mapping[str, Any]) -> Game | None:
        """The game whose :meth:`encode` gives a model trained under ``options`` (its env options) its
        observation of this table's views: None when that is this table's own observation, else this game with
        the model's :attr:`observation_options`. :class:`ConfigError` when this table's views do not show what
        that observation reads (:meth:`check_encodable`)."""
        defaults = self.config_class()
        wanted = {name: self.config_class.canonical(name, options.get(name, getattr(defaults, name)))
                  for name in self.observation_options}
        if all(getattr(self.config, name) == value for name, value in wanted.items()):
            return None
        self.check_encodable(wanted)
        return type(self)(**{**self.config.to_dict(), **wanted})

    def check_encodable(self, options: Mapping[str, Any]) -> None:
        """Raise :class:`ConfigError` unless this table's views hold everything the observation of a game with
        these :attr:`observation_options` reads. Override in a game whose options change the views."""
        return None

    def max_decisions(self) -> int | None:
        """An upper bound on the decisions of one episode under this config (None: unknown)."""
        return None

    def return_bounds(self) -> tuple[float, float]:
        """``(low, high)``: a range holding every seat's return (``state.returns()``) in any episode under
        this config (OpenSpiel's min/max utility). Each game derives it from its reward options."""
        raise NotImplementedError(f"{self.name} does not state its return bounds")

    def observation_layout(self) -> tuple[tuple[int, int, str], ...]:
        """(start, stop, meaning) of every observation block; by default the encoding module's ``LAYOUT``."""
        return tuple(self._encoding.LAYOUT)

    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float32 arrays: the finite range of every observation entry under this config
        (the observation ``Box``'s bounds; the encoding module's ``observation_bounds(config)``, which its
        layout table documents)."""
        return self._encoding.observation_bounds(self.config)

    def encoding_doc(self) -> str:
        """The docstring holding the observation table (the encoding module's)."""
        return self._encoding.__doc__ or ""

    @classmethod
    def _encoding_module(cls) -> Any:
        return importlib.import_module(f"{cls.__module__.rsplit('.', 1)[0]}.encoding")

    def with_perfect_recall(self) -> Game:
        """This game as seen by players with perfect memory: the same rules, with views that show
        everything a seat has seen so far in the episode. By default ``self``: the views already
        show it. A game whose default views forget (Revolution without ``full_recall``, spec 7.3)
        returns its variant that remembers. Search uses it so that a searching player, and the
        rule-based players it models, know what a player at the table would remember."""
        return self

    @classmethod
    def variant_configs(cls) -> list[dict[str, Any]]:
        """Configurations that together exercise every option (tests and benchmarks sweep them)."""
        return [{}]

    def state_from_dict(self, data: Mapping[str, Any]) -> GameState:
        """Rebuild a state written by :meth:`GameState.to_dict`."""
        if data.get("game") != self.name:
            raise StateError(f"state dict is for game {data.get('game')!r}, not {self.name!r}")
        written = data.get("config")
        if not isinstance(written, Mapping) or not self.config.same_as(written):
            raise StateError(
                f"state dict was written under config {data.get('config')}, this game has {self.config.to_dict()}"
            )
        state = self.state_class.__new__(self.state_class)
        state.game = self
        state._rng_recipe = dict(data["rng"])
        for name in state.fields:
            setattr(state, name, _copy_value(data["fields"][name]))
        return state

    def action_name(self, action: int) -> str:
        return self.action_names[action]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config})"


class GameState(ABC):
    """One position of a game. Mutable: ``apply`` changes it in place; ``clone`` copies it."""

    #: serializable attributes (ints, floats, bools, None, nested lists), the whole position
    fields: ClassVar[tuple[str, ...]]

    game: Game
    #: the state's generator once built; until then ``_rng_recipe`` says how to build it (a seed or a
    #: bit-generator state dict), so clones and samples cost no generator unless they meet chance
    _rng: np.random.Generator | None = None
    _rng_recipe: int | dict[str, Any] | None = None
    #: seat to act, or ``NO_PLAYER`` when the episode is over
    current_player: int
    terminated: bool
    truncated: bool
    #: reward of every seat earned by the last ``apply`` (zero-sum)
    rewards: list[float]
    #: sum of ``rewards`` over the episode so far
    cumulative: list[float]
    #: every action applied since the deal
    history: list[int]

    # -- to implement in a game -------------------------------------------------------------

    @abstractmethod
    def legal_actions(self) -> list[int]:
        """Legal actions of ``current_player`` in increasing order (empty when over)."""

    @abstractmethod
    def _apply(self, action: int) -> None:
        """Apply a legal action; set ``rewards`` for this step (already zeroed by ``apply``)."""

    @abstractmethod
    def view(self, player: int) -> Any:
        """Exactly what ``player`` may know, as an immutable (hashable, comparable) object."""

    @abstractmethod
    def render(self) -> str:
        """A text picture of the table from a neutral seat."""

    @abstractmethod
    def card_locations(self) -> dict[str, list[int]]:
        """Every physical card of the game by zone (``"hand_0"``, ``"deck"``, ...).

        Conservation: the zones together hold each card of the game exactly once.
        """

    @abstractmethod
    def sample_hidden(self, player: int, rng: np.random.Generator) -> GameState:
        """A copy in which everything ``player`` cannot see is redrawn at random, consistently
        with ``view(player)``: the copy's ``view(player)`` equals this one's. Future chance
        (the generator) is reseeded from ``rng``. Used by the no-leak tests and by search."""

    def sample_remembered(self, player: int, rng: np.random.Generator) -> GameState:
        """As :meth:`sample_hidden`, for a ``player`` with perfect memory: the copy keeps what
        ``view(player)`` shows under ``game.with_perfect_recall()``, and is a state of that game, so
        agents acting in it remember too. The same as ``sample_hidden`` when the views already show
        everything seen."""
        remembering = self.game.with_perfect_recall()
        if remembering is self.game:
            return self.sample_hidden(player, rng)
        seen_by_memory = self.clone()
        seen_by_memory.game = remembering
        return seen_by_memory.sample_hidden(player, rng)

    # -- shared ---------------------------------------------------------------------------------

    @property
    def rng(self) -> np.random.Generator:
        """The state's only source of chance (built on first use after a clone, a sample or a load)."""
        rng = self._rng
        if rng is None:
            rng = self._rng = _rng_from_recipe(self._rng_recipe)
            self._rng_recipe = None
        return rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value
        self._rng_recipe = None

    def _copy_rng_to(self, twin: GameState) -> None:
        """Give ``twin`` this state's future chance, as a recipe built only if ``twin`` uses it."""
        twin._rng = None
        twin._rng_recipe = self._rng_recipe if self._rng is None else self._rng.bit_generator.state

    def _reseed_from(self, rng: np.random.Generator) -> None:
        """New future chance drawn from ``rng`` (for determinizations: the real future stays hidden)."""
        self._rng = None
        self._rng_recipe = int(rng.integers(2**63))

    @property
    def is_over(self) -> bool:
        return self.terminated or self.truncated

    def legal_mask(self) -> np.ndarray:
        """``int8`` mask of ``legal_actions()`` (all zeros when over)."""
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        mask[self.legal_actions()] = 1
        return mask

    def is_out(self, player: int) -> bool:
        """True once ``player`` has left the game early (eliminated). Never, unless a game says so."""
        return False

    def apply(self, action: int) -> None:
        """Apply ``action`` for ``current_player``.

        Raises :class:`IllegalActionError` (state unchanged) for an action that is out of
        range or not legal, naming the action and the legal set.
        """
        if self.terminated or self.truncated:
            raise StateError(f"{self.game.name}: the episode is over; reset before acting")
        legal = self.legal_actions()
        if not _is_action_id(action) or action not in legal:
            raise IllegalActionError(self._illegal_message(action, legal))
        action = int(action)
        self.rewards = [0.0] * len(self.rewards)
        self._apply(action)
        self.history.append(action)
        cumulative = self.cumulative
        for seat, reward in enumerate(self.rewards):
            cumulative[seat] += reward

    def winners(self) -> list[int]:
        """Seats that won: the rules' winner set, several on a shared win.

        Empty while playing, after a truncation that the game does not score, and on a *draw*:
        when every seat shares the result (which pays every seat 0). So being among the winners
        always means a positive reward, in every game and for every player count."""
        won = self.rules_winners() if self.is_over else []
        return [] if len(won) == self.game.num_players else list(won)

    def rules_winners(self) -> list[int]:
        """The rules' winner set once the episode is over (e.g. W of R18 in Battlecards), all seats on
        a draw. By default the seats with the best total reward; games override it."""
        best = max(self.cumulative)
        return [seat for seat, total in enumerate(self.cumulative) if total == best]

    def returns(self) -> list[float]:
        """Total reward of every seat so far (the final result once ``is_over``)."""
        return list(self.cumulative)

    def clone(self) -> GameState:
        """An independent copy, including the random generator's state."""
        twin = self.__class__.__new__(self.__class__)
        twin.game = self.game
        self._copy_rng_to(twin)
        for name in self.fields:
            setattr(twin, name, _copy_value(getattr(self, name)))
        return twin

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the whole position (config and random generator included)."""
        return {
            "game": self.game.name,
            "config": self.game.config.to_dict(),
            "rng": self.rng.bit_generator.state,
            "fields": {name: _copy_value(getattr(self, name)) for name in self.fields},
        }

    def _illegal_message(self, action: Any, legal: Sequence[int]) -> str:
        names = self.game.action_names
        legal_names = ", ".join(f"{a} {names[a]!r}" for a in legal)
        if _is_action_id(action) and 0 <= action < len(names):
            what = f"action {int(action)} {names[int(action)]!r} is illegal"
        else:
            what = f"action {action!r} is out of range 0..{len(names) - 1}"
        return f"{self.game.name}: {what} for player_{self.current_player}; legal: {legal_names}"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()  # type: ignore[union-attr]

    __hash__ = None  # type: ignore[assignment]


def unit_bounds(size: int, wider: Sequence[tuple[int, int, float]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Observation bounds where every entry lies in [0, 1] except the ``(start, stop, high)`` blocks of
    ``wider`` (entries ``start..stop-1`` lie in [0, high]); for an encoding's ``observation_bounds``."""
    low = np.zeros(size, np.float32)
    high = np.ones(size, np.float32)
    for start, stop, top in wider:
        high[start:stop] = top
    return low, high


def replay(game: Game, actions: Sequence[int], *, seed: int | None = None,
           options: Mapping[str, Any] | None = None) -> GameState:
    """Deal with ``seed``/``options`` and apply ``actions``; the exact same episode every time."""
    state = game.new_state(np.random.default_rng(seed), options)
    for action in actions:
        state.apply(action)
    return state


def _rng_from_recipe(recipe: int | dict[str, Any] | None) -> np.random.Generator:
    """A generator from a seed (``default_rng(seed)``) or from a bit-generator state dict."""
    if isinstance(recipe, dict):
        rng = np.random.Generator(getattr(np.random, recipe["bit_generator"])())
        rng.bit_generator.state = recipe
        return rng
    return np.random.default_rng(recipe)


def _is_action_id(action: Any) -> bool:
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


def _copy_value(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_copy_value(v) if isinstance(v, (list, tuple)) else v for v in value]
    return value
