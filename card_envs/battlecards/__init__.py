"""Battlecards: rules engine (``rules``), observation layout (``encoding``), environment (``env``)."""

from card_envs.battlecards.rules import Battlecards, BattlecardsConfig, BattlecardsState, BattlecardsView

__all__ = ["Battlecards", "BattlecardsConfig", "BattlecardsState", "BattlecardsView"]
