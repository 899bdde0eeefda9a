"""The web table's HTTP API (FastAPI's test client, no browser): refused requests, tabs, replays, the page."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the play table needs the extra 'play'")
from fastapi.testclient import TestClient  # noqa: E402

from agents.play.server import STATIC, Setup, create_app  # noqa: E402
from agents.tournaments.saved_games import game_record  # noqa: E402


def client_for(**setup) -> TestClient:
    return TestClient(create_app(Setup(**setup)))


def open_table(client: TestClient) -> dict:
    response = client.post("/api/tables", json={})
    assert response.status_code == 200, response.text
    return response.json()


def wait_for_you(client: TestClient, snap: dict) -> dict:
    while not snap["you_act"] and not snap["over"]:
        snap = client.post(f"/api/tables/{snap['table']}/advance", json={"turn": snap["turn"]}).json()
    return snap


def server_state(client: TestClient, table_id: str) -> dict:
    return client.app.state.tables.get(table_id).state.to_dict()


def test_bad_requests_get_a_4xx_with_a_message_and_change_nothing():
    client = client_for(game="revolutionary_war_v0", opponents=["heuristic:pot"], seed=4, delay_ms=0)
    snap = wait_for_you(client, open_table(client))
    table, turn = snap["table"], snap["turn"]
    legal = [m["action"] for m in snap["legal"]]
    illegal = next(a for a in range(14) if a not in legal)
    before = server_state(client, table)
    url = f"/api/tables/{table}/move"
    cases = [
        (client.post(url, content=b"{not json", headers={"content-type": "application/json"}), 422, "JSON"),
        (client.post(url, json={"turn": turn}), 422, "action"),
        (client.post(url, json={"turn": turn, "action": "13"}), 422, "integer"),
        (client.post(url, json={"turn": turn, "action": True}), 422, "integer"),
        (client.post(url, json={"turn": turn, "action": 1.5}), 422, "integer"),
        (client.post(url, json={"turn": turn, "action": legal[0], "seat": 1}), 422, "Extra inputs"),
        (client.post(url, json=[turn, legal[0]]), 422, ""),
        (client.post(url, json={"turn": turn, "action": illegal}), 400, "illegal action"),
        (client.post(url, json={"turn": turn, "action": 99}), 400, "out of range"),
        (client.post(url, json={"turn": turn - 1, "action": legal[0]}), 409, "stale"),
        (client.post(f"/api/tables/{table}/advance", json={"turn": turn}), 409, "your turn"),
        (client.post(f"/api/tables/{table}/new", json={"turn": turn, "deal": "reshuffle"}), 422, ""),
        (client.get(f"/api/tables/{table}/frames/0"), 409, "no frames"),
        (client.get(f"/api/tables/{table}/saved"), 409, "still running"),
        (client.post("/api/tables/nope/move", json={"turn": 0, "action": 0}), 404, "no table"),
        (client.get("/static/../server.py"), 404, ""),
    ]
    for response, status, text in cases:
        assert response.status_code == status, (response.status_code, response.text)
        assert text in response.text and "detail" in response.json()
    assert server_state(client, table) == before
    assert client.get(f"/api/tables/{table}").json()["turn"] == turn
    moved = client.post(url, json={"turn": turn, "action": legal[0]})
    assert moved.status_code == 200 and moved.json()["turn"] == turn + 1
    again = client.post(url, json={"turn": turn, "action": legal[0]})  # the same click twice: stale
    assert again.status_code == 409


def test_two_tabs_play_two_independent_games():
    client = client_for(game="revolution_v0", config={"num_hands": 1}, opponents=["random"], seed=1, delay_ms=0)
    one, two = open_table(client), open_table(client)
    assert one["table"] != two["table"] and one["board"] != two["board"]  # different deals
    before = server_state(client, two["table"])
    snap = wait_for_you(client, one)
    client.post(f"/api/tables/{one['table']}/move", json={"turn": snap["turn"], "action": snap["legal"][0]["action"]})
    assert server_state(client, two["table"]) == before
    stale_elsewhere = client.post(f"/api/tables/{two['table']}/move",
                                  json={"turn": snap["turn"] + 1, "action": snap["legal"][0]["action"]})
    assert stale_elsewhere.status_code == 409


def test_the_page_never_gets_the_deal_seed_or_the_state():
    client = client_for(game="bloodlines_v0", opponents=["heuristic:defender"], seed=2, delay_ms=0)
    snap = open_table(client)
    table = client.app.state.tables.get(snap["table"])
    text = client.get(f"/api/tables/{snap['table']}").text
    assert str(table.deal_seed) not in text and str(table.seed) not in text
    assert set(snap) >= {"board", "legal", "log", "turn"} and not {"state", "seed", "history"} & set(snap)


def test_watch_mode_serves_frames_from_all_hands_or_one_seat():
    client = client_for(game="battlecards_v0", config={"max_rounds": 15}, mode="watch",
                        watch=["heuristic:counter", "random"], seed=3)
    created = open_table(client)
    assert created["mode"] == "watch" and created["frame"] == 0
    table = created["table"]
    k = 0
    while True:
        frame = client.get(f"/api/tables/{table}/frames/{k}", params={"view": "1"}).json()
        if frame["over"]:
            break
        k += 1
    assert frame["result"]["text"] and frame["final_frame"] == k
    assert client.get(f"/api/tables/{table}/frames/{k + 1}").status_code == 404
    assert client.get(f"/api/tables/{table}/frames/0", params={"view": "7"}).status_code == 422
    assert client.get(f"/api/tables/{table}/frames/x").status_code == 422
    assert client.post(f"/api/tables/{table}/move", json={"turn": 0, "action": 0}).status_code == 409
    saved = client.get(f"/api/tables/{table}/saved").json()
    replay = client.post("/api/replays", json=saved)
    assert replay.status_code == 200 and replay.json()["mode"] == "replay"
    same = client.get(f"/api/tables/{replay.json()['table']}/frames/{k}", params={"view": "1"}).json()
    assert same["board"] == frame["board"] and same["result"] == frame["result"]


def test_a_saved_game_opens_as_a_replay_and_a_bad_one_is_refused(tmp_path):
    import numpy as np

    import card_envs
    from agents.players.registry import make_agent
    from agents.tournaments.match import play_game

    game = card_envs.make_game("revolutionary_war_v0")
    state = play_game(game, [make_agent(game.name, "heuristic:endgame", 1), make_agent(game.name, "random", 2)], 5)
    record = game_record(state, seed=5, agents=["heuristic:endgame", "random"])
    path = tmp_path / "game.json"
    path.write_text(__import__("json").dumps(record))
    client = client_for(game="", mode="replay", replay=str(path))
    assert client.get("/api/setup").json()["game"] == "revolutionary_war_v0"
    created = open_table(client)
    last = len(record["actions"])
    end = client.get(f"/api/tables/{created['table']}/frames/{last}").json()
    assert end["over"] and end["result"]["winners"] == state.winners() and np.isclose(
        end["result"]["returns"], state.returns()).all()
    record["actions"][3] = 13 if record["actions"][3] != 13 else 0
    record.pop("moves")
    refused = client.post("/api/replays", json=record)
    assert refused.status_code == 422 and "saved game" in refused.json()["detail"]
    assert client.post("/api/replays", json=[1, 2]).status_code == 422


def test_the_page_loads_nothing_from_outside():
    client = client_for(game="revolutionary_war_v0")
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    sources = [page.text] + [client.get(f"/static/{name}").text for name in ("app.js", "style.css")]
    for text in sources:
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import", text, re.I)
        assert not re.search(r"(?<![A-Za-z])url\(", text)  # no CSS url(...) (URL.createObjectURL is fine)
    referenced = set(re.findall(r'(?:src|href)="([^"]+)"', page.text))
    assert referenced == {"/static/style.css", "/static/app.js", "data:,"}
    assert {p.name for p in STATIC.iterdir()} == {"index.html", "app.js", "style.css"}


def test_save_games_writes_every_finished_game_of_a_table(tmp_path):
    from agents.tournaments.saved_games import load_game, replay_saved

    client = client_for(game="revolution_v0", config={"num_hands": 1}, seat=1, opponents=["heuristic:cheap"], seed=6,
                        delay_ms=0, save_games=str(tmp_path))
    snap = open_table(client)
    for _game in range(2):
        while not snap["over"]:
            snap = wait_for_you(client, snap)
            if not snap["over"]:
                snap = client.post(f"/api/tables/{snap['table']}/move",
                                   json={"turn": snap["turn"], "action": snap["legal"][-1]["action"]}).json()
        snap = client.post(f"/api/tables/{snap['table']}/new", json={"turn": snap["turn"], "deal": "same"}).json()
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2  # the same deal twice: two files
    for path in files:
        saved = load_game(path)
        assert saved.agents[1] == "human" and replay_saved(saved).is_over
    assert load_game(files[0]).seed == load_game(files[1]).seed
