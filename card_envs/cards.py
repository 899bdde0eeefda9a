"""Card codes shared by every game: parsing, formatting and deck building.

A card is an ``int`` id. The 52 suited cards come first in the *standard order*
``AC 2C ... KC AD ... KD AH ... KH AS ... KS`` (suit-major, suits ``C < D < H < S``,
ranks ``A 2 ... 10 J Q K``), then the two jokers ``X1`` and ``X2``:

=========  ===============================  ==================
id         code                             meaning
=========  ===============================  ==================
0 .. 12    ``AC 2C 3C ... 10C JC QC KC``    clubs, A low
13 .. 25   ``AD ... KD``                    diamonds
26 .. 38   ``AH ... KH``                    hearts
39 .. 51   ``AS ... KS``                    spades
52, 53     ``X1``, ``X2``                   jokers
=========  ===============================  ==================

``rank_value(card)`` is A=1, 2..10, J=11, Q=12, K=13 (0 for jokers); ``suit_index(card)``
is C=0, D=1, H=2, S=3 (-1 for jokers). Games that rank aces high or order cards
differently map these ids to their own indices in their ``encoding.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from card_envs.core.errors import DeckError

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
JOKERS: tuple[str, ...] = ("X1", "X2")

NUM_SUITED = 52
JOKER_IDS: tuple[int, ...] = (52, 53)

CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS) + JOKERS
_ID_OF_CODE: dict[str, int] = {code: i for i, code in enumerate(CODES)}

#: rank value per card id (A=1 .. K=13, jokers 0)
RANK_VALUE: tuple[int, ...] = tuple(i % 13 + 1 for i in range(NUM_SUITED)) + (0, 0)
#: suit index per card id (C=0, D=1, H=2, S=3, jokers -1)
SUIT_INDEX: tuple[int, ...] = tuple(i // 13 for i in range(NUM_SUITED)) + (-1, -1)


def card_id(code: str) -> int:
    """The id of a card code such as ``"AS"``, ``"10H"`` or ``"X1"`` (case-insensitive)."""
    if not isinstance(code, str):
        raise DeckError(f"card code must be a string like 'AS', '10H' or 'X1', got {code!r}")
    key = code.strip().upper()
    if key in _ID_OF_CODE:
        return _ID_OF_CODE[key]
    raise DeckError(
        f"unknown card code {code!r}: expected a rank ({' '.join(RANKS)}) followed by a suit "
        f"({' '.join(SUITS)}), e.g. 'AS' or '10H', or a joker 'X1'/'X2'"
    )


def card_code(card: int) -> str:
    """The code of a card id: ``card_code(0) == "AC"``."""
    return CODES[card]


def card_ids(codes: Iterable[str]) -> list[int]:
    """Ids of a sequence of codes, in order."""
    return [card_id(c) for c in codes]


def card_codes(cards: Iterable[int]) -> list[str]:
    """Codes of a sequence of ids, in order."""
    return [CODES[c] for c in cards]


def rank_value(card: int) -> int:
    """A=1, 2..10, J=11, Q=12, K=13; 0 for a joker."""
    return RANK_VALUE[card]


def suit_index(card: int) -> int:
    """C=0, D=1, H=2, S=3; -1 for a joker."""
    return SUIT_INDEX[card]


def rank_name(value: int) -> str:
    """``rank_name(1) == "A"``, ``rank_name(10) == "10"``."""
    return RANKS[value - 1]


def is_black(card: int) -> bool:
    """True for clubs and spades."""
    return SUIT_INDEX[card] in (0, 3)


def standard_deck(jokers: int = 0) -> list[int]:
    """The 52 cards in standard order, followed by ``jokers`` jokers (0, 1 or 2)."""
    if jokers not in (0, 1, 2):
        raise ValueError(f"jokers must be 0, 1 or 2, got {jokers!r}")
    return list(range(NUM_SUITED)) + list(JOKER_IDS[:jokers])


def parse_deck(codes: Sequence[str], composition: Sequence[int], *, what: str = "deck",
               allow_partial: bool = False) -> list[int]:
    """Check a stacked deck (index 0 = top) against the cards a game uses and return its ids.

    ``composition`` is the multiset of card ids the game's deck holds (usually
    ``standard_deck()``). With ``allow_partial`` the given codes are the top of the deck and
    the rest is filled in ``composition`` order. Errors name what is wrong: an unknown code,
    a card the game does not use, a duplicate, or a wrong length.
    """
    if isinstance(codes, (str, bytes)) or not isinstance(codes, Sequence):
        raise DeckError(f"{what} must be a list of card codes, got {type(codes).__name__}")
    cards = []
    for position, code in enumerate(codes):
        try:
            cards.append(card_id(code))
        except DeckError as err:
            raise DeckError(f"{what}[{position}]: {err}") from None
    wanted = Counter(composition)
    given = Counter(cards)
    extra = given - wanted
    if extra:
        dup = [CODES[c] for c in extra if c in wanted]
        foreign = [CODES[c] for c in extra if c not in wanted]
        parts = []
        if dup:
            parts.append(f"duplicated card(s) {', '.join(sorted(dup))}")
        if foreign:
            parts.append(f"card(s) not in this game's deck {', '.join(sorted(foreign))}")
        raise DeckError(f"{what}: {'; '.join(parts)}")
    if len(cards) != len(composition):
        if not allow_partial:
            missing = sorted((wanted - given).elements())
            shown = ", ".join(CODES[c] for c in missing[:8]) + (" ..." if len(missing) > 8 else "")
            raise DeckError(
                f"{what} must hold exactly {len(composition)} cards, got {len(cards)} (missing: {shown})"
            )
        rest = wanted - given
        for card in composition:
            if rest[card]:
                rest[card] -= 1
                cards.append(card)
    return cards
