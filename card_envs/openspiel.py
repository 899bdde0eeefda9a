"""The four games as OpenSpiel Python games (optional extra ``card-envs[openspiel]``, ``open-spiel==2.0.2``).

Importing this module registers, on our rules engines (``card_envs.make_game``; no second copy of any rule):

=======================================  =========================  =======================================
OpenSpiel name                           engine                     players
=======================================  =========================  =======================================
``python_card_envs_revolutionary_war``   ``revolutionary_war_v0``   2
``python_card_envs_revolution``          ``revolution_v0``          4
``python_card_envs_battlecards``         ``battlecards_v0``         2-6 (parameter ``num_players``)
``python_card_envs_bloodlines``          ``bloodlines_v0``          2
=======================================  =========================  =======================================

>>> import pyspiel, card_envs.openspiel
>>> game = pyspiel.load_game("python_card_envs_battlecards", {"num_players": 3, "rng_seed": 7})
>>> state = game.new_initial_state()          # a chance node: the shuffle and deal
>>> pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)

Parameters
----------
Every game option is a parameter of the same name and default (the tables of each env's docstring), with
OpenSpiel's scalar types: an option that may be ``None`` (or ``"random"``) is an int parameter where ``-1``
stands for ``None`` (Revolution's ``first_dealer``: ``"random"``); Bloodlines' ``bloodlines`` pair is a
string, ``""`` for ``None`` or two suit letters (``"HS"``); ``parameters_from_options(config_class, options)``
gives the parameters of game options in any form a config takes (e.g. a YAML ``env_options``). Two more:

=============  =========  ================================================================================
``rng_seed``   ``-1``     seed of the game's generator, from which every ``new_initial_state()`` draws its
                          deal seed (``-1``: fresh entropy). OpenSpiel builds clones through
                          ``new_initial_state()`` too, so a clone also draws one.
``deck``       ``""``     space-separated card codes (``"2C 3C 4C 5C"``): the deal is then a random
                          order of exactly these cards, as *explicit* chance nodes (one per card, each
                          remaining card equally likely), passed to the engine as the reset option
                          ``deck``. Only for games whose ``deck`` option takes any set of cards
                          (Battlecards) and configs with no chance after the deal
                          (``shuffle_mid_game=False``, a fixed ``first_leader``): the game type is then
                          ``EXPLICIT_STOCHASTIC`` and tabular algorithms (CFR, exploitability) apply.
=============  =========  ================================================================================

Chance
------
A real deck is too large to enumerate (52! orders), and the engines shuffle again mid-game (later games of
a match, later hands, Battlecards' recycles), so by default the game type declares
``SAMPLED_STOCHASTIC``: the first node is a chance node with one outcome, ``deal``, whose ``apply_action``
shuffles and deals from the state's own generator (seeded when the state was created), and later
shuffles inside the engine draw from the same generator. A clone copies the generator, so a clone
continues exactly like the original; serialization (OpenSpiel pickles a Python state's attributes)
round-trips it too.

States
------
========================  ==========================================================================
``current_player``        the engine's seat to act; ``CHANCE`` before the deal, ``TERMINAL`` at the end
``legal_actions``         the engine's legal actions (ids as in the env: ``env.unwrapped.action_names``)
``rewards`` / ``returns`` the engine's rewards of the last action / returns so far (``REWARDS`` model,
                          zero-sum; min/max utility: ``Game.return_bounds()``)
``observation_tensor``    our encoding of the player's view: exactly the env's ``observation`` vector
``observation_string``    ``repr`` of the player's view (what the seat may know now)
``information_state_*``   the string names the player's information set exactly: a digest of the seat's
                          whole history (every view it was shown and every action it took), so two
                          histories share it only if the seat cannot tell them apart (perfect recall).
                          The tensor is our encoding of the seat's view *with perfect memory*
                          (``Game.with_perfect_recall()``; the observation tensor except in Revolution
                          without ``full_recall``): a fixed-size summary of the information set
``resample_from_infostate``  a state the player cannot tell from this one: hidden cards and future
                          chance redrawn (``GameState.sample_remembered``) from a seed drawn with the
                          given sampler; the player's information-state string is kept, the others'
                          are derived from it alone (so the keys of a search tree leak nothing)
========================  ==========================================================================

OpenSpiel's Python ISMCTS bot (``open_spiel.python.algorithms.ismcts.ISMCTSBot``) runs on these games; its
C++ ``pyspiel.ISMCTSBot`` does not support Python games (it crashes on OpenSpiel's own ``python_kuhn_poker``).
``benchmarks/openspiel_ismcts.py`` pits it against our rule-based players next to ``agents.players.ismcts``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import typing
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

import card_envs
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import ConfigError

#: OpenSpiel short name -> our environment name
GAME_NAMES: dict[str, str] = {
    "python_card_envs_revolutionary_war": "revolutionary_war_v0",
    "python_card_envs_revolution": "revolution_v0",
    "python_card_envs_battlecards": "battlecards_v0",
    "python_card_envs_bloodlines": "bloodlines_v0",
}
NONE_PARAMETER = -1  #: an int parameter's value for an option's ``None`` (or ``"random"``)
DEAL = 0  #: the one outcome of a sampled deal
_EXTRA_PARAMETERS = {"rng_seed": -1, "deck": ""}
_NO_MORE_THAN = 2**31 - 1  #: max_game_length of a config without a decision bound


# -- parameters <-> options ----------------------------------------------------------------------------------


def _option_kinds(config_class: type) -> dict[str, tuple[str, Any]]:
    """Every option: (how it maps to a parameter, its default as a parameter value)."""
    hints = typing.get_type_hints(config_class)
    kinds = {}
    for field in dataclasses.fields(config_class):
        allowed = typing.get_args(hints[field.name]) or (hints[field.name],)
        default = field.default
        if hints[field.name] in (bool, int, float) or typing.get_origin(hints[field.name]) is typing.Literal:
            kinds[field.name] = ("plain", default)
        elif int in allowed:  # int | None, int | Literal["random"]: -1 stands for the other value
            other = next(a for a in allowed if a is not int)
            other = None if other is type(None) else typing.get_args(other)[0]
            kinds[field.name] = ("int_or", (other, NONE_PARAMETER if default == other else default))
        else:  # a pair of suits or None: a string
            kinds[field.name] = ("letters", "" if default is None else "".join(default))
    return kinds


def _parameter_defaults(config_class: type) -> dict[str, Any]:
    defaults = {name: (value[1] if kind == "int_or" else value)
                for name, (kind, value) in _option_kinds(config_class).items()}
    return {**defaults, **_EXTRA_PARAMETERS}


def options_from_parameters(config_class: type, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The game options that OpenSpiel parameters stand for (the inverse of the module's table)."""
    options = {}
    for name, (kind, value) in _option_kinds(config_class).items():
        if name not in parameters:
            continue
        given = parameters[name]
        if kind == "int_or":
            other, _ = value
            options[name] = other if given == NONE_PARAMETER else given
        elif kind == "letters":
            options[name] = None if given == "" else tuple(given.replace(",", "").replace(" ", ""))
        else:
            options[name] = given
    return options


