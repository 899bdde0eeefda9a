"""Revolutionary War rules engine (spec ``specs/revolutionary_war.md``, rules R0-R23).

Pure rules: no PettingZoo, no observation vectors (see ``encoding.py``). Card ids are those of
:mod:`card_envs.cards`. Rule numbers in comments refer to the spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from card_envs.cards import RANK_VALUE, card_codes, is_black, parse_deck, rank_name, standard_deck
from card_envs.core.config import GameConfig, check_choice, check_range
from card_envs.core.engine import NO_PLAYER, Game, GameState, _is_action_id
from card_envs.core.errors import DeckError, IllegalActionError, StateError

NUM_RANKS = 13
CONCEDE = 13  #: action id of ``concede``; ``play <rank>`` is rank value - 1
NUM_ACTIONS = 14
DECK_SIZE = 52
HAND_SIZE = 5
STACK_SIZE = 3
ACTION_NAMES: tuple[str, ...] = tuple(f"play {rank_name(v)}" for v in range(1, 14)) + ("concede",)
_FULL_DECK = standard_deck()

#: STRENGTH[t][r] = s(r) = (r - t - 1) mod 13 for trump rank value t and card rank value r (R0)
STRENGTH: tuple[tuple[int, ...], ...] = tuple(
    tuple((r - t - 1) % NUM_RANKS if t else 0 for r in range(NUM_RANKS + 1)) for t in range(NUM_RANKS + 1)
)


#: BEATING[t][last] = bit mask (bit r - 1 for rank value r) of the ranks that beat rank ``last`` under trump ``t``
BEATING: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << (r - 1) for r in range(1, NUM_RANKS + 1) if STRENGTH[t][r] >= STRENGTH[t][last])
          for last in range(NUM_RANKS + 1))
    for t in range(NUM_RANKS + 1)
)
_ALL_RANKS = (1 << NUM_RANKS) - 1
#: RANK_BIT[card] = 1 << (rank value - 1): a hand's ranks as a 13-bit mask
RANK_BIT: tuple[int, ...] = tuple(1 << (v - 1) if v else 0 for v in RANK_VALUE)
#: LEGAL_OF_RANKS[mask] = the legal actions when the playable ranks are ``mask``: plays, then concede (R5/R7)
LEGAL_OF_RANKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(a for a in range(NUM_RANKS) if mask >> a & 1) + (CONCEDE,) for mask in range(1 << NUM_RANKS)
)


def strength(rank: int, trump_rank: int) -> int:
    """R0: 0 for the rank just above the trump ... 12 for the trump's own rank."""
    return STRENGTH[trump_rank][rank]


def beats(rank: int, last_rank: int, trump_rank: int) -> bool:
    """R0: a card beats the last card iff its strength is at least as high (equal rank beats)."""
    return STRENGTH[trump_rank][rank] >= STRENGTH[trump_rank][last_rank]


@dataclass(frozen=True)
class RevolutionaryWarConfig(GameConfig):
    """Options of spec section 6."""

    first_dealer: int = 0
    target_score: int | None = None
    dealer_rotation: Literal["alternate", "fixed"] = "alternate"
    reward_mode: Literal["win_loss", "score_diff"] = "win_loss"
    shaping_weight: float = 0.0
    max_steps: int | None = None

    def validate(self) -> None:
        check_choice(self, "first_dealer", (0, 1))
        check_range(self, "target_score", low=1)
        check_range(self, "shaping_weight", low=0.0)
        check_range(self, "max_steps", low=1)


