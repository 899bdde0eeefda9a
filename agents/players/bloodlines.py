"""Rule-based Bloodlines players (spec section 11), weakest first.

All read only the player's view (``BloodlinesView``): own hand, the public table (royals with
their hearts, units, jokers, pools, discard piles), sizes, and the unseen sets derived from them.

==============  =============================================================================
name            play
==============  =============================================================================
``aggressor``   baseline 2: cycle every club/diamond (clubs: the power with the highest club;
                diamonds: pool every diamond); attack whenever possible with the smallest unit
                that beats the royal with the most hearts; else a joker; else buy a joker;
                else add a spade to the strongest unit (or a new unit); else a heart on the
                weakest royal; always decoy
``defender``    baseline 3: the threat-aware defender. Kills whenever it can (smallest unit,
                the best-defended beatable royal); otherwise raises the defense of a royal that
                the enemy's best unit (or, with the unseen spades, its next-turn unit) can
                kill to exactly what saves it; builds units just above the weakest enemy
                defense ("no overkill"), several small ones against def-0 royals; keeps one
                joker as a decoy once down to two royals; pools only up to ``joker_cost``; uses
                the clubs power only while the pile is long; keeps the best four cards when
                discarding
==============  =============================================================================
"""

from __future__ import annotations

from agents.players.base import Agent, Decision
from card_envs.bloodlines.rules import (
    ADD_TO_UNIT,
    ATTACK,
    BUY_JOKER,
    CLUBS,
    CYCLE,
    DECOY,
    DECOY_PHASE,
    DIAMONDS,
    DISCARD,
    DISCARD_PHASE,
    END_STEP1,
    HEART,
    HEARTS,
    JOKER_ATTACK,
    K_OF,
    MAX_ADD_UNIT,
    NEW_UNIT,
    PASS,
    POOL,
    POWER,
    SPADES,
    STEP1,
    VALUE,
    BloodlinesView,
)
from card_envs.cards import RANK_VALUE, SUIT_INDEX


def _rank_slot(card: int) -> int:
    return RANK_VALUE[card] - 2


class _Table:
    """What a decision needs from the view, from the acting player's side."""

    def __init__(self, decision: Decision) -> None:
        view: BloodlinesView = decision.view
        self.view = view
        self.config = decision.game.config
        self.legal = set(decision.legal_actions)
        self.me = me = view.player
        self.enemy = enemy = 1 - me
        self.bloodline = view.bloodlines[me]
        self.values = VALUE[self.bloodline]
        self.enemy_values = VALUE[view.bloodlines[enemy]]
        self.hand = view.hand
        self.my_royals = view.royals[me]
        self.my_defense = view.defense[me]
        self.enemy_royals = view.royals[enemy]
        self.enemy_defense = view.defense[enemy]
        self.my_attack = view.attack[me]
        self.enemy_attack = view.attack[enemy]

    def of_suit(self, suit: int) -> list[int]:
        return [c for c in self.hand if SUIT_INDEX[c] == suit]

    def attacks(self) -> list[tuple[int, int]]:
        """Legal (unit, royal) attacks."""
        return [divmod(a - ATTACK, 3) for a in sorted(self.legal) if ATTACK <= a < JOKER_ATTACK]


def _discard_worst(table: _Table, keep_score) -> int:
    """R8: discard the hand card with the lowest keep score."""
    card = min(table.hand, key=keep_score)
    return DISCARD + K_OF[card]


def _smallest_kill(table: _Table) -> int | None:
    """The smallest unit beating the best-defended beatable royal (the whole unit is lost anyway)."""
    attacks = table.attacks()
    if not attacks:
        return None
    unit, royal = min(attacks, key=lambda ur: (-table.enemy_defense[ur[1]], table.my_attack[ur[0]]))
    return ATTACK + 3 * unit + royal


