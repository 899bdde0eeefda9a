"""TorchRL's ``PettingZooWrapper`` (AEC, ``use_mask=True``) on every game: masked random rollouts through whole
episodes. Battlecards with 3+ players uses ``keep_eliminated=True`` (the wrapper needs a fixed agent list)."""

from __future__ import annotations

import pytest
import torch
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import check_env_specs

import card_envs
from tests_interop.helpers import CASES, IDS, fixed_agent_options


@pytest.mark.parametrize(("case", "name", "options"), CASES, ids=IDS)
def test_rollout_respects_masks_and_reaches_the_end(case, name, options):
    options = fixed_agent_options(name, options)
    env = PettingZooWrapper(card_envs.make(name, **options), use_mask=True, seed=0)
    check_env_specs(env, seed=0)
    torch.manual_seed(0)
    rollout = env.rollout(max_steps=20_000, break_when_any_done=True)
    last = rollout[-1]["next"]
    assert bool(last["done"].all())
    state = env._env.unwrapped.state_
    assert state.is_over  # the whole game was played, not cut at a knock-out
    for group in env.group_map:
        actions = rollout[group]["action"]
        masks = rollout[group]["action_mask"]
        acted = rollout[group]["mask"].squeeze(-1)
        taken = actions.argmax(-1) if actions.dim() == masks.dim() else actions
        assert bool(masks[acted].gather(-1, taken[acted].long().unsqueeze(-1)).all())  # only legal actions
