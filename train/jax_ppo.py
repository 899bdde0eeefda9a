"""PPO self-play on the batched JAX engines, the whole loop jitted (``backend: jax``), PureJaxRL style.

Read top to bottom: the network (:func:`init_network`, :func:`forward`), who sits at the tables
(:class:`Table`), the loop state (:class:`Runner`), then :class:`JaxPPO`, whose jitted
:meth:`JaxPPO.run_updates` does ``jax.updates_per_call`` PPO updates in one call, each

1. **acting**: ``ppo.n_steps`` steps of ``n_envs`` games at once (``lax.scan`` over steps, every array
   batched over games). At each step *every game makes one decision*, whoever is to move: the learner
   samples from its masked softmax where one of its seats is to move, the game's opponents move
   elsewhere, the engine steps all games once. There is no inner loop waiting for opponents: a step
   costs one engine step and one forward pass of the learner (plus each opponent's on its own games).
   Games that ended are dealt again at the end of the step (at most ``n_envs // 16`` per step; the rest
   wait a step, as a no-op), with a new seat for the learner;
2. **GAE** (``ppo.gamma``, ``ppo.gae_lambda``) over each seat's own decisions (:func:`gae`);
3. **PPO epochs**: ``ppo.n_epochs`` passes over the rollout's learner decisions in shuffled minibatches
   of ``ppo.batch_size``: clipped surrogate, value regression, entropy bonus, gradient clipping, Adam,
   stopping early past ``ppo.target_kl`` as SB3 does;
4. **snapshots**: every ``pool.snapshot_every`` updates the policy is copied into the pool.

:func:`train` is the host side behind ``card-envs train --config <a backend: jax config>``: the run
directory, ``--resume``, the imitation warm start, the progress bar, TensorBoard logs, atomic
checkpoints every ``checkpoint_interval`` decisions, evaluations every ``eval.interval`` and the final
evaluation on the Python env (``train/summary.py``, the same as the SB3 trainer's).

==========================  ============================================================================
the learner's game          as ``SingleAgentEnv`` (the SB3 trainer's): the reward of a decision is
                            everything its seat earned from it until the seat's next decision (the other
                            seats' moves included), and the last decision gets the final result, even when
                            another seat's move ends the game. What a seat earns before its first
                            decision is paid with that decision
tables                      the batch is cut into fixed blocks (:class:`Table`): ``jax.self_play`` of the
                            games seat the learner's current policy in every seat (every decision trains);
                            the others are shared among the entries of ``pool.weights`` in proportion to
                            their weights, the learner in one seat (drawn at random every episode) and that
                            entry in every other seat: ``random`` (a uniformly random legal move),
                            ``heuristic:<name>`` (the JAX port of that rule-based player,
                            ``train/jax_players``), a trained model (``zoo:<game>/<name>``,
                            ``checkpoint:<path>``: its policy network, frozen, as it plays in Python;
                            at a table of its observation options), ``self`` (a snapshot of the
                            learner, sampling from its masked softmax) or ``pretrained`` (the policy the
                            run started from, after the imitation warm start or ``init_from``, frozen and
                            greedy: a clone of a teacher that has no JAX port, such as Revolutionary War's
                            exact endgame search). Fixed blocks let each opponent be computed on its own
                            games only
snapshots                   a pool of the ``pool.max_snapshots`` most recent copies of the policy (the
                            first taken before training). Each rollout seats ``jax.active_snapshots`` of
                            them, drawn uniformly from the pool at every update, each in its own share of
                            the ``self`` games
advice                      with ``advisor``, the policy (and every snapshot) reads the observation
                            followed by a one-hot of the advisor's move (its JAX port), as in the SB3
                            trainer; the exported player builds the same advice from the Python player.
                            The port runs once per step: its moves are also those of the opponent block
                            that seats the same player (ports are deterministic)
termination                 an episode ends when the game is terminated or truncated (a truncated game
                            is scored by the rules: no bootstrapping)
what trains                 a learner decision whose seat moves again within the rollout, or whose episode
                            ends within it, or whose seat is to move when the rollout ends (bootstrapped
                            from the value there); the last decision of a seat that waits across the
                            rollout's end has no value to bootstrap from and is left out (a few percent,
                            logged as ``train/trained_share``). ``ppo.batch_size`` divides the expected
                            number of learner decisions into whole minibatches
counting                    ``total_timesteps`` and the decisions of the progress bar, checkpoints and
                            benchmarks are learner decisions; ``ppo.n_steps`` counts steps of every seat
statistics                  per kind of table (every entry, and ``self_play``): episodes and the mean
                            return of the learner's seat, logged as ``return/<kind>``
==========================  ============================================================================

Determinism: everything random comes from ``jax.random`` keys split from ``seed``; the same seed gives
the same parameters on the same machine (XLA on CPU is deterministic for a fixed thread count). The
checkpoint holds the whole loop state (parameters, Adam moments, every game in progress, seats,
the snapshot pool, the key), so ``--resume`` continues exactly where the run stopped: a resumed run
ends with the same parameters as one that never stopped.
"""

from __future__ import annotations

import io
import math
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

import card_envs
from agents.files import write_atomically
from card_envs.core.errors import ConfigError
from card_envs.jax.core import random_legal_actions, reset_finished
from train.checkpoint import (
    BEST_NAME,
    CHECKPOINT_NAME,
    Checkpoint,
    CheckpointError,
    Snapshot,
    best_index,
    check_game,
    game_signature,
    read_checkpoint,
    write_checkpoint,
)
from train.config import TrainConfig
from train.jax_network import (
    Layers,
    Params,
    entropy,
    forward,
    init_network,
    log_policy,
    masked_logits,
    policy_logits,
    sample,
    sample_with_log_prob,
    to_policy_net,
)
from train.summary import Summary, checkpoint_to_resume, cpu_seconds, evaluate

