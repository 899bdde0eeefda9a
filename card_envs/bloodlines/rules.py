"""Bloodlines rules engine (spec ``specs/bloodlines.md``, setup S1-S7, rules R1-R18, rulings A1-A52).

Pure rules: no PettingZoo, no observation vectors (see ``encoding.py``). Card ids are those of
:mod:`card_envs.cards` (``2C`` = 1 ... ``10S`` = 48, royals ``JC`` = 10 ..., jokers ``X1`` = 52,
``X2`` = 53). Each player owns a separate physical deck, so every zone belongs to one owner and
the same id lives in both players' zones (A51). Rule numbers in comments refer to the spec.

Phases of a turn (R3-R10): ``STEP1`` -> ``MAIN`` with the sub-phases ``DISCARD`` (owed discards
after the clubs power, R8) and ``DECOY`` (the defender's out-of-turn choice, R10.3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from card_envs.cards import JOKER_IDS, RANK_VALUE, SUIT_INDEX, SUITS, card_code, card_codes, parse_deck
from card_envs.core.config import GameConfig, check_choice, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState, _is_action_id
from card_envs.core.errors import ConfigError, DeckError, IllegalActionError, StateError

# -- cards ----------------------------------------------------------------------------------------

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
ROYAL_NAMES = ("J", "Q", "K")
NUM_NUMBER_CARDS = 36
#: the 36 number cards 2C .. 10C 2D .. 10S in canonical order (section 2); index = k(c)
NUMBER_CARDS: tuple[int, ...] = tuple(13 * s + rank - 1 for s in range(4) for rank in range(2, 11))
#: k(c) = 9 s + rank - 2 for a number card id, -1 for any other id
K_OF: tuple[int, ...] = tuple(
    9 * SUIT_INDEX[c] + RANK_VALUE[c] - 2 if c < 52 and 2 <= RANK_VALUE[c] <= 10 else -1 for c in range(54)
)
#: VALUE[b][c] = value of number card c for an owner of bloodline b: rank + 1 own suit, rank - 1 others
VALUE: tuple[tuple[int, ...], ...] = tuple(
    tuple((RANK_VALUE[c] + 1 if SUIT_INDEX[c] == b else RANK_VALUE[c] - 1) if K_OF[c] >= 0 else 0
          for c in range(54))
    for b in range(4)
)
#: R15: forward moves of one owner's cards: 36 number cards x 3 (pile -> hand -> table/pool -> discard),
#: 3 royals x 1, 2 jokers x 2 (supply -> play -> discard)
MAX_CARD_MOVES = 2 * (36 * 3 + 3 + 2 * 2)
#: R15: at most one idle turn between two non-idle ones, and one at each end
MAX_TURNS_BOUND = 2 * MAX_CARD_MOVES + 1
MAX_VALUE_SUM = 63  #: value of the nine cards of one's own suit (normalizer of defense/attack/pool)


def royal_card(bloodline: int, royal: int) -> int:
    """Card id of royal ``royal`` (J=0, Q=1, K=2) of the ``bloodline`` suit."""
    return 13 * bloodline + 10 + royal


def card_value(card: int, bloodline: int) -> int:
    """Section 2: value of a number card for an owner of ``bloodline`` (0 for anything else)."""
    return VALUE[bloodline][card]


# -- actions (section 8) ----------------------------------------------------------------------------

CYCLE = 0          #: 0-17   cycle <c>, index k(c)
POWER = 18         #: 18-26  power <c>
POOL = 27          #: 27-35  pool <d>
DISCARD = 36       #: 36-71  discard <c>
HEART = 72         #: 72-98  heart <h> on <r>
NEW_UNIT = 99      #: 99-107 new unit <s>
ADD_TO_UNIT = 108  #: 108-179 add <s> to unit <u>
ATTACK = 180       #: 180-206 unit <u> attacks <r>
JOKER_ATTACK = 207  #: 207-209 joker attacks <r>
BUY_JOKER = 210
END_STEP1 = 211
PASS = 212
DECOY = 213
NO_DECOY = 214
NUM_ACTIONS = 215
MAX_ADD_UNIT = 8   #: ADD_TO_UNIT names units 0-7 (R17: a spade in hand leaves at most 8 units)
MAX_UNITS = 9      #: ATTACK names units 0-8


def _action_names() -> tuple[str, ...]:
    names = [f"cycle {card_code(NUMBER_CARDS[k])}" for k in range(18)]
    names += [f"power {rank}C" for rank in range(2, 11)]
    names += [f"pool {rank}D" for rank in range(2, 11)]
    names += [f"discard {card_code(c)}" for c in NUMBER_CARDS]
    names += [f"heart {rank}H on {r}" for rank in range(2, 11) for r in ROYAL_NAMES]
    names += [f"new unit {rank}S" for rank in range(2, 11)]
    names += [f"add {rank}S to unit {u}" for rank in range(2, 11) for u in range(MAX_ADD_UNIT)]
    names += [f"unit {u} attacks {r}" for u in range(MAX_UNITS) for r in ROYAL_NAMES]
    names += [f"joker attacks {r}" for r in ROYAL_NAMES]
    names += ["buy joker", "end step 1", "pass", "decoy", "no decoy"]
    return tuple(names)


ACTION_NAMES: tuple[str, ...] = _action_names()

# per card id: the first index of its action block (-1 when the card cannot take that action)
_CYCLE_OF = tuple(K_OF[c] if 0 <= K_OF[c] < 18 else -1 for c in range(54))
_POWER_OF = tuple(POWER + RANK_VALUE[c] - 2 if 0 <= K_OF[c] < 9 else -1 for c in range(54))
_POOL_OF = tuple(POOL + RANK_VALUE[c] - 2 if 9 <= K_OF[c] < 18 else -1 for c in range(54))
_DISCARD_OF = tuple(DISCARD + K_OF[c] if K_OF[c] >= 0 else -1 for c in range(54))
_HEART_OF = tuple(HEART + 3 * (RANK_VALUE[c] - 2) if 18 <= K_OF[c] < 27 else -1 for c in range(54))
_NEW_UNIT_OF = tuple(NEW_UNIT + RANK_VALUE[c] - 2 if 27 <= K_OF[c] < 36 else -1 for c in range(54))
_ADD_OF = tuple(ADD_TO_UNIT + MAX_ADD_UNIT * (RANK_VALUE[c] - 2) if 27 <= K_OF[c] < 36 else -1 for c in range(54))

# decoding: action id -> (kind, card id of the acting player's suit block, royal or unit)
(_K_CYCLE, _K_POWER, _K_POOL, _K_DISCARD, _K_HEART, _K_NEW_UNIT, _K_ADD, _K_ATTACK, _K_JOKER_ATTACK,
 _K_BUY, _K_END_STEP1, _K_PASS, _K_DECOY, _K_NO_DECOY) = range(14)


def _decode_table() -> tuple[tuple[int, int, int], ...]:
    table: list[tuple[int, int, int]] = []
    table += [(_K_CYCLE, NUMBER_CARDS[k], 0) for k in range(18)]
    table += [(_K_POWER, 13 * CLUBS + rank - 1, 0) for rank in range(2, 11)]
    table += [(_K_POOL, 13 * DIAMONDS + rank - 1, 0) for rank in range(2, 11)]
    table += [(_K_DISCARD, c, 0) for c in NUMBER_CARDS]
    table += [(_K_HEART, 13 * HEARTS + rank - 1, r) for rank in range(2, 11) for r in range(3)]
    table += [(_K_NEW_UNIT, 13 * SPADES + rank - 1, 0) for rank in range(2, 11)]
    table += [(_K_ADD, 13 * SPADES + rank - 1, u) for rank in range(2, 11) for u in range(MAX_ADD_UNIT)]
    table += [(_K_ATTACK, -1, 3 * u + r) for u in range(MAX_UNITS) for r in range(3)]
    table += [(_K_JOKER_ATTACK, -1, r) for r in range(3)]
    table += [(_K_BUY, -1, 0), (_K_END_STEP1, -1, 0), (_K_PASS, -1, 0), (_K_DECOY, -1, 0), (_K_NO_DECOY, -1, 0)]
    return tuple(table)


_DECODE = _decode_table()
_DECOY_CHOICES = [DECOY, NO_DECOY]

# -- phases -----------------------------------------------------------------------------------------

STEP1, MAIN, DISCARD_PHASE, DECOY_PHASE = 0, 1, 2, 3
PHASE_NAMES = ("STEP1", "MAIN", "DISCARD", "DECOY")

# -- zone codes -------------------------------------------------------------------------------------
# Where each of an owner's 36 number cards lies, by k(c): the state keeps ``zones[owner][k]`` in
# step with its card lists, and views carry it as ``bytes`` (the observation is one table lookup).

Z_PILE, Z_HAND = 0, 1
Z_HEART = 2           #: 2, 3, 4: under royal J, Q, K
Z_UNIT = 5            #: 5 .. 13: in unit 0 .. 8
Z_POOL, Z_DISCARD = 14, 15
Z_UNSEEN = 16         #: in a view of the opponent's cards: their hand or pile (not told apart)
NUM_ZONES = 17
_HIDE_HAND = bytes(Z_UNSEEN if z in (Z_PILE, Z_HAND) else z for z in range(256))


# -- configuration (section 6) ----------------------------------------------------------------------

@dataclass(frozen=True)
class BloodlinesConfig(GameConfig):
    """Options of spec section 6 (``decks`` is a reset option, not a config option)."""

    bloodlines: tuple[str, str] | None = None
    starting_player: int | None = None
    hand_limit: int = 4
    joker_cost: int = 25
    joker_supply: int = 2
    allow_pass: bool = False
    auto_skip_forced: bool = True
    max_turns: int | None = 200
    unfinished_result: Literal["royals", "draw"] = "royals"
    shaping_weight: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()  # a list (JSON, YAML) is held as a tuple
        if isinstance(self.bloodlines, tuple) and all(isinstance(s, str) for s in self.bloodlines):
            object.__setattr__(self, "bloodlines", tuple(s.upper() for s in self.bloodlines))  # "d" is "D"

    def validate(self) -> None:
        if self.bloodlines is not None:
            pair = self.bloodlines
            if len(pair) != 2 or not all(isinstance(s, str) and s in SUITS for s in pair):
                raise ConfigError(f"option 'bloodlines' must be two suits from {SUITS} for (player_0, "
                                  f"player_1), e.g. ('S', 'H'), got {pair!r}")
            if pair[0] == pair[1]:
                raise ConfigError(f"option 'bloodlines' must name two different suits (S2/A6), got {pair!r}")
        check_choice(self, "starting_player", (None, 0, 1))
        check_range(self, "hand_limit", low=1, high=NUM_NUMBER_CARDS)
        check_range(self, "joker_cost", low=1)
        check_choice(self, "joker_supply", (0, 1, 2))
        check_range(self, "max_turns", low=1)
        check_range(self, "shaping_weight", low=0.0)


# -- the view (section 7) ---------------------------------------------------------------------------

class BloodlinesView(NamedTuple):
    """What one player may know (spec section 7). Seats are absolute; ``player`` is the viewer.

    Per-player fields are pairs indexed by seat. Card ids are :mod:`card_envs.cards` ids of the
    owner's deck.

    ======================  =====================================================================
    field                   meaning
    ======================  =====================================================================
    ``player``              the viewer's seat
    ``current_player``      seat to decide (the defender during ``DECOY``; -1 once over)
    ``active``              seat whose turn it is (the attacker during ``DECOY``)
    ``phase``               0 ``STEP1``, 1 ``MAIN``, 2 ``DISCARD``, 3 ``DECOY``
    ``owed``                discards still owed by the active player (R8)
    ``turn``                turn number, 1-based, both players' turns counted (R1)
    ``idle``                idle-turn counter (R15): 0 or 1 while the game runs
    ``bloodlines``          suit index (C=0, D=1, H=2, S=3) of each seat
    ``hand``                the viewer's own hand, sorted ids
    ``hand_sizes``          cards in each hand
    ``pile_sizes``          cards in each draw pile
    ``royals``              each seat's surviving royals, as royal indices J=0, Q=1, K=2
    ``hearts``              each seat's hearts under J, Q, K (three tuples per seat)
    ``defense``             each seat's def(P, r) for J, Q, K (0 for a dead royal)
    ``units``               each seat's units in creation order, each a tuple of spades
    ``attack``              each seat's atk(P, u) per unit
    ``jokers``              each seat's jokers in play (ids 52/53)
    ``supply_sizes``        jokers left in each seat's supply
    ``pools``               each seat's diamond pool
    ``pool_values``         each seat's pool value
    ``discards``            each seat's discard pile, in discard order (public, A37)
    ``own_zones``           zone code (``Z_PILE`` .. ``Z_DISCARD``) of each own number card, by k(c)
    ``opponent_zones``      the same for the opponent, with hand and pile both ``Z_UNSEEN``
    ``decoy_royal``         the defender's threatened royal during ``DECOY`` (-1 otherwise)
    ``decoy_by_joker``      the pending ``DECOY`` follows a joker attack
    ``over``                the episode has ended
    ``winner``              the winner's seat once over (-1 for a draw or while running)
    ======================  =====================================================================
    """

    player: int
    current_player: int
    active: int
    phase: int
    owed: int
    turn: int
    idle: int
    bloodlines: tuple[int, int]
    hand: tuple[int, ...]
    hand_sizes: tuple[int, int]
    pile_sizes: tuple[int, int]
    royals: tuple[tuple[int, ...], tuple[int, ...]]
    hearts: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]
    defense: tuple[tuple[int, int, int], tuple[int, int, int]]
    units: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]
    attack: tuple[tuple[int, ...], tuple[int, ...]]
    jokers: tuple[tuple[int, ...], tuple[int, ...]]
    supply_sizes: tuple[int, int]
    pools: tuple[tuple[int, ...], tuple[int, ...]]
    pool_values: tuple[int, int]
    discards: tuple[tuple[int, ...], tuple[int, ...]]
    own_zones: bytes
    opponent_zones: bytes
    decoy_royal: int
    decoy_by_joker: bool
    over: bool
    winner: int

    @property
    def own_pile(self) -> tuple[int, ...]:
        """Composition of the viewer's own pile (sorted ids); its order is hidden."""
        return tuple(NUMBER_CARDS[k] for k, zone in enumerate(self.own_zones) if zone == Z_PILE)

    @property
    def opponent_unseen(self) -> tuple[int, ...]:
        """U(O): the opponent's hand and pile together (sorted ids), section 7."""
        return tuple(NUMBER_CARDS[k] for k, zone in enumerate(self.opponent_zones) if zone == Z_UNSEEN)


