"""Shipped agents: trained players as package data, played as the agent spec ``zoo:<game>/<name>``.

    card-envs zoo                                   # list the entries
    card-envs zoo show zoo:revolutionary_war_v0/sb3_ppo
    card-envs zoo add --checkpoint runs/rw/checkpoint.zip --name sb3_ppo \\
        --summary runs/rw/summary.json --report benchmarks/results/training_revolutionary_war_v0.md \\
        --command "card-envs train --config configs/revolutionary_war.yaml"

``make_agent(game, "zoo:revolutionary_war_v0/sb3_ppo")`` (``agents.players.registry``) builds the player: the
policy network of a checkpoint, in numpy (:class:`agents.players.checkpoint.CheckpointAgent`), with the advice
of its advisor where it was trained with one. Playing needs numpy and card_envs only: neither torch,
nor train/, nor ray, nor scipy is imported. ``<game>`` is the env name (``ENV_NAMES``), since a model
is trained for one version of an env's observation and action layout.

An entry is two files in ``agents/players/zoo/<game>/``:

==================  =================================================================================
file                content
==================  =================================================================================
``<name>.npz``      the policy network's arrays (``w0, b0, .., wK, bK``; float32, compressed), as in a
                    checkpoint's ``policy.npz``
``<name>.json``     the manifest (keys below)
==================  =================================================================================

=================  ====================================================================================
manifest key       meaning
=================  ====================================================================================
``format``         ``card_envs-zoo``, ``format_version`` 1
``name``, ``game`` the entry's name; the game's signature (env name, card_envs version, observation
                   size, action count, the env options it was trained with), as in a checkpoint
``policy``         activation, layer widths, greedy or sampling play, the ``advisor`` whose advice
                   the network reads (an agent spec, or null)
``weights``        the ``.npz`` file's name and its ``sha256`` (checked when loaded)
``training``       how it was trained: ``trainer``, ``command``, the whole ``config``, the ``commit``
                   of the code, ``decisions``, ``wall_time_s`` / ``cpu_time_s``, the warm start,
                   the evaluations during training, the ``final_evaluation`` (win rates against the
                   baselines, as the trainer's summary reports them) and the ``report`` that
                   describes the run
``ladder``         its rating on the game's ladder (``agents.tournaments.ladder``: the ladder's version, the
                   Elo-style rating anchored at random = 0 and the openskill rating, each with its
                   95% interval), written by ``card-envs ladder build``, or by placing the agent
                   on the published ladder with ``--record`` (then marked ``placed``); null until then
=================  ====================================================================================

Adding an entry is one command (``add``, above): it copies the checkpoint's policy weights and its
meta into a new entry, with the run's summary and the commit (``git rev-parse HEAD`` unless
``--commit`` is given). A trainer that writes the checkpoint format of ``agents/players/checkpoint_file.py``
(the SB3 trainer, the JAX trainer) adds its agents the same way. Every file is written atomically.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.checkpoint import AgentMaker, CheckpointAgent
from agents.players.checkpoint_file import Checkpoint, CheckpointError, PolicyNet

PREFIX = "zoo:"
FORMAT = "card_envs-zoo"
FORMAT_VERSION = 1
#: where the shipped entries live (package data)
ZOO_DIR = Path(__file__).resolve().parent
#: an entry's files must stay well under this (bytes), so the package stays small
MAX_BYTES = 5 * 1024 * 1024


class ZooError(CheckpointError):
    """An unknown, malformed or damaged zoo entry."""


@dataclass(frozen=True)
class ZooEntry:
    """One shipped agent: its manifest and where its files are."""

    game: str
    name: str
    manifest: dict[str, Any]
    folder: Path

    @property
    def spec(self) -> str:
        return f"{PREFIX}{self.game}/{self.name}"

    @property
    def manifest_path(self) -> Path:
        return self.folder / f"{self.name}.json"

    @property
    def weights_path(self) -> Path:
        return self.folder / self.manifest["weights"]["file"]

    @property
    def training(self) -> dict[str, Any]:
        return self.manifest.get("training") or {}

    @property
    def ladder(self) -> dict[str, Any] | None:
        return self.manifest.get("ladder")

    def checkpoint(self) -> Checkpoint:
        """The entry as a :class:`~agents.players.checkpoint_file.Checkpoint` (weights read once, checksum checked)."""
        path = self.weights_path
        try:
            status = path.stat()
        except OSError:
            raise ZooError(f"zoo entry {self.spec}: its weights {str(path)!r} are missing") from None
        policy = _read_weights(str(path), status.st_size, status.st_mtime_ns, self.manifest["weights"]["sha256"],
                               self.manifest["policy"]["activation"], self.spec)
        meta = {"game": self.manifest["game"], "policy": self.manifest["policy"],
                "config": self.training.get("config", {}), "num_timesteps": self.training.get("decisions", 0)}
        return Checkpoint(meta, policy)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.manifest_path, self.weights_path) if p.exists())


@lru_cache(maxsize=16)
def _read_weights(path: str, size: int, mtime_ns: int, sha256: str, activation: str, spec: str) -> PolicyNet:
    data = Path(path).read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ZooError(f"zoo entry {spec}: {path!r} does not match the checksum in its manifest (damaged or "
                       f"replaced; re-add it with card-envs zoo add)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {key: npz[key] for key in npz.files}
    except (ValueError, OSError, EOFError) as error:
        raise ZooError(f"zoo entry {spec}: {path!r} is not a numpy archive: {error}") from None
    return PolicyNet.from_arrays(arrays, activation)


# -- finding entries ----------------------------------------------------------------------------


def parse_spec(spec: str) -> tuple[str, str]:
    """``zoo:<game>/<name>`` -> (game, name)."""
    body = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    game, sep, name = body.partition("/")
    if not sep or not game or not name or "/" in name:
        raise ZooError(f"zoo spec {spec!r} is not zoo:<game>/<name>, e.g. zoo:revolutionary_war_v0/sb3_ppo")
    return game, name


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ZooError(f"zoo manifest {str(path)!r} cannot be read: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ZooError(f"{str(path)!r} is not a zoo manifest (format {FORMAT!r} expected)")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ZooError(f"zoo manifest {str(path)!r} has format version {manifest.get('format_version')}, this code "
                       f"reads version {FORMAT_VERSION}")
    return manifest


def entries(game: str | None = None, *, zoo_dir: Path | None = None) -> list[ZooEntry]:
    """Every entry (of ``game``), sorted by game and name (``zoo_dir``: another zoo than the shipped one)."""
    zoo_dir = zoo_dir or ZOO_DIR
    found = []
    for path in sorted(zoo_dir.glob("*/*.json")):
        if game is not None and path.parent.name != game:
            continue
        manifest = read_manifest(path)
        found.append(ZooEntry(path.parent.name, path.stem, manifest, path.parent))
    return found


def entry(spec: str, *, zoo_dir: Path | None = None) -> ZooEntry:
    """The entry of ``zoo:<game>/<name>``; :class:`ZooError` naming the known ones if there is none."""
    zoo_dir = zoo_dir or ZOO_DIR
    game, name = parse_spec(spec)
    path = zoo_dir / game / f"{name}.json"
    if not path.is_file():
        known = ", ".join(e.spec for e in entries(zoo_dir=zoo_dir)) or "none"
        raise ZooError(f"no zoo entry {PREFIX}{game}/{name}; shipped: {known}")
    return ZooEntry(game, name, read_manifest(path), path.parent)


def make_zoo_agent(game: str, spec: str, seed: int | None = None, *,
                   make_agent: AgentMaker | None = None) -> CheckpointAgent:
    """``zoo:<game>/<name>`` -> the agent (used by ``agents.players.registry.make_agent``, which passes itself as
    ``make_agent`` for a policy's advisor)."""
    found = entry(spec)
    if found.game != game:
        raise ZooError(f"{spec} is a model for {found.game}, not for {game}")
    return CheckpointAgent(str(found.weights_path), game, seed, checkpoint=found.checkpoint(), name=found.spec,
                           make_agent=make_agent)


# -- adding entries -----------------------------------------------------------------------------


def git_commit(folder: Path | None = None) -> str | None:
    """``git rev-parse HEAD`` of the checkout holding this code, or None outside one."""
    import subprocess

    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder or ZOO_DIR, capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


#: how a manifest names the trainer of each config ``backend`` (``train/config.py``)
TRAINERS = {"sb3": "sb3 MaskablePPO (train/)", "jax": "train.jax_ppo (backend: jax)"}


def add(checkpoint_path: str | Path, name: str, *, commit: str | None = None, command: str | None = None,
        report: str | None = None, summary_path: str | Path | None = None, trainer: str | None = None,
        notes: str = "", force: bool = False, zoo_dir: Path | None = None) -> ZooEntry:
    """Make a new entry from a checkpoint file (and its run's ``summary.json``); returns it. ``trainer``
    defaults to the trainer of the checkpoint's config ``backend`` (:data:`TRAINERS`)."""
    from agents.files import write_atomically
    from agents.players.checkpoint_file import read_checkpoint

    if not name or not all(c.isalnum() or c in "_-." for c in name) or name.startswith("."):
        raise ZooError(f"zoo name {name!r}: use letters, digits, '_', '-' or '.', e.g. sb3_ppo")
    checkpoint = read_checkpoint(checkpoint_path)
    game = checkpoint.game
    folder = (zoo_dir or ZOO_DIR) / game
    manifest_path = folder / f"{name}.json"
    if manifest_path.exists() and not force:
        raise ZooError(f"zoo entry {PREFIX}{game}/{name} exists ({manifest_path}); pass --force to replace it")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **checkpoint.policy.arrays())
    weights = buffer.getvalue()
    if len(weights) > MAX_BYTES:
        raise ZooError(f"the policy of {str(checkpoint_path)!r} takes {len(weights) / 2**20:.1f} MiB compressed; a "
                       f"zoo entry must stay under {MAX_BYTES / 2**20:.0f} MiB")
    summary = _read_summary(summary_path) if summary_path else {}
    meta = checkpoint.meta
    run = meta.get("run", {})
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "name": name,
        "game": meta["game"], "policy": meta["policy"],
        "weights": {"file": f"{name}.npz", "sha256": hashlib.sha256(weights).hexdigest(), "bytes": len(weights)},
        "training": {
            "trainer": trainer or TRAINERS[meta.get("config", {}).get("backend", "sb3")],
            "command": command,
            "commit": commit if commit is not None else git_commit(),
            "decisions": int(meta.get("num_timesteps", 0)),
            "wall_time_s": round(float(summary.get("wall_time", run.get("wall_time", 0.0))), 1),
            "cpu_time_s": round(float(summary.get("cpu_time", run.get("cpu_time", 0.0))), 1),
            "pretrain": summary.get("pretrain", run.get("pretrain")),
            "config": meta.get("config", {}),
            "evaluations": meta.get("evaluations", []),
            "final_evaluation": [_result_row(row) for row in summary.get("results", [])],
            "report": report,
            "checkpoint_written": meta.get("written"),
            "notes": notes,
        },
        "ladder": None,
    }
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(str(folder / f"{name}.npz"), weights)
    write_atomically(str(manifest_path), json.dumps(manifest, indent=2) + "\n")
    _read_weights.cache_clear()
    return ZooEntry(game, name, manifest, folder)


