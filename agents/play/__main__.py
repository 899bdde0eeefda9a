"""Play against any agent, watch agents play, or replay a saved game: in the browser or the terminal.

    card-envs play --game revolutionary_war_v0 --opponents heuristic:endgame
    card-envs play --game revolution_v0 --seat 2 --opponents heuristic:counting random ismcts:sims=200
    card-envs play --game bloodlines_v0 --watch heuristic:defender heuristic:aggressor
    card-envs play --replay games/revolutionary_war_v0-...-000012.json
    card-envs play --replay games/revolutionary_war_v0-...-000012.json --gif game.gif   # a GIF of it
    card-envs play --game battlecards_v0 --opponents heuristic:counter --ui terminal

The web table is served on 127.0.0.1 (this machine only) and prints its URL. Every browser tab gets
its own table. ``--opponents`` / ``--watch`` take any agent spec of :mod:`agents.players.registry`; one spec
fills every seat, or give one per seat (``--opponents``: the other seats in seat order, starting
after yours). Needs the extra ``play`` (``pip install card-envs[play]``).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence

import card_envs
from agents.players.registry import strongest_heuristic
from agents.tournaments.saved_games import load_game, save_replay_gif
from card_envs.core.commands import CommandParser, command_line, json_object, refuse


def parse_args(argv: Sequence[str] | None, prog: str = "python -m agents.play") -> argparse.Namespace:
    parser = CommandParser(prog=prog, description=__doc__)
    parser.add_argument("--game", choices=card_envs.ENV_NAMES, help="the game (not needed with --replay)")
    parser.add_argument("--config", type=json_object, default={},
                        help='game options as JSON, e.g. \'{"num_hands": 2}\'')
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--opponents", nargs="+", metavar="SPEC",
                        help="agent specs of the other seats (default: the game's strongest rule-based player)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--watch", nargs="+", metavar="SPEC", help="watch these agents play (one per seat, or one)")
    what.add_argument("--replay", metavar="FILE", help="step through a saved game (match --save-games)")
    parser.add_argument("--gif", metavar="OUT", help="with --replay: write the game as an animated GIF (every hand "
                                                     "face up) and exit, instead of opening a table")
    parser.add_argument("--ui", choices=("web", "terminal"), default="web")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1: this machine)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--seed", type=int, help="seed of the deals and the agents (default: random, printed)")
    parser.add_argument("--delay", type=float, default=0.7, help="seconds an agent's move stays visible (0.7)")
    parser.add_argument("--save-games", metavar="DIR", help="write every finished game here as a saved game")
    args = parser.parse_args(argv)
    if args.replay is None and args.game is None:
        parser.error("--game is required (or --replay FILE)")
    if args.delay < 0:
        parser.error("--delay must be 0 or more")
    if args.gif and not args.replay:
        parser.error("--gif needs --replay FILE (the saved game to draw)")
    return args


@command_line("python -m agents.play")
def main(argv: Sequence[str] | None, prog: str) -> int:
    args = parse_args(argv, prog)
    if args.gif:
        frames = save_replay_gif(load_game(args.replay), args.gif, fps=1000 / max(args.delay * 1000, 1))
        print(f"wrote {args.gif}: {frames} frames", file=sys.stderr)
        return 0
    from agents.play.server import Setup  # needs the extra 'play': a missing one is named by command_line
    from agents.play.tables import TableError

    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    mode = "replay" if args.replay else "watch" if args.watch else "play"
    opponents = args.opponents or ([strongest_heuristic(args.game)] if args.game else [])
    setup = Setup(game=args.game or "", config=args.config, mode=mode, seat=args.seat, opponents=opponents,
                  watch=args.watch or [], replay=args.replay, seed=seed, delay_ms=round(args.delay * 1000),
                  save_games=args.save_games)
    try:
        setup.check()
        if mode == "replay":
            setup.game = setup.saved().game.name
    except TableError as error:
        return refuse(prog, error.message)
    if mode != "replay":
        print(f"seed {seed} (again with --seed {seed})", file=sys.stderr)
    if args.ui == "terminal":
        return run_terminal(setup)
    from agents.play.server import serve

    try:
        serve(setup, args.host, args.port)
    except OSError as error:
        return refuse(prog, f"cannot serve on {args.host}:{args.port}: {error}")
    return 0


def run_terminal(setup) -> int:
    from agents.play.server import new_table
    from agents.play.tables import PlayTable
    from agents.play.terminal import TerminalTable

    table = new_table(setup, 0)
    terminal = TerminalTable()
    try:
        if isinstance(table, PlayTable):
            terminal.play(table)
        else:
            terminal.watch(table, delay=setup.delay_ms / 1000)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
