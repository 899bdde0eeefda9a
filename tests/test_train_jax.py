"""The JAX trainer (backend: jax, train/jax_ppo.py): config checks, reward accounting, learning, determinism,
resume and the exported checkpoint. Small networks and budgets: each test runs in seconds once compiled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest
from pgx._src.struct import dataclass

from card_envs.core.errors import ConfigError
from train import jax_ppo
from train.checkpoint import read_checkpoint
from train.config import config_from_dict, load_config

ROOT = Path(__file__).resolve().parents[1]
RW_SHAPES = (2, 157, 14)  # Revolutionary War: players, observation size, actions


def jax_config(tmp_path: Path | None = None, **changes) -> object:
    data = {"game": "revolutionary_war_v0", "backend": "jax", "seed": 0, "n_envs": 64, "total_timesteps": 4096,
            "checkpoint_interval": 2048, "eval": {"interval": 0, "final_games": 4},
            "pool": {"weights": {"random": 1.0, "self": 1.0}, "snapshot_every": 2, "max_snapshots": 3},
            "ppo": {"net_arch": [32], "n_steps": 16, "batch_size": 256, "n_epochs": 4, "learning_rate": 3e-3},
            "jax": {"updates_per_call": 2}}
    if tmp_path is not None:
        data["run_dir"] = str(tmp_path / "run")
    for key, value in changes.items():
        node = data
        *path, last = key.split("__")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return config_from_dict(data)


# -- toy games with the shapes of Revolutionary War -----------------------------------------------------------


@dataclass
class ToyState(pgx.State):
    current_player: jax.Array = jnp.int32(0)
    observation: jax.Array = jnp.zeros(RW_SHAPES[1], jnp.float32)
    rewards: jax.Array = jnp.zeros(2, jnp.float32)
    terminated: jax.Array = jnp.bool_(False)
    truncated: jax.Array = jnp.bool_(False)
    legal_action_mask: jax.Array = jnp.ones(RW_SHAPES[2], jnp.bool_)
    _step_count: jax.Array = jnp.int32(0)
    _target: jax.Array = jnp.zeros(2, jnp.int32)
    _first: jax.Array = jnp.int32(0)

    @property
    def env_id(self) -> str:
        return "toy"


class ToyEnv(pgx.Env):
    """Two seats take turns for ``length`` decisions, the first seat drawn at random. ``guess``: each seat sees
    a secret action of its own (one-hot at the start of its observation) and earns +1 for playing it, -1/13
    otherwise (random play earns 0 on average). ``count``: every decision pays every seat +1."""

    def __init__(self, kind: str, length: int) -> None:
        super().__init__()
        self.kind, self.length = kind, length

    def _init(self, key: jax.Array) -> ToyState:
        k_target, k_first = jax.random.split(key)
        first = jax.random.randint(k_first, (), 0, 2, jnp.int32)
        return ToyState(current_player=first, _target=jax.random.randint(k_target, (2,), 0, RW_SHAPES[2], jnp.int32),
                        _first=first)

    def _step(self, state: ToyState, action: jax.Array, key: jax.Array) -> ToyState:
        mover = state.current_player
        if self.kind == "guess":
            hit = action == state._target[mover]
            rewards = jnp.zeros(2).at[mover].set(jnp.where(hit, 1.0, -1.0 / (RW_SHAPES[2] - 1)))
        else:
            rewards = jnp.ones(2)
        over = state._step_count >= self.length
        return state.replace(current_player=jnp.where(over, -1, 1 - mover), rewards=rewards, terminated=over)

    def _observe(self, state: ToyState, player_id: jax.Array) -> jax.Array:
        seat = jnp.maximum(player_id, 0)
        return jnp.zeros(RW_SHAPES[1]).at[state._target[seat]].set(1.0).at[RW_SHAPES[2] + seat].set(1.0)

    id = "toy"
    version = "v0"
    num_players = 2


GUESS = ToyEnv("guess", 8)

# -- config ----------------------------------------------------------------------------------------------------


def test_the_jax_backend_refuses_keys_it_would_not_read():
    with pytest.raises(ConfigError, match="vec_env is a setting of the sb3 backend"):
        jax_config(vec_env="async")
    with pytest.raises(ConfigError, match="torch_threads"):
        jax_config(torch_threads=2)
    with pytest.raises(ConfigError, match="draw_reward"):
        jax_config(draw_reward=-1.0)
    with pytest.raises(ConfigError, match="jax.updates_per_call: settings of backend: jax"):
        jax_config(backend="sb3")
    with pytest.raises(ConfigError, match="jax.self_play must be a share"):
        jax_config(jax__self_play=1.5)
    with pytest.raises(ConfigError, match="unknown key"):
        jax_config(jax__threads=2)


def test_an_opponent_without_a_jax_port_is_refused_by_name():
    with pytest.raises(ConfigError, match="heuristic:endgame has no JAX port"):
        jax_config(pool__weights={"heuristic:endgame": 1.0})
    with pytest.raises(ConfigError, match="advisor: heuristic:endgame has no JAX port"):
        jax_config(advisor="heuristic:endgame")


def test_the_pretrained_opponent_needs_a_warm_start_and_the_jax_backend():
    with pytest.raises(ConfigError, match="pretrained seats the policy the run starts from"):
        jax_config(pool__weights={"pretrained": 1.0})
    with pytest.raises(ConfigError, match="pretrained"):
        jax_config(pool__weights={"pretrained": 1.0}, backend="sb3", jax={})


# -- the loop ---------------------------------------------------------------------------------------------------


def run_updates(config, env, updates: int, seed: int = 0):
    trainer = jax_ppo.trainer_for(config, env)
    runner = trainer.init(jax.random.PRNGKey(seed))
    runner, stats = trainer.run_updates(runner, jnp.int32(updates), updates)
    return trainer, runner, jax.device_get(stats)


def test_the_learner_is_paid_every_reward_of_its_seat_including_those_earned_on_opponents_moves():
    # every decision pays every seat +1: a learner's episode return is the episode's decision count, whoever
    # made them, before its first decision (carried), between its decisions and after its last one
    length = 7
    config = jax_config(pool__weights={"random": 1.0, "self": 1.0})
    _, _, stats = run_updates(config, ToyEnv("count", length), 4)
    episodes = stats["episodes"].sum()
    assert episodes > 100
    assert stats["return_sums"].sum() / episodes == pytest.approx(length)
    assert stats["finished_lengths"].sum() / episodes == pytest.approx(length)


def test_a_decision_is_paid_its_seats_rewards_until_the_seats_next_decision_and_bootstraps_only_in_its_episode():
    # one game, the learner in both seats; seat 0 earns 1 and seat 1 earns 10 on every step, whoever moves.
    # Episode A: steps 0-3 (movers 0 1 0 1, over after step 3); episode B: steps 4-5 (movers 1 0), then seat 1 is
    # to move when the rollout ends (its value there: 3). Values 0, gamma = lambda = 1: an advantage is the sum
    # of the seat's rewards to the end of its episode (or of the rollout, plus 3 for seat 1)
    movers = jnp.array([0, 1, 0, 1, 1, 0])[:, None]
    steps = movers.shape[0]
    trajectory = jax_ppo.Transition(
        observation=jnp.zeros((steps, 1, 3)), mask=jnp.ones((steps, 1, 2), bool), action=jnp.zeros((steps, 1), int),
        log_prob=jnp.zeros((steps, 1)), value=jnp.zeros((steps, 1)), mover=movers, learner=jnp.ones((steps, 1), bool),
        bonus=jnp.array([0, 0, 0, 0, 0.5, 0])[:, None], rewards=jnp.tile(jnp.array([1.0, 10.0]), (steps, 1, 1)),
        done=jnp.array([0, 0, 0, 1, 0, 0], bool)[:, None])
    targets = jax_ppo.gae(trajectory, jnp.array([3.0]), jnp.array([1]), jnp.array([True]), 2, 1.0, 1.0)
    np.testing.assert_allclose(targets.reward[:, 0], [2, 20, 2, 10, 20.5, 1])
    np.testing.assert_allclose(targets.advantage[:, 0], [4, 30, 2, 10, 23.5, 1])
    # seat 0's last decision has no next decision of its own in the rollout, and its episode goes on: not trained
    assert targets.weight[:, 0].tolist() == [True, True, True, True, True, False]


def test_the_sampler_draws_legal_actions_with_the_masked_softmax_probabilities():
    logits = jnp.array([[2.0, 0.5, -1.0, 1.0, 0.0, 3.0]] * 20_000)
    mask = jnp.array([[True, True, False, True, True, False]] * 20_000)
    actions, log_probs = jax_ppo.sample_with_log_prob(jax.random.PRNGKey(0), logits, mask)
    probabilities = np.asarray(jax.nn.softmax(jnp.where(mask[0], logits[0], -jnp.inf)))
    counts = np.bincount(np.asarray(actions), minlength=6) / 20_000
    assert counts[2] == counts[5] == 0  # illegal, though the most probable unmasked
    np.testing.assert_allclose(counts, probabilities, atol=0.012)  # > 4 standard errors
    np.testing.assert_allclose(np.exp(np.asarray(log_probs)), probabilities[np.asarray(actions)], rtol=1e-5)


def test_the_table_cuts_the_games_into_blocks_by_weight():
    config = jax_config(n_envs=100, jax__self_play=0.5, jax__active_snapshots=2,
                        pool__weights={"random": 1.0, "self": 4.0})
    table = jax_ppo.Table(config, jax_ppo.card_envs.make_game("revolutionary_war_v0"), 100)
    assert [(b.kind, b.hi - b.lo, b.slot) for b in table.blocks] == [
        ("self_play", 50, 0), ("random", 10, 0), ("self", 20, 0), ("self", 20, 1)]
    assert table.mirrored().sum() == 50 and table.kind_of_games().tolist()[49:52] == [2, 0, 0]


def test_the_loop_learns_a_toy_game():
    # each seat must play the action its observation shows: random play earns 0, a perfect player +1 per
    # decision (4 decisions per episode of 8)
    trainer, runner, first = run_updates(jax_config(), GUESS, 2)
    for _ in range(20):
        runner, last = trainer.run_updates(runner, jnp.int32(40), 2)
    first = first["return_sums"][0].sum() / first["episodes"][0].sum()
    last = last["return_sums"].sum() / last["episodes"].sum()
    assert abs(first) < 0.5
    assert last > 3.0  # of 4


def test_the_pretrained_opponent_is_the_policy_the_run_started_from_played_greedily(tmp_path):
    # a policy trained on the guessing game; a run started from it (init_from) seats it as the opponent
    # `pretrained`, whose own decisions then hit their targets, where the untrained network's hit 1 in 14
    train_run(jax_config(tmp_path / "a", total_timesteps=30_000), GUESS)
    path = str(tmp_path / "a" / "run" / "checkpoint.zip")
    config = jax_config(tmp_path / "b", init_from=path, pool__weights={"pretrained": 1.0})
    trainer = jax_ppo.JaxPPO(config, GUESS)
    untrained = trainer.init(jax.random.PRNGKey(0))
    started = jax_ppo.start_from(trainer, untrained, jax_ppo.initial_params(config, trainer, path))

    @jax.jit
    def opponents_hits(runner):
        totals = (jnp.zeros(2), jnp.zeros(2), jnp.float32(0))
        _, steps = jax.lax.scan(lambda c, _: trainer._act(c, runner.snapshots), (runner, totals), None, length=16)
        hit = jax_ppo.seat_value(steps.rewards.reshape(-1, 2), steps.mover.reshape(-1)) > 0
        theirs = ~steps.learner.reshape(-1) & (steps.mover.reshape(-1) >= 0)
        return jnp.sum(hit & theirs) / jnp.sum(theirs)

    assert float(opponents_hits(started)) > 0.9
    assert float(opponents_hits(untrained)) < 0.2


def test_the_same_seed_gives_the_same_parameters_and_another_seed_others():
    config = jax_config()
    _, a, _ = run_updates(config, GUESS, 2, seed=1)
    _, b, _ = run_updates(config, GUESS, 2, seed=1)
    _, c, _ = run_updates(config, GUESS, 2, seed=2)
    for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params), strict=True):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(c.params),
                                                        strict=True))


def test_snapshots_enter_the_pool_every_snapshot_every_updates():
    config = jax_config(pool__snapshot_every=2, pool__max_snapshots=3)
    trainer, runner, _ = run_updates(config, GUESS, 2)
    runner, _ = trainer.run_updates(runner, jnp.int32(6), 2)
    runner, _ = trainer.run_updates(runner, jnp.int32(6), 2)
    assert int(runner.snapshot_count) == 1 + 3  # the initial policy, then updates 2, 4 and 6
    latest = jax.tree.map(lambda a: a[(int(runner.snapshot_count) - 1) % 3], runner.snapshots)
    for x, y in zip(jax.tree.leaves(latest), jax.tree.leaves(runner.params["policy"]), strict=True):
        np.testing.assert_array_equal(x, y)


# -- runs, checkpoints, resume -------------------------------------------------------------------------------------


def train_run(config, env, **kwargs):
    return jax_ppo.train(config, env=env, progress=False, final_eval=False, **kwargs)


def test_a_resumed_run_ends_with_the_parameters_of_a_run_that_never_stopped(tmp_path):
    env = GUESS
    whole = jax_config(tmp_path / "whole", total_timesteps=8192)
    train_run(whole, env)
    first = jax_config(tmp_path / "parts", total_timesteps=4096)
    train_run(first, env)
    second = jax_config(tmp_path / "parts", total_timesteps=8192)
    train_run(second, env, resume=True)
    a = read_checkpoint(tmp_path / "whole" / "run" / "checkpoint.zip", with_model=True)
    b = read_checkpoint(tmp_path / "parts" / "run" / "checkpoint.zip", with_model=True)
    assert a.num_timesteps == b.num_timesteps >= 8192
    for x, y in zip(a.policy.weights + a.policy.biases, b.policy.weights + b.policy.biases, strict=True):
        np.testing.assert_array_equal(x, y)
    assert a.model_bytes == b.model_bytes  # the whole loop state: Adam, games in progress, pool, key


def test_resume_refuses_a_changed_network_and_a_missing_checkpoint(tmp_path):
    env = GUESS
    with pytest.raises(Exception, match="no checkpoint"):
        train_run(jax_config(tmp_path), env, resume=True)
    train_run(jax_config(tmp_path), env)
    with pytest.raises(ConfigError, match="ppo.net_arch"):
        train_run(jax_config(tmp_path, ppo__net_arch=[8], total_timesteps=8192), env, resume=True)
    with pytest.raises(ConfigError, match="already exists"):
        train_run(jax_config(tmp_path), env)


def test_the_checkpoint_plays_with_numpy_only_in_the_harness_the_pool_and_search(tmp_path):
    train_run(jax_config(tmp_path), GUESS)  # the toy game has Revolutionary War's shapes
    path = tmp_path / "run" / "checkpoint.zip"
    checkpoint = read_checkpoint(path, with_model=True)
    assert checkpoint.meta["backend"] == "jax" and checkpoint.num_timesteps >= 4096
    assert len(checkpoint.snapshots) == 3
    script = f"""
