"""The checkpoint writer: one zip archive holding everything to resume a run or to play the model.

The format (members ``meta.json``, ``policy.npz``, ``model.zip``, ``snapshots.npz``), the numpy policy
network and the reader live one layer down, in ``agents/players/checkpoint_file.py``, so a checkpoint plays
without torch or train/; they are re-exported here for the trainer. Files are written to a temporary
file in the same folder, flushed to disk and renamed into place, so a kill at any moment leaves either
the previous checkpoint or the new one.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.checkpoint_file import (
    FORMAT,
    FORMAT_VERSION,
    MEMBERS,
    Checkpoint,
    CheckpointError,
    PolicyNet,
    Snapshot,
    advisor_of,
    check_game,
    game_signature,
    masked_choice,
    policy_input_size,
    read_checkpoint,
)

CHECKPOINT_NAME = "checkpoint.zip"  #: a run's checkpoint file in its run_dir (both trainers)
BEST_NAME = "best.zip"  #: the best-evaluated policy of a run, beside its checkpoint (``eval.keep_best``)


def best_index(win_rates: Sequence[float]) -> int:
    """Which of a run's evaluations ``eval.keep_best`` keeps: the best win rate, the earliest on a tie."""
    return max(range(len(win_rates)), key=lambda i: (win_rates[i], -i))


def write_checkpoint(path: str | Path, checkpoint: Checkpoint) -> None:
    """Write ``checkpoint`` to ``path`` atomically (temporary file, fsync, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, **checkpoint.meta,
            "snapshots": [s.name for s in checkpoint.snapshots],
            "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    activation = checkpoint.policy.activation
    for snapshot in checkpoint.snapshots:
        if snapshot.net.activation != activation:
            raise CheckpointError(f"snapshot {snapshot.name!r} uses {snapshot.net.activation}, the policy {activation}")
    snapshot_arrays: dict[str, np.ndarray] = {}
    for i, snapshot in enumerate(checkpoint.snapshots):
        snapshot_arrays.update(snapshot.net.arrays(prefix=f"s{i}_"))
    handle = tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=path.name + ".", suffix=".tmp", delete=False)
    try:
        with handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("meta.json", json.dumps(meta, indent=2, default=_json_default))
            archive.writestr("policy.npz", _npz_bytes(checkpoint.policy.arrays()))
            archive.writestr("model.zip", checkpoint.model_bytes, compress_type=zipfile.ZIP_STORED)
            archive.writestr("snapshots.npz", _npz_bytes(snapshot_arrays))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _fsync_folder(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


__all__ = ["BEST_NAME", "CHECKPOINT_NAME", "FORMAT", "FORMAT_VERSION", "MEMBERS", "Checkpoint", "CheckpointError",
           "PolicyNet", "Snapshot", "advisor_of", "best_index", "check_game", "game_signature", "masked_choice",
           "policy_input_size", "read_checkpoint", "write_checkpoint"]
