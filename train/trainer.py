"""MaskablePPO self-play against an opponent pool, for any game: the training loop.

Read top to bottom: :func:`train` builds the vector of single-agent environments (one learner
seat, opponents from :class:`~train.pool.OpponentPool`), the MaskablePPO model (or loads it from
the run's checkpoint with ``resume``), warms a fresh model up by imitating ``pretrain.teacher`` if the
config names one (:func:`warm_start`, ``train/pretrain.py``), and learns with :class:`PoolCallback`,
which between two PPO updates

* adds a frozen snapshot of the learner to every environment's pool every ``pool.snapshot_every``
  updates,
* writes the checkpoint every ``checkpoint_interval`` learner decisions (atomically; a kill loses
  at most that much work),
* evaluates every ``eval.interval`` decisions against each baseline with
  :func:`agents.tournaments.match.contest` (the checkpoint as ``checkpoint:<path>``; win rates with 95% Wilson
  intervals), logged to TensorBoard and shown on the progress bar,

and finally writes the last checkpoint, plays ``eval.final_games`` against every baseline and
returns the :class:`Summary` (also written to ``<run_dir>/summary.md`` and ``.json``).
"""

from __future__ import annotations

import dataclasses
import io
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

import card_envs
from agents.players.base import advised_observation
from agents.players.registry import make_agent
from card_envs.core.errors import ConfigError
from card_envs.core.single_agent import SingleAgentEnv
from train.async_rollouts import AsyncMaskablePPO, RolloutWorkerEnv
from train.checkpoint import (
    CHECKPOINT_NAME,
    Checkpoint,
    CheckpointError,
    Snapshot,
    check_game,
    game_signature,
    read_checkpoint,
    write_checkpoint,
)
from train.config import TrainConfig
from train.pool import SELF, OpponentPool, policy_net_of, torch_activation
from train.pretrain import Demonstrations, collect, fit, greedy_student
from train.summary import Summary, checkpoint_to_resume, cpu_seconds, evaluate

#: config keys a resumed run may change; everything else must match the checkpoint's config
RESUMABLE_CHANGES = ("total_timesteps", "checkpoint_interval", "eval", "torch_threads", "vec_env", "pretrain")
WIN_WINDOW = 1000  #: finished training episodes in the rolling win rate


class TrainingEnv(SingleAgentEnv):
    """The single-agent view with its pool reachable through ``VecEnv.env_method``."""

    def add_snapshot(self, snapshot: Snapshot) -> None:
        self.opponents.add_snapshot(snapshot)


def make_env(config: TrainConfig, index: int, snapshots: list[Snapshot]) -> Callable[[], Monitor]:
    """A picklable factory of environment ``index`` (its own pool and seed)."""

    def build() -> Monitor:
        pool = OpponentPool(config.game, config.pool.weights, max_snapshots=config.pool.max_snapshots,
                            seed=config.seed * 10_007 + index * 101)
        for snapshot in snapshots:
            pool.add_snapshot(snapshot)
        baseline = None
        if config.duplicate_baseline is not None:
            baseline = make_agent(config.game, config.duplicate_baseline, seed=config.seed * 10_007 + index * 101 + 1)
        advisor = None
        if config.advisor is not None:
            advisor = make_agent(config.game, config.advisor, seed=config.seed * 10_007 + index * 101 + 2)
        return Monitor(TrainingEnv(config.game, pool, options=config.env_options, baseline=baseline,
                                   draw_reward=config.draw_reward, advisor=advisor,
                                   advise=advised_observation if advisor is not None else None))

    return build


def make_vec_env(config: TrainConfig, snapshots: list[Snapshot]) -> VecEnv:
    factories = [make_env(config, i, snapshots) for i in range(config.n_envs)]
    if config.vec_env == "subproc":
        return SubprocVecEnv(factories, start_method="fork" if sys.platform == "linux" else "spawn")
    if config.vec_env == "async":
        return RolloutWorkerEnv(factories)
    return DummyVecEnv(factories)


def model_class(venv: VecEnv) -> type[MaskablePPO]:
    """MaskablePPO, or its one-update-ahead variant for a :class:`RolloutWorkerEnv` (``vec_env: async``)."""
    return AsyncMaskablePPO if isinstance(venv, RolloutWorkerEnv) else MaskablePPO