import sys
from agents.tournaments.match import contest
from agents.players.registry import make_agent
from train.pool import OpponentPool
result = contest("revolutionary_war_v0", "checkpoint:{path}", "random", 4, seed=0, progress=False)
assert result.games == 4, result
search = make_agent("revolutionary_war_v0", "ismcts:sims=4,rollout=checkpoint:{path}", seed=0)
assert contest("revolutionary_war_v0", "ismcts:sims=4,rollout=checkpoint:{path}", "random", 2, seed=0,
               progress=False).games == 2
pool = OpponentPool("revolutionary_war_v0", {{"checkpoint:{path}": 1.0}})
import numpy as np
assert pool.sample(np.random.default_rng(0), 1).name == "checkpoint:{path}"
assert "jax" not in sys.modules and "torch" not in sys.modules, sorted(m for m in sys.modules if m in ("jax", "torch"))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_the_committed_jax_configs_load():
    for path in sorted((ROOT / "configs").glob("*_jax.yaml")):
        config = load_config(path)
        assert config.backend == "jax", path


def test_the_zero_cost_env_has_the_shapes_and_episode_length_it_is_given():
    from train.jax_zero_cost import ZeroCostEnv

    env = ZeroCostEnv(4, 10, 5, episode_length=6)
    state = env.init(jax.random.PRNGKey(0))
    assert state.observation.shape == (10,) and state.legal_action_mask.shape == (5,) and state.rewards.shape == (4,)
    seats, total = [], np.zeros(4)
    while not bool(state.terminated):
        seats.append(int(state.current_player))
        state = env.step(state, jnp.int32(0), jax.random.PRNGKey(1))
        total += np.asarray(state.rewards)
    assert seats == [0, 1, 2, 3, 0, 1]
    assert total.tolist() == [-1.0, 1.0, 0.0, 0.0]  # even length: seat 1 wins
    with pytest.raises(ValueError, match="needs >= 2 players"):
        ZeroCostEnv(1, 10, 5, 6)


