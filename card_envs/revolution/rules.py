"""Revolution rules engine (spec ``specs/revolution.md``, rules R1-R24, rulings A1-A45).

Pure rules: no PettingZoo, no observation vectors (see ``encoding.py``). Rule numbers in
comments refer to the spec.

Cards are the spec's *card index* ``idx = 13 * suit + rank value`` (suits C D H S, ranks
2 .. A, aces high), which is also the action id of ``play <card>``: ``2C`` = 0, ``AC`` = 12,
``2D`` = 13, ..., ``AS`` = 51; ``pass`` is 52. Inside the state a holding is a 52-bit int
(bit ``idx`` set while the card is held), so legal sets are a few ANDs with precomputed suit
and rank masks. :mod:`card_envs.cards` ids (aces low) appear only at the boundaries: stacked
decks and ``card_locations()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Any, Literal, NamedTuple

import numpy as np

from card_envs.cards import parse_deck, standard_deck
from card_envs.core.config import GameConfig, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState, _is_action_id
from card_envs.core.errors import ConfigError, DeckError, IllegalActionError, StateError

NUM_PLAYERS = 4
NUM_CARDS = 52
HAND_SIZE = 13
TRICKS_TO_WIN_HAND = 4  # R13
PASS = 52  #: action id of ``pass``; ``play <card>`` is the card index
NUM_ACTIONS = 53
NO_SUIT = -1  #: led suit / trump suit / previous-led suit "none"
NO_CARD = -1

RANK_CODES: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUIT_CODES: tuple[str, ...] = ("C", "D", "H", "S")
#: code of every card index: ``CARD_CODES[0] == "2C"``, ``CARD_CODES[51] == "AS"``
CARD_CODES: tuple[str, ...] = tuple(r + s for s in SUIT_CODES for r in RANK_CODES)
ACTION_NAMES: tuple[str, ...] = tuple(f"play {code}" for code in CARD_CODES) + ("pass",)
ACE_OF_SPADES = 51

#: suit index (C=0, D=1, H=2, S=3) and rank value (2=0 .. A=12) of every card index
SUIT_OF: tuple[int, ...] = tuple(i // 13 for i in range(NUM_CARDS))
RANK_OF: tuple[int, ...] = tuple(i % 13 for i in range(NUM_CARDS))

# Phases of a trick (spec 8.1); OVER once the episode has ended.
OPENING, DESIGNATED, OFFERED, FORCED, FOLLOW, OVER = range(6)
PHASE_NAMES: tuple[str, ...] = ("opening lead", "designated lead", "offered lead", "forced lead", "follow", "over")

_FULL = (1 << NUM_CARDS) - 1
_PASS_BIT = 1 << PASS
#: cards of each suit as a bit mask; index -1 (``NO_SUIT``) is the empty mask
SUIT_BITS: tuple[int, ...] = tuple(0x1FFF << (13 * s) for s in range(4)) + (0,)
#: R3: restricted-legal cards for previous-led suit ``pl`` (-1 none) and rank cap ``r``:
#: ``RESTRICTED[pl][r]`` = every card not of suit ``pl`` with rank value <= ``r``
RESTRICTED: tuple[tuple[int, ...], ...] = tuple(
    tuple((_FULL & ~SUIT_BITS[pl]) & sum(((1 << (r + 1)) - 1) << (13 * s) for s in range(4)) for r in range(13))
    for pl in (0, 1, 2, 3, -1)
)
_BIT: tuple[int, ...] = tuple(1 << i for i in range(NUM_CARDS))
_CARD_BITS = np.left_shift(np.int64(1), np.arange(NUM_CARDS, dtype=np.int64))  # the sorted deck, as bits
_add_reduce = np.add.reduce
#: the card indices of every 13-bit suit pattern, per suit (turns a legal bit mask into a list fast)
_SUIT_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(13 * s + r for r in range(13) if pattern >> r & 1) for pattern in range(1 << 13)) for s in range(4)
)
_CLUBS_IN, _DIAMONDS_IN, _HEARTS_IN, _SPADES_IN = _SUIT_CARDS
#: cards.py id (aces low) <-> card index (aces high)
INDEX_OF_CARD_ID: tuple[int, ...] = tuple(13 * (c // 13) + (c % 13 - 1) % 13 for c in range(NUM_CARDS))
CARD_ID_OF_INDEX: tuple[int, ...] = tuple(13 * (i // 13) + (i % 13 + 1) % 13 for i in range(NUM_CARDS))
_FULL_DECK = standard_deck()


def cards_of(bits: int) -> list[int]:
    """The card indices of a bit mask, increasing (``pass``, bit 52, is not included)."""
    return [*_CLUBS_IN[bits & 0x1FFF], *_DIAMONDS_IN[bits >> 13 & 0x1FFF],
            *_HEARTS_IN[bits >> 26 & 0x1FFF], *_SPADES_IN[bits >> 39 & 0x1FFF]]


def bits_of(cards: Sequence[int]) -> int:
    """The bit mask of some card indices."""
    bits = 0
    for card in cards:
        bits |= _BIT[card]
    return bits


def card_code(card: int) -> str:
    """``card_code(51) == "AS"``; ``-1`` (no card) is ``"-"``."""
    return CARD_CODES[card] if card >= 0 else "-"


def restricted_lead_bits(holding: int, prev_led_suit: int, prev_winning_card: int) -> int:
    """R3: the restricted-legal cards of a holding (suit is not ``PL``, rank not above ``PW``)."""
    return holding & RESTRICTED[prev_led_suit][RANK_OF[prev_winning_card]]


def follow_bits(holding: int, led_suit: int, trump_suit: int, prev_led_suit: int) -> int:
    """R7/R8: the cards a follower may play."""
    if trump_suit == NO_SUIT:
        same = holding & SUIT_BITS[led_suit]
        if same:
            return same  # R7 (a)
        other = holding & ~SUIT_BITS[prev_led_suit]
        if other:
            return other  # R7 (b)
    return holding  # R7 (c) / R8


def terminal_rewards(scores: Sequence[int], mode: str, hands_started: int) -> list[float]:
    """Section 9: the zero-sum terminal reward of every seat for final scores ``scores``."""
    if mode == "margin":
        mean = sum(scores) / NUM_PLAYERS
        return [(s - mean) / (4 * hands_started) for s in scores]
    top = max(scores)
    k = scores.count(top)
    share = (4 - k) / (3 * k)
    return [share if s == top else -1 / 3 for s in scores]


@dataclass(frozen=True)
class RevolutionConfig(GameConfig):
    """Options of spec section 6."""

    num_hands: int = 4
    first_dealer: int | Literal["random"] = 0
    allow_yield_first_trick: bool = False
    forced_lead_restricted: bool = False
    full_recall: bool = False
    max_extra_hands: int = 10
    max_steps: int | None = None
    reward_mode: Literal["win", "margin"] = "win"
    trick_reward: float = 0.0
    #: not in the spec: also observe what the tricks prove about each opponent's holding (spec 7.3)
    void_inferences: bool = False

    def validate(self) -> None:
        check_range(self, "num_hands", low=1)
        if self.first_dealer != "random" and not 0 <= self.first_dealer < NUM_PLAYERS:
            raise ConfigError(f"option 'first_dealer' must be a seat 0..3 or 'random', got {self.first_dealer!r}")
        check_range(self, "max_extra_hands", low=0)
        check_range(self, "max_steps", low=1)
        check_range(self, "trick_reward", low=0.0)
        if self.void_inferences and not self.full_recall:
            raise ConfigError("option 'void_inferences' needs full_recall=True: the inferences come from the "
                              "tricks of the whole hand, which only full_recall observes")


class RevolutionView(NamedTuple):
    """What one player may know (spec section 7). Seats are absolute; ``player`` is the viewer.

    Cards are card indices (``2C`` = 0 .. ``AS`` = 51); ``-1`` means "no card" / "nobody" /
    "no suit".

    ========================  ===================================================================
    field                     meaning
    ========================  ===================================================================
    ``player``                the viewer's seat
    ``current_player``        seat to act (-1 once over)
    ``phase``                 ``OPENING`` .. ``FOLLOW`` (``PHASE_NAMES``), ``OVER`` once over
    ``hand``                  the viewer's own holding, increasing card indices (private)
    ``hand_sizes``            cards held by each seat
    ``dealer``                dealer of the current hand
    ``hand_number``           1-based hand of the series
    ``num_hands``             scheduled hands; ``hand_number > num_hands`` is a tie-break hand
    ``scores``                cumulative scores from finished hands, by seat
    ``tricks_won``            tricks won this hand, by seat (A33)
    ``trick_number``          1-based trick of this hand
    ``designated``            designated leader ``D`` of the current trick
    ``passed``                seats that passed in this trick's lead phase (A35), by seat
    ``trick_leader``          ``T`` (-1 before the lead)
    ``trick``                 card played to the current trick, by seat (-1: none yet)
    ``led_suit``              ``LS`` (-1 before the lead)
    ``trump_suit``            ``TS`` (-1 while not fixed)
    ``prev_trick``            card played to the previous trick of this hand, by seat (-1 on trick 1)
    ``prev_leader``           who led the previous trick (-1 on trick 1)
    ``prev_winner``           who won it (-1 on trick 1)
    ``prev_led_suit``         ``PL`` (-1 on trick 1)
    ``prev_trump_suit``       the previous trick's trump suit (-1: none fixed, or trick 1)
    ``prev_winning_card``     ``PW`` (-1 on trick 1)
    ``recall``                ``full_recall`` only (else empty): every completed trick of this
                              hand, oldest first, each laid out as :data:`TRICK_RECORD`
    ``passes_this_hand``      ``full_recall`` only (else ``None``): passes made this hand, by seat
    ``over``                  the episode has ended
    ========================  ===================================================================
    """

    player: int
    current_player: int
    phase: int
    hand: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    dealer: int
    hand_number: int
    num_hands: int
    scores: tuple[int, ...]
    tricks_won: tuple[int, ...]
    trick_number: int
    designated: int
    passed: tuple[bool, ...]
    trick_leader: int
    trick: tuple[int, ...]
    led_suit: int
    trump_suit: int
    prev_trick: tuple[int, ...]
    prev_leader: int
    prev_winner: int
    prev_led_suit: int
    prev_trump_suit: int
    prev_winning_card: int
    recall: tuple[tuple[Any, ...], ...]
    passes_this_hand: tuple[int, ...] | None
    over: bool

    @property
    def is_tie_break(self) -> bool:
        """True during a tie-break hand (R17)."""
        return self.hand_number > self.num_hands


#: layout of a completed-trick record in ``RevolutionState.hand_log`` (and ``view.recall``)
TRICK_RECORD = ("leader", "card of seat 0", "card of seat 1", "card of seat 2", "card of seat 3",
                "winner", "trump suit", "passed seats (bit mask)", "designated leader")


class RevolutionState(GameState):
    """A position in a series of hands (R16-R19)."""

    fields = (
        "dealer", "hand_number", "scores", "tricks_won", "trick_number", "holdings", "phase",
        "current_player", "designated", "passed", "trick_leader", "trick", "cards_in_trick", "led_suit",
        "trump_suit", "best_card", "best_seat", "prev_trick", "prev_leader", "prev_winner", "prev_led_suit",
        "prev_trump_suit", "prev_winning_card", "hand_log", "passes_this_hand", "steps", "pending_decks",
        "terminated", "truncated", "is_over", "rewards", "cumulative", "history",
    )

    game: Revolution
    dealer: int
    hand_number: int
    #: cumulative score of every seat from finished hands (R15)
    scores: list[int]
    tricks_won: list[int]
    trick_number: int
    #: each seat's holding as a 52-bit mask over card indices
    holdings: list[int]
    phase: int
    designated: int
    #: bit ``s`` set when seat ``s`` has passed in the current lead phase
    passed: int
    trick_leader: int
    trick: list[int]
    cards_in_trick: int
    led_suit: int
    trump_suit: int
    #: the card currently winning the trick (R11), and its player
    best_card: int
    best_seat: int
    prev_trick: list[int]
    prev_leader: int
    prev_winner: int
    prev_led_suit: int
    prev_trump_suit: int
    prev_winning_card: int
    #: completed tricks of this hand (``TRICK_RECORD``): the trick pile
    hand_log: list[list[int]]
    passes_this_hand: list[int]
    steps: int
    pending_decks: list[list[int] | None]

    #: cached legal bit mask of the current decision (-1: not computed); not a state field
    _legal = -1
    #: ``terminated or truncated``, as a plain field rather than the base class's property (hot loop)
    is_over: bool = False  # type: ignore[assignment]

    # -- the deal (section 3) -------------------------------------------------------------------

    def _deal(self) -> None:
        """Section 3.4: deck index ``i`` goes to seat ``(dealer + 1 + i) mod 4``; R19 resets the hand."""
        packets = self._next_packets()
        dealer = self.dealer
        holdings = [0, 0, 0, 0]
        for offset in range(NUM_PLAYERS):
            holdings[(dealer + 1 + offset) & 3] = packets[offset]
        self.holdings = holdings
        ace_holder = 0
        while not holdings[ace_holder] >> ACE_OF_SPADES & 1:
            ace_holder += 1
        self.tricks_won = [0, 0, 0, 0]
        self.trick_number = 1
        self.hand_log = []
        self.passes_this_hand = [0, 0, 0, 0]
        self.prev_trick = [NO_CARD] * 4
        self.prev_leader = self.prev_winner = NO_PLAYER  # A18: no previous trick across hands
        self.prev_led_suit = self.prev_trump_suit = NO_SUIT
        self.prev_winning_card = NO_CARD
        self._start_trick(ace_holder, OPENING)  # R2 / A5

    def _start_trick(self, designated: int, phase: int) -> None:
        self.designated = self.current_player = designated
        self.phase = phase
        self._clear_trick()

    def _clear_trick(self) -> None:
        self.passed = self.cards_in_trick = 0
        self.trick_leader = self.best_seat = NO_PLAYER
        self.trick = [NO_CARD, NO_CARD, NO_CARD, NO_CARD]
        self.led_suit = self.trump_suit = NO_SUIT
        self.best_card = NO_CARD

    def _next_packets(self) -> list[int]:
        """The next hand's deck as four packets (bit masks): packet ``k`` holds deck indices ``k, k+4, ...``.

        A stacked deck (section 3.3) if one is pending, else a uniform shuffle by the state's
        generator (A4): the 52 card bits are shuffled as a numpy array and summed per packet,
        which is several times faster than building the masks card by card.
        """
        deck = self.pending_decks.pop(0) if self.pending_decks else None
        if deck is None:
            shuffled = _CARD_BITS.copy()
            self.rng.shuffle(shuffled)
            return _add_reduce(shuffled.reshape(HAND_SIZE, NUM_PLAYERS), 0).tolist()
        return [sum(map(_BIT.__getitem__, deck[offset::4])) for offset in range(NUM_PLAYERS)]

    # -- queries ---------------------------------------------------------------------------------

    def legal_bits(self) -> int:
        """The legal set as a bit mask over action ids (bit 52 = ``pass``); 0 when over."""
        bits = self._legal
        if bits < 0:
            bits = self._legal = self._compute_legal_bits()
        return bits

    def _compute_legal_bits(self) -> int:
        phase = self.phase
        if phase == FOLLOW:  # R7 / R8, inlined from follow_bits: the hot path
            holding = self.holdings[self.current_player]
            if self.trump_suit == NO_SUIT:
                same = holding & SUIT_BITS[self.led_suit]
                if same:
                    return same
                other = holding & ~SUIT_BITS[self.prev_led_suit]
                if other:
                    return other
            return holding
        if phase == OVER:
            return 0
        holding = self.holdings[self.current_player]
        if phase == DESIGNATED:  # R3: restricted lead, or yield
            return restricted_lead_bits(holding, self.prev_led_suit, self.prev_winning_card) | _PASS_BIT
        if phase == OFFERED:  # R4: any card, or decline
            return holding | _PASS_BIT
        config = self.game.config
        if phase == OPENING:  # R2 / A7
            return holding | _PASS_BIT if config.allow_yield_first_trick else holding
        # FORCED, R5 / A14
        if config.forced_lead_restricted and self.trick_number > 1:
            restricted = restricted_lead_bits(holding, self.prev_led_suit, self.prev_winning_card)
            if restricted:
                return restricted
        return holding

    def legal_actions(self) -> list[int]:
        bits = self._legal
        if bits < 0:
            bits = self._legal = self._compute_legal_bits()
        actions = [*_CLUBS_IN[bits & 0x1FFF], *_DIAMONDS_IN[bits >> 13 & 0x1FFF],  # cards_of, inlined
                   *_HEARTS_IN[bits >> 26 & 0x1FFF], *_SPADES_IN[bits >> 39 & 0x1FFF]]
        if bits >> PASS:
            actions.append(PASS)
        return actions

    def legal_mask(self) -> np.ndarray:
        bits = self.legal_bits()
        return np.unpackbits(np.frombuffer(bits.to_bytes(7, "little"), np.uint8), count=NUM_ACTIONS,
                             bitorder="little").view(np.int8)

    def holding(self, player: int) -> list[int]:
        """A seat's holding as increasing card indices."""
        return cards_of(self.holdings[player])

    # -- transitions -----------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        """Apply ``action`` for ``current_player`` (R20); R22: an illegal action raises, state unchanged."""
        legal = self._legal
        if legal < 0:
            legal = self._legal = self._compute_legal_bits()
        if type(action) is not int or not 0 <= action <= PASS or not legal >> action & 1:
            action = self._check_action(action)
        self.rewards = [0.0, 0.0, 0.0, 0.0]
        self._apply(action)
        self.history.append(action)

    def _apply(self, action: int) -> None:
        """The transition of a legal action; :meth:`apply` validates it first and records it."""
        self._legal = -1
        player = self.current_player
        if self.phase == FOLLOW:  # the most common decision: _follow, inlined
            self.holdings[player] ^= _BIT[action]
            self.trick[player] = action
            suit = SUIT_OF[action]
            if self.trump_suit == NO_SUIT:
                if suit == self.led_suit:
                    if action > self.best_card:  # same suit: a higher index is a higher rank
                        self.best_card = action
                        self.best_seat = player
                elif suit != self.prev_led_suit:  # R9: the first card of neither LS nor PL fixes trump
                    self.trump_suit = suit
                    self.best_card = action
                    self.best_seat = player
                # else R7 (c): ineligible, never wins, fixes nothing
            elif suit == self.trump_suit and action > self.best_card:  # R11: the highest trump wins
                self.best_card = action
                self.best_seat = player
            if self.cards_in_trick == 3:
                self._end_trick()
            else:
                self.cards_in_trick += 1
                self.current_player = (player + 1) & 3
        elif action == PASS:
            self._pass(player)
        else:
            self._lead(player, action)
        self.steps += 1
        if self.steps >= self.game.step_limit and self.phase != OVER:
            self._truncate()  # R23

    def _check_action(self, action: Any) -> int:
        """The slow path of :meth:`apply`: numpy integers pass, anything else illegal raises (R22 / A39)."""
        if self.phase == OVER:
            raise StateError(f"{self.game.name}: the episode is over; reset before acting")
        if _is_action_id(action) and 0 <= action <= PASS and self.legal_bits() >> int(action) & 1:
            return int(action)
        raise IllegalActionError(self._illegal_message(action, self.legal_actions()))

    def _pass(self, player: int) -> None:
        """R3/R4: yield or decline; the offer moves one seat to the right, back to ``D`` at last (R5)."""
        self.passed |= 1 << player
        self.passes_this_hand[player] += 1
        right = (player + 3) & 3
        self.phase = FORCED if right == self.designated else OFFERED
        self.current_player = right

    def _lead(self, player: int, card: int) -> None:
        """R6: the lead; followers play clockwise from the trick leader."""
        self.holdings[player] ^= _BIT[card]
        self.trick[player] = card
        self.trick_leader = player
        self.led_suit = SUIT_OF[card]
        self.best_card = card
        self.best_seat = player
        self.cards_in_trick = 1
        self.phase = FOLLOW
        self.current_player = (player + 1) & 3

    def _end_trick(self) -> None:
        """R11-R13: the trick goes to the winning card's player, who leads next unless the hand ends."""
        winner = self.best_seat
        tricks_won = self.tricks_won
        tricks_won[winner] += 1
        weight = self.game.config.trick_reward
        if weight:
            self._pay([weight if s == winner else -weight / 3 for s in range(NUM_PLAYERS)])
        trick = self.trick
        self.hand_log.append([self.trick_leader, *trick, winner, self.trump_suit, self.passed, self.designated])
        self.prev_trick = trick
        self.prev_leader = self.trick_leader
        self.prev_winner = winner
        self.prev_led_suit = self.led_suit
        self.prev_trump_suit = self.trump_suit
        self.prev_winning_card = self.best_card
        # R24: the trick joins the pile (_clear_trick, inlined)
        self.passed = self.cards_in_trick = 0
        self.trick_leader = self.best_seat = NO_PLAYER
        self.trick = [NO_CARD, NO_CARD, NO_CARD, NO_CARD]
        self.led_suit = self.trump_suit = NO_SUIT
        self.best_card = NO_CARD
        if tricks_won[winner] == TRICKS_TO_WIN_HAND:
            self._end_hand()
        else:
            self.trick_number += 1
            self.designated = self.current_player = winner  # R12 / A44
            self.phase = DESIGNATED

    def _end_hand(self) -> None:
        """R15-R19: score the hand; the series ends, or the next dealer deals."""
        scores = self.scores
        for seat in range(NUM_PLAYERS):
            scores[seat] += self.tricks_won[seat]
        config = self.game.config
        if self.hand_number >= config.num_hands:
            top = max(scores)
            if scores.count(top) == 1 or self.hand_number - config.num_hands >= config.max_extra_hands:
                self._finish(scores, terminated=True)  # R17 / A31
                return
        self.hand_number += 1
        self.dealer = (self.dealer + 1) & 3  # R19 / A32
        self._deal()

    def _truncate(self) -> None:
        """R23 / A41: score the unfinished hand's tricks with the cumulative scores."""
        self._finish([s + t for s, t in zip(self.scores, self.tricks_won, strict=True)], terminated=False)

    def _finish(self, final_scores: Sequence[int], *, terminated: bool) -> None:
        if terminated:
            self.terminated = True
        else:
            self.truncated = True
        self.is_over = True
        self.phase = OVER
        self.current_player = NO_PLAYER
        self._pay(terminal_rewards(list(final_scores), self.game.config.reward_mode, self.hand_number))

    def _pay(self, amounts: Sequence[float]) -> None:
        rewards = self.rewards
        cumulative = self.cumulative
        for seat in range(NUM_PLAYERS):
            rewards[seat] += amounts[seat]
            cumulative[seat] += amounts[seat]

    # -- results ---------------------------------------------------------------------------------

    def final_scores(self) -> list[int]:
        """Scores the result is judged on: cumulative scores, plus this hand's tricks once truncated."""
        if self.truncated:
            return [s + t for s, t in zip(self.scores, self.tricks_won, strict=True)]
        return list(self.scores)

    def rules_winners(self) -> list[int]:
        """Seats with the highest final score once the episode is over (several: shared win)."""
        if self.phase != OVER:
            return []
        final = self.final_scores()
        top = max(final)
        return [s for s in range(NUM_PLAYERS) if final[s] == top]

    # -- views and text --------------------------------------------------------------------------

    def view(self, player: int) -> RevolutionView:
        """Section 7: everything public, plus ``player``'s own holding (and the hand so far with recall)."""
        full_recall = self.game.config.full_recall
        holdings = self.holdings
        return RevolutionView(
            player, self.current_player, self.phase, tuple(cards_of(holdings[player])),
            (holdings[0].bit_count(), holdings[1].bit_count(), holdings[2].bit_count(), holdings[3].bit_count()),
            self.dealer, self.hand_number, self.game.config.num_hands, tuple(self.scores), tuple(self.tricks_won),
            self.trick_number, self.designated,
            (bool(self.passed & 1), bool(self.passed & 2), bool(self.passed & 4), bool(self.passed & 8)),
            self.trick_leader, tuple(self.trick), self.led_suit, self.trump_suit, tuple(self.prev_trick),
            self.prev_leader, self.prev_winner, self.prev_led_suit, self.prev_trump_suit, self.prev_winning_card,
            tuple(map(tuple, self.hand_log)) if full_recall else (),
            tuple(self.passes_this_hand) if full_recall else None,
            self.phase == OVER,
        )

    def clone(self) -> RevolutionState:
        """An independent copy, including the random generator's state."""
        twin = self.fork()
        self._copy_rng_to(twin)
        twin.hand_log = [list(record) for record in self.hand_log]
        return twin

    def fork(self) -> RevolutionState:
        """A fast copy for search rollouts: it *shares* the random generator and the completed trick
        records (which play never mutates) with this state."""
        twin = RevolutionState.__new__(RevolutionState)
        twin.__dict__.update(self.__dict__)
        twin.scores = list(self.scores)
        twin.tricks_won = list(self.tricks_won)
        twin.holdings = list(self.holdings)
        twin.trick = list(self.trick)
        twin.prev_trick = list(self.prev_trick)
        twin.hand_log = list(self.hand_log)
        twin.passes_this_hand = list(self.passes_this_hand)
        twin.pending_decks = list(self.pending_decks)
        twin.rewards = list(self.rewards)
        twin.cumulative = list(self.cumulative)
        twin.history = list(self.history)
        return twin

    def card_locations(self) -> dict[str, list[int]]:
        """Zones in :mod:`card_envs.cards` ids: four holdings, the current trick and the trick pile."""
        to_id = CARD_ID_OF_INDEX
        zones = {f"hand_{s}": [to_id[c] for c in cards_of(self.holdings[s])] for s in range(NUM_PLAYERS)}
        zones["trick"] = [to_id[c] for c in self.trick if c >= 0]
        zones["trick_pile"] = [to_id[c] for record in self.hand_log for c in record[1:5]]
        return zones

    def sample_hidden(self, player: int, rng: np.random.Generator) -> RevolutionState:
        """Redeal what ``player`` cannot see, keeping ``view(player)`` and what it implies.

        Hidden: the other three holdings and, without ``full_recall``, the cards of every completed
        trick but the previous one (R24). They are redealt with every holding keeping its size and
        every opponent keeping what the view proves about it (:func:`known_holding_limits`,
        :func:`known_ace_holder`). Future decks are reshuffled from ``rng``.
        """
        twin = self.clone()
        twin.pending_decks = []
        twin._reseed_from(rng)
        if self.phase == OVER:
            return twin
        view = self.view(player)
        opponents = [s for s in range(NUM_PLAYERS) if s != player]
        pile_slots = [] if view.recall else [
            (i, 1 + seat) for i in range(len(self.hand_log) - 1) for seat in range(NUM_PLAYERS)
        ]
        pool = [c for s in opponents for c in cards_of(self.holdings[s])]
        pool += [self.hand_log[i][j] for i, j in pile_slots]
        holdings, pile = deal_hidden(view, pool, rng, self.game.config.forced_lead_restricted)
        for seat in opponents:
            twin.holdings[seat] = holdings[seat]
        for (i, j), card in zip(pile_slots, pile, strict=True):
            twin.hand_log[i][j] = card
        return twin

    def render(self) -> str:
        def cards(bits_or_list: Any) -> str:
            items = cards_of(bits_or_list) if isinstance(bits_or_list, int) else bits_or_list
            return " ".join(card_code(c) for c in items) or "-"

        config = self.game.config
        kind = " (tie-break)" if self.hand_number > config.num_hands else ""
        lines = [f"Revolution  hand {self.hand_number}/{config.num_hands}{kind}  dealer player_{self.dealer}  "
                 f"trick {self.trick_number}  step {self.steps}",
                 "scores " + " ".join(f"p{s}:{self.scores[s]}" for s in range(NUM_PLAYERS))
                 + "   tricks this hand " + " ".join(f"p{s}:{self.tricks_won[s]}" for s in range(NUM_PLAYERS))]
        if self.prev_leader >= 0:
            played = " ".join(f"p{s}:{card_code(self.prev_trick[s])}" for s in range(NUM_PLAYERS))
            trump = SUIT_CODES[self.prev_trump_suit] if self.prev_trump_suit >= 0 else "-"
            lines.append(f"previous trick: led by p{self.prev_leader}  {played}  trump {trump}  "
                         f"won by p{self.prev_winner} with {card_code(self.prev_winning_card)}")
        for seat in range(NUM_PLAYERS):
            mark = ">" if seat == self.current_player else " "
            lines.append(f"{mark} player_{seat}: [{cards(self.holdings[seat])}]  tricks {self.tricks_won[seat]}")
        if self.phase != OVER or self.cards_in_trick:
            passers = [f"p{s}" for s in range(NUM_PLAYERS) if self.passed >> s & 1]
            led = SUIT_CODES[self.led_suit] if self.led_suit >= 0 else "-"
            trump = SUIT_CODES[self.trump_suit] if self.trump_suit >= 0 else "-"
            order = [] if self.trick_leader < 0 else [(self.trick_leader + k) & 3 for k in range(self.cards_in_trick)]
            played = " ".join(f"p{s}:{card_code(self.trick[s])}" for s in order) or "-"
            phase = "unfinished" if self.phase == OVER else PHASE_NAMES[self.phase]
            lines.append(f"current trick: {phase}, designated p{self.designated}, "
                         f"passed {' '.join(passers) or '-'}, played {played}, led {led}, trump {trump}")
        if self.phase == OVER:
            final = self.final_scores()
            result = "truncated at the step limit" if self.truncated else "game over"
            lines.append(f"{result}: final scores {final}, winner(s) "
                         + ", ".join(f"player_{s}" for s in self.winners()))
        return "\n".join(lines)


