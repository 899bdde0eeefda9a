"""The strength ladder (agents/tournaments/ladder.py): Elo fits, the tournament plan, resuming, placing an agent, the
published ladders."""

from __future__ import annotations

import dataclasses
import json
from itertools import combinations

import numpy as np
import pytest

from agents.players.zoo import entry
from agents.tournaments.backends import Backend
from agents.tournaments.evaluate import run_tournament
from agents.tournaments.ladder import (
    LADDERS,
    RESULTS,
    ChunkStore,
    LadderSpec,
    Rung,
    build,
    build_time,
    elo_ratings,
    fingerprint,
    fit_elo,
    fit_placed_elo,
    ladder_plan,
    load_ladder,
    main,
    place,
    play_plan,
)
from agents.tournaments.records import GameRecord
from card_envs.core.errors import ConfigError

RW = "revolutionary_war_v0"


def logistic(difference: np.ndarray | float) -> np.ndarray | float:
    return 1 / (1 + 10 ** (-np.asarray(difference) / 400))


# -- Elo -------------------------------------------------------------------------------------------


def test_bradley_terry_recovers_known_elos_anchored_at_the_first_player():
    truth = np.array([0.0, 120.0, 260.0, 400.0, 650.0])
    rng = np.random.default_rng(1)
    points, count = np.zeros((5, 5)), np.zeros((5, 5))
    for a, b in combinations(range(5), 2):
        n = 4000
        won = rng.binomial(n, logistic(truth[a] - truth[b]))
        points[a, b], points[b, a] = won, n - won
        count[a, b] = count[b, a] = n
    fitted = fit_elo(points, count, 0)
    assert fitted[0] == 0.0
    assert np.max(np.abs(fitted - truth)) < 25  # a few standard errors at 4,000 games a pair


def test_a_clean_sweep_stays_finite_and_a_player_who_met_nobody_is_unrated():
    points = np.array([[0, 0, 0], [10, 0, 0], [0, 0, 0]], float)
    count = np.array([[0, 10, 0], [10, 0, 0], [0, 0, 0]], float)
    fitted = fit_elo(points, count, 0)
    assert 300 < fitted[1] < 1000 and np.isnan(fitted[2])


def test_placing_with_fixed_opponents_recovers_a_known_elo():
    fixed = np.array([0.0, 200.0, 350.0, 500.0])
    rng = np.random.default_rng(2)
    count = np.full(4, 3000.0)
    points = rng.binomial(3000, logistic(420.0 - fixed)).astype(float)
    assert abs(fit_placed_elo(points, count, fixed) - 420.0) < 25


def synthetic_records(truth: np.ndarray, deals: int, seed: int) -> list[GameRecord]:
    """Two-seat games of every pair on every deal, the winner drawn from the Elo model."""
    rng = np.random.default_rng(seed)
    records = []
    for deal in range(deals):
        for lineup, (a, b) in enumerate(combinations(range(len(truth)), 2)):
            for permutation, seating in enumerate(((a, b), (b, a))):
                first_wins = rng.random() < logistic(truth[seating[0]] - truth[seating[1]])
                winner = 0 if first_wins else 1
                returns = (1.0, -1.0) if first_wins else (-1.0, 1.0)
                records.append(GameRecord(deal, lineup, permutation, seating, returns, (winner,), None, 10, False, ""))
    return records


def test_elo_intervals_hold_the_truth_and_narrow_with_more_deals():
    truth = np.array([0.0, 150.0, 300.0])
    labels = ["random", "b", "c"]
    small = elo_ratings(synthetic_records(truth, 100, 3), labels, 100, resamples=300)
    large = elo_ratings(synthetic_records(truth, 1600, 4), labels, 1600, resamples=300)
    assert (small[0].low, small[0].high) == (0.0, 0.0)
    for few, many, value in zip(small[1:], large[1:], truth[1:], strict=True):
        assert few.low < value < few.high and many.low - 10 < value < many.high + 10
        assert (many.high - many.low) < 0.4 * (few.high - few.low)  # 16x the deals: about 1/4 the width


