"""PettingZoo's own checks on every game and player count, both elimination conventions.

``max_cycles_test`` does not apply: it builds ``module.parallel_env(max_cycles=...)``, and our envs are AEC
only (``is_parallelizable: False``, turn-based card games) whose episode limits are the games' own options
(``max_steps``, ``max_rounds``, ``max_turns``); the default suite tests those truncations."""

from __future__ import annotations

import warnings

import pytest
from pettingzoo.test import api_test, seed_test

import card_envs
from tests_interop.helpers import CASES, IDS, fixed_agent_options

DICT_OBSERVATION_WARNINGS = ("Observation is not a NumPy array",
                             "Observation space for each agent probably should be")


#: both elimination conventions where players can leave early (keep_eliminated exists only there)
API_CASES = [(f"{case}-{convention}", name, options)
             for case, name, options in CASES
             for convention, options in (("dead-agents-leave", options),
                                         ("keep-eliminated", fixed_agent_options(name, options)))
             if convention == "dead-agents-leave" or "keep_eliminated" in options]


@pytest.mark.parametrize(("case", "name", "options"), API_CASES, ids=[c[0] for c in API_CASES])
def test_api_test(case, name, options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message in DICT_OBSERVATION_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        api_test(card_envs.make(name, **options), num_cycles=300)


@pytest.mark.parametrize(("case", "name", "options"), CASES, ids=IDS)
def test_seed_test(case, name, options):
    seed_test(lambda: card_envs.make(name, **options), num_cycles=300)