def known_holding_limits(view: RevolutionView) -> dict[int, int]:
    """Cards each other seat may still hold, as far as ``view`` proves (section 7.3), as bit masks.

    In every visible trick, a follower who played off the led suit before trump was fixed was void
    in the led suit. The first card of the trick's trump suit fixed trump (later cards say nothing);
    an off-suit card before it did not fix trump, so it was a case-(c) card: that follower held
    nothing but that card's suit.
    """
    if view.recall:
        limits = dict(recall_limits(view.recall, view.player)[1])
    else:
        limits = {}
        if view.prev_leader >= 0:
            _narrow(limits, view.player, view.prev_leader, view.prev_trick, view.prev_led_suit, view.prev_trump_suit)
    _narrow(limits, view.player, view.trick_leader, view.trick, view.led_suit, view.trump_suit)
    return limits


@lru_cache(maxsize=8192)
def recall_limits(recall: tuple[tuple[int, ...], ...], viewer: int) -> tuple[int, dict[int, int]]:
    """The cards of the completed tricks ``recall`` (``full_recall`` records) as a bit mask, and what
    those tricks prove about the holdings of the seats other than ``viewer`` (see
    :func:`known_holding_limits`). Cached, and built on the cached answer for all tricks but the
    last: a seat sees the same completed tricks at every decision of a trick, one more each trick.
    The returned dict is shared; copy it before changing it."""
    if not recall:
        return 0, {}
    played, limits = recall_limits(recall[:-1], viewer)
    limits = dict(limits)
    record = recall[-1]
    leader = record[0]
    cards = record[1:5]
    for card in cards:
        played |= _BIT[card]
    _narrow(limits, viewer, leader, cards, SUIT_OF[cards[leader]], record[6])
    return played, limits


