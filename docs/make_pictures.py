"""The documentation's pictures, made from real games of shipped agents: ``python docs/make_pictures.py``.

For every game, one game (a fixed seed) of its shipped ``zoo:`` agent against the game's strongest rule-based
player, played by the match runner's own loop and recorded as a saved game (``agents.tournaments.saved_games``),
then drawn with ``card_envs.core.render`` from that record: ``docs/images/<game>.gif`` (every hand face up,
:data:`GIF_WIDTH` pixels wide; long games keep every ``k``-th position so a GIF stays under :data:`MAX_FRAMES`
frames) and ``docs/images/<game>.png`` (the position a third of the way in, full size). Deterministic: the
same seeds give the same files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image

import card_envs
from agents.players.registry import make_agent, strongest_heuristic
from agents.tournaments.match import play_game
from agents.tournaments.saved_games import game_record
from card_envs.core.render import game_frames, save_gif

IMAGES = Path(__file__).resolve().parent / "images"
MAX_FRAMES = 16
#: the GIFs' width in pixels (the frames are 960 wide; halved-ish to keep each GIF a few hundred KiB)
GIF_WIDTH = 640
SEED = 3
#: the table of each picture: the options the shipped agent was trained to read (Revolution's recall)
TABLES = {"revolution_v0": {"full_recall": True}}


def record(game: str) -> dict:
    """One game of the shipped agent against the strongest rule-based player, as a saved-game record."""
    engine = card_envs.make_game(game, **TABLES.get(game, {}))
    zoo = f"zoo:{game}/jax_ppo"
    specs = [zoo] + [strongest_heuristic(game)] * (engine.num_players - 1)
    agents = [make_agent(game, spec, seed) for seed, spec in enumerate(specs)]
    state = play_game(engine, agents, SEED)
    return game_record(state, seed=SEED, agents=specs)


def shrunk(frame: np.ndarray) -> np.ndarray:
    """The frame scaled to :data:`GIF_WIDTH` pixels wide."""
    image = Image.fromarray(np.asarray(frame))
    height = round(image.height * GIF_WIDTH / image.width)
    return np.asarray(image.resize((GIF_WIDTH, height), Image.LANCZOS))


def pictures(game: str) -> tuple[Path, Path]:
    saved = record(game)
    frames = game_frames(game, saved["actions"], config=TABLES.get(game, {}), seed=SEED)
    step = max(1, -(-len(frames) // MAX_FRAMES))
    kept = frames[::step] + ([frames[-1]] if (len(frames) - 1) % step else [])
    gif, png = IMAGES / f"{game}.gif", IMAGES / f"{game}.png"
    save_gif([shrunk(frame) for frame in kept], gif, fps=2.0)
    Image.fromarray(np.asarray(frames[len(frames) // 3])).save(png, optimize=True)
    return gif, png


def main() -> int:
    IMAGES.mkdir(exist_ok=True)
    for game in card_envs.ENV_NAMES:
        for path in pictures(game):
            print(f"{path.relative_to(IMAGES.parent.parent)}: {path.stat().st_size / 1024:.0f} KiB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
