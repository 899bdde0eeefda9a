"""Imitation warm start (train/pretrain.py): demonstrations and behaviour cloning."""

from __future__ import annotations

import numpy as np

import card_envs
from agents.players.base import Decision
from agents.players.registry import make_agent
from train.config import config_from_dict
from train.pretrain import collect, fit
from train.trainer import make_vec_env, new_model, warm_start

GAME = "revolutionary_war_v0"


def test_demonstrations_hold_every_seats_legal_choices_and_the_return_that_followed():
    game = card_envs.make_game(GAME)
    data = collect(game, "heuristic:cheapest", games=20, seed=0)
    assert len(data) > 20 * 40  # about 46 decisions a game, both seats recorded
    assert all(mask[action] == 1 for mask, action in zip(data.masks, data.actions, strict=True))
    # win_loss rewards come only at the end, so every decision's return-to-go is its seat's +-1,
    # and in a two-player game the two seats' decisions carry opposite signs
    assert set(np.unique(data.returns)) == {-1.0, 1.0}
    assert data.observations.shape == (len(data), 157) and data.observations.dtype == np.float32
    turn = data.observations[:, 156]  # "my turn" flag of the observer: always 1 for the decider
    assert (turn == 1.0).all()


def test_the_recorded_actions_are_the_teachers():
    # heuristic:cheapest never concedes while it can play (R7: concede is always legal), so in its
    # demonstrations "concede" (13) appears exactly where it is the only legal action
    data = collect(card_envs.make_game(GAME), "heuristic:cheapest", games=3, seed=4)
    for mask, action in zip(data.masks, data.actions, strict=True):
        assert (action == 13) == (mask.sum() == 1)


def test_a_search_teacher_can_label_the_demonstrations():
    # a search player needs the position behind each decision (to sample deals from, or to read the real
    # one with deal=true); the labels are legal, and with the real deal they are the position's own move
    game = card_envs.make_game("revolution_v0", num_hands=1)
    spec = ("ismcts:sims=1,rollout=heuristic:counting,opponents=policy,root=cycle,tree=1,horizon=hand,"
            "eval=material,deal=true")
    data = collect(game, spec, games=2, seed=3)
    assert len(data) > 20
    assert all(mask[action] == 1 for mask, action in zip(data.masks, data.actions, strict=True))
    assert (data.masks.sum(axis=1) > 1).any()  # some real choices were searched
    state = game.new_state(np.random.default_rng(9))
    labels = {make_agent(game.name, spec, seed=seed).act(Decision.of(state)) for seed in range(4)}
    assert len(labels) == 1  # the real cards decide, not the search's seed


def test_returns_follow_rewards_paid_during_the_game():
    # capture shaping pays every capture as it happens: a seat's return-to-go shrinks as it collects
    game = card_envs.make_game(GAME, shaping_weight=1.0)
    data = collect(game, "heuristic:cheapest", games=5, seed=1)
    assert len(np.unique(data.returns)) > 10  # no longer just +-1 plus a constant


def test_cloning_a_deterministic_teacher_reproduces_its_choices_on_new_positions():
    config = config_from_dict({"game": GAME, "n_envs": 1, "ppo": {"net_arch": [64, 64], "n_steps": 64,
                                                                   "batch_size": 64}})
    model = new_model(config, make_vec_env(config, []), None)
    game = card_envs.make_game(GAME)
    stats = fit(model.policy, collect(game, "heuristic:cheapest", games=150, seed=1), epochs=15, batch_size=128,
                learning_rate=3e-3, value_weight=0.5, seed=0)
    assert stats["accuracy"] > 0.9
    fresh = collect(game, "heuristic:cheapest", games=15, seed=99)
    predicted, _ = model.predict(fresh.observations, action_masks=fresh.masks, deterministic=True)
    assert np.mean(predicted == fresh.actions) > 0.85


def test_dagger_plays_the_students_choices_and_records_the_teachers():
    # a student that always concedes (RW action 13, R7: always legal) is asked at every decision and its
    # concessions are played, yet every recorded label is the teacher's, who concedes only when forced
    game = card_envs.make_game(GAME)
    asked = []

    def conceder(observation, mask):
        asked.append(observation)
        return 13

    data = collect(game, "heuristic:cheapest", games=30, seed=2, student=conceder)
    assert len(asked) == len(data)
    assert all((action == 13) == (mask.sum() == 1) for mask, action in zip(data.masks, data.actions, strict=True))
    assert data.student_agreement == 0.0  # where it had a choice, the student never did what the teacher did
    teacher_played = collect(game, "heuristic:cheapest", games=30, seed=2)
    assert teacher_played.student_agreement is None
    assert np.array_equal(data.observations[0], teacher_played.observations[0])  # the same first deal
    assert not np.array_equal(data.observations[:5], teacher_played.observations[:5])  # then other positions