def test_the_jax_warm_start_clones_its_teacher():
    import card_envs
    from train.jax_pretrain import fit, greedy_student
    from train.pretrain import collect

    game = card_envs.make_game("revolutionary_war_v0")
    data = collect(game, "heuristic:cheapest", 80, seed=0)
    params = jax_ppo.init_network(jax.random.PRNGKey(0), game.observation_size, game.num_actions, [64], "shared")
    fitted, stats = fit(params, data, activation="tanh", epochs=20, batch_size=256, learning_rate=3e-3,
                        value_weight=0.5, label_smoothing=0.0, seed=0)
    assert stats["accuracy"] > 0.95, stats
    held_out = collect(game, "heuristic:cheapest", 30, seed=1)
    student = greedy_student(fitted, "tanh")
    agree = np.mean([student(o, m) == a for o, m, a in zip(held_out.observations, held_out.masks, held_out.actions,
                                                           strict=True)])
    assert agree > 0.9


def test_the_loop_compiled_in_the_background_is_the_one_its_first_call_runs():
    # train() compiles the loop while the warm start plays; a compile for other shapes or types than the
    # loop's first call would leave that call to compile again (the time the warm start was to hide)
    config = jax_config(n_envs=16, ppo__net_arch=[8], ppo__n_steps=4, ppo__batch_size=16, ppo__n_epochs=1,
                        pool__weights={"random": 1.0})  # a small loop no other test has compiled
    trainer = jax_ppo.JaxPPO(config, GUESS)
    runner = trainer.init(jax.random.PRNGKey(0))
    assert jax_ppo.compile_in_background(trainer, runner, 1).result() > 0
    compiles = []

    def listen(event, seconds, **_):
        compiles.append(event) if event == "/jax/core/compile/backend_compile_duration" else None

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        trainer.run_updates(runner, jnp.int32(config.total_timesteps), 1)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert compiles == []
