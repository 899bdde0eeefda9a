"""Decisions/s during training, for every game: MaskablePPO (SB3) and the JAX trainer, each against its
zero-cost ceiling, in one run.

Run from the repository root::

    python -m benchmarks.training_throughput                  # 5 repeats x 4 rollouts per row
    python -m benchmarks.training_throughput --quick          # smoke run, writes results/quick/
    python -m benchmarks.training_throughput --games revolutionary_war_v0 --repeats 3
    python -m benchmarks.training_throughput --backends jax   # only the JAX trainer's rows

=====================  ==================================================================================
row                    what is timed
=====================  ==================================================================================
``<game>``             ``model.learn(n)`` of the game's committed config (``configs/*.yaml``: its
                       n_envs, network, n_steps, batch, epochs, torch threads, and its opponent pool,
                       with one snapshot of the learner so ``self`` is drawn too) on the real training
                       environments: collecting the rollouts (policy forward passes, every opponent's
                       decisions, the rules engine, observation encoding) and the PPO updates
``<game> ceiling``     the very same model and ``learn`` call on ``ZeroCostEnv`` (wrapped in SB3's
                       ``Monitor`` like the real envs, which the loop needs for its episode statistics):
                       the same observation and action spaces and the same mean episode length, but a
                       step that only returns a constant observation -- what the training loop costs
                       with a free environment
=====================  ==================================================================================

The ratio ``<game> / ceiling`` is the share of the free-environment speed that training keeps with the
real game; the target is at least 0.75. Rows are measured round-robin (game, ceiling, game, ...) so a busy
machine slows both alike; each ratio is taken per repeat (paired) before its median. Rates are shown by
wall time and by this process's CPU time (which leaves out time lost to other processes on a shared
machine). Checkpoints and evaluations are not part of the loop being timed.

A config with ``vec_env: async`` (``train/async_rollouts.py``) is timed as it trains: its envs step in a
worker process while this one trains, and its ceiling runs the same two processes with ``ZeroCostEnv``
in the worker. This process's CPU time then leaves the envs out, so such a row is judged on wall time
(run it on a quiet machine), and its *env step* part is this process waiting for the worker's rollout.

The JAX trainer (``backend: jax``, ``train/jax_ppo.py``; ``--backends`` picks which trainers run, default
both) adds, per game with a committed ``configs/<game>_jax.yaml`` and a JAX engine:

=========================  ================================================================================
row                        what is timed
=========================  ================================================================================
``<game> jax``             one call of the jitted loop (``jax.updates_per_call`` whole PPO updates: acting
                           with the learner and every opponent, the engine's steps and resets, GAE, the
                           epochs, snapshots) of the committed JAX config on ``card_envs.jax.make(game)``
``<game> jax ceiling``     the same loop on ``train.jax_zero_cost.ZeroCostEnv`` of the game's shapes and mean
                           episode length (measured in the warm-up call, in decisions of every seat)
=========================  ================================================================================

A decision is one learner decision, as for SB3. Compilation happens in the warm-up call and is reported
apart. The JAX rows are judged against the issue's targets: at least 50,000 decisions/s, and at least
10 times the SB3 trainer's rate of the same game measured in the same run.

Results: ``results/training_throughput.md`` and ``.json``, each written to a temporary file and renamed.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

import card_envs
from benchmarks.throughput import machine_description, machine_lines, output_dir, run_stamp, select_games, write_atomic
from card_envs.core.commands import CommandParser, guarded, positive_int
from card_envs.core.errors import ConfigError
from train.async_rollouts import RolloutWorkerEnv
from train.config import TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.75
JAX_TARGET = 50_000  #: decisions/s of the JAX trainer (issue 24)
JAX_OVER_SB3 = 10.0  #: and this many times the SB3 trainer's, same game, same run


class ZeroCostEnv(gymnasium.Env):
    """The spaces of a game, episodes of a fixed length, a step that costs nothing."""

    def __init__(self, observation_size: int, num_actions: int, episode_length: int) -> None:
        self.observation_space = spaces.Box(-np.inf, np.inf, (observation_size,), np.float32)
        self.action_space = spaces.Discrete(num_actions)
        self.episode_length = episode_length
        self.observation = np.zeros(observation_size, np.float32)
        self.mask = np.ones(num_actions, np.int8)
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self.observation, {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        done = self.t >= self.episode_length
        return self.observation, float(done and self.t % 2), done, False, {}

    def action_masks(self) -> np.ndarray:
        return self.mask


def committed_config(game: str) -> TrainConfig:
    """The committed config of ``game``: ``configs/<game without _v0>.yaml``."""
    path = ROOT / "configs" / f"{game.rsplit('_v', 1)[0]}.yaml"
    return load_config(path)


class Row:
    """One training setup (real or ceiling) and its timed samples."""

    def __init__(self, game: str, kind: str, model: Any) -> None:
        self.game, self.kind, self.model = game, kind, model
        self.samples: list[dict[str, float]] = []

    @property
    def label(self) -> str:
        return self.game if self.kind == "game" else f"{self.game} ceiling"

    def run(self, steps: int) -> dict[str, float]:
        """Time ``learn(steps)``, and the CPU time of its parts (:data:`PARTS`)."""
        venv, model = self.model.env, self.model
        spent = dict.fromkeys(PARTS, 0.0)
        stepping = "receive" if isinstance(venv, RolloutWorkerEnv) else "step_wait"
        patched = [(venv, stepping, "env step"), (model.policy, "forward", "policy forward"),
                   (model, "train", "PPO update")]
        for owner, name, part in patched:
            setattr(owner, name, _timed(getattr(owner, name), spent, part))
        wall, cpu = time.perf_counter(), time.process_time()
        before = self.model.num_timesteps
        try:
            self.model.learn(steps, reset_num_timesteps=False)
        finally:
            for owner, name, _ in patched:
                delattr(owner, name)  # back to the class's method
        done = self.model.num_timesteps - before
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        spent["rest"] = cpu - sum(spent.values())
        return {"steps": done, "wall_s": wall, "cpu_s": cpu, "steps_per_s": done / wall, "steps_per_cpu_s": done / cpu,
                "env_cpu_s": spent["env step"], "env_share": spent["env step"] / cpu,
                "cpu_us_per_step": {part: 1e6 * seconds / done for part, seconds in spent.items()}}


#: the parts of ``learn`` timed separately (CPU time): the vector env's ``step_wait`` (rules, opponents,
#: encoding, SB3's per-step bookkeeping; with ``vec_env: async``, receiving the worker's rollout), the
#: policy's forward passes while collecting rollouts (none with async), the PPO update (``train``), and
#: everything else (rollout buffer, mask gathering, callbacks; async: recomputing the rollout's values
#: and log-probabilities in one batch)
PARTS = ("env step", "policy forward", "PPO update", "rest")


def _timed(method: Any, spent: dict[str, float], part: str) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent[part] += time.process_time() - start

    return timed


def build_rows(game: str, rollouts: int) -> tuple[Row, Row, dict[str, Any]]:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.pool import snapshot_of
    from train.trainer import make_vec_env, new_model

    config = committed_config(game)
    if config.vec_env != "async":
        config.vec_env = "dummy"  # one process: its CPU time is the whole of the training
    venv = make_vec_env(config, [])
    model = new_model(config, venv, None)
    venv.env_method("add_snapshot", snapshot_of(model.policy, "0", config.ppo.activation))
    rollout = config.ppo.n_steps * config.n_envs
    model.learn(rollout)  # warm-up; also measures the episode length
    lengths = [info["l"] for info in model.ep_info_buffer] or [config.ppo.n_steps]
    episode_length = max(1, round(statistics.mean(lengths)))
    built = card_envs.make_game(game, **config.env_options)
    inputs = venv.observation_space.shape[0]  # the game's observation, and the advice if the config has an advisor

    def factory() -> Monitor:
        return Monitor(ZeroCostEnv(inputs, built.num_actions, episode_length))

    factories = [factory] * config.n_envs
    ceiling_env = RolloutWorkerEnv(factories) if config.vec_env == "async" else DummyVecEnv(factories)
    ceiling = new_model(config, ceiling_env, None)
    ceiling.learn(rollout)
    setup = {"config": str(Path("configs") / f"{game.rsplit('_v', 1)[0]}.yaml"), "n_envs": config.n_envs,
             "n_steps": config.ppo.n_steps, "batch_size": config.ppo.batch_size, "n_epochs": config.ppo.n_epochs,
             "net_arch": config.ppo.net_arch, "torch_threads": config.torch_threads, "vec_env": config.vec_env,
             "pool": config.pool.weights, "steps_per_sample": rollout * rollouts,
             "mean_episode_length": episode_length, "players": built.num_players}
    return Row(game, "game", model), Row(game, "ceiling", ceiling), setup


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(games: Sequence[str], repeats: int, rollouts: int) -> list[dict[str, Any]]:
    import torch

    # The ceiling's observations are zeros, so the first layer's gradients are zero and Adam's moment estimates of
    # its weights decay into subnormal floats, which some processors (Intel here: the ceiling's PPO update 8x
    # slower, 1,432 against 170 us a decision) compute in microcode. Flushed to zero, for both rows alike.
    torch.set_flush_denormal(True)
    results = []
    for game in games:
        real, ceiling, setup = build_rows(game, rollouts)
        steps = setup["steps_per_sample"]
        try:
            for repeat in range(repeats):
                for row in (real, ceiling):
                    sample = row.run(steps)
                    row.samples.append(sample)
                    print(f"[{repeat + 1}/{repeats}] {row.label:<32} {sample['steps_per_s']:>9,.0f} steps/s  "
                          f"(CPU time: {sample['steps_per_cpu_s']:,.0f} steps/s)", file=sys.stderr, flush=True)
        finally:
            real.model.env.close()
            ceiling.model.env.close()
        ratio_wall = [r["steps_per_s"] / c["steps_per_s"] for r, c in zip(real.samples, ceiling.samples, strict=True)]
        ratio_cpu = [r["steps_per_cpu_s"] / c["steps_per_cpu_s"]
                     for r, c in zip(real.samples, ceiling.samples, strict=True)]
        results.append({
            "game": game, "setup": setup,
            "training_steps_per_s": spread([s["steps_per_s"] for s in real.samples]),
            "ceiling_steps_per_s": spread([s["steps_per_s"] for s in ceiling.samples]),
            "training_steps_per_cpu_s": spread([s["steps_per_cpu_s"] for s in real.samples]),
            "ceiling_steps_per_cpu_s": spread([s["steps_per_cpu_s"] for s in ceiling.samples]),
            "ratio": spread(ratio_wall), "ratio_cpu": spread(ratio_cpu),
            "env_share": spread([s["env_share"] for s in real.samples]),
            "cpu_us_per_step": {row.kind: {part: statistics.median(s["cpu_us_per_step"][part] for s in row.samples)
                                           for part in PARTS} for row in (real, ceiling)},
            # a worker's CPU time is not this process's: async rows are judged on wall time
            "judged_on": "wall time" if setup["vec_env"] == "async" else "CPU time",
            "meets_target": statistics.median(ratio_wall if setup["vec_env"] == "async" else ratio_cpu) >= TARGET,
            "samples": {"training": real.samples, "ceiling": ceiling.samples},
        })
    return results


def jax_config_path(game: str) -> Path:
    return ROOT / "configs" / f"{game.rsplit('_v', 1)[0]}_jax.yaml"


class JaxRow:
    """One JAX trainer setup (real engine or zero-cost ceiling), warmed up, and its timed samples."""

    def __init__(self, config: TrainConfig, env: Any, label: str) -> None:
        import jax

        from train.jax_ppo import JaxPPO

        self.label, self.config = label, config
        self.trainer = JaxPPO(config, env)
        self.per_call = config.jax.updates_per_call
        self.total = jax.numpy.int32(config.total_timesteps)
        started = time.perf_counter()
        self.runner = jax.block_until_ready(self.trainer.init(jax.random.PRNGKey(config.seed)))
        self.runner, stats = self.trainer.run_updates(self.runner, self.total, self.per_call)
        stats = jax.device_get(stats)
        self.compile_s = time.perf_counter() - started
        episodes = float(stats["episodes"].sum())
        self.episode_length = float(stats["finished_lengths"].sum()) / episodes if episodes else 0.0
        self.samples: list[dict[str, float]] = []

    def run(self) -> dict[str, float]:
        import jax

        wall, cpu = time.perf_counter(), time.process_time()
        self.runner, stats = self.trainer.run_updates(self.runner, self.total, self.per_call)
        jax.block_until_ready(self.runner)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        done = int(jax.device_get(stats["learner_decisions"]).sum())
        sample = {"steps": done, "wall_s": wall, "cpu_s": cpu, "steps_per_s": done / wall,
                  "steps_per_cpu_s": done / cpu}
        self.samples.append(sample)
        return sample


def measure_jax(games: Sequence[str], repeats: int, sb3_rates: dict[str, float]) -> list[dict[str, Any]]:
    """The JAX trainer's rows: each game's committed JAX config on its engine and on the zero-cost env."""
    from train.jax_zero_cost import ZeroCostEnv

    results = []
    for game in games:
        path = jax_config_path(game)
        if not path.exists():
            results.append({"game": game, "skipped": f"no committed JAX config ({path.relative_to(ROOT)})"})
            continue
        config = load_config(path)
        try:
            from card_envs import jax as card_envs_jax

            env = card_envs_jax.make(game, **config.env_options)
        except ConfigError as error:  # no JAX engine (yet) for this game
            results.append({"game": game, "skipped": str(error)})
            continue
        real = JaxRow(config, env, f"{game} jax")
        ceiling = JaxRow(config, ZeroCostEnv.like(env, max(1, round(real.episode_length))), f"{game} jax ceiling")
        for repeat in range(repeats):
            for row in (real, ceiling):
                sample = row.run()
                print(f"[{repeat + 1}/{repeats}] {row.label:<32} {sample['steps_per_s']:>9,.0f} steps/s  "
                      f"(CPU time: {sample['steps_per_cpu_s']:,.0f} steps/s)", file=sys.stderr, flush=True)
        rates = spread([s["steps_per_s"] for s in real.samples])
        over_sb3 = rates["median"] / sb3_rates[game] if game in sb3_rates else None
        results.append({
            "game": game, "config": str(path.relative_to(ROOT)),
            "setup": {"n_envs": config.n_envs, "n_steps": config.ppo.n_steps, "batch_size": config.ppo.batch_size,
                      "n_epochs": config.ppo.n_epochs, "net_arch": config.ppo.net_arch, "network": config.jax.network,
                      "updates_per_call": config.jax.updates_per_call, "pool": config.pool.weights,
                      "advisor": config.advisor, "active_snapshots": config.jax.active_snapshots,
                      "self_play": config.jax.self_play,
                      "steps_per_sample": real.samples[0]["steps"],
                      "mean_episode_decisions": round(real.episode_length, 1), "players": env.num_players},
            "compile_s": {"game": real.compile_s, "ceiling": ceiling.compile_s},
            "training_steps_per_s": rates,
            "ceiling_steps_per_s": spread([s["steps_per_s"] for s in ceiling.samples]),
            "training_steps_per_cpu_s": spread([s["steps_per_cpu_s"] for s in real.samples]),
            "ceiling_steps_per_cpu_s": spread([s["steps_per_cpu_s"] for s in ceiling.samples]),
            "ratio": spread([r["steps_per_s"] / c["steps_per_s"]
                             for r, c in zip(real.samples, ceiling.samples, strict=True)]),
            "over_sb3": over_sb3,
            "meets_target": rates["median"] >= JAX_TARGET and (over_sb3 is None or over_sb3 >= JAX_OVER_SB3),
            "samples": {"training": real.samples, "ceiling": ceiling.samples},
        })
    return results


def render_jax(results: list[dict[str, Any]]) -> list[str]:
    lines = ["", "## The JAX trainer (backend: jax)", "",
             f"One call of the jitted loop per sample (whole PPO updates: acting, engine, opponents, GAE, epochs), "
             f"round-robin with its zero-cost ceiling. Targets (issue 24): at least {JAX_TARGET:,} decisions/s and "
             f"at least {JAX_OVER_SB3:g} times the SB3 trainer's rate of the same game in this run (*x SB3*). "
             "Compile: the warm-up call (compilation plus one call), not part of the rates.", "",
             "| game | config | training steps/s | ceiling steps/s | ratio | training steps/CPU-s | "
             "ceiling steps/CPU-s | x SB3 | meets target | compile s | players | mean episode decisions | net | "
             "envs x steps | epochs | self-play share | pool |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|---:|---:|---|"]
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['game']} | skipped: {r['skipped']} |" + "  |" * 15)
            continue
        s = r["setup"]
        pool = ", ".join(f"{k} {v:g}" for k, v in s["pool"].items())
        over = "-" if r["over_sb3"] is None else f"{r['over_sb3']:.1f}"
        lines.append(f"| {r['game']} | {r['config']} | {_cell(r['training_steps_per_s'])} | "
                     f"{_cell(r['ceiling_steps_per_s'])} | {_cell(r['ratio'], 2)} | "
                     f"{_cell(r['training_steps_per_cpu_s'])} | {_cell(r['ceiling_steps_per_cpu_s'])} | {over} | "
                     f"{'yes' if r['meets_target'] else 'no'} | {r['compile_s']['game']:.0f} | {s['players']} | "
                     f"{s['mean_episode_decisions']} | {s['net_arch']} {s['network']} | {s['n_envs']} x {s['n_steps']} "
                     f"| {s['n_epochs']} | {s.get('self_play', 0):g} | {pool} |")
    return lines


def _cell(values: dict[str, float], digits: int = 0) -> str:
    return f"{values['median']:,.{digits}f} ({values['min']:,.{digits}f}-{values['max']:,.{digits}f})"


def render_markdown(report: dict[str, Any]) -> str:
    if not report["results"]:
        return "\n".join(["# Training throughput", "", f"Generated by `{report['command']}` on {report['date']}.",
                          *render_jax(report.get("jax", [])), "", "## Machine", "",
                          *machine_lines(report["machine"])]) + "\n"
    lines = [
        "# Training throughput: MaskablePPO on each game against the zero-cost ceiling", "",
        f"Generated by `{report['command']}` on {report['date']}. {report['settings']['repeats']} repeats per row, "
        "measured round-robin (game, ceiling, game, ...); each cell is the median over repeats with (min-max). "
        "A step is one learner decision (opponents' decisions happen inside it). The ratio is taken per repeat "
        "(paired). CPU-time rates leave out the time this process lost to other processes on the shared machine; "
        f"the target (ratio >= {TARGET}) is judged on them, except for a config with `vec_env: async`, whose envs "
        "step in a worker process that this process's CPU time leaves out: it is judged on wall time. "
        "*Env share*: the part of the training process's CPU "
        "time spent inside the vector env's `step_wait` (rules, opponents, encoding and SB3's per-step "
        "bookkeeping); the rest of the gap to the ceiling is the training loop running slower around a real "
        "environment (caches, episode bookkeeping).", "",
        "| game | config | training steps/s | ceiling steps/s | ratio | training steps/CPU-s | ceiling steps/CPU-s | "
        "ratio (CPU time) | judged on | meets target | env share of CPU time |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for r in report["results"]:
        lines.append(f"| {r['game']} | {r['setup']['config']} | {_cell(r['training_steps_per_s'])} | "
                     f"{_cell(r['ceiling_steps_per_s'])} | {_cell(r['ratio'], 2)} | "
                     f"{_cell(r['training_steps_per_cpu_s'])} | {_cell(r['ceiling_steps_per_cpu_s'])} | "
                     f"{_cell(r['ratio_cpu'], 2)} | {r.get('judged_on', 'CPU time')} | "
                     f"{'yes' if r['meets_target'] else 'no'} | "
                     f"{_cell(r['env_share'], 2)} |")
    lines += ["", "## Where the CPU time goes", "",
              "CPU microseconds per learner decision, median over repeats, by part of `learn`: the env step "
              "(`step_wait`), the policy's forward passes while collecting rollouts, the PPO update, and the rest. "
              "The gap to the ceiling is the env step plus what the same network code loses by running between "
              "env steps (the *slowdown* columns: real minus ceiling). The forward pass, called once per "
              "vector step, loses the most. It is not the data: the same forward on the same batch also slows down "
              "after a pure-Python loop that allocates nothing (RW's network: 689 to 1,111 us a call), so it is "
              "the processor's caches and predictors, warmed by other code when the call begins. For a `vec_env: "
              "async` row the env step is this process waiting for (and unpickling) the worker's rollout; there "
              "is no forward pass per vector step, and the one batched pass that recomputes the rollout's values "
              "and log-probabilities is part of the rest.", "",
              "| game | row | env step | policy forward | PPO update | rest | total | slowdown: forward | "
              "slowdown: update + rest |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in report["results"]:
        parts = r.get("cpu_us_per_step")
        if not parts:
            continue
        real, ceiling = parts["game"], parts["ceiling"]
        for kind, row in (("training", real), ("ceiling", ceiling)):
            cells = " | ".join(f"{row[p]:.1f}" for p in PARTS)
            slow = (f"{real['policy forward'] - ceiling['policy forward']:+.1f} | "
                    f"{real['PPO update'] + real['rest'] - ceiling['PPO update'] - ceiling['rest']:+.1f}"
                    if kind == "training" else "- | -")
            lines.append(f"| {r['game']} | {kind} | {cells} | {sum(row.values()):.1f} | {slow} |")
    lines += ["", "## Setups (from each game's committed config)", "",
              "| game | players | vec_env | n_envs | n_steps | batch | epochs | net | torch threads | pool | "
              "mean episode length | steps per sample |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        s = r["setup"]
        pool = ", ".join(f"{k} {v:g}" for k, v in s["pool"].items())
        lines.append(f"| {r['game']} | {s['players']} | {s.get('vec_env', 'dummy')} | {s['n_envs']} | {s['n_steps']} | "
                     f"{s['batch_size']} | "
                     f"{s['n_epochs']} | {s['net_arch']} | {s['torch_threads']} | {pool} | "
                     f"{s['mean_episode_length']} | {s['steps_per_sample']:,} |")
    if report.get("jax"):
        lines += render_jax(report["jax"])
    lines += ["", "## Machine", ""]
    lines += machine_lines(report["machine"])
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = CommandParser(prog="python -m benchmarks.training_throughput", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", help="comma-separated env names (default: every registered game)")
    parser.add_argument("--repeats", type=positive_int, default=5)
    parser.add_argument("--rollouts", type=positive_int, default=4, help="rollouts timed per sample (default 4)")
    parser.add_argument("--quick", action="store_true", help="1 repeat of 1 rollout, written to results/quick/")
    parser.add_argument("--out", type=Path, help="output folder (default benchmarks/results)")
    parser.add_argument("--backends", default="sb3,jax", help="comma-separated trainers to time: sb3, jax")
    args = parser.parse_args(argv)
    games = select_games(args.games)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or set(backends) - {"sb3", "jax"}:
        parser.error(f"--backends: give sb3, jax or both, got {args.backends!r}")
    repeats, rollouts = (1, 1) if args.quick else (args.repeats, args.rollouts)
    out = output_dir(args)
    machine = machine_description()
    results = measure(games, repeats, rollouts) if "sb3" in backends else []
    sb3_rates = {r["game"]: r["training_steps_per_s"]["median"] for r in results}
    jax_results = measure_jax(games, repeats, sb3_rates) if "jax" in backends else []
    machine["load_average_at_end"] = machine_description()["load_average_at_start"]
    if "sb3" in backends:
        machine["torch"] = __import__("torch").__version__
        machine["stable_baselines3"] = __import__("stable_baselines3").__version__
        machine["sb3_contrib"] = __import__("sb3_contrib").__version__
    if "jax" in backends:
        machine["jax"] = __import__("jax").__version__
        machine["optax"] = __import__("optax").__version__
    report = {**run_stamp("benchmarks.training_throughput", argv),
              "settings": {"repeats": repeats, "rollouts": rollouts, "target": TARGET, "jax_target": JAX_TARGET,
                           "jax_over_sb3": JAX_OVER_SB3, "backends": backends},
              "machine": machine, "results": results, "jax": jax_results}
    write_atomic(out / "training_throughput.json", json.dumps(report, indent=2) + "\n")
    write_atomic(out / "training_throughput.md", render_markdown(report))
    print(render_markdown(report))
    return report


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.training_throughput"))