BACKEND = "jax"
#: config keys a resumed run may change; everything else must match the checkpoint's config
RESUMABLE_CHANGES = ("total_timesteps", "checkpoint_interval", "eval", "pretrain")
# -- who sits at the table ----------------------------------------------------------------------------


RANDOM, SELF, PRETRAINED, SELF_PLAY = "random", "self", "pretrained", "self_play"


class Block(NamedTuple):
    """Games ``lo .. hi - 1`` of the batch, and who sits at their tables."""

    kind: str  #: ``self_play`` (the learner in every seat), or a ``pool.weights`` entry in every other seat
    lo: int
    hi: int
    slot: int = 0  #: the snapshot a ``self`` block seats (``0 .. jax.active_snapshots - 1``)


class Table:
    """Who sits at each game's table, inside the jitted loop: the batch of ``n_envs`` games is cut into fixed
    blocks, so that each kind of opponent is computed only on its own games.

    The first ``round(jax.self_play * n_envs)`` games seat the learner in every seat; the others are shared
    among the entries of ``pool.weights`` in proportion to their weights (zero weights dropped, at least one
    game each; a ``self`` share split evenly among the ``jax.active_snapshots`` seated snapshots)."""

    def __init__(self, config: TrainConfig, game: Any, n_envs: int) -> None:
        from train.jax_players import make_port

        self.entries = [name for name, weight in config.pool.weights.items() if weight > 0]
        self.ports = {name: make_port(game, name) for name in self.entries if name not in (RANDOM, SELF, PRETRAINED)}
        self.advisor_spec = config.advisor  #: the advisor's agent spec, e.g. ``heuristic:counting`` (or None)
        self.advisor = None if config.advisor is None else make_port(game, config.advisor)
        self.slots = config.jax.active_snapshots
        self.blocks = self._blocks(config, n_envs)

    def _blocks(self, config: TrainConfig, n_envs: int) -> list[Block]:
        mirrored = round(config.jax.self_play * n_envs)
        if config.jax.self_play < 1 and n_envs - mirrored < len(self.entries) * (1 + (self.slots - 1) * (
                SELF in self.entries)):
            raise ConfigError(f"n_envs ({n_envs}) leaves too few games for the entries of pool.weights "
                              f"({', '.join(self.entries)}) after jax.self_play ({config.jax.self_play})")
        blocks = [Block(SELF_PLAY, 0, mirrored)] if mirrored else []
        if mirrored == n_envs:
            return blocks
        weights = np.array([config.pool.weights[name] for name in self.entries], np.float64)
        shares = _apportion(n_envs - mirrored, weights / weights.sum(), minimum=1)
        lo = mirrored
        for name, share in zip(self.entries, shares, strict=True):
            if name == SELF:
                for slot, part in enumerate(_apportion(share, np.full(self.slots, 1 / self.slots), minimum=1)):
                    blocks.append(Block(SELF, lo, lo + part, slot))
                    lo += part
            else:
                blocks.append(Block(name, lo, lo + share))
                lo += share
        return blocks

    @property
    def kinds(self) -> list[str]:
        """Statistics' kinds of table: every entry, then ``self_play``."""
        return [*self.entries, SELF_PLAY]

    def kind_of_games(self) -> np.ndarray:
        """(n_envs,) index into :attr:`kinds` of every game."""
        return np.concatenate([np.full(b.hi - b.lo, self.kinds.index(b.kind), np.int32) for b in self.blocks])

    def mirrored(self) -> np.ndarray:
        """(n_envs,) whether the learner sits in every seat of the game."""
        return np.concatenate([np.full(b.hi - b.lo, b.kind == SELF_PLAY) for b in self.blocks])


def _apportion(total: int, shares: np.ndarray, minimum: int) -> list[int]:
    """``total`` split in proportion to ``shares`` (largest remainders), each part at least ``minimum``."""
    parts = np.maximum(np.floor(shares * total).astype(int), minimum)
    while parts.sum() > total:
        parts[np.argmax(parts)] -= 1
    for index in np.argsort(-(shares * total - np.floor(shares * total)), kind="stable")[: total - parts.sum()]:
        parts[index] += 1
    return parts.tolist()


# -- the loop state ---------------------------------------------------------------------------------------


class Runner(NamedTuple):
    """Everything the jitted loop carries from one call to the next (and a checkpoint stores)."""

    params: Params
    opt_state: Any
    env_state: Any  #: the engine's State, batched over ``n_envs`` games
    seat: jax.Array  #: (n_envs,) the learner's seat (unread in ``self_play`` games: it has them all)
    decided: jax.Array  #: (n_envs, players) the seat has made a learner decision in this episode
    unpaid: jax.Array  #: (n_envs, players) rewards of the seat before its first decision, paid with it
    episode_return: jax.Array  #: (n_envs,) the learner seat's return so far in each game
    episode_decisions: jax.Array  #: (n_envs,) decisions of every seat so far in each game
    snapshots: Layers  #: the pool: every array with a leading ``pool.max_snapshots`` axis
    snapshot_count: jax.Array  #: snapshots taken so far (the pool holds the last ``max_snapshots``)
    anchor: Layers  #: the policy the run started from (the ``pretrained`` opponent)
    update: jax.Array  #: PPO updates done
    decisions: jax.Array  #: learner decisions played so far
    key: jax.Array


class Transition(NamedTuple):
    """One step of every game (time-major in a rollout): whoever moved, and whether it was the learner."""

    observation: jax.Array  #: what the learner's policy read (observation, then the advice if any)
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    mover: jax.Array  #: the seat that moved
    learner: jax.Array  #: the learner moved (a training sample)
    bonus: jax.Array  #: rewards of the mover's seat before its first decision (paid with this one)
    rewards: jax.Array  #: (n_envs, players) what the step paid every seat
    done: jax.Array  #: the step ended the episode


