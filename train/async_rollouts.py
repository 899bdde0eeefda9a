"""Rollouts collected in a second process while PPO trains on the previous one (``vec_env: async``).

With ``vec_env: dummy`` one process does everything in turn: step the envs (rules and opponents),
run the policy on the new observations, and after every ``n_steps`` train. The second core of a
2-core machine sits idle (``torch_threads: 1``). With ``vec_env: async`` a worker process owns the
envs (in a ``DummyVecEnv``) and a numpy copy of the policy, and collects whole rollouts; the
training process trains on one rollout while the worker collects the next:

====================  =========================================================================
process               work
====================  =========================================================================
training (main)       receives rollout *k*, recomputes its values and log-probabilities under
                      the current policy, fills SB3's rollout buffer (replaying the per-step
                      callbacks: progress bar, win rates), trains; then sends the new weights
worker                collects rollout *k + 1* with the weights it was sent before update *k*:
                      samples the learner's actions from the masked softmax of its numpy copy
                      (:class:`train.checkpoint.PolicyNet`, Gumbel-max), steps the envs
====================  =========================================================================

So the data of each update comes from the policy one update older (a *policy lag* of one update,
as in asynchronous PPO, e.g. Sample Factory); the first update's data is fresh. Before each update
the values, the log-probabilities and so the advantages are recomputed under the policy being
updated, so PPO's clipping and its KL stop are centred on it (the "proximal policy" of decoupled
PPO, Hilton et al. 2021, without that paper's behaviour-policy weights, which are close to 1 when
one update moves the policy by a KL of ~0.01). Each run is still deterministic: the worker
collects exactly the rollouts requested, in order, with the weights sent, and samples with its own
seeded generator. One rollout collected past the last update is discarded at the end.

Calls on the vector env (``env_method``, ``get_attr``, ...) reach the worker's envs between two
rollouts, so they wait for the rollout under way; :meth:`RolloutWorkerEnv.post` sends a call
without waiting for its result (the pool callback adds its snapshots that way).

The worker is forked from the training process (torch is loaded there, and unused): it runs the
rules, the opponents and numpy only.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper, VecEnvIndices
from threadpoolctl import threadpool_limits

from card_envs.core.errors import StateError
from train.checkpoint import PolicyNet


@dataclass
class Rollout:
    """``n_steps`` vector steps of ``n_envs`` envs, as the worker collected them.

    ========================  ===================================================================
    field                     shape, meaning
    ========================  ===================================================================
    ``observations``          (n_steps, n_envs, *obs_shape): the observation each action was chosen on
    ``actions``               (n_steps, n_envs) int64
    ``masks``                 (n_steps, n_envs, num_actions) bool: the legal actions then
    ``rewards``               (n_steps, n_envs) float32
    ``episode_starts``        (n_steps, n_envs) float32: the observation starts an episode
    ``dones``                 (n_steps, n_envs) bool: the step ended an episode
    ``infos``                 per step, the envs' info dicts (``{}`` where the env had none;
                              ``terminal_observation`` is kept only for truncated episodes)
    ``last_observations``     (n_envs, *obs_shape): the observations after the last step
    ``worker_cpu``            CPU seconds the worker process has used so far
    ========================  ===================================================================
    """

    observations: np.ndarray
    actions: np.ndarray
    masks: np.ndarray
    rewards: np.ndarray
    episode_starts: np.ndarray
    dones: np.ndarray
    infos: list[list[dict[str, Any]]]
    last_observations: np.ndarray
    worker_cpu: float


def sample_masked(logits: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row, drawn from the softmax of ``logits`` over the row's legal actions
    (Gumbel-max: the argmax of ``logits + Gumbel noise`` is distributed as their softmax)."""
    if not masks.any(axis=1).all():
        raise StateError("an env has no legal action (its action mask is all zeros)")
    scores = np.where(masks, logits + rng.gumbel(size=logits.shape), -np.inf)
    return scores.argmax(axis=1)


class _Collector:
    """The worker's side: the envs, where they stand, and the generator of the learner's actions."""

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]]) -> None:
        self.venv = DummyVecEnv(list(env_fns))
        self.observations: np.ndarray | None = None
        self.episode_starts = np.ones(self.venv.num_envs, np.float32)
        self.rng = np.random.default_rng()

    def reset(self, seed: int | None, options: list[dict[str, Any]]) -> np.ndarray:
        if seed is not None:
            self.venv.seed(seed)
        self.venv.set_options(options)
        self.rng = np.random.default_rng(None if seed is None else [seed, 0xA57C])
        self.observations = self.venv.reset()
        self.episode_starts = np.ones(self.venv.num_envs, np.float32)
        return self.observations

    def collect(self, net: PolicyNet, n_steps: int) -> Rollout:
        if self.observations is None:
            self.reset(None, [{} for _ in range(self.venv.num_envs)])
        venv, n_envs = self.venv, self.venv.num_envs
        observations = np.empty((n_steps, *self.observations.shape), np.float32)
        masks = np.empty((n_steps, n_envs, venv.action_space.n), bool)
        actions = np.empty((n_steps, n_envs), np.int64)
        rewards = np.empty((n_steps, n_envs), np.float32)
        episode_starts = np.empty((n_steps, n_envs), np.float32)
        dones = np.empty((n_steps, n_envs), bool)
        infos: list[list[dict[str, Any]]] = []
        for t in range(n_steps):
            observations[t] = self.observations
            masks[t] = get_action_masks(venv)
            actions[t] = sample_masked(net.logits(observations[t]), masks[t], self.rng)
            self.observations, rewards[t], dones[t], step_infos = venv.step(actions[t])
            episode_starts[t] = self.episode_starts
            self.episode_starts = dones[t].astype(np.float32)
            infos.append([_slim(info) for info in step_infos])
        return Rollout(observations, actions, masks, rewards, episode_starts, dones, infos,
                       self.observations.copy(), time.process_time())


