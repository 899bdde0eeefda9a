"""Rule-based Battlecards players (spec section 11), weakest first, for any player count.

All read only the player's view (``BattlecardsView``): own hand, the table, every face-up pile, and
the public knowledge of spec 7.5 (``K_p`` / ``u_p`` per player, ``unaccounted``). A card's worth is
its value (a joker is worth the current ``jv``); suits never matter.

================  ===========================================================================
name              play
================  ===========================================================================
``cheapest``      baseline 2: follow (or show a war card) with the lowest card that beats every
                  card shown so far, else throw the lowest; lead the lowest; bury the lowest
``counter``       baselines 3+4: leads and buries its lowest card, follows like ``cheapest`` when
                  it is the last to follow and throws its lowest card otherwise (the winner
                  leads next, the weak seat); in a war, when participants are still to show,
                  it plays the card with the best expected card gain: the chance that it beats
                  them (each hand modelled from ``K_p``, ``u_p`` and the unaccounted cards: exact
                  when an opponent's pile is empty and ``u_p = 0``) times the stakes, against
                  the cards it would lose
================  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.players.base import Agent, Decision
from card_envs.battlecards.rules import (
    BURY,
    FOLLOW,
    KIND_VALUE,
    LEAD,
    NUM_KINDS,
    WAR_CARD,
    WAR_UP,
    BattlecardsView,
)


def kind_value(view: BattlecardsView, kind: int) -> int:
    """R2: value of a kind (a joker is worth ``jv``)."""
    return KIND_VALUE[kind] or view.joker_value


def _by_value(view: BattlecardsView, kinds: Sequence[int]) -> list[int]:
    """Kinds sorted by value; a joker sorts after a natural card of the same value (keep it flexible)."""
    return sorted(kinds, key=lambda k: (kind_value(view, k), k))


def shown_values(view: BattlecardsView) -> list[int]:
    """Values of the cards the acting player must beat: the round cards played so far (LEAD/FOLLOW), or
    at a war level the fighting cards already shown at this level, stuck participants' included."""
    if view.acting_decision in (LEAD, FOLLOW):
        return [view.value(c) for c in view.round_cards if c >= 0]
    shown_now = {owner for card, owner, source, level in view.table if source == WAR_CARD and level == view.war_level}
    return [view.value(view.fighting[p]) for p in view.participants if view.stuck[p] or p in shown_now]


def still_to_show(view: BattlecardsView) -> list[int]:
    """Players who will show a card after the viewer in this round (LEAD/FOLLOW) or war level (WAR_UP)."""
    me = view.player
    if view.acting_decision in (LEAD, FOLLOW):
        n = view.num_players
        order = [(me + i) % n for i in range(1, n)]
        later = []
        for p in order:
            if p == view.leader:
                break
            if view.active[p]:
                later.append(p)
        return later
    order = [p for p in view.participants[::-1] if not view.stuck[p]]
    return order[order.index(me) + 1:] if me in order else []


def chance_hand_below(view: BattlecardsView, player: int, value: int, strict: bool) -> float:
    """P(``player``'s hand holds no card of value > ``value`` (``strict``) or >= ``value``).

    ``player``'s hidden holdings are ``K_p`` plus ``u_p`` unknown cards, modelled as draws from the
    viewer's unaccounted cards; the hand is a random subset of them (hypergeometric, with the
    expected number of good unknown cards)."""
    hand = view.hand_sizes[player]
    if hand == 0:
        return 1.0

    def good(kind: int) -> bool:
        v = kind_value(view, kind)
        return v > value if strict else v >= value

    known = view.known[player]
    unknown = view.unknown[player]
    pool = sum(view.unaccounted)
    good_known = sum(known[k] for k in range(NUM_KINDS) if good(k))
    good_pool = sum(view.unaccounted[k] for k in range(NUM_KINDS) if good(k))
    total = sum(known) + unknown
    if total <= 0:
        return 1.0
    good_cards = good_known + (unknown * good_pool / pool if pool else 0.0)
    chance = 1.0
    for i in range(min(hand, total)):
        chance *= max(total - good_cards - i, 0.0) / (total - i)
        if chance == 0.0:
            break
    return chance


class CheapestWinner(Agent):
    """Spec 11.2: the lowest card that beats every card shown so far, else the lowest card."""

    name = "heuristic:cheapest"

    def act(self, decision: Decision) -> int:
        view = decision.view
        kinds = _by_value(view, decision.legal_actions)
        if view.acting_decision in (FOLLOW, WAR_UP):
            shown = shown_values(view)
            best = max(shown) if shown else 0
            for kind in kinds:
                if kind_value(view, kind) > best:
                    return kind
        return kinds[0]  # lead, bury, or throw the lowest


class CardCounter(Agent):
    """Spec 11.3-11.4: the cheapest-winner rules where they are exact, card counting where they guess.

    * LEAD: the lowest card. The round's winner leads the next round and leading is the weak seat
      (every follower sees the led card), so a leader loses cheaply rather than wins dearly.
    * BURY: the lowest card, keeping the strongest for the face-up phase (A18).
    * FOLLOW / WAR_UP as the last to show: the lowest card that beats every card shown, else the
      lowest card (exact: nothing is left to guess).
    * FOLLOW with players still to follow (3+ players): the lowest card. A later follower sees this
      card and beats it cheaply when it can; winning would also make this player the next leader.
    * WAR_UP with participants still to show: for every card of value ``v``, ``p`` = chance that it
      beats every card shown and that no player still to show holds a card >= ``v`` (a tie counts
      half), each player's hand modelled from ``K_p``, ``u_p`` and the unaccounted cards. It plays the
      card with the best expected card gain ``p * gain - (1 - p) * loss - usage * strength``: ``gain`` =
      the other players' cards on the table plus one per player still to show, ``loss`` = its own
      cards on the table plus this one. In a war, where the stakes are large and the first shower
      gives the others the last word, this shows the strongest card that still matters -- not the
      lowest, as the cheapest-winner rule does when nothing has been shown yet.
    """

    name = "heuristic:counter"
    usage = 0.15

    def act(self, decision: Decision) -> int:
        view = decision.view
        kinds = _by_value(view, decision.legal_actions)
        if len(kinds) == 1 or view.acting_decision in (LEAD, BURY):
            return kinds[0]
        shown = shown_values(view)
        best = max(shown) if shown else 0
        later = still_to_show(view)
        if not later:
            return next((k for k in kinds if kind_value(view, k) > best), kinds[0])
        if view.acting_decision == FOLLOW:
            return kinds[0]
        mine = sum(1 for _card, owner, _source, _level in view.table if owner == view.player)
        gain = len(view.table) - mine + len(later)
        choice, choice_score = kinds[0], float("-inf")
        for kind in kinds:
            value = kind_value(view, kind)
            if value < best:
                continue
            win = 1.0 if value > best else 0.5
            for player in later:
                below = chance_hand_below(view, player, value, strict=False)
                not_above = chance_hand_below(view, player, value, strict=True)
                win *= below + 0.5 * (not_above - below)
            score = win * gain - (1 - win) * (mine + 1) - self.usage * (value - 1) / 13
            if score > choice_score + 1e-9:
                choice, choice_score = kind, score
        if choice_score < -(mine + 1):  # no card is worth more than throwing the lowest away
            return kinds[0]
        return choice


AGENTS = {"cheapest": CheapestWinner, "counter": CardCounter}
STRONGEST = "counter"