def _narrow(limits: dict[int, int], viewer: int, leader: int, cards: Sequence[int], led: int, trump: int) -> None:
    """Narrow ``limits`` by what one trick (led by ``leader``; -1: not led yet) proves; see
    :func:`known_holding_limits`."""
    if leader < 0:
        return
    for k in range(1, NUM_PLAYERS):
        seat = (leader + k) & 3
        card = cards[seat]
        if card < 0:
            break
        suit = SUIT_OF[card]
        if suit == led:
            continue
        if seat != viewer:
            mask = _FULL & ~SUIT_BITS[led] if suit == trump else SUIT_BITS[suit]
            limits[seat] = limits.get(seat, _FULL) & mask
        if suit == trump:
            break


def unseen_cards(view: RevolutionView) -> int:
    """Bit mask of the cards ``view``'s player has not seen this hand (held by the others or in the
    hidden trick pile): not in its hand, the current or previous trick, or (``full_recall``, or a
    remembering player's view) any completed trick of the hand."""
    seen = bits_of(view.hand)
    for card in view.trick + view.prev_trick:
        if card >= 0:
            seen |= _BIT[card]
    if view.recall:
        seen |= recall_limits(view.recall, view.player)[0]
    return _FULL & ~seen


def possible_holdings(view: RevolutionView) -> dict[int, int]:
    """The cards each other seat may hold, as far as ``view`` proves: :func:`unseen_cards` within
    :func:`known_holding_limits`, and ``AS`` only with its :func:`known_ace_holder`."""
    unseen = unseen_cards(view)
    limits = known_holding_limits(view)
    ace_holder = known_ace_holder(view)
    possible = {}
    for seat in range(NUM_PLAYERS):
        if seat != view.player:
            possible[seat] = unseen & limits.get(seat, _FULL)
            if ace_holder >= 0 and seat != ace_holder:
                possible[seat] &= ~_BIT[ACE_OF_SPADES]
    return possible