def parameters_from_options(config_class: type, options: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenSpiel parameters that stand for game ``options`` (the inverse of :func:`options_from_parameters`),
    one for each option given. The options are read as a config reads them (a list or a tuple alike, e.g. from
    JSON or YAML), so equal configs give equal parameters; a bad option is the config's :class:`ConfigError`."""
    config = config_class.from_options(**options)
    parameters = {}
    for name, (kind, value) in _option_kinds(config_class).items():
        if name not in options:
            continue
        held = getattr(config, name)
        if kind == "int_or":
            other, _ = value
            parameters[name] = NONE_PARAMETER if held == other else held
        elif kind == "letters":
            parameters[name] = "" if held is None else "".join(held)
        else:
            parameters[name] = held
    return parameters


# -- the game ----------------------------------------------------------------------------------------------


def _player_range(name: str) -> tuple[int, int]:
    game = card_envs.make_game(name)
    if "num_players" not in game.config.to_dict():
        return game.num_players, game.num_players
    counts = []
    for n in range(1, 11):
        try:
            card_envs.make_game(name, num_players=n)
        except ConfigError:
            continue
        counts.append(n)
    return min(counts), max(counts)


def _game_type(short_name: str, name: str, chance_mode: Any) -> pyspiel.GameType:
    engine = card_envs.make_game(name)
    low, high = _player_range(name)
    return pyspiel.GameType(
        short_name=short_name,
        long_name=f"card_envs {name} (Python)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=chance_mode,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=high,
        min_num_players=low,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameter_defaults(type(engine.config)),
    )


class CardEnvsGame(pyspiel.Game):
    """One of our games under one set of parameters (a subclass per registered name)."""

    short_name: typing.ClassVar[str]
    env_name: typing.ClassVar[str]

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = dict(params or {})
        config_class = card_envs.make_game(self.env_name).config_class
        unknown = sorted(set(params) - set(_parameter_defaults(config_class)))
        if unknown:
            raise ConfigError(f"{self.short_name}: unknown parameter(s) {', '.join(map(repr, unknown))}; valid: "
                              f"{', '.join(_parameter_defaults(config_class))}")
        #: the rules engine
        self.engine: Game = card_envs.make_game(self.env_name, **options_from_parameters(config_class, params))
        self.deck: list[str] | None = params.get("deck", "").split() or None
        explicit = self.deck is not None
        if explicit:
            self._check_explicit_deck()
        seed = params.get("rng_seed", -1)
        self._rng = np.random.default_rng(None if seed == NONE_PARAMETER else seed)
        least, most = self.engine.return_bounds()
        slack = 1e-6 * max(1.0, most - least)  # returns are sums of float rewards
        max_length = self.engine.max_decisions()
        chance_mode = pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC if explicit else \
            pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        super().__init__(
            _game_type(self.short_name, self.env_name, chance_mode),
            pyspiel.GameInfo(
                num_distinct_actions=self.engine.num_actions,
                max_chance_outcomes=1 + max(self._deck_ids()) if explicit else 1,
                num_players=self.engine.num_players,
                min_utility=least - slack,
                max_utility=most + slack,
                utility_sum=0.0,
                max_game_length=_NO_MORE_THAN if max_length is None else max_length),
            params,
        )

    def new_initial_state(self) -> CardEnvsState:
        return CardEnvsState(self)

    def new_initial_state_from_seed(self, deal_seed: int) -> CardEnvsState:
        """A state that deals exactly as the engine's ``new_state(numpy.random.default_rng(deal_seed))`` (so
        OpenSpiel bots and ``agents.tournaments.match`` can play the same deals); sampled chance only."""
        if self.deck is not None:
            raise ConfigError(f"{self.short_name}: with parameter 'deck' the deal is explicit chance, not a seed")
        state = CardEnvsState(self)
        state._deal_seed = int(deal_seed)
        return state

    def __reduce_ex__(self, protocol: Any) -> tuple:
        # pyspiel pickles a game with Game::Serialize, which needs GetRNGState (not available to Python games)
        return _restore_game, (str(self), self._rng.bit_generator.state)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> CardEnvsObserver:
        return CardEnvsObserver(self, iig_obs_type, params)

    # -- the deal ----------------------------------------------------------------------------------------

    def next_deal_seed(self) -> int:
        return int(self._rng.integers(2**63))

    def _deck_ids(self) -> list[int]:
        from card_envs.cards import card_id

        return [card_id(code) for code in self.deck]

    def _check_explicit_deck(self) -> None:
        """``deck`` needs a game whose ``deck`` option takes these cards, and no chance after the deal."""
        engine = self.engine
        if "deck" not in engine.reset_options:
            raise ConfigError(f"{self.short_name}: parameter 'deck' needs the engine's reset option 'deck'; "
                              f"{engine.name} has {', '.join(engine.reset_options)}")
        probe = np.random.default_rng(0)
        before = probe.bit_generator.state
        engine.new_state(probe, {"deck": self.deck})  # DeckError on a bad deck
        if probe.bit_generator.state != before:
            raise ConfigError(f"{self.short_name}: with parameter 'deck' the deal may draw nothing more at random "
                              f"(explicit chance), but this config does (e.g. a random first player)")

    def deal(self, rng: np.random.Generator, order: list[int] | None) -> GameState:
        """The engine's deal: from ``rng`` (sampled), or of the explicit ``order`` of deck cards."""
        if order is None:
            return self.engine.new_state(rng)
        from card_envs.cards import card_code

        state = self.engine.new_state(np.random.default_rng(0), {"deck": [card_code(c) for c in order]})
        state._rng, state._rng_recipe = None, 0  # built only if the engine draws: see CardEnvsState._apply_action
        return state


# -- the state ---------------------------------------------------------------------------------------------


class _Position:
    """The engine state inside a pyspiel state. OpenSpiel clones a Python state by deep-copying its attributes;
    this one copies as the engine's own ``clone`` (which shares the game) instead of copying the game too."""

    __slots__ = ("state",)

    def __init__(self, state: GameState) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict) -> _Position:
        return _Position(self.state.clone())

    def __getstate__(self) -> GameState:
        return self.state

    def __setstate__(self, state: GameState) -> None:
        self.state = state


