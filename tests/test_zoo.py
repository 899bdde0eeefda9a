"""Shipped agents: adding an entry, loading it as ``zoo:<game>/<name>``, playing it with numpy only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import card_envs
from agents.players.base import Decision
from agents.players.checkpoint import CheckpointAgent
from agents.players.checkpoint_file import Checkpoint, CheckpointError, PolicyNet, game_signature
from agents.players.registry import make_agent
from agents.players.zoo import MAX_BYTES, TRAINERS, ZooError, add, entries, entry, parse_spec, set_ladder_rating
from agents.players.zoo.cli import main as zoo_main
from agents.tournaments.match import play_game

ROOT = Path(__file__).resolve().parent.parent
RW = "revolutionary_war_v0"


def random_checkpoint(path: Path, game: str = RW, *, advisor: str | None = None, hidden: int = 16,
                      options: dict | None = None) -> Path:
    """A real checkpoint file (random weights) written by the training code's writer."""
    from train.checkpoint import write_checkpoint

    signature = game_signature(game, options)
    rng = np.random.default_rng(0)
    inputs = signature["observation_size"] + (signature["num_actions"] if advisor else 0)
    net = PolicyNet([rng.normal(size=(inputs, hidden)), rng.normal(size=(hidden, signature["num_actions"]))],
                    [np.zeros(hidden), np.zeros(signature["num_actions"])], "tanh")
    meta = {"game": signature, "config": {"seed": 0, "total_timesteps": 1000}, "num_timesteps": 1024,
            "policy": {"activation": "tanh", "net_arch": [hidden], "deterministic": True, "advisor": advisor},
            "run": {"wall_time": 12.5, "cpu_time": 20.0}, "evaluations": []}
    write_checkpoint(path, Checkpoint(meta, net, b"model bytes"))
    return path


def test_an_added_entry_plays_exactly_as_its_checkpoint(tmp_path):
    checkpoint = random_checkpoint(tmp_path / "run" / "checkpoint.zip")
    summary = tmp_path / "run" / "summary.json"
    summary.write_text(json.dumps({"wall_time": 61.0, "cpu_time": 90.0, "results": [
        {"opponent": "random", "games": 10, "wins": 9, "win_rate": 0.9, "ci_low": 0.6, "ci_high": 0.98}]}))
    made = add(checkpoint, "tiny", commit="abc123", command="python -m train --config x.yaml",
               summary_path=summary, zoo_dir=tmp_path / "zoo")
    assert made.spec == f"zoo:{RW}/tiny"
    training = made.training
    assert training["commit"] == "abc123" and training["decisions"] == 1024 and training["wall_time_s"] == 61.0
    assert training["final_evaluation"][0]["win_rate"] == 0.9 and made.ladder is None
    assert [e.spec for e in entries(zoo_dir=tmp_path / "zoo")] == [made.spec]
    from_zoo = CheckpointAgent(str(made.weights_path), RW, 3, checkpoint=made.checkpoint(), name=made.spec)
    from_file = make_agent(RW, f"checkpoint:{checkpoint}", 3)
    game = card_envs.make_game(RW)
    state = game.new_state(np.random.default_rng(0))
    while not state.is_over:  # the same policy: the same move at every decision of a whole game
        decision = Decision.of(state)
        assert from_zoo.act(decision) == from_file.act(decision)
        state.apply(from_file.act(decision))
    assert from_zoo.name == f"zoo:{RW}/tiny"


def test_an_entry_is_small_and_refuses_a_replacement_without_force(tmp_path):
    checkpoint = random_checkpoint(tmp_path / "checkpoint.zip", hidden=64)
    made = add(checkpoint, "tiny", commit="x", zoo_dir=tmp_path)
    assert made.size_bytes() < MAX_BYTES
    with zipfile.ZipFile(checkpoint) as archive:  # model.zip and snapshots are left out
        assert made.weights_path.stat().st_size < archive.getinfo("policy.npz").file_size
    with pytest.raises(ZooError, match="exists .*pass --force"):
        add(checkpoint, "tiny", commit="x", zoo_dir=tmp_path)
    add(checkpoint, "tiny", commit="y", zoo_dir=tmp_path, force=True)
    assert entry(f"zoo:{RW}/tiny", zoo_dir=tmp_path).training["commit"] == "y"


