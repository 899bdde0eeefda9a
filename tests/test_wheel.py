"""The package as a user installs it: a wheel built from the repository, installed into a clean venv with the
``eval`` extra, plays a shipped ``zoo:`` agent from outside the repository; without ``eval`` the command names the
extra. Slow (it installs packages): ``pytest -m slow tests/test_wheel.py``."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MATCH = ["-m", "agents.match", "--game", "bloodlines_v0", "--agents", "zoo:bloodlines_v0/jax_ppo", "random",
         "--games", "20", "--workers", "1", "--quiet"]


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out),
                str(ROOT)], cwd=out)
    assert done.returncode == 0, done.stderr[-3000:]
    return next(out.glob("card_envs-*.whl"))


@pytest.mark.slow
def test_the_wheel_holds_the_data_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("card_envs/py.typed", "card_envs/bloodlines/RULES.md", "agents/play/static/index.html",
                   "agents/players/zoo/bloodlines_v0/jax_ppo.npz", "agents/players/zoo/bloodlines_v0/jax_ppo.json"):
        assert needed in names, needed
    assert not any(name.startswith(("tests/", "benchmarks/", "docs/")) for name in names)


def _venv(path: Path, wheel: Path, extra: str) -> Path:
    venv.create(path, with_pip=True)
    python = path / "bin" / "python"
    done = run([str(python), "-m", "pip", "install", "-q", f"{wheel}{extra}"], cwd=path)
    assert done.returncode == 0, done.stderr[-3000:]
    return python


@pytest.mark.slow
def test_a_clean_install_with_eval_plays_a_zoo_agent_outside_the_repository(wheel: Path, tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", wheel, "[eval]")
    done = run([str(python), *MATCH], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "zoo:bloodlines_v0/jax_ppo" in done.stdout


@pytest.mark.slow
def test_without_eval_the_error_names_the_extra(wheel: Path, tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", wheel, "")
    done = run([str(python), *MATCH], cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "pip install 'card-envs[eval]'" in done.stderr and len(done.stderr.strip().splitlines()) == 1
