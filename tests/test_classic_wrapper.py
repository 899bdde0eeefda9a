"""``env()`` must behave exactly like PettingZoo's stock classic-env wrapper stack.

We replace ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw, -1)))``
by one faster layer (``card_envs.core.aec.ClassicWrapper``). These tests drive both with the same
calls -- legal moves, illegal moves, out-of-range actions, ``None`` actions, calls before reset and
after the end -- and compare every observable outcome.
"""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import card_envs
from card_envs.core.aec import ClassicWrapper
from tests.helpers import env_module

NAMES = list(card_envs.ENV_NAMES)


def stock_env(name, **config):
    env = env_module(name).raw_env(**config)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def outcome(env, call, *args):
    """Run ``call`` and record what it returned or raised, the warnings, and the env's visible state."""
    EnvLogger.flush()
    try:
        result = getattr(env, call)(*args)
        raised = None
    except Exception as err:  # noqa: BLE001 - the kind and text of the error are what we compare
        result, raised = None, (type(err).__name__, str(err))
    warned = list(EnvLogger.mqueue)
    return (_freeze(result), raised, warned, _visible(env))


def _visible(env):
    try:
        agents = list(env.agents)
    except AttributeError as err:
        return ("no state", str(err))
    return (
        env.agent_selection, tuple(agents),
        _freeze(env.rewards), _freeze(env._cumulative_rewards),
        _freeze(env.terminations), _freeze(env.truncations), _freeze(env.infos),
        tuple(_freeze(env.observe(a)) for a in agents),
    )


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (float, np.floating)):
        return round(float(value), 12)
    return value


def test_env_is_the_single_layer_wrapper():
    env = card_envs.make(NAMES[0])
    assert isinstance(env, ClassicWrapper)
    assert isinstance(env, wrappers.OrderEnforcingWrapper)  # agent_iter's order checks accept it
    assert str(env) == str(stock_env(NAMES[0]))


@pytest.mark.parametrize("name", NAMES)
def test_calls_before_reset_fail_the_same_way(name):
    ours, stock = card_envs.make(name), stock_env(name)
    for call, args in (("step", (0,)), ("observe", ("player_0",)), ("last", ()), ("render", ())):
        assert outcome(ours, call, *args)[:3] == outcome(stock, call, *args)[:3], call
    for attribute in ("agents", "rewards", "agent_selection", "terminations", "infos"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(ours, attribute)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(12))
def test_same_behaviour_as_stock_wrappers(name, seed):
    """Random play peppered with illegal, out-of-range and None actions; every outcome must match."""
    rng = np.random.default_rng(seed)
    ours, stock = card_envs.make(name), stock_env(name)
    for env in (ours, stock):
        env.reset(seed=seed)
    num_actions = ours.action_space("player_0").n
    for _ in range(400):
        if not stock.agents:
            assert outcome(ours, "step", None) == outcome(stock, "step", None)  # step after the end
            break
        obs = stock.observe(stock.agent_selection)
        dead = stock.terminations[stock.agent_selection] or stock.truncations[stock.agent_selection]
        roll = rng.random()
        if dead:
            action = None if roll < 0.9 else 0
        elif roll < 0.04:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"] == 0)))  # illegal move
        elif roll < 0.06:
            action = [num_actions, -1, None, np.int64(num_actions)][int(rng.integers(4))]  # out of range
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = rng.choice(legal)
            action = int(action) if roll < 0.5 else np.int64(action)
        assert outcome(ours, "step", action) == outcome(stock, "step", action)
        assert outcome(ours, "last", ) == outcome(stock, "last")
