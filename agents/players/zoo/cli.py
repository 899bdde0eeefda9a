"""``card-envs zoo [list | show SPEC | add ...]``: the shipped agents (see ``__init__.py``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import card_envs
from agents.players.zoo import MAX_BYTES, add, describe, entries, entry
from card_envs.core.commands import CommandParser, command_line


def _list(game: str | None) -> int:
    found = entries(game)
    if not found:
        print("no zoo entries" + (f" for {game}" if game else ""))
        return 0
    print("| spec | decisions | wall time (min) | commit | ladder Elo [95% CI] (random = 0) | ladder | size (KiB) | "
          "env options | advisor |")
    print("|---|---|---|---|---|---|---|---|---|")
    for item in found:
        row = describe(item)
        elo = row["elo"] or "not rated"
        print(f"| `{row['spec']}` | {row['decisions']:,} | {row['wall_time_min']} | {row['commit']} | {elo} | "
              f"{row['ladder'] or '-'} | {row['bytes'] / 1024:.0f} | {json.dumps(row['env_options'])} | "
              f"{row['advisor'] or '-'} |")
    return 0


EXAMPLES = """examples:
  card-envs zoo list
  card-envs zoo show zoo:bloodlines_v0/jax_ppo
  card-envs zoo add --checkpoint runs/bl/checkpoint.zip --name my_ppo --summary runs/bl/summary.json
"""


@command_line("python -m agents.zoo")
def main(argv: Sequence[str] | None, prog: str) -> int:
    parser = CommandParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="list the entries (the default)")
    listing.add_argument("--game", choices=card_envs.ENV_NAMES, help="only this game's entries")
    show = commands.add_parser("show", help="print an entry's manifest")
    show.add_argument("spec", help="zoo:<game>/<name>")
    adding = commands.add_parser("add", help="make an entry from a checkpoint")
    adding.add_argument("--checkpoint", required=True, help="a checkpoint written by a trainer (checkpoint.zip)")
    adding.add_argument("--name", required=True, help="the entry's name, e.g. sb3_ppo")
    adding.add_argument("--summary", help="the run's summary.json (final evaluation, wall and CPU time)")
    adding.add_argument("--report", help="the report describing the run, e.g. benchmarks/results/training_<game>.md")
    adding.add_argument("--command", dest="train_command", help="the command that trained it")
    adding.add_argument("--commit", help="the commit of the code that trained it (default: git rev-parse HEAD)")
    adding.add_argument("--trainer", help="which trainer made it (default: the checkpoint's config backend's)")
    adding.add_argument("--notes", default="", help="free text kept in the manifest")
    adding.add_argument("--force", action="store_true", help="replace an entry of the same name")
    args = parser.parse_args(argv)
    if args.command in (None, "list"):
        return _list(getattr(args, "game", None))
    if args.command == "show":
        print(json.dumps(entry(args.spec).manifest, indent=2))
        return 0
    made = add(args.checkpoint, args.name, commit=args.commit, command=args.train_command, report=args.report,
               summary_path=args.summary, trainer=args.trainer, notes=args.notes, force=args.force)
    print(f"added {made.spec}: {made.weights_path} ({made.size_bytes() / 1024:.0f} KiB of at most "
          f"{MAX_BYTES / 2**20:.0f} MiB), {made.manifest_path}; rate it with card-envs ladder build "
          f"--game {made.game} after adding it to the ladder's players")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
