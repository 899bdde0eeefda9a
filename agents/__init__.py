"""Baseline players and the match runner. See ``agents.registry`` for every agent by name."""

from agents.base import Agent, Decision, RandomAgent

__all__ = ["Agent", "Decision", "RandomAgent"]