class Targets(NamedTuple):
    """What GAE makes of a rollout, per step and game."""

    advantage: jax.Array
    value_target: jax.Array
    reward: jax.Array  #: the decision's reward: its seat's rewards from it to the seat's next decision
    weight: jax.Array  #: a training sample: a learner decision whose next decision (or end) is in the rollout


def tree_where(condition: jax.Array, new: Any, old: Any) -> Any:
    """``new`` where ``condition`` (one bool per game) else ``old``, leaf by leaf of a batched pytree."""

    def pick(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.where(condition.reshape(condition.shape + (1,) * (a.ndim - condition.ndim)), a, b)

    return jax.tree.map(pick, new, old)


def seat_value(per_seat: jax.Array, seat: jax.Array) -> jax.Array:
    """``per_seat[i, seat[i]]`` for a ``(n_envs, players)`` array, without a gather."""
    return jnp.sum(jnp.where(jnp.arange(per_seat.shape[1]) == seat[:, None], per_seat, 0), axis=1)


# -- the trainer ---------------------------------------------------------------------------------------------


class JaxPPO:
    """The jitted self-play PPO loop of one config on one engine (any ``pgx.Env`` of the game's shapes)."""

    def __init__(self, config: TrainConfig, env: Any, game: Any | None = None) -> None:
        self.config = config
        self.env = env
        self.game = game or card_envs.make_game(config.game, **config.env_options)
        self.n_envs = config.n_envs
        self.table = Table(config, self.game, self.n_envs)
        self.players = env.num_players
        self.num_actions = env.num_actions
        (observation_size,) = env.observation_shape
        self.inputs = observation_size + (self.num_actions if config.advisor is not None else 0)
        ppo = config.ppo
        self.steps = ppo.n_steps * config.n_envs  #: game decisions per rollout
        self.minibatches = max(1, math.ceil(self.expected_samples() / ppo.batch_size))
        self.samples = self.minibatches * ppo.batch_size  #: learner decisions trained on per update
        #: games re-dealt per step at most (the rest of those that ended wait a step, as a no-op)
        self.deals = max(8, self.n_envs // 16)
        self.activation = ppo.activation
        self.optimizer = optax.chain(optax.clip_by_global_norm(ppo.max_grad_norm), optax.scale_by_adam(eps=1e-5))
        self.run_updates = jax.jit(self._run_updates, static_argnums=2)
        self.init = jax.jit(self._init)

    def expected_samples(self) -> float:
        """Learner decisions per rollout that can train: every decision of a ``self_play`` game, one seat's share
        of the others, less the last decision of each learner seat not to move when the rollout ends."""
        mirrored = float(self.table.mirrored().sum())
        single = self.n_envs - mirrored
        played = self.config.ppo.n_steps * (mirrored + single / self.players)
        cut = (mirrored + single / self.players) * (self.players - 1)
        return max(played - cut, 1.0)

    # -- seats and opponents ------------------------------------------------------------------------------

    def advice(self, observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array | None:
        """The advisor's move in every game (``None`` without an advisor)."""
        if self.table.advisor is None:
            return None
        keys = jax.random.split(key, observation.shape[0])
        return jax.vmap(self.table.advisor)(observation, mask, keys)

    def with_advice(self, observation: jax.Array, advice: jax.Array | None) -> jax.Array:
        """What a network reads: the observation, then (with an advisor) the one-hot of its move."""
        if advice is None:
            return observation
        return jnp.concatenate([observation, jax.nn.one_hot(advice, self.num_actions, dtype=observation.dtype)], -1)

    def policy_input(self, observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        """What a network reads: the observation, then (with an advisor) the one-hot of its move."""
        return self.with_advice(observation, self.advice(observation, mask, key))

    def opponent_actions(self, observation: jax.Array, mask: jax.Array, inputs: jax.Array, active: Layers,
                         anchor: Layers, key: jax.Array, advice: jax.Array | None = None) -> jax.Array:
        """The move every game's opponents would make now, block by block (``self_play`` games: unread).

        ``advice``: the advisor's moves (:meth:`advice`), reused as the moves of the block whose entry is the
        advisor's player: ports are deterministic (the key is unused), so they are the moves its port would
        make, without computing them again."""
        parts = []
        for index, block in enumerate(self.table.blocks):
            k = jax.random.fold_in(key, index)
            rows = slice(block.lo, block.hi)
            if block.kind == SELF_PLAY:
                chosen = jnp.zeros(block.hi - block.lo, jnp.int32)
            elif block.kind == RANDOM:
                chosen = random_legal_actions(k, mask[rows])
            elif block.kind == SELF:
                layers = jax.tree.map(lambda a, s=block.slot: a[s], active)
                logits, _ = policy_logits(layers, inputs[rows], self.activation)
                chosen = sample(k, logits, mask[rows])
            elif block.kind == PRETRAINED:
                logits, _ = policy_logits(anchor, inputs[rows], self.activation)
                chosen = jnp.argmax(masked_logits(logits, mask[rows]), axis=-1).astype(jnp.int32)
            elif advice is not None and block.kind == self.table.advisor_spec:
                chosen = advice[rows]
            else:
                port = self.table.ports[block.kind]
                chosen = jax.vmap(port)(observation[rows], mask[rows], jax.random.split(k, block.hi - block.lo))
            parts.append(chosen)
        return jnp.concatenate(parts)

    def draw_seats(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (self.n_envs,), 0, self.players, jnp.int32)

    # -- the loop -----------------------------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> Runner:
        """A fresh run: the network, Adam, ``n_envs`` deals, and the pool holding the untrained policy (so
        ``self`` seats can be drawn from the start)."""
        k_net, k_deal, k_seats, key = jax.random.split(key, 4)
        ppo = self.config.ppo
        params = init_network(k_net, self.inputs, self.num_actions, list(ppo.net_arch), self.config.jax.network)
        state = jax.vmap(self.env.init)(jax.random.split(k_deal, self.n_envs))
        size = self.config.pool.max_snapshots
        snapshots = jax.tree.map(lambda a: jnp.zeros((size, *a.shape), a.dtype).at[0].set(a), params["policy"])
        seats = jnp.zeros((self.n_envs, self.players))
        return Runner(params, self.optimizer.init(params), state, self.draw_seats(k_seats), seats.astype(bool),
                      seats, jnp.zeros(self.n_envs), jnp.zeros(self.n_envs, jnp.int32), snapshots, jnp.int32(1),
                      params["policy"], jnp.int32(0), jnp.int32(0), key)

    def _run_updates(self, runner: Runner, total_decisions: jax.Array, count: int) -> tuple[Runner, dict]:
        """``count`` PPO updates (acting, GAE, epochs, snapshots); per-update statistics stacked."""
        return jax.lax.scan(lambda r, _: self._update(r, total_decisions), runner, None, length=count)

    def _update(self, runner: Runner, total_decisions: jax.Array) -> tuple[Runner, dict]:
        config, ppo = self.config, self.config.ppo
        key, k_active, k_epochs, k_last = jax.random.split(runner.key, 4)
        runner = runner._replace(key=key)
        held = jnp.minimum(runner.snapshot_count, config.pool.max_snapshots)
        chosen = jax.random.randint(k_active, (self.table.slots,), 0, held)
        active = jax.tree.map(lambda a: a[chosen], runner.snapshots)
        kinds = len(self.table.kinds)
        totals = (jnp.zeros(kinds), jnp.zeros(kinds), jnp.float32(0))
        (runner, totals), trajectory = jax.lax.scan(
            lambda carry, _: self._act(carry, active), (runner, totals), None, length=ppo.n_steps)
        state = runner.env_state
        last_input = self.policy_input(state.observation, state.legal_action_mask, k_last)
        _, last_value = forward(runner.params, last_input, self.activation)
        last_learner = self.learner_moves(state, runner.seat)
        targets = gae(trajectory, last_value, state.current_player, last_learner, self.players, ppo.gamma,
                      ppo.gae_lambda)
        progress = jnp.minimum(runner.decisions.astype(jnp.float32) / jnp.maximum(total_decisions, 1), 1.0)
        rate = ppo.learning_rate * (1.0 - progress if ppo.lr_schedule == "linear" else 1.0)
        params, opt_state, losses = self._epochs(runner.params, runner.opt_state, trajectory, targets, rate, k_epochs)
        update = runner.update + 1
        take = (update % config.pool.snapshot_every) == 0
        index = runner.snapshot_count % config.pool.max_snapshots
        snapshots = jax.tree.map(lambda pool, a: jnp.where(take, pool.at[index].set(a), pool), runner.snapshots,
                                 params["policy"])
        played = jnp.sum(trajectory.learner, dtype=jnp.int32)
        runner = runner._replace(params=params, opt_state=opt_state, snapshots=snapshots, update=update,
                                 snapshot_count=runner.snapshot_count + take.astype(jnp.int32),
                                 decisions=runner.decisions + played)
        episodes, return_sums, lengths = totals
        weight = targets.weight.astype(jnp.float32)
        stats = {**losses, "episodes": episodes, "return_sums": return_sums, "finished_lengths": lengths,
                 "learner_decisions": played, "trained_share": weight.sum() / jnp.maximum(played, 1),
                 "learning_rate": rate,
                 "explained_variance": explained_variance(trajectory.value, targets.value_target, weight)}
        return runner, stats

    def learner_moves(self, state: Any, seat: jax.Array) -> jax.Array:
        """Per game: the learner is to move (its seat, or any seat of a ``self_play`` game) in a running game."""
        over = state.terminated | state.truncated
        return (jnp.asarray(self.table.mirrored()) | (state.current_player == seat)) & ~over

    def _act(self, carry: tuple[Runner, tuple], active: Layers) -> tuple[tuple[Runner, tuple], Transition]:
        """One decision in every game (the learner's or an opponent's), then new deals for games that ended."""
        runner, (episodes, return_sums, lengths) = carry
        key, k_input, k_action, k_opponents, k_step, k_deal, k_seats = jax.random.split(runner.key, 7)
        state = runner.env_state
        mover, mask = state.current_player, state.legal_action_mask
        learner = self.learner_moves(state, runner.seat)
        advice = self.advice(state.observation, mask, k_input)
        inputs = self.with_advice(state.observation, advice)
        logits, value = forward(runner.params, inputs, self.activation)
        own, log_prob = sample_with_log_prob(k_action, logits, mask)
        theirs = self.opponent_actions(state.observation, mask, inputs, active, runner.anchor, k_opponents, advice)
        action = jnp.where(learner, own, theirs)
        step_keys = jax.random.split(k_step, self.n_envs) if getattr(self.env, "step_uses_key", True) else None
        was_over = state.terminated | state.truncated
        stepped = jax.vmap(self.env.step)(state, action, step_keys)
        rewards = stepped.rewards
        # rewards of a seat before its first decision are paid with that decision
        first = learner[:, None] & (jnp.arange(self.players) == mover[:, None]) & ~runner.decided
        bonus = seat_value(jnp.where(first, runner.unpaid, 0.0), mover)
        decided = runner.decided | first
        unpaid = jnp.where(decided, 0.0, runner.unpaid + rewards)
        done = (stepped.terminated | stepped.truncated) & ~was_over
        transition = Transition(inputs, mask, own, log_prob, value, mover, learner, bonus, rewards, done)
        # statistics of the games that ended, by kind of table
        episode_return = runner.episode_return + seat_value(rewards, runner.seat)
        episode_decisions = runner.episode_decisions + (~was_over).astype(jnp.int32)
        kind = jnp.asarray(self.table.kind_of_games())
        kinds = len(self.table.kinds)
        episodes = episodes + jax.ops.segment_sum(done.astype(jnp.float32), kind, kinds)
        return_sums = return_sums + jax.ops.segment_sum(jnp.where(done, episode_return, 0.0), kind, kinds)
        lengths = lengths + jnp.sum(jnp.where(done, episode_decisions, 0)).astype(jnp.float32)
        # new deals (at most ``deals`` per step), each with a new seat for the learner
        dealt = reset_finished(self.env, stepped, k_deal, slots=min(self.deals, self.n_envs))
        fresh = (stepped.terminated | stepped.truncated) & ~(dealt.terminated | dealt.truncated)
        runner = runner._replace(
            env_state=dealt, key=key, seat=jnp.where(fresh, self.draw_seats(k_seats), runner.seat),
            decided=decided & ~fresh[:, None], unpaid=jnp.where(fresh[:, None], 0.0, unpaid),
            episode_return=jnp.where(fresh, 0.0, episode_return),
            episode_decisions=jnp.where(fresh, 0, episode_decisions))
        return (runner, (episodes, return_sums, lengths)), transition

    def _epochs(self, params: Params, opt_state: Any, trajectory: Transition, targets: Targets, rate: jax.Array,
                key: jax.Array) -> tuple[Params, Any, dict]:
        """``ppo.n_epochs`` passes of minibatch PPO over the rollout's training samples; stops for good past
        ``ppo.target_kl``. The samples are ``samples`` steps of the rollout: learner decisions in a random order,
        then padding of weight zero if the rollout had fewer (any beyond wait for no one: left out). Each epoch
        gathers them once, in its own order (the first epoch in the drawn order, the others in a permutation
        of it): one copy of the rollout per epoch, the biggest memory traffic of the update."""
        ppo = self.config.ppo
        k_order, k_epochs = jax.random.split(key)
        batch = (trajectory.observation, trajectory.mask, trajectory.action, trajectory.log_prob,
                 targets.advantage, targets.value_target, targets.weight.astype(jnp.float32))
        batch = jax.tree.map(lambda a: a.reshape(self.steps, *a.shape[2:]), batch)
        shuffle = jax.random.uniform(k_order, (self.steps,))
        selected = jnp.argsort(jnp.where(batch[-1] > 0, shuffle, 1.0 + shuffle))[: self.samples]
        orders = jnp.stack([selected, *(selected[jax.random.permutation(k, self.samples)]
                                        for k in jax.random.split(k_epochs, ppo.n_epochs - 1))])
        limit = math.inf if ppo.target_kl is None else 1.5 * ppo.target_kl

        def loss_fn(p: Params, minibatch: tuple) -> tuple[jax.Array, dict]:
            observation, mask, action, old_log_prob, advantage, target, weight = minibatch
            count = jnp.maximum(weight.sum(), 1.0)

            def mean(x: jax.Array) -> jax.Array:
                return jnp.sum(x * weight) / count

            logits, value = forward(p, observation, self.activation)
            log_prob = jnp.take_along_axis(log_policy(logits, mask), action[:, None], axis=1)[:, 0]
            if ppo.normalize_advantage:
                centre = mean(advantage)
                advantage = (advantage - centre) / (jnp.sqrt(mean((advantage - centre) ** 2)) + 1e-8)
            log_ratio = jnp.where(weight > 0, log_prob - old_log_prob, 0.0)
            ratio = jnp.exp(log_ratio)
            clipped = jnp.clip(ratio, 1 - ppo.clip_range, 1 + ppo.clip_range)
            policy_loss = -mean(jnp.minimum(ratio * advantage, clipped * advantage))
            value_loss = mean((target - value) ** 2)
            entropy_mean = mean(entropy(logits, mask))
            loss = policy_loss + ppo.vf_coef * value_loss - ppo.ent_coef * entropy_mean
            return loss, {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy_mean,
                          "approx_kl": mean((ratio - 1) - log_ratio),
                          "clip_fraction": mean((jnp.abs(ratio - 1) > ppo.clip_range).astype(jnp.float32))}

        def step(carry: tuple, minibatch: tuple) -> tuple[tuple, dict]:
            p, o, going = carry
            (_, info), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, minibatch)
            going = going & (info["approx_kl"] <= limit)  # SB3: checked before the step it would stop
            updates, new_o = self.optimizer.update(grads, o, p)
            new_p = jax.tree.map(lambda w, u: w - rate * u, p, updates)
            p = jax.tree.map(lambda a, b: jnp.where(going, a, b), new_p, p)
            o = jax.tree.map(lambda a, b: jnp.where(going, a, b), new_o, o)
            return (p, o, going), {**info, "trained": going.astype(jnp.float32)}

        def epoch(carry: tuple, order: jax.Array) -> tuple[tuple, dict]:
            shuffled = jax.tree.map(lambda a: a[order].reshape(self.minibatches, -1, *a.shape[1:]), batch)
            return jax.lax.scan(step, carry, shuffled)

        (params, opt_state, _), info = jax.lax.scan(epoch, (params, opt_state, jnp.bool_(True)), orders)
        trained = info.pop("trained")
        weight = trained / jnp.maximum(trained.sum(), 1.0)  # statistics of the minibatches trained on
        losses = {name: jnp.sum(values * weight) for name, values in info.items()}
        losses["epochs_trained"] = trained.sum() / self.minibatches
        return params, opt_state, losses


def gae(trajectory: Transition, last_value: jax.Array, last_mover: jax.Array, last_learner: jax.Array, players: int,
        gamma: float, lam: float) -> Targets:
    """Generalized advantage estimates over each seat's own decisions, time-major.

    A decision's reward is what its seat earned from it until the seat's next decision (the other seats'
    moves included; plus ``bonus``), its next value that of the seat's next decision (0 after the episode's
    end; at the end of the rollout, the value of the position if that seat is to move there). A decision
    whose seat does not move again in the rollout before the episode ends has no next value to bootstrap
    from: it gets weight 0 (not trained on)."""
    seats = jnp.arange(players)
    at_end = (seats == last_mover[:, None]) & last_learner[:, None]
    start = (jnp.where(at_end, last_value[:, None], 0.0), jnp.zeros(at_end.shape), jnp.zeros(at_end.shape), ~at_end)

    def back(carry: tuple, step: Transition) -> tuple[tuple, Targets]:
        next_value, next_advantage, pending, open_ = carry
        ended = step.done[:, None]
        next_value, next_advantage = jnp.where(ended, 0.0, next_value), jnp.where(ended, 0.0, next_advantage)
        pending, open_ = jnp.where(ended, 0.0, pending) + step.rewards, open_ & ~ended
        reward = step.bonus + seat_value(pending, step.mover)
        delta = reward + gamma * seat_value(next_value, step.mover) - step.value
        advantage = delta + gamma * lam * seat_value(next_advantage, step.mover)
        weight = step.learner & (seat_value(open_.astype(jnp.int32), step.mover) == 0)
        moved = (seats == step.mover[:, None]) & step.learner[:, None]
        carry = (jnp.where(moved, step.value[:, None], next_value),
                 jnp.where(moved, advantage[:, None], next_advantage), jnp.where(moved, 0.0, pending), open_ & ~moved)
        return carry, Targets(advantage, advantage + step.value, reward, weight)

    _, targets = jax.lax.scan(back, start, trajectory, reverse=True)
    return targets


def explained_variance(values: jax.Array, returns: jax.Array, weight: jax.Array) -> jax.Array:
    count = jnp.maximum(weight.sum(), 1.0)

    def variance(x: jax.Array) -> jax.Array:
        centre = jnp.sum(x * weight) / count
        return jnp.sum((x - centre) ** 2 * weight) / count

    spread = variance(returns)
    return jnp.where(spread > 0, 1.0 - variance(returns - values) / spread, jnp.nan)


# -- the run ---------------------------------------------------------------------------------------------------


@dataclass
class RunState:
    """What a resumed run must remember besides the loop state (stored in the checkpoint's meta)."""

    last_checkpoint: int = 0
    last_eval: int = 0
    wall_time: float = 0.0
    cpu_time: float = 0.0
    compile_time: float = 0.0
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    pretrain: dict[str, Any] = field(default_factory=dict)


#: the settings that do not change the jitted loop (a trainer compiled for one serves them all)
OUTSIDE_THE_LOOP = ("seed", "total_timesteps", "checkpoint_interval", "run_dir", "init_from", "pretrain", "eval")
_TRAINERS: dict[tuple[int, str], tuple[Any, JaxPPO]] = {}


def trainer_for(config: TrainConfig, env: Any) -> JaxPPO:
    """The :class:`JaxPPO` of ``config`` on ``env``, reused (with its compiled functions) by later runs in this
    process whose configs differ only in :data:`OUTSIDE_THE_LOOP` (a benchmark's repeats, a test's runs)."""
    loop = {key: value for key, value in config.to_dict().items() if key not in OUTSIDE_THE_LOOP}
    key = (id(env), repr(sorted(loop.items())))
    if key not in _TRAINERS:
        if len(_TRAINERS) >= 4:
            _TRAINERS.pop(next(iter(_TRAINERS)))
        _TRAINERS[key] = (env, JaxPPO(config, env))  # the env is kept alive, so its id stays its own
    return _TRAINERS[key][1]


def train(config: TrainConfig, *, resume: bool = False, progress: bool = True, final_eval: bool = True,
          env: Any = None) -> Summary:
    """Train (or continue) the run of ``config`` (``backend: jax``); see the module docstring.

    ``env``: the engine to train on (default ``card_envs.jax.make(config.game, **config.env_options)``);
    any ``pgx.Env`` of the same shapes, e.g. :class:`train.jax_zero_cost.ZeroCostEnv` for a benchmark."""
    if config.backend != BACKEND:
        raise ConfigError(f"train.jax_ppo trains backend: jax configs, this one has backend: {config.backend}")
    run_dir = Path(config.run_dir or Path("runs") / config.game)
    checkpoint_path = run_dir / CHECKPOINT_NAME
    if env is None:
        from card_envs import jax as card_envs_jax

        env = card_envs_jax.make(config.game, **config.env_options)
    trainer = trainer_for(config, env)
    run = RunState()
    if resume:
        config, run, runner = _resume(config, trainer, checkpoint_path)
    elif checkpoint_path.exists():
        raise ConfigError(f"{checkpoint_path} already exists: pass --resume to continue that run, or choose "
                          f"another run directory (--set run_dir=...)")
    else:
        started, cpu_started = time.perf_counter(), cpu_seconds()
        runner = trainer.init(jax.random.PRNGKey(config.seed))
        if config.init_from is not None:
            runner = start_from(trainer, runner, initial_params(config, trainer, config.init_from))
        if config.pretrain.teacher is not None:
            from train.jax_pretrain import warm_start

            compiled = compile_in_background(trainer, runner, config.jax.updates_per_call)
            params, run.pretrain = warm_start(config, trainer.game, runner.params, progress)
            runner = start_from(trainer, runner, params)
            run.compile_time = compiled.result()
        run.wall_time = time.perf_counter() - started
        run.cpu_time = cpu_seconds() - cpu_started
    loop = Loop(config, trainer, runner, run, checkpoint_path, progress)
    loop.run()
    results = []
    if final_eval:
        results = evaluate(config, checkpoint_path, config.eval.final_games, seed=config.seed + 2, progress=progress)
    summary = Summary(config, loop.decisions, run.wall_time, run.cpu_time, results, str(checkpoint_path),
                      run.pretrain, method="PPO (JAX, train/jax_ppo.py)")
    if final_eval:
        summary.write(run_dir / "summary")
    return summary


def compile_in_background(trainer: JaxPPO, runner: Runner, updates_per_call: int) -> Future[float]:
    """Compile the jitted loop for ``runner``'s shapes in a thread, while the host does other work (the warm start
    plays its games on the Python engine, one core; XLA's compiler releases the GIL): the loop's first call then
    finds it compiled. The future gives the compile's wall seconds (or raises what compiling raised)."""

    def compile_loop() -> float:
        started = time.perf_counter()
        trainer.run_updates.lower(runner, jnp.int32(0), updates_per_call).compile()
        return time.perf_counter() - started

    pool = ThreadPoolExecutor(1, thread_name_prefix="compile")
    compiled = pool.submit(compile_loop)
    pool.shutdown(wait=False)
    return compiled


def start_from(trainer: JaxPPO, runner: Runner, params: Params) -> Runner:
    """A fresh run that starts from ``params`` (a warm start, ``init_from``): new Adam moments, and the policy is
    the pool's first snapshot and the ``pretrained`` opponent."""
    return runner._replace(params=params, opt_state=trainer.optimizer.init(params), anchor=params["policy"],
                           snapshots=jax.tree.map(lambda pool, a: pool.at[0].set(a), runner.snapshots,
                                                  params["policy"]))


class Loop:
    """The host side of a run: calls the jitted updates, logs, checkpoints and evaluates between calls."""

    def __init__(self, config: TrainConfig, trainer: JaxPPO, runner: Runner, run: RunState, checkpoint_path: Path,
                 progress: bool) -> None:
        self.config, self.trainer, self.runner, self.run_state = config, trainer, runner, run
        self.checkpoint_path = checkpoint_path
        self.show_progress = progress
        self.returns: dict[str, float] = {}
        self.writer = TensorBoard(checkpoint_path.parent / "tensorboard")

    @property
    def decisions(self) -> int:
        return int(self.runner.decisions)

    def run(self) -> None:
        """Calls of ``jax.updates_per_call`` updates until ``total_timesteps`` learner decisions are played."""
        config, run = self.config, self.run_state
        total = config.total_timesteps
        per_call = config.jax.updates_per_call
        started = time.perf_counter() - run.wall_time
        cpu_started = cpu_seconds() - run.cpu_time
        bar = self._bar(total)
        try:
            if config.eval.keep_best and not run.evaluations:  # the starting policy (a warm start) is a candidate too
                self.save()
                self.evaluate()
            while self.decisions < total:
                compiling = time.perf_counter()
                self.runner, stats = self.trainer.run_updates(self.runner, jnp.int32(total), per_call)
                stats = jax.device_get(stats)
                if run.compile_time == 0.0:
                    run.compile_time = time.perf_counter() - compiling  # the first call compiles (and runs)
                self._log(stats)
                steps = self.decisions
                run.wall_time, run.cpu_time = time.perf_counter() - started, cpu_seconds() - cpu_started
                evaluate_now = config.eval.interval > 0 and steps - run.last_eval >= config.eval.interval \
                    and steps < total
                if evaluate_now or steps - run.last_checkpoint >= config.checkpoint_interval:
                    self.save()
                if evaluate_now:
                    self.evaluate()
                if bar is not None:
                    bar.update(steps - bar.n)
                    bar.set_postfix_str(self.postfix(), refresh=False)
                elif evaluate_now:
                    print(f"{steps:,} decisions, {run.wall_time:,.0f} s: {self.postfix()}", file=sys.stderr,
                          flush=True)
            run.wall_time, run.cpu_time = time.perf_counter() - started, cpu_seconds() - cpu_started
            self.save()
        finally:
            if bar is not None:
                bar.set_postfix_str(self.postfix())
                bar.close()
            self.writer.close()

    def _bar(self, total: int) -> Any:
        if not self.show_progress:
            return None
        from tqdm import tqdm

        return tqdm(total=total, initial=self.decisions, unit="step",
                    desc=f"{self.config.game} (jax)", file=sys.stderr, dynamic_ncols=True, smoothing=0.05,
                    mininterval=0.5)

    def _log(self, stats: dict[str, np.ndarray]) -> None:
        step = self.decisions
        kinds = self.trainer.table.kinds
        episodes = stats["episodes"].sum(axis=0)
        sums = stats["return_sums"].sum(axis=0)
        self.returns = {kind: float(sums[i] / episodes[i]) for i, kind in enumerate(kinds) if episodes[i]}
        for kind, value in self.returns.items():
            self.writer.scalar(f"return/{kind}", value, step)
        finished = float(episodes.sum())
        if finished:
            self.writer.scalar("rollout/episode_decisions", float(stats["finished_lengths"].sum()) / finished, step)
        for name in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "epochs_trained",
                     "learning_rate", "explained_variance", "trained_share"):
            self.writer.scalar(f"train/{name}", float(np.mean(stats[name])), step)
        run = self.run_state
        if run.wall_time > 0:
            self.writer.scalar("time/decisions_per_s", step / run.wall_time, step)
        self.writer.flush()

    def postfix(self) -> str:
        text = "return " + (" ".join(f"{_short(k)} {v:+.2f}" for k, v in self.returns.items()) or "-")
        if self.run_state.evaluations:
            last = self.run_state.evaluations[-1]["results"]
            text += " | eval " + " ".join(f"{_short(r['opponent'])} {r['win_rate']:.2f}" for r in last)
        return text

    def save(self) -> None:
        self.run_state.last_checkpoint = self.decisions
        save_checkpoint(self.checkpoint_path, self.config, self.trainer, self.runner, self.run_state)

    def evaluate(self) -> None:
        run = self.run_state
        run.last_eval = self.decisions
        results = evaluate(self.config, self.checkpoint_path, self.config.eval.games, seed=self.config.seed + 1)
        run.evaluations.append({"num_timesteps": self.decisions, "results": [r.row() for r in results]})
        for r in results:
            self.writer.scalar(f"eval/win_rate/{r.opponent}", r.win_rate, self.decisions)
            self.writer.scalar(f"eval/ci_low/{r.opponent}", r.interval[0], self.decisions)
        self.save()  # the checkpoint carries the evaluation history
        win_rates = [evaluation["results"][0]["win_rate"] for evaluation in run.evaluations]  # the first opponent
        if self.config.eval.keep_best and best_index(win_rates) == len(win_rates) - 1:
            write_atomically(str(self.checkpoint_path.with_name(BEST_NAME)), self.checkpoint_path.read_bytes())


def _short(name: str) -> str:
    return name.split(":", 1)[-1]


class TensorBoard:
    """Scalars to TensorBoard event files with the ``tensorboard`` package alone (no torch, no TensorFlow)."""

    def __init__(self, folder: Path) -> None:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        folder.mkdir(parents=True, exist_ok=True)
        self.events = EventFileWriter(str(folder))

    def scalar(self, tag: str, value: float, step: int) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary as TfSummary

        if math.isfinite(value):
            summary = TfSummary(value=[TfSummary.Value(tag=tag, simple_value=float(value))])
            self.events.add_event(Event(wall_time=time.time(), step=int(step), summary=summary))

    def flush(self) -> None:
        self.events.flush()

    def close(self) -> None:
        self.events.close()


# -- checkpoints ---------------------------------------------------------------------------------------------


def save_checkpoint(path: Path, config: TrainConfig, trainer: JaxPPO, runner: Runner, run: RunState) -> None:
    """The run in the checkpoint format of ``train/checkpoint.py``: ``policy.npz`` plays it (numpy only) and
    ``model.zip`` holds the whole loop state as an ``.npz`` of its leaves (``backend: jax`` in the meta)."""
    runner = jax.device_get(runner)
    leaves = jax.tree.leaves(runner)
    buffer = io.BytesIO()
    np.savez(buffer, **{f"leaf_{i:04d}": np.asarray(leaf) for i, leaf in enumerate(leaves)})
    held = min(int(runner.snapshot_count), config.pool.max_snapshots)
    first = int(runner.snapshot_count) - held
    snapshots = [Snapshot(str(n), to_policy_net(jax.tree.map(lambda a, n=n: a[n % config.pool.max_snapshots],
                                                             runner.snapshots), config.ppo.activation))
                 for n in range(first, first + held)]
    decisions = int(runner.decisions)
    meta = {
        "backend": BACKEND,
        "game": game_signature(config.game, config.env_options),
        "config": config.to_dict(),
        "num_timesteps": decisions,
        "n_updates": int(runner.update),
        "policy": {"activation": config.ppo.activation, "net_arch": list(config.ppo.net_arch),
                   "deterministic": config.eval.deterministic, "advisor": config.advisor},
        "run": {"last_checkpoint": run.last_checkpoint, "last_eval": run.last_eval, "wall_time": run.wall_time,
                "cpu_time": run.cpu_time, "compile_time": run.compile_time, "pretrain": run.pretrain},
        "evaluations": run.evaluations,
        "loop_state": {"leaves": len(leaves), "structure": str(jax.tree.structure(runner))},
    }
    write_checkpoint(path, Checkpoint(meta, to_policy_net(runner.params["policy"], config.ppo.activation),
                                      buffer.getvalue(), snapshots))


def load_runner(checkpoint: Checkpoint, trainer: JaxPPO, source: str) -> Runner:
    """The loop state stored in a JAX checkpoint, checked leaf by leaf against ``trainer``'s."""
    if checkpoint.meta.get("backend") != BACKEND:
        raise CheckpointError(f"{source} was written by the {checkpoint.meta.get('backend', 'sb3')} trainer, "
                              f"not by backend: jax")
    template = jax.eval_shape(trainer.init, jax.random.PRNGKey(0))
    leaves, structure = jax.tree.flatten(template)
    with np.load(io.BytesIO(checkpoint.model_bytes), allow_pickle=False) as stored:
        if len(stored.files) != len(leaves):
            raise CheckpointError(f"{source} holds {len(stored.files)} arrays of loop state, this config's loop "
                                  f"has {len(leaves)}")
        restored = []
        for i, leaf in enumerate(leaves):
            array = stored[f"leaf_{i:04d}"]
            if array.shape != leaf.shape or array.dtype != leaf.dtype:
                raise CheckpointError(f"{source}: loop state array {i} is {array.dtype}{list(array.shape)}, this "
                                      f"config's is {leaf.dtype}{list(leaf.shape)}")
            restored.append(jnp.asarray(array))
    return jax.tree.unflatten(structure, restored)


def initial_params(config: TrainConfig, trainer: JaxPPO, path: str) -> Params:
    """``init_from``: the policy and value weights of another JAX checkpoint of the same network."""
    checkpoint = read_checkpoint(path, with_model=True)
    source = f"init_from checkpoint {path!r}"
    check_game(checkpoint, config.game, source=source)
    return load_runner(checkpoint, trainer, source).params


def _resume(config: TrainConfig, trainer: JaxPPO, path: Path) -> tuple[TrainConfig, RunState, Runner]:
    checkpoint = checkpoint_to_resume(config, path, RESUMABLE_CHANGES)
    stored_run = checkpoint.meta.get("run", {})
    run = RunState(last_checkpoint=int(stored_run.get("last_checkpoint", checkpoint.num_timesteps)),
                   last_eval=int(stored_run.get("last_eval", 0)), wall_time=float(stored_run.get("wall_time", 0.0)),
                   cpu_time=float(stored_run.get("cpu_time", 0.0)),
                   compile_time=float(stored_run.get("compile_time", 0.0)),
                   evaluations=list(checkpoint.meta.get("evaluations", [])),
                   pretrain=dict(stored_run.get("pretrain", {})))
    return config, run, load_runner(checkpoint, trainer, f"checkpoint {str(path)!r}")


__all__ = ["CHECKPOINT_NAME", "JaxPPO", "Loop", "RunState", "Runner", "Table", "Transition", "forward",
           "gae", "init_network", "load_runner", "policy_logits", "save_checkpoint", "to_policy_net",
           "train"]