def test_damaged_or_unknown_entries_are_clear_errors(tmp_path):
    made = add(random_checkpoint(tmp_path / "checkpoint.zip"), "tiny", commit="x", zoo_dir=tmp_path)
    data = bytearray(made.weights_path.read_bytes())
    data[-10] ^= 0xFF
    made.weights_path.write_bytes(bytes(data))
    with pytest.raises(ZooError, match="does not match the checksum"):
        entry(made.spec, zoo_dir=tmp_path).checkpoint()
    with pytest.raises(ZooError, match=f"no zoo entry zoo:{RW}/nope; shipped: zoo:{RW}/tiny"):
        entry(f"zoo:{RW}/nope", zoo_dir=tmp_path)
    for bad in ("zoo:revolutionary_war_v0", "zoo:/x", "zoo:a/b/c"):
        with pytest.raises(ZooError, match="is not zoo:<game>/<name>"):
            parse_spec(bad)
    with pytest.raises(ZooError, match="use letters"):
        add(tmp_path / "checkpoint.zip", "../evil", zoo_dir=tmp_path)
    with pytest.raises(CheckpointError, match="does not exist"):
        add(tmp_path / "missing.zip", "x", zoo_dir=tmp_path)


def test_the_ladder_rating_is_recorded_in_the_manifest(tmp_path):
    made = add(random_checkpoint(tmp_path / "checkpoint.zip"), "tiny", commit="x", zoo_dir=tmp_path)
    rating = {"version": 1, "elo": {"value": 12.0, "low": 2.0, "high": 22.0}}
    set_ladder_rating(made, rating)
    assert entry(made.spec, zoo_dir=tmp_path).ladder == rating


def test_an_advised_entry_builds_its_advisor(tmp_path):
    made = add(random_checkpoint(tmp_path / "checkpoint.zip", advisor="heuristic:endgame"), "advised", commit="x",
               zoo_dir=tmp_path)
    agent = CheckpointAgent(str(made.weights_path), RW, 0, checkpoint=made.checkpoint(), name=made.spec,
                            make_agent=make_agent)
    assert agent.advisor is not None and agent.advisor.name == "heuristic:endgame"
    play_game(card_envs.make_game(RW), [agent, make_agent(RW, "random", 1)], 5)


def test_an_advised_entry_without_a_way_to_build_its_advisor_is_a_clear_error(tmp_path):
    """agents.players.checkpoint stands below the registry: whoever builds an advised policy hands in make_agent."""
    made = add(random_checkpoint(tmp_path / "checkpoint.zip", advisor="heuristic:endgame"), "advised", commit="x",
               zoo_dir=tmp_path)
    with pytest.raises(CheckpointError, match="advice of 'heuristic:endgame'.*make_agent"):
        CheckpointAgent(str(made.weights_path), RW, 0, checkpoint=made.checkpoint(), name=made.spec)


# -- the shipped entries ------------------------------------------------------------------------


@pytest.mark.parametrize("found", entries(), ids=lambda e: e.spec)
def test_a_shipped_agent_records_how_it_was_trained_and_stays_small(found):
    training = found.training
    assert training["commit"] and training["command"].startswith("python -m train --config configs/")
    assert training["decisions"] > 1_000_000 and training["wall_time_s"] > 60 and training["config"]
    assert training["final_evaluation"] and training["report"].startswith("benchmarks/results/training_")
    assert found.size_bytes() < MAX_BYTES
    assert training["trainer"] == TRAINERS[training["config"].get("backend", "sb3")]
    if found.ladder is not None:  # rated: the rating is the published ladder's
        assert found.ladder["elo"]["low"] <= found.ladder["elo"]["value"] <= found.ladder["elo"]["high"]


@pytest.mark.slow  # opt-in until the artifacts are built: bash benchmarks/zoo_and_ladders.sh (hours of CPU)
def test_every_game_ships_a_rated_agent():
    """Issue 26's "done when": a zoo agent for every game, rated on its ladder."""
    shipped = {e.game: e for e in entries()}
    assert sorted(shipped) == sorted(card_envs.ENV_NAMES)
    assert all(found.ladder is not None for found in shipped.values())


#: plays one game with every shipped agent against random players, printing how many it played
PLAY_EVERY_ENTRY = """
import numpy as np
import card_envs
from agents.players.base import Decision
from agents.players.registry import make_agent
from agents.players.zoo import entries
played = 0
for found in entries():
    game = card_envs.make_game(found.game, **found.manifest["game"]["env_options"])
    seats = [make_agent(found.game, found.spec, 0)]
    seats += [make_agent(found.game, "random", s) for s in range(1, game.num_players)]
    state = game.new_state(np.random.default_rng(1))
    for seat, agent in enumerate(seats):
        agent.reset(game, seat)
    while not state.is_over:
        state.apply(seats[state.current_player].act(Decision.of(state)))
    played += 1
print(played, card_envs.__file__)
"""