def known_ace_holder(view: RevolutionView) -> int:
    """The other seat that ``view`` proves still holds ``AS`` (trick 1's ``D``, R2, until it is played), else -1."""
    played = {c for c in view.trick if c >= 0}
    if view.trick_number == 1:
        holder = view.designated
    elif view.recall:
        holder = view.recall[0][8]
        played.update(c for record in view.recall for c in record[1:5])
    else:
        return NO_PLAYER
    return holder if holder != view.player and ACE_OF_SPADES not in played else NO_PLAYER


def forced_lead_limits(view: RevolutionView) -> dict[int, int]:
    """Under ``forced_lead_restricted`` (R5's variant): what the visible forced leads prove, as bit masks.

    ``D`` must lead a restricted-legal card at its designated decision (R3), and under the variant also
    at its forced lead when it holds one (R5). So a trick led by its ``D`` with a card that is not
    restricted-legal (for that trick's ``PL`` and ``PW``) was a forced lead, and ``D`` held no
    restricted-legal card then, nor since. Visible: the current trick, and with ``full_recall`` every
    completed trick of the hand (the one before a trick gives its ``PL`` and ``PW``). Only the search
    samplers use this; the ``void_inferences`` observation keeps to :func:`possible_holdings`."""
    limits: dict[int, int] = {}
    if view.trick_number > 1 and view.trick_leader >= 0:
        _narrow_forced(limits, view.player, view.designated, view.trick_leader, view.trick[view.trick_leader],
                       view.prev_led_suit, view.prev_winning_card)
    for before, record in zip(view.recall, view.recall[1:], strict=False):  # TRICK_RECORD layout
        _narrow_forced(limits, view.player, record[8], record[0], record[1 + record[0]],
                       SUIT_OF[before[1 + before[0]]], before[1 + before[5]])
    return limits