def new_model(config: TrainConfig, venv: VecEnv, tensorboard_dir: str | None) -> MaskablePPO:
    torch.set_num_threads(config.torch_threads)  # more threads than cores stall badly on a busy machine
    ppo = config.ppo
    rate = ppo.learning_rate
    learning_rate: float | Callable[[float], float] = rate if ppo.lr_schedule == "constant" else _Linear(rate)
    activation = torch_activation(ppo.activation)
    return model_class(venv)(
        "MlpPolicy", venv, learning_rate=learning_rate, n_steps=ppo.n_steps, batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs, gamma=ppo.gamma, gae_lambda=ppo.gae_lambda, clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef, vf_coef=ppo.vf_coef, max_grad_norm=ppo.max_grad_norm, target_kl=ppo.target_kl,
        normalize_advantage=ppo.normalize_advantage,
        policy_kwargs={"net_arch": {"pi": list(ppo.net_arch), "vf": list(ppo.net_arch)}, "activation_fn": activation},
        tensorboard_log=tensorboard_dir, seed=config.seed, device="cpu", verbose=0)


class _Linear:
    """Learning rate decaying linearly to 0 over the run (picklable, unlike a lambda in a closure)."""

    def __init__(self, start: float) -> None:
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


@dataclass
class RunState:
    """What a resumed run must remember besides the model and the pool (stored in the checkpoint)."""

    updates: int = 0
    last_checkpoint: int = 0
    last_eval: int = 0
    wall_time: float = 0.0
    cpu_time: float = 0.0  #: CPU seconds of the run (:func:`cpu_seconds`; on a shared machine wall time overstates)
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    pretrain: dict[str, Any] = field(default_factory=dict)


class PoolCallback(BaseCallback):
    """Snapshots, checkpoints, evaluations and the progress bar; see the module docstring."""

    def __init__(self, config: TrainConfig, checkpoint_path: Path, run: RunState, snapshots: list[Snapshot],
                 progress: bool) -> None:
        super().__init__()
        self.config = config
        self.checkpoint_path = checkpoint_path
        self.run = run
        self.snapshots = deque(snapshots, maxlen=config.pool.max_snapshots)
        self.show_progress = progress
        self.results: deque[tuple[str, bool]] = deque(maxlen=WIN_WINDOW)
        self.bar: Any = None
        self.started = 0.0
        self.cpu_started = 0.0
        self.first_rollout = True

    # -- SB3 hooks --------------------------------------------------------------------------------

    def _on_training_start(self) -> None:
        self.started = time.perf_counter() - self.run.wall_time
        self.cpu_started = cpu_seconds() - self.run.cpu_time
        if not self.snapshots:
            self._snapshot()
        if self.show_progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.config.total_timesteps, initial=self.num_timesteps, unit="step",
                            desc=self.config.game, file=sys.stderr, dynamic_ncols=True, smoothing=0.05,
                            mininterval=0.5)

    def _on_rollout_start(self) -> None:
        # the previous rollout is fully trained on here, so the model matches num_timesteps
        if self.first_rollout:
            self.first_rollout = False
            return
        self.run.updates += 1
        if self.run.updates % self.config.pool.snapshot_every == 0:
            self._snapshot()
        steps = self.num_timesteps
        evaluate = self.config.eval.interval > 0 and steps - self.run.last_eval >= self.config.eval.interval
        if evaluate or steps - self.run.last_checkpoint >= self.config.checkpoint_interval:
            self.save()
        if evaluate:
            self.run.last_eval = steps
            self._evaluate()
            if self.bar is None:  # no progress bar: one line per evaluation for the log
                print(f"{steps:,} decisions, {time.perf_counter() - self.started:,.0f} s: {self._postfix()}",
                      file=sys.stderr, flush=True)

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done and "won" in info:
                self.results.append((_opponent_kind(info.get("opponents", [])), bool(info["won"])))
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
            if self.n_calls % 50 == 0:
                self.bar.set_postfix_str(self._postfix(), refresh=False)
        return True

    def _on_rollout_end(self) -> None:
        for kind, rate in self.win_rates().items():
            self.logger.record(f"win_rate/{kind}", rate)

    def _on_training_end(self) -> None:
        self.run.updates += 1  # the last rollout has been trained on too
        self.save()
        if self.bar is not None:
            self.bar.set_postfix_str(self._postfix())
            self.bar.close()

    # -- the work ---------------------------------------------------------------------------------

    def win_rates(self) -> dict[str, float]:
        """Rolling training win rate, overall (``all``) and per kind of opponent."""
        if not self.results:
            return {}
        rates = {"all": float(np.mean([won for _, won in self.results]))}
        for kind in sorted({kind for kind, _ in self.results}):
            rates[kind] = float(np.mean([won for k, won in self.results if k == kind]))
        return rates

    def save(self) -> None:
        self.run.last_checkpoint = self.num_timesteps
        self.run.wall_time = time.perf_counter() - self.started
        self.run.cpu_time = cpu_seconds() + self._worker_cpu() - self.cpu_started
        save_checkpoint(self.checkpoint_path, self.config, self.model, self.run, list(self.snapshots))

    def _worker_cpu(self) -> float:
        """CPU seconds of a running rollout worker (``vec_env: async``), which :func:`cpu_seconds` misses."""
        return float(getattr(self.training_env, "worker_cpu", 0.0))

    def _snapshot(self) -> None:
        snapshot = Snapshot(str(self.num_timesteps), policy_net_of(self.model.policy, self.config.ppo.activation))
        self.snapshots.append(snapshot)
        if isinstance(self.training_env, RolloutWorkerEnv):
            self.training_env.post("add_snapshot", snapshot)  # reaches the worker's envs after its rollout
        else:
            self.training_env.env_method("add_snapshot", snapshot)

    def _evaluate(self) -> None:
        games = self.config.eval.games
        results = evaluate(self.config, self.checkpoint_path, games, seed=self.config.seed + 1)
        self.run.evaluations.append({"num_timesteps": self.num_timesteps, "results": [r.row() for r in results]})
        for r in results:
            self.logger.record(f"eval/win_rate/{r.opponent}", r.win_rate)
            self.logger.record(f"eval/ci_low/{r.opponent}", r.interval[0])
        self.save()  # the checkpoint carries the evaluation history

    def _postfix(self) -> str:
        rates = self.win_rates()
        text = f"win {rates['all']:.2f}" if rates else "win -"
        if self.run.evaluations:
            last = self.run.evaluations[-1]["results"]
            text += " | eval " + " ".join(f"{_short(r['opponent'])} {r['win_rate']:.2f}" for r in last)
        return text