class RevolutionaryWarView(NamedTuple):
    """What one player may know (spec section 7). Seats are absolute; ``player`` is the viewer.

    ========================  ===================================================================
    field                     meaning
    ========================  ===================================================================
    ``player``                the viewer's seat
    ``dealer``                seat of this game's dealer
    ``current_player``        seat to act (-1 once over)
    ``leader``                seat that led the current round (-1 once over)
    ``hand``                  the viewer's own cards, sorted ids
    ``hand_sizes``            cards in each seat's hand
    ``trump_stack``           the public stack, active trump first
    ``played``                this round's played sequence; the leader played index 0, 2, ...
    ``deck_size``             cards left in the draw deck
    ``score_piles``           each seat's captured cards, in capture order (public, A36)
    ``removed``               trump cards removed at the game's end (R14)
    ``last_capturer``         capturer of the previous round (-1 before round 1 ends)
    ``game_number``           1-based game in the match
    ``totals``                match totals from finished games
    ``target_score``          match target (None: single game)
    ``over``                  the episode has ended
    ========================  ===================================================================
    """

    player: int
    dealer: int
    current_player: int
    leader: int
    hand: tuple[int, ...]
    hand_sizes: tuple[int, int]
    trump_stack: tuple[int, ...]
    played: tuple[int, ...]
    deck_size: int
    score_piles: tuple[tuple[int, ...], tuple[int, ...]]
    removed: tuple[int, ...]
    last_capturer: int
    game_number: int
    totals: tuple[int, int]
    target_score: int | None
    over: bool


