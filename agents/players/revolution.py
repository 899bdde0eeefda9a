"""Rule-based Revolution players (spec section 11), weakest first.

Both act only on the player's views (:class:`~card_envs.revolution.rules.RevolutionView`): the own
holding, the current and previous trick, counts and scores (and, under ``full_recall``, the hand so
far). ``cheap`` reads the current view alone; ``counting`` also remembers the previous tricks its
earlier views showed, which recovers the whole hand so far (spec 11.5: "needs memory or full_recall").

==============  ===========================================================================
name            play
==============  ===========================================================================
``cheap``       baseline 2, "cheap winner / cheap loser": a follower plays the lowest card
                that wins the trick so far, else its lowest card; void in the led suit it
                fixes trump with an ace if it has one (or its lowest card when it plays
                last). As leader it leads its highest legal card; it yields only when it
                must, and declines every offered lead.
``counting``    baselines 3-5: counts the unseen cards and reads voids and walls off the
                remembered tricks (section 7.3) to estimate, for every legal card, the
                chance that nobody after it can beat it. A follower plays the card with
                the best chance, discounted by what the card is worth later; a leader
                leads only when its best lead is likely to hold, and otherwise yields or
                declines (a lead that comes back after three declines is unrestricted).
                Losing cards come from the shortest suit, to make voids.
==============  ===========================================================================
"""

from __future__ import annotations

from typing import Any

from agents.players.base import Agent, Decision
from card_envs.revolution.rules import (
    FOLLOW,
    NO_SUIT,
    OFFERED,
    PASS,
    RANK_OF,
    SUIT_BITS,
    SUIT_OF,
    RevolutionView,
    known_holding_limits,
    unseen_cards,
)

ACE = 12  # rank value of an ace
_CARD_MASK = (1 << 52) - 1


# -- reading the table --------------------------------------------------------------------------------


def trick_order(view: RevolutionView) -> list[int]:
    """Seats in play order for the current trick (empty before the lead)."""
    leader = view.trick_leader
    return [] if leader < 0 else [(leader + k) & 3 for k in range(4)]


def winning_card(view: RevolutionView) -> int:
    """R11: the card winning the current trick so far (-1 before the lead)."""
    suit = view.trump_suit if view.trump_suit != NO_SUIT else view.led_suit
    cards = [c for c in view.trick if c >= 0 and SUIT_OF[c] == suit]
    return max(cards, default=-1)


def wins_now(view: RevolutionView, card: int, winning: int | None = None) -> bool:
    """Would ``card``, played by the acting follower, be the winning card right after it is played?
    (``winning``: :func:`winning_card` of the view, if already known.)"""
    suit = SUIT_OF[card]
    if view.trump_suit == NO_SUIT and suit != view.led_suit:
        return suit != view.prev_led_suit  # R9: it fixes trump
    if view.trump_suit != NO_SUIT and suit != view.trump_suit:
        return False
    return card > (winning_card(view) if winning is None else winning)


def players_after(view: RevolutionView) -> list[int]:
    """Followers still to play after the acting player in the current trick."""
    order = trick_order(view)
    return order[order.index(view.player) + 1:] if view.player in order else []


