"""The house: imports point down only, no import circles, each optional extra only in its own modules.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are checked by ``lint-imports`` here, in the
default run. Each contract is also shown to fail: a copy of the project with one bad import added must break it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("card_envs", "agents", "train", "benchmarks")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the project at ``root`` (its packages first on the path, no cache)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_every_contract_is_kept() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout and "BROKEN" not in done.stdout


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's Python sources and pyproject.toml, copied (no data files, no caches)."""
    root = tmp_path_factory.mktemp("project")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.png", "results", "static"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


#: (module file, the import added to it, the contract it must break)
BAD_IMPORTS = [
    ("card_envs/core/engine.py", "import agents.players.base", "benchmarks -> train -> agents -> card_envs"),
    ("agents/players/base.py", "import agents.tournaments.match", "agents: play -> tournaments -> players -> files"),
    ("agents/players/checkpoint_file.py", "import agents.players.registry", "agents.players: the registry on top"),
    ("agents/tournaments/records.py", "import agents.tournaments.evaluate", "agents.tournaments: the ladder on top"),
    ("train/jax_network.py", "import train.jax_pretrain", "no import circle"),
    ("card_envs/core/aec.py", "import scipy", "import card_envs stays numpy + gymnasium + pettingzoo"),
    ("agents/players/checkpoint.py", "import torch", "agents play checkpoints with numpy only"),
    ("agents/tournaments/evaluate.py", "import ray", "ray only in the Ray backend"),
]


def test_the_unchanged_copy_keeps_every_contract(project_copy: Path) -> None:
    done = lint_imports(project_copy)  # the copy is what the cases below change, one import each
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("module", "line", "contract"), BAD_IMPORTS, ids=[case[0] for case in BAD_IMPORTS])
def test_one_bad_import_breaks_its_contract(project_copy: Path, module: str, line: str, contract: str) -> None:
    path = project_copy / module
    original = path.read_text()
    path.write_text(original + f"\n{line}  # added by the test\n")
    try:
        done = lint_imports(project_copy)
    finally:
        path.write_text(original)
    assert done.returncode != 0
    broken = [text for text in done.stdout.replace("\n", " ").split("KEPT") if "BROKEN" in text]
    assert any(contract in text for text in broken), done.stdout