def _digest(*pieces: bytes) -> bytes:
    return hashlib.blake2b(b"|".join(pieces), digest_size=16).digest()


class _Recall:
    """Every seat's information-state digest: a hash chain over everything the seat was shown (its views)
    and did (its actions). Extending it costs only the views; they are hashed when a digest is read or the
    state is copied, so random rollouts, which read no information state, skip the hashing."""

    __slots__ = ("digests", "pending")

    def __init__(self, seats: int) -> None:
        self.digests = [_digest(b"seat", str(p).encode()) for p in range(seats)]
        self.pending: list[list[tuple[bytes, Any]]] = [[] for _ in range(seats)]

    def see(self, seat: int, done: bytes, view: Any) -> None:
        self.pending[seat].append((done, view))

    def digest(self, seat: int) -> bytes:
        pending = self.pending[seat]
        if pending:
            value = self.digests[seat]
            for done, view in pending:
                value = _digest(value, done, repr(view).encode())
            self.digests[seat] = value
            pending.clear()
        return self.digests[seat]

    def replace(self, digests: list[bytes]) -> None:
        self.digests = list(digests)
        self.pending = [[] for _ in digests]

    def __deepcopy__(self, memo: dict) -> _Recall:
        twin = _Recall.__new__(_Recall)
        twin.digests = [self.digest(seat) for seat in range(len(self.digests))]
        twin.pending = [[] for _ in self.digests]
        return twin

    def __getstate__(self) -> list[bytes]:
        return [self.digest(seat) for seat in range(len(self.digests))]

    def __setstate__(self, digests: list[bytes]) -> None:
        self.replace(digests)