class TableEstimate:
    """Chances about the opponents' holdings.

    The unseen cards are split among the opponents' holdings (and the hidden trick pile); a seat
    holds an unseen card it may hold (:func:`known_holding_limits`: voids and walls read off the
    visible tricks) with probability ``hand size / cards it may hold``, independently of the rest.
    """

    def __init__(self, view: RevolutionView) -> None:
        self.view = view
        unseen_bits = unseen_cards(view)
        limits = known_holding_limits(view)
        self.allowed = {s: limits.get(s, _CARD_MASK) & unseen_bits for s in range(4) if s != view.player}
        self.share = {s: min(view.hand_sizes[s] / max(mask.bit_count(), 1), 1.0) for s, mask in self.allowed.items()}

    def beaten_by(self, seat: int, card: int, trump_fixed: bool, led_suit: int, prev_led: int) -> float:
        """Chance that ``seat``, playing later in the trick, can beat ``card``.

        Trump fixed (``card`` is a trump): any higher trump beats it. Otherwise ``card`` is of the
        led suit: a higher card of that suit beats it, and so does a void in the led suit when the
        seat may hold a card of another suit than ``PL`` (it then fixes trump). The chance that the
        seat holds none of some cards is ``(1 - share) ** (how many of them it may hold)``.
        """
        allowed = self.allowed[seat]  # a subset of the unseen cards
        keep = 1.0 - self.share[seat]
        no_higher = keep ** (allowed & SUIT_BITS[SUIT_OF[card]] & ~((2 << card) - 1)).bit_count()
        if trump_fixed:
            return 1.0 - no_higher
        return 1.0 - no_higher + self._void_term(seat, led_suit, prev_led)

    def holds(self, card: int, later: list[int], trump_fixed: bool) -> float:
        """Chance that ``card`` (winning once played) is still winning after ``later`` have played."""
        view = self.view
        chance = 1.0
        for seat in later:
            chance *= 1.0 - self.beaten_by(seat, card, trump_fixed, view.led_suit, view.prev_led_suit)
        return chance

    def best_lead(self, legal: list[int]) -> tuple[float, int]:
        """The lead most likely to win the trick, and that chance (ties: the lowest rank, then the
        highest card index). A lead wins if nobody follows higher in its suit or trumps it: per seat,
        :meth:`beaten_by` with the card's own suit led. Worked suit by suit, as a leader weighs
        several cards of a suit: the void-and-trump term and the suit's allowed cards once per seat."""
        me = self.view.player
        prev_led = self.view.prev_led_suit
        seats = ((me + 1) & 3, (me + 2) & 3, (me + 3) & 3)
        keeps = [1.0 - self.share[seat] for seat in seats]
        per_suit: dict[int, tuple[tuple[float, int, float], ...]] = {}
        best = (-1.0, 0, -1)
        for card in legal:
            suit = SUIT_OF[card]
            terms = per_suit.get(suit)
            if terms is None:
                suit_bits = SUIT_BITS[suit]
                terms = per_suit[suit] = tuple(
                    (keep, self.allowed[seat] & suit_bits, self._void_term(seat, suit, prev_led))
                    for seat, keep in zip(seats, keeps, strict=True))
            below = ~((2 << card) - 1)
            chance = 1.0
            for keep, suit_allowed, trumps in terms:
                chance *= 1.0 - (1.0 - keep ** (suit_allowed & below).bit_count() + trumps)
            key = (chance, -RANK_OF[card], card)
            if key > best:
                best = key
        return best[0], best[2]

    def _void_term(self, seat: int, led_suit: int, prev_led: int) -> float:
        """The second term of :meth:`beaten_by` before trump is fixed: the chance of a void in the led
        suit, if the seat may hold a card that would then fix trump (``SUIT_BITS[NO_SUIT]`` is empty)."""
        allowed = self.allowed[seat]
        can_trump = allowed & ~SUIT_BITS[led_suit] & ~SUIT_BITS[prev_led] & _CARD_MASK
        return (1.0 - self.share[seat]) ** (allowed & SUIT_BITS[led_suit]).bit_count() if can_trump else 0.0


def _lowest(cards: list[int]) -> int:
    return min(cards, key=lambda c: (RANK_OF[c], c))


def _suit_lengths(hand: tuple[int, ...]) -> list[int]:
    lengths = [0, 0, 0, 0]
    for card in hand:
        lengths[SUIT_OF[card]] += 1
    return lengths


class TrickMemory:
    """A player's memory of the hand (spec 11.5: "needs memory or full_recall").

    A player acts in every trick, and each of its views shows the previous trick, so remembering
    those views recovers every completed trick of the hand but the last one (which ends it).
    :meth:`recall` returns the view with these tricks filled in as ``recall`` records (the layout
    of ``full_recall``; who passed is not remembered). A view that already has ``recall`` is kept.
    """

    def __init__(self) -> None:
        self.hand = -1
        self.tricks: dict[int, tuple[int, ...]] = {}

    def recall(self, view: RevolutionView) -> RevolutionView:
        if view.recall or view.over:
            return view
        if view.hand_number != self.hand or any(t >= view.trick_number for t in self.tricks):
            self.hand, self.tricks = view.hand_number, {}  # a new hand (or a new episode)
        if view.prev_leader >= 0:
            self.tricks[view.trick_number - 1] = (view.prev_leader, *view.prev_trick, view.prev_winner,
                                                  view.prev_trump_suit, 0, view.prev_leader)
        if len(self.tricks) < view.trick_number - 1:
            return view  # tricks missed (the player joined mid-hand): a partial memory would mislead
        return view._replace(recall=tuple(self.tricks[t] for t in sorted(self.tricks)))


