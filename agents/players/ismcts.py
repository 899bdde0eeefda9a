"""Information-set Monte Carlo tree search for every game (spec name ``ismcts:<options>``).

Single-observer ISMCTS with determinization (Cowling, Powley & Whitehouse, "Information Set Monte
Carlo Tree Search", IEEE TCIAIG 2012): one tree over the acting player's information sets, keyed by
action sequences. Every simulation draws a *determinization* -- a full state in which everything the
player cannot see is redrawn consistently with what it has seen (``Decision.sample_state``, i.e. the
game's ``sample_hidden``) -- and walks the tree restricted to the actions legal in that determinization.
The searching player has perfect memory (``Game.with_perfect_recall``): in a game whose views forget
(Revolution without ``full_recall`` shows only the previous trick), it still knows every card played
earlier in the hand, as the rule-based players that count cards do, and the determinizations are states
of the remembering game, so the rule-based players acting in them (rollouts, ``opponents=policy``)
remember the hand too instead of playing without memory. Each simulation:

1. **select** with UCB1 over *available* children (a child's exploration term counts the simulations
   in which its action was legal, not its parent's visits -- the paper's availability counts);
2. **expand** one untried legal action;
3. **roll out** with a rollout policy (uniformly random, or any agent from :mod:`agents.players.registry`,
   e.g. the game's strongest rule-based player acting on ``Decision.of(rollout_state)``) to the end,
   or for at most ``depth`` decisions and then evaluate;
4. **back up** the result as a reward for *every* seat (max^n): a node stores per-seat reward sums,
   and the seat to act at its parent picks by its own component. So 2 to 6 players, eliminations and
   out-of-turn decisions (whoever ``current_player`` is) need nothing special.

The move played is the root action with the most visits (ties: higher mean reward, then lower id);
with ``root=cycle`` every root action has the same visits and the best mean reward decides.
Rewards are the game's own returns (``state.returns()``: win/loss, score difference, shaping -- as
configured), so the search optimises what the environment pays.

Options (``ismcts:sims=400,c=1.0,rollout=heuristic:endgame``; every key optional):

============  ============================================================  ==================
key           meaning                                                       default
============  ============================================================  ==================
``sims``      simulations per decision (int >= 1)                           200, unless ``ms``
``ms``        wall-clock budget per decision in milliseconds (> 0); with    none
              ``sims`` too, whichever runs out first
``c``         UCB exploration constant (>= 0), on the scale of the          1.0
              game's returns (win/loss: -1..+1)
``rollout``   rollout policy: ``random`` or a registered agent spec         ``random``
              (``heuristic:<name>``); not ``ismcts`` itself
``depth``     at most this many rollout decisions (int >= 1), then the      none (to the end)
              position is evaluated by ``eval``
``eval``      evaluation at the depth cap or horizon: ``returns`` (rewards  ``returns``
              earned so far) or ``material`` (returns plus a per-game
              estimate of the final result from the public score; see
              ``EVALUATORS``)
``opponents`` ``tree``: the other seats choose by UCB on their own         ``tree``
              rewards inside the tree, as in SO-ISMCTS (max^n);
              ``policy``: they follow the rollout policy there too (an
              opponent model; the tree still branches on their moves), so
              the search plays a best response to that policy
``bias``      progressive bias toward the rollout agent's move at every     0
              UCB choice: ``bias / (visits + 1)`` added to its score, so
              a small budget plays like the agent and a large one
              corrects it; a node tries that move first (needs
              ``rollout=heuristic:<name>``)
``root``      ``ucb``: root actions chosen by UCB like every other node;    ``ucb``
              ``cycle``: the search runs in rounds, each round draws one
              determinization and simulates every legal root action in it
              (common random numbers: the actions are compared on the same
              deals, so the deal's luck cancels), a round is always
              finished, and the move played is the best mean reward
              (with ``bias``: the rollout agent's move's mean plus
              ``bias / (visits + 1)``, ties to that move)
``tree``      the searcher's own decisions searched in the tree per         none (unbounded)
              simulation (int >= 1); its later decisions follow the
              rollout policy. ``tree=1`` with ``root=cycle`` is
              determinized flat Monte Carlo ("PIMC"): every root action
              on the same deals, the searcher's later play by the policy
              (and the others' too, with ``opponents=policy``)
``horizon``   ``game``: simulations run to the end of the game (or          ``game``
              ``depth``); ``hand``: they stop where the hand in progress
              at the root ends and the position is evaluated by ``eval``
              (games dealt in hands: ``HANDS``)
``deal``      ``sampled``: every simulation (round, with ``root=cycle``)    ``sampled``
              draws a determinization; ``true``: it plays in a copy of
              the *real* position, every hidden card visible (future
              chance still reseeded) -- a privileged player that cheats,
              for an imitation *teacher* (``pretrain.teacher``) only:
              the student learns, from its own view, the move the
              position's actual cards favour
============  ============================================================  ==================

A fixed seed and a ``sims`` budget give the same move every time; an ``ms`` budget depends on the
machine's speed (and on what else runs on it). Spent effort is recorded in :attr:`ISMCTSAgent.stats`
(decisions, searched decisions, simulations, wall-clock and CPU seconds).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.players.base import Agent, Decision
from card_envs import ENV_NAMES
from card_envs.core.engine import Game, GameState
from card_envs.core.errors import ConfigError

#: default simulation budget when neither ``sims`` nor ``ms`` is given
DEFAULT_SIMS = 200


# -- evaluations at the depth cap ------------------------------------------------------------------


def _evaluate_returns(state: GameState) -> list[float]:
    return state.returns()


def _revolutionary_war_material(state: Any) -> list[float]:
    """Returns so far, plus the score-pile lead read as a win chance (R15/R16), in the win/loss scale."""
    returns = state.returns()
    if state.is_over or state.game.config.reward_mode != "win_loss" or state.game.config.target_score is not None:
        return returns
    scores = state.scores()
    lead = math.tanh((scores[0] - scores[1]) / 8.0)  # 52 cards a game; a lead of 8 is most of a win
    return [returns[0] + lead, returns[1] - lead]


def _revolution_material(state: Any) -> list[float]:
    """Returns so far, plus each seat's share of the scores-with-this-hand's-tricks (R15/R17) above the mean."""
    returns = state.returns()
    if state.is_over:
        return returns
    totals = [s + t for s, t in zip(state.scores, state.tricks_won, strict=True)]
    mean = sum(totals) / len(totals)
    scale = 4.0 * max(1, state.hand_number)
    return [r + (t - mean) / scale for r, t in zip(returns, totals, strict=True)]


def _battlecards_material(state: Any) -> list[float]:
    """Returns so far, plus the card-share score the spec uses on truncation (R19, section 9)."""
    returns = state.returns()
    if state.is_over:
        return returns
    seats = len(returns)
    held = [state.cards_held(p) for p in range(seats)]
    total = sum(held) or 1
    return [r + seats / (seats - 1) * (h / total - 1 / seats) for r, h in zip(returns, held, strict=True)]


def _bloodlines_material(state: Any) -> list[float]:
    """Returns so far, plus a third of the surviving-royals lead (R16: royals decide an unfinished game)."""
    returns = state.returns()
    if state.is_over:
        return returns
    royals = state.royal_counts()
    lead = (royals[0] - royals[1]) / 3.0
    return [returns[0] + lead, returns[1] - lead]


#: game name -> estimate of every seat's final return from a (determinized) state; ``eval=material``
EVALUATORS: dict[str, Callable[[Any], list[float]]] = {
    "revolutionary_war_v0": _revolutionary_war_material,
    "revolution_v0": _revolution_material,
    "battlecards_v0": _battlecards_material,
    "bloodlines_v0": _bloodlines_material,
}

#: game name -> the number of the hand in progress, for games dealt in hands; ``horizon=hand``
HANDS: dict[str, Callable[[Any], int]] = {
    "revolution_v0": lambda state: state.hand_number,  # R15: a series of hands, scored after each
}

#: search options per game (``benchmarks/ismcts_strength.py`` and the ladder's search players),
#: chosen with short sweeps (see the issue note): plain SO-ISMCTS with random
#: rollouts where that suffices, a depth cap with the card-share evaluation for long Battlecards games,
#: and the strongest heuristic as rollout policy and opponent model where random rollouts say little;
#: for Revolution, every root move compared on the same deals to the end of the hand, everyone playing
#: on as the counting player (a deeper tree of its own moves, or UCB at the root, did worse)
GAME_OPTIONS: dict[str, str] = {
    "revolutionary_war_v0": "c=1,rollout=random",
    "revolution_v0": "c=1,rollout=heuristic:counting,opponents=policy,root=cycle,tree=1,horizon=hand,eval=material",
    "battlecards_v0": "c=1,depth=40,eval=material",
    "bloodlines_v0": "c=1,rollout=heuristic:defender,opponents=policy",
}
_EVALS = ("returns", "material")
_OPPONENTS = ("tree", "policy")
_ROOTS = ("ucb", "cycle")
_HORIZONS = ("game", "hand")
_DEALS = ("sampled", "true")


# -- options ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ISMCTSOptions:
    """Validated search options (see the module docstring's table)."""

    sims: int | None = None
    ms: float | None = None
    c: float = 1.0
    rollout: str = "random"
    depth: int | None = None
    eval: str = "returns"
    opponents: str = "tree"
    bias: float = 0.0
    root: str = "ucb"
    horizon: str = "game"
    tree: int | None = None
    deal: str = "sampled"

    def __post_init__(self) -> None:
        if self.sims is None and self.ms is None:
            object.__setattr__(self, "sims", DEFAULT_SIMS)
        if self.sims is not None and (isinstance(self.sims, bool) or not isinstance(self.sims, int)
                                      or self.sims < 1):
            raise ConfigError(f"ismcts option 'sims' must be an integer >= 1, got {self.sims!r}")
        if self.ms is not None and (isinstance(self.ms, bool) or not isinstance(self.ms, (int, float))
                                    or not self.ms > 0 or not math.isfinite(self.ms)):
            raise ConfigError(f"ismcts option 'ms' must be a number of milliseconds > 0, got {self.ms!r}")
        if isinstance(self.c, bool) or not isinstance(self.c, (int, float)) or not (0 <= self.c < math.inf):
            raise ConfigError(f"ismcts option 'c' must be a finite number >= 0, got {self.c!r}")
        if self.depth is not None and (isinstance(self.depth, bool) or not isinstance(self.depth, int)
                                       or self.depth < 1):
            raise ConfigError(f"ismcts option 'depth' must be an integer >= 1, got {self.depth!r}")
        if isinstance(self.bias, bool) or not isinstance(self.bias, (int, float)) or not (0 <= self.bias < math.inf):
            raise ConfigError(f"ismcts option 'bias' must be a finite number >= 0, got {self.bias!r}")
        if self.bias and self.rollout == "random":
            raise ConfigError("ismcts option 'bias' favours the rollout agent's move; give rollout=heuristic:<name>")
        if self.opponents not in _OPPONENTS:
            raise ConfigError(f"ismcts option 'opponents' must be one of {', '.join(_OPPONENTS)}, "
                              f"got {self.opponents!r}")
        if self.tree is not None and (isinstance(self.tree, bool) or not isinstance(self.tree, int)
                                      or self.tree < 1):
            raise ConfigError(f"ismcts option 'tree' must be an integer >= 1, got {self.tree!r}")
        if self.root not in _ROOTS:
            raise ConfigError(f"ismcts option 'root' must be one of {', '.join(_ROOTS)}, got {self.root!r}")
        if self.horizon not in _HORIZONS:
            raise ConfigError(f"ismcts option 'horizon' must be one of {', '.join(_HORIZONS)}, got {self.horizon!r}")
        if self.deal not in _DEALS:
            raise ConfigError(f"ismcts option 'deal' must be one of {', '.join(_DEALS)}, got {self.deal!r}")
        if self.eval not in _EVALS:
            raise ConfigError(f"ismcts option 'eval' must be one of {', '.join(_EVALS)}, got {self.eval!r}")
        if self.rollout.partition(":")[0] == "ismcts":
            raise ConfigError("ismcts option 'rollout' cannot be an ismcts agent; use random or heuristic:<name>")

    def spec(self) -> str:
        """The canonical spec name, e.g. ``ismcts:sims=200,c=1.0,rollout=random``."""
        parts = []
        if self.sims is not None:
            parts.append(f"sims={self.sims}")
        if self.ms is not None:
            parts.append(f"ms={self.ms:g}")
        parts += [f"c={self.c:g}", f"rollout={self.rollout}"]
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        if self.horizon != "game":
            parts.append(f"horizon={self.horizon}")
        if self.depth is not None or self.horizon != "game":
            parts.append(f"eval={self.eval}")
        if self.opponents != "tree":
            parts.append(f"opponents={self.opponents}")
        if self.bias:
            parts.append(f"bias={self.bias:g}")
        if self.root != "ucb":
            parts.append(f"root={self.root}")
        if self.tree is not None:
            parts.append(f"tree={self.tree}")
        if self.deal != "sampled":
            parts.append(f"deal={self.deal}")
        return "ismcts:" + ",".join(parts)


_KEYS = {"sims": int, "ms": float, "c": float, "rollout": str, "depth": int, "eval": str, "opponents": str,
         "bias": float, "root": str, "horizon": str, "tree": int, "deal": str}


def parse_options(text: str) -> ISMCTSOptions:
    """Parse the part after ``ismcts:`` (``""`` means every default).

    >>> parse_options("sims=400,rollout=heuristic:endgame").sims
    400
    """
    values: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"ismcts option {item!r} must be key=value; keys: {', '.join(_KEYS)}")
        if key not in _KEYS:
            raise ConfigError(f"unknown ismcts option {key!r}; known: {', '.join(_KEYS)}")
        if key in values:
            raise ConfigError(f"ismcts option {key!r} is given twice")
        kind = _KEYS[key]
        raw = raw.strip()
        try:
            values[key] = kind(raw)
        except ValueError:
            raise ConfigError(f"ismcts option {key!r} must be {'an integer' if kind is int else 'a number'}, "
                              f"got {raw!r}") from None
    return ISMCTSOptions(**values)


