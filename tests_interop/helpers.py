"""What the interop tests share: the games under test, with 3- and 6-player Battlecards."""

from __future__ import annotations

import card_envs

#: (id, env name, options): every game at its default config, and Battlecards at 3 and 6 players
CASES: list[tuple[str, str, dict]] = [
    *[(name.removesuffix("_v0"), name, {}) for name in card_envs.ENV_NAMES],
    ("battlecards_3p", "battlecards_v0", {"num_players": 3, "max_rounds": 200}),
    ("battlecards_6p", "battlecards_v0", {"num_players": 6, "max_rounds": 200}),
]
IDS = [case[0] for case in CASES]
#: libraries that assume a fixed agent list get knocked-out Battlecards players kept (keep_eliminated)
FIXED_AGENTS = {"keep_eliminated": True}


def fixed_agent_options(name: str, options: dict) -> dict:
    """``options`` plus ``keep_eliminated=True`` where players can leave early (Battlecards, 3+ players)."""
    if name == "battlecards_v0" and options.get("num_players", 2) > 2:
        return {**options, **FIXED_AGENTS}
    return dict(options)