# -- the players -------------------------------------------------------------------------------------------


class CheapWinner(Agent):
    """Spec 11.2: cheap winner / cheap loser as a follower; simple leads."""

    name = "heuristic:cheap"

    def act(self, decision: Decision) -> int:
        view = decision.view
        legal = [a for a in decision.legal_actions if a != PASS]
        if not legal:
            return PASS
        if view.phase != FOLLOW:
            if view.phase == OFFERED:
                return PASS  # leading is weak: decline every offer
            return max(legal, key=lambda c: (RANK_OF[c], c))
        winners = [c for c in legal if wins_now(view, c)]
        if not winners:
            return _lowest(legal)
        last = not players_after(view)
        fixing = [c for c in winners if SUIT_OF[c] != view.led_suit and view.trump_suit == NO_SUIT]
        if fixing and not last:
            aces = [c for c in fixing if RANK_OF[c] == ACE]
            if aces:
                return aces[0]  # an ace fixes an unbeatable trump
            by_suit = max(fixing, key=lambda c: (RANK_OF[c], c))
            return by_suit  # the trump suit where the highest card is held, played high
        return _lowest(winners)


class CardCounter(Agent):
    """Spec 11.3-11.5: position-aware leads, card counting and void tracking, from the view only."""

    name = "heuristic:counting"
    #: lead (as designated or offered leader) only when the best lead holds with at least this chance
    lead_threshold = 0.45
    offered_threshold = 0.55
    #: what a card is worth later, per rank step (subtracted from its chance to hold)
    rank_cost = 0.15

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.memory = TrickMemory()

    def reset(self, game: Any, player: int) -> None:
        self.memory = TrickMemory()

    def act(self, decision: Decision) -> int:
        view = self.memory.recall(decision.view)  # every decision: the memory must see every view
        if len(decision.legal_actions) == 1:
            return decision.legal_actions[0]  # what the estimates below would choose too, without them
        legal = [a for a in decision.legal_actions if a != PASS]
        if not legal:
            return PASS
        table = TableEstimate(view)
        if view.phase == FOLLOW:
            return self._follow(view, legal, table)
        return self._lead(view, legal, table, PASS in decision.legal_actions)

    def _lead(self, view: RevolutionView, legal: list[int], table: TableEstimate, may_pass: bool) -> int:
        chance, best = table.best_lead(legal)
        if may_pass:
            threshold = self.offered_threshold if view.phase == OFFERED else self.lead_threshold
            if chance < threshold:
                return PASS
        elif chance < 0.1:
            return self._dump(view, legal)
        return best

    def _follow(self, view: RevolutionView, legal: list[int], table: TableEstimate) -> int:
        later = players_after(view)
        winning = winning_card(view)
        best_value, best = -1.0, -1
        for card in legal:
            if not wins_now(view, card, winning):
                continue
            fixes = view.trump_suit == NO_SUIT and SUIT_OF[card] != view.led_suit
            chance = table.holds(card, later, view.trump_suit != NO_SUIT or fixes)
            value = chance - self.rank_cost * RANK_OF[card] / 12
            if value > best_value:
                best_value, best = value, card
        if best >= 0 and best_value > 0.05:
            return best
        return self._dump(view, legal)

    @staticmethod
    def _dump(view: RevolutionView, legal: list[int]) -> int:
        """A losing card: from the shortest suit (a void lets you trump later), its lowest card; an ace only
        when nothing else is legal."""
        lengths = _suit_lengths(view.hand)
        return min(legal, key=lambda c: (RANK_OF[c] == ACE, lengths[SUIT_OF[c]], RANK_OF[c], c))


AGENTS = {"cheap": CheapWinner, "counting": CardCounter}
STRONGEST = "counting"
