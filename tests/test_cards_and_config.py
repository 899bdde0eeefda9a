"""card_envs.cards (codes, decks) and card_envs.core.config (option validation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from card_envs import cards
from card_envs.core.config import GameConfig, check_choice, check_range
from card_envs.core.errors import ConfigError, DeckError


def test_standard_order_and_codes():
    assert cards.CODES[:13] == ("AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC")
    assert cards.card_id("AS") == 39 and cards.card_id("10h") == 35 and cards.card_id(" X2 ") == 53
    assert [cards.card_code(c) for c in cards.standard_deck(jokers=2)][-3:] == ["KS", "X1", "X2"]
    assert cards.rank_value(cards.card_id("QD")) == 12 and cards.suit_index(cards.card_id("QD")) == 1
    assert cards.is_black(cards.card_id("2C")) and not cards.is_black(cards.card_id("2H"))


@pytest.mark.parametrize("code", ["1S", "AX", "11H", "", "X3", 5])
def test_unknown_codes_are_named(code):
    with pytest.raises(DeckError, match="card code"):
        cards.card_id(code)


def test_parse_deck_errors_name_the_problem():
    full = cards.standard_deck()
    codes = list(cards.CODES[:52])
    assert cards.parse_deck(codes, full) == full
    with pytest.raises(DeckError, match="exactly 52 cards, got 51"):
        cards.parse_deck(codes[:-1], full)
    with pytest.raises(DeckError, match="duplicated card.*AC"):
        cards.parse_deck(codes[:-1] + ["AC"], full)
    with pytest.raises(DeckError, match=r"deck\[3\].*unknown card code"):
        cards.parse_deck(codes[:3] + ["ZZ"] + codes[4:], full)
    with pytest.raises(DeckError, match="not in this game's deck X1"):
        cards.parse_deck(codes + ["X1"], full)
    with pytest.raises(DeckError, match="list of card codes"):
        cards.parse_deck("AS 2S", full)


def test_partial_deck_is_filled_in_standard_order():
    full = cards.standard_deck()
    deck = cards.parse_deck(["KS", "AC"], full, allow_partial=True)
    assert deck[:4] == [cards.card_id("KS"), cards.card_id("AC"), cards.card_id("2C"), cards.card_id("3C")]
    assert sorted(deck) == full


@dataclass(frozen=True)
class _Options(GameConfig):
    players: int = 2
    mode: Literal["a", "b"] = "a"
    weight: float = 0.0
    limit: int | None = None
    flag: bool = False

    def validate(self) -> None:
        check_range(self, "players", 2, 6)
        check_range(self, "limit", low=1)
        check_choice(self, "mode", ("a", "b"))


def test_config_defaults_and_valid_values():
    assert _Options.from_options() == _Options()
    assert _Options.from_options(players=6, mode="b", weight=1, limit=None, flag=True).weight == 1


@pytest.mark.parametrize("options,message", [
    ({"player": 3}, "unknown option.*'player'.*valid options: players"),
    ({"players": 7}, "'players' must be between 2 and 6, got 7"),
    ({"players": "3"}, "'players' must be int"),
    ({"players": True}, "'players' must be int"),
    ({"mode": "c"}, "'mode' must be 'a' or 'b'"),
    ({"weight": "x"}, "'weight' must be float"),
    ({"limit": 0}, "'limit' must be >= 1"),
    ({"flag": 1}, "'flag' must be bool"),
])
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        _Options.from_options(**options)
