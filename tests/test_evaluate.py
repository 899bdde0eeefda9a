"""The evaluation harness (agents.tournaments): known answers, duplicate deals, determinism, SPRT, bad input."""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

import card_envs
from agents.players.base import Agent, Decision, RandomAgent
from agents.tournaments.evaluate import evaluate, main, run_tournament
from agents.tournaments.records import (
    AgentSpecError,
    Contestant,
    Schedule,
    make_lineups,
    parse_contestant,
    williams_design,
)
from agents.tournaments.report import csv_text, json_text, markdown
from agents.tournaments.stats import SprtSpec, gsprt_llr, summarize
from card_envs.core.errors import ConfigError
from card_envs.revolutionary_war.rules import CONCEDE, NUM_ACTIONS

RW = "revolutionary_war_v0"
Z = 1.959963984540054  # the 97.5% normal quantile


# -- fixture agents (module level: worker processes import them) ----------------------------------


class Conceder(Agent):
    """Revolutionary War: concedes every round (R5/R7: always legal), so it captures nothing."""

    name = "fixture:conceder"

    def act(self, decision: Decision) -> int:
        return CONCEDE


class Cheater(RandomAgent):
    """Plays randomly, but on about 1 decision in ``rate`` returns an action that is not legal."""

    name = "fixture:cheater"
    rate = 1

    def act(self, decision: Decision) -> int:
        if self.rng.random() < 1 / self.rate:
            return max(set(range(NUM_ACTIONS)) - set(decision.legal_actions))
        return super().act(decision)


class RareCheater(Cheater):
    rate = 400


class FirstDecisions(RandomAgent):
    """Random play that logs every game-opening decision it faces (workers=1 only: a class list)."""

    log: list[tuple[int, object]] = []

    def act(self, decision: Decision) -> int:
        view = decision.view
        if not view.played and view.deck_size == 39:  # nothing played since the deal (10 + 3 cards dealt)
            FirstDecisions.log.append((view.game_number, view))
        return super().act(decision)


def wrong_game_checkpoint(seed: int) -> Agent:
    """Stands in for a checkpoint trained on another game: loading it fails."""
    raise ConfigError("checkpoint 'model.zip' was trained for bloodlines_v0, not revolutionary_war_v0")


def fixture(label: str, cls: type[Agent]) -> Contestant:
    return Contestant(label, cls.name, cls)


