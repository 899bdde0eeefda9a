"""Throughput of every registered card_envs game against PettingZoo and OpenSpiel anchors, in one run.

Run from the repository root::

    python -m benchmarks.throughput                      # 5 repeats x 2 s per row, writes benchmarks/results/
    python -m benchmarks.throughput --quick              # smoke run, writes benchmarks/results/quick/
    python -m benchmarks.throughput --games revolutionary_war_v0 --repeats 3 --seconds 1

=====================  ==================================================================================
row                    what one timed step is
=====================  ==================================================================================
``<game> env()``       one decision through the standard PettingZoo loop on ``card_envs.make(game, **config)``:
                       ``env.last()``, a random legal action from ``obs["action_mask"]``, ``env.step``
                       (episodes end with the usual ``step(None)`` calls, which are timed but not counted)
``<game> engine``      one decision on the raw rules engine: ``state.legal_actions()``, ``state.apply(a)``
                       (``game.new_state(rng)`` per episode is timed too)
``leduc_holdem_v4``    PettingZoo classic, through the very same env() loop function
``texas_holdem_v4``    PettingZoo classic (limit hold'em), same env() loop
``hearts (pyspiel)``   one player decision of OpenSpiel hearts via ``pyspiel``; chance nodes (the pass
                       direction and the 52-card deal) are played too but not counted as steps
``hearts (pyspiel +    the same, also building ``state.information_state_tensor(player)`` for the acting
infostate)``           player before every decision (what an RL agent would read)
=====================  ==================================================================================

Every loop picks actions the same way (``ACTION_SELECTION``), so ours and the anchors pay the same
agent overhead. Rows are measured round-robin (repeat 1 of every row, then repeat 2, ...) so a busy
machine slows every row alike, and each ratio is taken per repeat (paired) before its median. Each
sample records wall time (the headline rates) and this process's CPU time (steadier on a shared machine).

Results: ``results/throughput.md`` (tables and the machine description) and ``results/throughput.json``,
each written to a temporary file in the same directory and renamed into place. Progress goes to stderr.
The anchors are optional (extra ``bench``); a missing one is reported and skipped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.metadata
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python benchmarks/throughput.py``: make card_envs importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import card_envs  # noqa: E402
from card_envs.core.commands import CommandParser, guarded  # noqa: E402
from card_envs.core.errors import ConfigError  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
QUICK_RESULTS_DIR = RESULTS_DIR / "quick"
INSTALL_HINT = "pip install -e .[bench]"
STREAM_SIZE = 1 << 16  # random floats per stream; cycled (index & STREAM_MASK)
STREAM_MASK = STREAM_SIZE - 1
SPEED_TARGET = 2.0  #: env() steps/s must be at least this multiple of leduc_holdem_v4 env() steps/s
TARGET_ANCHOR = "leduc_holdem_v4 env()"
HANDS_ANCHOR = "hearts (pyspiel)"

ACTION_SELECTION = (
    "Every loop (ours and the anchors) chooses actions the same way: legal = the legal action ids "
    "(np.flatnonzero(obs['action_mask']) in env() loops, state.legal_actions() in engine and pyspiel loops), "
    f"action = legal[int(u * len(legal))], where u is the next float of a precomputed stream of {STREAM_SIZE:,} "
    "uniform floats (numpy default_rng(seed).random, cycled; seed = --seed + repeat index). OpenSpiel chance "
    "nodes are sampled the same way over state.legal_actions(), which is exact because hearts' chance outcomes "
    "are uniform (checked before timing)."
)

#: Configurations to measure per game, when not just the default. An entry whose game is not registered is
#: ignored; a config the game rejects is reported as skipped. ``hands_per_game`` marks configs whose episode
#: is exactly that many hands, so games/s can be compared with OpenSpiel hearts hands/s.
BENCH_CONFIGS: dict[str, list[dict[str, Any]]] = {
    "battlecards_v0": [
        {"config": {"num_players": 2}},
        {"config": {"num_players": 4}},
        {"config": {"num_players": 6}},
    ],
    "revolution_v0": [
        {"config": {}},
        {"config": {"num_hands": 1, "max_extra_hands": 0}, "hands_per_game": 1},
    ],
}


class AnchorMissing(Exception):
    """An optional anchor package is not installed."""


@dataclass
class Sample:
    """One timed measurement: decisions, finished episodes, wall time and this process's CPU time.

    Wall time is the headline; CPU time leaves out the moments other processes held the core, so on a
    shared machine its rates (and ratios) are the steadier ones."""

    steps: int
    games: int
    seconds: float
    cpu_seconds: float

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def steps_per_cpu_s(self) -> float:
        return self.steps / self.cpu_seconds


@dataclass
class Workload:
    """One table row: a loop to time. ``run(seconds, seed)`` plays whole episodes until ``seconds`` pass."""

    row: str
    game: str
    interface: str
    config: dict[str, Any]
    anchor: bool
    run: Callable[[float, int], Sample] = field(repr=False)
    hands_per_game: int | None = None
    samples: list[Sample] = field(default_factory=list)
    skipped: str | None = None


# -- the timed loops ---------------------------------------------------------------------------------------


def action_stream(seed: int) -> list[float]:
    """The precomputed uniform floats that every loop maps onto its legal set."""
    return np.random.default_rng(seed).random(STREAM_SIZE).tolist()


def env_loop(make_env: Callable[[], Any], seconds: float, seed: int, max_games: int | None = None) -> Sample:
    """The standard PettingZoo AEC agent loop with random legal actions: whole episodes until ``seconds`` pass
    (or ``max_games`` are played)."""
    floats = action_stream(seed)
    env = make_env()
    env.reset(seed=seed)
    flatnonzero = np.flatnonzero
    i = steps = games = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = flatnonzero(obs["action_mask"])
                action = int(legal[int(floats[i] * len(legal))])
                i = (i + 1) & STREAM_MASK
                steps += 1
            env.step(action)
        games += 1
        now = time.perf_counter()
        if now >= deadline or games == max_games:
            break
        env.reset()
    env.close()
    return Sample(steps, games, now - start, time.process_time() - cpu_start)


def engine_loop(game: Any, seconds: float, seed: int, max_games: int | None = None) -> Sample:
    """Random legal play on a card_envs rules engine (no PettingZoo); whole episodes as in :func:`env_loop`."""
    floats = action_stream(seed)
    rng = np.random.default_rng(seed)
    i = steps = games = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        state = game.new_state(rng)
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[int(floats[i] * len(legal))])
            i = (i + 1) & STREAM_MASK
            steps += 1
        games += 1
        now = time.perf_counter()
        if now >= deadline or games == max_games:
            break
    return Sample(steps, games, now - start, time.process_time() - cpu_start)


def pyspiel_loop(game: Any, seconds: float, seed: int, information_state: bool = False,
                 max_games: int | None = None) -> Sample:
    """Random play of an OpenSpiel game including chance nodes; only player decisions count as steps."""
    floats = action_stream(seed)
    i = steps = games = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            action = legal[int(floats[i] * len(legal))]
            i = (i + 1) & STREAM_MASK
            if not state.is_chance_node():
                if information_state:
                    state.information_state_tensor(state.current_player())
                steps += 1
            state.apply_action(action)
        games += 1
        now = time.perf_counter()
        if now >= deadline or games == max_games:
            break
    return Sample(steps, games, now - start, time.process_time() - cpu_start)


def check_uniform_chance(game: Any, seed: int = 0) -> None:
    """Raise unless every chance node of one random episode has uniform outcomes in legal_actions() order."""
    floats = action_stream(seed)
    state = game.new_initial_state()
    i = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            probabilities = [p for _, p in outcomes]
            if [a for a, _ in outcomes] != state.legal_actions() or max(probabilities) - min(probabilities) > 1e-12:
                raise RuntimeError(f"{game}: chance outcomes are not uniform; uniform chance sampling would be wrong")
        legal = state.legal_actions()
        state.apply_action(legal[int(floats[i] * len(legal))])
        i += 1


# -- building the rows -------------------------------------------------------------------------------------


def config_label(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "default"


def bench_configs(name: str) -> list[dict[str, Any]]:
    """The configs to measure for ``name``: from ``BENCH_CONFIGS``, else the default config."""
    return BENCH_CONFIGS.get(name, [{"config": {}}])


def our_workloads(names: Sequence[str]) -> list[Workload]:
    """env() and engine rows for every (game, config) to measure."""
    workloads = []
    for name in names:
        for entry in bench_configs(name):
            config = dict(entry["config"])
            label = f"{name} [{config_label(config)}]"
            hands = entry.get("hands_per_game")
            workloads.append(Workload(
                f"{label} env()", name, "env()", config, False,
                lambda seconds, seed, n=name, c=config: env_loop(lambda: card_envs.make(n, **c), seconds, seed),
                hands))
            workloads.append(Workload(
                f"{label} engine", name, "engine", config, False,
                lambda seconds, seed, n=name, c=config: engine_loop(card_envs.make_game(n, **c), seconds, seed),
                hands))
    return workloads


def _import(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise AnchorMissing(f"{module} is not importable ({error}); install {package} with `{INSTALL_HINT}`") from None


def pettingzoo_classic(env_name: str) -> Callable[[], Any]:
    """The ``env()`` factory of a PettingZoo classic environment (needs pettingzoo[classic], i.e. rlcard)."""
    with warnings.catch_warnings():  # rlcard's import-time DeprecationWarning is not about the benchmark
        warnings.simplefilter("ignore", DeprecationWarning)
        _import("rlcard", "rlcard (pettingzoo[classic])")
        return _import(f"pettingzoo.classic.{env_name}", "pettingzoo[classic]").env


def hearts_game() -> Any:
    pyspiel = _import("pyspiel", "open_spiel")
    game = pyspiel.load_game("hearts")
    check_uniform_chance(game)
    return game


def anchor_workloads() -> list[Workload]:
    """The anchors, in a fixed order. A missing package leaves a skipped row that says what to install."""
    workloads = []
    for env_name in ("leduc_holdem_v4", "texas_holdem_v4"):
        workload = Workload(f"{env_name} env()", env_name, "env()", {}, True, lambda s, r: Sample(0, 0, 1.0, 1.0))
        try:
            factory = pettingzoo_classic(env_name)
            workload.run = lambda seconds, seed, f=factory: env_loop(f, seconds, seed)
        except AnchorMissing as missing:
            workload.skipped = str(missing)
        workloads.append(workload)
    try:
        hearts = hearts_game()
        skipped = None
    except AnchorMissing as missing:
        hearts, skipped = None, str(missing)
    for information_state, row in ((False, HANDS_ANCHOR), (True, "hearts (pyspiel + infostate)")):
        workload = Workload(row, "hearts", "pyspiel + infostate" if information_state else "pyspiel", {}, True,
                            lambda seconds, seed, i=information_state: pyspiel_loop(hearts, seconds, seed, i),
                            hands_per_game=1, skipped=skipped)
        workloads.append(workload)
    return workloads


# -- measuring ---------------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(workloads: Sequence[Workload], repeats: int, seconds: float, seed: int,
            progress: Callable[[str], None] = log) -> None:
    """Warm up every row once, then time ``repeats`` round-robin rounds. A row whose game raises is marked
    skipped (with the error) and the others go on."""
    warmup = min(0.2, seconds / 4)
    for workload in workloads:
        if workload.skipped:
            progress(f"skip {workload.row}: {workload.skipped}")
            continue
        try:
            workload.run(warmup, seed)
        except Exception as error:  # a game rejecting a benchmark config must not sink the whole run
            workload.skipped = f"{type(error).__name__}: {error}"
            progress(f"skip {workload.row}: {workload.skipped}")
    for repeat in range(repeats):
        for workload in [w for w in workloads if not w.skipped]:
            try:
                sample = workload.run(seconds, seed + repeat)
            except Exception as error:  # a game bug shows in the results instead of losing every other row
                workload.skipped = f"failed in repeat {repeat + 1}: {type(error).__name__}: {error}"
                workload.samples.clear()
                progress(f"skip {workload.row}: {workload.skipped}")
                continue
            workload.samples.append(sample)
            progress(f"[{repeat + 1}/{repeats}] {workload.row:<48} {sample.steps_per_s:>12,.0f} steps/s "
                     f"{sample.games_per_s:>10,.1f} games/s  (CPU time: {sample.steps_per_cpu_s:,.0f} steps/s)")


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median, min, max and quartiles (inclusive method) of per-repeat values."""
    quartiles = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "q1": quartiles[0], "q3": quartiles[2]}


