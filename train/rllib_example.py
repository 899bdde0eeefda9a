"""Train any game with RLlib: multi-agent PPO, one policy shared by every seat, action masking.

    card-envs train.rllib_example --game battlecards_v0 --iterations 20                # local Ray
    card-envs train.rllib_example --game revolution_v0 --address auto --env-runners 16  # a running cluster
    card-envs train.rllib_example --game bloodlines_v0 --address ray://head:10001        # Ray client

Needs ``pip install card-envs[interop]`` (``ray[rllib]==2.60.0`` and torch; ``bash .ci/run-interop`` uses it).

What it does, top to bottom:

1. ``MaskedPettingZooEnv`` wraps our PettingZoo AEC env (``card_envs.make(game, **options)``) in RLlib's
   ``PettingZooEnv`` and renames each observation to what RLlib's action-masking module reads:
   ``{"observations": <our encoding>, "action_mask": <float mask>}``.
2. Every agent maps to one module, ``"shared"``: RLlib's ``ActionMaskingTorchRLModule`` (PPO's default
   network whose logits of illegal actions are pushed to -inf), so self-play needs no opponent bookkeeping.
3. Rollouts run in ``--env-runners`` remote env runners (Ray actors), learning in the driver; each
   iteration prints the episodes sampled, their mean length, and the shared policy's loss.
4. At the end, the shared policy (greedy, masked) plays ``--eval-games`` games against uniformly random
   players in every other seat, seats rotated, and its win rate is printed.

Ray: without ``--address`` a local Ray is started on this machine (``127.0.0.1``, ``--num-cpus`` CPUs);
with ``--address auto`` the script joins the cluster this machine belongs to (``ray start --head`` on the
head node, ``ray start --address <head>:6379`` on the others), and ``ray://<head>:10001`` connects through
Ray Client from outside. Nothing else changes: env runners are placed wherever the cluster has CPUs, and
every node needs this package installed (``pip install card-envs[interop]``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

import card_envs

SHARED = "shared"  #: the one module every seat plays


def _masked_space(space: gymnasium.spaces.Dict) -> gymnasium.spaces.Dict:
    mask = space["action_mask"]
    return gymnasium.spaces.Dict({"observations": space["observation"],
                                  "action_mask": gymnasium.spaces.Box(0.0, 1.0, mask.shape, np.float32)})


def _masked(observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"observations": observation["observation"], "action_mask": observation["action_mask"].astype(np.float32)}


def make_env_class() -> type:
    """RLlib's ``PettingZooEnv`` with observations as RLlib's action-masking module reads them (built lazily,
    so that importing this module does not import ray)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    class MaskedPettingZooEnv(PettingZooEnv):
        def __init__(self, env: Any) -> None:
            super().__init__(env)
            self.observation_spaces = {agent: _masked_space(space) for agent, space in self.observation_spaces.items()}
            self.observation_space = gymnasium.spaces.Dict(self.observation_spaces)

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
            observations, infos = super().reset(seed=seed, options=options)
            return {agent: _masked(obs) for agent, obs in observations.items()}, infos

        def step(self, action: dict) -> tuple:
            observations, *rest = super().step(action)
            return ({agent: _masked(obs) for agent, obs in observations.items()}, *rest)

    return MaskedPettingZooEnv


def build_algorithm(game: str, options: dict[str, Any], *, env_runners: int = 2, batch: int = 2000,
                    minibatch: int = 250, epochs: int = 4, hidden: Sequence[int] = (128, 128), lr: float = 3e-4,
                    seed: int = 0) -> Any:
    """A PPO algorithm on ``game``: every seat mapped to one shared, action-masked module."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    env_class = make_env_class()
    env_name = f"card_envs_{game}"
    register_env(env_name, lambda config: env_class(card_envs.make(game, **config)))
    config = (
        PPOConfig()
        # RLlib checks a new env by stepping random (unmasked) actions, which our env() answers as PettingZoo
        # does: the mover loses; that only ends a throwaway episode, but it logs a warning per env runner
        .environment(env_name, env_config=dict(options), disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1, num_cpus_per_env_runner=1)
        .multi_agent(policies={SHARED}, policy_mapping_fn=lambda agent_id, episode, **kwargs: SHARED)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            SHARED: RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                 model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": [64]})}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr)
        .debugging(seed=seed)
    )
    return config.build_algo()


def greedy_action(module: Any, observation: dict[str, np.ndarray]) -> int:
    """The shared module's most likely legal action for one observation."""
    import torch
    from ray.rllib.core.columns import Columns

    masked = _masked(observation)
    batch = {Columns.OBS: {key: torch.as_tensor(value[None]) for key, value in masked.items()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
    logits = np.where(observation["action_mask"] > 0, logits, -np.inf)
    return int(np.argmax(logits))


def evaluate_against_random(module: Any, game: str, options: dict[str, Any], games: int, seed: int = 0) -> float:
    """Win rate of the greedy shared policy in one seat (rotated) against uniformly random players."""
    rng = np.random.default_rng(seed)
    wins = 0
    for k in range(games):
        env = card_envs.make(game, **options)
        env.reset(seed=seed + k)
        seat = f"player_{k % len(env.possible_agents)}"
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(greedy_action(module, observation) if agent == seat else int(rng.choice(legal)))
        wins += int(k % len(env.possible_agents)) in env.unwrapped.state_.winners()
    return wins / games


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=card_envs.ENV_NAMES, default="revolutionary_war_v0")
    parser.add_argument("--options", default="{}", help='game options as JSON, e.g. \'{"num_players": 4}\'')
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--env-runners", type=int, default=2, help="remote env runners (Ray actors)")
    parser.add_argument("--batch", type=int, default=2000, help="train batch size per iteration (agent steps)")
    parser.add_argument("--address", help="Ray cluster to join: 'auto' or 'ray://<head>:10001' (default: local)")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray (default: all)")
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import ray

    options = json.loads(args.options)
    card_envs.make_game(args.game, **options)  # a bad option fails here, not in a remote actor
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1")
    try:
        algo = build_algorithm(args.game, options, env_runners=args.env_runners, batch=args.batch,
                               minibatch=min(250, args.batch), seed=args.seed)
        for iteration in range(1, args.iterations + 1):
            result = algo.train()
            runners = result.get("env_runners", {})
            learner = result.get("learners", {}).get(SHARED, {})
            print(f"iteration {iteration}: {runners.get('num_episodes', 0)} episodes, mean length "
                  f"{runners.get('episode_len_mean', float('nan')):.1f}, policy loss "
                  f"{learner.get('policy_loss', float('nan')):.4f}", flush=True)
        if args.eval_games:
            rate = evaluate_against_random(algo.get_module(SHARED), args.game, options, args.eval_games, args.seed)
            print(f"shared policy (greedy) against random players: win rate {rate:.3f} over {args.eval_games} "
                  f"games, seats rotated")
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