class CardEnvsState(pyspiel.State):
    """A position: before the deal a chance node, then the engine's state (see the module docstring)."""

    def __init__(self, game: CardEnvsGame) -> None:
        super().__init__(game)
        self._position: _Position | None = None
        self._deal_seed = game.next_deal_seed()
        self._dealt: list[int] = []  # explicit chance: the deck order so far
        n = game.num_players()
        self._rewards = [0.0] * n
        self._recall = _Recall(n)  # information-state digests

    # -- OpenSpiel API ----------------------------------------------------------------------------------

    def current_player(self) -> int:
        if self._position is None:
            return pyspiel.PlayerId.CHANCE
        engine = self._position.state
        return pyspiel.PlayerId.TERMINAL if engine.is_over else engine.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self._position.state.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        game = self.get_game()
        if game.deck is None:
            return [(DEAL, 1.0)]
        left = sorted(set(game._deck_ids()) - set(self._dealt))
        return [(card, 1.0 / len(left)) for card in left]

    def _apply_action(self, action: int) -> None:
        game = self.get_game()
        if self._position is None:
            self._deal(game, action)
            return
        engine = self._position.state
        acting = engine.current_player
        engine.apply(action)
        if game.deck is not None and engine._rng is not None:
            raise ConfigError(f"{game.short_name}: the engine drew at random after an explicit deal (a shuffle "
                              f"mid-game); use shuffle_mid_game=False or drop parameter 'deck'")
        self._rewards = list(engine.rewards)
        self._observe(engine, acting, action)

    def _deal(self, game: CardEnvsGame, outcome: int) -> None:
        if game.deck is None:
            engine = game.deal(np.random.default_rng(self._deal_seed), None)
        else:
            self._dealt.append(outcome)
            if len(self._dealt) < len(game.deck):
                return
            engine = game.deal(None, self._dealt)
        self._position = _Position(engine)
        self._observe(engine, None, None)

    def _observe(self, engine: GameState, acting: int | None, action: int | None) -> None:
        """Extend every seat's history digest with what it saw (and, for the actor, what it did)."""
        recall = self._recall
        for seat in range(len(self._rewards)):
            recall.see(seat, f"a{action}".encode() if seat == acting else b"", engine.view(seat))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self.get_game().deck is None:
                return "deal"
            from card_envs.cards import card_code

            return f"deal {card_code(action)}"
        return self.get_game().engine.action_names[action]

    def is_terminal(self) -> bool:
        return self._position is not None and self._position.state.is_over

    def returns(self) -> list[float]:
        if self._position is None:
            return [0.0] * len(self._rewards)
        return [float(r) for r in self._position.state.returns()]

    def rewards(self) -> list[float]:
        return list(self._rewards)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CardEnvsState:
        """A state ``player_id`` cannot tell from this one (see the module docstring)."""
        twin = self.clone()
        if self._position is None:
            return twin
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        engine = self._position.state
        sampled = engine.sample_remembered(player_id, rng)
        sampled.game = engine.game  # consistent with perfect memory; views as the configured game shows them
        twin._position = _Position(sampled)
        mine = self._recall.digest(player_id)
        twin._recall.replace([mine if seat == player_id else _digest(b"sampled", mine, str(seat).encode())
                              for seat in range(len(self._rewards))])
        return twin

    def __reduce_ex__(self, protocol: Any) -> tuple:
        # pyspiel pickles a state through SerializeGameAndState, which a sampled-chance Python game cannot
        # write (Game::GetRNGState); the state's own serialization carries everything, its generator included
        game = self.get_game()
        return _restore_state, (str(game), game._rng.bit_generator.state, self.serialize())

    @property
    def engine_state(self) -> GameState | None:
        """The engine's position (None before the deal): for agents (``Decision.of``) and the env's tools."""
        return None if self._position is None else self._position.state

    def __str__(self) -> str:
        if self._position is None:
            dealt = "" if not self._dealt else " dealt so far: " + " ".join(map(str, self._dealt))
            return f"before the deal (seed {self._deal_seed}){dealt}"
        return self._position.state.render()

    # -- helpers for the observer -----------------------------------------------------------------------

    def view(self, player: int, remember: bool = False) -> Any:
        """``player``'s view (None before the deal); ``remember``: as a seat with perfect memory sees it."""
        if self._position is None:
            return None
        engine = self._position.state
        remembering = engine.game.with_perfect_recall()
        if not remember or remembering is engine.game:
            return engine.view(player)
        twin = engine.clone()
        twin.game = remembering
        return twin.view(player)

    def information_digest(self, player: int) -> str:
        return self._recall.digest(player).hex()


