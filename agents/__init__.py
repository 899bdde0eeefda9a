"""Players, and the tournaments that compare them.

===================  =============================================================================================
``agents.players``   the agent interface (:class:`Agent`, :class:`Decision`), random, the rule-based players of
                     each game, ISMCTS, trained models (``checkpoint:``, ``zoo:``) and the registry that names them
                     all (:func:`make_agent`, ``agents.players.registry``)
``agents.tournaments``  matches, the evaluation harness, its statistics and reports, the ladder, the local and Ray
                     backends, saved games
``agents.play``      the web and terminal tables (play against agents, watch, replay)
``agents.files``     atomic writes, shared by all of the above
===================  =============================================================================================

Each sub-package imports only the ones below it (``play`` -> ``tournaments`` -> ``players`` -> ``files``); the
contracts in ``pyproject.toml`` (import-linter) hold it in CI. ``agents.match``, ``agents.evaluate``,
``agents.ladder`` and ``agents.zoo`` are the old names of moved modules, kept for ``python -m`` and old imports.
"""

from agents.players.base import Agent, Decision, RandomAgent
from agents.players.registry import agent_names, make_agent

__all__ = ["Agent", "Decision", "RandomAgent", "agent_names", "make_agent"]