class RevolutionaryWarState(GameState):
    """A position: one game, or a game inside a match (R23)."""

    fields = (
        "dealer", "hands", "deck", "trump_stack", "played", "leader", "current_player",
        "score_piles", "removed", "last_capturer", "game_number", "totals", "steps",
        "pending_decks", "terminated", "truncated", "winner", "rewards", "cumulative", "history",
    )

    game: RevolutionaryWar
    dealer: int
    hands: list[list[int]]
    deck: list[int]
    trump_stack: list[int]
    played: list[int]
    leader: int
    score_piles: list[list[int]]
    removed: list[int]
    last_capturer: int
    game_number: int
    totals: list[int]
    steps: int
    pending_decks: list[list[int] | None]
    winner: int

    # -- the deal (section 3) -------------------------------------------------------------------

    def _deal(self, cards: Sequence[int]) -> None:
        non_dealer = 1 - self.dealer
        self.hands = [[], []]
        self.hands[non_dealer] = list(cards[0:10:2])  # A2: alternately, non-dealer first
        self.hands[self.dealer] = list(cards[1:10:2])
        self.trump_stack = list(cards[10:13])  # A3: index 10 is the active trump
        self.deck = list(cards[13:])
        self.played = []
        self.score_piles = [[], []]
        self.removed = []
        self.last_capturer = NO_PLAYER
        blacks = sum(is_black(c) for c in self.trump_stack)
        self.leader = self.dealer if blacks >= 2 else non_dealer  # R4
        self.current_player = self.leader

    def _next_deck(self) -> list[int]:
        deck = self.pending_decks.pop(0) if self.pending_decks else None
        return deck if deck is not None else self.rng.permutation(DECK_SIZE).tolist()  # A30

    # -- queries ---------------------------------------------------------------------------------

    @property
    def trump_rank(self) -> int:
        """Rank value of the active trump (0 once the stack is empty)."""
        return RANK_VALUE[self.trump_stack[0]] if self.trump_stack else 0

    def legal_actions(self) -> list[int]:
        if self.terminated or self.truncated:
            return []
        return list(LEGAL_OF_RANKS[self._playable_ranks()])  # R5/R7: concede is always legal

    def _playable_ranks(self) -> int:
        """Bit mask (bit r - 1) of the ranks ``current_player`` may play (R5: any; R7: beating the last card)."""
        held = 0
        for card in self.hands[self.current_player]:
            held |= RANK_BIT[card]
        played = self.played
        if played:  # R7: beat the last card played
            trump = RANK_VALUE[self.trump_stack[0]] if self.trump_stack else 0
            return held & BEATING[trump][RANK_VALUE[played[-1]]]
        return held

    def legal_mask(self) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, np.int8)
        if self.terminated or self.truncated:
            return mask
        mask[CONCEDE] = 1
        if self.played:
            row = STRENGTH[self.trump_rank]
            floor = row[RANK_VALUE[self.played[-1]]]
            for c in self.hands[self.current_player]:
                r = RANK_VALUE[c]
                if row[r] >= floor:
                    mask[r - 1] = 1
        else:
            for c in self.hands[self.current_player]:
                mask[RANK_VALUE[c] - 1] = 1
        return mask

    def rules_winners(self) -> list[int]:
        """R16/R23: the game's (or match's) winner; nobody after a truncation."""
        return [self.winner] if self.terminated else []

    def scores(self) -> list[int]:
        """R15: cards in each score pile (this game)."""
        return [len(self.score_piles[0]), len(self.score_piles[1])]

    # -- transitions -----------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        """As :meth:`GameState.apply` (same checks, errors and bookkeeping), with a bit-mask legality test."""
        if self.terminated or self.truncated:
            raise StateError(f"{self.game.name}: the episode is over; reset before acting")
        if type(action) is not int:
            if not _is_action_id(action):
                raise IllegalActionError(self._illegal_message(action, self.legal_actions()))
            action = int(action)
        if action != CONCEDE and not (0 <= action < CONCEDE and self._playable_ranks() >> action & 1):
            raise IllegalActionError(self._illegal_message(action, self.legal_actions()))
        rewards = self.rewards = [0.0, 0.0]
        self._apply(action)
        self.history.append(action)
        if rewards[0] or rewards[1]:
            cumulative = self.cumulative
            cumulative[0] += rewards[0]
            cumulative[1] += rewards[1]

    def clone(self) -> RevolutionaryWarState:
        """As :meth:`GameState.clone`; the random generator is copied only when the copy first uses it."""
        twin = RevolutionaryWarState.__new__(RevolutionaryWarState)
        twin.game = self.game
        self._copy_rng_to(twin)
        twin.dealer = self.dealer
        twin.hands = [self.hands[0][:], self.hands[1][:]]
        twin.deck = self.deck[:]
        twin.trump_stack = self.trump_stack[:]
        twin.played = self.played[:]
        twin.leader = self.leader
        twin.current_player = self.current_player
        twin.score_piles = [self.score_piles[0][:], self.score_piles[1][:]]
        twin.removed = self.removed[:]
        twin.last_capturer = self.last_capturer
        twin.game_number = self.game_number
        twin.totals = self.totals[:]
        twin.steps = self.steps
        twin.pending_decks = [d if d is None else d[:] for d in self.pending_decks]
        twin.terminated = self.terminated
        twin.truncated = self.truncated
        twin.winner = self.winner
        twin.rewards = self.rewards[:]
        twin.cumulative = self.cumulative[:]
        twin.history = self.history[:]
        return twin

    def _apply(self, action: int) -> None:
        player = self.current_player
        if action == CONCEDE:
            self._end_round(capturer=1 - player)
        else:
            self._play(player, action + 1)
            self.current_player = 1 - player  # R8
        self.steps += 1
        limit = self.game.config.max_steps
        if limit is not None and self.steps >= limit and not self.terminated:
            self.truncated = True  # R22: no terminal reward
            self.current_player = NO_PLAYER

    def _play(self, player: int, rank: int) -> None:
        hand = self.hands[player]
        card = min(c for c in hand if RANK_VALUE[c] == rank)  # A34: lowest suit (C<D<H<S) has lowest id
        hand.remove(card)
        self.played.append(card)
        if self.deck:  # R6 / A19
            hand.append(self.deck.pop(0))

    def _end_round(self, capturer: int) -> None:
        captured = self.played + [self.trump_stack.pop(0)]  # R9
        self.score_piles[capturer].extend(captured)
        self._shape(capturer, len(captured))
        self.played = []
        self.last_capturer = capturer
        if self.deck:  # R10: the new card joins the BOTTOM of the stack
            self.trump_stack.append(self.deck.pop(0))
        if not self.deck and (not self.trump_stack or not (self.hands[0] or self.hands[1])):  # R11
            self._end_game()
        else:
            self.leader = self.current_player = capturer  # R12

    def _end_game(self) -> None:
        if not self.trump_stack:  # R13: leftover hands are scored by their holders
            leftovers = [len(h) for h in self.hands]
            for player in (0, 1):
                self.score_piles[player].extend(self.hands[player])
                self.hands[player] = []
            self._shape(0, leftovers[0] - leftovers[1])
        else:  # R14: both hands are empty; the remaining trumps count for nobody
            self.removed.extend(self.trump_stack)
            self.trump_stack = []
        scores = self.scores()
        config = self.game.config
        if config.reward_mode == "score_diff":
            self._pay(0, (scores[0] - scores[1]) / DECK_SIZE)
        game_winner = _winner(scores, self.last_capturer)  # R16
        if config.target_score is None:
            self._finish(game_winner)
            return
        self.totals = [self.totals[0] + scores[0], self.totals[1] + scores[1]]  # R23
        reached = [t >= config.target_score for t in self.totals]
        if any(reached):
            if all(reached):
                self._finish(_winner(self.totals, self.last_capturer))  # A32
            else:
                self._finish(reached.index(True))  # A33
            return
        if config.dealer_rotation == "alternate":  # A29
            self.dealer = 1 - self.dealer
        self.game_number += 1
        self._deal(self._next_deck())  # A31, A46

    def _finish(self, winner: int) -> None:
        self.winner = winner
        self.terminated = True
        self.current_player = NO_PLAYER
        if self.game.config.reward_mode == "win_loss":
            self._pay(winner, 1.0)

    def _shape(self, player: int, cards: int) -> None:
        weight = self.game.config.shaping_weight
        if weight and cards:
            self._pay(player, weight * cards / DECK_SIZE)

    def _pay(self, player: int, amount: float) -> None:
        """Zero-sum: ``player`` gets ``amount``, the opponent ``-amount``."""
        self.rewards[player] += amount
        self.rewards[1 - player] -= amount

    # -- views and text --------------------------------------------------------------------------

    def view(self, player: int) -> RevolutionaryWarView:
        """Section 7: everything public, plus ``player``'s own hand."""
        over = self.terminated or self.truncated
        return RevolutionaryWarView(
            player=player,
            dealer=self.dealer,
            current_player=self.current_player,
            leader=NO_PLAYER if over else self.leader,
            hand=tuple(sorted(self.hands[player])),
            hand_sizes=(len(self.hands[0]), len(self.hands[1])),
            trump_stack=tuple(self.trump_stack),
            played=tuple(self.played),
            deck_size=len(self.deck),
            score_piles=(tuple(self.score_piles[0]), tuple(self.score_piles[1])),
            removed=tuple(self.removed),
            last_capturer=self.last_capturer,
            game_number=self.game_number,
            totals=(self.totals[0], self.totals[1]),
            target_score=self.game.config.target_score,
            over=over,
        )

    def card_locations(self) -> dict[str, list[int]]:
        return {
            "hand_0": list(self.hands[0]), "hand_1": list(self.hands[1]), "deck": list(self.deck),
            "trump_stack": list(self.trump_stack), "played": list(self.played),
            "score_pile_0": list(self.score_piles[0]), "score_pile_1": list(self.score_piles[1]),
            "removed": list(self.removed),
        }

    def sample_hidden(self, player: int, rng: np.random.Generator) -> RevolutionaryWarState:
        """Redeal the opponent's hand and the draw deck from their union (section 7: hidden)."""
        twin = self.clone()
        opponent = 1 - player
        hidden = twin.hands[opponent] + twin.deck
        order = rng.permutation(len(hidden)).tolist()
        cut = len(twin.hands[opponent])
        twin.hands[opponent] = [hidden[i] for i in order[:cut]]
        twin.deck = [hidden[i] for i in order[cut:]]
        twin.pending_decks = []  # later games of a match are unknown: shuffled
        twin._reseed_from(rng)  # future games' shuffles are hidden too
        return twin

    def render(self) -> str:
        def cards(cs: Sequence[int]) -> str:
            return " ".join(card_codes(cs)) or "-"

        config = self.game.config
        lines = [f"Revolutionary War  game {self.game_number}  dealer player_{self.dealer}  "
                 f"step {self.steps}"]
        if config.target_score is not None:
            lines.append(f"match totals {self.totals[0]}-{self.totals[1]} (target {config.target_score})")
        trump = f"{rank_name(self.trump_rank)}" if self.trump_stack else "-"
        lines.append(f"trump stack (top first): {cards(self.trump_stack)}   active trump rank: {trump}")
        lines.append(f"draw deck: {len(self.deck)} cards   removed: {cards(self.removed)}")
        for p in (0, 1):
            mark = ">" if p == self.current_player else " "
            lines.append(f"{mark} player_{p}: hand [{cards(sorted(self.hands[p]))}]  "
                         f"score pile {len(self.score_piles[p])}")
        leader = f"player_{self.leader}" if self.current_player != NO_PLAYER else "-"
        lines.append(f"round led by {leader}: played {cards(self.played)}")
        if self.terminated:
            lines.append(f"game over: player_{self.winner} wins ({self.scores()[0]}-{self.scores()[1]})")
        elif self.truncated:
            lines.append("episode truncated at the step limit")
        return "\n".join(lines)