# -- the search ------------------------------------------------------------------------------------


class _Node:
    """An edge-and-node of the tree: the action that led here, per-seat reward sums, visit and availability counts."""

    __slots__ = ("children", "visits", "available", "totals")

    def __init__(self, seats: int) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.available = 0
        self.totals = [0.0] * seats


@dataclass
class SearchStats:
    """Effort spent by one agent since it was built."""

    decisions: int = 0  #: calls to ``act``
    searched: int = 0  #: of those, decisions with more than one legal action (searched)
    simulations: int = 0
    seconds: float = 0.0  #: wall-clock time inside searched decisions
    cpu_seconds: float = 0.0  #: this process's CPU time inside searched decisions (a busy machine does not inflate it)

    @property
    def ms_per_search(self) -> float:
        return 1000.0 * self.seconds / self.searched if self.searched else 0.0

    @property
    def cpu_ms_per_search(self) -> float:
        return 1000.0 * self.cpu_seconds / self.searched if self.searched else 0.0


class ISMCTSAgent(Agent):
    """SO-ISMCTS over determinizations from ``Decision.sample_state``; see the module docstring.

    ``rollout_factory(game, spec, seed)`` builds the rollout agents of a ``rollout`` other than ``random``
    (e.g. :func:`agents.players.registry.make_agent`).
    """

    def __init__(self, seed: int | None = None, options: ISMCTSOptions | None = None, *,
                 rollout_factory: Callable[[str, str, int], Agent] | None = None) -> None:
        super().__init__(seed)
        self.options = options or ISMCTSOptions()
        if self.options.rollout != "random" and rollout_factory is None:
            raise ConfigError(f"{self.options.spec()}: rollout={self.options.rollout} needs a rollout_factory "
                              "(e.g. agents.players.registry.make_agent)")
        self.name = self.options.spec()
        self.stats = SearchStats()
        # python's generator is several times cheaper per draw than numpy's in the hot loop; seeded from ours
        self._choice = random.Random(int(self.rng.integers(2**63)))
        self._rollout_factory = rollout_factory
        self._rollout_agents: dict[str, list[Agent]] = {}
        #: with ``bias``: the rollout agent playing along in the real game (it keeps its memory of the
        #: episode, as the heuristic it stands for does), whose move at the root is the favoured one
        self._shadow: Agent | None = None
        self._favoured = -1

    def reseed(self, seed: int | None) -> None:
        """Fresh randomness, exactly as a new agent built with ``seed`` (used by ``agents.tournaments.evaluate``)."""
        self.rng = np.random.default_rng(seed)
        self._choice = random.Random(int(self.rng.integers(2**63)))
        self._rollout_agents.clear()
        self._shadow = None

    def reset(self, game: Game, player: int) -> None:
        if self.options.bias:
            if self._shadow is None:
                factory = self._rollout_factory
                self._shadow = factory(game.name, self.options.rollout, int(self.rng.integers(2**63)))
            self._shadow.reset(game, player)

    # -- public -------------------------------------------------------------------------------------

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        self.stats.decisions += 1
        self._favoured = -1
        if self.options.bias:
            if self._shadow is None:  # act without reset(): start the shadow now
                self.reset(decision.game, decision.player)
            self._favoured = self._shadow.act(decision)  # every decision, so that its memory is complete
        if len(legal) == 1:
            return legal[0]
        start, cpu_start = time.perf_counter(), time.process_time()
        root = self.search(decision)
        action = self.best_action(root, decision.legal_actions, decision.player)
        self._favoured = -1
        self.stats.searched += 1
        self.stats.seconds += time.perf_counter() - start
        self.stats.cpu_seconds += time.process_time() - cpu_start
        return action

    def search(self, decision: Decision) -> _Node:
        """Run the budgeted simulations from ``decision``; the root of the tree."""
        options = self.options
        game = decision.game
        root = _Node(game.num_players)
        budget = options.sims if options.sims is not None else math.inf
        deadline = math.inf if options.ms is None else time.perf_counter() + options.ms / 1000.0
        policy = self._policy(game)
        evaluate = self._evaluation(game)
        ahead: Callable[[GameState], bool] | None = None  # horizon=hand: whether a state is still in the root's hand
        me = decision.player
        # root=ucb: one determinization per simulation; root=cycle: one per round, every legal root action in it
        firsts: Sequence[int] = decision.legal_actions if options.root == "cycle" else (-1,)
        draw = decision.actual_state if options.deal == "true" else decision.sample_state
        done = 0
        while done < budget:
            world = draw(self.rng, remember=True)
            if options.horizon == "hand" and ahead is None:  # every determinization is at the root's hand
                ahead = _ahead_of_horizon(game, world)
            for index, first in enumerate(firsts):
                policy.reset()
                state = world.clone() if index < len(firsts) - 1 else world
                self._simulate(root, state, me, policy, evaluate, ahead, first)
            done += len(firsts)
            if deadline != math.inf and time.perf_counter() >= deadline:
                break
        self.stats.simulations += done
        return root

    def best_action(self, root: _Node, legal: Sequence[int], player: int) -> int:
        """The most visited root action (ties: higher mean reward for ``player``, then lower id);
        with ``root=cycle`` (equal visits) the best mean reward, the rollout agent's move's mean raised
        by ``bias / (visits + 1)`` (so the search leaves that move only for a clear gain on the deals)."""
        by_mean = self.options.root == "cycle"
        favoured, bias = self._favoured, self.options.bias

        def key(action: int) -> tuple[float, float, int]:
            child = root.children.get(action)
            if child is None or not child.visits:
                return (-math.inf, -math.inf, -action)
            mean = child.totals[player] / child.visits
            if not by_mean:
                return (child.visits, mean, -action)
            if action == favoured:
                mean += bias / (child.visits + 1)
            return (mean, action == favoured, -action)

        return max(legal, key=key)

    # -- one simulation -----------------------------------------------------------------------------

    def _simulate(self, root: _Node, state: GameState, me: int, policy: _Policy,
                  evaluate: Callable[[GameState], list[float]], ahead: Callable[[GameState], bool] | None,
                  first: int = -1) -> None:
        """One simulation in the determinization ``state``; ``first`` (>= 0) forces the root action;
        ``ahead`` (``None``: no horizon) says whether a state is before the horizon."""
        c = self.options.c
        choice = self._choice
        modelled = self.options.opponents == "policy"
        bias = self.options.bias
        own_left = self.options.tree if self.options.tree is not None else math.inf  # own decisions the tree may take
        node = root
        path = [root]
        if first >= 0:  # root=cycle: the round decides the root action
            child = _child(root, first)
            child.available += 1
            node = child
            state.apply(first)
            path.append(node)
            own_left -= 1
            if not child.visits:  # a new node: straight to the rollout, as after an expansion
                return self._finish(path, state, policy, evaluate, ahead)
        while not state.is_over and (ahead is None or ahead(state)):
            if modelled and state.current_player != me:  # the opponent model moves; the tree records it
                action = policy(state)
                node = _child(node, action)
                state.apply(action)
                path.append(node)
                continue
            if state.current_player == me:
                if own_left <= 0:  # deeper than ``tree``: the rollout policy plays on
                    break
                own_left -= 1
            legal = state.legal_actions()
            children = node.children
            favoured = -1
            if bias:
                favoured = self._favoured if node is root and self._favoured >= 0 else policy(state)
            untried = [a for a in legal if a not in children]
            if untried:
                for action in legal:
                    if action in children:
                        children[action].available += 1
                action = favoured if favoured in untried else untried[int(choice.random() * len(untried))]
                node = children[action] = _Node(len(root.totals))
                node.available = 1
                state.apply(action)
                path.append(node)
                break
            player = state.current_player
            best_score = -math.inf
            best_action = legal[0]
            for action in legal:
                child = children[action]
                child.available += 1
                visits = child.visits
                score = child.totals[player] / visits + c * math.sqrt(math.log(child.available) / visits)
                if action == favoured:  # progressive bias (Chaslot et al. 2008): fades as the move is tried
                    score += bias / (visits + 1)
                if score > best_score:
                    best_score, best_action = score, action
            node = children[best_action]
            state.apply(best_action)
            path.append(node)
        return self._finish(path, state, policy, evaluate, ahead)

    def _finish(self, path: list[_Node], state: GameState, policy: _Policy,
                evaluate: Callable[[GameState], list[float]], ahead: Callable[[GameState], bool] | None) -> None:
        """Roll out to the end, the depth cap or the horizon; back the result up along ``path``."""
        depth = self.options.depth if self.options.depth is not None else math.inf
        steps = 0
        while not state.is_over and steps < depth and (ahead is None or ahead(state)):
            state.apply(policy(state))
            steps += 1
        values = state.returns() if state.is_over else evaluate(state)
        seats = range(len(values))
        for node in path:
            node.visits += 1
            totals = node.totals
            for seat in seats:
                totals[seat] += values[seat]

    # -- rollout policies and evaluation ------------------------------------------------------------

    def _policy(self, game: Game) -> _Policy:
        if self.options.rollout == "random":
            return _UniformPolicy(self._choice)
        return _AgentPolicy(game, self._rollout_agents_for(game))

    def _rollout_agents_for(self, game: Game) -> list[Agent]:
        agents = self._rollout_agents.get(game.name)
        if agents is None or len(agents) != game.num_players:
            factory = self._rollout_factory
            agents = [factory(game.name, self.options.rollout, int(self.rng.integers(2**63)))
                      for _ in range(game.num_players)]
            self._rollout_agents[game.name] = agents
        return agents

    def _evaluation(self, game: Game) -> Callable[[GameState], list[float]]:
        return _material_evaluator(game.name) if self.options.eval == "material" else _evaluate_returns