# -- the state --------------------------------------------------------------------------------------

class BloodlinesState(GameState):
    """A position of one game. Per-player fields are pairs indexed by seat."""

    fields = (
        "bloodlines", "piles", "hands", "royals", "hearts", "defense", "units", "attack", "jokers",
        "supply", "pools", "pool_values", "discards", "set_aside", "zones", "starting_player", "turn", "active",
        "phase", "resume_phase", "owed", "idle", "moved", "decoy_royal", "decoy_by_joker", "current_player",
        "terminated", "truncated", "winner", "outcome", "rewards", "cumulative", "history",
    )

    game: Bloodlines
    bloodlines: list[int]
    piles: list[list[int]]            # top first
    hands: list[list[int]]            # sorted ids
    royals: list[list[int]]           # surviving royal indices, increasing
    hearts: list[list[list[int]]]     # [seat][royal] hearts under it
    defense: list[list[int]]          # [seat][royal] def(P, r), kept in step with hearts (R2)
    units: list[list[list[int]]]      # [seat][unit] spades
    attack: list[list[int]]           # [seat][unit] atk(P, u)
    jokers: list[list[int]]           # jokers in play, increasing
    supply: list[list[int]]           # joker supply, X1 first
    pools: list[list[int]]
    pool_values: list[int]
    discards: list[list[int]]
    set_aside: list[list[int]]        # each owner's cards out of the game (S3)
    zones: list[list[int]]            # [owner][k] zone code of each number card (Z_PILE ...)
    starting_player: int
    turn: int
    active: int
    phase: int
    resume_phase: int                 # the phase the owed discards return to (R8)
    owed: int
    idle: int                         # R15 counter
    moved: bool                       # a card changed zone during this turn (R15)
    decoy_royal: int
    decoy_by_joker: bool
    winner: int
    outcome: str                      # "", "kill", "stalemate" or "turn_limit"

    _legal: list[int] | None = None   # cache of the current legal actions (not part of the position)
    def clone(self) -> BloodlinesState:
        """As :meth:`GameState.clone` (every field copied), without building a new generator."""
        twin = BloodlinesState.__new__(BloodlinesState)
        twin.game = self.game
        self._copy_rng_to(twin)
        twin._legal = self._legal  # never mutated in place
        twin.bloodlines = self.bloodlines[:]
        for name in ("piles", "hands", "royals", "defense", "attack", "jokers", "supply", "pools", "discards",
                     "set_aside", "zones"):
            pair = getattr(self, name)
            setattr(twin, name, [pair[0][:], pair[1][:]])
        twin.hearts = [[cards[:] for cards in self.hearts[0]], [cards[:] for cards in self.hearts[1]]]
        twin.units = [[unit[:] for unit in self.units[0]], [unit[:] for unit in self.units[1]]]
        twin.pool_values = self.pool_values[:]
        for name in ("starting_player", "turn", "active", "phase", "resume_phase", "owed", "idle", "moved",
                     "decoy_royal", "decoy_by_joker", "current_player", "terminated", "truncated", "winner",
                     "outcome"):
            setattr(twin, name, getattr(self, name))
        twin.rewards = self.rewards[:]
        twin.cumulative = self.cumulative[:]
        twin.history = self.history[:]
        return twin

    # -- queries ---------------------------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return list(legal)

    def legal_mask(self) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, np.int8)
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if legal:
            mask[legal] = 1
        return mask

    def _compute_legal(self) -> list[int]:
        """R3-R9 and section 8's legality column, in increasing order."""
        if self.terminated or self.truncated:
            return []
        phase = self.phase
        if phase == DECOY_PHASE:
            return list(_DECOY_CHOICES)
        me = self.active
        hand = self.hands[me]
        if phase == DISCARD_PHASE:  # R8: only discards while discards are owed
            return [_DISCARD_OF[c] for c in hand]
        bloodline = self.bloodlines[me]
        can_draw = bool(self.piles[me])  # R12 / A36
        in_main = phase == MAIN
        cycles: list[int] = []
        powers: list[int] = []
        pools: list[int] = []
        hearts: list[int] = []
        new_units: list[int] = []
        adds: list[int] = []
        royals = self.royals[me]
        num_units = len(self.units[me])
        for card in hand:
            suit = SUIT_INDEX[card]
            if suit == CLUBS:
                if can_draw:
                    cycles.append(_CYCLE_OF[card])  # R7a
                    if bloodline == CLUBS:
                        powers.append(_POWER_OF[card])  # R7b
            elif suit == DIAMONDS:
                if can_draw:
                    cycles.append(_CYCLE_OF[card])  # R7a
                if bloodline == DIAMONDS:
                    pools.append(_POOL_OF[card])  # R7c
            elif in_main:
                if suit == HEARTS:
                    base = _HEART_OF[card]
                    hearts.extend(base + r for r in royals)  # R9a
                else:
                    new_units.append(_NEW_UNIT_OF[card])  # R9b
                    base = _ADD_OF[card]
                    adds.extend(range(base, base + num_units))  # R9c
        legal = cycles + powers + pools
        if not in_main:
            legal.append(END_STEP1)  # R3
            return legal
        main = hearts + new_units + adds
        enemy = 1 - me
        enemy_royals = self.royals[enemy]
        enemy_defense = self.defense[enemy]
        for u, atk in enumerate(self.attack[me]):  # R9d: strictly greater
            base = ATTACK + 3 * u
            for r in enemy_royals:
                if atk > enemy_defense[r]:
                    main.append(base + r)
        if self.jokers[me]:
            main.extend(JOKER_ATTACK + r for r in enemy_royals)  # R9e
        if bloodline == DIAMONDS and self.supply[me] and self.pool_values[me] >= self.game.config.joker_cost:
            main.append(BUY_JOKER)  # R9f
        legal += main
        if not main or self.game.config.allow_pass:
            legal.append(PASS)  # R6
        return legal

    def rules_winners(self) -> list[int]:
        """The winner's seat (a kill, or a stalemate/truncation scored on royals); both seats on a draw."""
        if not self.is_over:
            return []
        return [self.winner] if self.winner != NO_PLAYER else [0, 1]

    def royal_counts(self) -> tuple[int, int]:
        """Surviving royals of each seat (R16 scoring)."""
        return len(self.royals[0]), len(self.royals[1])

    # -- transitions -----------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        """Apply ``action`` for ``current_player`` (same contract as :meth:`GameState.apply`)."""
        if self.terminated or self.truncated:
            raise StateError(f"{self.game.name}: the episode is over; reset before acting")
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if not _is_action_id(action) or action not in legal:
            raise IllegalActionError(self._illegal_message(action, legal))
        action = int(action)
        self.rewards = [0.0, 0.0]
        self._apply(action)
        self.history.append(action)
        cumulative = self.cumulative
        cumulative[0] += self.rewards[0]
        cumulative[1] += self.rewards[1]

    def _apply(self, action: int) -> None:
        self._do(action)
        self._settle()

    def _settle(self) -> None:
        """R11: take forced ``END_STEP1``/``PASS`` steps until a real choice or the end; cache the legal set."""
        auto = self.game.config.auto_skip_forced
        while True:
            legal = self._compute_legal()
            if auto and len(legal) == 1 and (legal[0] == END_STEP1 or legal[0] == PASS):
                self._do(legal[0])
                continue
            self._legal = legal
            return

    def _do(self, action: int) -> None:
        kind, card, arg = _DECODE[action]
        me = self.active
        if kind == _K_DECOY or kind == _K_NO_DECOY:
            self._resolve_decoy(kind == _K_DECOY)
            return
        if kind == _K_END_STEP1:
            self._end_step1(me)
            return
        if kind == _K_PASS:
            self._end_turn()  # R5/R6
            return
        self.moved = True  # every other action moves a card (R15)
        if kind == _K_DISCARD:
            self._discard_owed(me, card)
        elif kind == _K_CYCLE:
            self._cycle(me, card)
        elif kind == _K_POWER:
            self._club_power(me, card)
        elif kind == _K_POOL:
            self._pool(me, card)
        elif kind == _K_HEART:
            self._heart(me, card, arg)
        elif kind == _K_NEW_UNIT:
            self._new_unit(me, card)
        elif kind == _K_ADD:
            self._add_to_unit(me, card, arg)
        elif kind == _K_ATTACK:
            self._unit_attack(me, arg // 3, arg % 3)
        elif kind == _K_JOKER_ATTACK:
            self._joker_attack(me, arg)
        else:
            self._buy_joker(me)

    # resource actions (R7, R8)

    def _draw(self, player: int, count: int) -> None:
        pile = self.piles[player]
        count = min(count, len(pile))  # R12 / A14: a short pile gives what it has
        if count:
            hand = self.hands[player]
            zones = self.zones[player]
            for card in pile[:count]:
                zones[K_OF[card]] = Z_HAND
            hand.extend(pile[:count])
            del pile[:count]
            hand.sort()

    def _to_discard(self, owner: int, card: int) -> None:
        self.discards[owner].append(card)
        self.zones[owner][K_OF[card]] = Z_DISCARD

    def _cycle(self, me: int, card: int) -> None:
        self.hands[me].remove(card)  # R7a: discard first, then draw one
        self._to_discard(me, card)
        self._draw(me, 1)

    def _club_power(self, me: int, card: int) -> None:
        self.hands[me].remove(card)  # R7b / A48: discard the club, then draw its value
        self._to_discard(me, card)
        self._draw(me, VALUE[self.bloodlines[me]][card])
        excess = len(self.hands[me]) - self.game.config.hand_limit
        if excess > 0:  # R8 / A15
            self.owed = excess
            self.resume_phase = self.phase
            self.phase = DISCARD_PHASE

    def _pool(self, me: int, card: int) -> None:
        self.hands[me].remove(card)  # R7c: pooled cards never return (A31)
        self.pools[me].append(card)
        self.zones[me][K_OF[card]] = Z_POOL
        self.pool_values[me] += VALUE[self.bloodlines[me]][card]

    def _discard_owed(self, me: int, card: int) -> None:
        self.hands[me].remove(card)  # R8
        self._to_discard(me, card)
        self.owed -= 1
        if not self.owed:
            self.phase = self.resume_phase

    def _end_step1(self, me: int) -> None:
        if len(self.hands[me]) < self.game.config.hand_limit and self.piles[me]:
            self._draw(me, 1)  # R4 / A17: exactly one card, however small the hand
            self.moved = True
        self.phase = MAIN

    # main actions (R9)

    def _heart(self, me: int, card: int, royal: int) -> None:
        self.hands[me].remove(card)
        self.hearts[me][royal].append(card)
        self.zones[me][K_OF[card]] = Z_HEART + royal
        self.defense[me][royal] += VALUE[self.bloodlines[me]][card]
        self._end_turn()

    def _new_unit(self, me: int, card: int) -> None:
        self.hands[me].remove(card)
        self.zones[me][K_OF[card]] = Z_UNIT + len(self.units[me])
        self.units[me].append([card])  # R17: appended at the end
        self.attack[me].append(VALUE[self.bloodlines[me]][card])
        self._end_turn()

    def _add_to_unit(self, me: int, card: int, unit: int) -> None:
        self.hands[me].remove(card)
        self.units[me][unit].append(card)
        self.zones[me][K_OF[card]] = Z_UNIT + unit
        self.attack[me][unit] += VALUE[self.bloodlines[me]][card]
        self._end_turn()

    def _unit_attack(self, me: int, unit: int, royal: int) -> None:
        units = self.units[me]
        for card in units.pop(unit):  # R10.1
            self._to_discard(me, card)
        del self.attack[me][unit]
        zones = self.zones[me]
        for later in units[unit:]:  # R17: later units move down one index
            for card in later:
                zones[K_OF[card]] -= 1
        self._strike(me, royal, by_joker=False)

    def _joker_attack(self, me: int, royal: int) -> None:
        self.discards[me].append(self.jokers[me].pop(0))  # R10.1 / A35: the lowest joker attacks
        self._strike(me, royal, by_joker=True)

    def _buy_joker(self, me: int) -> None:
        for card in self.pools[me]:  # R9f / A31: the whole pool is spent
            self._to_discard(me, card)
        self.pools[me] = []
        self.pool_values[me] = 0
        self.jokers[me].append(self.supply[me].pop(0))
        self.jokers[me].sort()
        self._end_turn()  # A30: the new joker waits for the next turn

    def _strike(self, me: int, royal: int, by_joker: bool) -> None:
        """R10 steps 2-5 against the opponent's ``royal``."""
        enemy = 1 - me
        for card in self.hearts[enemy][royal]:  # R10.2: the hearts go whatever happens
            self._to_discard(enemy, card)
        self.hearts[enemy][royal] = []
        self.defense[enemy][royal] = 0
        if self.jokers[enemy]:  # R10.3: the defender decides out of turn (A33)
            self.phase = DECOY_PHASE
            self.current_player = enemy
            self.decoy_royal = royal
            self.decoy_by_joker = by_joker
            return
        self._kill(enemy, royal)

    def _resolve_decoy(self, decoy: bool) -> None:
        enemy = 1 - self.active
        royal = self.decoy_royal
        self.decoy_royal = NO_PLAYER
        self.decoy_by_joker = False
        if decoy:  # the joker dies instead; the royal survives with def 0
            self.discards[enemy].append(self.jokers[enemy].pop(0))
            self._end_turn()
        else:
            self._kill(enemy, royal)

    def _kill(self, owner: int, royal: int) -> None:
        """R10.4: the royal goes to its owner's discard pile; R14: the third loss ends the game."""
        self.royals[owner].remove(royal)
        self.discards[owner].append(royal_card(self.bloodlines[owner], royal))
        weight = self.game.config.shaping_weight
        if weight:
            self._pay(1 - owner, weight)
        if not self.royals[owner]:
            self._finish(1 - owner, "kill", truncated=False)
        else:
            self._end_turn()

    # turn end and game end (R5, R14-R16)

    def _end_turn(self) -> None:
        self.idle = 0 if self.moved else self.idle + 1
        config = self.game.config
        if self.idle >= 2:  # R15: stalemate, which wins over a truncation at the same turn end
            self._finish_unfinished("stalemate", truncated=False)
            return
        if config.max_turns is not None and self.turn >= config.max_turns:
            self._finish_unfinished("turn_limit", truncated=True)  # R16
            return
        self.turn += 1
        self.active = 1 - self.active
        self.current_player = self.active
        self.phase = STEP1
        self.moved = False

    def _finish_unfinished(self, outcome: str, truncated: bool) -> None:
        """R16: scored by ``unfinished_result``."""
        winner = NO_PLAYER
        if self.game.config.unfinished_result == "royals":
            counts = self.royal_counts()
            if counts[0] != counts[1]:
                winner = 0 if counts[0] > counts[1] else 1
        self._finish(winner, outcome, truncated)

    def _finish(self, winner: int, outcome: str, truncated: bool) -> None:
        self.winner = winner
        self.outcome = outcome
        if truncated:
            self.truncated = True
        else:
            self.terminated = True
        self.current_player = NO_PLAYER
        self.decoy_royal = NO_PLAYER
        if self.phase == DECOY_PHASE:  # the declined decoy resolved the attacker's main action
            self.phase = MAIN
        if winner != NO_PLAYER:
            self._pay(winner, 1.0)

    def _pay(self, player: int, amount: float) -> None:
        """Zero-sum: ``player`` gets ``amount``, the opponent ``-amount``."""
        self.rewards[player] += amount
        self.rewards[1 - player] -= amount

    # -- views and text --------------------------------------------------------------------------

    def view(self, player: int) -> BloodlinesView:
        """Section 7: everything public, plus ``player``'s own hand."""
        opponent = 1 - player
        hearts = self.hearts
        units = self.units
        return BloodlinesView(
            player,
            self.current_player,
            self.active,
            self.phase,
            self.owed,
            self.turn,
            self.idle,
            (self.bloodlines[0], self.bloodlines[1]),
            tuple(self.hands[player]),
            (len(self.hands[0]), len(self.hands[1])),
            (len(self.piles[0]), len(self.piles[1])),
            (tuple(self.royals[0]), tuple(self.royals[1])),
            (tuple(map(tuple, hearts[0])), tuple(map(tuple, hearts[1]))),
            (tuple(self.defense[0]), tuple(self.defense[1])),
            (tuple(map(tuple, units[0])), tuple(map(tuple, units[1]))),
            (tuple(self.attack[0]), tuple(self.attack[1])),
            (tuple(self.jokers[0]), tuple(self.jokers[1])),
            (len(self.supply[0]), len(self.supply[1])),
            (tuple(self.pools[0]), tuple(self.pools[1])),
            (self.pool_values[0], self.pool_values[1]),
            (tuple(self.discards[0]), tuple(self.discards[1])),
            bytes(self.zones[player]),
            bytes(self.zones[opponent]).translate(_HIDE_HAND),
            self.decoy_royal,
            self.decoy_by_joker,
            self.terminated or self.truncated,
            self.winner,
        )

    def card_locations(self) -> dict[str, list[int]]:
        """Every card of both decks by zone; a zone name ends in its owner's seat (``hand_0``).

        Each owner's zones together hold that owner's 54 cards (52 + ``X1``, ``X2``) exactly
        once: number cards, royals (alive or discarded), jokers (supply, play, discard or set
        aside) and the cards set aside at setup (S3).
        """
        zones: dict[str, list[int]] = {}
        for p in (0, 1):
            bloodline = self.bloodlines[p]
            zones[f"pile_{p}"] = list(self.piles[p])
            zones[f"hand_{p}"] = list(self.hands[p])
            zones[f"royals_{p}"] = [royal_card(bloodline, r) for r in self.royals[p]]
            for r, name in enumerate(ROYAL_NAMES):
                zones[f"hearts_under_{name}_{p}"] = list(self.hearts[p][r])
            zones[f"units_{p}"] = [c for unit in self.units[p] for c in unit]
            zones[f"jokers_in_play_{p}"] = list(self.jokers[p])
            zones[f"joker_supply_{p}"] = list(self.supply[p])
            zones[f"pool_{p}"] = list(self.pools[p])
            zones[f"discard_{p}"] = list(self.discards[p])
            zones[f"set_aside_{p}"] = list(self.set_aside[p])
        return zones

    def sample_hidden(self, player: int, rng: np.random.Generator) -> BloodlinesState:
        """Redeal the opponent's hand and pile from their union, and reorder ``player``'s own pile.

        Section 7: the opponent's hand and every pile order are hidden; sizes are public.
        """
        twin = self.clone()
        opponent = 1 - player
        hidden = twin.hands[opponent] + twin.piles[opponent]
        order = rng.permutation(len(hidden)).tolist()
        cut = len(twin.hands[opponent])
        twin.hands[opponent] = sorted(hidden[i] for i in order[:cut])
        twin.piles[opponent] = [hidden[i] for i in order[cut:]]
        zones = twin.zones[opponent]
        for card in twin.hands[opponent]:
            zones[K_OF[card]] = Z_HAND
        for card in twin.piles[opponent]:
            zones[K_OF[card]] = Z_PILE
        own = twin.piles[player]
        twin.piles[player] = [own[i] for i in rng.permutation(len(own)).tolist()]
        twin._reseed_from(rng)  # future chance reseeded (built only if ever used)
        return twin

    def render(self) -> str:
        def cards(cs: Sequence[int]) -> str:
            return " ".join(card_codes(cs)) or "-"

        lines = [f"Bloodlines  turn {self.turn}  player_{self.active} to play  phase {PHASE_NAMES[self.phase]}"
                 + (f" (owes {self.owed})" if self.owed else "") + f"  idle turns {self.idle}"]
        for p in (0, 1):
            bloodline = self.bloodlines[p]
            mark = ">" if p == self.current_player else " "
            lines.append(f"{mark} player_{p}  bloodline {SUITS[bloodline]}  hand [{cards(self.hands[p])}]  "
                         f"pile {len(self.piles[p])}")
            royals = [f"{card_code(royal_card(bloodline, r))}(def {self.defense[p][r]}: "
                      f"{cards(self.hearts[p][r])})" for r in self.royals[p]]
            lines.append(f"    royals  {'  '.join(royals) or '-'}")
            units = [f"u{u}[{cards(unit)}] atk {self.attack[p][u]}" for u, unit in enumerate(self.units[p])]
            lines.append(f"    units   {'  '.join(units) or '-'}")
            if bloodline == DIAMONDS:
                lines.append(f"    pool    [{cards(self.pools[p])}] value {self.pool_values[p]}  "
                             f"jokers in play [{cards(self.jokers[p])}]  supply [{cards(self.supply[p])}]")
            lines.append(f"    discard [{cards(self.discards[p])}]")
        if self.phase == DECOY_PHASE and not (self.terminated or self.truncated):
            defender = self.current_player
            target = card_code(royal_card(self.bloodlines[defender], self.decoy_royal))
            lines.append(f"player_{defender} decides: decoy a joker for {target}?")
        if self.terminated or self.truncated:
            result = f"player_{self.winner} wins" if self.winner != NO_PLAYER else "draw"
            lines.append(f"game over ({self.outcome}): {result}, royals "
                         f"{self.royal_counts()[0]}-{self.royal_counts()[1]}")
        return "\n".join(lines)


# -- the game ---------------------------------------------------------------------------------------

class Bloodlines(Game):
    """Bloodlines for two players; see the environment docstring for the tables."""

    name = "bloodlines_v0"
    config_class = BloodlinesConfig
    state_class = BloodlinesState
    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    reset_options = ("decks",)
    config: BloodlinesConfig

    @property
    def num_players(self) -> int:
        return 2

    def max_decisions(self) -> int:
        """R15: every non-idle turn moves a card for good; at most 2 x 115 such moves, so at most
        461 turns. Decisions: one per card-moving action (230), one decoy per attack (230), and
        at most ``end step 1`` + ``pass`` per turn."""
        turns = MAX_TURNS_BOUND if self.config.max_turns is None else min(self.config.max_turns, MAX_TURNS_BOUND)
        return 2 * MAX_CARD_MOVES + 2 * turns

    def return_bounds(self) -> tuple[float, float]:
        """Every seat's return lies in ``[-(1 + 3w), 1 + 3w]``: the result is within 1, and each side has
        three royals to kill or lose, ``w`` each."""
        bound = 1.0 + 3 * self.config.shaping_weight
        return -bound, bound

    @classmethod
    def variant_configs(cls) -> list[dict[str, Any]]:
        return [
            {},
            {"bloodlines": ("D", "S"), "starting_player": 1, "joker_cost": 12, "joker_supply": 2},
            {"bloodlines": ("C", "D"), "hand_limit": 3, "joker_supply": 1, "allow_pass": True,
             "unfinished_result": "draw"},
            {"bloodlines": ("H", "C"), "auto_skip_forced": False, "max_turns": 30, "shaping_weight": 0.1},
            {"starting_player": 0, "joker_supply": 0, "max_turns": None, "hand_limit": 6},
        ]

    def _new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None = None) -> BloodlinesState:
        """S1-S7: bloodlines, piles, deal, starting player (random draws in S7's order)."""
        config = self.config
        stacked = _stacked_piles(options)
        if config.bloodlines is not None:
            bloodlines = [SUITS.index(config.bloodlines[0]), SUITS.index(config.bloodlines[1])]
        else:  # S2 / A4: p0 uniform, p1 uniform among the other three
            first = int(rng.integers(4))
            others = [s for s in range(4) if s != first]
            bloodlines = [first, others[int(rng.integers(3))]]
        piles = []
        for given in stacked:
            if given is None:
                piles.append([NUMBER_CARDS[i] for i in rng.permutation(NUM_NUMBER_CARDS).tolist()])
            else:
                piles.append(list(given))
        if config.starting_player is not None:
            starter = config.starting_player
        else:
            starter = int(rng.integers(2))  # S6: the coin
        state = BloodlinesState.__new__(BloodlinesState)
        state.game = self
        state.rng = rng
        state.bloodlines = bloodlines
        limit = config.hand_limit
        state.hands = [sorted(piles[0][:limit]), sorted(piles[1][:limit])]  # S5
        state.piles = [piles[0][limit:], piles[1][limit:]]
        state.royals = [[0, 1, 2], [0, 1, 2]]
        state.hearts = [[[], [], []], [[], [], []]]
        state.defense = [[0, 0, 0], [0, 0, 0]]
        state.units = [[], []]
        state.attack = [[], []]
        state.jokers = [[], []]
        state.supply = [list(JOKER_IDS[:config.joker_supply]) if b == DIAMONDS else [] for b in bloodlines]
        state.pools = [[], []]
        state.pool_values = [0, 0]
        state.discards = [[], []]
        state.set_aside = [_set_aside(b, supply) for b, supply in zip(bloodlines, state.supply, strict=True)]
        state.zones = [[Z_PILE] * NUM_NUMBER_CARDS, [Z_PILE] * NUM_NUMBER_CARDS]
        for p in (0, 1):
            for card in state.hands[p]:
                state.zones[p][K_OF[card]] = Z_HAND
        state.starting_player = starter
        state.turn = 1
        state.active = starter
        state.current_player = starter
        state.phase = STEP1
        state.resume_phase = STEP1
        state.owed = 0
        state.idle = 0
        state.moved = False
        state.decoy_royal = NO_PLAYER
        state.decoy_by_joker = False
        state.terminated = state.truncated = False
        state.winner = NO_PLAYER
        state.outcome = ""
        state.rewards = [0.0, 0.0]
        state.cumulative = [0.0, 0.0]
        state.history = []
        state._settle()  # R11 applies right after the deal too
        return state

    def encode(self, view: Any) -> np.ndarray:
        return self._encoding.encode(view, self.config)