def test_dagger_rounds_refit_on_the_students_positions_and_report_its_agreement():
    config = config_from_dict({"game": GAME, "n_envs": 1, "ppo": {"net_arch": [64, 64], "n_steps": 64,
                                                                   "batch_size": 64},
                               "pretrain": {"teacher": "heuristic:cheapest", "games": 60, "epochs": 10,
                                            "learning_rate": 3e-3, "dagger_rounds": 2, "dagger_games": 40}})
    model = new_model(config, make_vec_env(config, []), None)
    stats = warm_start(config, model, progress=False)
    assert len(stats["student_agreement"]) == 2
    assert all(0.8 < share <= 1.0 for share in stats["student_agreement"])
    first_only = collect(card_envs.make_game(GAME), "heuristic:cheapest", games=60, seed=0)
    assert stats["decisions"] > len(first_only) + 2 * 40 * 40  # the students' games were added to the data


def test_mixed_in_players_play_their_seats_unrecorded():
    game = card_envs.make_game(GAME)
    assert len(collect(game, "heuristic:cheapest", games=5, seed=3, mix={"random": 1.0})) == 0
    alone = collect(game, "heuristic:cheapest", games=40, seed=3)
    mixed = collect(game, "heuristic:cheapest", games=40, seed=3, mix={"random": 0.5})
    # about half the seats are random's, and only the teacher's half is recorded
    assert 0.3 * len(alone) < len(mixed) < 0.7 * len(alone)
    # every recorded label is still the teacher's (it concedes only when forced; random concedes often)
    assert all((action == 13) == (mask.sum() == 1) for mask, action in zip(mixed.masks, mixed.actions, strict=True))


def test_dagger_rounds_seat_the_mixed_in_players_too():
    game = card_envs.make_game(GAME)
    asked = []

    def student(observation, mask):
        asked.append(observation)
        return int(np.flatnonzero(mask)[0])

    data = collect(game, "heuristic:cheapest", games=30, seed=5, student=student, mix={"random": 0.5})
    assert 0 < len(asked) == len(data)  # the student is asked only in its own, recorded seats
    assert len(data) < 0.7 * len(collect(game, "heuristic:cheapest", games=30, seed=5, student=student))


def test_with_a_duplicate_baseline_the_value_head_starts_from_zero():
    # the teacher's return minus its own on the same deal is 0: that is the value PPO will be paid
    import torch

    values = {}
    for baseline in (None, "heuristic:cheapest"):
        config = config_from_dict({"game": GAME, "n_envs": 1, "duplicate_baseline": baseline,
                                   "ppo": {"net_arch": [64, 64], "n_steps": 64, "batch_size": 64},
                                   "pretrain": {"teacher": "heuristic:cheapest", "games": 80, "epochs": 10,
                                                "learning_rate": 3e-3}})
        model = new_model(config, make_vec_env(config, []), None)
        warm_start(config, model, progress=False)
        probe = collect(card_envs.make_game(GAME), "heuristic:cheapest", games=10, seed=42)
        with torch.no_grad():
            predicted = model.policy.predict_values(torch.as_tensor(probe.observations)).numpy().ravel()
        values[baseline] = float(np.mean(np.abs(predicted)))
    assert values["heuristic:cheapest"] < 0.1 < values[None]  # fitted to +-1 returns without it


def test_label_smoothing_targets_the_teachers_choice_and_spreads_the_rest_over_legal_actions_only():
    import torch

    from train.pretrain import smoothed_cross_entropy

    legal = torch.tensor([[True, True, False, True], [False, True, True, False]])
    actions = torch.tensor([0, 2])
    logits = torch.zeros(2, 4, requires_grad=True)
    optimizer = torch.optim.Adam([logits], lr=0.1)
    for _ in range(600):
        masked = logits.masked_fill(~legal, -1e8)
        loss = smoothed_cross_entropy(masked, actions, legal, 0.3)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    probabilities = torch.softmax(logits.masked_fill(~legal, -1e8), dim=1).detach().numpy()
    # the minimiser is the target: 0.7 on the choice plus 0.3 shared by the legal actions
    assert np.allclose(probabilities[0], [0.8, 0.1, 0.0, 0.1], atol=2e-3)
    assert np.allclose(probabilities[1], [0.0, 0.15, 0.85, 0.0], atol=2e-3)
    plain = torch.nn.functional.cross_entropy(logits.detach(), actions)
    assert smoothed_cross_entropy(logits.detach(), actions, legal, 0.0) == plain


def test_label_smoothing_out_of_range_is_a_clear_error():
    import pytest

    from card_envs.core.errors import ConfigError

    for bad in (-0.1, 1.0):
        with pytest.raises(ConfigError, match="pretrain.label_smoothing must be in"):
            config_from_dict({"game": GAME, "pretrain": {"label_smoothing": bad}})
