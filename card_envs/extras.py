"""Which optional extra installs a missing module: ``pip install 'card-envs[EXTRA]'``.

Every command and optional module names the extra it needs when a heavy dependency is missing, instead of a bare
``ModuleNotFoundError``:

>>> from card_envs.extras import extra_for
>>> extra_for("scipy")
'eval'
"""

from __future__ import annotations

#: top-level module -> the extra of pyproject.toml that installs it
EXTRAS: dict[str, str] = {
    "scipy": "eval", "openskill": "eval", "matplotlib": "eval", "tqdm": "eval",
    "jax": "jax", "jaxlib": "jax", "pgx": "jax",
    "optax": "train-jax",
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train", "yaml": "train", "tensorboard": "train",
    "threadpoolctl": "train",
    "fastapi": "play", "uvicorn": "play", "rich": "play", "pydantic": "play",
    "ray": "ray",
    "pyspiel": "openspiel", "open_spiel": "openspiel",
    "PIL": "render", "imageio": "render",
}


def extra_for(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted name is read by its top level), or None if none does."""
    return EXTRAS.get((module or "").split(".")[0])


def missing_message(error: ModuleNotFoundError, what: str) -> str | None:
    """One line saying which extra ``what`` (a command or module) needs, for an error raised by a missing
    optional dependency; None when the missing module is not an optional dependency of this package."""
    extra = extra_for(error.name)
    if extra is None:
        return None
    return f"{what} needs the '{extra}' extra (module {error.name!r} is missing): pip install 'card-envs[{extra}]'"
