"""PPO self-play on the batched JAX engines, the whole loop jitted (``backend: jax``), PureJaxRL style.

Read top to bottom: the network (:func:`init_network`, :func:`forward`), the players the learner meets
(:class:`Table`), the loop state (:class:`Runner`), then :class:`JaxPPO`, whose jitted
:meth:`JaxPPO.run_updates` does ``jax.updates_per_call`` PPO updates in one call, each

1. **acting**: ``ppo.n_steps`` learner decisions in each of ``n_envs`` games at once (``lax.scan`` over
   steps, every array batched over games): the learner samples from its masked softmax, the engine
   steps, and the other seats play on (:meth:`JaxPPO.play_opponents`, a ``lax.while_loop`` that runs
   until every game is back at the learner's seat or over). A finished game is dealt again at once
   (auto-reset), with a new seat for the learner and new opponents;
2. **GAE** (``ppo.gamma``, ``ppo.gae_lambda``) over each game's learner decisions;
3. **PPO epochs**: ``ppo.n_epochs`` passes over the rollout in shuffled minibatches of
   ``ppo.batch_size``: clipped surrogate, value regression, entropy bonus, gradient clipping, Adam,
   stopping early past ``ppo.target_kl`` as SB3 does;
4. **snapshots**: every ``pool.snapshot_every`` updates the policy is copied into the pool.

:func:`train` is the host side behind ``python -m train --config <a backend: jax config>``: the run
directory, ``--resume``, the imitation warm start, the progress bar, TensorBoard logs, atomic
checkpoints every ``checkpoint_interval`` decisions, evaluations every ``eval.interval`` and the final
evaluation on the Python env (``train/summary.py``, the same as the SB3 trainer's).

==========================  ============================================================================
the learner's game          as ``SingleAgentEnv`` (the SB3 trainer's): one seat, drawn at random every
                            episode; the reward of a decision is everything the learner's seat earned
                            from it until its next decision (opponents' moves included), and the last
                            decision gets the final result, even when an opponent's move ends the game.
                            What it earns before its first decision is paid with that decision; a deal
                            that ends before the learner's first decision is dealt again
opponents                   every other seat draws, per episode, an entry of ``pool.weights``:
                            ``random`` (a uniformly random legal move), ``heuristic:<name>`` (the JAX port
                            of that rule-based player, ``train/jax_players``) or ``self`` (a snapshot of
                            the learner, sampling from its masked softmax)
snapshots                   a pool of the ``pool.max_snapshots`` most recent copies of the policy (the
                            first taken before training). Each rollout seats ``jax.active_snapshots`` of
                            them, drawn uniformly from the pool at every update; a ``self`` seat plays one
                            of these. A game that spans two rollouts meets the next rollout's draw after
                            the boundary (each seated snapshot costs a forward pass per opponent move, so
                            only a few can be seated at once; over a run every snapshot is met equally)
advice                      with ``advisor``, the policy (and every snapshot) reads the observation
                            followed by a one-hot of the advisor's move (its JAX port), as in the SB3
                            trainer; the exported player builds the same advice from the Python player
termination                 an episode ends when the game is terminated or truncated (a truncated game
                            is scored by the rules: no bootstrapping)
statistics                  per kind of opponent line-up (one entry in every other seat, or ``mixed``):
                            episodes and the learner's mean return, logged as ``return/<kind>``
==========================  ============================================================================

Determinism: everything random comes from ``jax.random`` keys split from ``seed``; the same seed gives
the same parameters on the same machine (XLA on CPU is deterministic for a fixed thread count). The
checkpoint holds the whole loop state (parameters, Adam moments, every game in progress, seats,
opponents, the snapshot pool, the key), so ``--resume`` continues exactly where the run stopped: a
resumed run ends with the same parameters as one that never stopped.
"""

from __future__ import annotations

import io
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

import card_envs
from card_envs.core.errors import ConfigError
from train.checkpoint import (
    Checkpoint,
    CheckpointError,
    PolicyNet,
    Snapshot,
    check_game,
    game_signature,
    read_checkpoint,
    write_checkpoint,
)
from train.config import TrainConfig
from train.summary import Summary, checkpoint_to_resume, cpu_seconds, evaluate