def _narrow_forced(limits: dict[int, int], viewer: int, designated: int, leader: int, lead: int,
                   prev_led_suit: int, prev_winning_card: int) -> None:
    """Narrow ``limits`` by one trick's lead (see :func:`forced_lead_limits`)."""
    if leader != designated or leader == viewer:
        return
    restricted = RESTRICTED[prev_led_suit][RANK_OF[prev_winning_card]]
    if not restricted >> lead & 1:
        limits[leader] = limits.get(leader, _FULL) & ~restricted


def deal_hidden(view: RevolutionView, pool: list[int], rng: np.random.Generator,
                forced_lead_restricted: bool = False) -> tuple[list[int], list[int]]:
    """Deal the cards ``pool`` (everything ``view`` does not show) consistently with ``view``, uniformly
    at random among all such deals.

    Returns the four holdings as bit masks (the viewer's own holding as it is) and the rest of the
    pool (the hidden trick pile, in random order). Every other seat gets its holding size, within
    :func:`known_holding_limits` (and :func:`forced_lead_limits` when the game has
    ``forced_lead_restricted``), with ``AS`` where :func:`known_ace_holder` says.
    """
    opponents = [s for s in range(NUM_PLAYERS) if s != view.player]
    sizes = [view.hand_sizes[s] for s in opponents]
    limits = known_holding_limits(view)
    if forced_lead_restricted:
        for seat, mask in forced_lead_limits(view).items():
            limits[seat] = limits.get(seat, _FULL) & mask
    ace_holder = known_ace_holder(view)
    if ace_holder >= 0:
        pool = [c for c in pool if c != ACE_OF_SPADES]
        sizes[opponents.index(ace_holder)] -= 1
    parts = deal_within_limits(pool, sizes, [limits.get(s, _FULL) for s in opponents], rng)
    holdings = [0, 0, 0, 0]
    for seat, cards in zip(opponents, parts, strict=False):
        holdings[seat] = bits_of(cards)
    if ace_holder >= 0:
        holdings[ace_holder] |= _BIT[ACE_OF_SPADES]
    holdings[view.player] = bits_of(view.hand)
    return holdings, parts[-1]


