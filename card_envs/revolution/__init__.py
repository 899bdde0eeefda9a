"""Revolution: rules engine (``rules``), observation layout (``encoding``), environment (``env``)."""

from card_envs.revolution.rules import Revolution, RevolutionConfig, RevolutionState, RevolutionView

__all__ = ["Revolution", "RevolutionConfig", "RevolutionState", "RevolutionView"]