CHECKPOINT_NAME = "checkpoint.zip"
BACKEND = "jax"
#: config keys a resumed run may change; everything else must match the checkpoint's config
RESUMABLE_CHANGES = ("total_timesteps", "checkpoint_interval", "eval", "pretrain")
#: logits of illegal actions (finite, so gradients stay finite)
ILLEGAL = -1e9
#: loop iterations between two learner decisions after which the loop gives up: only an engine that never
#: ends a game gets there (a learner knocked out early waits for the whole rest of its game, thousands of moves)
MAX_OPPONENT_MOVES = 1_000_000

Layers = list[tuple[jax.Array, jax.Array]]  #: [(weights (in, out), bias (out,)), ...]
Params = dict[str, Layers]  #: {"policy": hidden layers + action layer, "value": ... + value layer}


# -- the network --------------------------------------------------------------------------------------


def init_network(key: jax.Array, inputs: int, num_actions: int, net_arch: list[int], network: str) -> Params:
    """Orthogonal initialisation as SB3's: gain sqrt(2) for hidden layers, 0.01 for the action layer,
    1 for the value layer; zero biases.

    ``params["policy"]`` is the policy network exactly as a checkpoint's ``PolicyNet`` holds it (hidden
    layers, then the action layer). ``params["value"]`` is the value layer alone, reading the policy's last
    hidden layer (``network: shared``), or a network of its own (``separate``)."""
    keys = iter(jax.random.split(key, 2 * len(net_arch) + 2))

    def layer(fan_in: int, fan_out: int, gain: float) -> tuple[jax.Array, jax.Array]:
        weights = jax.nn.initializers.orthogonal(gain)(next(keys), (fan_in, fan_out), jnp.float32)
        return weights, jnp.zeros(fan_out, jnp.float32)

    def tower(out: int, gain: float) -> Layers:
        sizes = [inputs, *net_arch]
        return [layer(a, b, math.sqrt(2)) for a, b in zip(sizes, sizes[1:], strict=False)] + \
            [layer(sizes[-1], out, gain)]

    policy = tower(num_actions, 0.01)
    value = tower(1, 1.0) if network == "separate" else [layer(net_arch[-1], 1, 1.0)]
    return {"policy": policy, "value": value}


def activation_function(name: str) -> Callable[[jax.Array], jax.Array]:
    return {"tanh": jnp.tanh, "relu": jax.nn.relu}[name]


def policy_logits(layers: Layers, x: jax.Array, activation: str) -> tuple[jax.Array, jax.Array]:
    """The policy network: (action logits, last hidden layer)."""
    act = activation_function(activation)
    for weights, bias in layers[:-1]:
        x = act(x @ weights + bias)
    weights, bias = layers[-1]
    return x @ weights + bias, x


def forward(params: Params, x: jax.Array, activation: str) -> tuple[jax.Array, jax.Array]:
    """(action logits, value) of observations ``x`` (any leading batch shape)."""
    logits, hidden = policy_logits(params["policy"], x, activation)
    value_layers = params["value"]
    if len(value_layers) > 1:  # a separate value network
        value, _ = policy_logits(value_layers, x, activation)
    else:
        weights, bias = value_layers[0]
        value = hidden @ weights + bias
    return logits, value[..., 0]


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, logits, ILLEGAL)