# -- the plan --------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(LADDERS))
def test_the_ladder_plan_plays_every_lineup_deal_once_and_meets_the_game_counts(game):
    spec = LADDERS[game]
    plan = ladder_plan(spec)
    schedule = plan.schedule
    covered = [(deal, lineup) for first, last, lineups in plan.jobs for deal in range(first, last)
               for lineup in lineups]
    assert len(covered) == len(set(covered))
    assert set(covered) == {(d, lineup) for lineup, cap in enumerate(plan.caps) for d in range(cap)}
    assert plan.games >= (20_000 if game == "revolution_v0" else 10_000)
    seatings = len(schedule.seatings)
    for index, rung in enumerate(spec.rungs):
        games = sum(cap * seatings for lineup, cap in zip(schedule.lineups, plan.caps, strict=True)
                    if index in lineup)
        assert games >= 1000, rung.label
        if rung.deals is None:  # an uncapped player meets every uncapped one on every deal
            assert all(cap == schedule.deals for lineup, cap in zip(schedule.lineups, plan.caps, strict=True)
                       if all(spec.rungs[a].deals is None for a in lineup))
        else:
            assert max(cap for lineup, cap in zip(schedule.lineups, plan.caps, strict=True) if index in lineup) \
                == min(rung.deals, schedule.deals)
    labels = [r.label for r in spec.rungs]
    assert labels[0] == "random" and [label for label in labels if label.startswith("ismcts-")] == \
        ["ismcts-1ms", "ismcts-10ms", "ismcts-100ms"]
    assert any(r.spec.startswith("zoo:") for r in spec.rungs)


SMALL = LadderSpec(RW, 1, (Rung("random", "random"), Rung("heuristic:cheapest", "heuristic:cheapest"),
                           Rung("heuristic:pot", "heuristic:pot"), Rung("heuristic:endgame", "heuristic:endgame", 6)),
                   games=300)


def test_an_uncapped_plan_plays_exactly_the_games_of_the_evaluation_harness():
    plan = ladder_plan(dataclasses.replace(SMALL, rungs=SMALL.rungs[:3] + (Rung("heuristic:endgame",
                                                                                "heuristic:endgame"),)))
    mine = play_plan(RW, {}, plan, 0, backend=Backend())
    harness = run_tournament(RW, [c.spec for c in plan.contestants], plan.games)
    assert mine.records == harness.records and len(mine.records) == plan.games


def test_a_killed_build_resumes_to_the_same_games_whatever_the_workers(tmp_path):
    plan = ladder_plan(SMALL)
    assert any(cap < plan.schedule.deals for cap in plan.caps)
    key = fingerprint(RW, {}, plan, 0)
    whole = play_plan(RW, {}, plan, 0, backend=Backend(), store=ChunkStore(tmp_path, key))
    chunks = sorted(tmp_path.glob("deals_*.json"))
    assert len(chunks) == len(plan.jobs)
    for path in chunks[::2]:  # as if killed with half the jobs done
        path.unlink()
    store = ChunkStore(tmp_path, key)
    resumed = play_plan(RW, {}, plan, 0, backend=Backend("local", 2), store=store)
    assert resumed.records == whole.records and len(whole.records) == plan.games
    assert store.resumed == len(chunks) - len(chunks[::2])
    # the report's wall time is every run's, not only the last one's
    assert ChunkStore(tmp_path, key).add_run(60.0) == (60.0, 1)
    assert ChunkStore(tmp_path, key).add_run(30.0) == (90.0, 2)
    assert "90 min wall over 2 runs" in build_time({"wall_time_s": 5400.0, "build_runs": 2, "chunks_resumed": 3,
                                                    "chunks": 7})
    assert {r.lineup for r in whole.records if r.deal >= 6} == \
        {i for i, lineup in enumerate(plan.schedule.lineups) if 3 not in lineup}
    other = ladder_plan(dataclasses.replace(SMALL, games=400))
    with pytest.raises(ConfigError, match="holds chunks of another tournament"):
        ChunkStore(tmp_path, fingerprint(RW, {}, other, 0))


