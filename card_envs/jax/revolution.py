"""Revolution in JAX (Pgx API): the rules of ``card_envs/revolution/rules.py``, batched.

``card_envs.jax.make("revolution_v0", **options)`` returns :class:`Env`. Every option of the Python
engine runs (:class:`~card_envs.revolution.rules.RevolutionConfig`: ``num_hands``, ``first_dealer``
incl. ``"random"``, ``allow_yield_first_trick``, ``forced_lead_restricted``, ``full_recall``,
``void_inferences``, ``max_extra_hands``, ``max_steps``, ``reward_mode``, ``trick_reward``); none is
refused. One ``step`` is one decision of the Python engine (R20, R21: even a single legal action is
a decision), and the rest of the turn resolves inside it: the end of a trick (R11, R12), of a hand
(R13, R15), of the series or a tie-break hand (R16, R17), the next deal (R19) and the step limit (R23).
Observations (541 / 753 / 909 floats), action ids (``0..51`` = ``play <card index>``, 52 = ``pass``),
legal masks and per-step rewards are exactly the Python engine's (:mod:`card_envs.revolution.encoding`
has the layout tables); ``card_envs.jax.lockstep`` checks it.

Chance (section 3.3, A2, A4). ``init(key)`` draws the first dealer (``first_dealer="random"``), hand 1 and a 64-bit
seed for the later hands from 55 words hashed from the key's own 64 bits (:func:`~card_envs.jax.core.key_words`).
Every hand is dealt card by card: card ``c`` goes to seat ``s`` with probability (cards ``s`` still lacks) / (cards
left), drawn by Lemire's multiply from a 32-bit word (uniform over the splits into hands of 13 but for a total bias
below ``4e-7`` per deal). Hand 1 takes 52 words at ``init`` (:func:`_whole_deal`; ranking 52 random sort keys cost
some twenty times more on CPU, as much as 20 steps per re-deal). The next hand is dealt *while the current one is
played*: each step deals the four cards of one more rank of it, from words hashed from the seed and the step count,
and a hand lasts at least 16 steps, so it is complete when needed. This keeps the 52-card shuffle out of the step,
where vmap would compute it on every step (every branch of a vmapped ``cond`` runs), and ``step`` needs no key
(``step_uses_key = False``: like Pgx's games, the future of an episode is fixed by the key of ``init``).
:meth:`Env.init_with_deck` deals hand 1 from a stacked deck (deck index ``i`` goes to seat
``(dealer + 1 + i) mod 4``, section 3.4). The next hand's arrays are the engine's ``chance_fields``:
``from_state`` takes the Python state's pending stacked deck (section 3.3) if it has one, else shuffles the
next hand from its ``key`` (chance the Python state has not drawn yet: its generator is not copied).

State arrays (all int32 unless noted; seats are absolute; ``-1`` = none; a *word* is a 13-bit mask
over the ranks 2 .. A of one suit, so a set of cards is 4 words, suits C D H S)

========================  ========  ===================================================================
field                     shape     meaning (the Python field of the same name, R = rule of the spec)
========================  ========  ===================================================================
``current_player``        ()        seat to act; 0 once over (Pgx; the Python engine says -1)
``observation``           (n,)      float32, ``observe(state, current_player)`` (seat 0's once over)
``rewards``               (4,)      float32, what the last step paid (trick shaping + terminal)
``terminated``            ()        bool: the series ended (R17)
``truncated``             ()        bool: ``max_steps`` decisions were made (R23)
``legal_action_mask``     (53,)     bool: the legal set; all True once over (Pgx)
``_step_count``           ()        decisions made this episode (Python ``steps``)
``_dealer``               ()        dealer of the current hand
``_hand_number``          ()        1-based hand of the series (> ``num_hands``: tie-break)
``_scores``               (4,)      cumulative scores of the finished hands (R15)
``_tricks_won``           (4,)      tricks won this hand
``_trick_number``         ()        1-based trick of the hand
``_holdings``             (4, 4)    ``[seat, suit]`` word: each seat's holding
``_phase``                ()        0 opening lead, 1 designated, 2 offered, 3 forced, 4 follow, 5 over
``_designated``           ()        designated leader ``D`` (R3)
``_passed``               ()        bit ``s``: seat ``s`` passed in this lead phase (A35)
``_trick_leader``         ()        ``T`` (-1 before the lead)
``_trick``                (4,)      card index played to this trick, by seat
``_cards_in_trick``       ()        cards played to this trick (0 .. 3; 4 only inside a step)
``_led_suit``             ()        ``LS``
``_trump_suit``           ()        ``TS`` (-1 while not fixed, R9)
``_best_card``            ()        the card winning the trick so far (R11)
``_best_seat``            ()        its player
``_prev_trick``           (4,)      card index played to the previous trick of this hand, by seat
``_prev_leader``          ()        who led it
``_prev_winner``          ()        who won it
``_prev_led_suit``        ()        ``PL``
``_prev_trump_suit``      ()        its trump suit
``_prev_winning_card``    ()        ``PW``
``_ace_holder``           ()        who held ``AS`` at the deal (trick 1's ``D``, R2)
``_passes_this_hand``     (4,)      passes made this hand, by seat (``full_recall`` only, else 0)
``_played``               (4, 4)    ``[seat, suit]`` word: cards each seat played to the completed
                                    tricks of this hand (``full_recall`` only, else 0)
``_limits``               (4, 4)    ``[seat, suit]`` word: the cards the tricks of this hand so far (the
                                    current one included, narrowed at each follow) still allow each
                                    seat to hold (voids and walls, spec 7.3), ``AS`` only with trick
                                    1's ``D`` (R2); ``void_inferences`` only, else all ones
``_next_holdings``        (4, 4)    ``[seat, suit]`` word: the next hand's deal so far (hidden)
``_next_need``            (4,)      cards each seat still lacks in it
``_next_dealt``           ()        cards of it dealt so far (52: complete)
``_deal_seed``            (2,)      uint32: the seed of the later hands' deals (hidden)
========================  ========  ===================================================================

Batch last (``batch_last = True``): every function of the step works on one state or on a batch whose arrays
carry the batch axis *last* (a scalar field ``(n,)``, the holdings ``(4, 4, n)``, the observation ``(541, n)``):
``env.step_batch_last(states, actions)`` runs the whole batch at once, each entry a contiguous row of ``n``
games that XLA vectorises (``vmap(step)`` compiles rows of 4, 13 or 541 entries to short scalar loops). Hence
no gathers along the leading axes: a seat's row is a chain of selections (:func:`_pick`), the observer's
relative seats two fixed rotations (:func:`_relative`), the ratio entries ``ExactRatios.rows``.

Speed (CPU, measured per part of the compiled batch-last loop, with per-op traces): XLA fuses an elementwise
value into each of its consumers and computes it again for every entry of a larger output, so values that
feed many entries are produced by reductions, which XLA computes once: the legal cards as suit words
(:func:`_chosen`, before they are spread into 52 mask entries), the card played and the cards dealt as suit
words, the new-hand flag (``computed_once``, before the 16 words of the holdings). The observation (541 floats,
most of the bytes a step writes) is the largest part: its 0/1 entries are first set as bits of 17 words
(:func:`_packed`, each entry at its own index), then spread into floats in one elementwise pass that writes
every entry once, the ratio entries written over their places (:func:`_spread`). A per-row Threefry in the step
cost as much as the rules; the later deals come from a hash of the init seed instead, and so does the deal of
``init`` (XLA CPU compiles Threefry to a loop of about a hundred small operations, ~50 us per lazy re-deal of 8
games). The four seats a step deals are computed once as one packed word (a stack of them drew each seat again
with the draws before it). The next hand is dealt after the step's rules, so a new hand takes the deal
completed before the step (never changed by it). Measured on the benchmark loop (``benchmarks.jax_throughput``,
B=1024 over 2 devices, about 220 ns of CPU time per game-step; per-op trace): the spread of the observation is
its largest operation (a quarter to a third, not far above the cost of writing 541 floats at all, which ablation
puts at about 40 ns); the random legal action of the harness (its hash over 53 actions) about 15%; XLA's fixed
cost per operation (about 60 ns, some 150 operations a step) below 10%.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from pgx._src.struct import dataclass

from card_envs.jax.core import FALSE, CardEnv, CardState, ExactRatios, computed_once, hashed_words, key_words
from card_envs.jax.core import _column as column
from card_envs.revolution import encoding
from card_envs.revolution.rules import (
    ACE_OF_SPADES,
    DESIGNATED,
    FOLLOW,
    FORCED,
    HAND_SIZE,
    NO_CARD,
    NO_PLAYER,
    NO_SUIT,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_PLAYERS,
    OFFERED,
    OPENING,
    OVER,
    PASS,
    TRICKS_TO_WIN_HAND,
    Revolution,
    RevolutionConfig,
    RevolutionState,
    known_holding_limits,
)

Array = jax.Array

CARDS = np.arange(NUM_CARDS, dtype=np.int32)
FULL_WORD = (1 << HAND_SIZE) - 1  #: every rank of a suit
SPADES = 3
ACE_BIT = 1 << (ACE_OF_SPADES % HAND_SIZE)  #: ``AS`` in the spade word
#: cards of the next hand dealt per step: a hand lasts >= 16 steps (4 tricks of >= 4 decisions), 16 * 4 >= 52
DEALT_PER_STEP = 4


@dataclass
class State(CardState):
    name: ClassVar[str] = "revolution_v0"

    current_player: Array = jnp.int32(0)
    observation: Array = jnp.zeros(encoding.OBSERVATION_SIZE, dtype=jnp.float32)
    rewards: Array = jnp.zeros(NUM_PLAYERS, dtype=jnp.float32)
    terminated: Array = FALSE
    truncated: Array = FALSE
    legal_action_mask: Array = jnp.zeros(NUM_ACTIONS, dtype=jnp.bool_)
    _step_count: Array = jnp.int32(0)
    # --- Revolution (see the module table) ---
    _dealer: Array = jnp.int32(0)
    _hand_number: Array = jnp.int32(1)
    _scores: Array = jnp.zeros(NUM_PLAYERS, dtype=jnp.int32)
    _tricks_won: Array = jnp.zeros(NUM_PLAYERS, dtype=jnp.int32)
    _trick_number: Array = jnp.int32(1)
    _holdings: Array = jnp.zeros((NUM_PLAYERS, 4), dtype=jnp.int32)
    _phase: Array = jnp.int32(OPENING)
    _designated: Array = jnp.int32(0)
    _passed: Array = jnp.int32(0)
    _trick_leader: Array = jnp.int32(NO_PLAYER)
    _trick: Array = jnp.full(NUM_PLAYERS, NO_CARD, dtype=jnp.int32)
    _cards_in_trick: Array = jnp.int32(0)
    _led_suit: Array = jnp.int32(NO_SUIT)
    _trump_suit: Array = jnp.int32(NO_SUIT)
    _best_card: Array = jnp.int32(NO_CARD)
    _best_seat: Array = jnp.int32(NO_PLAYER)
    _prev_trick: Array = jnp.full(NUM_PLAYERS, NO_CARD, dtype=jnp.int32)
    _prev_leader: Array = jnp.int32(NO_PLAYER)
    _prev_winner: Array = jnp.int32(NO_PLAYER)
    _prev_led_suit: Array = jnp.int32(NO_SUIT)
    _prev_trump_suit: Array = jnp.int32(NO_SUIT)
    _prev_winning_card: Array = jnp.int32(NO_CARD)
    _ace_holder: Array = jnp.int32(0)
    _passes_this_hand: Array = jnp.zeros(NUM_PLAYERS, dtype=jnp.int32)
    _played: Array = jnp.zeros((NUM_PLAYERS, 4), dtype=jnp.int32)
    _limits: Array = jnp.full((NUM_PLAYERS, 4), FULL_WORD, dtype=jnp.int32)
    _next_holdings: Array = jnp.zeros((NUM_PLAYERS, 4), dtype=jnp.int32)
    _next_need: Array = jnp.full(NUM_PLAYERS, HAND_SIZE, dtype=jnp.int32)
    _next_dealt: Array = jnp.int32(0)
    _deal_seed: Array = jnp.zeros(2, dtype=jnp.uint32)


class Env(CardEnv[RevolutionState]):
    """Revolution under fixed options (a ``pgx.Env``); see the module docstring."""

    game: Revolution
    config: RevolutionConfig

    name = "revolution_v0"
    state_class = State
    #: the next hand, dealt while this one is played, and the seed of the later hands (drawn at ``init``;
    #: ``from_state``: from its key)
    chance_fields = ("_next_holdings", "_next_need", "_next_dealt", "_deal_seed")
    step_uses_key = False  # later hands come from the seed drawn at init
    batch_last = True  # step_batch_last runs the whole batch at once, batch axis last (card_envs.jax.core)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        config = self.config
        #: the first index of every block of the observation, by the encoding's block names
        self._layout = {name: start for start, _, name in self.game.observation_layout()}
        most_hands = config.num_hands + config.max_extra_hands
        # the ratio entries, rounded as the Python encoding rounds them: tricks won (4), scores (4), the trick
        # number, the dealer (4 one-hot entries), hands completed, the tie-break flag
        self._counts = ExactRatios([(TRICKS_TO_WIN_HAND, TRICKS_TO_WIN_HAND)] * 4
                                   + [(4 * config.num_hands, TRICKS_TO_WIN_HAND * most_hands)] * 4
                                   + [(HAND_SIZE - 1, HAND_SIZE - 1)] + [(1, 1)] * 4
                                   + [(config.num_hands, most_hands), (1, 1)])
        self._passes = ExactRatios([(HAND_SIZE, HAND_SIZE)] * 4)  # full_recall: passes this hand

    # -- Pgx ----------------------------------------------------------------------------------------

    def _init(self, key: Array) -> State:
        words = key_words(key, NUM_CARDS + 3)  # the deal, the dealer, the seed of the later deals
        state = self._initial_state(self._first_dealer(words[NUM_CARDS]), _whole_deal(words[:NUM_CARDS]))
        return state.replace(_deal_seed=words[NUM_CARDS + 1:])

    def init_with_deck(self, key: Array, deck: Array) -> State:
        """``init`` with hand 1 dealt from a stacked deck (section 3.3): ``deck`` holds the 52 card
        indices (``2C`` = 0 .. ``AS`` = 51), top first, and deck index ``i`` goes to seat
        ``(dealer + 1 + i) mod 4``. ``key`` draws the dealer under ``first_dealer="random"`` and the seed of
        the later hands. ``deck`` must be a permutation of ``0..51`` (not checked: jittable)."""
        words = key_words(key, 3)
        dealer = self._first_dealer(words[0])
        state = self._initial_state(dealer, _deck_deal(jnp.asarray(deck, jnp.int32), dealer))
        return self._finished(state.replace(_deal_seed=words[1:]))

    def _first_dealer(self, word: Array) -> Array:
        """A2: ``first_dealer``, or a uniform seat from a random 32-bit word (its top two bits)."""
        if self.config.first_dealer == "random":
            return (word >> 30).astype(jnp.int32)
        return jnp.int32(self.config.first_dealer)

    def _initial_state(self, dealer: Array, holdings: Array) -> State:
        """Hand 1 dealt: the core fills in the mask and the observation."""
        return State(observation=jnp.zeros(self.observation_shape, jnp.float32), _dealer=dealer,
                     **_hand_start(holdings, self.config.void_inferences))

    def _step(self, state: State, action: Array, key: Array | None) -> State:
        del key  # the next hand's cards come from the seed drawn at init
        state = self._decide(state, jnp.asarray(action, jnp.int32))
        trick_done = state._cards_in_trick == NUM_PLAYERS
        state, rewards = self._end_trick(state, trick_done)
        hand_done = trick_done & (jnp.max(state._tricks_won, axis=0) == TRICKS_TO_WIN_HAND)  # only T's count grew
        state, series_done = self._end_hand(state, hand_done)
        state = _deal_next_cards(state, _deal_words(state._deal_seed, state._step_count))
        state, rewards = self._finish(state, series_done, rewards)
        return state.replace(rewards=rewards)

    # -- one decision (R3-R11) --------------------------------------------------------------------------

    def _decide(self, state: State, action: Array) -> State:
        """The acting seat plays a card (a lead or a follow) or passes; the trick itself is ended by
        :meth:`_end_trick` once it holds four cards."""
        player = state.current_player
        is_pass = action == PASS
        plays = ~is_pass
        card = jnp.where(plays, action, 0)
        suit = jax.lax.div(card, HAND_SIZE)  # a card index is never negative: no floor correction
        following = state._phase == FOLLOW
        leads = plays & ~following  # R6
        # R9: while no trump is fixed, the first follower's card of neither LS nor PL fixes it
        no_trump = state._trump_suit == NO_SUIT
        fixes = following & no_trump & (suit != state._led_suit) & (suit != state._prev_led_suit)
        # R11: a higher card of the suit that counts (trump once fixed, else the led suit) takes over
        counting_suit = jnp.where(no_trump, state._led_suit, state._trump_suit)
        beats = following & (suit == counting_suit) & (card > state._best_card)
        takes = leads | fixes | beats
        is_player = _seats(player) == player
        # the card as suit words (none for a pass), computed once for the 16 words of the holdings
        card_words = computed_once(_suit_words(action))
        right = (player + 3) & 3  # R4: the offer moves to the right
        pass_phase = jnp.where(right == state._designated, FORCED, OFFERED)  # R5
        fields = dict(
            current_player=jnp.where(is_pass, right, (player + 1) & 3),
            _phase=jnp.where(is_pass, pass_phase, FOLLOW),
            _holdings=state._holdings ^ jnp.where(is_player[:, None], card_words[None], 0),
            _trick=jnp.where(is_player & plays, card, state._trick),
            _cards_in_trick=state._cards_in_trick + plays,
            _trick_leader=jnp.where(leads, player, state._trick_leader),
            _led_suit=jnp.where(leads, suit, state._led_suit),
            _trump_suit=jnp.where(fixes, suit, state._trump_suit),
            _best_card=jnp.where(takes, card, state._best_card),
            _best_seat=jnp.where(takes, player, state._best_seat),
            _passed=jnp.where(is_pass, state._passed | (1 << player), state._passed),
        )
        if self.config.full_recall:
            fields["_passes_this_hand"] = state._passes_this_hand + (is_player & is_pass)
        if self.config.void_inferences:
            off_led = following & no_trump & (suit != state._led_suit)
            fields["_limits"] = _narrowed(state._limits, is_player, off_led, fixes, suit, state._led_suit)
        return state.replace(**fields)

    # -- the end of a trick, a hand, the series (R11-R19, R23) ------------------------------------------

    def _end_trick(self, state: State, done: Array) -> tuple[State, Array]:
        """R11-R13: the trick goes to its best card's player, who is the next designated leader unless
        the hand is over; returns the trick shaping rewards (section 9) too."""
        winner = state._best_seat
        is_winner = _seats(winner) == winner
        won = state._tricks_won + (done & is_winner)
        weight = self.config.trick_reward
        rewards = jnp.zeros_like(state.rewards)
        if weight:
            rewards = jnp.where(done, jnp.where(is_winner, weight, -weight / 3), 0.0).astype(jnp.float32)
        next_trick = done & (_pick(won, winner) < TRICKS_TO_WIN_HAND)
        fields = dict(
            _tricks_won=won,
            _prev_trick=jnp.where(done, state._trick, state._prev_trick),
            _prev_leader=jnp.where(done, state._trick_leader, state._prev_leader),
            _prev_winner=jnp.where(done, winner, state._prev_winner),
            _prev_led_suit=jnp.where(done, state._led_suit, state._prev_led_suit),
            _prev_trump_suit=jnp.where(done, state._trump_suit, state._prev_trump_suit),
            _prev_winning_card=jnp.where(done, state._best_card, state._prev_winning_card),
            # R24: the trick joins the pile
            _passed=jnp.where(done, 0, state._passed),
            _cards_in_trick=jnp.where(done, 0, state._cards_in_trick),
            _trick_leader=jnp.where(done, NO_PLAYER, state._trick_leader),
            _best_seat=jnp.where(done, NO_PLAYER, state._best_seat),
            _trick=jnp.where(done, NO_CARD, state._trick),
            _led_suit=jnp.where(done, NO_SUIT, state._led_suit),
            _trump_suit=jnp.where(done, NO_SUIT, state._trump_suit),
            _best_card=jnp.where(done, NO_CARD, state._best_card),
            # R12 / A44
            _trick_number=state._trick_number + next_trick,
            _designated=jnp.where(next_trick, winner, state._designated),
            current_player=jnp.where(next_trick, winner, state.current_player),
            _phase=jnp.where(next_trick, DESIGNATED, state._phase),
        )
        if self.config.full_recall:
            # the trick's cards (this step's included) computed once: each of the 16 words would place it again
            fields["_played"] = state._played | jnp.where(done, _card_words(computed_once(state._trick)), 0)
        return state.replace(**fields), rewards

    def _end_hand(self, state: State, done: Array) -> tuple[State, Array]:
        """R15-R19: score the hand; the series ends (returned flag), or the next dealer deals the hand
        dealt during this one."""
        config = self.config
        scores = state._scores + jnp.where(done, state._tricks_won, 0)
        unique_top = jnp.sum(scores == jnp.max(scores, axis=0), axis=0) == 1
        extra_hands = state._hand_number - config.num_hands
        series_done = done & (extra_hands >= 0) & (unique_top | (extra_hands >= config.max_extra_hands))
        new_hand = computed_once(done & ~series_done)
        # the next hand is complete: a hand lasts >= 16 steps, its deal 13
        start = _hand_start(state._next_holdings, config.void_inferences)
        unused = {"_passes_this_hand", "_played"} if not config.full_recall else set()
        unused |= {"_limits"} if not config.void_inferences else set()  # never changed: no reset
        fields = {name: jnp.where(new_hand, value, getattr(state, name)) for name, value in start.items()
                  if name not in unused}
        state = state.replace(
            _scores=scores,
            _hand_number=state._hand_number + new_hand,
            _dealer=jnp.where(new_hand, (state._dealer + 1) & 3, state._dealer),  # R19 / A32
            **fields,
        )
        return state, series_done

    def _finish(self, state: State, terminated: Array, rewards: Array) -> tuple[State, Array]:
        """R17 / R23 and section 9: the episode ends (the series is over, or the step limit is reached
        after the step was resolved); the terminal rewards join the step's rewards."""
        config = self.config
        if config.max_steps is None:
            truncated = FALSE
        else:
            truncated = ~terminated & (state._step_count >= config.max_steps)
        over = terminated | truncated
        final = jnp.where(truncated, state._scores + state._tricks_won, state._scores)  # A41
        terminal = _terminal_rewards(final, config.reward_mode, state._hand_number)
        state = state.replace(
            terminated=terminated,
            truncated=truncated,
            _phase=jnp.where(over, OVER, state._phase),
        )
        return state, rewards + jnp.where(over, terminal, 0.0)

    # -- legal actions (R2-R8) ------------------------------------------------------------------------

    def _legal_action_mask(self, state: State) -> Array:
        config = self.config
        phase = state._phase
        holding = _pick(state._holdings, state.current_player)
        suits = _seats(phase)
        not_pl = suits != state._prev_led_suit
        # R3: not of suit PL, rank <= rv(PW)
        rank_cap = (2 << (state._prev_winning_card % HAND_SIZE)) - 1
        restricted = jnp.where(not_pl, holding & rank_cap, 0)
        # R7 / R8
        same = jnp.where(suits == state._led_suit, holding, 0)
        other = jnp.where(not_pl, holding, 0)
        no_trump = state._trump_suit == NO_SUIT
        follow = jnp.where(no_trump & _any(same), same, jnp.where(no_trump & _any(other), other, holding))
        forced = holding  # R5 / A14
        if config.forced_lead_restricted:
            forced = jnp.where((state._trick_number > 1) & _any(restricted), restricted, holding)
        # by phase: OPENING, DESIGNATED, OFFERED, FORCED, FOLLOW (any card on an opening or offered lead); none OVER
        by_phase = [holding, restricted, holding, forced, follow]
        can_pass = (phase == DESIGNATED) | (phase == OFFERED)  # R3, R4
        if config.allow_yield_first_trick:
            can_pass = can_pass | (phase == OPENING)  # A7
        legal = _chosen(by_phase, phase)  # computed once, not for each of the 52 entries
        return jnp.concatenate([_card_bits(legal), can_pass[None]])

    # -- observation (section 7.4, encoding.py) ---------------------------------------------------------

    def _observe(self, state: State, player_id: Array) -> Array:
        """Two stages: the flags (0/1 entries: cards, one-hots) as bits of a few 32-bit words, each entry's
        bit at its own index, then spread into floats, with the runs of ratio entries (counts) between them
        (see :func:`_spread`)."""
        me = player_id
        config = self.config
        at = self._layout

        def relative(seat: Array) -> Array:
            return jnp.where(seat >= 0, (seat - me) & 3, -1)

        over = state._phase == OVER
        has_prev = state._prev_leader >= 0
        trick, prev_trick = _relative(state._trick, me), _relative(state._prev_trick, me)
        holding = _pick(state._holdings, me)
        words = [(at["my holding"] + HAND_SIZE * suit, holding[suit]) for suit in range(4)]
        hot = [(at["current trick cards by relative seat"] + NUM_CARDS * r, trick[r], NUM_CARDS) for r in range(4)]
        hot += [(at["previous trick cards by relative seat"] + NUM_CARDS * r, prev_trick[r], NUM_CARDS)
                for r in range(4)]
        hot += [
            (at["current trick leader"], relative(state._trick_leader), 4),
            (at["designated leader"], jnp.where(over, -1, relative(state._designated)), 4),
            (at["phase"], state._phase, 5),  # none in the over phase
            (at["acting player"], jnp.where(over, -1, relative(state.current_player)), 4),
            (at["led suit"], state._led_suit, 4),
            (at["trump suit"], state._trump_suit, 4),
            (at["previous-led suit"], jnp.where(has_prev, state._prev_led_suit, -1), 4),
            (at["previous winning card rank"], jnp.where(has_prev, state._prev_winning_card % HAND_SIZE, -1),
             HAND_SIZE),
            (at["previous trick leader"], jnp.where(has_prev, relative(state._prev_leader), -1), 4),
            (at["previous trick winner"], jnp.where(has_prev, relative(state._prev_winner), -1), 4),
            (at["previous trick trump suit"], jnp.where(has_prev, state._prev_trump_suit, -1), 4),
        ]
        flags = [(at["passed this lead phase"] + r, (state._passed >> ((me + r) & 3)) & 1) for r in range(4)]
        hand_finished = over & (jnp.max(state._tricks_won, axis=0) >= TRICKS_TO_WIN_HAND)
        dealer = relative(state._dealer)
        counts = jnp.concatenate([  # the entries from "tricks won this hand" to "tie-break hand"
            _relative(state._tricks_won, me), _relative(state._scores, me), (state._trick_number - 1)[None],
            (_seats(dealer) == dealer).astype(jnp.int32),
            (state._hand_number - 1 + hand_finished)[None], (state._hand_number > config.num_hands)[None]])
        runs = [(at["tricks won this hand"], self._counts.rows(counts))]
        if config.full_recall:
            played = _relative(state._played, me)
            words += [(at["cards played this hand by relative seat"] + NUM_CARDS * r + HAND_SIZE * suit,
                       played[r, suit]) for r in range(4) for suit in range(4)]
            runs.append((at["passes this hand"], self._passes.rows(_relative(state._passes_this_hand, me))))
        if config.void_inferences:
            possible = _possible_holdings(state, me, holding)
            words += [(at[name] + HAND_SIZE * suit, possible[r, suit]) for r, name in enumerate(INFERENCE_BLOCKS, 1)
                      for suit in range(4)]
        bits = _packed(self.observation_shape[0], words, hot, flags)
        return _spread(bits, self.observation_shape[0], runs)

    # -- Python positions -----------------------------------------------------------------------------

    def _game_fields(self, py_state: RevolutionState, seed: tuple[int, ...]) -> dict[str, Any]:
        config = self.config
        log = py_state.hand_log
        played = [0, 0, 0, 0]
        if config.full_recall:
            for record in log:
                for seat in range(NUM_PLAYERS):
                    played[seat] |= 1 << record[1 + seat]
        passes = py_state.passes_this_hand if config.full_recall else [0] * NUM_PLAYERS
        scalars = {name: getattr(py_state, name[1:]) for name in (
            "_dealer", "_hand_number", "_trick_number", "_phase", "_designated", "_passed", "_trick_leader",
            "_cards_in_trick", "_led_suit", "_trump_suit", "_best_card", "_best_seat", "_prev_leader",
            "_prev_winner", "_prev_led_suit", "_prev_trump_suit", "_prev_winning_card")}
        scalars["_ace_holder"] = log[0][8] if log else py_state.designated  # trick 1's D (rules.known_ace_holder)
        every_card = (1 << NUM_CARDS) - 1
        limits = _proven_limits(py_state, scalars["_ace_holder"]) if config.void_inferences else [every_card] * 4
        scalars["_next_dealt"] = NUM_CARDS
        rng = np.random.default_rng(seed)
        arrays = dict(
            _scores=py_state.scores,
            _tricks_won=py_state.tricks_won,
            _holdings=[_words(bits) for bits in py_state.holdings],
            _trick=py_state.trick,
            _prev_trick=py_state.prev_trick,
            _passes_this_hand=passes,
            _played=[_words(bits) for bits in played],
            _limits=[_words(bits) for bits in limits],
            _next_holdings=[_words(bits) for bits in _next_deal(py_state, rng)],
            _next_need=[0] * NUM_PLAYERS,
        )
        fields = {name: np.asarray(value, np.int32) for name, value in (scalars | arrays).items()}
        fields["_deal_seed"] = rng.integers(0, 2**32, 2, dtype=np.uint32)
        return fields


