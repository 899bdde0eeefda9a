"""The play tables without a browser: whole games, no leaks, refused requests, deals, watching, replays."""

from __future__ import annotations

import re

import numpy as np
import pytest

import card_envs
from agents.play.layout import board_cards
from agents.play.tables import PlayTable, TableError, Tables, WatchTable, make_game
from agents.players.registry import strongest_heuristic
from agents.tournaments.saved_games import load_game
from tests.play_helpers import QUICK_CONFIGS, SeenSoFar, check_payload, replay_states, visible_cards

GAMES = card_envs.ENV_NAMES


def play_to_end(table: PlayTable, rng: np.random.Generator, limit: int = 5000, steps: int | None = None) -> list[dict]:
    """Play the person's seat with random legal moves (to the end, or ``steps`` decisions); every
    snapshot the table produced, in order."""
    snapshots = [table.snapshot()]
    for _ in range(limit if steps is None else steps):
        snap = snapshots[-1]
        if snap["over"]:
            return snapshots
        if snap["you_act"]:
            move = snap["legal"][int(rng.integers(len(snap["legal"])))]
            snapshots.append(table.move(snap["turn"], move["action"]))
        else:
            snapshots.append(table.advance(snap["turn"]))
    if steps is None:
        raise AssertionError("the game did not end")
    return snapshots


def table_for(name: str, seat: int = 0, seed: int = 0, config: dict | None = None,
              opponents: list[str] | None = None) -> PlayTable:
    game = make_game(name, QUICK_CONFIGS[name] if config is None else config)
    return PlayTable(game, seat, opponents or [strongest_heuristic(name)], seed, delay_ms=0)


def assert_no_leak(table: PlayTable, snapshots: list[dict]) -> None:
    states = replay_states(table.state, table.deal_seed)
    oracle = SeenSoFar(states, table.seat)
    for snap in snapshots:
        k = snap["decisions"]
        check_payload(snap, table.game.name, oracle.visible[k], oracle.cumulative[k])


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seat, seed", [(0, 0), (1, 1)])
def test_a_whole_game_shows_the_seat_nothing_it_may_not_see(name, seat, seed):
    table = table_for(name, seat, seed)
    snapshots = play_to_end(table, np.random.default_rng(seed))
    assert_no_leak(table, snapshots)
    final = snapshots[-1]
    assert final["over"] and final["result"]["winners"] == table.state.winners()
    assert final["result"]["returns"] == pytest.approx(table.state.returns())
    assert final["legal"] == [] and final["waiting_for"] is None


@pytest.mark.parametrize("name, config", [(name, config) for name in GAMES
                                          for config in card_envs.make_game(name).variant_configs()[1:]])
def test_variant_configs_show_nothing_hidden(name, config):
    """Matches (RW), full recall (Revolution), jokers and retirement (Battlecards), diamonds pools (Bloodlines)."""
    if name == "battlecards_v0":
        config = {**config, "max_rounds": min(config.get("max_rounds") or 60, 60)}
    seats = card_envs.make_game(name, **config).num_players
    table = table_for(name, seat=seats - 1, seed=3, config=config, opponents=["random"])
    assert_no_leak(table, play_to_end(table, np.random.default_rng(3)))


def test_the_oracle_catches_a_board_that_shows_a_hidden_hand():
    """The no-leak check can fail: a board that also shows the opponent's hand is caught."""
    table = table_for("revolutionary_war_v0")
    snap = table.snapshot()
    state = table.state
    opponent = 1 - table.seat
    from agents.play import revolutionary_war

    leaky = revolutionary_war.board(table.game, {table.seat: state.view(table.seat),
                                                 opponent: state.view(opponent)}, table.names(), table.seat)
    visible = visible_cards(state, table.seat)
    with pytest.raises(AssertionError, match="cannot see now"):
        check_payload({**snap, "board": leaky}, table.game.name, visible, visible)
    with pytest.raises(AssertionError, match="never seen"):
        hidden = state.hands[opponent][0]
        from card_envs.cards import card_code

        check_payload({**snap, "log": [{"text": f"player_1 holds {card_code(hidden)}"}]}, table.game.name,
                      visible, visible)


@pytest.mark.parametrize("name", GAMES)
def test_the_snapshot_depends_only_on_the_seat_view(name):
    """Redraw everything the seat cannot see (sample_hidden keeps its view): the page data is the same."""
    table = table_for(name, seat=0, seed=5)
    rng = np.random.default_rng(5)
    snapshots = play_to_end(table, rng, steps=1)  # one step, then check mid-game positions
    for _ in range(12):
        snap = table.snapshot()
        if snap["over"]:
            break
        real = table.state
        for _ in range(3):
            table.state = real.sample_hidden(table.seat, rng)
            assert table.snapshot() == snap
        table.state = real
        snapshots.append(table.move(snap["turn"], snap["legal"][0]["action"]) if snap["you_act"]
                         else table.advance(snap["turn"]))