def deal_by_suit(pool: Sequence[int], sizes: Sequence[int], suits_allowed: Sequence[int],
                 rng: np.random.Generator) -> list[list[int]]:
    """:func:`deal_within_limits` with part ``i`` holding only suits in the bit mask ``suits_allowed[i]``."""
    limits = [sum(SUIT_BITS[suit] for suit in range(4) if allowed >> suit & 1) for allowed in suits_allowed]
    return deal_within_limits(pool, sizes, limits, rng)


def deal_within_limits(pool: Sequence[int], sizes: Sequence[int], limits: Sequence[int],
                       rng: np.random.Generator) -> list[list[int]]:
    """Split ``pool`` uniformly at random among all splits into parts of the given ``sizes``, part ``i``
    holding only cards in the bit mask ``limits[i]``, plus one last unconstrained part (the rest).

    Exact: cards that the same parts may hold are exchangeable, so the pool falls into a few *classes*
    (at most ``2 ** parts``: a whole suit for a void or a wall, the low or high cards of a suit for a
    forced lead). Unconstrained parts are merged into one *free* part and split uniformly at the end.
    For the constrained parts, the number of splits is counted class by class (how many cards of each
    class each part gets, weighted by the ways to choose them), the per-class counts are drawn in
    proportion, and each class's cards are shuffled into those counts. Raises :class:`StateError` when
    no split exists.
    """
    pool_bits = bits_of(pool)
    bound = [i for i in range(len(sizes)) if pool_bits & ~limits[i]]
    members: dict[int, list[int]] = {}
    for card in pool:
        members.setdefault(sum(1 << j for j, i in enumerate(bound) if limits[i] >> card & 1), []).append(card)
    signatures = sorted(members)
    by_class = [members[signature] for signature in signatures]
    rest = len(pool) - sum(sizes)
    if rest < 0:
        raise StateError("no deal of the hidden cards is consistent with the view: too few cards")
    counts = tuple(len(cards) for cards in by_class)
    caps = tuple(sizes[i] for i in bound)
    masks = tuple(sum(1 << k for k, signature in enumerate(signatures) if signature >> j & 1)
                  for j in range(len(bound)))
    if not _ways(0, caps, counts, masks):
        raise StateError("no deal of the hidden cards is consistent with the view")
    bound_parts: list[list[int]] = [[] for _ in bound]
    free: list[int] = []
    for k, cards in enumerate(by_class):
        splits = [(weight * _ways(k + 1, tuple(c - n for c, n in zip(caps, split, strict=True)), counts, masks),
                   split) for weight, split in _class_splits(k, caps, counts, masks)]
        split = _weighted_choice(splits, rng)
        cards = [cards[i] for i in rng.permutation(counts[k])]
        start = 0
        for part, n in enumerate(split):
            bound_parts[part].extend(cards[start:start + n])
            start += n
        free.extend(cards[start:])
        caps = tuple(c - n for c, n in zip(caps, split, strict=True))
    free = [free[i] for i in rng.permutation(len(free))]
    parts: list[list[int]] = []
    start = 0
    for i in range(len(sizes)):
        if i in bound:
            parts.append(bound_parts[bound.index(i)])
        else:
            parts.append(free[start:start + sizes[i]])
            start += sizes[i]
    parts.append(free[start:])
    return parts