# -- the design --------------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_williams_design_puts_every_member_in_every_seat_and_after_every_other_equally(seats):
    rows = williams_design(seats)
    for seat in range(seats):
        assert Counter(row[seat] for row in rows) == {slot: len(rows) // seats for slot in range(seats)}
    follows = Counter((row[i], row[i + 1]) for row in rows for i in range(seats - 1))
    assert set(follows) == {(a, b) for a in range(seats) for b in range(seats) if a != b}
    assert len(set(follows.values())) == 1


@pytest.mark.parametrize(("agents", "seats"), [(2, 2), (4, 2), (2, 4), (3, 4), (4, 4), (6, 4), (3, 6), (5, 3)])
def test_lineups_are_symmetric_in_the_agents_and_fill_every_seat(agents, seats):
    lineups = make_lineups(agents, seats)
    assert all(len(lineup) == seats for lineup in lineups)
    assert all(len(set(lineup)) == min(agents, seats) for lineup in lineups)
    counts = Counter(agent for lineup in lineups for agent in lineup)
    assert sorted(counts) == list(range(agents)) and len(set(counts.values())) == 1
    assert len(set(lineups)) == len(lineups)


def test_games_round_up_to_whole_deals():
    schedule = Schedule.plan(num_agents=3, seats=2, games=100)  # 3 pairs x 2 seatings = 6 games a deal
    assert (schedule.games_per_deal, schedule.deals) == (6, 17)


# -- known answers -----------------------------------------------------------------------------


def test_player_that_always_wins_has_win_rate_one_with_the_wilson_bound():
    result = evaluate(RW, ["heuristic:cheapest", fixture("conceder", Conceder)], 60, bootstrap_resamples=200)
    winner, loser = result.agent("heuristic:cheapest"), result.agent("conceder")
    n = winner.games
    assert n == 60 and winner.wins == n and loser.wins == 0
    assert winner.win_rate.value == 1.0 and winner.win_rate.high == 1.0
    assert winner.win_rate.low == pytest.approx(n / (n + Z**2))  # Wilson's lower bound at n of n
    assert result.pair("heuristic:cheapest", "conceder").score.value == 1.0
    assert winner.mean_return.value == 1.0 and loser.mean_return.value == -1.0  # R16 win/loss reward
    assert result.rating("heuristic:cheapest").low > result.rating("conceder").high


@pytest.mark.parametrize(("game", "games"), [(RW, 1200), ("revolution_v0", 240)])
def test_two_identical_players_have_equal_rates_within_the_interval(game, games):
    if game not in card_envs.ENV_NAMES:
        pytest.fail(f"{game} is not registered")
    result = evaluate(game, ["a=random", "b=random"], games, bootstrap_resamples=500)
    a, b = result.agent("a"), result.agent("b")
    assert a.games == b.games
    assert a.win_rate.low <= b.win_rate.high and b.win_rate.low <= a.win_rate.high  # the intervals overlap
    pair = result.pair("a", "b").score
    assert pair.low <= 0.5 <= pair.high


def test_four_seat_game_with_two_agents_seats_both_in_every_seat_equally():
    if "revolution_v0" not in card_envs.ENV_NAMES:
        pytest.fail("revolution_v0 is not registered")
    tournament = run_tournament("revolution_v0", ["random", "b=random"], 24)
    per_seat = Counter((seat, agent) for r in tournament.records for seat, agent in enumerate(r.seating))
    assert len(tournament.records) == 24  # AAAB, AABB, ABBB x 4 seatings, 2 deals
    assert len(set(per_seat.values())) == 1 and len(per_seat) == 8


# -- duplicate deals ----------------------------------------------------------------------------


def test_every_seating_of_a_deal_replays_the_same_cards_including_later_deals_of_a_match():
    FirstDecisions.log.clear()
    config = {"target_score": 60}  # a match: later games are dealt from the state's generator (A30)
    tournament = run_tournament(RW, [fixture("x", FirstDecisions), fixture("y", FirstDecisions)], 40,
                                config=config)
    games_per_deal = tournament.schedule.games_per_deal
    assert games_per_deal == 2
    openings: dict[tuple[int, int], list] = {}
    game_index = 0
    for game_number, view in FirstDecisions.log:
        game_index += game_number == 1
        deal = (game_index - 1) // games_per_deal
        openings.setdefault((deal, game_number), []).append(view)
    firsts = [views for (deal, number), views in openings.items() if number == 1]
    assert len(firsts) == 20 and all(len(views) == games_per_deal for views in firsts)
    assert all(views[0] == views[1] for views in firsts)  # same leader, hand, trump stack, dealer
    later = [[(v.player, v.dealer, v.hand, v.trump_stack) for v in views]  # the cards, not the match totals
             for (deal, number), views in openings.items() if number == 2]
    assert len(later) == 20 and all(len(views) == 2 and views[0] == views[1] for views in later)
    assert len({views[0].hand for views in firsts}) == 20  # and different deals differ
    assert tournament.records and all(  # the harness's own check agrees
        len({r.start for r in tournament.records if r.deal == d}) == 1 for d in range(20))


def test_a_mirror_match_of_one_deterministic_player_has_all_deal_luck_removed():
    # the same deterministic player in both seats: each deal's two games are mirror images, one win each
    result = evaluate(RW, ["a=heuristic:cheapest", "b=heuristic:cheapest"], 200, bootstrap_resamples=200)
    assert result.agent("a").wins == result.agent("b").wins == 100
    assert result.pair("a", "b").design_effect == 0.0
    assert result.agent("a").return_design_effect == 0.0
    assert result.pair("a", "b").score == result.pair("a", "b").score.flipped()  # exactly 1/2, no spread


# -- determinism ---------------------------------------------------------------------------------


def test_results_are_the_same_across_runs_and_worker_counts():
    specs = ["random", "heuristic:cheapest", "heuristic:pot"]
    first = run_tournament(RW, specs, 500, seed=7, workers=1)
    again = run_tournament(RW, specs, 500, seed=7, workers=1)
    parallel = run_tournament(RW, specs, 500, seed=7, workers=2)
    assert first.records == again.records == parallel.records
    other_seed = run_tournament(RW, specs, 500, seed=8, workers=1)
    assert [r.returns for r in other_seed.records] != [r.returns for r in first.records]
    reports = [summarize(t, resamples=300) for t in (first, parallel)]
    reports[1].workers = reports[0].workers
    assert json_text(reports[0]) == json_text(reports[1])


# -- sequential test -----------------------------------------------------------------------------


def test_gsprt_llr_agrees_with_the_normal_approximation_for_many_games():
    values = np.array([0.0, 0.5, 1.0])
    counts = np.array([3000.0, 3000.0, 4000.0])
    s0, s1 = 0.5, 0.52
    mean = counts @ values / counts.sum()
    var = counts @ (values - mean) ** 2 / counts.sum()
    normal = counts.sum() * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)  # the Brownian approximation
    assert gsprt_llr(counts, values, s0, s1) == pytest.approx(normal, rel=0.02)


