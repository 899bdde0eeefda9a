"""Battlecards rules engine (spec ``specs/battlecards.md``, rules R1-R25, rulings A1-A47).

Pure rules: no PettingZoo, no observation vectors (see ``encoding.py``). Card ids are those of
:mod:`card_envs.cards`; a card's *kind* is its rank (``2`` -> 0 ... ``A`` -> 12) or 13 for a
joker, and action ``a`` means "a card of kind ``a``" (section 8).

The round is an explicit state machine. ``phase`` is the decision the current player owes --
``LEAD``, ``FOLLOW``, ``BURY`` or ``WAR_UP`` -- or ``OVER``; every automatic step between two
decisions (comparisons, face-down placements from piles, draws, recycles, collecting the
stakes, refills, elimination, game end; R24) runs inside ``apply`` in these functions::

    LEAD -> FOLLOW* -> _resolve_round --one winner--> _win_round -> _end_round -> LEAD
                            |
                            +--tie--> _start_level --> (cease fire | last-card tie | face-down phase)
    face-down phase: _next_commit -> _begin_commit -> [BURY*] -> _finish_commit -> ... -> WAR_UP*
    WAR_UP* -> _resolve_level --one winner--> _win_round;  --tie--> _start_level

Rule numbers in comments refer to the spec.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from card_envs.cards import CODES, JOKER_IDS, RANK_VALUE, card_codes, card_id, standard_deck
from card_envs.core.config import GameConfig, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState
from card_envs.core.errors import ConfigError, DeckError, StateError

# -- cards, kinds, values (section 2) ---------------------------------------------------------------

NUM_KINDS = 14
JOKER_KIND = 13
KIND_NAMES: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "X")
#: kind of each card id: rank 2..A -> 0..12, jokers -> 13
KIND: tuple[int, ...] = tuple((v - 2) % 13 for v in RANK_VALUE[:52]) + (JOKER_KIND, JOKER_KIND)
#: value of each natural card id (A = 14); 0 for the jokers, whose value is ``jv`` (R20)
NATURAL_VALUE: tuple[int, ...] = tuple(k + 2 for k in KIND[:52]) + (0, 0)
#: value of each natural kind (index 13, the joker, is looked up as ``jv``)
KIND_VALUE: tuple[int, ...] = tuple(range(2, 15)) + (0,)
MAX_DECK = 54

NUM_ACTIONS = NUM_KINDS
ACTION_NAMES: tuple[str, ...] = tuple(f"play {name}" for name in KIND_NAMES)

# -- decision kinds (section 8.1) ---------------------------------------------------------------------

LEAD, FOLLOW, BURY, WAR_UP = 0, 1, 2, 3
OVER = -1
DECISION_NAMES: tuple[str, ...] = ("LEAD", "FOLLOW", "BURY", "WAR_UP")
VERBS: tuple[str, ...] = ("lead", "follow", "bury", "war-up")

# -- table placements (R3, R23): [card, owner, source, level] -------------------------------------------

ROUND_CARD, WAR_CARD, FROM_PILE, FROM_HAND, FROM_RECYCLED = 0, 1, 2, 3, 4
SOURCE_NAMES: tuple[str, ...] = ("round card", "war card", "pile", "hand", "recycled pile")
#: a hidden card's place, for ``sample_hidden``: (zone -- a hand, a pile or a table placement --, index in
#: it, whether it is in the pile part: the face-down pile or a face-down table card taken from a pile,
#: the retirement level its card is known to survive: a hand card's floor, else 0)
_Slot = tuple[list[int], int, bool, int]
HIDDEN = -1  #: a face-down card's id in a view that may not see it


def sorted_deck(jokers: bool) -> list[int]:
    """The spec's sorted deck ``2C 3C ... AC 2D ... AS`` (+ ``X1 X2``) as card ids (section 2)."""
    natural = sorted(range(52), key=lambda c: (c // 13, KIND[c]))
    return natural + (list(JOKER_IDS) if jokers else [])


@dataclass(frozen=True)
class BattlecardsConfig(GameConfig):
    """Options of spec section 6."""

    num_players: int = 2
    jokers: bool = False
    joker_initial_value: int = 1
    retire_lowest_on_flip: bool = False
    retire_max_rank: int = 10
    cease_fire: bool = False
    first_leader: int | None = 0
    hand_size: int = 5
    war_facedown_count: int = 3
    max_rounds: int | None = 1000
    truncation_scoring: Literal["most_cards", "card_share"] = "most_cards"
    shaping_weight: float = 0.0
    shuffle_mid_game: bool = True

    def validate(self) -> None:
        check_range(self, "num_players", 2, 6)
        check_range(self, "joker_initial_value", 1, 14)
        check_range(self, "retire_max_rank", 2, 13)
        check_range(self, "hand_size", 1, 10)
        check_range(self, "war_facedown_count", 0, 5)
        check_range(self, "max_rounds", low=1)
        check_range(self, "shaping_weight", low=0.0)
        if self.first_leader is not None and not 0 <= self.first_leader < self.num_players:
            raise ConfigError(
                f"option 'first_leader' must be a seat 0..{self.num_players - 1} or None (random), "
                f"got {self.first_leader!r}"
            )


class BattlecardsView(NamedTuple):
    """What one player may know (spec section 7), including what perfect memory of public
    events gives (7.5), so that agents need no memory. Seats are absolute; ``player`` is the viewer.
    Per-kind counts are 14-tuples indexed by kind (``2``=0 .. ``A``=12, joker=13).

    ======================  ===========================================================================
    field                   meaning
    ======================  ===========================================================================
    ``player``              the viewer's seat
    ``num_players``         ``N``
    ``decision``            the decision kind the viewer owes now (LEAD/FOLLOW/BURY/WAR_UP), else -1
    ``acting``              seat owing the next decision (-1 once over)
    ``acting_decision``     its decision kind (public), -1 once over
    ``bury_left``           BURY decisions the acting player still owes in this commitment
    ``leader``              seat that led (or leads) the current round
    ``rounds_completed``    rounds completed so far
    ``active``              per seat: not eliminated
    ``hand``                the viewer's hand, sorted card ids
    ``hand_kinds``          the viewer's hand per kind
    ``buried``              cards the viewer buried from hand this round (ids, in order)
    ``pile_known``          ``F_o``: kinds known to be in the viewer's face-down pile (+ own unrevealed
                            pile-sourced face-down table cards)
    ``pile_unknown``        ``f_o``: how many of those are unknown
    ``hand_sizes``          per seat
    ``pile_sizes``          per seat: face-down pile size
    ``face_up_piles``       per seat: the face-up pile, oldest first (public, A12)
    ``face_up_kinds``       per seat: the face-up pile per kind
    ``table``               every placement this round: (card id or -1 if hidden from the viewer,
                            owner, source, war level); sources: 0 round card, 1 war card, 2 pile,
                            3 hand, 4 recycled pile
    ``table_up_kinds``      face-up table cards per kind
    ``round_cards``         per seat: this round's card (-1 none)
    ``fighting``            per seat: fighting card (-1 none)
    ``entry_order``         the war's participants in entry order (empty: no war)
    ``participants``        participants of the current war level, entry order
    ``stuck``               per seat: stuck this round (R10)
    ``war_level``           0 = no war, else the current level (1, 2, ...)
    ``facedown_pile``       per seat: face-down table cards from pile or recycled pile
    ``facedown_hand``       per seat: face-down table cards buried from hand
    ``known``               per seat: ``K_p`` (7.5); the viewer's own entry is its true hidden part too
    ``unknown``             per seat: ``u_p``
    ``joker_value``         ``jv``
    ``retire_level``        ``rl`` (1 = nothing retired)
    ``discard``             retired cards, in order of retirement
    ``set_aside``           number of cards set aside at the deal (A4)
    ``unaccounted``         ``unaccounted_o`` per kind (7.5)
    ``over``                the episode has ended
    ======================  ===========================================================================
    """

    player: int
    num_players: int
    decision: int
    acting: int
    acting_decision: int
    bury_left: int
    leader: int
    rounds_completed: int
    active: tuple[bool, ...]
    hand: tuple[int, ...]
    hand_kinds: tuple[int, ...]
    buried: tuple[int, ...]
    pile_known: tuple[int, ...]
    pile_unknown: int
    hand_sizes: tuple[int, ...]
    pile_sizes: tuple[int, ...]
    face_up_piles: tuple[tuple[int, ...], ...]
    face_up_kinds: tuple[tuple[int, ...], ...]
    table: tuple[tuple[int, int, int, int], ...]
    table_up_kinds: tuple[int, ...]
    round_cards: tuple[int, ...]
    fighting: tuple[int, ...]
    entry_order: tuple[int, ...]
    participants: tuple[int, ...]
    stuck: tuple[bool, ...]
    war_level: int
    facedown_pile: tuple[int, ...]
    facedown_hand: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]
    unknown: tuple[int, ...]
    joker_value: int
    retire_level: int
    discard: tuple[int, ...]
    set_aside: int
    unaccounted: tuple[int, ...]
    over: bool

    def value(self, card: int) -> int:
        """R2: the value of a card id under the current joker value."""
        return NATURAL_VALUE[card] or self.joker_value

    def kind_value(self, kind: int) -> int:
        """R2: the value of a kind under the current joker value."""
        return KIND_VALUE[kind] or self.joker_value


class BattlecardsState(GameState):
    """A position. Piles are top first; face-up piles and the table oldest first."""

    fields = (
        # cards
        "deck_cards", "composition", "hands", "hand_kinds", "piles", "face_up", "face_up_kinds", "table", "discard",
        "set_aside",
        # players and round
        "active", "phase", "current_player", "leader", "follow_queue", "played", "round_cards", "fighting",
        # war
        "entry_order", "participants", "war_level", "stuck", "war_queue", "bury_left", "commit_rest",
        # public knowledge (7.5)
        "known", "unknown", "pile_known", "pile_unknown", "public_kinds",
        # public knowledge of each seat's recycled piles (R5, 7.5) and hand draws (R4), for ``sample_hidden``
        "recycled", "recycled_before", "recycle_mark", "hand_floors",
        # counters and variants
        "joker_value", "retire_level", "rounds_completed", "shares", "outcome_paid", "eliminated_early",
        # outcome
        "winner_set", "terminated", "truncated", "rewards", "cumulative", "history",
    )

    game: Battlecards
    deck_cards: list[int]
    composition: list[int]
    hands: list[list[int]]
    hand_kinds: list[list[int]]
    piles: list[list[int]]
    face_up: list[list[int]]
    face_up_kinds: list[list[int]]
    table: list[list[int]]
    discard: list[int]
    set_aside: list[int]
    active: list[bool]
    phase: int
    leader: int
    follow_queue: list[int]
    played: list[int]
    round_cards: list[int]
    fighting: list[int]
    entry_order: list[int]
    participants: list[int]
    war_level: int
    stuck: list[bool]
    war_queue: list[int]
    bury_left: int
    commit_rest: int
    known: list[list[int]]
    unknown: list[int]
    pile_known: list[list[int]]
    pile_unknown: list[int]
    #: per kind: cards in face-up piles, face up on the table, in the discard, or in some ``K_p``
    public_kinds: list[int]
    #: per seat: the cards of its last recycled face-up pile (R5) not shown since, per kind -- exactly
    #: the kinds of its hidden cards that came from that pile; None before its first recycle
    recycled: list[list[int] | None]
    #: per seat, in the round of its last recycle only: the same for the pile recycled before (its
    #: hidden cards from before that recycle); None otherwise or if they come from the deal
    recycled_before: list[list[int] | None]
    #: per seat: the length of the table at its last recycle in this round (0 if none this round); its
    #: face-down table cards from that index on come from that recycle, the earlier ones from before
    recycle_mark: list[int]
    #: per seat, only with ``retire_lowest_on_flip``: a retirement level for each hand card, ascending,
    #: that it was drawn at or above (R4: so it is no natural card of value <= that level); a sound
    #: bound, since a play or burial does not show which card left (see ``_forget_floor``)
    hand_floors: list[list[int]]
    joker_value: int
    retire_level: int
    rounds_completed: int
    shares: list[float]
    outcome_paid: list[float]
    eliminated_early: list[int]
    #: R18 / R19 winner set W once the game is over
    winner_set: list[int]

    # -- queries ---------------------------------------------------------------------------------

    def value(self, card: int) -> int:
        """R2 / R20: face value, A = 14; a joker is worth ``jv``."""
        return NATURAL_VALUE[card] or self.joker_value

    def cards_held(self, player: int) -> int:
        """``c_p`` = hand + face-down pile + face-up pile (table cards are not counted)."""
        return len(self.hands[player]) + len(self.piles[player]) + len(self.face_up[player])

    def legal_actions(self) -> list[int]:
        """Section 8.2: every kind present in the acting player's hand."""
        if self.phase == OVER:
            return []
        kinds = self.hand_kinds[self.current_player]
        return [k for k in range(NUM_KINDS) if kinds[k]]

    def legal_mask(self) -> np.ndarray:
        if self.phase == OVER:
            return np.zeros(NUM_ACTIONS, np.int8)
        return np.array(self.hand_kinds[self.current_player], np.bool_).view(np.int8)

    def rules_winners(self) -> list[int]:
        """R18 / R19: the winner set ``W`` (several on a draw; on truncation the most cards held)."""
        return list(self.winner_set) if self.phase == OVER else []

    def is_out(self, player: int) -> bool:
        """R17: eliminated players leave the game (PettingZoo: terminated early, then removed)."""
        return not self.active[player]

    def describe_action(self, action: int) -> str:
        """Section 8.3: the descriptive name of ``action`` for the decision now owed, e.g. ``follow 9``."""
        if self.phase == OVER:
            return ACTION_NAMES[action]
        return f"{VERBS[self.phase]} {KIND_NAMES[action]}"

    def clockwise(self, start: int) -> list[int]:
        """R1: the active players clockwise, starting with ``start`` (if active)."""
        n = len(self.active)
        return [s for s in ((start + i) % n for i in range(n)) if self.active[s]]

    # -- decisions (R7, R11c, R12) -----------------------------------------------------------------

    def _apply(self, action: int) -> None:
        player = self.current_player
        card = self._take_from_hand(player, action)
        phase = self.phase
        if self.game.config.retire_lowest_on_flip:
            self._forget_floor(player, card if phase != BURY else None)
        if phase == BURY:
            self._place(player, card, FROM_HAND)
            self.bury_left -= 1
            if self.bury_left == 0:
                self._finish_commit(player, self.commit_rest)
                self._next_commit()
            return
        self._reveal(player, card, phase == WAR_UP and self._hand_predates_recycle(player))
        if phase == WAR_UP:
            self._place(player, card, WAR_CARD)
            self.fighting[player] = card
            if self.war_queue:
                self.current_player = self.war_queue.pop(0)
            else:
                self._resolve_level()
            return
        # LEAD or FOLLOW (R7)
        self._place(player, card, ROUND_CARD)
        self.round_cards[player] = card
        self.fighting[player] = card
        self.played.append(player)
        if self.follow_queue:
            self.current_player = self.follow_queue.pop(0)
            self.phase = FOLLOW
        else:
            self._resolve_round()

    def _take_from_hand(self, player: int, kind: int) -> int:
        """R22: of several cards of the kind, the lowest suit (C < D < H < S, X1 < X2) leaves."""
        hand = self.hands[player]
        card = min(c for c in hand if KIND[c] == kind)  # lowest id = lowest suit within a kind
        hand.remove(card)
        self.hand_kinds[player][kind] -= 1
        return card

    def _place(self, player: int, card: int, source: int) -> None:
        self.table.append([card, player, source, self.war_level])
        if source <= WAR_CARD:
            self.public_kinds[KIND[card]] += 1

    # -- automatic procedures (R4-R6) -------------------------------------------------------------

    def _draw(self, player: int) -> None:
        """R4 DRAW: top of the face-down pile into the hand, or to the discard if retired (R21)."""
        card = self.piles[player].pop(0)
        self._left_pile(player, card)
        if NATURAL_VALUE[card] and NATURAL_VALUE[card] <= self.retire_level:
            self.discard.append(card)  # revealed to everyone
            self._reveal(player, card)
            self.public_kinds[KIND[card]] += 1
        else:
            self.hands[player].append(card)
            if self.game.config.retire_lowest_on_flip:
                self.hand_floors[player].append(self.retire_level)  # levels only rise: stays ascending
            self.hand_kinds[player][KIND[card]] += 1

    def _recycle(self, player: int) -> None:
        """R5 RECYCLE: the face-up pile, shuffled (R23), becomes the face-down pile."""
        won = self.face_up[player]
        if self.game.config.shuffle_mid_game:
            won = [won[i] for i in self.rng.permutation(len(won)).tolist()]
        self.piles[player] = won
        self.face_up[player] = []
        kinds = self.face_up_kinds[player]
        # public: the new pile is exactly this one; what is left of the one before is only ever on the table
        # or (R11d) in the hand, until the end of this round
        self.recycled_before[player] = self.recycled[player] if self.table else None
        self.recycled[player] = list(kinds)
        self.recycle_mark[player] = len(self.table)
        known, pile_known = self.known[player], self.pile_known[player]
        for k in range(NUM_KINDS):  # 7.5: the recycled pile's contents are public
            known[k] += kinds[k]
            pile_known[k] += kinds[k]
        self.face_up_kinds[player] = [0] * NUM_KINDS
        if self.game.config.retire_lowest_on_flip:  # R21
            self.retire_level = min(self.retire_level + 1, self.game.config.retire_max_rank)

    def _fill(self, player: int) -> None:
        """R6 FILL: top the hand up; recycle only when hand and face-down pile are both empty."""
        hand, pile = self.hands[player], self.piles[player]
        limit = self.game.config.hand_size
        while len(hand) < limit:
            if not pile:
                if hand or not self.face_up[player]:
                    return
                self._recycle(player)
                pile = self.piles[player]
            self._draw(player)

    # -- knowledge (7.5) ---------------------------------------------------------------------------

    def _reveal(self, player: int, card: int, earlier: bool = False) -> None:
        """A card of ``player``'s hidden holdings became public: update ``K_p`` / ``u_p``, and the
        cards left of the recycled pile it came from (``earlier``: from before the last recycle)."""
        known = self.known[player]
        kind = KIND[card]
        recycled = (self.recycled_before if earlier else self.recycled)[player]
        if recycled is not None:
            recycled[kind] -= 1
        if known[kind]:
            known[kind] -= 1
            self.public_kinds[kind] -= 1
        else:
            self.unknown[player] -= 1

    def _forget_floor(self, player: int, card: int | None) -> None:
        """A card left the hand: drop the highest floor it may have had -- below a played natural card's
        value, any for a joker or a buried (unseen) card -- so that the floors stay sound."""
        floors = self.hand_floors[player]
        value = NATURAL_VALUE[card] if card is not None else 0
        i = len(floors) - 1
        while value and floors[i] >= value:
            i -= 1
        floors.pop(i)

    def _hand_predates_recycle(self, player: int) -> bool:
        """True while ``player``'s hand is the one card kept through a recycle in a war shortage
        (R11c-d: exactly one card is kept; it is the next war card, R12); otherwise every hand card was
        drawn from the current face-down pile."""
        for _card, owner, source, _level in reversed(self.table):
            if owner == player:
                return source == FROM_RECYCLED
        return False

    def _left_pile(self, player: int, card: int) -> None:
        """A card left ``player``'s pile knowledge (drawn, or revealed from the table): ``F_o`` / ``f_o``."""
        known = self.pile_known[player]
        kind = KIND[card]
        if known[kind]:
            known[kind] -= 1
        else:
            self.pile_unknown[player] -= 1

    # -- a round: resolution (R8) and the war (R9-R13) ----------------------------------------------

    def _resolve_round(self) -> None:
        """R8: the single highest card wins; a tie for the highest starts a war (A13)."""
        tied = self._highest(self.played)
        if len(tied) == 1:
            self._win_round(tied[0])
        else:
            self.entry_order = tied  # R9 / A14: in the order the tying cards were played
            self._start_level(tied)

    def _highest(self, players: Sequence[int]) -> list[int]:
        """The players whose fighting card has the highest value, in the given order."""
        values = [self.value(self.fighting[p]) for p in players]
        best = max(values)
        return [p for p, v in zip(players, values, strict=True) if v == best]

    def _start_level(self, participants: list[int]) -> None:
        """R10: a war level begins."""
        self.war_level += 1
        self.participants = participants
        stuck = self.stuck
        for p in participants:
            if self.cards_held(p) == 0:
                stuck[p] = True  # A22: the last card is on the table
        if self.game.config.cease_fire and sum(self.active) == 2 and any(stuck[p] for p in participants):
            self._finish([p for p, a in enumerate(self.active) if a])  # R10.1 / A30
            return
        if all(stuck[p] for p in participants):
            self._last_card_tie(participants)  # R10.2 / A24
            return
        self.war_queue = participants[::-1]  # R11 / A16: reverse entry order
        self._next_commit()

    def _next_commit(self) -> None:
        """R11: face-down commitments in reverse entry order; then the face-up phase (R12)."""
        queue = self.war_queue
        while queue:
            player = queue.pop(0)
            if self.stuck[player]:
                continue
            if self._begin_commit(player):
                return  # BURY decisions owed
        self.war_queue = [p for p in self.participants[::-1] if not self.stuck[p]]
        if self.war_queue:
            self.phase = WAR_UP
            self.current_player = self.war_queue.pop(0)
        else:  # every participant turned out stuck during the commitments (retirement, R11a)
            self._resolve_level()

    def _begin_commit(self, player: int) -> bool:
        """R11 COMMIT(p) steps a-c. True when ``player`` now owes BURY decisions."""
        hand = self.hands[player]
        if not hand:  # R11a / A19: the only drawing allowed during a war
            self._fill(player)
            if not hand:  # every drawn card was retired: stuck for the rest of the round
                self.stuck[player] = True
                return False
        needed = self.game.config.war_facedown_count
        pile = self.piles[player]
        for _ in range(min(needed, len(pile))):  # R11b: no one sees these, not even the owner
            self._place(player, pile.pop(0), FROM_PILE)
            needed -= 1
        burials = min(needed, len(hand) - 1) if needed else 0  # R11c / A17: always keep one card
        if burials > 0:
            self.phase = BURY
            self.current_player = player
            self.bury_left = burials
            self.commit_rest = needed - burials
            return True
        self._finish_commit(player, needed)
        return False

    def _finish_commit(self, player: int, needed: int) -> None:
        """R11 COMMIT(p) steps d-e: the rest blind from the recycled face-up pile (A17, A20, A21)."""
        self.bury_left = 0
        self.commit_rest = 0
        if needed > 0 and self.face_up[player]:
            self._recycle(player)
            pile = self.piles[player]
            for _ in range(min(needed, len(pile))):
                self._place(player, pile.pop(0), FROM_RECYCLED)

    def _resolve_level(self) -> None:
        """R13: the highest fighting card among the participants wins; ties fight another level."""
        tied = self._highest(self.participants)
        if len(tied) == 1:
            self._win_round(tied[0])
        else:
            self._start_level(tied)  # A23: the others drop out, their cards stay in the stakes

    # -- ending a round (R14-R16) ------------------------------------------------------------------

    def _reveal_face_down(self) -> None:
        """A12: at the end of a round every face-down table card is turned face up."""
        marks = self.recycle_mark
        for i, (card, owner, source, _level) in enumerate(self.table):
            if source >= FROM_PILE:
                self._reveal(owner, card, i < marks[owner])
                if source != FROM_HAND:
                    self._left_pile(owner, card)

    def _collect(self, player: int, cards: Sequence[int]) -> None:
        self.face_up[player].extend(cards)
        kinds = self.face_up_kinds[player]
        public = self.public_kinds
        for card in cards:
            kinds[KIND[card]] += 1
            public[KIND[card]] += 1

    def _win_round(self, winner: int) -> None:
        """R14: the winner takes the whole table, in chronological order (R23)."""
        self._reveal_face_down()
        self._collect(winner, [placement[0] for placement in self.table])
        winning = self.fighting[winner]
        if self.game.config.jokers and NATURAL_VALUE[winning]:  # R14 / R20 / A37: a winning joker leaves jv unchanged
            self.joker_value = NATURAL_VALUE[winning]
        self.leader = winner
        self._end_round()

    def _last_card_tie(self, tied: list[int]) -> None:
        """R15: a war level at which every participant is stuck."""
        if sum(self.active) == len(tied):  # R15.1 / A29: no one else is still playing
            self._finish(tied)
            return
        self._reveal_face_down()
        tie_value = self.value(self.fighting[tied[0]])
        others = []
        for card, owner, _source, _level in self.table:  # A25: own cards back, in order
            if owner in tied:
                self._collect(owner, [card])
            else:
                others.append(card)
        if self.game.config.shuffle_mid_game:  # A26
            others = [others[i] for i in self.rng.permutation(len(others)).tolist()]
        e1 = self.entry_order[0]
        designated = tied[0] if tied[0] != e1 else tied[1]  # A27
        start = tied.index(designated)
        rotation = tied[start:] + tied[:start]
        each = len(others) // len(tied)
        dealt = each * len(tied)
        for i in range(dealt):  # A28: one at a time, designated first, in entry order
            self._collect(rotation[i % len(tied)], [others[i]])
        self._collect(designated, others[dealt:])  # the extra cards
        if self.game.config.jokers:
            self.joker_value = tie_value
        self.leader = designated
        self._end_round()

    def _end_round(self) -> None:
        """R16: refill, eliminate, end or truncate the game, start the next round."""
        config = self.game.config
        self.rounds_completed += 1
        public = self.public_kinds
        for card, _owner, source, _level in self.table:  # the face-up ones now count in a face-up pile
            if source <= WAR_CARD:
                public[KIND[card]] -= 1
        self.table = []
        if any(self.recycle_mark):  # a recycle in this round: every card from before it is shown now
            self.recycle_mark = [0] * len(self.active)
            self.recycled_before = [None] * len(self.active)
        for p in self.clockwise(self.leader):  # A34: clockwise from the next leader
            self._fill(p)
        out = [p for p in self.clockwise(self.leader) if self.cards_held(p) == 0]
        for p in out:  # R17
            self.active[p] = False
        self._shape()
        remaining = [p for p, a in enumerate(self.active) if a]
        if len(remaining) <= 1:  # R16.4 / A32
            self._finish(remaining or sorted(out))
            return
        if config.max_rounds is not None and self.rounds_completed >= config.max_rounds:  # R16.5 / R19
            held = [self.cards_held(p) for p in range(len(self.active))]
            most = max(held)
            self._finish([p for p, c in enumerate(held) if c == most], truncated=True)
            return
        if out:
            self._pay_elimination(out, remaining)
        if not self.active[self.leader]:  # R16.6 / A33
            self.leader = self.clockwise(self.leader)[0]
        self._start_round()

    def _start_round(self) -> None:
        """R7: the leader leads; the others follow clockwise."""
        n = len(self.active)
        self.phase = LEAD
        self.current_player = self.leader
        self.follow_queue = self.clockwise(self.leader)[1:]
        self.played = []
        self.round_cards = [HIDDEN] * n
        self.fighting = [HIDDEN] * n
        self.entry_order = []
        self.participants = []
        self.war_level = 0
        self.stuck = [False] * n
        self.war_queue = []
        self.bury_left = 0
        self.commit_rest = 0

    # -- rewards (section 9) ------------------------------------------------------------------------

    def _shape(self) -> None:
        """Section 9 shaping: ``lambda N/(N-1) (s_p - s'_p)`` at the end of every round."""
        weight = self.game.config.shaping_weight
        if not weight:
            return
        held = [self.cards_held(p) for p in range(len(self.active))]
        total = sum(held)
        if not total:  # every card retired (A32): shares are undefined, keep the last ones
            return
        shares = [c / total for c in held]
        n = len(held)
        scale = weight * n / (n - 1)
        for p in range(n):
            self.rewards[p] += scale * (shares[p] - self.shares[p])
        self.shares = shares

    def _pay_elimination(self, out: Sequence[int], remaining: Sequence[int]) -> None:
        """An eliminated player leaves now (PettingZoo dead-agent convention), so it is paid now:
        ``-1/(N-1)`` -- its final reward whenever the game ends with a sole winner -- shared
        equally by the players still in the game (zero-sum at every step). See RULES.md."""
        n = len(self.active)
        for p in out:
            # its total becomes exactly -1/(N-1), shares of earlier eliminations included
            stake = 1.0 / (n - 1) + self.outcome_paid[p]
            self._pay_outcome(p, -stake)
            for q in remaining:
                self._pay_outcome(q, stake / len(remaining))
            self.eliminated_early.append(p)

    def _pay_outcome(self, player: int, amount: float) -> None:
        self.rewards[player] += amount
        self.outcome_paid[player] += amount

    def _finish(self, winners: Sequence[int], truncated: bool = False) -> None:
        """R18 / R19: end the episode with winner set ``W`` and pay the section 9 rewards.

        Players eliminated earlier already hold ``-1/(N-1)``; the players still present get
        their target total minus what they were paid: a winner ``(|R| - w)/(N-1) +
        |E| / ((N-1) w)``, a loser ``-w/(N-1)`` (``R`` present, ``E`` eliminated earlier, ``w =
        |W|``). Without earlier eliminations, or with a sole winner, this is exactly section 9.
        """
        self.winner_set = sorted(winners)
        self.terminated = not truncated
        self.truncated = truncated
        self.phase = OVER
        self.current_player = NO_PLAYER
        n = len(self.active)
        early = self.eliminated_early
        present = [p for p in range(n) if p not in early]
        if truncated and self.game.config.truncation_scoring == "card_share":
            held = [self.cards_held(p) for p in range(n)]
            total = sum(held)
            targets = {p: n / (n - 1) * (held[p] / total - 1 / n) for p in present}
        else:
            w = len(self.winner_set)
            win = (len(present) - w) / (n - 1) + len(early) / ((n - 1) * w)
            targets = {p: win if p in self.winner_set else -w / (n - 1) for p in present}
        for p in present:
            self._pay_outcome(p, targets[p] - self.outcome_paid[p])

    # -- views ---------------------------------------------------------------------------------------

    def view(self, player: int) -> BattlecardsView:
        """Section 7: everything public, the viewer's private cards, and 7.5's derived knowledge."""
        n = len(self.active)
        acting = self.current_player
        table = []
        facedown_pile = [0] * n
        facedown_hand = [0] * n
        table_up = [0] * NUM_KINDS
        buried = []
        for card, owner, source, level in self.table:
            if source <= WAR_CARD:
                table_up[KIND[card]] += 1
                table.append((card, owner, source, level))
            elif source == FROM_HAND:
                facedown_hand[owner] += 1
                if owner == player:
                    buried.append(card)
                    table.append((card, owner, source, level))
                else:
                    table.append((HIDDEN, owner, source, level))
            else:
                facedown_pile[owner] += 1
                table.append((HIDDEN, owner, source, level))
        return BattlecardsView(
            player, n, self.phase if acting == player else OVER, acting, self.phase, self.bury_left,
            self.leader, self.rounds_completed, tuple(self.active), tuple(sorted(self.hands[player])),
            tuple(self.hand_kinds[player]), tuple(buried), tuple(self.pile_known[player]),
            self.pile_unknown[player], tuple(map(len, self.hands)), tuple(map(len, self.piles)),
            tuple(map(tuple, self.face_up)), tuple(map(tuple, self.face_up_kinds)), tuple(table),
            tuple(table_up), tuple(self.round_cards), tuple(self.fighting), tuple(self.entry_order),
            tuple(self.participants), tuple(self.stuck), self.war_level, tuple(facedown_pile),
            tuple(facedown_hand), tuple(map(tuple, self.known)), tuple(self.unknown), self.joker_value,
            self.retire_level, tuple(self.discard), len(self.set_aside), tuple(self._unaccounted(player, buried)),
            self.phase == OVER,
        )

    def _unaccounted(self, player: int, buried: Sequence[int]) -> list[int]:
        """7.5 ``unaccounted_o``: the deck minus everything the viewer can place (own hand, own
        buried cards, ``F_o``, face-up piles and table cards, the discard, the other players' ``K_p``)."""
        counts = [total - public + known - held - pile for total, public, known, held, pile in zip(
            self.composition, self.public_kinds, self.known[player], self.hand_kinds[player],
            self.pile_known[player], strict=True)]
        for card in buried:
            counts[KIND[card]] -= 1
        return counts

    # -- card bookkeeping for tests and search --------------------------------------------------------

    def card_locations(self) -> dict[str, list[int]]:
        zones: dict[str, list[int]] = {}
        for p in range(len(self.active)):
            zones[f"hand_{p}"] = list(self.hands[p])
            zones[f"pile_{p}"] = list(self.piles[p])
            zones[f"face_up_{p}"] = list(self.face_up[p])
        zones["table"] = [placement[0] for placement in self.table]
        zones["discard"] = list(self.discard)
        zones["set_aside"] = list(self.set_aside)
        return zones

    def hidden_holdings_size(self, player: int) -> int:
        """``|H_p| + |D_p| +`` the player's unrevealed face-down table cards (7.5 identity)."""
        facedown = sum(1 for _c, owner, source, _l in self.table if owner == player and source >= FROM_PILE)
        return len(self.hands[player]) + len(self.piles[player]) + facedown

    def sample_hidden(self, player: int, rng: np.random.Generator) -> BattlecardsState:
        """Redeal every card ``player`` cannot see -- other players' hands, piles and face-down table
        cards, the viewer's own pile and pile-sourced face-down cards, the set-aside cards -- keeping
        every fact the viewer's information state proves, and uniformly among such deals.

        What the viewer knows, and how the deal keeps it. A pile is only ever refilled by a recycle
        (R5/R6), and the recycled face-up pile is public (7.5); at most one recycle per seat and round
        (``U_p`` stays empty until the round's end). So each seat's hidden cards fall into *generations*:

        ==================  =====================================================================
        generation          cards (of seat ``p``) and what is known of them
        ==================  =====================================================================
        current             face-down pile, face-down table cards placed since ``p``'s last
                            recycle, hand (unless the one below): exactly ``recycled[p]`` --
                            the recycled pile minus its cards shown since (played, retired,
                            revealed); unknown (dealt at 3.3) before ``p``'s first recycle
        earlier             only in the round of a recycle: face-down table cards placed
                            before it, and in R11d the one hand card kept through it until
                            it is played as the war card: exactly ``recycled_before[p]``,
                            or unknown if that recycle was ``p``'s first
        ==================  =====================================================================

        A known generation gets exactly its kinds, in a uniformly random arrangement over its slots;
        for the viewer, its own hand and buried cards are taken out of them first (their rest is its
        pile part). The cards of unknown generations and the set-aside cards are dealt uniformly from
        what remains. ``K_p`` and ``F_o`` (7.5) are implied: both are sound bounds of the generations.
        With ``retire_lowest_on_flip``, a hand card drawn at retirement level ``l`` is no natural card
        of value ``<= l`` (R4: it would have been discarded); each hand slot gets one of ``hand_floors``
        and only a card that survives it (``_deal``: exactly uniform, the allowed sets being nested).

        Exact: uniform over the deals consistent with every public event and the viewer's own cards,
        treating the cards of one kind as alike, and assuming that a player's choices say nothing of
        its cards (what ISMCTS assumes) -- always without the retirement variant. Not exact: (a) suits:
        a card of the same kind may stand in for a recycled one (no rule reads suits, except R22's
        choice of which copy leaves a hand); (b) in the retirement variant the floors are a sound
        bound, not the posterior: a burial, or a play that several floors allow, does not show which
        floor left, and the highest possible one is dropped (``_forget_floor``), so the sample may put
        a low card where the history makes it less likely, never where it is impossible by the floors
        kept. With ``shuffle_mid_game=False`` (test hook) the order of a recycled pile is public: its
        face-down pile and the face-down table cards taken from it stay as they are, and only its hand
        and buried cards are redealt.

        The other players' private pile knowledge ``F_p`` is not the viewer's to use; in the copy it
        becomes the kinds of their pile cards of known generations, so every record stays sound."""
        twin = self.clone()
        n = len(self.active)
        groups = [(p, slots, kinds) for p in range(n) for slots, kinds in twin._hidden_groups(p, own=p == player)]
        pool = [slot[0][slot[1]] for _p, slots, _kinds in groups for slot in slots] + list(twin.set_aside)
        by_kind: list[list[int]] = [[] for _ in range(NUM_KINDS)]
        for i in rng.permutation(len(pool)).tolist():
            by_kind[KIND[pool[i]]].append(pool[i])
        free: list[tuple[int, _Slot]] = []  # slots of unknown generations, with their seat
        for p, slots, kinds in groups:
            if kinds is None:
                free += [(p, slot) for slot in slots]
                continue
            if sum(kinds) != len(slots) or any(len(by_kind[k]) < kinds[k] for k in range(NUM_KINDS)):
                raise StateError(f"battlecards: sample_hidden: player_{p}'s known kinds {kinds} do not fit its "
                                 f"{len(slots)} hidden card(s) of that generation; the knowledge fields of the "
                                 f"position are inconsistent with its cards")
            _deal([by_kind[k].pop() for k in range(NUM_KINDS) for _ in range(kinds[k])], slots, rng)
        rest = [c for cards in by_kind for c in cards]
        rest = _deal(rest, [slot for _p, slot in free], rng)
        unknown_in_pile = [[0] * NUM_KINDS for _ in range(n)]
        for p, (zone, i, pile_part, _floor) in free:
            if pile_part:
                unknown_in_pile[p][KIND[zone[i]]] += 1
        twin.set_aside = rest
        for p in range(n):
            if p != player:  # F_p: its pile cards of known generations (the rest, f_p, came from the deal)
                pile_cards = twin.piles[p] + [c for c, owner, source, _ in twin.table
                                              if owner == p and source in (FROM_PILE, FROM_RECYCLED)]
                twin.pile_known[p] = [have - unknown for have, unknown in zip(
                    _kind_counts(pile_cards), unknown_in_pile[p], strict=True)]
                twin.pile_unknown[p] = sum(unknown_in_pile[p])
                twin.hand_kinds[p] = _kind_counts(twin.hands[p])
        twin._reseed_from(rng)
        return twin

    def _hidden_groups(self, player: int, own: bool) -> list[tuple[list[_Slot], list[int] | None]]:
        """``player``'s hidden cards by generation (see :meth:`sample_hidden`) as ``(slots, kinds)``: each
        slot ``(zone, index, in the pile part)``; ``kinds`` the exact kinds of those slots, or None for an
        unknown generation (from the deal). ``own``: the viewer's own -- its hand and buried cards are seen,
        so they are no slots and leave ``kinds``; so do the cards of an ordered recycled pile (R23 with
        ``shuffle_mid_game=False``), which everyone can follow card by card."""
        mark = self.recycle_mark[player]
        hand, pile = self.hands[player], self.piles[player]
        floors = self.hand_floors[player][::-1] or [0] * len(hand)  # which hand card has which: any
        earlier_hand = self._hand_predates_recycle(player)
        groups = []
        for earlier, known in ((False, self.recycled[player]), (True, self.recycled_before[player])):
            kinds = None if known is None else list(known)
            ordered = kinds is not None and not self.game.config.shuffle_mid_game
            slots: list[_Slot] = []
            seen: list[int] = []
            if earlier == earlier_hand:
                if own:
                    seen += hand
                else:
                    slots += [(hand, i, False, floors[i]) for i in range(len(hand))]
            if not earlier:
                if ordered:
                    seen += pile
                else:
                    slots += [(pile, i, True, 0) for i in range(len(pile))]
            for i, placement in enumerate(self.table):
                card, owner, source, _level = placement
                if owner != player or source < FROM_PILE or (i < mark) != earlier:
                    continue
                if own if source == FROM_HAND else ordered:
                    seen.append(card)
                else:
                    slots.append((placement, 0, source != FROM_HAND, 0))
            if kinds is not None:
                for card in seen:
                    kinds[KIND[card]] -= 1
            if slots or kinds is not None:
                groups.append((slots, kinds))
        return groups

    # -- text ------------------------------------------------------------------------------------------

    def render(self) -> str:
        def cards(cs: Sequence[int]) -> str:
            return " ".join(card_codes(cs)) or "-"

        config = self.game.config
        n = len(self.active)
        head = f"Battlecards  round {self.rounds_completed + 1}  leader player_{self.leader}"
        if config.jokers:
            head += f"  joker value {self.joker_value}"
        if config.retire_lowest_on_flip:
            head += f"  retired up to {self.retire_level}  discard [{cards(self.discard)}]"
        lines = [head]
        for p in range(n):
            mark = ">" if p == self.current_player else " "
            if not self.active[p]:
                lines.append(f"{mark} player_{p}: eliminated")
                continue
            lines.append(
                f"{mark} player_{p}: hand [{cards(sorted(self.hands[p], key=_sort_key))}]  "
                f"pile {len(self.piles[p])}  face-up {len(self.face_up[p])}  held {self.cards_held(p)}"
                + ("  stuck" if self.stuck[p] else "")
            )
        if self.table:
            shown = []
            for card, owner, source, level in self.table:
                code = CODES[card] if source < FROM_PILE else f"({CODES[card]})"
                shown.append(f"P{owner}:{code}" + (f"@{level}" if level else ""))
            lines.append("table: " + " ".join(shown))
        if self.war_level:
            lines.append(f"war level {self.war_level}: participants "
                         f"{', '.join(f'player_{p}' for p in self.participants)}")
        if self.phase != OVER:
            extra = f" ({self.bury_left} to bury)" if self.phase == BURY else ""
            lines.append(f"player_{self.current_player} to {VERBS[self.phase]}{extra}")
        elif self.truncated:
            lines.append(f"truncated after {self.rounds_completed} rounds; most cards: "
                         f"{', '.join(f'player_{p}' for p in self.winner_set)}")
        elif len(self.winner_set) == 1:
            lines.append(f"game over: player_{self.winner_set[0]} wins")
        else:
            lines.append(f"game over: draw between {', '.join(f'player_{p}' for p in self.winner_set)}")
        return "\n".join(lines)


def _deal(cards: list[int], slots: Sequence[_Slot], rng: np.random.Generator) -> list[int]:
    """Put ``cards`` into ``slots`` uniformly at random among the deals in which no slot gets a card that R4
    retires at its floor; returns the cards left over, in random order. The floors' sets of allowed cards
    are nested, so filling the most constrained slot first, each uniformly among the cards it allows,
    is exactly uniform (every choice leaves the same number of completions)."""
    cards = [cards[i] for i in rng.permutation(len(cards)).tolist()]
    for zone, i, _pile_part, floor in sorted(slots, key=lambda slot: -slot[3]):
        if floor > 1:
            allowed = [j for j, card in enumerate(cards) if not 0 < NATURAL_VALUE[card] <= floor]
            if not allowed:
                raise StateError(f"battlecards: sample_hidden: no card left that a hand drawn at retirement "
                                 f"level {floor} can hold; the position's hand_floors are inconsistent")
            zone[i] = cards.pop(allowed[int(rng.integers(len(allowed)))])
        else:
            zone[i] = cards.pop()
    return cards


def _kind_counts(cards: Sequence[int]) -> list[int]:
    counts = [0] * NUM_KINDS
    for card in cards:
        counts[KIND[card]] += 1
    return counts


def _sort_key(card: int) -> tuple[int, int]:
    return (KIND[card], card)


class Battlecards(Game):
    """Battlecards for 2-6 players; see the environment docstring for the tables."""

    name = "battlecards_v0"
    config_class = BattlecardsConfig
    state_class = BattlecardsState
    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    reset_options = ("deck",)
    config: BattlecardsConfig

    @property
    def num_players(self) -> int:
        return self.config.num_players

    def max_decisions(self) -> int | None:
        """Every decision puts a distinct card on the table, emptied at each round's end: at most
        54 decisions per round, so ``54 * max_rounds`` (None without a round limit)."""
        rounds = self.config.max_rounds
        return None if rounds is None else MAX_DECK * rounds

    def return_bounds(self) -> tuple[float, float]:
        """Every seat's return lies in ``[-(1 + lambda), 1 + lambda]``: the end result (section 9, also under
        truncation) is within 1, and the round shaping telescopes to ``lambda N/(N-1) (s_end - 1/N)``,
        which is within ``lambda``."""
        bound = 1.0 + self.config.shaping_weight
        return -bound, bound

    @classmethod
    def variant_configs(cls) -> list[dict[str, Any]]:
        return [
            {},
            {"num_players": 3, "jokers": True, "joker_initial_value": 7, "first_leader": None},
            {"num_players": 4, "retire_lowest_on_flip": True, "shaping_weight": 0.5},
            {"num_players": 5, "cease_fire": True, "hand_size": 3, "war_facedown_count": 1,
             "max_rounds": 60, "truncation_scoring": "card_share"},
            {"num_players": 6, "jokers": True, "retire_lowest_on_flip": True, "retire_max_rank": 13,
             "shuffle_mid_game": False, "first_leader": 5},
            {"num_players": 2, "cease_fire": True, "war_facedown_count": 0, "hand_size": 1, "max_rounds": 40},
            {"num_players": 3, "max_rounds": None, "retire_lowest_on_flip": True, "war_facedown_count": 5,
             "hand_size": 10, "shaping_weight": 1.0},
        ]

    def _new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None = None) -> BattlecardsState:
        config = self.config
        n = config.num_players
        deck = self._stacked_deck(options)
        if deck is None:
            deck = [int(c) for c in rng.permutation(sorted_deck(config.jokers))]  # 3.2
        k = len(deck) // n
        if k < 1:
            raise DeckError(f"deck: {len(deck)} card(s) cannot deal at least one card to each of {n} players")
        state = BattlecardsState.__new__(BattlecardsState)
        state.game = self
        state.rng = rng
        state.deck_cards = sorted(deck)
        state.composition = [0] * NUM_KINDS  # public: the players know which deck they play
        for card in deck:
            state.composition[KIND[card]] += 1
        state.piles = [deck[p:n * k:n] for p in range(n)]  # 3.3 / A3: first card received = top
        state.set_aside = deck[n * k:]  # A4
        state.hands = [[] for _ in range(n)]
        state.hand_kinds = [[0] * NUM_KINDS for _ in range(n)]
        state.face_up = [[] for _ in range(n)]
        state.face_up_kinds = [[0] * NUM_KINDS for _ in range(n)]
        state.table = []
        state.discard = []
        state.active = [True] * n
        state.known = [[0] * NUM_KINDS for _ in range(n)]
        state.unknown = [k] * n
        state.pile_known = [[0] * NUM_KINDS for _ in range(n)]
        state.pile_unknown = [k] * n
        state.public_kinds = [0] * NUM_KINDS
        state.recycled = [None] * n
        state.recycled_before = [None] * n
        state.recycle_mark = [0] * n
        state.hand_floors = [[] for _ in range(n)]
        state.joker_value = config.joker_initial_value  # A36
        state.retire_level = 1
        state.rounds_completed = 0
        state.outcome_paid = [0.0] * n
        state.eliminated_early = []
        state.winner_set = []
        state.terminated = state.truncated = False
        state.rewards = [0.0] * n
        state.cumulative = [0.0] * n
        state.history = []
        for p in range(n):  # 3.4 / A7
            for _ in range(min(config.hand_size, k)):
                state._draw(p)
        state.shares = [1.0 / n] * n
        leader = config.first_leader
        state.leader = int(rng.integers(n)) if leader is None else leader  # A5
        state._start_round()
        return state

    def _stacked_deck(self, options: Mapping[str, Any] | None) -> list[int] | None:
        """Reset option ``deck``: distinct codes, index 0 = top, any subset (3.2)."""
        codes = (options or {}).get("deck")
        if codes is None:
            return None
        if isinstance(codes, (str, bytes)) or not isinstance(codes, Sequence):
            raise DeckError(f"reset option 'deck' must be a list of card codes, got {type(codes).__name__}")
        cards = []
        for position, code in enumerate(codes):
            try:
                cards.append(card_id(code))
            except DeckError as err:
                raise DeckError(f"deck[{position}]: {err}") from None
        duplicates = sorted(CODES[c] for c, copies in Counter(cards).items() if copies > 1)
        if duplicates:
            raise DeckError(f"deck: duplicated card(s) {', '.join(duplicates)}; each card may appear once")
        if not self.config.jokers and any(c in JOKER_IDS for c in cards):
            raise DeckError("deck: jokers X1/X2 are only in the deck with option jokers=True")
        return cards

    def encode(self, view: Any) -> np.ndarray:
        return self._encoding.encode(view, self.config)


__all__ = [
    "ACTION_NAMES", "BURY", "DECISION_NAMES", "FOLLOW", "KIND", "KIND_NAMES", "LEAD", "NUM_ACTIONS",
    "NUM_KINDS", "OVER", "WAR_UP", "Battlecards", "BattlecardsConfig", "BattlecardsState", "BattlecardsView",
    "sorted_deck", "standard_deck",
]
