"""The checkpoint file and its numpy reader: one zip archive holding everything to resume a run or to play
the model.

=================  ===================================================================================
member             content
=================  ===================================================================================
``meta.json``      ``format``/``format_version``; ``game`` (env name, card_envs version, observation
                   size, action count, env options: what the model was trained on); the whole training
                   ``config``; ``num_timesteps``; ``n_updates``; ``policy`` (activation, layer widths,
                   whether the player acts greedily, the ``advisor`` whose advice it reads: its input
                   is then the observation plus one entry per action); ``snapshots`` (names of the
                   pool's snapshots); ``evaluations`` so far; ``wall_time`` (seconds of training so far)
``policy.npz``     the policy network as plain arrays (``w0, b0, .., wK, bK``: hidden layers then the
                   action layer), so a checkpoint plays without torch (:class:`PolicyNet`)
``model.zip``      the stable-baselines3 MaskablePPO save (weights, optimizer state, schedules): resume
``snapshots.npz``  the opponent pool's frozen snapshots of the learner (``s<i>_w0``, ...): resume
=================  ===================================================================================

The trainer writes checkpoints (``train/checkpoint.py``: to a temporary file, flushed and renamed into
place); this module reads them and holds the policy network in numpy. It sits below the trainer, in
agents/, so the trained player (``agents/players/checkpoint.py``) and the shipped ``zoo:`` agents play a
checkpoint with numpy only: neither torch nor train/ is imported.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import card_envs
from card_envs.core.errors import CardEnvsError

FORMAT = "card_envs-checkpoint"
FORMAT_VERSION = 1
MEMBERS = ("meta.json", "policy.npz", "model.zip", "snapshots.npz")


class CheckpointError(CardEnvsError):
    """A checkpoint that is missing, corrupt, or not a model for the game it is used with."""


class PolicyNet:
    """The policy's multilayer perceptron in numpy: observation -> action logits.

    ``weights[i]`` has shape (inputs, outputs); every layer but the last is followed by the
    activation. The same function as the torch policy's ``action_net(mlp_extractor.policy_net(x))``.
    """

    def __init__(self, weights: Sequence[np.ndarray], biases: Sequence[np.ndarray], activation: str) -> None:
        if activation not in _ACTIVATIONS:
            raise CheckpointError(f"unknown activation {activation!r}; known: {', '.join(_ACTIVATIONS)}")
        if len(weights) != len(biases) or not weights:
            raise CheckpointError(f"a policy net needs as many bias vectors as weight matrices (>= 1), got "
                                  f"{len(weights)} and {len(biases)}")
        self.weights = [np.ascontiguousarray(w, np.float32) for w in weights]
        self.biases = [np.ascontiguousarray(b, np.float32) for b in biases]
        self.activation = activation
        self._act = _ACTIVATIONS[activation]

    @property
    def observation_size(self) -> int:
        return self.weights[0].shape[0]

    @property
    def num_actions(self) -> int:
        return self.weights[-1].shape[1]

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Action logits of one observation (1-D) or a batch (2-D)."""
        x = observation
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ w + b
            if i < last:
                x = self._act(x)
        return x

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        arrays = {f"{prefix}w{i}": w for i, w in enumerate(self.weights)}
        arrays.update({f"{prefix}b{i}": b for i, b in enumerate(self.biases)})
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], activation: str, prefix: str = "") -> PolicyNet:
        count = sum(1 for key in arrays if key.startswith(prefix + "w") and key[len(prefix) + 1:].isdigit())
        try:
            weights = [arrays[f"{prefix}w{i}"] for i in range(count)]
            biases = [arrays[f"{prefix}b{i}"] for i in range(count)]
        except KeyError as missing:
            raise CheckpointError(f"policy arrays are incomplete: {missing} is missing") from None
        return cls(weights, biases, activation)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


_ACTIVATIONS = {"tanh": np.tanh, "relu": _relu}


def masked_choice(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None) -> int:
    """The most probable legal action (``rng`` None) or one sampled from the masked softmax.

    Sampling uses the Gumbel-max trick: the argmax of ``logits + Gumbel noise`` is distributed as
    ``softmax(logits)``, in three array operations."""
    scores = logits if rng is None else logits + rng.gumbel(size=logits.shape)
    action = int(np.argmax(np.where(mask, scores, -np.inf)))
    if not mask[action]:
        raise CheckpointError("no legal action to choose from (the mask is all zeros)")
    return action


