"""Where the time of one env() step goes, for any registered game.

    python -m benchmarks.profile_env revolutionary_war_v0 [--config '{"target_score": 100}'] [--seconds 2]

Prints two tables (markdown) to stdout, and to ``--out FILE`` if given:

1. a cost ladder, without any profiler: random play on the raw engine, then the same loop also
   building what the env builds every step (``legal_mask()``, ``view(player)``, ``encode(view)``),
   then picking the action from the mask as the env() loop's agent does, then ``raw_env`` and ``env()``
   through the PettingZoo agent loop. The differences between rungs are the per-step cost of each piece;
   the last two rungs add the adapter and the wrapper.
2. a cProfile of the ``env()`` loop, attributed to the engine protocol's entry points (cumulative time of
   ``apply``, ``legal_actions``, ``legal_mask``, ``view``, ``encode``, ``new_state``) and the rest (the
   adapter, PettingZoo's iterator and the agent), followed by the top functions by own time.

Actions are chosen as in ``benchmarks.throughput`` (the same float stream mapped onto the legal set).
"""

from __future__ import annotations

import cProfile
import json
import pstats
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python benchmarks/profile_env.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import card_envs  # noqa: E402
from benchmarks.throughput import (  # noqa: E402
    STREAM_MASK,
    Sample,
    action_stream,
    engine_loop,
    env_loop,
    write_atomic,
)
from card_envs.core.commands import CommandParser, guarded, json_object  # noqa: E402


def engine_plus_loop(game: Any, seconds: float, seed: int, *, mask: bool, view: bool, encode: bool,
                     agent_reads_mask: bool = False) -> Sample:
    """``engine_loop`` that also builds, for the player to act, what ``env()`` builds every step; with
    ``agent_reads_mask`` the action is picked from ``np.flatnonzero(mask)`` as in the env() loop."""
    floats = action_stream(seed)
    rng = np.random.default_rng(seed)
    flatnonzero = np.flatnonzero
    i = steps = games = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        state = game.new_state(rng)
        while not state.is_over:
            if mask:
                legal_mask = state.legal_mask()
            if view:
                seen = state.view(state.current_player)
                if encode:
                    game.encode(seen)
            if agent_reads_mask:
                legal = flatnonzero(legal_mask)
                state.apply(int(legal[int(floats[i] * len(legal))]))
            else:
                legal = state.legal_actions()
                state.apply(legal[int(floats[i] * len(legal))])
            i = (i + 1) & STREAM_MASK
            steps += 1
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            break
    return Sample(steps, games, now - start, time.process_time() - cpu_start)


def ladder(name: str, config: dict[str, Any], seconds: float, repeats: int, seed: int) -> list[tuple[str, float]]:
    """(rung, CPU microseconds per step, best of the repeats), measured round-robin.

    CPU time and the best repeat are the estimates least disturbed by other processes on a shared machine."""
    game = card_envs.make_game(name, **config)
    rungs: list[tuple[str, Callable[[float, int], Sample]]] = [
        ("engine: legal_actions + apply", lambda s, r: engine_loop(game, s, r)),
        ("+ legal_mask", lambda s, r: engine_plus_loop(game, s, r, mask=True, view=False, encode=False)),
        ("+ view(player)", lambda s, r: engine_plus_loop(game, s, r, mask=True, view=True, encode=False)),
        ("+ encode(view)", lambda s, r: engine_plus_loop(game, s, r, mask=True, view=True, encode=True)),
        ("agent picks from np.flatnonzero(mask), not legal_actions()",
         lambda s, r: engine_plus_loop(game, s, r, mask=True, view=True, encode=True, agent_reads_mask=True)),
        ("raw_env agent loop (adapter)", lambda s, r: env_loop(lambda: card_envs.make_raw(name, **config), s, r)),
        ("env() agent loop (+ wrapper)", lambda s, r: env_loop(lambda: card_envs.make(name, **config), s, r)),
    ]
    times: dict[str, list[float]] = {label: [] for label, _ in rungs}
    for repeat in range(repeats):
        for label, run in rungs:
            sample = run(seconds, seed + repeat)
            times[label].append(1e6 * sample.cpu_seconds / sample.steps)
    return [(label, min(times[label])) for label, _ in rungs]