def test_sprt_accepts_h1_for_a_clearly_stronger_agent_and_stops_early():
    tournament = run_tournament(RW, ["heuristic:cheapest", "random"], 4000, sprt=SprtSpec(0, 50))
    assert tournament.sprt.verdict == "H1"
    assert tournament.sprt.llr >= tournament.sprt.upper
    assert len(tournament.records) == tournament.sprt.games < 200


def test_sprt_accepts_h0_for_identical_agents():
    tournament = run_tournament(RW, ["a=random", "b=random"], 6000, sprt=SprtSpec(0, 60), workers=2)
    assert tournament.sprt.verdict == "H0"
    assert tournament.sprt.llr <= tournament.sprt.lower
    assert len(tournament.records) == tournament.sprt.games < 6000


def test_sprt_decides_in_a_four_seat_game_on_whole_deals():
    if "revolution_v0" not in card_envs.ENV_NAMES:
        pytest.fail("revolution_v0 is not registered")
    tournament = run_tournament("revolution_v0", ["heuristic:cheap", "random"], 2400, sprt=SprtSpec(0, 50))
    assert tournament.sprt.verdict == "H1"
    assert tournament.sprt.games == len(tournament.records) == 12 * tournament.sprt.deals  # AAAB, AABB, ABBB x 4


def test_sprt_is_inconclusive_at_the_game_cap_and_needs_two_agents():
    tournament = run_tournament(RW, ["a=random", "b=random"], 10, sprt=SprtSpec(0, 5))
    assert (tournament.sprt.verdict, tournament.sprt.games, len(tournament.records)) == ("inconclusive", 10, 10)
    with pytest.raises(ConfigError, match="exactly two agents"):
        run_tournament(RW, ["random", "heuristic:pot", "heuristic:cheapest"], 10, sprt=SprtSpec(0, 5))
    with pytest.raises(ConfigError, match="elo0 < elo1"):
        SprtSpec(5, 0)


# -- bad agents, bad input -------------------------------------------------------------------------


def test_illegal_action_names_agent_state_and_action_and_stops_only_its_lineups():
    contestants = ["random", "heuristic:cheapest", fixture("cheater", Cheater)]
    tournament = run_tournament(RW, contestants, 60)
    assert [(f.label, f.deal) for f in tournament.failures] == [("cheater", 0), ("cheater", 0)]
    failure = tournament.failures[0]
    assert "illegal" in failure.reason and "legal:" in failure.reason
    assert failure.action.split(" ", 1)[1].strip("'") in card_envs.make_game(RW).action_names
    assert "Revolutionary War" in failure.table and "player_" in failure.table  # the state's render()
    played = Counter(tuple(tournament.contestants[a].label for a in tournament.schedule.lineups[r.lineup])
                     for r in tournament.records)
    assert played == {("random", "heuristic:cheapest"): 20}  # the clean pair played all its deals
    report = markdown(summarize(tournament, resamples=100))
    assert "## Agent failures" in report and "**cheater**" in report and failure.table in report


def test_a_late_illegal_action_keeps_earlier_deals_whatever_the_worker_count():
    contestants = ["random", fixture("cheater", RareCheater)]
    one = run_tournament(RW, contestants, 400, workers=1)
    two = run_tournament(RW, contestants, 400, workers=2)
    assert len(one.failures) == 1 and one.failures == two.failures and one.records == two.records
    stopped_at = one.failures[0].deal
    assert stopped_at > 0
    assert sorted({r.deal for r in one.records}) == list(range(stopped_at))


def test_unknown_agent_spec_lists_the_known_ones():
    with pytest.raises(AgentSpecError, match=r"heuristic:nope.*known: random, heuristic:cheapest"):
        run_tournament(RW, ["random", "heuristic:nope"], 10)
    with pytest.raises(AgentSpecError, match="listed twice"):
        run_tournament(RW, ["random", "random"], 10)
    with pytest.raises(AgentSpecError, match="at least two agents"):
        run_tournament(RW, ["random"], 10)