class GreedyAggressor(Agent):
    """Spec 11.2: attack whenever possible, otherwise build; cycle everything else."""

    name = "heuristic:aggressor"

    def act(self, decision: Decision) -> int:
        table = _Table(decision)
        view = table.view
        if view.phase == DECOY_PHASE:
            return DECOY
        if view.phase == DISCARD_PHASE:
            return _discard_worst(table, lambda c: table.values[c] if SUIT_INDEX[c] in (HEARTS, SPADES) else -1)
        resource = self._resource(table)
        if resource is not None:
            return resource
        if view.phase == STEP1:
            return END_STEP1
        for choice in (self._attack, self._joker, self._buy, self._spade, self._heart):
            action = choice(table)
            if action is not None:
                return action
        return PASS if PASS in table.legal else min(table.legal)

    @staticmethod
    def _resource(table: _Table) -> int | None:
        legal = table.legal
        for card in sorted(table.hand, key=lambda c: -RANK_VALUE[c]):
            suit = SUIT_INDEX[card]
            if suit == CLUBS and POWER + _rank_slot(card) in legal:
                return POWER + _rank_slot(card)
            if suit == DIAMONDS and POOL + _rank_slot(card) in legal:
                return POOL + _rank_slot(card)
            if suit in (CLUBS, DIAMONDS) and CYCLE + K_OF[card] in legal:
                return CYCLE + K_OF[card]
        return None

    @staticmethod
    def _attack(table: _Table) -> int | None:
        return _smallest_kill(table)

    @staticmethod
    def _joker(table: _Table) -> int | None:
        jokers = [a for a in sorted(table.legal) if JOKER_ATTACK <= a < BUY_JOKER]
        if not jokers:
            return None
        return max(jokers, key=lambda a: table.enemy_defense[a - JOKER_ATTACK])

    @staticmethod
    def _buy(table: _Table) -> int | None:
        return BUY_JOKER if BUY_JOKER in table.legal else None

    @staticmethod
    def _spade(table: _Table) -> int | None:
        spades = table.of_suit(SPADES)
        if not spades:
            return None
        best = max(spades, key=lambda c: table.values[c])
        if table.my_attack and len(table.my_attack) <= MAX_ADD_UNIT:
            strongest = max(range(len(table.my_attack)), key=lambda u: table.my_attack[u])
            action = ADD_TO_UNIT + MAX_ADD_UNIT * _rank_slot(best) + strongest
            if action in table.legal:
                return action
        return NEW_UNIT + _rank_slot(best)

    @staticmethod
    def _heart(table: _Table) -> int | None:
        hearts = table.of_suit(HEARTS)
        if not hearts or not table.my_royals:
            return None
        best = max(hearts, key=lambda c: table.values[c])
        weakest = min(table.my_royals, key=lambda r: table.my_defense[r])
        return HEART + 3 * _rank_slot(best) + weakest