def row_summary(workload: Workload) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "row": workload.row, "game": workload.game, "interface": workload.interface,
        "config": workload.config, "anchor": workload.anchor, "hands_per_game": workload.hands_per_game,
        "skipped": workload.skipped, "samples": [asdict(s) for s in workload.samples],
    }
    if workload.samples:
        summary["steps_per_s"] = spread([s.steps_per_s for s in workload.samples])
        summary["games_per_s"] = spread([s.games_per_s for s in workload.samples])
        summary["steps_per_cpu_s"] = spread([s.steps_per_cpu_s for s in workload.samples])
        summary["steps_per_game"] = sum(s.steps for s in workload.samples) / sum(s.games for s in workload.samples)
    return summary


def paired_ratio(ours: Workload, anchor: Workload, metric: str) -> dict[str, float]:
    """Per-repeat ratio of ``metric`` (ours / anchor), summarized. Repeat k of both rows ran in the same round."""
    pairs = zip(ours.samples, anchor.samples, strict=False)
    return spread([getattr(a, metric) / getattr(b, metric) for a, b in pairs])


def ratios(workloads: Sequence[Workload]) -> list[dict[str, Any]]:
    """steps/s (wall and CPU time) of every measured row of ours against every measured anchor; hands/s where
    both rows' games are a known number of hands."""
    ours = [w for w in workloads if not w.anchor and w.samples]
    anchors = [w for w in workloads if w.anchor and w.samples]
    result = []
    for our in ours:
        for anchor in anchors:
            for metric in ("steps_per_s", "steps_per_cpu_s"):
                result.append({"row": our.row, "anchor": anchor.row, "metric": metric,
                               **paired_ratio(our, anchor, metric)})
            if our.hands_per_game and anchor.hands_per_game:
                hands = paired_ratio(our, anchor, "games_per_s")
                scale = our.hands_per_game / anchor.hands_per_game
                result.append({"row": our.row, "anchor": anchor.row, "metric": "hands_per_s",
                               **{k: v * scale for k, v in hands.items()}})
    return result