# -- observations ------------------------------------------------------------------------------------------


class CardEnvsObserver:
    """OpenSpiel's Python observer: ``observation`` (perfect_recall=False) or ``info_state`` (True)."""

    def __init__(self, game: CardEnvsGame, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self.remember = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        if iig_obs_type is not None and (iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
                                         or not iig_obs_type.public_info):
            raise ValueError("card_envs games observe a seat's own view only (public_info=True, "
                             "private_info=SINGLE_PLAYER), with or without perfect_recall")
        self.encoder = game.engine.with_perfect_recall() if self.remember else game.engine
        self.tensor = np.zeros(self.encoder.observation_size, np.float32)
        self.dict = {"info_state" if self.remember else "observation": self.tensor}

    def set_from(self, state: CardEnvsState, player: int) -> None:
        view = state.view(player, remember=self.remember)
        if view is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self.encoder.encode(view)

    def string_from(self, state: CardEnvsState, player: int) -> str:
        if self.remember:
            return f"player_{player} history {state.information_digest(player)}"
        view = state.view(player)
        return f"player_{player} " + ("before the deal" if view is None else repr(view))


# -- pickling -----------------------------------------------------------------------------------------------


def _restore_game(game_string: str, rng_state: dict) -> CardEnvsGame:
    game = pyspiel.load_game(game_string)
    game._rng.bit_generator.state = rng_state
    return game


def _restore_state(game_string: str, rng_state: dict, serialized: str) -> CardEnvsState:
    return _restore_game(game_string, rng_state).deserialize_state(serialized)


# -- registration ------------------------------------------------------------------------------------------


def _register() -> None:
    registered = {g.short_name for g in pyspiel.registered_games()}
    for short_name, env_name in GAME_NAMES.items():
        game_class = type(f"{short_name.title().replace('_', '')}Game", (CardEnvsGame,),
                          {"short_name": short_name, "env_name": env_name, "__module__": __name__})
        globals()[game_class.__name__] = game_class
        if short_name not in registered:
            pyspiel.register_game(
                _game_type(short_name, env_name, pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC), game_class)


_register()

__all__ = ["DEAL", "GAME_NAMES", "NONE_PARAMETER", "CardEnvsGame", "CardEnvsObserver", "CardEnvsState",
           "options_from_parameters", "parameters_from_options"]