# -- Python positions -------------------------------------------------------------------------------------


def _words(bits: int) -> list[int]:
    """A Python 52-bit card mask as four suit words."""
    return [(bits >> (HAND_SIZE * suit)) & FULL_WORD for suit in range(4)]


def _next_deal(py_state: RevolutionState, rng: np.random.Generator) -> list[int]:
    """The holdings (52-bit masks by seat) of the hand after ``py_state``'s (R19): its pending stacked
    deck (section 3.3), else a deck shuffled by ``rng`` (chance the Python state has not drawn yet). Deck
    index ``i`` goes to seat ``(dealer + 1 + i) mod 4`` of the next dealer."""
    stacked = py_state.pending_decks[0] if py_state.pending_decks else None
    deck = rng.permutation(NUM_CARDS) if stacked is None else stacked
    dealer = (py_state.dealer + 1) & 3
    holdings = [0] * NUM_PLAYERS
    for index, card in enumerate(deck):
        holdings[(dealer + 1 + index) & 3] |= 1 << int(card)
    return holdings


def _proven_limits(py_state: RevolutionState, ace_holder: int) -> list[int]:
    """The JAX ``_limits`` of a Python position (52-bit masks by seat): what the tricks of the hand so far, the
    current one included, prove about each seat's holding (``rules.known_holding_limits`` of a view from
    another seat: every seat sees the same tricks), and ``AS`` only with trick 1's ``D`` (R2)."""
    limits = []
    for seat in range(NUM_PLAYERS):
        proven = known_holding_limits(py_state.view((seat + 1) % NUM_PLAYERS)).get(seat, (1 << NUM_CARDS) - 1)
        limits.append(proven if seat == ace_holder else proven & ~(1 << ACE_OF_SPADES))
    return limits