def _child(node: _Node, action: int) -> _Node:
    """``node``'s child for ``action``, added if new."""
    child = node.children.get(action)
    if child is None:
        child = node.children[action] = _Node(len(node.totals))
    return child


def _material_evaluator(game: str) -> Callable[[Any], list[float]]:
    """``EVALUATORS[game]``, or a clear error for ``eval=material``."""
    if game not in EVALUATORS:
        raise ConfigError(f"ismcts eval=material has no evaluator for {game}; "
                          f"games with one: {', '.join(EVALUATORS)} (use eval=returns)")
    return EVALUATORS[game]


def _hand_counter(game: str) -> Callable[[Any], int]:
    """``HANDS[game]``, or a clear error for ``horizon=hand``."""
    if game not in HANDS:
        raise ConfigError(f"ismcts horizon=hand: {game} is not dealt in hands; games that are: "
                          f"{', '.join(HANDS)} (use horizon=game)")
    return HANDS[game]


def _ahead_of_horizon(game: Game, root_state: GameState) -> Callable[[GameState], bool]:
    """``ahead(state)`` for ``horizon=hand``: whether a simulation from ``root_state`` is still in its hand."""
    hand_of = _hand_counter(game.name)
    hand = hand_of(root_state)
    return lambda state: hand_of(state) == hand