# -- refused requests: 4xx, nothing changes ------------------------------------------------------------


def _refused(table: PlayTable, call, status: int, match: str) -> None:
    before_state, before_turn, before_log = table.state.to_dict(), table.turn, list(table.log)
    with pytest.raises(TableError, match=match) as refusal:
        call()
    assert refusal.value.status == status
    assert table.state.to_dict() == before_state and table.turn == before_turn and table.log == before_log


@pytest.mark.parametrize("name", GAMES)
def test_malformed_illegal_stale_and_out_of_turn_requests_change_nothing(name):
    table = table_for(name, seat=0, seed=2)
    snap = table.snapshot()
    while not snap["you_act"]:
        snap = table.advance(snap["turn"])
    turn = snap["turn"]
    legal = [m["action"] for m in snap["legal"]]
    illegal = next(a for a in range(table.game.num_actions) if a not in legal) if len(legal) < table.game.num_actions \
        else None
    if illegal is not None:
        _refused(table, lambda: table.move(turn, illegal), 400, "illegal action")
    for bad in (-1, table.game.num_actions, 10**12):
        _refused(table, lambda bad=bad: table.move(turn, bad), 400, "illegal action")
    for bad in ("1", 1.0, True, None, [legal[0]]):
        _refused(table, lambda bad=bad: table.move(turn, bad), 422, "must be an integer")
        _refused(table, lambda bad=bad: table.move(bad, legal[0]), 422, "must be an integer")
    _refused(table, lambda: table.move(turn - 1, legal[0]), 409, "stale")
    _refused(table, lambda: table.move(turn + 1, legal[0]), 409, "stale")
    _refused(table, lambda: table.advance(turn), 409, "your turn")
    _refused(table, lambda: table.new_deal(turn, "shuffle"), 422, "'deal' must be")
    _refused(table, lambda: table.saved_game(), 409, "still running")
    snap = table.move(turn, legal[0])
    if snap["waiting_for"] is not None:  # an agent to act: the person may not move
        _refused(table, lambda: table.move(snap["turn"], legal[0]), 409, "not your turn")
    snap = play_to_end(table, np.random.default_rng(2))[-1]
    _refused(table, lambda: table.move(snap["turn"], legal[0]), 409, "over")
    _refused(table, lambda: table.advance(snap["turn"]), 409, "over")


def test_bad_table_setups_are_refused_with_a_message():
    game = make_game("revolution_v0", {})
    with pytest.raises(TableError, match="seat must be 0..3"):
        PlayTable(game, 4, ["random"], 0)
    with pytest.raises(TableError, match="one opponent spec for all 3 other seats or one per seat"):
        PlayTable(game, 0, ["random", "random"], 0)
    with pytest.raises(TableError, match="opponent 'heuristic:nope'"):
        PlayTable(game, 0, ["heuristic:nope"], 0)
    with pytest.raises(TableError, match="bad game config"):
        make_game("revolution_v0", {"num_hands": 0})
    with pytest.raises(TableError, match="unknown game"):
        make_game("poker_v0", {})


# -- deals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_same_deal_swap_seats_and_new_game(name):
    table = table_for(name, seat=0, seed=11)
    start = table.state.clone()
    first_view = table.snapshot()["board"]
    play_to_end(table, np.random.default_rng(0), steps=6)
    snap = table.new_deal(table.turn, "same")
    assert snap["decisions"] == 0 and snap["seat"] == 0 and snap["deal"] == 0
    assert snap["board"] == first_view and table.state == start  # the same deal, card for card
    snap = table.new_deal(table.turn, "swap")
    seats = table.game.num_players
    assert snap["seat"] == 1 and table.state == start  # the same deal, from the next seat
    assert table.seat_specs()[1] == "human" and table.seat_specs()[0] == table.opponent_specs[-1]
    hand = next(z for z in snap["board"]["seats"][1]["zones"] if z["label"] == "hand")
    assert sorted(c["c"] for c in hand["cards"]) == sorted(_hand_codes(start, 1))  # the other seat's cards
    snap = table.new_deal(table.turn, "new")
    assert snap["deal"] == 1 and snap["seat"] == 1 % seats and table.state != start


def _hand_codes(state, seat: int) -> list[str]:
    from card_envs.cards import CODES

    return [CODES[c] for c in state.card_locations()[f"hand_{seat}"]]


def test_two_tables_are_independent():
    game = make_game("revolutionary_war_v0", {})
    one, two = PlayTable(game, 0, ["random"], 1), PlayTable(game, 0, ["random"], 2)
    assert one.state != two.state
    before = two.state.to_dict()
    play_to_end(one, np.random.default_rng(0))
    assert two.state.to_dict() == before and two.turn == 0
    tables = Tables(limit=2)
    ids = [tables.add(t) for t in (one, two, PlayTable(game, 0, ["random"], 3))]
    assert len(set(ids)) == 3 and len(tables) == 2
    with pytest.raises(TableError, match="no table") as missing:
        tables.get(ids[0])  # the least recently used was dropped
    assert missing.value.status == 404
    assert tables.get(ids[2]).seed == 3


