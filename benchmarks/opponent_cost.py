"""Where a training env step goes, per game: each opponent's decisions, the learner's observation, the rest.

Run from the repository root::

    python -m benchmarks.opponent_cost                       # every game, 30,000 learner decisions each
    python -m benchmarks.opponent_cost --games revolution_v0 --decisions 100000
    python -m benchmarks.opponent_cost --quick               # smoke run, writes results/quick/

Each game's committed config (``configs/<game>.yaml``) builds one training env exactly as ``train`` does
(``train.trainer.make_env``: its options and its opponent pool, with one snapshot of a fresh policy so that
``self`` is drawn too). A learner that picks uniformly among its legal actions then takes ``--decisions``
steps (after a warm-up of a tenth as many), and the time is split by wrapping two methods of the env:

==========================  ======================================================================
part                        what it holds
==========================  ======================================================================
``opponent <name>``         one opponent's decisions (``SingleAgentEnv._opponent_action``): building
                            its decision (its view, the legal actions) and choosing; per opponent
                            name, with its calls per learner decision and its cost per call
``learner observation``     ``game.encode`` of the learner's view, once per step
``rules and rest``          everything else in ``step``/``reset``: applying every action, the
                            learner's mask, rewards, redeals, SB3's ``Monitor``
==========================  ======================================================================

Figures are microseconds per learner decision, by ``time.perf_counter`` (the process CPU clock costs a
system call per reading, which would distort the parts): run it on a quiet machine. The wrappers cost
about a tenth of a microsecond per call. ``benchmarks.training_throughput`` times the same env step
inside MaskablePPO training, where the processor's caches are shared with the network code, so its
env-step figure runs somewhat higher.

Results: ``results/opponent_cost.md`` and ``.json``, each written to a temporary file and renamed.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.throughput import machine_description, machine_lines, output_dir, run_stamp, select_games, write_atomic
from benchmarks.training_throughput import committed_config
from card_envs.core.commands import CommandParser, guarded
from card_envs.core.single_agent import SingleAgentEnv, _name


class _Split:
    """Time spent in the wrapped parts of one env, by label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def clear(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def _instrument(env: SingleAgentEnv, split: _Split) -> None:
    """Time ``env``'s opponent decisions (per opponent name) and its learner observations."""
    opponent_action, observation = env._opponent_action, env._observation
    clock = time.perf_counter

    def timed_opponent(opponent: Any, player: int) -> int:
        start = clock()
        try:
            return opponent_action(opponent, player)
        finally:
            label = f"opponent {_name(opponent)}"
            split.seconds[label] += clock() - start
            split.calls[label] += 1

    def timed_observation() -> np.ndarray:
        start = clock()
        try:
            return observation()
        finally:
            split.seconds["learner observation"] += clock() - start
            split.calls["learner observation"] += 1

    env._opponent_action = timed_opponent
    env._observation = timed_observation


def measure_game(game: str, decisions: int, seed: int = 0) -> dict[str, Any]:
    """The split of ``decisions`` learner steps of ``game``'s training env (see the module docstring)."""
    from train.pool import snapshot_of
    from train.trainer import make_env, make_vec_env, new_model

    config = committed_config(game)
    config.n_envs = 1
    model = new_model(config, make_vec_env(config, []), None)
    snapshot = snapshot_of(model.policy, "0", config.ppo.activation)
    env = make_env(config, 0, [snapshot])()
    inner: SingleAgentEnv = env.unwrapped
    split = _Split()
    _instrument(inner, split)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)

    def play(steps: int) -> None:
        for _ in range(steps):
            legal = np.flatnonzero(inner.action_masks())
            _, _, terminated, truncated, _ = env.step(int(legal[int(rng.integers(len(legal)))]))
            if terminated or truncated:
                env.reset()

    play(max(1, decisions // 10))
    split.clear()
    start = time.perf_counter()
    play(decisions)
    total = time.perf_counter() - start
    parts = {label: {"us_per_decision": 1e6 * seconds / decisions, "calls_per_decision": split.calls[label] / decisions,
                     "us_per_call": 1e6 * seconds / split.calls[label]}
             for label, seconds in sorted(split.seconds.items(), key=lambda item: -item[1])}
    opponents = sum(p["us_per_decision"] for label, p in parts.items() if label.startswith("opponent "))
    rest = 1e6 * total / decisions - sum(p["us_per_decision"] for p in parts.values())
    return {"game": game, "config": f"configs/{game.rsplit('_v', 1)[0]}.yaml", "pool": config.pool.weights,
            "env_options": config.env_options, "decisions": decisions,
            "env_step_us": 1e6 * total / decisions, "opponents_us": opponents, "rules_and_rest_us": rest,
            "parts": parts}


def render_markdown(report: dict[str, Any]) -> str:
    lines = ["# Where a training env step goes: opponents, observation, rules", "",
             f"Generated by `{report['command']}` on {report['date']}. Microseconds (wall clock, on a quiet "
             "machine) per learner decision (a uniformly random learner) in each game's training env, built from "
             "its committed config as `train` builds it; see `benchmarks/opponent_cost.py`.", "",
             "| game | env step | all opponents | learner observation | rules and rest | opponents' share |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in report["results"]:
        observation = r["parts"].get("learner observation", {"us_per_decision": 0.0})["us_per_decision"]
        lines.append(f"| {r['game']} | {r['env_step_us']:.1f} | {r['opponents_us']:.1f} | {observation:.1f} | "
                     f"{r['rules_and_rest_us']:.1f} | {r['opponents_us'] / r['env_step_us']:.2f} |")
    lines += ["", "## Each opponent", "", "| game | opponent | pool weight | calls per learner decision | "
              "us per call | us per learner decision |", "|---|---|---:|---:|---:|---:|"]
    for r in report["results"]:
        for label, part in r["parts"].items():
            if not label.startswith("opponent "):
                continue
            name = label.removeprefix("opponent ")
            weight = r["pool"].get(name, r["pool"].get("self") if name.startswith("self") else None)
            lines.append(f"| {r['game']} | {name} | {'' if weight is None else f'{weight:g}'} | "
                         f"{part['calls_per_decision']:.2f} | {part['us_per_call']:.1f} | "
                         f"{part['us_per_decision']:.1f} |")
    lines += ["", "## Machine", ""]
    lines += machine_lines(report["machine"])
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = CommandParser(prog="python -m benchmarks.opponent_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", help="comma-separated env names (default: every registered game)")
    parser.add_argument("--decisions", type=int, default=30_000, help="learner decisions timed per game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="2,000 decisions per game, written to results/quick/")
    parser.add_argument("--out", type=Path, help="output folder (default benchmarks/results)")
    args = parser.parse_args(argv)
    games = select_games(args.games)
    if args.decisions < 1:
        parser.error(f"--decisions must be >= 1, got {args.decisions}")
    decisions = 2_000 if args.quick else args.decisions
    out = output_dir(args)
    machine = machine_description()
    results = []
    for game in games:
        print(f"{game}: {decisions:,} learner decisions ...", file=sys.stderr, flush=True)
        results.append(measure_game(game, decisions, args.seed))
    machine["load_average_at_end"] = machine_description()["load_average_at_start"]
    report = {**run_stamp("benchmarks.opponent_cost", argv), "machine": machine, "results": results}
    write_atomic(out / "opponent_cost.json", json.dumps(report, indent=2) + "\n")
    write_atomic(out / "opponent_cost.md", render_markdown(report))
    print(render_markdown(report))
    return report


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.opponent_cost"))