def _opponent_kind(names: list[str]) -> str:
    kinds = {SELF if name.startswith(SELF + ":") else name for name in names}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _short(name: str) -> str:
    return name.split(":", 1)[-1]


def save_checkpoint(path: Path, config: TrainConfig, model: MaskablePPO, run: RunState,
                    snapshots: list[Snapshot]) -> None:
    buffer = io.BytesIO()
    model.save(buffer)
    meta = {
        "game": game_signature(config.game, config.env_options),
        "config": config.to_dict(),
        "num_timesteps": int(model.num_timesteps),
        "n_updates": run.updates,
        "policy": {"activation": config.ppo.activation, "net_arch": list(config.ppo.net_arch),
                   "deterministic": config.eval.deterministic, "advisor": config.advisor},
        "run": {"last_checkpoint": run.last_checkpoint, "last_eval": run.last_eval, "wall_time": run.wall_time,
                "cpu_time": run.cpu_time, "pretrain": run.pretrain},
        "evaluations": run.evaluations,
    }
    write_checkpoint(path, Checkpoint(meta, policy_net_of(model.policy, config.ppo.activation),
                                      buffer.getvalue(), snapshots))


# -- the run --------------------------------------------------------------------------------------


def train(config: TrainConfig, *, resume: bool = False, progress: bool = True, final_eval: bool = True) -> Summary:
    """Train (or continue) the run of ``config``; see the module docstring."""
    torch.set_num_threads(config.torch_threads)
    run_dir = Path(config.run_dir or Path("runs") / config.game)
    checkpoint_path = run_dir / CHECKPOINT_NAME
    run, snapshots, model_bytes = RunState(), [], b""
    if resume:
        config, run, snapshots, model_bytes = _resume_state(config, checkpoint_path)
    elif checkpoint_path.exists():
        raise ConfigError(f"{checkpoint_path} already exists: pass --resume to continue that run, or choose "
                          f"another run directory (--set run_dir=...)")
    venv = make_vec_env(config, snapshots)
    tensorboard_dir = str(run_dir / "tensorboard")
    if model_bytes:
        model = model_class(venv).load(io.BytesIO(model_bytes), env=venv, device="cpu", tensorboard_log=tensorboard_dir)
    else:
        model = new_model(config, venv, tensorboard_dir)
        if config.init_from is not None:
            initialize_from(model, config, config.init_from)
        if config.pretrain.teacher is not None:
            started, cpu_started = time.perf_counter(), cpu_seconds()
            run.pretrain = warm_start(config, model, progress)
            run.wall_time = time.perf_counter() - started
            run.cpu_time = cpu_seconds() - cpu_started
            save_checkpoint(checkpoint_path, config, model, run, [])
    callback = PoolCallback(config, checkpoint_path, run, snapshots, progress)
    remaining = config.total_timesteps - model.num_timesteps
    try:
        if remaining > 0:
            model.learn(remaining, callback=callback, reset_num_timesteps=not model_bytes, tb_log_name="ppo")
        elif not checkpoint_path.exists():
            callback.init_callback(model)
            callback.save()
    finally:
        venv.close()
    results = []
    if final_eval:
        results = evaluate(config, checkpoint_path, config.eval.final_games, seed=config.seed + 2, progress=progress)
    summary = Summary(config, int(model.num_timesteps), run.wall_time, run.cpu_time, results, str(checkpoint_path),
                      run.pretrain)
    if final_eval:
        summary.write(run_dir / "summary")
    return summary