class _Policy:
    """The rollout policy (and, with ``opponents=policy``, the opponents' model inside the tree)."""

    def __call__(self, state: GameState) -> int:
        raise NotImplementedError

    def reset(self) -> None:
        """Called before every simulation."""


class _UniformPolicy(_Policy):
    def __init__(self, choice: random.Random) -> None:
        self.uniform = choice.random

    def __call__(self, state: GameState) -> int:
        legal = state.legal_actions()
        return legal[int(self.uniform() * len(legal))]


class _AgentPolicy(_Policy):
    """One agent per seat acting on ``Decision.of(state)`` -- fine inside a determinization."""

    def __init__(self, game: Game, agents: list[Agent]) -> None:
        self.game = game
        self.agents = agents

    def __call__(self, state: GameState) -> int:
        return self.agents[state.current_player].act(Decision.of(state))

    def reset(self) -> None:
        for seat, agent in enumerate(self.agents):  # agents with memory start each simulation afresh
            agent.reset(self.game, seat)


def make_ismcts(game: str, options: str, seed: int | None = None, *,
                make_agent: Callable[[str, str, int], Agent] | None = None) -> ISMCTSAgent:
    """The agent of spec ``ismcts:<options>`` for ``game``. ``make_agent(game, spec, seed)`` builds the rollout
    agents (the registry passes itself); the rollout spec is checked with it now."""
    if game not in ENV_NAMES:
        raise ConfigError(f"unknown game {game!r}; registered: {', '.join(ENV_NAMES)}")
    parsed = parse_options(options)
    if parsed.rollout != "random":
        if make_agent is None:
            raise ConfigError(f"ismcts:{options}: rollout={parsed.rollout} needs make_agent to build it "
                              "(agents.players.registry.make_agent)")
        make_agent(game, parsed.rollout, 0)  # fail fast on an unknown rollout agent
    if parsed.horizon == "hand":  # fail fast, as the search would
        _hand_counter(game)
    if parsed.eval == "material" and (parsed.depth is not None or parsed.horizon != "game"):
        _material_evaluator(game)
    return ISMCTSAgent(seed, parsed, rollout_factory=make_agent)


__all__ = ["DEFAULT_SIMS", "EVALUATORS", "HANDS", "ISMCTSAgent", "ISMCTSOptions", "SearchStats", "make_ismcts",
           "parse_options"]
