"""Gymnasium ids of the single-agent view, registered on ``import card_envs``.

=================================  ======================  ============================================
id                                 game                    kwargs of ``gymnasium.make(id, ...)``
=================================  ======================  ============================================
``card_envs/RevolutionaryWar-v0``  ``revolutionary_war_v0``  ``opponents=...``, any game option
``card_envs/Revolution-v0``        ``revolution_v0``         (``num_players=3``, ``max_rounds=200``, ...),
``card_envs/Battlecards-v0``       ``battlecards_v0``        ``seat``, ``illegal_action``, ``draw_reward``,
``card_envs/Bloodlines-v0``        ``bloodlines_v0``         ``baseline``, ``render_mode``: everything
                                                             :class:`~card_envs.core.single_agent.SingleAgentEnv`
                                                             takes
=================================  ======================  ============================================

>>> import gymnasium, card_envs
>>> from agents.players.registry import make_agent                   # opponents are objects you build
>>> env = gymnasium.make("card_envs/Battlecards-v0", num_players=3,
...                      opponents=[make_agent("battlecards_v0", "heuristic:counter")])

Opponents are passed as objects (an ``agents.players.base.Agent`` or any callable ``(observation, mask) ->
action``), never as names: ``card_envs`` cannot import ``agents`` (layers point down), and an id
works without either -- every other seat then plays uniformly random legal actions
(:class:`~card_envs.core.single_agent.RandomPolicy`).

The ids default to ``illegal_action="lose"`` (as PettingZoo's ``env()``: an illegal action ends the
episode with reward -1), so Gymnasium's and Stable-Baselines3's ``check_env``, which step with unmasked
random actions, pass as shipped; a masked learner (``action_masks()``) never meets it. Pass
``illegal_action="raise"`` to have a bug in masking raise instead.

The entry points are strings, so registering imports neither the games nor any RL library.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

#: gymnasium id -> versioned environment name
GYM_IDS: dict[str, str] = {
    "card_envs/RevolutionaryWar-v0": "revolutionary_war_v0",
    "card_envs/Revolution-v0": "revolution_v0",
    "card_envs/Battlecards-v0": "battlecards_v0",
    "card_envs/Bloodlines-v0": "bloodlines_v0",
}


def register_gym_ids() -> None:
    """Register every id (idempotent: an id already registered is left as it is)."""
    for gym_id, name in GYM_IDS.items():
        if gym_id not in registry:
            register(id=gym_id, entry_point="card_envs.core.single_agent:SingleAgentEnv",
                     kwargs={"game": name, "illegal_action": "lose"})


__all__ = ["GYM_IDS", "register_gym_ids"]
