"""Lockstep of every JAX engine against its Python engine (``card_envs.jax.lockstep``), every variant config.

Random games are played on the Python engine and replayed through the vmapped JAX step; at every decision the
current player, legal mask, every seat's observation, the step's rewards, the flags, the step count and the game
arrays must agree (``from_state`` of every Python position too). Default run: 40 games of the default config
(Battlecards: 8, each cut off after 400 decisions) and 8 of each other variant config (Battlecards: 6; half of
them opt-in, Battlecards' four of six), a guard against a change that breaks a rule; ``-m slow``: 10,000 and
1,000 whole games (the issue's acceptance run, the measure of exactness). Engines of games merged later
(``JAX_GAMES``) are picked up when their module exists.
"""

from __future__ import annotations

import pytest

from card_envs.jax.lockstep import Lockstep
from tests.jax_support import JAX_CASES, case_id, lockstep

#: default config, default run (160 in two parts, one a worker, before: each worker compiled the engine, 6.9 s of
#: Revolution's 21 s; then 80, with 16 of each variant config: the default run's lockstep took 130 s of its workers,
#: a fifth of the run)
DEFAULT_GAMES = 40
#: Battlecards' default game runs up to 1,000 rounds (often hundreds of decisions, each compared through
#: from_state): fewer of its games keep the default run under its time limit (32 took 36 s of the workers' time in
#: a 526 s run; 20 in two parts 42 s in a 666 s run; 6: 18-24 s, one game's 2,153 decisions, the chunk stepping
#: for it alone after the others ended), each cut off after 400 decisions (MAX_DECISIONS_OF: 8 games in 9 s, 3 of
#: them cut); its variant configs add 6 each, played to their ends
DEFAULT_GAMES_OF = {"battlecards_v0": 8}
VARIANT_GAMES_OF = {"battlecards_v0": 6}
MAX_DECISIONS_OF = {"battlecards_v0": 400}  #: default config, default run; the acceptance run plays every game out
VARIANT_GAMES = 8  #: every other variant config, default run
SLOW_DEFAULT_GAMES = 10_000
SLOW_VARIANT_GAMES = 1_000

#: Battlecards variant configs whose lockstep is opt-in (-m slow), for the default run's time (each costs ~17 s of
#: a worker, most of it compiling its step): the three players' jokers (cfg1), five players' cease-fire (cfg3), six
#: players with jokers, retirement and no mid-game shuffle (cfg4; in the default run its batch-last step is checked
#: against the full step at every decision, test_jax_battlecards) and the long wars of cfg6; cfg2 (retirement) and
#: cfg5 (two players) stay
SLOW_VARIANTS_OF = {"battlecards_v0": {1, 3, 4, 6},
                    # and two of the four variant configs of each other game, whose options the engine's own tests
                    # check in the default run (scenarios, most against the Python engine): Bloodlines' allow_pass and
                    # unfinished_result (Sc-4's variant, Sc-15) and shaping (Sc-2), Revolution's recall and
                    # inferences (test_hands_the_engine_deals_itself_under_recall_and_inferences), Revolutionary
                    # War's score_diff, shaping and dealer rotations (S2, S8-S10, R23's match transitions)
                    "bloodlines_v0": {2, 3}, "revolution_v0": {1, 3}, "revolutionary_war_v0": {1, 3}}

DEFAULT_RUN = [pytest.param(case, id=case_id(case),
                            marks=[pytest.mark.slow] if case[1] in SLOW_VARIANTS_OF.get(case[0], ()) else [])
               for case in JAX_CASES]


@pytest.mark.parametrize("case", DEFAULT_RUN)
def test_lockstep_random_games(case):
    name, index, config = case
    games = (DEFAULT_GAMES_OF.get(name, DEFAULT_GAMES) if index == 0
             else VARIANT_GAMES_OF.get(name, VARIANT_GAMES))
    cap = MAX_DECISIONS_OF.get(name) if index == 0 else None
    report = lockstep(name, config, chunk=games).run(games, seed=1_000 * index, max_decisions=cap)
    assert report.games == games and report.compared_steps > 0
    assert report.ok, report.summary()


@pytest.mark.slow
@pytest.mark.parametrize("case", JAX_CASES, ids=case_id)
def test_lockstep_acceptance_run(case):
    name, index, config = case
    games = SLOW_DEFAULT_GAMES if index == 0 else SLOW_VARIANT_GAMES
    report = lockstep(name, config, chunk=1_000 if index == 0 else 500).run(games, seed=100_000 + 20_000 * index)
    print(report.summary())
    assert report.games == games
    assert report.ok, report.summary()


def test_lockstep_reports_a_step_that_goes_nowhere():
    """The comparison can fail: a JAX step that returns its input state must diverge at the first decision
    (step count, and whatever else the move changed) while ``from_state`` of every position still agrees."""
    checker = Lockstep("revolutionary_war_v0", {}, chunk=4)
    checker._step = lambda state, actions, keys: state
    report = checker.run(4, seed=3)
    assert {d.check for d in report.divergences} == {"step"}
    assert {d.seed for d in report.divergences} == {3, 4, 5, 6}
    assert all(d.decision == 1 and d.actions and len(d.actions) == 1 for d in report.divergences)


def test_lockstep_reports_an_observation_that_differs():
    """The comparison can fail: an observation off in one entry for one seat is reported by both checks, with
    the seat and the index."""
    checker = Lockstep("revolutionary_war_v0", {}, chunk=2)
    observe_all = checker._observe_all
    checker._observe_all = lambda state: observe_all(state).at[:, 1, 7].add(1.0)
    report = checker.run(2, seed=0)
    assert {(d.seed, d.check) for d in report.divergences} == {(0, "from_state"), (1, "from_state"), (0, "step"),
                                                                (1, "step")}
    assert all(d.what == "observation[1] at indices [7]" for d in report.divergences)


def test_a_decision_limit_cuts_every_longer_game_off_there():
    """``max_decisions``: the default run's cut for long games. Every game of Revolutionary War is longer than 5
    decisions: each is compared at its first 5 decisions (the 5 steps after the deal) and cut off, none further."""
    checker = lockstep("revolutionary_war_v0", {}, chunk=DEFAULT_GAMES)
    report = checker.run(DEFAULT_GAMES, seed=0, max_decisions=5)
    assert report.ok and report.cut == DEFAULT_GAMES
    assert report.decisions == 5 * DEFAULT_GAMES == report.compared_steps + report.resyncs
    assert f"{DEFAULT_GAMES} games cut off at the decision limit" in report.summary()
    with pytest.raises(ValueError, match="max_decisions must be at least 1, got 0"):
        checker.run(2, seed=0, max_decisions=0)