def test_only_the_ladder_of_record_writes_ratings_into_the_zoo_manifests(tmp_path, monkeypatch):
    """A trial build (``--out`` elsewhere, or ``--games``) must not overwrite a shipped agent's published rating;
    the build of record (the default output, the ladder's own games) writes it."""
    import agents.tournaments.ladder

    spec = dataclasses.replace(SMALL, rungs=SMALL.rungs[:2] + (Rung("zoo:sb3_ppo", f"zoo:{RW}/sb3_ppo"),), games=60)
    monkeypatch.setitem(LADDERS, RW, spec)
    monkeypatch.setattr(agents.tournaments.ladder, "RESULTS", tmp_path / "results")
    (tmp_path / "results").mkdir()
    recorded = []
    monkeypatch.setattr("agents.players.zoo.set_ladder_rating",
                        lambda found, rating: recorded.append((found.name, rating)))
    state = ["--state", str(tmp_path / "state"), "--quiet"]
    assert main(["build", "--game", RW, "--out", str(tmp_path / "trial"), *state]) == 0
    assert main(["build", "--game", RW, "--games", "60", *state[:1], str(tmp_path / "state60"), "--quiet"]) == 0
    assert recorded == [] and (tmp_path / "trial.json").exists()
    assert main(["build", "--game", RW, *state]) == 0
    assert [(spec_, rating["games"]) for spec_, rating in recorded] == [("sb3_ppo", 40)]
    assert (tmp_path / "results" / f"ladder_{RW}.json").exists()


# -- placing ----------------------------------------------------------------------------------------


def consistent(placed, published: dict) -> bool:
    """The placement's 95% interval (the ladder's ratings held fixed) and the published one (the ladder's own
    uncertainty) overlap: the two estimates of one player's Elo agree within their errors."""
    return placed.low <= published["high"] and published["low"] <= placed.high


@pytest.fixture(scope="module")
def built_small_ladder(tmp_path_factory):
    """A four-player Revolutionary War ladder built for real (600 games): its spec, JSON path and document."""
    spec = dataclasses.replace(SMALL, rungs=SMALL.rungs[:3] + (Rung("heuristic:endgame", "heuristic:endgame"),),
                               games=600)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(LADDERS, RW, spec)
        document = build(spec, progress=False, resamples=200)
    path = tmp_path_factory.mktemp("ladder") / "ladder.json"
    path.write_text(json.dumps(document))
    return spec, path, document


@pytest.fixture
def small_ladder(built_small_ladder, monkeypatch):
    """The small ladder standing in for the published one during one test (``LADDERS`` restored after it, so
    the tests of the published ladders see the real definitions)."""
    spec, path, document = built_small_ladder
    monkeypatch.setitem(LADDERS, RW, spec)
    return path, document


def test_a_ladder_player_placed_on_fresh_deals_lands_within_its_published_interval(small_ladder):
    path, document = small_ladder
    published = {p["label"]: p["elo"] for p in document["players"]}
    placement = place(RW, "heuristic:pot", games=400, seed=5, ladder_path=path)
    assert consistent(placement.elo, published["heuristic:pot"])
    assert placement.neighbours["above"] is not None or placement.neighbours["below"] is not None
    assert [r["opponent"] for r in placement.head_to_head] == [p["label"] for p in document["players"]]
    again = place(RW, "heuristic:pot", games=400, seed=5, ladder_path=path)
    assert again.elo == placement.elo and again.head_to_head == placement.head_to_head