def _slim(info: dict[str, Any]) -> dict[str, Any]:
    """The info dict without the terminal observation, which only a truncated episode needs."""
    if "terminal_observation" in info and not info.get("TimeLimit.truncated", False):
        info = dict(info)
        del info["terminal_observation"]
    return info


def _read_into(remote: Any, inbox: queue.SimpleQueue) -> None:
    """Move every message from the pipe to ``inbox`` as it arrives (``None`` once the pipe is closed).

    The worker reads in this thread so that the training process's requests (a policy's weights, ~1 MB)
    never wait on a worker that is itself busy sending a rollout (~10 MB): both sides sending at once
    through a pipe of a few kB would block each other forever."""
    try:
        while True:
            inbox.put(remote.recv())
    except (EOFError, OSError):
        inbox.put(None)


def _worker(remote: Any, parent_remote: Any, env_fns: CloudpickleWrapper) -> None:
    parent_remote.close()
    # numpy's BLAS would start a thread per core for the policy's batched forward pass and spin on
    # the core the training process runs on: measured, a Revolution rollout took 6 times as long
    threadpool_limits(limits=1)
    collector = _Collector(env_fns.var)
    venv = collector.venv
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_read_into, args=(remote, inbox), daemon=True, name="inbox").start()
    try:
        while True:
            message = inbox.get()
            if message is None:
                return  # the training process is gone (killed or closed the pipe)
            command, data = message
            if command == "collect":
                remote.send(collector.collect(*data))
            elif command == "reset":
                remote.send(collector.reset(*data))
            elif command == "spaces":
                remote.send((venv.num_envs, venv.observation_space, venv.action_space))
            elif command == "env_method":
                name, args, kwargs, indices = data
                remote.send(venv.env_method(name, *args, indices=indices, **kwargs))
            elif command == "post":
                name, args, kwargs = data
                venv.env_method(name, *args, **kwargs)
            elif command == "get_attr":
                remote.send(venv.get_attr(*data))
            elif command == "set_attr":
                remote.send(venv.set_attr(*data))
            elif command == "env_is_wrapped":
                remote.send(venv.env_is_wrapped(*data))
            elif command == "close":
                venv.close()
                return
            else:
                raise ValueError(f"unknown command {command!r}")
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the training process is gone (killed or interrupted): nothing left to do