def test_labels_name_copies_and_search_options_stay_specs():
    assert parse_contestant("a=random") == Contestant("a", "random")
    assert parse_contestant("heuristic:pot") == Contestant("heuristic:pot", "heuristic:pot")
    assert parse_contestant("ismcts:sims=20") == Contestant("ismcts:sims=20", "ismcts:sims=20")
    assert parse_contestant("deep=ismcts:sims=20") == Contestant("deep", "ismcts:sims=20")
    with pytest.raises(AgentSpecError, match="'label=spec'"):
        parse_contestant("=random")


def test_an_agent_that_cannot_be_built_fails_before_any_game():
    FirstDecisions.log.clear()
    with pytest.raises(AgentSpecError, match="'wrong' cannot play revolutionary_war_v0: checkpoint 'model.zip'"):
        run_tournament(RW, [fixture("x", FirstDecisions), Contestant("wrong", "checkpoint:model.zip",
                                                                     wrong_game_checkpoint)], 10)
    assert FirstDecisions.log == []
    with pytest.raises(AgentSpecError, match="checkpoint:/no/such/model.zip"):
        run_tournament(RW, ["random", "checkpoint:/no/such/model.zip"], 10)


def _random_checkpoint(path, game: str) -> str:
    """A real checkpoint file (random weights) of ``game``, through the training code's writer."""
    from train.checkpoint import Checkpoint, PolicyNet, game_signature, write_checkpoint

    signature = game_signature(game)
    rng = np.random.default_rng(0)
    net = PolicyNet([rng.normal(size=(signature["observation_size"], signature["num_actions"]))],
                    [np.zeros(signature["num_actions"])], "tanh")
    meta = {"game": signature, "config": {}, "num_timesteps": 0,
            "policy": {"activation": "tanh", "deterministic": False}}
    write_checkpoint(path, Checkpoint(meta, net))
    return f"checkpoint:{path}"


def test_a_checkpoint_of_another_game_fails_before_any_game_and_one_of_this_game_plays(tmp_path):
    FirstDecisions.log.clear()
    other = _random_checkpoint(tmp_path / "bloodlines.zip", "bloodlines_v0")
    with pytest.raises(AgentSpecError, match="is a model for bloodlines_v0, not for revolutionary_war_v0"):
        run_tournament(RW, [fixture("x", FirstDecisions), other], 10)
    assert FirstDecisions.log == []
    mine = _random_checkpoint(tmp_path / "rw.zip", RW)
    runs = [run_tournament(RW, ["random", mine], 40, workers=workers) for workers in (1, 2)]
    assert runs[0].records == runs[1].records and not runs[0].failures and len(runs[0].records) == 40


def test_command_line_reports_bad_specs_and_writes_every_file(tmp_path, capsys):
    assert main(["--game", RW, "--agents", "random", "heuristic:nope", "--games", "4", "--quiet"]) == 2
    assert "known: random, heuristic:cheapest" in capsys.readouterr().err
    prefix = str(tmp_path / "results" / "evaluation")
    code = main(["--game", RW, "--agents", "random", "heuristic:cheapest", "--games", "20", "--quiet",
                 "--workers", "1", "--resamples", "100", "--out", prefix])
    assert code == 0
    printed = capsys.readouterr().out
    assert "python -m agents.evaluate --game revolutionary_war_v0" in printed
    data = json.loads((tmp_path / "results" / "evaluation.json").read_text())
    assert data["games"] == 20 and {a["label"] for a in data["agents"]} == {"random", "heuristic:cheapest"}
    rows = (tmp_path / "results" / "evaluation.csv").read_text().splitlines()
    assert rows[0].startswith("game,agent,spec") and len(rows) == 3
    assert (tmp_path / "results" / "evaluation.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "results" / "evaluation.md").read_text() == printed
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [
        "evaluation.csv", "evaluation.json", "evaluation.md", "evaluation.png"]  # no temporary files left


def test_report_tables_hold_every_agent_and_pair():
    result = evaluate(RW, ["random", "heuristic:cheapest", "heuristic:pot"], 60, bootstrap_resamples=100)
    text = markdown(result)
    for label in ("random", "heuristic:cheapest", "heuristic:pot"):
        assert f"| {label} |" in text
    assert len([h for h in result.head_to_head]) == 6
    assert csv_text(result).count("\n") == 4
    assert all(math.isfinite(r.sigma) for r in result.ratings)
    assert {a for lineup in result.lineups for a in lineup} == {"random", "heuristic:cheapest", "heuristic:pot"}
    assert len(list(combinations(range(3), 2))) == len(result.lineups)