def game_signature(game: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a model depends on: env name, card_envs version, observation size, action count, options."""
    built = card_envs.make_game(game, **dict(options or {}))
    return {"env_name": game, "card_envs_version": card_envs.__version__,
            "observation_size": built.observation_size, "num_actions": built.num_actions,
            "env_options": dict(options or {})}


@dataclass
class Snapshot:
    """A frozen copy of the learner's policy, played by the opponent pool."""

    name: str
    net: PolicyNet


@dataclass
class Checkpoint:
    """The contents of a checkpoint file (``model_bytes`` empty unless read with ``with_model``)."""

    meta: dict[str, Any]
    policy: PolicyNet
    model_bytes: bytes = b""
    snapshots: list[Snapshot] = field(default_factory=list)

    @property
    def game(self) -> str:
        return self.meta["game"]["env_name"]

    @property
    def num_timesteps(self) -> int:
        return int(self.meta["num_timesteps"])


def read_checkpoint(path: str | Path, *, with_model: bool = False) -> Checkpoint:
    """Read a checkpoint; :class:`CheckpointError` if it is missing, corrupt or of another format."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        with zipfile.ZipFile(path) as archive:
            missing = [m for m in MEMBERS if m not in archive.namelist()]
            if missing:
                raise CheckpointError(f"checkpoint {str(path)!r} is incomplete: {', '.join(missing)} missing")
            meta = json.loads(archive.read("meta.json"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise CheckpointError(f"{str(path)!r} is not a card_envs checkpoint (format {FORMAT!r} expected)")
            if meta.get("format_version") != FORMAT_VERSION:
                raise CheckpointError(f"checkpoint {str(path)!r} has format version {meta.get('format_version')}, "
                                      f"this code reads version {FORMAT_VERSION}")
            activation = meta["policy"]["activation"]
            policy = PolicyNet.from_arrays(_npz_arrays(archive.read("policy.npz")), activation)
            snapshot_arrays = _npz_arrays(archive.read("snapshots.npz"))
            snapshots = [Snapshot(name, PolicyNet.from_arrays(snapshot_arrays, activation, prefix=f"s{i}_"))
                         for i, name in enumerate(meta["snapshots"])]
            model_bytes = archive.read("model.zip") if with_model else b""
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, KeyError, TypeError, EOFError) as error:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a card_envs checkpoint: "
                              f"{type(error).__name__}: {error}") from None
    return Checkpoint(meta, policy, model_bytes, snapshots)


def check_game(checkpoint: Checkpoint, game: str, *, source: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` unless ``checkpoint`` is a model for ``game`` (name, sizes)."""
    signature = checkpoint.meta["game"]
    if signature["env_name"] != game:
        raise CheckpointError(f"{source} is a model for {signature['env_name']}, not for {game}")
    built = card_envs.make_game(game, **signature.get("env_options", {}))
    for key, now in (("observation_size", built.observation_size), ("num_actions", built.num_actions)):
        if signature[key] != now:
            raise CheckpointError(f"{source} was trained with {key} {signature[key]} for {game} "
                                  f"(card_envs {signature['card_envs_version']}); this card_envs "
                                  f"({card_envs.__version__}) has {now}")
    if checkpoint.policy.observation_size != policy_input_size(checkpoint) or \
            checkpoint.policy.num_actions != signature["num_actions"]:
        raise CheckpointError(f"{source}: the policy network's shape does not match its recorded game")


def advisor_of(checkpoint: Checkpoint) -> str | None:
    """The agent spec whose advice the policy reads after the observation (config ``advisor``), or None."""
    return checkpoint.meta["policy"].get("advisor")


def policy_input_size(checkpoint: Checkpoint) -> int:
    """The policy's input: the game's observation, plus one advice entry per action with an advisor."""
    signature = checkpoint.meta["game"]
    advice = signature["num_actions"] if advisor_of(checkpoint) is not None else 0
    return signature["observation_size"] + advice


def _npz_arrays(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


__all__ = ["FORMAT", "FORMAT_VERSION", "MEMBERS", "Checkpoint", "CheckpointError", "PolicyNet", "Snapshot",
           "advisor_of", "check_game", "game_signature", "masked_choice", "policy_input_size", "read_checkpoint"]