# -- small array helpers: one state, or a batch with the batch axis last ---------------------------------------
#
# A scalar field is ``()`` for one state and ``(n,)`` for a batch-last batch; a ``(4,)`` field is ``(4,)`` or
# ``(4, n)``. Indices along the leading axes are static or selections (``jnp.where``), never gathers, so every
# operation on a batch-last batch is elementwise over a row of ``n`` games.


def _seats(like: Array) -> Array:
    """``0 .. 3`` (seats, or suits) along axis 0, broadcasting against the scalar field ``like``."""
    return column(NUM_PLAYERS, like)


def _pick(rows: Any, index: Array) -> Array:
    """``rows[index]`` for a dynamic ``index`` (a scalar field) as a chain of selections (no gather):
    ``rows`` is an array or a list along its first axis; an index out of range gives ``rows[0]``."""
    out = rows[0]
    for k in range(1, len(rows)):
        out = jnp.where(index == k, rows[k], out)
    return out


def _chosen(rows: list[Array], index: Array) -> Array:
    """``rows[index]`` (integer arrays of one shape; zero for an index out of range) as a sum over the rows:
    XLA computes a reduction once and keeps it, where it would fuse a chain of selections into every
    consumer and compute it again for each entry (e.g. for each of the 52 card entries of a mask)."""
    stacked = jnp.stack(rows)
    return jnp.sum(jnp.where(column(len(rows), index)[(slice(None),) + (None,) * (stacked.ndim - 1 - jnp.ndim(index))]
                             == index, stacked, 0), axis=0)