def initialize_from(model: MaskablePPO, config: TrainConfig, path: str) -> None:
    """Copy the policy (and value) weights of the checkpoint at ``path`` into ``model``."""
    checkpoint = read_checkpoint(path, with_model=True)
    check_game(checkpoint, config.game, source=f"init_from checkpoint {path!r}")
    if checkpoint.policy.activation != config.ppo.activation:
        raise CheckpointError(f"init_from checkpoint {path!r} uses {checkpoint.policy.activation}, "
                              f"ppo.activation is {config.ppo.activation}")
    theirs = MaskablePPO.load(io.BytesIO(checkpoint.model_bytes), device="cpu").policy.state_dict()
    ours = model.policy.state_dict()
    shapes = {key: tuple(value.shape) for key, value in theirs.items()}
    if shapes != {key: tuple(value.shape) for key, value in ours.items()}:
        raise CheckpointError(f"init_from checkpoint {path!r} has another network "
                              f"({checkpoint.meta['policy'].get('net_arch')}) than ppo.net_arch {config.ppo.net_arch}")
    model.policy.load_state_dict(theirs)


def warm_start(config: TrainConfig, model: MaskablePPO, progress: bool) -> dict[str, Any]:
    """Imitation of ``pretrain.teacher`` before PPO, then its DAgger rounds (train/pretrain.py); its statistics."""
    settings = config.pretrain
    game = card_envs.make_game(config.game, **config.env_options)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=settings.games + settings.dagger_rounds * settings.dagger_games, unit="game",
                   desc=f"{config.game}: teacher {settings.teacher}", file=sys.stderr, dynamic_ncols=True,
                   mininterval=0.5)

    def fitted(data: Demonstrations, epochs: int, last_round: Demonstrations | None = None) -> dict[str, float]:
        if bar is not None:
            played = "" if last_round is None else f"student chose as teacher {last_round.student_agreement:.3f}; "
            bar.set_postfix_str(f"{played}{len(data):,} decisions; fitting {epochs} epochs")
            bar.refresh()
        if config.duplicate_baseline is not None:
            # PPO will be paid the return minus the baseline's on the same deal: the teacher's own play scores
            # 0 there, and its clone about 0, so that is the value to start from
            data = dataclasses.replace(data, returns=np.zeros_like(data.returns))
        return fit(model.policy, data, epochs=epochs, batch_size=settings.batch_size,
                   learning_rate=settings.learning_rate, value_weight=settings.value_weight, seed=config.seed,
                   label_smoothing=settings.label_smoothing)

    started = time.perf_counter()
    update = bar.update if bar else None
    data = collect(game, settings.teacher, settings.games, seed=config.seed, progress=update, mix=settings.mix,
                   advisor=config.advisor)
    stats = fitted(data, settings.epochs)
    student_agreement = []
    for round_ in range(1, settings.dagger_rounds + 1):
        played = collect(game, settings.teacher, settings.dagger_games, seed=config.seed + 7_919 * round_,
                         progress=update, student=greedy_student(model.policy), mix=settings.mix,
                         advisor=config.advisor)
        student_agreement.append(played.student_agreement)
        data = data + played
        stats = fitted(data, settings.dagger_epochs, played)
    if bar is not None:
        bar.set_postfix_str(f"{len(data):,} decisions; agreement {stats['accuracy']:.3f}")
        bar.close()
    dagger = {"student_agreement": student_agreement} if student_agreement else {}
    return {"teacher": settings.teacher, "decisions": len(data), "seconds": time.perf_counter() - started,
            **stats, **dagger}


def _resume_state(config: TrainConfig, path: Path) -> tuple[TrainConfig, RunState, list[Snapshot], bytes]:
    checkpoint = checkpoint_to_resume(config, path, RESUMABLE_CHANGES)
    stored_run = checkpoint.meta.get("run", {})
    run = RunState(updates=int(checkpoint.meta.get("n_updates", 0)),
                   last_checkpoint=int(stored_run.get("last_checkpoint", checkpoint.num_timesteps)),
                   last_eval=int(stored_run.get("last_eval", 0)), wall_time=float(stored_run.get("wall_time", 0.0)),
                   cpu_time=float(stored_run.get("cpu_time", 0.0)),
                   evaluations=list(checkpoint.meta.get("evaluations", [])),
                   pretrain=dict(stored_run.get("pretrain", {})))
    return config, run, checkpoint.snapshots, checkpoint.model_bytes


__all__ = ["CHECKPOINT_NAME", "PoolCallback", "RunState", "Summary", "TrainingEnv", "evaluate", "make_env",
           "make_vec_env", "new_model", "save_checkpoint", "train"]
