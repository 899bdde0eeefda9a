"""Saved games: match / evaluate --save-games write them; they replay exactly, or are refused."""

from __future__ import annotations

import json
import os

import pytest

import card_envs
from agents.tournaments import evaluate, match
from agents.tournaments.saved_games import FORMAT, SavedGameError, load_game, replay_saved


def _saved(directory) -> list[dict]:
    names = sorted(os.listdir(directory))
    assert names and all(n.endswith(".json") for n in names), names  # no temporary files left behind
    return [json.loads((directory / n).read_text()) for n in names]


def test_match_saves_every_game_and_each_replays_exactly(tmp_path, capsys):
    out = tmp_path / "games"
    assert match.main(["--game", "revolutionary_war_v0", "--agents", "random", "heuristic:pot", "--games", "6",
                       "--workers", "1", "--seed", "3", "--quiet", "--save-games", str(out)]) == 0
    table = capsys.readouterr().out
    records = _saved(out)
    assert len(records) == 6
    for record in records:
        assert record["format"] == FORMAT and sorted(record["agents"]) == ["heuristic:pot", "random"]
        final = replay_saved(load_game(record))
        assert final.is_over and final.returns() == record["returns"] and final.winners() == record["winners"]
    wins = sum(r["agents"][r["winners"][0]] == "heuristic:pot" for r in records if r["winners"])
    assert f"| heuristic:pot | random | 2 | 6 | {wins / 6:.3f}" in table  # the files are the games counted


def test_evaluate_saves_every_game_with_its_seating(tmp_path):
    out = tmp_path / "games"
    tournament = evaluate.run_tournament("revolution_v0", ["random", "heuristic:cheap"], 8, seed=1,
                                         config={"num_hands": 1}, save_games=str(out))
    records = _saved(out)
    assert len(records) == len(tournament.records)
    by_game = {(r["source"]["deal"], r["source"]["lineup"], r["source"]["seating"]): r for r in records}
    for game in tournament.records:
        record = by_game[game.deal, game.lineup, game.permutation]
        labels = [tournament.contestants[i].spec for i in game.seating]
        assert record["agents"] == labels and tuple(record["returns"]) == game.returns
        assert len(record["actions"]) == game.decisions
        assert evaluate.state_fingerprint(load_game(record).new_state()) == game.start


def test_evaluate_command_line_takes_save_games(tmp_path, capsys):
    out = tmp_path / "g"
    code = evaluate.main(["--game", "battlecards_v0", "--agents", "random", "heuristic:cheapest", "--games", "2",
                          "--workers", "1", "--quiet", "--resamples", "10", "--config", '{"max_rounds": 30}',
                          "--save-games", str(out)])
    assert code == 0 and len(_saved(out)) == 2


def _record(name: str = "bloodlines_v0") -> dict:
    import numpy as np

    from agents.players.registry import make_agent
    from agents.tournaments.match import play_game
    from agents.tournaments.saved_games import game_record

    game = card_envs.make_game(name)
    state = play_game(game, [make_agent(name, "random", 1), make_agent(name, "random", 2)], 9)
    assert state.history and np.isfinite(state.returns()).all()
    return game_record(state, seed=9, agents=["random", "random"])


@pytest.mark.parametrize("corrupt, message", [
    (lambda r: r.update(format="other"), "not a saved game"),
    (lambda r: r.update(version=2), "version 2 is not supported"),
    (lambda r: r.update(game="poker_v0"), "unknown game"),
    (lambda r: r.update(config={"hand_limit": 0}), "bad config"),
    (lambda r: r.update(seed=-1), "'seed' must be"),
    (lambda r: r.update(actions=["cycle 2C"]), "'actions' must be"),
    (lambda r: r.update(agents=["random"]), "one agent name per seat"),
    (lambda r: r["moves"].__setitem__(0, "pass"), "'moves' do not name"),
    (lambda r: (r["actions"].__setitem__(0, 214), r.pop("moves")), "does not replay"),
    (lambda r: (r["actions"].append(0), r.pop("moves")), "after the end"),
    (lambda r: r.update(seed=r["seed"] + 1, moves=None), "does not replay|recorded returns"),
    (lambda r: r.update(returns=[9.0, -9.0]), "does not replay exactly"),
])
def test_a_corrupt_saved_game_is_refused_with_a_message(corrupt, message):
    record = _record()
    load_game(record)  # the original replays
    corrupt(record)
    with pytest.raises(SavedGameError, match=message):
        load_game(record)


def test_a_saved_game_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(SavedGameError, match="cannot read saved game"):
        load_game(path)


def test_a_saved_game_replays_as_a_gif(tmp_path):
    """``card-envs play --replay FILE --gif OUT``: the deal, then the table after every action, every hand up."""
    import imageio.v3 as iio

    from agents.play.__main__ import main as play_main
    from card_envs.core.render import frame

    out = tmp_path / "games"
    assert match.main(["--game", "bloodlines_v0", "--agents", "random", "heuristic:defender", "--games", "2",
                       "--workers", "1", "--quiet", "--save-games", str(out), "--config", '{"max_turns": 6}']) == 0
    path = out / sorted(os.listdir(out))[0]
    saved = load_game(str(path))
    gif = tmp_path / "game.gif"
    assert play_main(["--replay", str(path), "--gif", str(gif)]) == 0
    frames = iio.imread(gif, index=None)
    deal = frame(saved.new_state())
    assert 2 <= len(frames) <= len(saved.actions) + 1  # identical neighbours may merge into one longer frame
    assert frames.shape[1:] == deal.shape and abs(frames[0].astype(int) - deal).mean() < 2  # the deal comes first
    assert abs(frames[-1].astype(int) - frame(replay_saved(saved))).mean() < 2  # and the final table last