def _relative(rows: Array, me: Array) -> Array:
    """``rows`` (by absolute seat, axis 0) by relative seat of ``me``: ``out[r] = rows[(me + r) mod 4]``, two
    fixed rotations, each kept or not."""
    for shift in (1, 2):
        rotated = jnp.concatenate([rows[shift:], rows[:shift]])
        rows = jnp.where((me & shift) != 0, rotated, rows)
    return rows


#: the observation blocks of ``void_inferences``, by relative seat 1, 2, 3
INFERENCE_BLOCKS = ("cards the left neighbour may hold", "cards the opposite seat may hold",
                    "cards the right neighbour may hold")


def _packed(size: int, words: list[tuple[int, Array]], hot: list[tuple[int, Array, int]],
            flags: list[tuple[int, Array]]) -> Array:
    """The 0/1 entries of an observation of ``size`` entries as bits of ``ceil(size / 32)`` uint32 words (entry
    ``j`` is bit ``j % 32`` of word ``j // 32``), from ``words``: ``(index, w)``, the 13 bits of ``w`` at entries
    ``index ..``; ``hot``: ``(index, value, n)``, a one-hot block of ``n`` entries (none if ``value`` is outside
    ``0 .. n-1``); ``flags``: ``(index, bit)``. Every index is static, so each piece touches only the one to
    three words its entries lie in."""
    packed = [jnp.zeros(jnp.shape(flags[0][1]), jnp.uint32)] * ((size + 31) // 32)
    for index, word in words:
        word, at, shift = word.astype(jnp.uint32), index // 32, index % 32
        packed[at] = packed[at] | (word << shift)
        if shift + HAND_SIZE > 32:
            packed[at + 1] = packed[at + 1] | (word >> (32 - shift))
    for index, value, n in hot:
        # the entry's bit from the block's first word on; a value outside 0 .. n-1 lies past every word
        offset = jnp.where((value >= 0) & (value < n), value + index % 32, 1 << 30).astype(jnp.uint32)
        for k, at in enumerate(range(index // 32, (index + n - 1) // 32 + 1)):
            packed[at] = packed[at] | (jnp.uint32(1) << (offset - 32 * k))  # a shift by 32 or more (or wrapped) gives 0
    for index, flag in flags:
        packed[index // 32] = packed[index // 32] | (flag.astype(jnp.uint32) << (index % 32))
    return jnp.stack(packed)


def _spread(packed: Array, size: int, runs: list[tuple[int, Array]]) -> Array:
    """The observation: every bit of ``packed`` as a float entry, but the ``runs`` ``(index, floats)`` of
    non-flag entries (whose bits are clear) written over their places: one elementwise pass writes every
    entry once, the runs are small in-place updates (a concatenation would copy the whole observation)."""
    bit = jnp.arange(32, dtype=jnp.uint32).reshape((1, 32) + (1,) * (packed.ndim - 1))
    flags = ((packed[:, None] >> bit) & 1).reshape((-1, *packed.shape[1:]))[:size].astype(jnp.float32)
    for index, values in runs:
        flags = jax.lax.dynamic_update_slice_in_dim(flags, values, index, axis=0)
    return flags


def _or_rows(words: Array) -> Array:
    """The union of four rows (seats, or cards) of suit words."""
    return words[0] | words[1] | words[2] | words[3]


def _any(words: Array) -> Array:
    """Whether suit words ``(4, ...)`` hold any card."""
    return _or_rows(words) != 0


def _card_bits(words: Array) -> Array:
    """Suit words ``(4, ...)`` as bool card planes ``(52, ...)`` indexed by card index."""
    ranks = column(HAND_SIZE, words[0])[None]
    return ((words[:, None] >> ranks) & 1).reshape((NUM_CARDS, *words.shape[1:])).astype(jnp.bool_)


def _suit_words(card: Array) -> Array:
    """A card index (a scalar field; none outside ``0 .. 51``, e.g. -1 or the pass id 52) as 4 suit words: in the
    word of suit ``s`` the card's rank is ``card - 13 s``, a bit only if in ``0 .. 12`` (a shift by a negative
    amount or by 32 or more gives 0). Three operations a word, no division."""
    return (1 << (card - HAND_SIZE * _seats(card))) & FULL_WORD


def _card_words(cards: Array) -> Array:
    """Card indices ``(k, ...)`` (-1: none) as one set of suit words per card, ``(k, 4, ...)``."""
    return jnp.stack([_suit_words(card) for card in cards])


# -- dealing (section 3) ------------------------------------------------------------------------------------------


def _whole_deal(words: Array) -> Array:
    """Hand 1 of ``init`` (A4) from 52 random 32-bit ``words``, as ``[seat, suit]`` words: four cards at a time,
    as the next hand is dealt during play (:func:`_deal_next_cards`). Computed once (``computed_once``): XLA would
    deal again in each consumer of the holdings (the mask and the observation of ``init``), doubling a re-deal."""
    undealt = State()  # nothing of the next hand dealt yet
    for first in range(0, NUM_CARDS, DEALT_PER_STEP):
        undealt = _deal_next_cards(undealt, words[first:first + DEALT_PER_STEP])
    return computed_once(undealt._next_holdings)


def _deck_deal(deck: Array, dealer: Array) -> Array:
    """Section 3.4: deck index ``i`` goes to seat ``(dealer + 1 + i) mod 4``."""
    seat_of_card = jnp.zeros(NUM_CARDS, jnp.int32).at[deck].set((dealer + 1 + CARDS) & 3)
    return _holding_words(seat_of_card)


def _holding_words(seat_of_card: Array) -> Array:
    """The seat of every card index as ``[seat, suit]`` words (written out: a reduction is slow on CPU)."""
    rows = []
    for seat in range(NUM_PLAYERS):
        row = []
        for suit in range(4):
            word = jnp.int32(0)
            for rank in range(HAND_SIZE):
                word = word | jnp.where(seat_of_card[HAND_SIZE * suit + rank] == seat, 1 << rank, 0)
            row.append(word)
        rows.append(jnp.stack(row))
    return jnp.stack(rows)


def _deal_words(seed: Array, step_count: Array) -> Array:
    """``DEALT_PER_STEP`` random 32-bit words for the step that makes decision ``step_count``, from the
    episode's 64-bit deal seed (:func:`~card_envs.jax.core.hashed_words`). The same seed never meets the same
    counter twice in an episode."""
    return hashed_words(seed, step_count * DEALT_PER_STEP + column(DEALT_PER_STEP, step_count))


def _deal_next_cards(state: State, words: Array) -> State:
    """Deal up to ``len(words)`` (4) more cards of the next hand, rank by rank: step ``k`` deals the four cards
    of rank ``k`` (one per suit, so one bit of every suit word). Card ``c`` goes to seat ``s`` with probability
    (cards ``s`` still lacks) / (cards left), drawn as ``floor(word * left / 2**32)`` (Lemire; in 16-bit halves,
    as uint32 has no high product). Drawn without replacement like this, every split into four hands of 13 is
    equally likely, whatever the order of the cards."""
    need, dealt = state._next_need, state._next_dealt
    dealing = dealt < NUM_CARDS
    drawn = []
    for word in words:
        left = jnp.maximum(NUM_CARDS - dealt, 1).astype(jnp.uint32)
        draw = (((word >> 16) * left + (((word & 0xFFFF) * left) >> 16)) >> 16).astype(jnp.int32)
        first = need[0]
        second = first + need[1]
        third = second + need[2]
        seat = (draw >= first).astype(jnp.int32) + (draw >= second) + (draw >= third)
        need = need - ((_seats(seat) == seat) & dealing)
        dealt = dealt + dealing
        drawn.append(seat)
    # the receiving seats by suit (2 bits each) and the rank's bit (none once the deal is complete) in one word,
    # computed once: a stack of them would draw each suit's seat again with the draws before it
    rank_bit = jnp.where(dealing, 1 << (state._next_dealt // NUM_PLAYERS), 0)
    dealt_word = computed_once(sum(seat << (2 * suit) for suit, seat in enumerate(drawn)) | (rank_bit << 8))
    seats, rank_bit = (dealt_word >> (2 * _seats(dealt_word))) & 3, dealt_word >> 8
    gets = _seats(dealt)[:, None] == seats[None]  # [seat, suit]
    held = state._next_holdings | jnp.where(gets, rank_bit, 0)
    return state.replace(_next_need=state._next_need - jnp.sum(gets & dealing, axis=1), _next_holdings=held,
                         _next_dealt=dealt)


def _hand_start(holdings: Array, inferences: bool) -> dict[str, Array]:
    """R19 / A18: every per-hand field of a freshly dealt hand (``holdings``: ``[seat, suit]`` words, with any
    batch axes last; every field gets them); the ``AS`` holder has the opening lead (R2); the deal of the hand
    after it starts. ``inferences`` (``void_inferences``): the limits start with what R2 proves."""
    batch = holdings.shape[2:]
    has_ace = (holdings[:, SPADES] & ACE_BIT) != 0
    ace_holder = jnp.argmax(has_ace, axis=0).astype(jnp.int32)

    def full(shape: tuple[int, ...], value: int) -> Array:
        return jnp.full(shape + batch, value, jnp.int32)

    return dict(
        _holdings=holdings,
        _tricks_won=full((NUM_PLAYERS,), 0),
        _trick_number=full((), 1),
        _phase=full((), OPENING),
        _designated=ace_holder,
        current_player=ace_holder,
        _ace_holder=ace_holder,
        _passed=full((), 0),
        _trick_leader=full((), NO_PLAYER),
        _trick=full((NUM_PLAYERS,), NO_CARD),
        _cards_in_trick=full((), 0),
        _led_suit=full((), NO_SUIT),
        _trump_suit=full((), NO_SUIT),
        _best_card=full((), NO_CARD),
        _best_seat=full((), NO_PLAYER),
        _prev_trick=full((NUM_PLAYERS,), NO_CARD),
        _prev_leader=full((), NO_PLAYER),
        _prev_winner=full((), NO_PLAYER),
        _prev_led_suit=full((), NO_SUIT),
        _prev_trump_suit=full((), NO_SUIT),
        _prev_winning_card=full((), NO_CARD),
        _passes_this_hand=full((NUM_PLAYERS,), 0),
        _played=full((NUM_PLAYERS, 4), 0),
        _limits=_ace_limits(ace_holder) if inferences else full((NUM_PLAYERS, 4), FULL_WORD),
        _next_holdings=full((NUM_PLAYERS, 4), 0),
        _next_need=full((NUM_PLAYERS,), HAND_SIZE),
        _next_dealt=full((), 0),
    )


# -- rewards and inferences ------------------------------------------------------------------------------------


def _terminal_rewards(final: Array, mode: str, hands_started: Array) -> Array:
    """Section 9 (``rules.terminal_rewards``)."""
    if mode == "margin":
        return (final - jnp.sum(final, axis=0) / NUM_PLAYERS) / (4 * hands_started)
    top = final == jnp.max(final, axis=0)
    shared = jnp.sum(top, axis=0)
    return jnp.where(top, (4 - shared) / (3 * shared), -1 / 3).astype(jnp.float32)


def _ace_limits(ace_holder: Array) -> Array:
    """The ``[seat, suit]`` limits of a fresh hand: R2 keeps ``AS`` with trick 1's ``D`` until it is played,
    so no other seat may hold it (``rules.known_ace_holder``; once it is played, nobody holds it)."""
    others = (_seats(ace_holder) != ace_holder)[:, None] & (_seats(ace_holder) == SPADES)[None]
    return jnp.where(others, FULL_WORD & ~ACE_BIT, FULL_WORD)


def _narrowed(limits: Array, is_player: Array, off_led: Array, fixes: Array, suit: Array, led: Array) -> Array:
    """``limits`` (``[seat, suit]`` words) narrowed by what one follow proves (``rules._narrow``, spec 7.3): if
    ``off_led``, the player (``is_player``, by seat) played a card of ``suit`` off the led suit before trump was
    fixed, so it is void in the led suit if the card ``fixes`` trump, else (a case-(c) card, R7 c) holds nothing
    but ``suit``. What the follow allows, by suit, is computed once: each of the 16 words would else decode the
    action again."""
    suits = _seats(suit)
    allowed = jnp.where(fixes, jnp.where(suits == led, 0, FULL_WORD), jnp.where(suits == suit, FULL_WORD, 0))
    allowed = computed_once(jnp.where(off_led, allowed, FULL_WORD))
    return limits & jnp.where(is_player[:, None], allowed[None], FULL_WORD)


def _possible_holdings(state: State, me: Array, my_holding: Array) -> Array:
    """``rules.possible_holdings`` by seat relative to ``me`` (``[seat, suit]`` words; row 0, ``me``'s own, is
    not meaningful): the cards ``me`` has not seen within each seat's limits. Under ``full_recall`` ``me`` has
    seen every card played this hand, so the unseen cards are those the other seats hold."""
    unseen = computed_once(_or_rows(state._holdings) ^ my_holding)  # once: each of the 12 words would pick again
    return _relative(state._limits, me) & unseen