def _key(function: Any) -> tuple[str, int, str]:
    code = function.__code__
    return code.co_filename, code.co_firstlineno, code.co_name


def profile_components(name: str, config: dict[str, Any], seconds: float, seed: int
                       ) -> tuple[Sample, float, list[tuple[str, float]], pstats.Stats]:
    """cProfile the env() loop; cumulative seconds of each engine entry point, and the whole loop's."""
    game = card_envs.make_game(name, **config)
    state_class = type(game.new_state(np.random.default_rng(seed)))
    entry_points = [
        ("state.apply (transition, incl. its legality check)", state_class.apply),
        ("  of which state.legal_actions", state_class.legal_actions),
        ("state.legal_mask", state_class.legal_mask),
        ("state.view", state_class.view),
        ("game.encode", type(game).encode),
        ("game.new_state (reset)", type(game).new_state),
    ]
    profiler = cProfile.Profile()
    profiler.enable()
    sample = env_loop(lambda: card_envs.make(name, **config), seconds, seed)
    profiler.disable()
    stats = pstats.Stats(profiler)
    raw = stats.stats  # type: ignore[attr-defined]
    total = next(v[3] for k, v in raw.items() if k == _key(env_loop))
    components = [(label, sum(v[3] for k, v in raw.items() if k == _key(function))) for label, function in entry_points]
    return sample, total, components, stats


def report(name: str, config: dict[str, Any], seconds: float, repeats: int, seed: int, top: int) -> str:
    lines = [f"# Profile of {name} {json.dumps(config)}", "",
             f"## Cost ladder (no profiler; CPU time, best of {repeats} x {seconds:g} s)", "",
             "| rung | us/step | added us/step | steps/s |", "|---|---:|---:|---:|"]
    previous = 0.0
    for label, micros in ladder(name, config, seconds, repeats, seed):
        lines.append(f"| {label} | {micros:.2f} | {micros - previous:+.2f} | {1e6 / micros:,.0f} |")
        previous = micros
    sample, total, components, stats = profile_components(name, config, seconds, seed)
    per_step = 1e6 / sample.steps
    lines += ["", f"## cProfile of the env() loop ({sample.steps:,} steps; profiler overhead inflates "
              "call-heavy code, so read shares, not absolute times)", "",
              "| component | us/step (profiled) | share of loop |", "|---|---:|---:|"]
    attributed = 0.0
    for label, cumulative in components:
        lines.append(f"| {label} | {cumulative * per_step:.2f} | {cumulative / total:.0%} |")
        if not label.startswith(" "):
            attributed += cumulative
    lines.append(f"| rest: adapter, wrapper, PettingZoo iterator/last, agent | {(total - attributed) * per_step:.2f} "
                 f"| {(total - attributed) / total:.0%} |")
    lines.append(f"| whole loop | {total * per_step:.2f} | 100% |")
    lines += ["", f"## Top {top} functions by own time (profiled)", "", "| function | calls/step | own us/step |",
              "|---|---:|---:|"]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    for (filename, line, function), (_, calls, own, _cum, _) in rows:
        where = f"{Path(filename).name}:{line}({function})" if line else function
        lines.append(f"| `{where}` | {calls / sample.steps:.2f} | {own * per_step:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = CommandParser(prog="python -m benchmarks.profile_env", description=__doc__.split("\n")[0])
    parser.add_argument("game", choices=card_envs.ENV_NAMES)
    parser.add_argument("--config", type=json_object, default={}, help="game options as a JSON object")
    parser.add_argument("--seconds", type=float, default=2.0, help="time budget per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="ladder repeats (median reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=20, help="functions listed by own time")
    parser.add_argument("--out", type=Path, default=None, help="also write the report to this file (atomically)")
    args = parser.parse_args(argv)
    text = report(args.game, args.config, args.seconds, args.repeats, args.seed, args.top)
    if args.out is not None:
        write_atomic(args.out, text)
    print(text)


if __name__ == "__main__":
    raise SystemExit(guarded(main, "python -m benchmarks.profile_env"))