def speed_targets(workloads: Sequence[Workload]) -> list[dict[str, Any]]:
    """Each of our env() rows against ``SPEED_TARGET`` x leduc_holdem_v4 env() steps/s."""
    leduc = next((w for w in workloads if w.row == TARGET_ANCHOR and w.samples), None)
    if leduc is None:
        return []
    targets = []
    for workload in workloads:
        if not workload.anchor and workload.interface == "env()" and workload.samples:
            ratio = paired_ratio(workload, leduc, "steps_per_s")
            targets.append({"row": workload.row, "ratio_to_leduc": ratio,
                            "ratio_to_leduc_cpu": paired_ratio(workload, leduc, "steps_per_cpu_s"),
                            "target": SPEED_TARGET, "meets_target": ratio["median"] >= SPEED_TARGET})
    return targets


# -- the report --------------------------------------------------------------------------------------------


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str | None:
    try:
        root = Path(__file__).resolve().parents[1]
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _load_average() -> list[float] | None:
    return [round(load, 2) for load in os.getloadavg()] if hasattr(os, "getloadavg") else None


def machine_description() -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_model": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": affinity,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium": _version("gymnasium"),
        "pettingzoo": _version("pettingzoo"),
        "rlcard": _version("rlcard"),
        "open_spiel": _version("open_spiel"),
        "card_envs": card_envs.__version__,
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        # tracked files changed since that commit (other work in progress in a shared checkout)
        "git_uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "load_average_at_start": _load_average(),
    }


