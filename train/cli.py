"""``card-envs``: one command line for what users run.

    card-envs train --config configs/revolutionary_war_jax.yaml
    card-envs match --game bloodlines_v0 --agents zoo:bloodlines_v0/jax_ppo heuristic:defender --games 2000
    card-envs evaluate --game revolution_v0 --games 10000 --workers 2
    card-envs ladder show
    card-envs zoo list
    card-envs play --game revolutionary_war_v0 --opponents heuristic:endgame

Each subcommand is the ``main`` of a module that also runs as ``python -m <module>`` (listed by ``card-envs
--help``), with the same flags and output; ``card-envs <command> --help`` shows its options and an example. The
command line lives in ``train``, the top layer of the package, since it fronts training as well as the agents.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import card_envs
from card_envs.core.commands import run_main

#: subcommand -> (the module whose ``main(argv, prog)`` runs it, what it does)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("train.__main__", "train an agent from a YAML config: SB3 MaskablePPO or PPO on the JAX engines"),
    "match": ("agents.tournaments.match", "play agents against each other, seats rotated, 95% intervals"),
    "evaluate": ("agents.tournaments.evaluate", "tournament on duplicate deals: win rates, ratings, SPRT, reports"),
    "ladder": ("agents.tournaments.ladder", "show the published ladders, place an agent on one, build one"),
    "zoo": ("agents.players.zoo.cli", "list, show or add the shipped trained agents (zoo:<game>/<name>)"),
    "play": ("agents.play.__main__", "play against agents, watch them or replay a saved game (web or terminal)"),
    "lockstep": ("card_envs.jax.lockstep", "check a JAX engine against the Python engine, action for action"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {what}  (python -m {module.removesuffix('.__main__')})"
                     for name, (module, what) in COMMANDS.items())
    return (f"usage: card-envs <command> [options]   (card-envs {card_envs.__version__})\n\n"
            f"{__doc__.split(chr(10) * 2)[0]}\n\ncommands:\n{rows}\n\n"
            "card-envs <command> --help shows a command's options and an example.")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"card-envs {card_envs.__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"card-envs: error: unknown command {name!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    return run_main(COMMANDS[name][0], f"card-envs {name}", rest)

if __name__ == "__main__":
    raise SystemExit(main())
