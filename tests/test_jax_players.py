"""The JAX ports of the rule-based players (train/jax_players) move as the Python players do, on random
positions of the Python engine (their observation vectors and masks, one batched call per player)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import card_envs
from agents.players.base import Decision, RandomAgent
from agents.players.registry import make_agent
from train.jax_players import PORT_OPTIONS, PORTS, make_port, ported

#: (game, options, spec): every port, under the options it is meant for
CASES = [(game, PORT_OPTIONS.get(game, {}), spec) for game in sorted(PORTS) for spec in ported(game)] + \
    [("battlecards_v0", {"num_players": n}, spec) for n in (3, 6) for spec in ported("battlecards_v0")]
POSITIONS = 3000


def positions(game_name: str, options: dict, spec: str, count: int, seed: int = 0):
    """(observations, masks, the Python player's moves) at ``count`` decisions of games where each seat is
    the player itself or a random player (so the positions are both typical and varied)."""
    game = card_envs.make_game(game_name, **options)
    rng = np.random.default_rng(seed)
    observations, masks, moves = [], [], []
    while len(moves) < count:
        state = game.new_state(rng)
        players = [make_agent(game_name, spec, seed=int(rng.integers(2**31))) for _ in range(game.num_players)]
        others = [RandomAgent(int(rng.integers(2**31))) for _ in range(game.num_players)]
        playing = rng.random(game.num_players) < 0.5
        for seat in range(game.num_players):
            players[seat].reset(game, seat)
            others[seat].reset(game, seat)
        while not state.is_over:
            decision = Decision.of(state)
            seat = decision.player
            move = players[seat].act(decision)  # every seat's player sees every decision of its seat (memory)
            observations.append(decision.observation)
            masks.append(decision.mask == 1)
            moves.append(move)
            state.apply(move if playing[seat] else others[seat].act(decision))
    return np.asarray(observations[:count]), np.asarray(masks[:count]), np.asarray(moves[:count])


@pytest.mark.parametrize(("game_name", "options", "spec"), CASES, ids=[f"{g}-{s}-{o}" for g, o, s in CASES])
def test_the_port_moves_as_the_python_player(game_name, options, spec):
    observations, masks, moves = positions(game_name, options, spec, POSITIONS)
    act = make_port(card_envs.make_game(game_name, **options), spec)
    keys = jax.random.split(jax.random.PRNGKey(0), len(moves))
    moves_of = jax.jit(jax.vmap(act))
    ported_moves = np.asarray(moves_of(observations, masks, keys))
    # deterministic: other keys, the same moves (the JAX trainer reuses its advisor's moves for an opponent)
    np.testing.assert_array_equal(moves_of(observations, masks, jax.random.split(jax.random.PRNGKey(1), len(moves))),
                                  ported_moves)
    differ = np.flatnonzero(ported_moves != moves)
    first = differ[0] if differ.size else None
    assert differ.size == 0, (f"{differ.size} of {len(moves)} moves differ, e.g. position {first}: python "
                              f"{moves[first]}, port {ported_moves[first]}, legal {np.flatnonzero(masks[first])}")
    assert len(set(moves.tolist())) > 3  # the positions ask for varied moves


def test_an_unported_player_is_refused_by_name():
    from card_envs.core.errors import ConfigError

    with pytest.raises(ConfigError, match="heuristic:endgame has no JAX port.*ported: random, heuristic:cheapest"):
        make_port(card_envs.make_game("revolutionary_war_v0"), "heuristic:endgame")


def test_the_counting_port_needs_the_observation_of_void_inferences():
    from card_envs.core.errors import ConfigError

    with pytest.raises(ConfigError, match="needs the options full_recall=True and void_inferences=True"):
        make_port(card_envs.make_game("revolution_v0", full_recall=True), "heuristic:counting")