def build_report(workloads: Sequence[Workload], settings: dict[str, Any], machine: dict[str, Any],
                 date: str, command: str) -> dict[str, Any]:
    """Everything ``throughput.json`` holds: settings, machine, every row with its samples, ratios, targets."""
    return {
        "schema": 1,
        "date": date,
        "command": command,
        "settings": settings,
        "action_selection": ACTION_SELECTION,
        "machine": machine,
        "rows": [row_summary(w) for w in workloads],
        "ratios": ratios(workloads),
        "speed_targets": speed_targets(workloads),
    }


def _rate(values: dict[str, float] | None, digits: int = 0) -> str:
    if values is None:
        return "-"
    return f"{values['median']:,.{digits}f} ({values['min']:,.{digits}f}-{values['max']:,.{digits}f})"


def _ratio(values: dict[str, float]) -> str:
    return f"{values['median']:.2f}x ({values['min']:.2f}-{values['max']:.2f})"


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable results page."""
    settings, machine = report["settings"], report["machine"]
    lines = [
        "# Throughput: card_envs against PettingZoo classic and OpenSpiel",
        "",
        f"Generated by `{report['command']}` on {report['date']}. "
        f"{settings['repeats']} repeats of {settings['seconds']:g} s per row, measured round-robin; "
        "each cell is the median over repeats with (min-max). A step is one player decision; "
        "games/s counts finished episodes (one hand for hearts). Rates use wall time; the CPU-time column "
        "divides by this process's CPU time instead, which leaves out time lost to other processes on a "
        "shared machine.",
        "",
        "| row | interface | config | steps/s | games/s | steps/game | steps/s (CPU time) |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for row in report["rows"]:
        config = config_label(row["config"]) if not row["anchor"] else "anchor"
        if row["skipped"]:
            lines.append(f"| {row['row']} | {row['interface']} | {config} | skipped: {row['skipped']} | | | |")
        else:
            lines.append(f"| {row['row']} | {row['interface']} | {config} | {_rate(row['steps_per_s'])} | "
                         f"{_rate(row['games_per_s'], 1)} | {row['steps_per_game']:.1f} | "
                         f"{_rate(row['steps_per_cpu_s'])} |")
    anchors = [r["row"] for r in report["rows"] if r["anchor"] and not r["skipped"]]
    for metric, title in (("steps_per_s", "steps/s ratios, ours / anchor"),
                          ("steps_per_cpu_s", "steps per CPU-second ratios, ours / anchor")):
        metric_ratios = [r for r in report["ratios"] if r["metric"] == metric]
        if not (anchors and metric_ratios):
            continue
        lines += ["", f"## {title} (paired per repeat: median (min-max))", "",
                  "| row | " + " | ".join(anchors) + " |", "|---|" + "---:|" * len(anchors)]
        for row in dict.fromkeys(r["row"] for r in metric_ratios):
            cells = {r["anchor"]: _ratio(r) for r in metric_ratios if r["row"] == row}
            lines.append(f"| {row} | " + " | ".join(cells.get(a, "-") for a in anchors) + " |")
    hand_ratios = [r for r in report["ratios"] if r["metric"] == "hands_per_s"]
    if hand_ratios:
        lines += ["", "## hands/s ratios, ours / anchor", "", "| row | anchor | hands/s ratio |", "|---|---|---:|"]
        lines += [f"| {r['row']} | {r['anchor']} | {_ratio(r)} |" for r in hand_ratios]
    if report["speed_targets"]:
        lines += ["", f"## Speed target: env() steps/s >= {SPEED_TARGET:g}x {TARGET_ANCHOR} steps/s", "",
                  "| row | ratio to leduc | meets target | ratio to leduc (CPU time) |", "|---|---:|---|---:|"]
        lines += [f"| {t['row']} | {_ratio(t['ratio_to_leduc'])} | {'yes' if t['meets_target'] else 'NO'} | "
                  f"{_ratio(t['ratio_to_leduc_cpu'])} |" for t in report["speed_targets"]]
    lines += ["", "## How actions are chosen", "", report["action_selection"], "", "## Machine", ""]
    start_load, cpus = machine.get("load_average_at_start"), machine.get("usable_cpus") or machine.get("logical_cpus")
    end_load = settings.get("load_average_at_end") or start_load
    if start_load and cpus and max(start_load[0], end_load[0]) > cpus:
        lines += [f"The machine was busy (1-minute load average {start_load[0]:g} at the start, "
                  f"{end_load[0]:g} at the end, on {cpus} CPUs): wall-clock rates are "
                  "depressed and noisier; the CPU-time columns and the paired ratios are the ones to compare.", ""]
    lines += machine_lines(machine)
    lines += [f"- load average at end: {settings.get('load_average_at_end')}",
              f"- seed: {settings['seed']}", ""]
    return "\n".join(lines)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_results(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """``throughput.md`` and ``throughput.json`` in ``out_dir``, each written atomically."""
    markdown, data = out_dir / "throughput.md", out_dir / "throughput.json"
    write_atomic(data, json.dumps(report, indent=2) + "\n")
    write_atomic(markdown, render_markdown(report))
    return markdown, data


# -- command line ------------------------------------------------------------------------------------------


def machine_lines(machine: dict[str, Any]) -> list[str]:
    """The markdown bullet list of a :func:`machine_description`."""
    return [f"- {key.replace('_', ' ')}: {value}" for key, value in machine.items()]


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--out``, ``--quick`` and ``--quiet``, as the report-writing benchmarks share them (see :func:`output_dir`)."""
    parser.add_argument("--out", type=Path, help="output folder (default benchmarks/results, or results/quick)")
    parser.add_argument("--quick", action="store_true", help="write to benchmarks/results/quick/ (git-ignored)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def output_dir(args: argparse.Namespace) -> Path:
    """Where a benchmark parsed with :func:`add_output_arguments` writes its report."""
    return args.out or (QUICK_RESULTS_DIR if args.quick else RESULTS_DIR)


def run_stamp(module: str, argv: Sequence[str] | None) -> dict[str, str]:
    """``command`` (``python -m <module> <argv>``, ``sys.argv[1:]`` when ``argv`` is None) and UTC ``date``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    return {"command": shlex.join(["python", "-m", module, *arguments]),
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def select_games(requested: str | None) -> list[str]:
    """Registered games, in ``ENV_NAMES`` order, optionally restricted to a comma-separated list."""
    registered = list(card_envs.ENV_NAMES)
    if not requested:
        return registered
    wanted = [name.strip() for name in requested.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in registered]
    if unknown:
        raise ConfigError(f"--games: unknown {', '.join(unknown)}; registered: {', '.join(registered)}")
    return [name for name in registered if name in wanted]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = CommandParser(prog="python -m benchmarks.throughput", description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats per row (default 5; --quick 2)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="time budget of each measurement in seconds (default 2; --quick 0.2)")
    parser.add_argument("--games", default=None, help="comma-separated env names to measure (default: all)")
    parser.add_argument("--no-anchors", action="store_true", help="measure only our games")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 repeats x 0.2 s, results in results/quick/")
    parser.add_argument("--seed", type=int, default=0, help="base seed (repeat k uses seed + k)")
    parser.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    args = parser.parse_args(argv)
    args.repeats = args.repeats if args.repeats is not None else (2 if args.quick else 5)
    args.seconds = args.seconds if args.seconds is not None else (0.2 if args.quick else 2.0)
    args.out = args.out or (QUICK_RESULTS_DIR if args.quick else RESULTS_DIR)
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be >= 1 and --seconds > 0")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    games = select_games(args.games)
    machine = machine_description()
    stamp = run_stamp("benchmarks.throughput", argv)
    date, command = stamp["date"], stamp["command"]
    settings = {
        "repeats": args.repeats, "seconds": args.seconds, "seed": args.seed, "games": games,
    }
    workloads = our_workloads(games) + ([] if args.no_anchors else anchor_workloads())
    log(f"measuring {len(workloads)} rows x {args.repeats} repeats x {args.seconds:g} s; {ACTION_SELECTION}")
    measure(workloads, args.repeats, args.seconds, args.seed)
    settings["load_average_at_end"] = _load_average()
    report = build_report(workloads, settings, machine, date, command)
    markdown, data = write_results(report, args.out)
    for target in report["speed_targets"]:
        log(f"{target['row']}: {_ratio(target['ratio_to_leduc'])} leduc env() steps/s "
            f"({'meets' if target['meets_target'] else 'MISSES'} the {SPEED_TARGET:g}x target)")
    log(f"wrote {markdown} and {data}")
    return report


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.throughput"))