def test_zoo_agents_play_with_neither_torch_nor_ray_nor_train_imported(tmp_path):
    """Blocks the imports outright: any attempt raises, so the game could not even start. Plays every shipped
    agent and, from a zoo of its own, an agent that reads the advice of a rule-based player."""
    add(random_checkpoint(tmp_path / "checkpoint.zip", advisor="heuristic:endgame"), "advised", commit="x",
        zoo_dir=tmp_path / "zoo")
    blocked = ("import sys\nfor name in ('torch', 'ray', 'train', 'stable_baselines3', 'sb3_contrib', 'scipy'):\n"
               "    sys.modules[name] = None\n")
    for zoo in (None, tmp_path / "zoo"):
        switch = (f"import agents.players.zoo, pathlib\nagents.players.zoo.ZOO_DIR = pathlib.Path({str(zoo)!r})\n"
                  if zoo else "")
        done = subprocess.run([sys.executable, "-c", blocked + switch + PLAY_EVERY_ENTRY], capture_output=True,
                              text=True, cwd=ROOT, check=False)
        assert done.returncode == 0, done.stderr
        assert int(done.stdout.split()[0]) == len(entries(zoo_dir=zoo))
    assert len(entries(zoo_dir=tmp_path / "zoo")) == 1


def test_the_listing_shows_every_entry(capsys):
    assert zoo_main([]) == 0
    out = capsys.readouterr().out
    for found in entries():
        assert f"`{found.spec}`" in out
    assert zoo_main(["show", "zoo:nope/x"]) == 2


@pytest.mark.slow
def test_a_zoo_agent_plays_in_a_fresh_venv_without_torch_or_ray(tmp_path):
    """pip-installs this checkout (core dependencies only, package data included) into a new venv and plays
    every shipped agent from another folder, so nothing is imported from the checkout."""
    source = tmp_path / "source"  # a copy, so that pip's build folder is not left in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", "runs", "build", "*.egg-info", ".git",
                                                                 "__pycache__", ".*_cache"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
                   check=True, cwd=tmp_path)
    code = ("import importlib.util\n"
            "assert importlib.util.find_spec('torch') is None and importlib.util.find_spec('ray') is None\n")
    done = subprocess.run([str(python), "-c", code + PLAY_EVERY_ENTRY], capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    count, location = done.stdout.split()
    assert int(count) == len(entries()) > 0 and str(venv) in location


def test_a_model_trained_under_other_observation_options_reads_its_own_observation(tmp_path):
    """Revolution's full_recall and void_inferences change only the observation (RULES.md): a model trained with
    full_recall plays at a full_recall + void_inferences table (the Revolution ladder's) on exactly the observation
    a full_recall table gives, advice included; a table whose views forget the hand is refused, naming why."""
    rev = "revolution_v0"
    path = random_checkpoint(tmp_path / "recall.zip", rev, advisor="heuristic:counting",
                             options={"full_recall": True, "trick_reward": 0.1})
    table = card_envs.make_game(rev, full_recall=True, void_inferences=True)
    trained = card_envs.make_game(rev, full_recall=True)
    assert table.observation_size != trained.observation_size
    agent = make_agent(rev, f"checkpoint:{path}", 0)
    state, twin = table.new_state(np.random.default_rng(3)), trained.new_state(np.random.default_rng(3))
    for player in range(4):
        agent.reset(table, player)
    for _ in range(60):
        if state.is_over:
            break
        decision, expected = Decision.of(state), Decision.of(twin)
        seen = agent.observation(decision)
        np.testing.assert_array_equal(seen[:trained.observation_size], expected.observation)
        assert seen[trained.observation_size:].sum() == 1.0  # the counting player's advice, one-hot
        action = agent.act(decision)
        state.apply(action)
        twin.apply(action)
    with pytest.raises(CheckpointError, match="full_recall=False"):
        agent.reset(card_envs.make_game(rev), 0)
    plain = random_checkpoint(tmp_path / "plain.zip", rev)  # the 541 entries read a part of any view
    seats = [make_agent(rev, f"checkpoint:{plain}", 0)] + [make_agent(rev, "random", seat) for seat in range(3)]
    assert play_game(table, seats, 0).is_over

