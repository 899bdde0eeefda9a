"""Golden playthroughs: committed text traces of fixed episodes that the tests replay and diff.

    python -m tests.golden --update              # (re)write every trace after a deliberate change
    python -m tests.golden --update revolution_v0

Each trace plays seeded random legal moves through ``env()`` and records, per step: the agent,
the action by name, the legal actions by name, every agent's reward, termination and truncation,
and the observation (its non-zero entries for the first steps, then a digest). A behaviour change
shows up as a diff; when it is deliberate, bump the environment's version and update the traces.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
from pathlib import Path

import numpy as np

import card_envs

GOLDEN_DIR = Path(__file__).parent / "golden"
FULL_OBSERVATION_STEPS = 40


def golden_cases(name: str) -> list[tuple[int, dict, int]]:
    """(config index, config, seed) traced for a game: the default config twice, the last variant once."""
    variants = card_envs.make_game(name).__class__.variant_configs()
    cases = [(0, variants[0], 0), (0, variants[0], 1)]
    if len(variants) > 1:
        cases.append((len(variants) - 1, variants[-1], 2))
    return cases


def trace_path(name: str, index: int, seed: int) -> Path:
    return GOLDEN_DIR / f"{name}__cfg{index}__seed{seed}.txt"


def trace(name: str, config: dict, seed: int) -> str:
    env = importlib.import_module(f"card_envs.{name}").env(**config)
    names = env.unwrapped.action_names
    rng = np.random.default_rng(1000 + seed)
    env.reset(seed=seed)
    lines = [f"# {name} config={json.dumps(config, sort_keys=True)} seed={seed}"]
    for step, agent in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        vector = obs["observation"]
        legal = np.flatnonzero(obs["action_mask"])
        action = None if term or trunc else int(legal[int(rng.integers(len(legal)))])
        if step < FULL_OBSERVATION_STEPS:
            shown = " ".join(f"{i}:{vector[i]:.4g}" for i in np.flatnonzero(vector))
        else:
            shown = f"sha1:{hashlib.sha1(vector.tobytes()).hexdigest()[:16]} nonzero={np.count_nonzero(vector)}"
        lines.append(f"{step} {agent} term={term} trunc={trunc} action={names[action] if action is not None else None}")
        lines.append(f"  legal: {', '.join(names[a] for a in legal)}")
        lines.append(f"  obs: {shown}")
        env.step(action)
        lines.append("  rewards: " + " ".join(f"{a}={r:+.6g}" for a, r in sorted(env.rewards.items())))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="write the traces")
    parser.add_argument("games", nargs="*", default=list(card_envs.ENV_NAMES))
    args = parser.parse_args()
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name in args.games:
        for index, config, seed in golden_cases(name):
            path = trace_path(name, index, seed)
            text = trace(name, config, seed)
            if args.update:
                path.write_text(text)
                print(f"wrote {path} ({text.count(chr(10))} lines)")
            else:
                print(f"{path}: {'same' if path.exists() and path.read_text() == text else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
