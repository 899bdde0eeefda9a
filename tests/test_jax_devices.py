"""``card_envs.jax.core.across_devices``: a batch split over several devices is played exactly as its parts.

JAX fixes its devices at its first computation, and the test processes run with one CPU device, so the check
runs in a fresh interpreter with ``JAX_NUM_CPU_DEVICES=2`` (the way a user gets one device per core).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent("""
    import jax, jax.numpy as jnp, numpy as np
    from card_envs.jax.core import (across_devices, make, random_legal_actions, reset_finished,
                                    split_over_devices)

    assert len(jax.devices()) == 2, jax.devices()

    def player(env, last, part):
        step = env.step_batch_last if last else jax.vmap(env.step)

        def play(states, key, steps):
            def body(_, carry):
                states, key, decisions = carry
                key, act, deal = jax.random.split(key, 3)
                decisions += (~(states.terminated | states.truncated)).sum()
                actions = random_legal_actions(act, states.legal_action_mask, action_axis=0 if last else -1)
                states = step(states, actions, None if not env.step_uses_key else jax.random.split(key, part))
                states = reset_finished(env, states, deal, 2, batch_axis=-1 if last else 0)
                return states, key, decisions
            states, _, decisions = jax.lax.fori_loop(0, steps, body, (states, key, jnp.int32(0)))
            return states, {"decisions": decisions, "rewards": states.rewards.sum()}
        return play

    name, last = "revolutionary_war_v0", LAST  # LAST: the batch axis, set by the test
    env, batch, axis = make(name), 8, -1 if last else 0
    init = jax.jit(env.init_batch_last if last else jax.vmap(env.init))  # eagerly: seconds of dispatches
    states = init(jax.random.split(jax.random.PRNGKey(3), batch))
    key = jax.random.PRNGKey(4)
    whole, totals = across_devices(player(env, last, batch // 2), batch_axis=axis)(
        split_over_devices(states, batch_axis=axis), key, 60)
    play = jax.jit(player(env, last, batch // 2))
    halves = [play(jax.tree.map(lambda leaf: jnp.split(leaf, 2, axis=axis)[i], states),
                   jax.random.fold_in(key, i), 60) for i in range(2)]
    joined = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=axis), halves[0][0], halves[1][0])
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(joined), strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b)), (name, last)
    assert int(totals["decisions"]) == sum(int(h[1]["decisions"]) for h in halves) > 0, (name, last)
    assert float(totals["rewards"]) == sum(float(h[1]["rewards"]) for h in halves), (name, last)
    assert {d.id for d in whole.observation.devices()} == {0, 1}, (name, last)  # each half stayed on its device

    try:
        across_devices(player(make("revolutionary_war_v0"), True, 3), batch_axis=-1)(
            jax.jit(make("revolutionary_war_v0").init_batch_last)(jax.random.split(jax.random.PRNGKey(0), 7)),
            jax.random.PRNGKey(0), 1)
    except ValueError as error:
        assert "7 games does not split evenly over 2 devices" in str(error), error
    else:
        raise AssertionError("an uneven batch was accepted")
    print("ok")
""")


#: the batch axis last (the benchmark's and the trainer's layout) in the default run; first opt-in (-m slow: both
#: in one process took 19 s of the default run, about half each)
@pytest.mark.parametrize("last", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["batch-last", "batch-first"])
def test_a_batch_split_over_two_devices_plays_as_its_halves_alone(last):
    env = {**os.environ, "JAX_NUM_CPU_DEVICES": "2"}
    done = subprocess.run([sys.executable, "-c", f"LAST = {last}\n" + CHECK], env=env, capture_output=True, text=True,
                          timeout=600,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