class ThreatAwareDefender(Agent):
    """Spec 11.3: kill when possible, otherwise defend what is threatened, build without overkill."""

    name = "heuristic:defender"
    #: use the clubs power only while the pile holds at least this many cards
    power_pile = 12

    def act(self, decision: Decision) -> int:
        table = _Table(decision)
        view = table.view
        if view.phase == DECOY_PHASE:
            return DECOY  # saves a royal without spending a main action
        if view.phase == DISCARD_PHASE:
            return _discard_worst(table, lambda c: self._keep_score(table, c))
        resource = self._resource(table)
        if resource is not None:
            return resource
        if view.phase == STEP1:
            return END_STEP1
        for choice in (_smallest_kill, self._defend, self._joker, self._buy, self._build, self._reinforce):
            action = choice(table)
            if action is not None and action in table.legal:
                return action
        main = [a for a in sorted(table.legal) if HEART <= a <= BUY_JOKER]
        return PASS if PASS in table.legal or not main else main[0]

    # -- threats -------------------------------------------------------------------------------------

    @staticmethod
    def _threat(table: _Table) -> int:
        """The attack the enemy may have in two turns: its best unit grown by its best unseen spade."""
        best = max(table.enemy_attack, default=0)
        spades = [table.enemy_values[c] for c in table.view.opponent_unseen if SUIT_INDEX[c] == SPADES]
        return best + max(spades, default=0)  # a unit grown (or started) by their best spade

    def _defend(self, table: _Table) -> int | None:
        """A heart that makes a threatened royal safe (def >= threat), as small as possible."""
        hearts = table.of_suit(HEARTS)
        if not hearts:
            return None
        threat = max(table.enemy_attack, default=0)
        if not threat:
            return None
        options = []
        for royal in table.my_royals:
            defense = table.my_defense[royal]
            if defense >= threat:
                continue
            for card in hearts:
                raised = defense + table.values[card]
                if raised >= threat:
                    options.append((raised - threat, -defense, card, royal))
        if not options:
            return None
        _, _, card, royal = min(options)
        return HEART + 3 * _rank_slot(card) + royal

    # -- jokers --------------------------------------------------------------------------------------

    @staticmethod
    def _joker(table: _Table) -> int | None:
        jokers = [a for a in sorted(table.legal) if JOKER_ATTACK <= a < BUY_JOKER]
        if not jokers:
            return None
        if ThreatAwareDefender._keeps_decoy(table):
            return None
        return max(jokers, key=lambda a: table.enemy_defense[a - JOKER_ATTACK])

    @staticmethod
    def _keeps_decoy(table: _Table) -> bool:
        """Down to two royals, a last joker is worth more as a decoy, unless it wins the game."""
        return len(table.my_royals) <= 2 and len(table.view.jokers[table.me]) == 1 and len(table.enemy_royals) > 1

    @staticmethod
    def _buy(table: _Table) -> int | None:
        return BUY_JOKER if BUY_JOKER in table.legal else None

    # -- building ------------------------------------------------------------------------------------

    @staticmethod
    def _build(table: _Table) -> int | None:
        """A spade that makes some unit beat the weakest enemy royal next turn, with the least overkill."""
        spades = table.of_suit(SPADES)
        if not spades or not table.enemy_royals:
            return None
        target = min(table.enemy_defense[r] for r in table.enemy_royals)
        options = []
        for card in spades:
            value = table.values[card]
            if value > target:
                options.append((value - target, 1, NEW_UNIT + _rank_slot(card)))
            for unit, attack in enumerate(table.my_attack[:MAX_ADD_UNIT]):
                if attack <= target < attack + value:
                    options.append((attack + value - target, 0, ADD_TO_UNIT + MAX_ADD_UNIT * _rank_slot(card) + unit))
        if not options:
            return None
        return min(options)[2]

    def _reinforce(self, table: _Table) -> int | None:
        """No kill set up this turn: a heart on the weakest royal, else grow the strongest unit."""
        hearts = table.of_suit(HEARTS)
        spades = table.of_suit(SPADES)
        threat = self._threat(table)
        exposed = [r for r in table.my_royals if table.my_defense[r] < threat]
        if hearts and (exposed or not spades):
            card = max(hearts, key=lambda c: table.values[c])
            royal = min(exposed or table.my_royals, key=lambda r: table.my_defense[r])
            return HEART + 3 * _rank_slot(card) + royal
        if spades:
            card = max(spades, key=lambda c: table.values[c])
            if table.my_attack and len(table.my_attack) <= MAX_ADD_UNIT:
                unit = max(range(len(table.my_attack)), key=lambda u: table.my_attack[u])
                return ADD_TO_UNIT + MAX_ADD_UNIT * _rank_slot(card) + unit
            return NEW_UNIT + _rank_slot(card)
        return None

    # -- resources -----------------------------------------------------------------------------------

    def _resource(self, table: _Table) -> int | None:
        legal = table.legal
        view = table.view
        pile = view.pile_sizes[table.me]
        wants_jokers = view.supply_sizes[table.me] > 0 and view.pool_values[table.me] < table.config.joker_cost
        if wants_jokers and self._keeps_decoy(table):
            # pooling shrinks the hand: with nothing else to play, the kept joker would have to attack (A47)
            wants_jokers = any(SUIT_INDEX[c] in (HEARTS, SPADES) for c in table.hand)
        for card in sorted(table.hand, key=lambda c: -RANK_VALUE[c]):
            suit = SUIT_INDEX[card]
            if suit == CLUBS and POWER + _rank_slot(card) in legal and pile >= self.power_pile:
                return POWER + _rank_slot(card)
            if suit == DIAMONDS and POOL + _rank_slot(card) in legal and wants_jokers:
                return POOL + _rank_slot(card)
            if suit in (CLUBS, DIAMONDS) and CYCLE + K_OF[card] in legal:
                return CYCLE + K_OF[card]
        return None

    @staticmethod
    def _keep_score(table: _Table, card: int) -> float:
        suit = SUIT_INDEX[card]
        value = table.values[card]
        if suit == SPADES:
            return value + 0.5
        if suit == HEARTS:
            return value
        if suit == CLUBS and table.bloodline == CLUBS:
            return value / 2
        if suit == DIAMONDS and table.bloodline == DIAMONDS:
            return value / 2
        return -1.0


AGENTS = {"aggressor": GreedyAggressor, "defender": ThreatAwareDefender}
STRONGEST = "defender"