def test_placing_plays_a_costly_players_lineup_in_small_chunks_for_the_same_result_on_any_workers(small_ladder,
                                                                                                   monkeypatch):
    from agents.tournaments import ladder

    path, _ = small_ladder
    spec = LADDERS[RW]
    monkeypatch.setitem(LADDERS, RW, dataclasses.replace(spec, rungs=spec.rungs[:3] + (dataclasses.replace(
        spec.rungs[3], deals=6),)))  # the endgame player as a costly one: on the ladder's first 6 deals only
    plans = []

    def recorded(game, config, plan, seed, **options):
        plans.append(plan)
        return play_plan(game, config, plan, seed, **options)

    monkeypatch.setattr(ladder, "play_plan", recorded)
    one = place(RW, "heuristic:pot", games=400, seed=5, ladder_path=path, resamples=100)
    two = place(RW, "heuristic:pot", games=400, seed=5, ladder_path=path, resamples=100, backend=Backend("local", 2))
    assert (two.elo, two.head_to_head) == (one.elo, one.head_to_head)
    plan = plans[0]
    endgame = [i for i, c in enumerate(plan.contestants) if c.label == "heuristic:endgame"][0]
    costly = [job for job in plan.jobs if any(endgame in plan.schedule.lineups[k] for k in job[2])]
    assert len(costly) > 1 and all(len(job[2]) == 1 for job in costly)  # on its own, in several chunks
    assert all((last - first) * 2 <= ladder.PLACING_GAMES for first, last, _ in costly)