def _weighted_choice(options: list[tuple[int, Any]], rng: np.random.Generator) -> Any:
    """One ``item`` of ``(weight, item)`` pairs, in proportion to the (possibly huge integer) weights."""
    pick = rng.random() * sum(weight for weight, _ in options)
    chosen = None
    for weight, item in options:
        if weight:
            chosen = item
            pick -= weight
            if pick < 0:
                break
    return chosen


def _class_splits(k: int, caps: tuple[int, ...], counts: tuple[int, ...], masks: tuple[int, ...]):
    """Every way ``(weight, split)`` to give ``split[i]`` cards of class ``k`` to part ``i`` (the rest to
    the last part, within its room); ``weight`` = the ways to choose which cards."""
    n = counts[k]
    room = sum(counts[k:]) - sum(caps)  # the last part's room for classes ``k`` onwards
    splits = [((), n)]
    for cap, mask in zip(caps, masks, strict=True):
        top = min(cap, n) if mask >> k & 1 else 0
        splits = [(split + (m,), left - m) for split, left in splits for m in range(min(top, left) + 1)]
    result = []
    for split, left_over in splits:
        if left_over > room:
            continue
        weight, left = 1, n
        for m in split:
            weight *= comb(left, m)
            left -= m
        result.append((weight, split))
    return result


@lru_cache(maxsize=1 << 16)
def _ways(k: int, caps: tuple[int, ...], counts: tuple[int, ...], masks: tuple[int, ...]) -> int:
    """The number of ways to deal classes ``k`` .. K-1 into parts with ``caps`` left (and the last part)."""
    if k == len(counts):
        return 0 if any(caps) else 1
    return sum(weight * _ways(k + 1, tuple(c - m for c, m in zip(caps, split, strict=True)), counts, masks)
               for weight, split in _class_splits(k, caps, counts, masks))