def _winner(scores: Sequence[int], last_capturer: int) -> int:
    """R16 / R23: the higher score wins; a tie goes to the last round's capturer."""
    if scores[0] != scores[1]:
        return 0 if scores[0] > scores[1] else 1
    return last_capturer


class RevolutionaryWar(Game):
    """Revolutionary War for two players; see the environment docstring for the tables."""

    name = "revolutionary_war_v0"
    config_class = RevolutionaryWarConfig
    state_class = RevolutionaryWarState
    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    reset_options = ("deck", "decks")
    config: RevolutionaryWarConfig

    @property
    def num_players(self) -> int:
        return 2

    def max_decisions(self) -> int | None:
        """R19: 52 decisions a game; a match to T lasts at most ceil(T/25) games (R23)."""
        games = 1 if self.config.target_score is None else -(-self.config.target_score // 25)
        bound = 52 * games
        return bound if self.config.max_steps is None else min(bound, self.config.max_steps)

    def return_bounds(self) -> tuple[float, float]:
        """Every seat's return lies in ``[-b, b]``: ``win_loss`` pays 1 once, ``score_diff`` at most 1 a game,
        and shaping at most ``w`` a game (52 cards captured), over at most ``ceil(T/25)`` games (R23)."""
        config = self.config
        games = 1 if config.target_score is None else -(-config.target_score // 25)
        result = 1.0 if config.reward_mode == "win_loss" else float(games)
        bound = result + games * config.shaping_weight
        return -bound, bound

    @classmethod
    def variant_configs(cls) -> list[dict[str, Any]]:
        return [
            {},
            {"first_dealer": 1, "reward_mode": "score_diff", "shaping_weight": 0.5},
            {"target_score": 60, "dealer_rotation": "alternate"},
            {"target_score": 80, "dealer_rotation": "fixed", "first_dealer": 1, "reward_mode": "score_diff"},
            {"max_steps": 20, "shaping_weight": 1.0},
        ]

    def _new_state(self, rng: np.random.Generator, options: Mapping[str, Any] | None = None) -> GameState:
        decks = _stacked_decks(options)
        state = RevolutionaryWarState.__new__(RevolutionaryWarState)
        state.game = self
        state.rng = rng
        state.pending_decks = decks
        state.dealer = self.config.first_dealer
        state.game_number = 1
        state.totals = [0, 0]
        state.steps = 0
        state.terminated = state.truncated = False
        state.winner = NO_PLAYER
        state.rewards = [0.0, 0.0]
        state.cumulative = [0.0, 0.0]
        state.history = []
        state._deal(state._next_deck())
        return state


def _stacked_decks(options: Mapping[str, Any] | None) -> list[list[int] | None]:
    """Reset options ``deck`` (game 1) or ``decks`` (one per game); ``Game.new_state`` rejects other keys."""
    options = options or {}
    if options.get("deck") is not None and options.get("decks") is not None:
        raise DeckError("give reset option 'deck' (game 1) or 'decks' (one per game), not both")
    if options.get("deck") is not None:
        return [parse_deck(options["deck"], _FULL_DECK, what="deck")]
    decks = options.get("decks")
    if decks is None:
        return []
    if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence):
        raise DeckError(f"reset option 'decks' must be a list of decks, got {type(decks).__name__}")
    return [None if d is None else parse_deck(d, _FULL_DECK, what=f"decks[{i}]") for i, d in enumerate(decks)]