def _read_summary(path: str | Path) -> dict[str, Any]:
    try:
        summary = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ZooError(f"training summary {str(path)!r} cannot be read: {error}") from None
    if not isinstance(summary, dict):
        raise ZooError(f"training summary {str(path)!r} is not a JSON object (the run's summary.json)")
    return summary


def _result_row(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("opponent", "seats", "games", "wins", "win_rate", "ci_low", "ci_high", "mean_return")
    return {key: row[key] for key in keys if key in row}


def set_ladder_rating(found: ZooEntry, rating: dict[str, Any] | None) -> ZooEntry:
    """Record ``found``'s rating on its game's ladder in its manifest (atomically); returns the new entry."""
    from agents.files import write_atomically

    manifest = {**found.manifest, "ladder": rating}
    write_atomically(str(found.manifest_path), json.dumps(manifest, indent=2) + "\n")
    return ZooEntry(found.game, found.name, manifest, found.folder)


def describe(found: ZooEntry) -> dict[str, Any]:
    """One row of the listing."""
    training, ladder = found.training, found.ladder or {}
    elo = ladder.get("elo")
    return {
        "spec": found.spec, "decisions": training.get("decisions"),
        "wall_time_min": round(training.get("wall_time_s", 0.0) / 60, 1),
        "commit": (training.get("commit") or "?")[:10],
        "elo": None if elo is None else f"{elo['value']:+.0f} [{elo['low']:+.0f}, {elo['high']:+.0f}]",
        "ladder": ladder.get("version"), "bytes": found.size_bytes(),
        "env_options": found.manifest["game"].get("env_options", {}),
        "advisor": found.manifest["policy"].get("advisor"),
    }


__all__ = ["FORMAT", "FORMAT_VERSION", "MAX_BYTES", "PREFIX", "TRAINERS", "ZOO_DIR", "ZooEntry", "ZooError", "add",
           "describe", "entries", "entry", "git_commit", "make_zoo_agent", "parse_spec", "read_manifest",
           "set_ladder_rating"]
