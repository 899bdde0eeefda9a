"""Throughput of the JAX Battlecards engine against the Python engine and Pgx ``leduc_holdem``, in one run.

Run from the repository root (needs the ``jax`` extra)::

    python -m benchmarks.jax_battlecards_speed                    # 2 and 6 players, batches 1024-16384
    python -m benchmarks.jax_battlecards_speed --players 2 --batches 4096 --steps 100 --quick

=========================  ===================================================================================
row                        what one timed decision is
=========================  ===================================================================================
``battlecards N=n B=b``    one ``env.step`` of ``card_envs.jax.make("battlecards_v0", num_players=n)`` in a batch
                           of ``b`` states, inside one jitted ``lax.scan``: a uniformly random legal action per
                           state (``core.random_legal_actions``), the vmapped step (observation of the player to
                           act included, as Pgx computes it), and auto-reset of finished games
                           (``core.reset_finished`` with ``slots = b // 64``; a finished game waits at most a few
                           steps, and only decisions actually made are counted)
``python engine N=n``      one decision of the Python rules engine (``benchmarks.throughput.engine_loop``:
                           ``legal_actions`` + ``apply``, no observation), the anchor of the issue's 10x target
``leduc_holdem B=b``       Pgx's ``leduc_holdem`` through the same scan (every finished game re-dealt at once)
=========================  ===================================================================================

Each row reports the median over ``--repeats`` of decisions per wall second and per CPU second of this process
(the machine is shared: the CPU rate leaves out time taken by other processes), the compile time of the scan, and
the ratios to the Python engine and to leduc measured in the same run. The load average (``uptime``) is recorded
before and after. Results: ``results/jax_battlecards_speed.md`` and ``.json`` (``--quick``: ``results/quick/``),
written to a temporary file and renamed into place; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python benchmarks/jax_battlecards_speed.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import pgx  # noqa: E402

import card_envs  # noqa: E402
from benchmarks.throughput import engine_loop  # noqa: E402
from card_envs.jax import core  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def scan_runner(env: Any, batch: int, steps: int, slots: int | None) -> Any:
    """``steps`` batched decisions with random legal actions and auto-reset, jitted as one ``lax.scan``."""
    step = jax.vmap(env.step)

    def run(state: Any, key: jax.Array) -> tuple[Any, jax.Array]:
        def body(carry: tuple[Any, jax.Array], _: None) -> tuple[tuple[Any, jax.Array], jax.Array]:
            state, key = carry
            key, act_key, step_key, deal_key = jax.random.split(key, 4)
            live = ~(state.terminated | state.truncated)
            actions = core.random_legal_actions(act_key, state.legal_action_mask)
            state = step(state, actions, jax.random.split(step_key, batch))
            state = core.reset_finished(env, state, deal_key, slots)
            return (state, key), live.sum()

        (state, key), decided = jax.lax.scan(body, (state, key), None, length=steps)
        return state, decided.sum()

    return jax.jit(run)


def measure(env: Any, batch: int, steps: int, slots: int | None, repeats: int) -> dict[str, Any]:
    keys = jax.random.split(jax.random.PRNGKey(0), batch)
    state = jax.jit(jax.vmap(env.init))(keys)
    run = scan_runner(env, batch, steps, slots)
    start = time.perf_counter()
    compiled = run.lower(state, jax.random.PRNGKey(1)).compile()
    compile_seconds = time.perf_counter() - start
    state, decided = compiled(state, jax.random.PRNGKey(1))  # warm-up: reach mid-game positions
    jax.block_until_ready(decided)
    wall, cpu = [], []
    for repeat in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        state, decided = compiled(state, jax.random.PRNGKey(2 + repeat))
        decisions = int(decided)
        wall.append(decisions / (time.perf_counter() - start))
        cpu.append(decisions / (time.process_time() - cpu_start))
    return {"batch": batch, "steps": steps, "compile_s": round(compile_seconds, 2),
            "decisions_per_s": statistics.median(wall), "decisions_per_cpu_s": statistics.median(cpu),
            "samples_wall": wall, "samples_cpu": cpu}


def python_engine(players: int, seconds: float, repeats: int) -> dict[str, Any]:
    game = card_envs.make_game("battlecards_v0", num_players=players)
    samples = [engine_loop(game, seconds, seed) for seed in range(repeats)]
    return {"decisions_per_s": statistics.median(s.steps / s.seconds for s in samples),
            "decisions_per_cpu_s": statistics.median(s.steps / s.cpu_seconds for s in samples)}


def report(rows: list[dict[str, Any]], settings: dict[str, Any]) -> str:
    lines = [
        "# JAX Battlecards throughput",
        "",
        f"Command: `{settings['command']}`  ",
        f"Date: {settings['date']}; load average before {settings['load_before']}, after {settings['load_after']} "
        f"on {os.cpu_count()} cores; jax {jax.__version__}, pgx {pgx.__version__}.",
        "",
        "| row | batch | decisions/s | per CPU s | compile s | x Python (wall) | x Python (CPU) | / leduc (CPU) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['row']} | {row.get('batch', '')} | {row['decisions_per_s']:,.0f} "
            f"| {row['decisions_per_cpu_s']:,.0f} | {row.get('compile_s', '')} | {row.get('x_python_wall', '')} "
            f"| {row.get('x_python_cpu', '')} | {row.get('of_leduc_cpu', '')} |")
    lines += ["", "Targets (issue 23): >= 1,000,000 decisions/s for 2 players, >= 500,000 for 6 players, >= 10x the "
              "Python engine in the same run, compile < 90 s per config. On a busy machine compare the CPU columns.",
              ""]
    return "\n".join(lines)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
        handle.write(text)
    os.replace(handle.name, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 6])
    parser.add_argument("--batches", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--steps", type=int, default=200, help="decisions per state per timed scan")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--python-seconds", type=float, default=3.0)
    parser.add_argument("--quick", action="store_true", help="1 repeat, 50 steps; results/quick/")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.steps, args.python_seconds = 1, 50, 1.0
    out = args.out or (RESULTS / "quick" if args.quick else RESULTS)
    settings = {"command": "python -m benchmarks.jax_battlecards_speed " + " ".join(argv or sys.argv[1:]),
                "date": dt.datetime.now().isoformat(timespec="seconds"), "load_before": load()}
    rows: list[dict[str, Any]] = []
    leduc = pgx.make("leduc_holdem")
    leduc_rates = {}
    for batch in args.batches:
        log(f"leduc_holdem B={batch} ...")
        result = measure(leduc, batch, args.steps, None, args.repeats)
        leduc_rates[batch] = result["decisions_per_cpu_s"]
        rows.append({"row": "leduc_holdem (Pgx)", **result})
    for players in args.players:
        log(f"python engine N={players} ...")
        python = python_engine(players, args.python_seconds, args.repeats)
        rows.append({"row": f"python engine N={players}", **python})
        env = core.make("battlecards_v0", num_players=players)
        for batch in args.batches:
            log(f"battlecards N={players} B={batch} ...")
            result = measure(env, batch, args.steps, max(1, batch // 64), args.repeats)
            result["x_python_wall"] = round(result["decisions_per_s"] / python["decisions_per_s"], 2)
            result["x_python_cpu"] = round(result["decisions_per_cpu_s"] / python["decisions_per_cpu_s"], 2)
            result["of_leduc_cpu"] = round(result["decisions_per_cpu_s"] / leduc_rates[batch], 3)
            rows.append({"row": f"battlecards N={players}", **result})
            log(f"  {result['decisions_per_s']:,.0f} decisions/s, {result['decisions_per_cpu_s']:,.0f} per CPU s, "
                f"x{result['x_python_cpu']} Python (CPU), compile {result['compile_s']} s")
    settings["load_after"] = load()
    write(out / "jax_battlecards_speed.json", json.dumps({"settings": settings, "rows": rows}, indent=1))
    write(out / "jax_battlecards_speed.md", report(rows, settings))
    print(report(rows, settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
