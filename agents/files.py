"""Small file helpers every part of ``agents`` (and ``train``) shares: results, checkpoints, saved games and
manifests are written through :func:`write_atomically`, so a reader never sees a half-written file."""

from __future__ import annotations

import os
import tempfile


def write_atomically(path: str, data: str | bytes) -> None:
    """Write ``data`` (text or bytes) to ``path`` through a temporary file in the same folder, then
    rename it into place: never half-written. The file gets the usual permissions (0666 less umask)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False, suffix=".tmp") as handle:
        temporary = handle.name
    try:
        with open(temporary, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # NamedTemporaryFile creates 0600
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