def log_policy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Log-probabilities of the masked softmax (illegal actions: about -1e9)."""
    return jax.nn.log_softmax(masked_logits(logits, mask))


def entropy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    log_p = log_policy(logits, mask)
    return -jnp.sum(jnp.where(mask, jnp.exp(log_p) * log_p, 0.0), axis=-1)


def sample(key: jax.Array, logits: jax.Array, mask: jax.Array) -> jax.Array:
    """One action per row from the masked softmax."""
    return jax.random.categorical(key, masked_logits(logits, mask)).astype(jnp.int32)


def to_policy_net(layers: Layers, activation: str) -> PolicyNet:
    """The numpy :class:`~train.checkpoint.PolicyNet` of a policy network (what a checkpoint plays)."""
    return PolicyNet([np.asarray(w) for w, _ in layers], [np.asarray(b) for _, b in layers], activation)


# -- who sits at the table ----------------------------------------------------------------------------


RANDOM, SELF = "random", "self"


class Table:
    """The opponents' entries of ``pool.weights`` and how each one moves, inside the jitted loop.

    Entries keep the config's order (zero weights dropped); an opponent seat is one entry index, plus a
    snapshot slot (``0 .. jax.active_snapshots - 1``) that only ``self`` reads. Kind ``len(entries)``
    is ``mixed`` in the statistics: a line-up of different entries."""

    def __init__(self, config: TrainConfig, game: Any) -> None:
        from train.jax_players import make_port

        self.entries = [name for name, weight in config.pool.weights.items() if weight > 0]
        self.weights = np.array([config.pool.weights[name] for name in self.entries], np.float32)
        self.ports = {name: make_port(game, name) for name in self.entries if name not in (RANDOM, SELF)}
        self.advisor = None if config.advisor is None else make_port(game, config.advisor)
        self.slots = config.jax.active_snapshots

    @property
    def kinds(self) -> list[str]:
        """Statistics' kinds of line-up: every entry, then ``mixed``."""
        return [*self.entries, "mixed"]


# -- the loop state ---------------------------------------------------------------------------------------


class Runner(NamedTuple):
    """Everything the jitted loop carries from one call to the next (and a checkpoint stores)."""

    params: Params
    opt_state: Any
    env_state: Any  #: the engine's State, batched over ``n_envs`` games
    seat: jax.Array  #: (n_envs,) the learner's seat
    entry: jax.Array  #: (n_envs, players) opponent entry per seat (the learner's own: 0, unread)
    slot: jax.Array  #: (n_envs, players) snapshot slot per seat (read by ``self`` seats)
    carried: jax.Array  #: (n_envs,) reward earned before the learner's first decision, paid with it
    episode_return: jax.Array  #: (n_envs,) the learner's return so far in each game
    episode_decisions: jax.Array  #: (n_envs,) decisions of every seat so far in each game
    snapshots: Layers  #: the pool: every array with a leading ``pool.max_snapshots`` axis
    snapshot_count: jax.Array  #: snapshots taken so far (the pool holds the last ``max_snapshots``)
    update: jax.Array  #: PPO updates done
    key: jax.Array


class Transition(NamedTuple):
    observation: jax.Array  #: what the policy read (observation, then the advice if any)
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class Turn(NamedTuple):
    """The games between two learner decisions (:meth:`JaxPPO.play_until_learner`), batched over games."""

    state: Any
    seat: jax.Array
    entry: jax.Array
    slot: jax.Array
    finished: jax.Array  #: the learner's episode ended (the game has been dealt again)
    earned: jax.Array  #: the learner's rewards before the end
    replies: jax.Array  #: decisions before the end
    carried: jax.Array  #: the learner's rewards in the new episode, before its first decision
    first: jax.Array  #: decisions in the new episode, before the learner's first

    @classmethod
    def start(cls, state: Any, seat: jax.Array, entry: jax.Array, slot: jax.Array, finished: jax.Array,
              carried: jax.Array) -> Turn:
        zeros = jnp.zeros(seat.shape, jnp.int32)
        return cls(state, seat, entry, slot, finished, jnp.zeros(seat.shape, jnp.float32), zeros, carried, zeros)