def _set_aside(bloodline: int, supply: Sequence[int]) -> list[int]:
    """S3: every card of the owner's 54 that is not a number card, an own royal or a hireable joker."""
    kept = set(NUMBER_CARDS) | {royal_card(bloodline, r) for r in range(3)} | set(supply)
    return [c for c in range(54) if c not in kept]


def _stacked_piles(options: Mapping[str, Any] | None) -> list[list[int] | None]:
    """Reset option ``decks`` = [pile_0, pile_1] (S4); ``Game.new_state`` rejects other keys."""
    options = options or {}
    decks = options.get("decks")
    if decks is None:
        return [None, None]
    if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence) or len(decks) != 2:
        raise DeckError(f"reset option 'decks' must be a list of two piles [pile_0, pile_1], got {decks!r}")
    return [None if d is None else parse_deck(d, NUMBER_CARDS, what=f"decks[{i}] (player_{i}'s pile)",
                                              allow_partial=True)
            for i, d in enumerate(decks)]


def next_starting_player(previous_starter: int, previous_winner: int) -> int:
    """R18 / A9: the loser of the previous game starts; after a draw (winner -1), the player who
    did not start it. A match driver passes the result as the next game's ``starting_player``."""
    if previous_winner in (0, 1):
        return 1 - previous_winner
    return 1 - previous_starter