def test_sprt_stops_placing_as_soon_as_stronger_than_random_is_decided(small_ladder, capsys):
    path, _ = small_ladder
    placement = place(RW, "heuristic:endgame", games=4000, seed=2, ladder_path=path, sprt_against="random",
                      elo0=0, elo1=50)
    assert placement.sprt["verdict"] == "H1" and placement.games < 4000 / 4
    code = main(["--game", RW, "--agent", "heuristic:cheapest", "--games", "40", "--ladder", str(path), "--quiet",
                 "--players", "random", "heuristic:pot", "--workers", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "Elo (random = 0)" in out and "| heuristic:pot |" in out and "nearest" in out
    assert main(["--game", RW, "--agent", "heuristic:nope", "--ladder", str(path), "--quiet"]) == 2
    assert main(["--game", RW, "--agent", "random", "--players", "ismcts-nope", "--ladder", str(path)]) == 2


# -- the published ladders --------------------------------------------------------------------------


PUBLISHED = sorted(game for game in LADDERS if (RESULTS / f"ladder_{game}.json").exists())


def test_every_game_has_a_published_ladder():
    """Issue 26's "done when": four ladders committed."""
    assert PUBLISHED == sorted(LADDERS)


@pytest.mark.parametrize("game", PUBLISHED)
def test_each_published_ladder_matches_its_definition_and_reports_every_interval(game):
    document = load_ladder(game)
    spec = LADDERS[game]
    assert document["version"] == spec.version and document["config"] == dict(spec.config)
    assert sorted(p["spec"] for p in document["players"]) == sorted(r.spec for r in spec.rungs)
    assert document["games"] >= (20_000 if game == "revolution_v0" else 10_000)
    for player in document["players"]:
        assert player["games"] >= 1000
        assert player["elo"]["low"] <= player["elo"]["value"] <= player["elo"]["high"]
        assert player["openskill"]["low"] < player["openskill"]["mu"] < player["openskill"]["high"]
        if player["spec"].startswith("zoo:"):
            assert entry(player["spec"]).ladder["elo"] == player["elo"]
    for suffix in (".md", ".png"):
        assert (RESULTS / f"ladder_{game}{suffix}").exists()
    assert document["evaluation"]["same_start_per_deal"] and not document["evaluation"]["failures"]


def _place_zoo_agent(game: str, players: list[str] | None, games: int) -> None:
    document = load_ladder(game)
    zoo = next(p for p in document["players"] if p["spec"].startswith("zoo:"))
    placement = place(game, zoo["spec"], games=games, seed=7, players=players)
    assert consistent(placement.elo, zoo["elo"]), (placement.elo, zoo["elo"])


@pytest.mark.parametrize("game", [game for game in PUBLISHED if game == RW])
def test_the_shipped_agent_placed_on_its_published_ladder_lands_within_its_rating(game):
    """Small scale: the uncapped players of the ladder (no costly search), 600 games."""
    cheap = [r.label for r in LADDERS[game].rungs if r.deals is None]
    _place_zoo_agent(game, cheap, 600)


@pytest.mark.slow
@pytest.mark.parametrize("game", PUBLISHED)
def test_the_shipped_agent_placed_on_the_whole_published_ladder_lands_within_its_rating(game):
    _place_zoo_agent(game, None, 3000)


def test_a_recorded_placement_is_the_zoo_entrys_rating(small_ladder, tmp_path):
    """``--record``: the placement's Elo and openskill go into the entry's manifest, marked as placed."""
    from agents.players.zoo import add, entry
    from agents.tournaments.ladder import record_placement
    from tests.test_zoo import random_checkpoint

    path, _ = small_ladder
    placement = place(RW, "heuristic:pot", games=200, seed=3, ladder_path=path)
    made = add(random_checkpoint(tmp_path / "checkpoint.zip"), "placed", commit="x", zoo_dir=tmp_path)
    record_placement(dataclasses.replace(placement, spec=made.spec, command="python -m agents.ladder ..."),
                     zoo_dir=tmp_path)
    rating = entry(made.spec, zoo_dir=tmp_path).ladder
    assert rating["placed"] and rating["version"] == placement.ladder_version and rating["games"] == placement.games
    assert (rating["elo"]["low"], rating["elo"]["value"], rating["elo"]["high"]) == (
        placement.elo.low, placement.elo.value, placement.elo.high)
    assert rating["openskill"] == placement.openskill
    # `show` lists it under the ladder of that version only
    from agents.tournaments.ladder import placed_table
    shown = placed_table({"game": RW, "version": placement.ladder_version}, zoo_dir=tmp_path)
    assert f"`{made.spec}`: {placement.elo.value:+.0f} [{placement.elo.low:+.0f}, {placement.elo.high:+.0f}]" in shown
    assert placed_table({"game": RW, "version": placement.ladder_version + 1}, zoo_dir=tmp_path) == ""


def test_the_ladder_tables_show_what_a_best_response_wins_against_each_measured_player(tmp_path):
    """The column of issue 42: read from the exploitability report's JSON (finished rows of this game only); the
    published report's head is rewritten with it and its later sections kept."""
    from agents.tournaments.ladder import compact_table, refresh_report

    row = {"game": RW, "agent": "heuristic:pot", "status": "done",
           "win_rate": {"value": 0.6125, "low": 0.6031, "high": 0.6218}}
    report = {"rows": [row, {**row, "agent": "random", "status": "pending"}, {**row, "game": "bloodlines_v0",
                                                                              "agent": "random"}]}
    (tmp_path / "exploitability.json").write_text(json.dumps(report))
    table = compact_table(load_ladder(RW), tmp_path / "exploitability.json")
    lines = {line.split(" | ")[0].strip("| "): line for line in table.splitlines() if line.startswith("| ")}
    assert "best response wins [95% CI]" in lines["player"]
    assert lines["heuristic:pot"].endswith("| 0.613 [0.603, 0.622] |") and lines["random"].endswith("| - |")
    assert compact_table(load_ladder(RW), tmp_path / "missing.json").count("| - |") == len(load_ladder(RW)["players"])
    for suffix in (".json", ".md"):
        (tmp_path / f"ladder_{RW}{suffix}").write_text((RESULTS / f"ladder_{RW}{suffix}").read_text())
    published = (RESULTS / f"ladder_{RW}.md").read_text()
    refreshed = refresh_report(RW, tmp_path).read_text()
    assert "0.613 [0.603, 0.622]" in refreshed and "exploitability" in refreshed.split("\n## ")[0]
    assert refreshed.partition("\n## ")[2] == published.partition("\n## ")[2]