def tree_where(condition: jax.Array, new: Any, old: Any) -> Any:
    """``new`` where ``condition`` (one bool per game) else ``old``, leaf by leaf of a batched pytree."""

    def pick(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.where(condition.reshape(condition.shape + (1,) * (a.ndim - condition.ndim)), a, b)

    return jax.tree.map(pick, new, old)


# -- the trainer ---------------------------------------------------------------------------------------------


class JaxPPO:
    """The jitted self-play PPO loop of one config on one engine (any ``pgx.Env`` of the game's shapes)."""

    def __init__(self, config: TrainConfig, env: Any, game: Any | None = None) -> None:
        self.config = config
        self.env = env
        self.game = game or card_envs.make_game(config.game, **config.env_options)
        self.table = Table(config, self.game)
        self.players = env.num_players
        self.num_actions = env.num_actions
        (observation_size,) = env.observation_shape
        self.inputs = observation_size + (self.num_actions if config.advisor is not None else 0)
        ppo = config.ppo
        self.n_envs = config.n_envs
        self.rollout = ppo.n_steps * config.n_envs
        self.minibatches = self.rollout // ppo.batch_size
        self.activation = ppo.activation
        self.optimizer = optax.chain(optax.clip_by_global_norm(ppo.max_grad_norm), optax.scale_by_adam(eps=1e-5))
        self.run_updates = jax.jit(self._run_updates, static_argnums=2)
        self.init = jax.jit(self._init)

    # -- seats and opponents ------------------------------------------------------------------------------

    def draw_lineups(self, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """A learner seat, an entry and a snapshot slot per seat, for every game."""
        k_seat, k_entry, k_slot = jax.random.split(key, 3)
        seat = jax.random.randint(k_seat, (self.n_envs,), 0, self.players, jnp.int32)
        logits = jnp.log(jnp.asarray(self.table.weights))
        entry = jax.random.categorical(k_entry, logits, shape=(self.n_envs, self.players)).astype(jnp.int32)
        slot = jax.random.randint(k_slot, (self.n_envs, self.players), 0, self.table.slots, jnp.int32)
        return seat, entry, slot

    def policy_input(self, observation: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
        """What a network reads: the observation, then (with an advisor) the one-hot of its move."""
        if self.table.advisor is None:
            return observation
        keys = jax.random.split(key, observation.shape[0])
        advice = jax.vmap(self.table.advisor)(observation, mask, keys)
        return jnp.concatenate([observation, jax.nn.one_hot(advice, self.num_actions, dtype=observation.dtype)], -1)

    def opponent_actions(self, state: Any, entry: jax.Array, slot: jax.Array, active: Layers,
                         key: jax.Array) -> jax.Array:
        """The move of whoever is to act in every game, as its seat's entry plays (learner seats ignored)."""
        rows = jnp.arange(self.n_envs)
        mover = jnp.maximum(state.current_player, 0)
        entry_now, slot_now = entry[rows, mover], slot[rows, mover]
        observation, mask = state.observation, state.legal_action_mask
        actions = jnp.zeros(self.n_envs, jnp.int32)
        keys = jax.random.split(key, len(self.table.entries) + 1)
        for index, name in enumerate(self.table.entries):
            k = keys[index]
            if name == RANDOM:
                chosen = sample(k, jnp.zeros(mask.shape), mask)
            elif name == SELF:
                k_advice, k_sample = jax.random.split(k)
                inputs = self.policy_input(observation, mask, k_advice)
                chosen = jnp.zeros(self.n_envs, jnp.int32)
                for s in range(self.table.slots):
                    layers = jax.tree.map(lambda a, s=s: a[s], active)
                    logits, _ = policy_logits(layers, inputs, self.activation)
                    chosen = jnp.where(slot_now == s, sample(jax.random.fold_in(k_sample, s), logits, mask), chosen)
            else:
                port = self.table.ports[name]
                chosen = jax.vmap(port)(observation, mask, jax.random.split(k, self.n_envs))
            actions = jnp.where(entry_now == index, chosen, actions)
        return actions

    def play_until_learner(self, turn: Turn, active: Layers, key: jax.Array) -> Turn:
        """Opponents move until every game is at the learner's seat, in one ``lax.while_loop``.

        A game that ends (``over``) is dealt again at once: if the learner's episode was still running it is
        marked ``finished`` (the rewards until then are ``earned``, the moves ``replies``) and gets a new
        seat and line-up; a new deal that ends before the learner's first decision is dealt again (what it
        paid is void). In the new episode the rewards go to ``carried`` (paid with the learner's first
        decision) and the moves to ``first``."""
        rows = jnp.arange(self.n_envs)
        batch_step = jax.vmap(self.env.step)
        batch_init = jax.vmap(self.env.init)

        def over(s: Any) -> jax.Array:
            return s.terminated | s.truncated

        def cond(carry: tuple[Turn, jax.Array, jax.Array]) -> jax.Array:
            t, _, moves = carry
            return jnp.any(over(t.state) | (t.state.current_player != t.seat)) & (moves < MAX_OPPONENT_MOVES)

        def body(carry: tuple[Turn, jax.Array, jax.Array]) -> tuple[Turn, jax.Array, jax.Array]:
            t, k, moves = carry
            k, k_deal, k_seats, k_act, k_step = jax.random.split(k, 5)
            ended = over(t.state)
            ending = ended & ~t.finished  # the learner's episode ends here
            redeal = ended & t.finished  # a new deal that ended before the learner's first decision
            state = jax.lax.cond(jnp.any(ended),
                                 lambda: tree_where(ended, batch_init(jax.random.split(k_deal, self.n_envs)),
                                                    t.state),
                                 lambda: t.state)
            seat, entry, slot = self.draw_lineups(k_seats)
            t = t._replace(state=state, seat=jnp.where(ending, seat, t.seat),
                           entry=jnp.where(ending[:, None], entry, t.entry),
                           slot=jnp.where(ending[:, None], slot, t.slot), finished=t.finished | ended,
                           carried=jnp.where(redeal, 0.0, t.carried), first=jnp.where(redeal, 0, t.first))
            moving = t.state.current_player != t.seat
            actions = self.opponent_actions(t.state, t.entry, t.slot, active, k_act)
            stepped = batch_step(t.state, actions, jax.random.split(k_step, self.n_envs))
            paid = jnp.where(moving, stepped.rewards[rows, t.seat], 0.0)
            t = t._replace(state=tree_where(moving, stepped, t.state),
                           earned=t.earned + jnp.where(t.finished, 0.0, paid),
                           carried=t.carried + jnp.where(t.finished, paid, 0.0),
                           replies=t.replies + (moving & ~t.finished), first=t.first + (moving & t.finished))
            return t, k, moves + 1

        turn, _, _ = jax.lax.while_loop(cond, body, (turn, key, jnp.int32(0)))
        return turn

    # -- the loop -----------------------------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> Runner:
        """A fresh run: the network, Adam, ``n_envs`` deals played up to the learner's first decision, and
        the pool holding the untrained policy (so ``self`` seats can be drawn from the start)."""
        k_net, k_deal, k_seats, k_play, key = jax.random.split(key, 5)
        ppo = self.config.ppo
        params = init_network(k_net, self.inputs, self.num_actions, list(ppo.net_arch), self.config.jax.network)
        state = jax.vmap(self.env.init)(jax.random.split(k_deal, self.n_envs))
        seat, entry, slot = self.draw_lineups(k_seats)
        size = self.config.pool.max_snapshots
        snapshots = jax.tree.map(lambda a: jnp.zeros((size, *a.shape), a.dtype).at[0].set(a), params["policy"])
        active = jax.tree.map(lambda a: jnp.repeat(a[:1], self.table.slots, axis=0), snapshots)
        zeros = jnp.zeros(self.n_envs, jnp.float32)
        every = jnp.ones(self.n_envs, jnp.bool_)
        turn = self.play_until_learner(Turn.start(state, seat, entry, slot, every, zeros), active, k_play)
        return Runner(params, self.optimizer.init(params), turn.state, turn.seat, turn.entry, turn.slot,
                      turn.carried, zeros, turn.first, snapshots, jnp.int32(1), jnp.int32(0), key)

    def _run_updates(self, runner: Runner, total_updates: jax.Array, count: int) -> tuple[Runner, dict]:
        """``count`` PPO updates (acting, GAE, epochs, snapshots); per-update statistics stacked."""
        return jax.lax.scan(lambda r, _: self._update(r, total_updates), runner, None, length=count)

    def _update(self, runner: Runner, total_updates: jax.Array) -> tuple[Runner, dict]:
        config, ppo = self.config, self.config.ppo
        key, k_active, k_epochs = jax.random.split(runner.key, 3)
        runner = runner._replace(key=key)
        held = jnp.minimum(runner.snapshot_count, config.pool.max_snapshots)
        chosen = jax.random.randint(k_active, (self.table.slots,), 0, held)
        active = jax.tree.map(lambda a: a[chosen], runner.snapshots)
        kinds = len(self.table.kinds)
        totals = (jnp.zeros(kinds), jnp.zeros(kinds), jnp.float32(0), jnp.float32(0))
        (runner, totals), trajectory = jax.lax.scan(
            lambda carry, _: self._act(carry, active), (runner, totals), None, length=ppo.n_steps)
        # GAE over each game's learner decisions, bootstrapped from the value of the next one
        k_last, key = jax.random.split(runner.key)
        state = runner.env_state
        last_input = self.policy_input(state.observation, state.legal_action_mask, k_last)
        _, last_value = forward(runner.params, last_input, self.activation)
        advantages, returns = gae(trajectory, last_value, ppo.gamma, ppo.gae_lambda)
        progress = runner.update.astype(jnp.float32) / jnp.maximum(total_updates, 1).astype(jnp.float32)
        rate = ppo.learning_rate * (1.0 - progress if ppo.lr_schedule == "linear" else 1.0)
        params, opt_state, losses = self._epochs(runner.params, runner.opt_state, trajectory, advantages, returns,
                                                 rate, k_epochs)
        update = runner.update + 1
        take = (update % config.pool.snapshot_every) == 0
        index = runner.snapshot_count % config.pool.max_snapshots
        snapshots = jax.tree.map(lambda pool, a: jnp.where(take, pool.at[index].set(a), pool), runner.snapshots,
                                 params["policy"])
        runner = runner._replace(params=params, opt_state=opt_state, snapshots=snapshots, update=update, key=key,
                                 snapshot_count=runner.snapshot_count + take.astype(jnp.int32))
        episodes, return_sums, decisions, lengths = totals
        stats = {**losses, "episodes": episodes, "return_sums": return_sums, "game_decisions": decisions,
                 "finished_lengths": lengths, "learning_rate": rate,
                 "explained_variance": explained_variance(trajectory.value, returns)}
        return runner, stats

    def _act(self, carry: tuple[Runner, tuple], active: Layers) -> tuple[tuple[Runner, tuple], Transition]:
        """One learner decision in every game, the opponents' replies, and the reset of finished games."""
        runner, (episodes, return_sums, all_decisions, lengths) = carry
        key, k_input, k_action, k_step, k_reply = jax.random.split(runner.key, 5)
        state, rows = runner.env_state, jnp.arange(self.n_envs)
        inputs = self.policy_input(state.observation, state.legal_action_mask, k_input)
        logits, value = forward(runner.params, inputs, self.activation)
        mask = state.legal_action_mask
        action = sample(k_action, logits, mask)
        log_prob = jnp.take_along_axis(log_policy(logits, mask), action[:, None], axis=1)[:, 0]
        state = jax.vmap(self.env.step)(state, action, jax.random.split(k_step, self.n_envs))
        paid = runner.carried + state.rewards[rows, runner.seat]
        unfinished = jnp.zeros(self.n_envs, jnp.bool_)
        turn = Turn.start(state, runner.seat, runner.entry, runner.slot, unfinished, jnp.zeros(self.n_envs))
        turn = self.play_until_learner(turn, active, k_reply)
        reward, done = paid + turn.earned, turn.finished
        transition = Transition(inputs, mask, action, log_prob, value, reward, done)
        # statistics of the games that ended, by kind of line-up
        episode_return = runner.episode_return + reward
        episode_decisions = runner.episode_decisions + 1 + turn.replies
        kind = self.lineup_kind(runner.entry, runner.seat)
        kinds = len(self.table.kinds)
        episodes = episodes + jax.ops.segment_sum(done.astype(jnp.float32), kind, kinds)
        return_sums = return_sums + jax.ops.segment_sum(jnp.where(done, episode_return, 0.0), kind, kinds)
        lengths = lengths + jnp.sum(jnp.where(done, episode_decisions, 0)).astype(jnp.float32)
        all_decisions = all_decisions + jnp.sum(1 + turn.replies + turn.first).astype(jnp.float32)
        runner = runner._replace(env_state=turn.state, seat=turn.seat, entry=turn.entry, slot=turn.slot,
                                 carried=turn.carried, key=key,
                                 episode_return=jnp.where(done, 0.0, episode_return),
                                 episode_decisions=jnp.where(done, turn.first, episode_decisions))
        return (runner, (episodes, return_sums, all_decisions, lengths)), transition

    def lineup_kind(self, entry: jax.Array, seat: jax.Array) -> jax.Array:
        """Per game: the entry every opponent seat has, or ``mixed`` (``len(entries)``)."""
        others = jnp.arange(self.players)[None, :] != seat[:, None]
        first_other = jnp.where(seat == 0, 1, 0)
        reference = entry[jnp.arange(self.n_envs), first_other]
        same = jnp.all(~others | (entry == reference[:, None]), axis=1)
        return jnp.where(same, reference, len(self.table.entries))

    def _epochs(self, params: Params, opt_state: Any, trajectory: Transition, advantages: jax.Array,
                returns: jax.Array, rate: jax.Array, key: jax.Array) -> tuple[Params, Any, dict]:
        """``ppo.n_epochs`` passes of minibatch PPO over the rollout; stops for good past ``ppo.target_kl``."""
        ppo = self.config.ppo
        batch = (trajectory.observation, trajectory.mask, trajectory.action, trajectory.log_prob, advantages,
                 returns)
        batch = jax.tree.map(lambda a: a.reshape(self.rollout, *a.shape[2:]), batch)
        limit = math.inf if ppo.target_kl is None else 1.5 * ppo.target_kl

        def loss_fn(p: Params, minibatch: tuple) -> tuple[jax.Array, dict]:
            observation, mask, action, old_log_prob, advantage, target = minibatch
            logits, value = forward(p, observation, self.activation)
            log_prob = jnp.take_along_axis(log_policy(logits, mask), action[:, None], axis=1)[:, 0]
            if ppo.normalize_advantage:
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
            log_ratio = log_prob - old_log_prob
            ratio = jnp.exp(log_ratio)
            clipped = jnp.clip(ratio, 1 - ppo.clip_range, 1 + ppo.clip_range)
            policy_loss = -jnp.mean(jnp.minimum(ratio * advantage, clipped * advantage))
            value_loss = jnp.mean((target - value) ** 2)
            entropy_mean = jnp.mean(entropy(logits, mask))
            loss = policy_loss + ppo.vf_coef * value_loss - ppo.ent_coef * entropy_mean
            return loss, {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy_mean,
                          "approx_kl": jnp.mean((ratio - 1) - log_ratio),
                          "clip_fraction": jnp.mean((jnp.abs(ratio - 1) > ppo.clip_range).astype(jnp.float32))}

        def step(carry: tuple, minibatch: tuple) -> tuple[tuple, dict]:
            p, o, going = carry
            (_, info), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, minibatch)
            going = going & (info["approx_kl"] <= limit)  # SB3: checked before the step it would stop
            updates, new_o = self.optimizer.update(grads, o, p)
            new_p = jax.tree.map(lambda w, u: w - rate * u, p, updates)
            p = jax.tree.map(lambda a, b: jnp.where(going, a, b), new_p, p)
            o = jax.tree.map(lambda a, b: jnp.where(going, a, b), new_o, o)
            return (p, o, going), {**info, "trained": going.astype(jnp.float32)}

        def epoch(carry: tuple, k: jax.Array) -> tuple[tuple, dict]:
            order = jax.random.permutation(k, self.rollout)
            shuffled = jax.tree.map(lambda a: a[order].reshape(self.minibatches, -1, *a.shape[1:]), batch)
            return jax.lax.scan(step, carry, shuffled)

        (params, opt_state, _), info = jax.lax.scan(epoch, (params, opt_state, jnp.bool_(True)),
                                                    jax.random.split(key, ppo.n_epochs))
        trained = info.pop("trained")
        weight = trained / jnp.maximum(trained.sum(), 1.0)  # statistics of the minibatches trained on
        losses = {name: jnp.sum(values * weight) for name, values in info.items()}
        losses["epochs_trained"] = trained.sum() / self.minibatches
        return params, opt_state, losses


def gae(trajectory: Transition, last_value: jax.Array, gamma: float, lam: float) -> tuple[jax.Array, jax.Array]:
    """Generalized advantage estimates and value targets (``advantage + value``), time-major."""

    def back(carry: tuple[jax.Array, jax.Array], step: Transition) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
        advantage, next_value = carry
        alive = 1.0 - step.done.astype(jnp.float32)
        delta = step.reward + gamma * next_value * alive - step.value
        advantage = delta + gamma * lam * alive * advantage
        return (advantage, step.value), advantage

    _, advantages = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), trajectory, reverse=True)
    return advantages, advantages + trajectory.value