class RolloutWorkerEnv(VecEnv):
    """The envs of ``env_fns`` in a worker process that collects whole rollouts; see the module docstring.

    It is a ``VecEnv`` for SB3's bookkeeping (spaces, ``reset``, ``env_method``...), but it does not
    step one vector step at a time: :class:`AsyncMaskablePPO` asks it for rollouts
    (:meth:`request`, :meth:`receive`).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]]) -> None:
        method = "fork" if sys.platform == "linux" else "spawn"
        context = multiprocessing.get_context(method)
        self.remote, worker_remote = context.Pipe()
        self.process = context.Process(target=_worker, args=(worker_remote, self.remote, CloudpickleWrapper(env_fns)),
                                       daemon=True, name="rollout-worker")
        self.process.start()
        worker_remote.close()
        self._in_flight = 0  # rollouts requested and not yet received
        self._received: deque[Rollout] = deque()
        self.worker_cpu = 0.0
        self.closed = False
        self.remote.send(("spaces", None))
        n_envs, observation_space, action_space = self.remote.recv()
        super().__init__(n_envs, observation_space, action_space)
        self._base_seed: int | None = None

    # -- rollouts ---------------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Rollouts requested and not yet received (by :meth:`receive`)."""
        return self._in_flight + len(self._received)

    def request(self, net: PolicyNet, n_steps: int) -> None:
        """Queue a rollout of ``n_steps`` vector steps with the policy ``net`` (collected after those queued)."""
        self.remote.send(("collect", (net, n_steps)))
        self._in_flight += 1

    def receive(self) -> Rollout:
        """The oldest requested rollout (waits for it)."""
        if self._received:
            rollout = self._received.popleft()
        else:
            if self._in_flight == 0:
                raise StateError("receive() without a requested rollout")
            rollout = self.remote.recv()
            self._in_flight -= 1
        self.worker_cpu = rollout.worker_cpu
        return rollout

    def _call(self, command: str, data: Any) -> Any:
        """Send a call that answers, and wait for its answer (after the rollouts under way)."""
        self.remote.send((command, data))
        while self._in_flight:
            self._received.append(self.remote.recv())
            self._in_flight -= 1
        return self.remote.recv()

    def post(self, method_name: str, *args: Any, **kwargs: Any) -> None:
        """Call ``method_name`` on every env, after the rollouts under way, without waiting for it."""
        self.remote.send(("post", (method_name, args, kwargs)))

    # -- VecEnv ------------------------------------------------------------------------------------

    def reset(self) -> np.ndarray:
        """Discard the rollouts under way and reset every env (with the seed of :meth:`seed`, if any)."""
        while self._in_flight:
            self.remote.recv()
            self._in_flight -= 1
        self._received.clear()
        observations = self._call("reset", (self._base_seed, self._options))
        self._base_seed = None
        self._reset_seeds()
        self._reset_options()
        return observations

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        self._base_seed = seed
        return super().seed(seed)

    def step_async(self, actions: np.ndarray) -> None:
        raise StateError("RolloutWorkerEnv collects whole rollouts in its worker: train with AsyncMaskablePPO "
                         "(vec_env: async), not one vector step at a time")

    def step_wait(self) -> Any:
        raise StateError("RolloutWorkerEnv has no step in progress: it collects whole rollouts (request/receive)")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.remote.send(("close", None))
            while self._in_flight and self.remote.poll(60):  # the worker sends them before it reads the close
                self.remote.recv()
                self._in_flight -= 1
        except (BrokenPipeError, EOFError, OSError):
            pass  # the worker is gone already
        self.process.join(timeout=30)
        if self.process.is_alive():  # still collecting a rollout nobody will read
            self.process.terminate()
            self.process.join()
        self.remote.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._call("get_attr", (attr_name, indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._call("set_attr", (attr_name, value, indices))

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        return self._call("env_method", (method_name, method_args, method_kwargs, indices))

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return self._call("env_is_wrapped", (wrapper_class, indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs


def behaviour_net(policy: Any) -> PolicyNet:
    """The numpy copy of an SB3 MLP policy's actor, for the worker (:func:`train.pool.policy_net_of`)."""
    from train.pool import activation_name, policy_net_of

    return policy_net_of(policy, activation_name(policy.activation_fn))


class AsyncMaskablePPO(MaskablePPO):
    """MaskablePPO whose rollouts come from a :class:`RolloutWorkerEnv`, one update ahead; see the module
    docstring. On any other vector env it is MaskablePPO unchanged."""

    def collect_rollouts(self, env: VecEnv, callback: Any, rollout_buffer: Any, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        if not isinstance(env, RolloutWorkerEnv):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        if not use_masking:
            raise StateError("vec_env async always trains with action masks")
        self.policy.set_training_mode(False)
        net = behaviour_net(self.policy)
        while env.in_flight < 2:  # the one to train on now and the next, collected meanwhile
            env.request(net, n_rollout_steps)
        rollout = env.receive()
        rollout_buffer.reset()
        callback.on_rollout_start()
        n_steps, n_envs = rollout.actions.shape
        flat_masks = rollout.masks.reshape(n_steps * n_envs, -1)
        with torch.no_grad():
            observations = torch.as_tensor(rollout.observations.reshape(n_steps * n_envs, -1), device=self.device)
            values, log_probs, _ = self.policy.evaluate_actions(
                observations, torch.as_tensor(rollout.actions.reshape(-1), device=self.device), action_masks=flat_masks)
        values, log_probs = values.reshape(n_steps, n_envs), log_probs.reshape(n_steps, n_envs)
        for t in range(n_steps):
            dones, infos = rollout.dones[t], rollout.infos[t]
            self.num_timesteps += n_envs
            callback.update_locals({"dones": dones, "infos": infos, "rewards": rollout.rewards[t]})
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
            rewards = rollout.rewards[t].copy()
            for index in np.flatnonzero(dones):  # a truncated episode: bootstrap with its final value (SB3 #633)
                terminal = infos[index].get("terminal_observation")
                if terminal is not None and infos[index].get("TimeLimit.truncated", False):
                    with torch.no_grad():
                        rewards[index] += self.gamma * self.policy.predict_values(
                            self.policy.obs_to_tensor(terminal)[0])[0].item()
            rollout_buffer.add(rollout.observations[t], rollout.actions[t].reshape(-1, 1), rewards,
                               rollout.episode_starts[t], values[t], log_probs[t], action_masks=rollout.masks[t])
        self._last_obs = rollout.last_observations
        self._last_episode_starts = rollout.dones[-1]
        with torch.no_grad():
            last_values = self.policy.predict_values(torch.as_tensor(rollout.last_observations, device=self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=last_values, dones=rollout.dones[-1])
        callback.update_locals({"dones": rollout.dones[-1], "infos": rollout.infos[-1]})
        callback.on_rollout_end()
        return True


__all__ = ["AsyncMaskablePPO", "Rollout", "RolloutWorkerEnv", "behaviour_net", "sample_masked"]
