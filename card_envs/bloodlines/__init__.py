"""Bloodlines: rules engine (``rules``), observation layout (``encoding``), environment (``env``)."""

from card_envs.bloodlines.rules import Bloodlines, BloodlinesConfig, BloodlinesState, BloodlinesView

__all__ = ["Bloodlines", "BloodlinesConfig", "BloodlinesState", "BloodlinesView"]
