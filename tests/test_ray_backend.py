"""Tournaments on a real Ray cluster (tournaments/backends.py, ``--backend ray``): the same games as local processes,
even when a worker is killed mid-tournament."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

#: Ray on one machine, on the loopback address only (by default Ray advertises the machine's network address);
#: read when ray is imported, so set first
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
os.environ.update(LOOPBACK)

import ray  # noqa: E402  (the extra card-envs[ray], installed by .ci/setup)

from agents.tournaments.backends import Backend  # noqa: E402
from agents.tournaments.evaluate import run_tournament  # noqa: E402
from agents.tournaments.ladder import LadderSpec, Rung, ladder_plan, play_plan  # noqa: E402
from agents.tournaments.stats import summarize  # noqa: E402

RW = "revolutionary_war_v0"
AGENTS = ["random", "heuristic:pot", "heuristic:endgame"]


@pytest.fixture
def local_ray():
    """Ray started in this process with two CPUs (what ``--backend ray`` does without ``--address``)."""
    yield
    ray.shutdown()


def test_a_small_tournament_on_ray_equals_the_local_one(local_ray):
    local = run_tournament(RW, AGENTS, 96, seed=4, workers=2)
    on_ray = run_tournament(RW, AGENTS, 96, seed=4, workers=2, backend="ray")
    assert ray.is_initialized() and on_ray.backend.kind == "ray"
    assert on_ray.records == local.records and len(local.records) == 96
    mine, theirs = summarize(local, resamples=100), summarize(on_ray, resamples=100)
    assert dataclasses.asdict(mine) == dataclasses.asdict(theirs)
    spec = LadderSpec(RW, 1, (Rung("random", "random"), Rung("heuristic:pot", "heuristic:pot"),
                              Rung("ismcts-tiny", "ismcts:sims=4,c=1,rollout=random", 2)), games=60)
    plan = ladder_plan(spec)
    assert play_plan(RW, {}, plan, 0, backend=Backend("ray", 2)).records == \
        play_plan(RW, {}, plan, 0, backend=Backend()).records


def _free_port() -> int:
    with socket.socket() as handle:
        handle.bind(("127.0.0.1", 0))
        return handle.getsockname()[1]


def _stop(marks: list[str]) -> None:
    """SIGKILL the processes of the cluster this test started (their command lines name its temp folder or
    port) and their children, by id: never ``ray stop``, which would stop every Ray on the machine."""
    import psutil

    mine = [p for p in psutil.process_iter(["pid", "cmdline"])
            if any(mark in " ".join(p.info["cmdline"] or []) for mark in marks)]
    family = {child for p in mine for child in _children(p)} | set(mine)
    for process in family:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(list(family), timeout=30)


def _children(process) -> list:
    import psutil

    try:
        return process.children(recursive=True)
    except psutil.Error:
        return []


@pytest.fixture
def cluster(tmp_path):
    """``ray start --head`` on 127.0.0.1 with two CPUs (two worker processes), joined by address; killed after."""
    ray_cli = str(Path(sys.executable).parent / "ray")
    port = _free_port()
    temp = Path("/tmp") / f"ray_ladder_{os.getpid()}_{port}"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", **LOOPBACK}
    head = [ray_cli, "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
            "--include-dashboard=false", f"--temp-dir={temp}", "--disable-usage-stats",
            f"--ray-client-server-port={_free_port()}"]
    try:
        subprocess.run(head, check=True, env=env, capture_output=True, timeout=300)
        os.environ["RAY_AUTH_MODE"] = "disabled"
        yield f"127.0.0.1:{port}"
    finally:
        ray.shutdown()
        os.environ.pop("RAY_AUTH_MODE", None)
        _stop([str(temp), f":{port}"])


def _kill_one_chunk_worker(killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first Ray worker process seen playing a chunk (its title is ``ray::_play_chunk``)."""
    import psutil

    while not stop.is_set() and not killed:
        for process in psutil.process_iter(["pid", "cmdline"]):
            command = process.info["cmdline"] or []
            if command and command[0].startswith("ray::_play_chunk"):
                time.sleep(0.5)  # well inside the chunk
                try:
                    os.kill(process.info["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    continue
                killed.append(process.info["pid"])
                return
        time.sleep(0.05)


@pytest.mark.slow
def test_a_worker_killed_mid_tournament_loses_no_deal_and_counts_none_twice(cluster):
    games = 2400  # ten chunks of 240 games: several seconds each
    local = run_tournament(RW, AGENTS, games, seed=9, workers=2)
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_one_chunk_worker, args=(killed, stop), daemon=True)
    killer.start()
    try:
        on_ray = run_tournament(RW, AGENTS, games, seed=9, backend="ray", address=cluster)
    finally:
        stop.set()
        killer.join(timeout=10)
    assert killed, "no chunk worker was seen, so none was killed"
    assert on_ray.records == local.records
    keys = [(r.deal, r.lineup, r.permutation) for r in on_ray.records]
    assert len(keys) == len(set(keys)) == games