def explained_variance(values: jax.Array, returns: jax.Array) -> jax.Array:
    spread = jnp.var(returns)
    return jnp.where(spread > 0, 1.0 - jnp.var(returns - values) / spread, jnp.nan)


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


def decisions_per_update(config: TrainConfig) -> int:
    return config.ppo.n_steps * config.n_envs


def planned_updates(config: TrainConfig) -> int:
    """PPO updates of the run: ``total_timesteps`` rounded up to whole calls of ``jax.updates_per_call``."""
    per_call = config.jax.updates_per_call
    calls = -(-config.total_timesteps // (decisions_per_update(config) * per_call))
    return calls * per_call


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
            runner = runner._replace(params=initial_params(config, trainer, config.init_from))
        if config.pretrain.teacher is not None:
            from train.jax_pretrain import warm_start

            params, run.pretrain = warm_start(config, trainer, runner.params, progress)
            runner = runner._replace(params=params, opt_state=trainer.optimizer.init(params),
                                     snapshots=jax.tree.map(lambda pool, a: pool.at[0].set(a), runner.snapshots,
                                                            params["policy"]))
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
        return int(self.runner.update) * decisions_per_update(self.config)

    def run(self) -> None:
        config, run = self.config, self.run_state
        total = planned_updates(config)
        per_call = config.jax.updates_per_call
        started = time.perf_counter() - run.wall_time
        cpu_started = cpu_seconds() - run.cpu_time
        bar = self._bar(total)
        try:
            while int(self.runner.update) < total:
                compiling = time.perf_counter()
                self.runner, stats = self.trainer.run_updates(self.runner, jnp.int32(total), per_call)
                stats = jax.device_get(stats)
                if run.compile_time == 0.0:
                    run.compile_time = time.perf_counter() - compiling  # the first call compiles (and runs)
                self._log(stats)
                steps = self.decisions
                run.wall_time, run.cpu_time = time.perf_counter() - started, cpu_seconds() - cpu_started
                evaluate_now = config.eval.interval > 0 and steps - run.last_eval >= config.eval.interval \
                    and int(self.runner.update) < total
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

    def _bar(self, total_updates: int) -> Any:
        if not self.show_progress:
            return None
        from tqdm import tqdm

        return tqdm(total=total_updates * decisions_per_update(self.config), initial=self.decisions, unit="step",
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
                     "learning_rate", "explained_variance"):
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
    decisions = int(runner.update) * decisions_per_update(config)
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


__all__ = ["CHECKPOINT_NAME", "JaxPPO", "Loop", "RunState", "Runner", "Table", "Transition", "forward", "gae",
           "init_network", "load_runner", "planned_updates", "policy_logits", "save_checkpoint", "to_policy_net",
           "train"]