class Revolution(Game):
    """Revolution for four players; see the environment docstring for the tables."""

    name = "revolution_v0"
    config_class = RevolutionConfig
    state_class = RevolutionState
    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    reset_options = ("deck", "decks")
    observation_options = ("full_recall", "void_inferences")
    config: RevolutionConfig

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        encoding = self._encoding
        self._encode = (encoding.encode_inferences if self.config.void_inferences
                        else encoding.encode_recall if self.config.full_recall else encoding.encode)
        #: R23: decisions before truncation (a bound never reached without ``max_steps``)
        self.step_limit = self.config.max_steps if self.config.max_steps is not None else 1 << 62
        self._remembering: Revolution | None = None

    def check_encodable(self, options: Mapping[str, Any]) -> None:
        """A ``full_recall`` observation reads every completed trick of the hand, which only the views of a
        ``full_recall`` table show (7.3); the 541-entry observation reads a part of any view."""
        if options.get("full_recall") and not self.config.full_recall:
            raise ConfigError("a model trained with full_recall=True reads every earlier trick of the hand, which "
                              "the views of this table (full_recall=False) do not show: play it at a table with "
                              "full_recall=True (on a command line: --config '{\"full_recall\": true}')")

    def with_perfect_recall(self) -> Revolution:
        """This game with ``full_recall``: what a player who remembers the hand knows (spec 7.3)."""
        if self.config.full_recall:
            return self
        if self._remembering is None:
            self._remembering = type(self)(**{**self.config.to_dict(), "full_recall": True})
        return self._remembering

    @property
    def num_players(self) -> int:
        return NUM_PLAYERS

    def return_bounds(self) -> tuple[float, float]:
        """Every seat's return lies in ``[-b, b]``: the end result (``win`` or ``margin``) is within 1, and
        ``trick_reward`` pays at most ``w`` per trick, 13 tricks a hand, ``num_hands + max_extra_hands``
        hands (R14, R17)."""
        config = self.config
        bound = 1.0 + 13 * (config.num_hands + config.max_extra_hands) * config.trick_reward
        return -bound, bound

    @classmethod
    def variant_configs(cls) -> list[dict[str, Any]]:
        return [
            {},
            {"num_hands": 1, "first_dealer": 3, "full_recall": True, "trick_reward": 0.1, "void_inferences": True},
            {"num_hands": 2, "first_dealer": "random", "allow_yield_first_trick": True,
             "forced_lead_restricted": True, "reward_mode": "margin"},
            {"num_hands": 1, "max_extra_hands": 0, "max_steps": 30, "full_recall": True, "reward_mode": "margin"},
            {"num_hands": 8, "max_extra_hands": 2, "first_dealer": 2, "trick_reward": 0.05, "max_steps": 200},
        ]

    def max_decisions(self) -> int:
        """R14 and section 8.1: at most 13 tricks of at most 8 decisions per hand, and at most
        ``num_hands + max_extra_hands`` hands (R17); ``max_steps`` caps it further (R23)."""
        config = self.config
        bound = (config.num_hands + config.max_extra_hands) * HAND_SIZE * 8
        return bound if config.max_steps is None else min(bound, config.max_steps)

    def observation_layout(self) -> tuple[tuple[int, int, str], ...]:
        return self._encoding.layout_for(self.config.full_recall, self.config.void_inferences)

    @property
    def observation_size(self) -> int:
        enc = self._encoding
        if self.config.void_inferences:
            return enc.INFERENCE_OBSERVATION_SIZE
        return enc.RECALL_OBSERVATION_SIZE if self.config.full_recall else enc.OBSERVATION_SIZE

    def _new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None = None) -> RevolutionState:
        decks = _stacked_decks(options)
        state = RevolutionState.__new__(RevolutionState)
        state.game = self
        state.rng = rng
        first = self.config.first_dealer
        state.dealer = int(rng.integers(NUM_PLAYERS)) if first == "random" else first  # A2
        state.pending_decks = decks
        state.hand_number = 1
        state.scores = [0, 0, 0, 0]
        state.steps = 0
        state.terminated = state.truncated = state.is_over = False
        state.rewards = [0.0, 0.0, 0.0, 0.0]
        state.cumulative = [0.0, 0.0, 0.0, 0.0]
        state.history = []
        state._deal()
        return state

    def encode(self, view: Any) -> np.ndarray:
        return self._encode(view)

    def determinize(self, view: RevolutionView, rng: np.random.Generator) -> RevolutionState:
        """A full state consistent with ``view``, the hidden cards dealt at random (for search players).

        Everything public is copied from the view; the hidden holdings and pile come from
        :func:`deal_hidden`. What no view shows is reset: the decision count (so ``max_steps`` is
        not modelled), the action history, rewards, and (without ``full_recall``) the order and
        owners of the cards in the hidden pile, which are stored as anonymous tricks. Raises
        :class:`StateError` for a finished episode.
        """
        if view.over:
            raise StateError("cannot determinize a finished episode")
        seen = set(view.hand) | {c for c in view.trick if c >= 0} | {c for c in view.prev_trick if c >= 0}
        for record in view.recall:
            seen.update(record[1:5])
        pool = [c for c in range(NUM_CARDS) if c not in seen]
        holdings, pile = deal_hidden(view, pool, rng, self.config.forced_lead_restricted)
        state = RevolutionState.__new__(RevolutionState)
        state.game = self
        state._reseed_from(rng)
        state.pending_decks = []
        state.dealer, state.hand_number = view.dealer, view.hand_number
        state.scores, state.tricks_won = list(view.scores), list(view.tricks_won)
        state.trick_number, state.holdings, state.phase = view.trick_number, holdings, view.phase
        state.current_player, state.designated = view.current_player, view.designated
        state.passed = sum(1 << s for s in range(NUM_PLAYERS) if view.passed[s])
        state.trick_leader, state.trick = view.trick_leader, list(view.trick)
        state.cards_in_trick = sum(1 for c in view.trick if c >= 0)
        state.led_suit, state.trump_suit = view.led_suit, view.trump_suit
        state.best_card, state.best_seat = NO_CARD, NO_PLAYER
        if view.trick_leader >= 0:
            suit = view.trump_suit if view.trump_suit != NO_SUIT else view.led_suit
            state.best_card = max(c for c in view.trick if c >= 0 and SUIT_OF[c] == suit)
            state.best_seat = view.trick.index(state.best_card)
        state.prev_trick = list(view.prev_trick)
        state.prev_leader, state.prev_winner = view.prev_leader, view.prev_winner
        state.prev_led_suit, state.prev_trump_suit = view.prev_led_suit, view.prev_trump_suit
        state.prev_winning_card = view.prev_winning_card
        if view.recall:
            state.hand_log = [list(record) for record in view.recall]
        else:
            state.hand_log = [[0, *pile[i:i + 4], 0, NO_SUIT, 0, 0] for i in range(0, len(pile), 4)]
            if view.prev_leader >= 0:
                state.hand_log.append([view.prev_leader, *view.prev_trick, view.prev_winner, view.prev_trump_suit,
                                       0, view.prev_leader])
        state.passes_this_hand = list(view.passes_this_hand or (0, 0, 0, 0))
        state.steps = 0
        state.terminated = state.truncated = state.is_over = False
        state.rewards = [0.0, 0.0, 0.0, 0.0]
        state.cumulative = [0.0, 0.0, 0.0, 0.0]
        state.history = []
        return state


def _stacked_decks(options: Mapping[str, Any] | None) -> list[list[int] | None]:
    """Section 3.3: reset option ``deck`` (hand 1) or ``decks`` (one per hand), as card indices."""
    options = options or {}
    if options.get("deck") is not None and options.get("decks") is not None:
        raise DeckError("give reset option 'deck' (hand 1) or 'decks' (one per hand), not both")
    if options.get("deck") is not None:
        return [_parse_deck(options["deck"], "deck")]
    decks = options.get("decks")
    if decks is None:
        return []
    if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence):
        raise DeckError(f"reset option 'decks' must be a list of decks (lists of 52 card codes), "
                        f"got {type(decks).__name__}")
    return [None if d is None else _parse_deck(d, f"decks[{i}]") for i, d in enumerate(decks)]


def _parse_deck(codes: Sequence[str], what: str) -> list[int]:
    return [INDEX_OF_CARD_ID[c] for c in parse_deck(codes, _FULL_DECK, what=what)]
