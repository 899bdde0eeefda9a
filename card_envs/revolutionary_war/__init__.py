"""Revolutionary War: rules engine (``rules``), observation layout (``encoding``), environment (``env``)."""

from card_envs.revolutionary_war.rules import RevolutionaryWar, RevolutionaryWarConfig, RevolutionaryWarState

__all__ = ["RevolutionaryWar", "RevolutionaryWarConfig", "RevolutionaryWarState"]