def test_a_finished_game_saves_and_replays_exactly(tmp_path):
    table = table_for("revolution_v0", seat=2, seed=4)
    play_to_end(table, np.random.default_rng(4))
    record = table.saved_game()
    assert record["agents"][2] == "human" and record["actions"] == table.state.history
    saved = load_game(record)
    replay = WatchTable(saved.game, saved=saved)
    assert replay.complete and replay.current == table.state


# -- watching ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_watching_one_seat_shows_only_that_seat(name):
    game = make_game(name, QUICK_CONFIGS[name])
    table = WatchTable(game, agents=[strongest_heuristic(name), "random"] if game.num_players == 2 else ["random"],
                       seed=8)
    frame, k = table.frame(0, "all"), 0
    while not frame["over"]:
        k += 1
        frame = table.frame(k, "all")
    assert frame["final_frame"] == k and frame["result"]["winners"] == table.current.winners()
    with pytest.raises(TableError, match="does not exist") as beyond:
        table.frame(k + 1, "all")
    assert beyond.value.status == 404
    for seat in range(game.num_players):
        oracle = SeenSoFar(table.states, seat)
        for j in range(0, k + 1, max(1, k // 25)):
            check_payload(table.frame(j, seat), name, oracle.visible[j], oracle.cumulative[j])
    everyone = {code for panel_seat, code in board_cards(table.frame(1, "all")["board"])}
    for seat in range(game.num_players):
        assert set(_hand_codes(table.states[1], seat)) <= everyone or name == "bloodlines_v0"
    for bad in ("everyone", game.num_players, -1):
        with pytest.raises(TableError, match="'view' must be"):
            table.frame(0, bad)


def test_all_hands_shows_every_hand():
    game = make_game("bloodlines_v0", {})
    table = WatchTable(game, agents=["random"], seed=1)
    board = table.frame(3, "all")["board"]
    for seat in (0, 1):
        shown = sorted((code for s, code in board_cards(board) if s == seat and code), key=str)
        hand = _hand_codes(table.states[3], seat)
        assert set(hand) <= set(shown)


def test_a_watched_game_saves_and_its_replay_has_the_same_frames():
    game = make_game("battlecards_v0", {"num_players": 3, "max_rounds": 20})
    watched = WatchTable(game, agents=["heuristic:counter", "random", "heuristic:cheapest"], seed=2)
    with pytest.raises(TableError, match="not finished"):
        watched.saved_game()
    k = 0
    while not watched.frame(k, "all")["over"]:
        k += 1
    replay = WatchTable(game, saved=load_game(watched.saved_game()))
    for j in (0, 1, k // 2, k):
        for view in ("all", 0, 2):
            a, b = watched.frame(j, view), replay.frame(j, view)
            assert a["board"] == b["board"] and a["log"] == b["log"] and a["result"] == b["result"]


def test_battlecards_burials_show_their_kind_to_the_burier_only():
    """R11c / spec 7.2: a card buried from hand is face down; only its owner knows its kind."""
    config = {"max_rounds": 300}
    table = table_for("battlecards_v0", seat=0, seed=2, config=config, opponents=["random"])
    snapshots = play_to_end(table, np.random.default_rng(2))
    texts = [entry["text"] for entry in table.log]
    theirs = [t for t in texts if t.startswith("player_1 buries")]
    mine = [t for t in texts if t.startswith("player_0 buries")]
    assert theirs and mine  # this deal has burials on both sides
    assert all(t == "player_1 buries a card face down" for t in theirs)
    assert all(re.fullmatch(r"player_0 buries (10|[2-9JQKA]|X) face down", t) for t in mine)
    assert_no_leak(table, snapshots)
    placed = [c for s in snapshots for z in s["board"]["center"] if z["label"].startswith("war level")
              for c in z["cards"]]
    assert any(c["c"] is None and c["t"].startswith("player_1") for c in placed)  # theirs: backs
    assert any(c["c"] and c["t"] == "player_0 · hand" for c in placed)  # mine: face up to me


def test_the_library_and_the_tables_never_import_the_web_or_terminal_stack():
    """Layers: card_envs stays numpy + gymnasium + pettingzoo; the tables need no extra (design.md)."""
    import subprocess
    import sys

    code = ("import sys, card_envs\n"
            "for name in card_envs.ENV_NAMES: card_envs.make(name)\n"
            "import agents.play.tables, agents.play.revolutionary_war, agents.play.bloodlines, agents.play.revolution\n"
            "import agents.play.battlecards, agents.tournaments.saved_games\n"
            "stack = {'fastapi', 'uvicorn', 'starlette', 'rich', 'playwright'}\n"
            "heavy = {m.split('.')[0] for m in sys.modules} & stack\n"
            "sys.exit(', '.join(sorted(heavy)) or 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
