"""Consistency checks of a Battlecards position, shared by the tests and the soak benchmark
(``benchmarks/battlecards_soak.py``). ``invariant_errors(state)`` returns a list of broken invariants
(empty when the position is consistent); each message names the invariant and the seat.

=====================  ===========================================================================
invariant              meaning
=====================  ===========================================================================
conservation           every card of the deal is in exactly one zone (hands, piles, face-up piles,
                       table, discard, set-aside)
mask                   ``legal_mask()`` is exactly ``legal_actions()``; the acting player is active,
                       holds a card (two for a BURY: one is always kept, A17)
hand limit             no hand exceeds ``hand_size`` (A47); ``hand_kinds`` counts the hand
face-up kinds          ``face_up_kinds`` counts each face-up pile
eliminated             an eliminated player holds no card and has no card on the table (R17)
knowledge (7.5)        ``|K_p| + u_p`` = hand + pile + own unrevealed face-down table cards, and
                       ``K_p`` is a sub-multiset of those (sound); the same for ``F_p`` / ``f_p``
                       over the pile and pile-sourced face-down table cards
recycled piles         each generation of hidden cards with public kinds (``recycled``, ``recycled_before``,
                       R5) holds exactly those kinds (``_hidden_groups``)
hand floors            with ``retire_lowest_on_flip``: one floor per hand card, ascending, and the hand can
                       be matched to them (R4: a card drawn at level ``l`` is no natural card ``<= l``)
public kinds           ``public_kinds`` = face-up piles + face-up table cards + discard + every ``K_p``
unaccounted            the acting player's ``unaccounted`` is non-negative and totals the other
                       players' ``u_p`` + its ``f_o`` + the set-aside cards
zero-sum               this step's rewards and the running totals sum to zero
round limit            ``rounds_completed <= max_rounds``; truncation only at the limit
=====================  ===========================================================================
"""

from __future__ import annotations

from card_envs.battlecards.rules import (
    BURY,
    FROM_HAND,
    FROM_PILE,
    KIND,
    NATURAL_VALUE,
    NUM_KINDS,
    OVER,
    WAR_CARD,
    BattlecardsState,
)


def _counts(cards: list[int]) -> list[int]:
    counts = [0] * NUM_KINDS
    for card in cards:
        counts[KIND[card]] += 1
    return counts


def invariant_errors(state: BattlecardsState) -> list[str]:
    """Every broken invariant of the module table, as readable messages."""
    errors: list[str] = []
    config = state.game.config
    n = len(state.active)
    table = state.table
    zones = [*state.hands, *state.piles, *state.face_up, [p[0] for p in table], state.discard, state.set_aside]
    if sorted(card for zone in zones for card in zone) != state.deck_cards:
        errors.append("conservation: the zones do not hold each card of the deal exactly once")
    legal = state.legal_actions()
    if [int(a) for a in state.legal_mask().nonzero()[0]] != legal:
        errors.append(f"mask: legal_mask {state.legal_mask().tolist()} differs from legal_actions {legal}")
    if state.phase != OVER:
        actor = state.current_player
        if not state.active[actor]:
            errors.append(f"mask: player_{actor} is to act but eliminated")
        if len(state.hands[actor]) < (2 if state.phase == BURY else 1):
            errors.append(f"mask: player_{actor} owes decision {state.phase} with hand {state.hands[actor]}")
    public = [0] * NUM_KINDS
    for card in state.discard:
        public[KIND[card]] += 1
    for card, _owner, source, _level in table:
        if source <= WAR_CARD:
            public[KIND[card]] += 1
    for p in range(n):
        hand, pile = state.hands[p], state.piles[p]
        if len(hand) > config.hand_size:
            errors.append(f"hand limit: player_{p} holds {len(hand)} > {config.hand_size} cards")
        if state.hand_kinds[p] != _counts(hand):
            errors.append(f"hand limit: hand_kinds of player_{p} do not count the hand")
        if state.face_up_kinds[p] != _counts(state.face_up[p]):
            errors.append(f"face-up kinds: face_up_kinds of player_{p} do not count the face-up pile")
        facedown = [c for c, owner, source, _ in table if owner == p and source >= FROM_PILE]
        from_pile = [c for c, owner, source, _ in table if owner == p and source >= FROM_PILE and source != FROM_HAND]
        if not state.active[p] and (hand or pile or state.face_up[p] or any(o == p for _, o, _, _ in table)):
            errors.append(f"eliminated: player_{p} is out but still has cards")
        hidden = _counts(hand + pile + facedown)
        known = state.known[p]
        if sum(known) + state.unknown[p] != sum(hidden):
            errors.append(f"knowledge: |K_{p}| + u_{p} = {sum(known) + state.unknown[p]} != {sum(hidden)} hidden")
        if any(known[k] > hidden[k] for k in range(NUM_KINDS)):
            errors.append(f"knowledge: K_{p} = {known} is not within the hidden holdings {hidden}")
        pile_hidden = _counts(pile + from_pile)
        pile_known = state.pile_known[p]
        if sum(pile_known) + state.pile_unknown[p] != sum(pile_hidden):
            errors.append(f"knowledge: |F_{p}| + f_{p} != {sum(pile_hidden)} pile cards")
        if any(pile_known[k] > pile_hidden[k] for k in range(NUM_KINDS)):
            errors.append(f"knowledge: F_{p} = {pile_known} is not within the pile {pile_hidden}")
        if config.retire_lowest_on_flip:
            floors = state.hand_floors[p]
            survives = sorted(NATURAL_VALUE[c] - 1 if NATURAL_VALUE[c] else 99 for c in hand)  # highest level
            if floors != sorted(floors) or len(floors) != len(hand) or any(
                    f > top for f, top in zip(floors, survives, strict=False)):
                errors.append(f"hand floors: player_{p}'s floors {floors} do not fit the hand {hand}")
        for slots, kinds in state._hidden_groups(p, own=False):
            if kinds is not None and _counts([slot[0][slot[1]] for slot in slots]) != kinds:
                errors.append(f"recycled piles: player_{p}'s {len(slots)} hidden cards of a generation are not "
                              f"its recycled kinds {kinds}")
        for k in range(NUM_KINDS):
            public[k] += known[k] + state.face_up_kinds[p][k]
    if state.public_kinds != public:
        errors.append(f"public kinds: {state.public_kinds} != recount {public}")
    viewer = state.current_player if state.phase != OVER else 0
    view = state.view(viewer)
    expected = sum(view.unknown[p] for p in range(n) if p != viewer) + view.pile_unknown + view.set_aside
    if min(view.unaccounted) < 0 or sum(view.unaccounted) != expected:
        errors.append(f"unaccounted: player_{viewer} sees {view.unaccounted}, expected a total of {expected}")
    if abs(sum(state.rewards)) > 1e-9 or abs(sum(state.cumulative)) > 1e-9:
        errors.append(f"zero-sum: rewards {state.rewards}, totals {state.cumulative}")
    if config.max_rounds is not None:
        if state.rounds_completed > config.max_rounds:
            errors.append(f"round limit: {state.rounds_completed} rounds > max_rounds {config.max_rounds}")
        if state.truncated and state.rounds_completed != config.max_rounds:
            errors.append(f"round limit: truncated after {state.rounds_completed} rounds")
    return errors
